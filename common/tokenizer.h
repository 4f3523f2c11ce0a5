// The one tokenizer (docs/QUERIES.md, shared rules; docs/FORMAT.md "Tokenizer"). The term
// index, BM25 queries, token overlap and the hashed embedding all use it.
//
// Rules: ASCII letters are lower-cased. A *run* is a maximal run of ASCII letters,
// ASCII digits and bytes >= 0x80 (so UTF-8 text stays inside words); every other
// byte separates. An *identifier* is one run, or runs joined by single connectors
// `_`, `-`, `.` or `::` with a run on both sides (`write_batch`, `amem::Store`,
// `records.cc`); `/`, spaces and all other bytes never join. Its *names* are its
// pieces between `.` and `::` (`write_batch` in `db::write_batch.h`). Each
// identifier gives, in this order, words of at most kMaxIdentifierLength bytes:
//   - the whole identifier, connectors kept, when it has two or more runs
//     (`amem::store::apply`);
//   - each name that has two or more runs and is not the whole, before its runs;
//   - each run (`hashindexbuilder`), then, when the run has inner boundaries, its
//     parts: a boundary is lower -> upper (`Write|Batch`), letter <-> digit
//     (`sha|256`), and the last of several capitals before a lower-case letter
//     (`HTTP|Server`), except a plural `s` that ends the run or a hump (`URLs`).
//     Bytes >= 0x80 make no boundary.
// Tokens shorter than 2 bytes and stop words are dropped. No stemming.
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
// during the call (it points into a buffer of text.size() bytes, allocated once).
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

// A whole identifier or name longer than this is not a word (its runs and parts
// still are): it caps the distinct terms a generated name or a long chain adds.
inline constexpr size_t kMaxIdentifierLength = 64;

// Byte classes for the boundary rules.
inline constexpr uint8_t kUpper = 1, kLower = 2, kDigit = 4;

// fold[c]: c lower-cased if it is a word byte (ASCII letter or digit, or >= 0x80),
// else 0. cls[c]: kUpper, kLower or kDigit for ASCII letters and digits, else 0.
struct Tables {
  unsigned char fold[256];
  uint8_t cls[256];
  constexpr Tables() : fold(), cls() {
    for (int c = 0; c < 256; ++c) {
      const bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z',
                 digit = c >= '0' && c <= '9';
      const bool word = upper || lower || digit || c >= 0x80;
      fold[c] = !word ? 0 : upper ? static_cast<unsigned char>(c - 'A' + 'a')
                                  : static_cast<unsigned char>(c);
      cls[c] = upper ? kUpper : lower ? kLower : digit ? kDigit : 0;
    }
  }
};
inline constexpr Tables kTables;

inline uint8_t Class(const char* s, size_t k) { return kTables.cls[static_cast<unsigned char>(s[k])]; }

// The connector at s[i] when it joins the run before it to a run after it: its
// length (1 for `_`, `-`, `.`; 2 for `::`), else 0.
inline size_t JoinAt(const char* s, size_t i, size_t n) {
  const char c = s[i];
  if ((c == '_' || c == '-' || c == '.') && i + 1 < n) {
    return kTables.fold[static_cast<unsigned char>(s[i + 1])] != 0 ? 1 : 0;
  }
  if (c == ':' && i + 2 < n && s[i + 1] == ':') {
    return kTables.fold[static_cast<unsigned char>(s[i + 2])] != 0 ? 2 : 0;
  }
  return 0;
}

// Whether a part of the run s[begin, end) starts at k (begin < k < end).
inline bool PartBoundary(const char* s, size_t k, size_t end) {
  const uint8_t prev = Class(s, k - 1), cur = Class(s, k);
  if (prev == 0 || cur == 0) return false;  // bytes >= 0x80 make no boundary
  if ((prev == kDigit) != (cur == kDigit)) return true;
  if (cur != kUpper) return false;
  if (prev == kLower) return true;
  // Two capitals: the second starts a part if a lower-case letter follows it
  // (`HTTP|Server`), unless that letter is a plural `s` (`URLs`, `IDsFor`).
  if (k + 1 >= end || Class(s, k + 1) != kLower) return false;
  return !(s[k + 1] == 's' && (k + 2 == end || Class(s, k + 2) != kLower));
}

inline void EmitWord(std::string_view w, auto& fn) {
  if (w.size() >= 2 && !IsStopWord(w)) fn(w);
}

// Emits the words of the identifier `raw` (the text's bytes), whose folded bytes
// are `folded` (same length; connectors as in the text): the whole when
// `compound`, then each name that is not the whole, its runs and their parts.
// Bit r of `split_runs` (r < 63; bit 63 for every later run) is set when run r
// may have parts.
template <typename Fn>
void EmitIdentifier(const char* raw, std::string_view folded, bool compound, uint64_t split_runs,
                    Fn& fn) {
  unsigned run = 0;
  const size_t n = folded.size();
  // Wholes and names hold a connector: never stop words, never short.
  if (compound && n <= kMaxIdentifierLength) fn(folded);
  for (size_t name = 0; name < n;) {
    size_t name_end = name;
    bool joined = false;  // the name has a `_` or `-`
    for (; name_end < n && folded[name_end] != '.' && folded[name_end] != ':'; ++name_end) {
      joined |= folded[name_end] == '_' || folded[name_end] == '-';
    }
    if (joined && name_end - name < n && name_end - name <= kMaxIdentifierLength) {
      fn(folded.substr(name, name_end - name));
    }
    for (size_t a = name; a < name_end;) {
      size_t b = a + 1;
      while (b < name_end && kTables.fold[static_cast<unsigned char>(folded[b])] != 0) ++b;
      EmitWord(folded.substr(a, b - a), fn);
      if ((split_runs >> (run < 63 ? run : 63)) & 1) {
        size_t part = a;
        for (size_t k = a + 1; k < b; ++k) {
          if (PartBoundary(raw, k, b)) {
            EmitWord(folded.substr(part, k - part), fn);
            part = k;
          }
        }
        if (part != a) EmitWord(folded.substr(part, b - part), fn);
      }
      ++run;
      a = b + (b < name_end);  // past a `_` or `-`
    }
    name = name_end + (name_end < n && folded[name_end] == ':' ? 2 : 1);  // past `.` or `::`
  }
}

}  // namespace tokenizer_internal

template <typename Fn>
void ForEachToken(std::string_view text, Fn&& fn) {
  using namespace tokenizer_internal;
  const unsigned char* fold = kTables.fold;
  const uint8_t* cls = kTables.cls;
  const char* s = text.data();
  const size_t n = text.size();
  // An identifier's folded bytes, as many as its text's: sized once, no checks per byte.
  std::string buf(n, '\0');
  char* const out = buf.data();
  size_t i = 0;
  while (i < n) {
    while (i < n && fold[static_cast<unsigned char>(s[i])] == 0) ++i;
    if (i == n) break;
    const size_t start = i;
    // compound: a connector joined two runs; split_runs: which runs may have parts
    // (a capital after the first byte, or digits and letters together).
    bool compound = false;
    uint64_t split_runs = 0;
    for (unsigned run = 0;; ++run) {
      const uint8_t first = cls[static_cast<unsigned char>(s[i])];
      uint8_t seen = first == kUpper ? kLower : first;
      out[i - start] = static_cast<char>(fold[static_cast<unsigned char>(s[i])]);
      for (++i; i < n; ++i) {
        const unsigned char c = fold[static_cast<unsigned char>(s[i])];
        if (c == 0) break;
        seen |= cls[static_cast<unsigned char>(s[i])];
        out[i - start] = static_cast<char>(c);
      }
      const bool split = (seen & kUpper) || ((seen & kDigit) && (seen & (kUpper | kLower)));
      split_runs |= uint64_t{split} << (run < 63 ? run : 63);
      const size_t join = i < n ? JoinAt(s, i, n) : 0;
      if (join == 0) break;
      for (size_t k = 0; k < join; ++k, ++i) out[i - start] = s[i];
      compound = true;
    }
    const std::string_view folded(out, i - start);
    if (!compound && split_runs == 0) {
      EmitWord(folded, fn);
    } else {
      EmitIdentifier(s + start, folded, compound, split_runs, fn);
    }
  }
}

}  // namespace amem

#endif  // AMEM_COMMON_TOKENIZER_H_
