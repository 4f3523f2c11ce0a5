// UTF-8 checks and safe cutting. Stored text must be valid UTF-8; previews are cut
// on a character boundary so a multi-byte character is never split.
#ifndef AMEM_COMMON_UTF8_H_
#define AMEM_COMMON_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace amem {

// True if `s` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool IsValidUtf8(std::string_view s);

// The number of characters (code points) of `s`: the bytes that do not continue
// a character. REQUIRES: s is valid UTF-8 (otherwise an estimate).
size_t Utf8CharCount(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` bytes that ends on a character
// boundary. REQUIRES: s is valid UTF-8.
std::string_view Utf8Prefix(std::string_view s, size_t max_bytes);

// A one-line preview: at most `max_bytes` bytes cut on a boundary, newlines and tabs
// turned into spaces, "…" appended when something was cut.
std::string Preview(std::string_view s, size_t max_bytes = 80);

}  // namespace amem

#endif  // AMEM_COMMON_UTF8_H_
