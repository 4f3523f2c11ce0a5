#include "common/tokenizer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

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

// Stop words by length (2..5) and first letter, each packed into an integer: a
// token is compared with the few words that share both, not searched for.
class StopWordTable {
 public:
  StopWordTable() {
    for (std::string_view w : kStopWords) {
      Bucket& b = buckets_[w.size()][static_cast<unsigned char>(w[0]) - 'a'];
      b.words[b.count++] = Pack(w);
    }
  }
  bool Contains(std::string_view token) const {
    if (token.size() < kMinLength || token.size() > kMaxLength) return false;
    const unsigned letter = static_cast<unsigned char>(token[0]) - 'a';
    if (letter >= 26) return false;
    const Bucket& b = buckets_[token.size()][letter];
    const uint64_t packed = Pack(token);
    for (uint8_t i = 0; i < b.count; ++i) {
      if (b.words[i] == packed) return true;
    }
    return false;
  }

 private:
  static constexpr size_t kMinLength = 2, kMaxLength = 5;
  // The bytes of a word of at most 8 bytes as one integer (the length is implied
  // by the bucket).
  static uint64_t Pack(std::string_view w) {
    uint64_t v = 0;
    std::memcpy(&v, w.data(), w.size());
    return v;
  }
  struct Bucket {
    std::array<uint64_t, 4> words{};
    uint8_t count = 0;
  };
  std::array<std::array<Bucket, 26>, kMaxLength + 1> buckets_{};
};

bool IsStopWord(std::string_view token) {
  static const StopWordTable table;
  return table.Contains(token);
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
