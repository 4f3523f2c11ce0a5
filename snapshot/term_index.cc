#include "snapshot/term_index.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "common/coding.h"
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

}  // namespace

Status BuildTermIndex(const std::vector<std::string_view>& contents,
                      const std::vector<std::string_view>& metas, std::string* term_body,
                      std::string* doc_lengths_body) {
  const uint32_t n = static_cast<uint32_t>(contents.size());
  // Provisional ids follow first appearance, which depends only on the input;
  // the final order is bytewise term order, so the hash map's iteration order
  // never reaches the output.
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::string_view> names;
  std::vector<RawPosting> raw;
  std::vector<uint32_t> doc_tokens;  // provisional ids of one field, reused
  doc_lengths_body->clear();
  doc_lengths_body->reserve(4 * static_cast<size_t>(n));

  auto add_field = [&](uint32_t node, std::string_view text, uint8_t field) -> uint32_t {
    doc_tokens.clear();
    ForEachToken(text, [&](std::string_view tok) {
      auto [it, inserted] = ids.try_emplace(std::string(tok), static_cast<uint32_t>(names.size()));
      if (inserted) names.push_back(it->first);
      doc_tokens.push_back(it->second);
    });
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

  const uint32_t t_count = static_cast<uint32_t>(names.size());
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
