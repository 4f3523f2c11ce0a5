#include "common/tokenizer.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/hash.h"

namespace amem {

namespace {
// Kept sorted: IsStopWord binary-searches it. A short list of English function
// words; negations are deliberately absent.
constexpr std::array<std::string_view, 33> kStopWords = {
    "an",   "and",  "are", "as",    "at",    "be",   "but",  "by",   "for",
    "from", "has",  "have", "he",   "her",   "his",  "if",   "in",   "into",
    "is",   "it",   "its",  "of",   "on",    "or",   "she",  "that", "the",
    "their", "then", "this", "to",  "was",   "with"};
}  // namespace

std::span<const std::string_view> StopWords() { return kStopWords; }

bool IsStopWord(std::string_view token) {
  return std::binary_search(kStopWords.begin(), kStopWords.end(), token);
}

std::vector<std::string> Tokenize(std::string_view text) {
  std::vector<std::string> out;
  ForEachToken(text, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

void HashEmbed(std::string_view text, uint32_t dim, float* out) {
  std::fill(out, out + dim, 0.0f);
  if (dim == 0) return;
  ForEachToken(text, [&](std::string_view t) {
    uint64_t h = Hash64(t);
    float sign = (h >> 63) ? -1.0f : 1.0f;
    out[h % dim] += sign;
  });
  double norm = 0;
  for (uint32_t i = 0; i < dim; ++i) norm += static_cast<double>(out[i]) * out[i];
  if (norm == 0) return;
  float inv = static_cast<float>(1.0 / std::sqrt(norm));
  for (uint32_t i = 0; i < dim; ++i) out[i] *= inv;
}

std::vector<float> HashEmbed(std::string_view text, uint32_t dim) {
  std::vector<float> v(dim);
  HashEmbed(text, dim, v.data());
  return v;
}

}  // namespace amem
