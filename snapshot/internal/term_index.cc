#include "snapshot/internal/term_index.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <optional>

#include "common/coding.h"
#include "common/free_vector.h"
#include "common/hash.h"
#include "common/huge_pages.h"
#include "common/tokenizer.h"
#include "snapshot/format.h"

namespace amem::snapshot {

namespace {

// Open-addressing intern table: term -> provisional id. Names live in one arena,
// owned by the caller so they outlive the table.
class TermTable {
 public:
  explicit TermTable(std::string* arena) : arena_(arena), slots_(1 << 16, 0) {}
  uint32_t Intern(std::string_view term) {
    if (2 * (offsets_.size() - 1) >= slots_.size()) Grow();
    const uint64_t h = Hash64(term);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      uint32_t slot = slots_[i];
      if (slot == 0) {
        uint32_t id = static_cast<uint32_t>(offsets_.size() - 1);
        arena_->append(term);
        offsets_.push_back(arena_->size());
        hashes_.push_back(h);
        slots_[i] = id + 1;
        return id;
      }
      if (hashes_[slot - 1] == h && name(slot - 1) == term) return slot - 1;
    }
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  // Each id's name ends at offsets[id + 1] in the arena (offsets[0] is 0).
  std::vector<uint64_t> TakeOffsets() { return std::move(offsets_); }
  uint64_t hash(uint32_t id) const { return hashes_[id]; }
  // Valid until the next Intern().
  std::string_view name(uint32_t id) const {
    return std::string_view(*arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

 private:
  void Grow() {
    std::vector<uint32_t> bigger(slots_.size() * 2, 0);
    for (uint32_t id = 0; id < size(); ++id) {
      size_t i = hashes_[id] & (bigger.size() - 1);
      while (bigger[i] != 0) i = (i + 1) & (bigger.size() - 1);
      bigger[i] = id + 1;
    }
    slots_.swap(bigger);
  }

  std::string* arena_;
  std::vector<uint32_t> slots_;  // id + 1, 0 = empty
  std::vector<uint64_t> hashes_;
  std::vector<uint64_t> offsets_ = {0};
};

// At most (3n + 3) / 4 tokens in n bytes (common/tokenizer.h). A run of L bytes
// and the byte after it give at most 1 + L / 2 words (the run and its parts of at
// least 2 bytes; 1 when L = 2), which is at most 3/4 of those L + 1 bytes less
// 3/4. The whole identifier and each name that is a word join two or more runs,
// whose 3/4s pay for them (an identifier of k runs has fewer than k/2 + 1 such).
uint64_t MaxTokens(std::string_view text) { return (3 * text.size() + 3) / 4; }

}  // namespace

// Text by text, the Embeddings block's entries (FORMAT.md §8.20) from each
// content's distinct terms in first-seen order: HashEmbed adds sign(h) at h % dim
// for every token, so a term seen tf times adds tf * sign(h) to its bucket, and
// the buckets come out in the order the tokens first touch them, as
// query/similar.cc sums them.
class EmbeddingBuilder {
 public:
  EmbeddingBuilder(uint32_t dim, std::vector<uint32_t>* offsets, std::vector<uint32_t>* entries,
                   std::vector<uint32_t>* overflow)
      : dim_(dim), counts_(dim, 0), seen_(dim, 0), offsets_(offsets), entries_(entries),
        overflow_(overflow) {
    offsets_->assign(1, 0);
    entries_->clear();
    overflow_->clear();
  }
  void AddTerm(uint64_t hash, uint32_t tf) {
    const uint32_t b = static_cast<uint32_t>(hash % dim_);
    if (!seen_[b]) {
      seen_[b] = 1;
      touched_.push_back(b);
    }
    counts_[b] += (hash >> 63) ? -int64_t{tf} : int64_t{tf};
    // A frequency at the index's cap is not the true count.
    if (tf >= kMaxTermFrequency) capped_ = true;
  }
  // Ends text `text`'s terms (an overflow lists the text; Place makes it a node).
  void EndText(uint32_t text) {
    bool fits = !capped_;
    for (uint32_t b : touched_) fits = fits && EmbeddingBlock::Fits(counts_[b]);
    for (uint32_t b : touched_) {
      if (fits && counts_[b] != 0) {
        entries_->push_back(EmbeddingBlock::Entry(b, static_cast<int32_t>(counts_[b])));
      }
      counts_[b] = 0;
      seen_[b] = 0;
    }
    if (!fits) overflow_->push_back(text);
    touched_.clear();
    capped_ = false;
    offsets_->push_back(static_cast<uint32_t>(entries_->size()));
  }
  bool full() const { return entries_->size() >= UINT32_MAX - dim_; }

 private:
  uint32_t dim_;
  std::vector<int64_t> counts_;
  std::vector<uint8_t> seen_;
  std::vector<uint32_t> touched_;
  bool capped_ = false;
  std::vector<uint32_t>* offsets_;
  std::vector<uint32_t>* entries_;
  std::vector<uint32_t>* overflow_;
};

Status TermIndex::Tokenize(const std::vector<std::string_view>& contents,
                           const std::vector<std::string_view>& metas, uint32_t embedding_dim) {
  const uint32_t texts = static_cast<uint32_t>(contents.size());
  // Provisional ids follow first appearance; the final order is bytewise term
  // order, so nothing about the hash table reaches the output.
  arena_.clear();
  TermTable terms(&arena_);
  std::vector<RawPosting>& raw = raw_;
  raw.clear();
  uint64_t max_postings = 0, max_content_postings = 0;
  for (uint32_t k = 0; k < texts; ++k) {
    max_content_postings += MaxTokens(contents[k]);
    max_postings += MaxTokens(contents[k]) + MaxTokens(metas[k]);
  }
  // The bound is reserved, not touched: only the postings written cost pages.
  ReserveHuge(&raw, max_postings);
  text_end_.assign(texts, 0);
  text_lengths_.assign(texts, 0);
  // A term's posting in the current field is raw[slot[term]] when
  // stamp[term] == the field's stamp: one posting per distinct term, counted as
  // the tokens come, without sorting them.
  std::vector<uint64_t> stamp;
  std::vector<uint32_t> slot;

  auto add_field = [&](std::string_view text, uint64_t field_stamp, Field field) -> uint32_t {
    const size_t first = raw.size();
    uint32_t tokens = 0;
    ForEachToken(text, [&](std::string_view tok) {
      const uint32_t id = terms.Intern(tok);
      if (id == stamp.size()) {
        stamp.push_back(0);
        slot.push_back(0);
      }
      if (stamp[id] != field_stamp) {
        stamp[id] = field_stamp;
        slot[id] = static_cast<uint32_t>(raw.size());
        raw.push_back({id, 0});
      }
      ++raw[slot[id]].tf_field;
      ++tokens;
    });
    for (size_t k = first; k < raw.size(); ++k) {
      raw[k].tf_field = std::min(raw[k].tf_field, kMaxTermFrequency) |
                        static_cast<uint32_t>(field) << 24;
    }
    return tokens;
  };
  embedding_dim_ = embedding_dim;
  std::optional<EmbeddingBuilder> embed;
  if (embedding_dim > 0) {
    embed.emplace(embedding_dim, &text_embedding_ends_, &embedding_entries_, &embedding_overflow_);
    text_embedding_ends_.reserve(size_t{texts} + 1);
    // A content has at most one entry per distinct term: reserved like the
    // postings, so the entries are never copied to a grown buffer (~80 MB at 1M).
    ReserveHuge(&embedding_entries_, max_content_postings);
  }
  for (uint32_t k = 0; k < texts; ++k) {
    // Texts are views into records all over the store's map: the one a few
    // ahead is fetched while this one is tokenized.
    if (k + 4 < texts) __builtin_prefetch(contents[k + 4].data());
    const size_t content_first = raw.size();
    text_lengths_[k] = add_field(contents[k], 2 * uint64_t{k} + 1, Field::kContent);
    if (embed) {
      for (size_t p = content_first; p < raw.size(); ++p) {
        embed->AddTerm(terms.hash(raw[p].term), raw[p].tf_field & kMaxTermFrequency);
      }
      embed->EndText(k);
      if (embed->full()) return Status::InvalidArgument("embeddings: too many entries");
    }
    add_field(metas[k], 2 * uint64_t{k} + 2, Field::kMeta);
    text_end_[k] = static_cast<uint32_t>(raw.size());
    if (raw.size() >= UINT32_MAX) return Status::InvalidArgument("term index: too many postings");
  }
  if (arena_.size() > UINT32_MAX) return Status::InvalidArgument("term index: terms exceed 4 GiB");
  posting_count_ = raw.size();
  term_ends_ = terms.TakeOffsets();
  return Status::OK();
}

void TermIndex::Place(const std::vector<uint32_t>& order) {
  const uint32_t n = static_cast<uint32_t>(order.size());
  const uint32_t t_count = static_cast<uint32_t>(term_ends_.size() - 1);
  auto name = [&](uint32_t id) {
    return std::string_view(arena_).substr(term_ends_[id], term_ends_[id + 1] - term_ends_[id]);
  };
  std::vector<uint32_t> by_name(t_count);
  std::iota(by_name.begin(), by_name.end(), 0u);
  std::sort(by_name.begin(), by_name.end(), [&](uint32_t a, uint32_t b) { return name(a) < name(b); });
  std::vector<uint32_t> rank(t_count);
  names_.resize(t_count);
  for (uint32_t r = 0; r < t_count; ++r) {
    rank[by_name[r]] = r;
    names_[r] = name(by_name[r]);
  }

  // Counting sort by (rank, field); the postings are visited in node order, so
  // each bucket ends up sorted by node.
  auto bucket = [&](const RawPosting& p) { return 2 * size_t{rank[p.term]} + (p.tf_field >> 24); };
  bucket_start_.assign(2 * static_cast<size_t>(t_count) + 1, 0);
  for (const RawPosting& p : raw_) ++bucket_start_[bucket(p) + 1];
  for (size_t b = 1; b < bucket_start_.size(); ++b) bucket_start_[b] += bucket_start_[b - 1];
  std::vector<uint32_t> fill(bucket_start_.begin(), bucket_start_.end() - 1);
  postings_.clear();
  ReserveHuge(&postings_, raw_.size() * kPostingLength);
  postings_.resize(raw_.size() * kPostingLength);
  doc_lengths_.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = order[i];
    doc_lengths_[i] = text_lengths_[k];
    for (uint32_t p = k > 0 ? text_end_[k - 1] : 0; p < text_end_[k]; ++p) {
      char* at = &postings_[fill[bucket(raw_[p])]++ * kPostingLength];
      EncodeFixed32(at, i);
      EncodeFixed32(at + 4, raw_[p].tf_field);
    }
  }
  FreeVector(&raw_);  // 166 MB at 1M nodes, else held until the file is written

  if (embedding_dim_ > 0) {
    // The entries stay in text order; EmitEmbeddings writes them in node order.
    order_ = order;
    embedding_offsets_.assign(1, 0);
    embedding_offsets_.reserve(size_t{n} + 1);
    std::vector<uint32_t> node_of_text(text_end_.size());
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t k = order[i];
      node_of_text[k] = i;
      embedding_offsets_.push_back(embedding_offsets_.back() + text_embedding_ends_[k + 1] -
                                   text_embedding_ends_[k]);
    }
    for (uint32_t& text : embedding_overflow_) text = node_of_text[text];
    std::sort(embedding_overflow_.begin(), embedding_overflow_.end());
  }
}

uint64_t TermIndex::term_index_length() const {
  return 8 + kTermEntryLength * uint64_t{term_ends_.size()} + kPostingLength * posting_count_ +
         arena_.size();
}

void TermIndex::EmitTermIndex(Emitter* out) const {
  const uint32_t t_count = static_cast<uint32_t>(names_.size());
  out->PutFixed32(t_count);
  out->PutFixed32(static_cast<uint32_t>(postings_.size() / kPostingLength));
  uint32_t name_off = 0;
  for (uint32_t r = 0; r <= t_count; ++r) {
    const uint32_t begin = bucket_start_[2 * static_cast<size_t>(r)];
    out->PutFixed32(name_off);
    out->PutFixed32(begin);
    out->PutFixed32(r < t_count ? bucket_start_[2 * size_t{r} + 1] - begin : 0);
    if (r < t_count) name_off += static_cast<uint32_t>(names_[r].size());
  }
  out->AppendStable(postings_);  // kept until the file is written
  for (std::string_view name : names_) out->Append(name);
}

void TermIndex::EmitDocLengths(Emitter* out) const {
  for (uint32_t dl : doc_lengths_) out->PutFixed32(dl);
}

uint64_t TermIndex::embeddings_length() const {
  return EmbeddingBlock::kFixedLength +
         4 * (uint64_t{text_lengths_.size()} + 1 + embedding_entries_.size() + embedding_overflow_.size());
}

void TermIndex::EmitEmbeddings(Emitter* out) const {
  out->PutFixed32(embedding_dim_);
  out->PutFixed32(static_cast<uint32_t>(embedding_entries_.size()));
  out->PutFixed32(static_cast<uint32_t>(embedding_overflow_.size()));
  out->PutFixed32(0);
  // Little-endian host: the u32 arrays' bytes are the format's.
  static_assert(std::endian::native == std::endian::little);
  auto put = [out](const uint32_t* v, size_t count) {
    out->Append(std::string_view(reinterpret_cast<const char*>(v), 4 * count));
  };
  put(embedding_offsets_.data(), embedding_offsets_.size());
  for (uint32_t k : order_) {
    put(embedding_entries_.data() + text_embedding_ends_[k],
        text_embedding_ends_[k + 1] - text_embedding_ends_[k]);
  }
  put(embedding_overflow_.data(), embedding_overflow_.size());
}

}  // namespace amem::snapshot
