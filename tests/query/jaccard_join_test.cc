#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "query/internal/jaccard_join.h"
#include "tests/query/cog_test_util.h"

using namespace amem;
using namespace amem::query;

namespace {

using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

// Word sets built one list at a time (each sorted and made distinct here).
struct Sets {
  std::vector<uint32_t> offsets{0}, words;

  uint32_t Add(std::vector<uint32_t> w) {
    std::sort(w.begin(), w.end());
    w.erase(std::unique(w.begin(), w.end()), w.end());
    words.insert(words.end(), w.begin(), w.end());
    offsets.push_back(static_cast<uint32_t>(words.size()));
    return static_cast<uint32_t>(offsets.size() - 2);
  }
  uint32_t count() const { return static_cast<uint32_t>(offsets.size() - 1); }
  WordSets view() const { return {offsets, words}; }
  std::vector<uint32_t> All() const {
    std::vector<uint32_t> all(count());
    for (uint32_t i = 0; i < count(); ++i) all[i] = i;
    return all;
  }
};

// Every pair of members compared.
Pairs BruteForce(const WordSets& s, const std::vector<uint32_t>& members, double t) {
  Pairs out;
  for (size_t a = 0; a < members.size(); ++a) {
    for (size_t b = a + 1; b < members.size(); ++b) {
      uint32_t x = members[a], y = members[b];
      if (WordJaccard(s.of(x), s.of(y)) >= t) out.emplace_back(std::min(x, y), std::max(x, y));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A Zipf-like word of a `vocabulary`-word language: word w (0 the most common) with
// probability about 1 / (w + 1).
uint32_t ZipfWord(uint64_t* rnd, uint32_t vocabulary) {
  double u = static_cast<double>(cogtest::Mix(rnd) >> 11) / 9007199254740992.0;  // [0, 1)
  auto w = static_cast<uint32_t>(std::pow(static_cast<double>(vocabulary) + 1, u)) - 1;
  return std::min(w, vocabulary - 1);
}

// Random sets over a small Zipf vocabulary (so that many sets share their rarest
// words), a third of them edited copies of an earlier set: 0 to 3 words dropped,
// added or replaced. Words are ranked rarest first (rank = vocabulary - 1 - w) when
// `rarest_first`, else most common first. A few sets are long (200 to 300 words).
Sets RandomSets(uint64_t seed, uint32_t n, uint32_t vocabulary, bool rarest_first) {
  uint64_t rnd = seed * 0x9e3779b9ULL + 7;
  std::vector<std::vector<uint32_t>> made;
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<uint32_t> w;
    if (!made.empty() && cogtest::Mix(&rnd) % 3 == 0) {
      w = made[cogtest::Mix(&rnd) % made.size()];
      for (uint64_t e = cogtest::Mix(&rnd) % 4; e > 0; --e) {
        uint64_t op = cogtest::Mix(&rnd) % 3;
        if (op != 1 && !w.empty()) w.erase(w.begin() + cogtest::Mix(&rnd) % w.size());
        if (op != 0) w.push_back(ZipfWord(&rnd, vocabulary));
      }
    } else {
      uint64_t size = cogtest::Mix(&rnd) % 20 == 0 ? 200 + cogtest::Mix(&rnd) % 101
                                                   : 1 + cogtest::Mix(&rnd) % 40;
      for (uint64_t k = 0; k < size; ++k) w.push_back(ZipfWord(&rnd, vocabulary));
    }
    made.push_back(w);
  }
  Sets s;
  for (std::vector<uint32_t> w : made) {
    if (rarest_first) {
      for (uint32_t& x : w) x = vocabulary - 1 - x;
    }
    s.Add(std::move(w));
  }
  return s;
}

}  // namespace

TEST_CASE("jaccard join equals brute force on Zipf-like random sets",
          "[query][consolidate][jaccard]") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (bool rarest_first : {true, false}) {
      Sets s = RandomSets(seed, 240, 300, rarest_first);
      // Members: a shuffled subset (every fifth set left out).
      std::vector<uint32_t> members;
      for (uint32_t i = 0; i < s.count(); ++i) {
        if (i % 5 != 3) members.push_back(i);
      }
      uint64_t rnd = seed;
      for (size_t i = members.size(); i > 1; --i) {
        std::swap(members[i - 1], members[cogtest::Mix(&rnd) % i]);
      }
      for (double t : {1e-6, 0.2, 0.5, 0.75, 0.8, 0.9, 0.95, 1.0}) {
        Pairs expect = BruteForce(s.view(), members, t);
        if (t <= 0.9) CHECK(expect.size() > 10);  // the test is not vacuous
        for (uint32_t key_words : {1u, 2u, 3u, 4u}) {
          INFO("seed " << seed << " rarest_first " << rarest_first << " t " << t
                       << " key_words " << key_words);
          CHECK(SimilarPairs(s.view(), members, t, key_words) == expect);
        }
      }
    }
  }
}

TEST_CASE("jaccard join: empty and one-word sets, copies, threshold 1",
          "[query][consolidate][jaccard]") {
  Sets s;
  s.Add({});            // 0
  s.Add({});            // 1
  s.Add({5});           // 2
  s.Add({5});           // 3
  s.Add({6});           // 4
  s.Add({1, 2, 3});     // 5
  s.Add({1, 2, 3});     // 6
  s.Add({1, 2, 3});     // 7
  s.Add({1, 2, 3, 4});  // 8: 3/4 with each copy
  s.Add({5, 6});        // 9: 1/2 with 2, 3 and 4
  const std::vector<uint32_t> all = s.All();
  for (uint32_t key_words : {1u, 2u, 3u}) {
    INFO("key_words " << key_words);
    const Pairs identical = {{2, 3}, {5, 6}, {5, 7}, {6, 7}};
    CHECK(SimilarPairs(s.view(), all, 1.0, key_words) == identical);
    CHECK(SimilarPairs(s.view(), all, 0.76, key_words) == identical);
    CHECK(SimilarPairs(s.view(), all, 0.75, key_words) ==
          Pairs{{2, 3}, {5, 6}, {5, 7}, {5, 8}, {6, 7}, {6, 8}, {7, 8}});
    CHECK(SimilarPairs(s.view(), all, 0.5, key_words) ==
          Pairs{{2, 3}, {2, 9}, {3, 9}, {4, 9}, {5, 6}, {5, 7}, {5, 8}, {6, 7}, {6, 8},
                {7, 8}});
    // Empty sets are similar to nothing, not even to each other.
    CHECK(SimilarPairs(s.view(), std::vector<uint32_t>{0, 1}, 1e-9, key_words).empty());
    CHECK(SimilarPairs(s.view(), std::vector<uint32_t>{0, 2}, 1e-9, key_words).empty());
    // One member, or none: no pairs.
    CHECK(SimilarPairs(s.view(), std::vector<uint32_t>{5}, 0.5, key_words).empty());
    CHECK(SimilarPairs(s.view(), std::vector<uint32_t>{}, 0.5, key_words).empty());
    // Only the members count.
    CHECK(SimilarPairs(s.view(), std::vector<uint32_t>{8, 2, 7}, 0.75, key_words) ==
          Pairs{{7, 8}});
  }
  CHECK(WordJaccard(s.view().of(0), s.view().of(1)) == 0.0);
  CHECK(WordJaccard(s.view().of(5), s.view().of(8)) == 0.75);
}

TEST_CASE("jaccard join: pairs exactly at the threshold are found",
          "[query][consolidate][jaccard]") {
  auto range = [](uint32_t n) {
    std::vector<uint32_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = i;
    return v;
  };
  Sets s;
  s.Add(range(10));  // 0
  s.Add(range(9));   // 1: 9/10 with 0
  s.Add(range(20));  // 2: 9/20 with 1, 10/20 with 0
  s.Add(range(18));  // 3: 18/20 with 2, 10/18 with 0, 9/18 with 1
  std::vector<uint32_t> far = range(18);
  far.push_back(100);
  s.Add(far);  // 4: 18/21 with 2, 18/19 with 3
  const std::vector<uint32_t> all = s.All();
  for (uint32_t key_words : {1u, 2u, 3u}) {
    INFO("key_words " << key_words);
    CHECK(SimilarPairs(s.view(), all, 0.9, key_words) == Pairs{{0, 1}, {2, 3}, {3, 4}});
    CHECK(SimilarPairs(s.view(), all, 0.9, key_words) == BruteForce(s.view(), all, 0.9));
    CHECK(SimilarPairs(s.view(), all, 18.0 / 19.0, key_words) == Pairs{{3, 4}});
    CHECK(SimilarPairs(s.view(), all, 0.5, key_words) == BruteForce(s.view(), all, 0.5));
  }
}
