// The one tokenizer (docs/QUERIES.md, shared rules; docs/FORMAT.md "Tokenizer"). The term
// index, BM25 queries, token overlap and the hashed embedding all use it.
//
// Rules: ASCII letters are lower-cased; a token is a maximal run of ASCII letters,
// ASCII digits and bytes >= 0x80 (so UTF-8 text stays inside words); every other
// byte separates. Tokens shorter than 2 bytes and stop words are dropped. No stemming.
#ifndef AMEM_COMMON_TOKENIZER_H_
#define AMEM_COMMON_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace amem {

// The stop words, sorted, lower case. Negations ("no", "not", "never") are *not*
// stop words: contradiction detection depends on them.
std::span<const std::string_view> StopWords();
bool IsStopWord(std::string_view token);

// Calls fn(std::string_view token) for each token in order. The view is valid only
// during the call (it points into a reused buffer).
template <typename Fn>
void ForEachToken(std::string_view text, Fn&& fn);

// Convenience: the tokens in order (duplicates kept).
std::vector<std::string> Tokenize(std::string_view text);

// Built-in text embedding (docs/QUERIES.md): each token adds +1 or -1 (sign from a hash
// bit) at index Hash64(token) % dim; the result is L2-normalised. Empty text gives
// the zero vector. Deterministic on every machine.
void HashEmbed(std::string_view text, uint32_t dim, float* out);
std::vector<float> HashEmbed(std::string_view text, uint32_t dim);

// ---- implementation ----
namespace tokenizer_internal {
// kFold[c]: c lower-cased if it is a word byte (ASCII letter or digit, or >= 0x80),
// else 0.
struct FoldTable {
  unsigned char fold[256];
  constexpr FoldTable() : fold() {
    for (int c = 0; c < 256; ++c) {
      bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c >= 0x80;
      fold[c] = !word ? 0 : (c >= 'A' && c <= 'Z') ? static_cast<unsigned char>(c - 'A' + 'a')
                                                   : static_cast<unsigned char>(c);
    }
  }
};
inline constexpr FoldTable kFold;
}  // namespace tokenizer_internal

template <typename Fn>
void ForEachToken(std::string_view text, Fn&& fn) {
  const unsigned char* fold = tokenizer_internal::kFold.fold;
  std::string buf;
  size_t i = 0, n = text.size();
  while (i < n) {
    while (i < n && fold[static_cast<unsigned char>(text[i])] == 0) ++i;
    buf.clear();
    for (unsigned char c; i < n && (c = fold[static_cast<unsigned char>(text[i])]) != 0; ++i) {
      buf.push_back(static_cast<char>(c));
    }
    if (buf.size() >= 2 && !IsStopWord(buf)) fn(std::string_view(buf));
  }
}

}  // namespace amem

#endif  // AMEM_COMMON_TOKENIZER_H_
