#include "query/internal/negation.h"

#include <algorithm>
#include <array>

#include "common/hash.h"
#include "common/tokenizer.h"

namespace amem::query {

namespace {
// Sorted for binary search.
constexpr std::array<std::string_view, 21> kNegations = {
    "aren",  "cannot", "couldn", "didn",    "doesn",   "don", "hadn",
    "hasn",  "haven",  "isn",    "mustn",   "needn",   "neither", "never",
    "no",    "nor",    "not",    "shouldn", "wasn",    "weren",   "wouldn"};
}  // namespace

bool IsNegationWord(std::string_view token) {
  return std::binary_search(kNegations.begin(), kNegations.end(), token);
}

void TermSignature::Assign(std::string_view text) {
  terms.clear();
  negated = false;
  ForEachToken(text, [&](std::string_view token) {
    if (IsNegationWord(token)) {
      negated = !negated;
    } else {
      terms.push_back(Hash64(token));
    }
  });
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
}

uint64_t TermSignature::SetKey() const {
  if (terms.empty()) return 0;
  // Hash64 of the raw u64s: byte order only has to be consistent within one run.
  uint64_t key = Hash64(terms.data(), terms.size() * sizeof(uint64_t), 0x5e7);
  return key == 0 ? 1 : key;
}

bool Contradicts(const TermSignature& a, const TermSignature& b) {
  return a.negated != b.negated && !a.terms.empty() && a.terms == b.terms;
}

size_t IntersectionSize(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return common;
}

double Jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 0.0;
  size_t common = IntersectionSize(a, b);
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

}  // namespace amem::query
