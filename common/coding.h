// Byte coding: the one place that knows byte order (after leveldb's util/coding.h).
//
// Snapshot files are little-endian (Fixed*). LMDB keys are big-endian (Big*) so that
// LMDB's bytewise key order is numeric order. Decoding is byte by byte; compilers
// turn it into a single load. Decode* functions do no bounds checks: the caller has
// verified the length. Get* functions consume from a string_view and return false
// when the input is too short (or a varint is malformed); *in is then unspecified.
#ifndef AMEM_COMMON_CODING_H_
#define AMEM_COMMON_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace amem {

// ---- little-endian fixed width ----
inline void EncodeFixed16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v);
  p[1] = static_cast<char>(v >> 8);
}
inline void EncodeFixed32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline uint16_t DecodeFixed16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}
inline uint32_t DecodeFixed32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) | (static_cast<uint32_t>(u[3]) << 24);
}
inline uint64_t DecodeFixed64(const char* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) |
         (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}
inline void EncodeFloat(char* p, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  EncodeFixed32(p, bits);
}
inline float DecodeFloat(const char* p) {
  uint32_t bits = DecodeFixed32(p);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
// n floats to 4n bytes at p: one copy on a little-endian machine.
inline void EncodeFloats(char* p, const float* f, size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    if (n > 0) std::memcpy(p, f, 4 * n);
  } else {
    for (size_t i = 0; i < n; ++i) EncodeFloat(p + 4 * i, f[i]);
  }
}

void PutFixed16(std::string* dst, uint16_t v);
void PutFixed32(std::string* dst, uint32_t v);
void PutFixed64(std::string* dst, uint64_t v);
void PutFloat(std::string* dst, float v);
void PutDouble(std::string* dst, double v);
bool GetFixed16(std::string_view* in, uint16_t* v);
bool GetFixed32(std::string_view* in, uint32_t* v);
bool GetFixed64(std::string_view* in, uint64_t* v);
bool GetFloat(std::string_view* in, float* v);
bool GetDouble(std::string_view* in, double* v);

// ---- big-endian fixed width (LMDB key parts) ----
inline void EncodeBig32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (24 - 8 * i));
}
inline void EncodeBig64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (56 - 8 * i));
}
inline uint32_t DecodeBig32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (static_cast<uint32_t>(u[0]) << 24) | (static_cast<uint32_t>(u[1]) << 16) |
         (static_cast<uint32_t>(u[2]) << 8) | static_cast<uint32_t>(u[3]);
}
inline uint64_t DecodeBig64(const char* p) {
  return (static_cast<uint64_t>(DecodeBig32(p)) << 32) | DecodeBig32(p + 4);
}
void PutBig32(std::string* dst, uint32_t v);
void PutBig64(std::string* dst, uint64_t v);
bool GetBig32(std::string_view* in, uint32_t* v);
bool GetBig64(std::string_view* in, uint64_t* v);

// ---- varints (LEB128, as leveldb) ----
constexpr int kMaxVarint64Length = 10;
void PutVarint32(std::string* dst, uint32_t v);
void PutVarint64(std::string* dst, uint64_t v);
// Zigzag-coded signed varint.
void PutVarsint64(std::string* dst, int64_t v);
bool GetVarint32(std::string_view* in, uint32_t* v);
bool GetVarint64(std::string_view* in, uint64_t* v);
bool GetVarsint64(std::string_view* in, int64_t* v);
int VarintLength(uint64_t v);

// Varint32 length, then the bytes.
void PutLengthPrefixed(std::string* dst, std::string_view v);
// On success *v points into the bytes *in pointed at (no copy).
bool GetLengthPrefixed(std::string_view* in, std::string_view* v);

}  // namespace amem

#endif  // AMEM_COMMON_CODING_H_
