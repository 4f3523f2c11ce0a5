#include <catch2/catch.hpp>

#include "query/internal/negation.h"

using namespace amem::query;

namespace {
TermSignature Sig(std::string_view text) {
  TermSignature s;
  s.Assign(text);
  return s;
}
}  // namespace

TEST_CASE("Negation words are whole tokens", "[query][negation]") {
  for (auto w : {"no", "not", "never", "nor", "cannot", "isn", "aren", "doesn", "didn",
                 "wasn", "weren", "don", "neither", "wouldn", "shouldn", "couldn"}) {
    CHECK(IsNegationWord(w));
  }
  for (auto w : {"know", "node", "note", "nothing", "now", "north", "can", "won", "notes",
                 "", "n", "NOT"}) {
    CHECK_FALSE(IsNegationWord(w));
  }
}

TEST_CASE("Contradiction needs equal term sets and opposite polarity", "[query][negation]") {
  CHECK(Contradicts(Sig("the cache is enabled"), Sig("the cache is not enabled")));
  CHECK(Contradicts(Sig("The cache isn't enabled."), Sig("cache enabled")));
  CHECK(Contradicts(Sig("never retry on timeout"), Sig("retry on timeout")));
  // An unrelated negation in both texts does not hide the one that differs.
  CHECK(Contradicts(Sig("The cache is not enabled. It is not fast."),
                    Sig("The cache is enabled. It is not fast.")));
  CHECK_FALSE(Contradicts(Sig("not fast, cache not enabled"), Sig("cache never enabled not fast")));
  // Both negated, or neither: no contradiction.
  CHECK_FALSE(Contradicts(Sig("cache not enabled"), Sig("cache never enabled")));
  CHECK_FALSE(Contradicts(Sig("cache enabled"), Sig("cache enabled")));
  // Substrings of other words are not negations.
  CHECK_FALSE(Contradicts(Sig("we know the node"), Sig("we the node")));
  CHECK_FALSE(Contradicts(Sig("the cache is enabled"), Sig("the cache is now enabled")));
  // Different content words.
  CHECK_FALSE(Contradicts(Sig("cache enabled"), Sig("cache not disabled")));
  // Only negation words: nothing is asserted.
  CHECK_FALSE(Contradicts(Sig("no"), Sig("the")));
  CHECK(Sig("not").terms.empty());
  CHECK(Sig("not").negated);
  CHECK_FALSE(Sig("not never").negated);
}

TEST_CASE("Term signatures are sets with a stable key", "[query][negation]") {
  TermSignature a = Sig("Cache cache enabled; enabled!");
  TermSignature b = Sig("enabled cache");
  CHECK(a.terms.size() == 2);
  CHECK(a.terms == b.terms);
  CHECK(a.SetKey() == b.SetKey());
  CHECK(a.SetKey() != 0);
  CHECK(Sig("").SetKey() == 0);
  CHECK(a.SetKey() != Sig("cache disabled").SetKey());
  // Reuse clears the previous state.
  a.Assign("not");
  CHECK(a.terms.empty());
  CHECK(a.negated);
}

TEST_CASE("Jaccard over sorted sets", "[query][negation]") {
  using V = std::vector<uint64_t>;
  CHECK(Jaccard(V{}, V{}) == 0.0);
  CHECK(Jaccard(V{1, 2, 3}, V{1, 2, 3}) == 1.0);
  CHECK(Jaccard(V{1, 2}, V{3, 4}) == 0.0);
  CHECK(Jaccard(V{1, 2, 3}, V{2, 3, 4}) == Approx(0.5));
  CHECK(IntersectionSize(V{1, 5, 9}, V{0, 5, 9, 12}) == 2);
  CHECK(Jaccard(V{}, V{1}) == 0.0);
}
