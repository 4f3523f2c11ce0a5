#include "snapshot/term_index.h"

#include <algorithm>
#include <numeric>

#include "common/coding.h"
#include "common/hash.h"
#include "common/tokenizer.h"
#include "snapshot/format.h"

namespace amem::snapshot {

namespace {

struct RawPosting {
  uint32_t term;  // provisional id (first-seen order); remapped to sorted rank
  uint32_t node;
  uint32_t tf;
  uint8_t field;
};

// Open-addressing intern table: term -> provisional id. Names live in one arena.
class TermTable {
 public:
  TermTable() : slots_(1 << 16, 0) {}
  uint32_t Intern(std::string_view term) {
    if (2 * (offsets_.size() - 1) >= slots_.size()) Grow();
    const uint64_t h = Hash64(term);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      uint32_t slot = slots_[i];
      if (slot == 0) {
        uint32_t id = static_cast<uint32_t>(offsets_.size() - 1);
        arena_.append(term);
        offsets_.push_back(arena_.size());
        hashes_.push_back(h);
        slots_[i] = id + 1;
        return id;
      }
      if (hashes_[slot - 1] == h && name(slot - 1) == term) return slot - 1;
    }
  }
  uint32_t size() const { return static_cast<uint32_t>(offsets_.size() - 1); }
  std::string_view name(uint32_t id) const {
    return std::string_view(arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
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

  std::vector<uint32_t> slots_;  // id + 1, 0 = empty
  std::vector<uint64_t> hashes_;
  std::string arena_;
  std::vector<uint64_t> offsets_ = {0};
};

}  // namespace

Status BuildTermIndex(const std::vector<std::string_view>& contents,
                      const std::vector<std::string_view>& metas, std::string* term_body,
                      std::string* doc_lengths_body) {
  const uint32_t n = static_cast<uint32_t>(contents.size());
  // Provisional ids follow first appearance; the final order is bytewise term
  // order, so nothing about the hash table reaches the output.
  TermTable terms;
  std::vector<RawPosting> raw;
  std::vector<uint32_t> doc_tokens;  // provisional ids of one field, reused
  doc_lengths_body->clear();
  doc_lengths_body->reserve(4 * static_cast<size_t>(n));

  auto add_field = [&](uint32_t node, std::string_view text, uint8_t field) -> uint32_t {
    doc_tokens.clear();
    ForEachToken(text, [&](std::string_view tok) { doc_tokens.push_back(terms.Intern(tok)); });
    std::sort(doc_tokens.begin(), doc_tokens.end());
    for (size_t k = 0; k < doc_tokens.size();) {
      size_t e = k;
      while (e < doc_tokens.size() && doc_tokens[e] == doc_tokens[k]) ++e;
      uint32_t tf = static_cast<uint32_t>(std::min<size_t>(e - k, kMaxTermFrequency));
      raw.push_back({doc_tokens[k], node, tf, field});
      k = e;
    }
    return static_cast<uint32_t>(doc_tokens.size());
  };
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t dl = add_field(i, contents[i], static_cast<uint8_t>(Field::kContent));
    PutFixed32(doc_lengths_body, dl);
    add_field(i, metas[i], static_cast<uint8_t>(Field::kMeta));
  }
  if (raw.size() >= UINT32_MAX) return Status::InvalidArgument("term index: too many postings");

  const uint32_t t_count = terms.size();
  std::vector<std::string_view> names(t_count);
  for (uint32_t id = 0; id < t_count; ++id) names[id] = terms.name(id);
  std::vector<uint32_t> order(t_count);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  std::vector<uint32_t> rank(t_count);
  for (uint32_t r = 0; r < t_count; ++r) rank[order[r]] = r;

  // Counting sort by (rank, field); raw is already in node order, so each bucket
  // ends up sorted by node.
  std::vector<uint32_t> bucket_start(2 * static_cast<size_t>(t_count) + 1, 0);
  for (const RawPosting& p : raw) ++bucket_start[2 * rank[p.term] + p.field + 1];
  for (size_t b = 1; b < bucket_start.size(); ++b) bucket_start[b] += bucket_start[b - 1];
  std::vector<uint32_t> fill(bucket_start.begin(), bucket_start.end() - 1);
  std::string postings(raw.size() * kPostingLength, '\0');
  for (const RawPosting& p : raw) {
    uint32_t at = fill[2 * rank[p.term] + p.field]++;
    EncodeFixed32(&postings[at * kPostingLength], p.node);
    EncodeFixed32(&postings[at * kPostingLength + 4],
                  p.tf | (static_cast<uint32_t>(p.field) << 24));
  }

  uint64_t name_bytes = 0;
  for (std::string_view s : names) name_bytes += s.size();
  if (name_bytes > UINT32_MAX) return Status::InvalidArgument("term index: terms exceed 4 GiB");

  term_body->clear();
  PutFixed32(term_body, t_count);
  PutFixed32(term_body, static_cast<uint32_t>(raw.size()));
  uint32_t name_off = 0;
  for (uint32_t r = 0; r <= t_count; ++r) {
    uint32_t begin = bucket_start[2 * static_cast<size_t>(r)];
    uint32_t content = r < t_count ? bucket_start[2 * r + 1] - begin : 0;
    PutFixed32(term_body, name_off);
    PutFixed32(term_body, begin);
    PutFixed32(term_body, content);
    if (r < t_count) name_off += static_cast<uint32_t>(names[order[r]].size());
  }
  term_body->append(postings);
  for (uint32_t r = 0; r < t_count; ++r) term_body->append(names[order[r]]);
  return Status::OK();
}

}  // namespace amem::snapshot
