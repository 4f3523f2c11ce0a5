// Exact similarity join of word sets: every pair whose Jaccard similarity is at
// least a threshold t, without comparing all pairs (used by consolidate, query 15).
//
// Sets are ascending lists of word ranks in one global order. Any order keeps the
// join exact; ordering words rarest first (by document frequency) keeps it fast.
//
// Method: prefix filtering with keys of several words. Let x, y be similar with
// |x| <= |y| and c = |x ∩ y|. Then c >= t |x ∪ y| >= t |y|, so c >= m(|y|) >= m(|x|)
// where m(s) = ceil(t s), and |x| >= c >= t |y|. Take the common words in the global
// order, c_1 < c_2 < ...: in x, every word before c_l is one of c_1 .. c_{l-1} or one
// of the |x| - c <= |x| - m(|x|) words of x not in y, so c_l is among the first
// |x| - m(|x|) + l words of x; likewise among the first |y| - m(|y|) + l of y. So for
// any l <= m(|x|) the key {c_1 .. c_l} is an l-word subset of both sets' l-prefixes
// (prefix_l(s) = s - m(s) + l). Each set is indexed under every l-subset of its
// l-prefix, with l = KeyWords(s) chosen by the size s of the smaller set of a pair,
// so a set y is indexed for every l that a smaller partner can choose
// (m(|y|) <= s <= |y|). Pairs sharing a key are candidates; a candidate is kept only
// when it passes the length filter (|x| >= t |y|) and the positional bound (for the
// key {c_1 .. c_l}, c <= l + the words after c_l in either set, and c >= ceil(t/(1+t)
// (|x| + |y|)) by c >= t (|x| + |y| - c)); survivors are verified exactly. A key of
// one word (l = 1) is classic prefix filtering, whose candidates grow quadratically
// once its rarest words are no longer rare (a bounded vocabulary, many sets); a key
// of l >= 2 rare words stays rare. l is 1 only when m(s) = 1 (t s <= 1) or when the
// l-subsets of a long prefix would be too many (very long sets at low thresholds).
//
// Keys are 64-bit hashes of their words; a collision only adds a candidate, which the
// verification rejects, so the result is exact.
#ifndef AMEM_QUERY_INTERNAL_JACCARD_JOIN_H_
#define AMEM_QUERY_INTERNAL_JACCARD_JOIN_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace amem::query {

// n sets: set i is words[offsets[i] .. offsets[i + 1]), ascending, no word UINT32_MAX.
struct WordSets {
  std::span<const uint32_t> offsets;  // n + 1
  std::span<const uint32_t> words;

  std::span<const uint32_t> of(uint32_t i) const {
    return words.subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  uint32_t size(uint32_t i) const { return offsets[i + 1] - offsets[i]; }
};

// |a ∩ b| / |a ∪ b| of two ascending lists; 0 when both are empty.
double WordJaccard(std::span<const uint32_t> a, std::span<const uint32_t> b);

// Most words per key (the l above, before the size caps it).
inline constexpr uint32_t kJoinKeyWords = 2;

// Every pair {x, y} of distinct `members` (set ids, each at most once) with
// WordJaccard(x, y) >= t, as (min, max) ascending. t in (0, 1]. Empty sets are similar
// to nothing. Candidates between k identical sets are k^2 / 2: collapse exact copies
// first. `key_words` (>= 1) is for tests; the result does not depend on it.
std::vector<std::pair<uint32_t, uint32_t>> SimilarPairs(const WordSets& sets,
                                                        std::span<const uint32_t> members,
                                                        double t,
                                                        uint32_t key_words = kJoinKeyWords);

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_JACCARD_JOIN_H_
