// Whole-word negation and token-set signatures, shared by `revise --hypothesis` and
// `consolidate` (docs/QUERIES.md 12 and 15).
//
// Two texts contradict each other when their token sets (common/tokenizer.h) are
// equal once negation words are removed, that set is not empty, and their numbers
// of negation words differ in parity: "the cache is enabled" / "the cache is not
// enabled". Parity rather than presence, so that an unrelated "not" elsewhere in
// both texts does not hide the one that differs ("... is not enabled. It is not
// fast." against "... is enabled. It is not fast."). Matching is by whole token,
// never by substring, so "know" and "node" are not negations. Contractions split
// at the apostrophe ("isn't" -> "isn"), so their stems are negation words; "can't"
// and "won't" give "can" and "won", which are ordinary words and therefore not
// treated as negations ("cannot" is).
#ifndef AMEM_QUERY_INTERNAL_NEGATION_H_
#define AMEM_QUERY_INTERNAL_NEGATION_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace amem::query {

// True for a whole token that negates: no, not, never, nor, cannot, neither, isn,
// aren, wasn, weren, doesn, don, didn, hasn, haven, hadn, wouldn, shouldn, couldn,
// mustn, needn. REQUIRES: `token` is lower case (as the tokenizer yields it).
bool IsNegationWord(std::string_view token);

// The content terms of a text: hashes (common/hash.h Hash64) of its distinct
// non-negation tokens, sorted ascending, and the parity of its negation words.
struct TermSignature {
  std::vector<uint64_t> terms;
  bool negated = false;  // an odd number of negation words

  // Recomputes the signature of `text`, reusing the vector's capacity.
  void Assign(std::string_view text);
  // Hash of `terms` (0 when empty): equal sets give equal keys.
  uint64_t SetKey() const;
};

// True when `a` and `b` state the same thing with opposite polarity (see above).
bool Contradicts(const TermSignature& a, const TermSignature& b);

// |a ∩ b| / |a ∪ b| of two sorted, duplicate-free sequences; 0 when both are empty.
double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);
// |a ∩ b| of two sorted, duplicate-free sequences.
size_t IntersectionSize(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_NEGATION_H_
