#include "common/coding.h"

namespace amem {

void PutFixed16(std::string* dst, uint16_t v) {
  char buf[2];
  EncodeFixed16(buf, v);
  dst->append(buf, 2);
}
void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}
void PutFloat(std::string* dst, float v) {
  char buf[4];
  EncodeFloat(buf, v);
  dst->append(buf, 4);
}
void PutDouble(std::string* dst, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutFixed64(dst, bits);
}

namespace {
template <size_t N>
bool Take(std::string_view* in, const char** p) {
  if (in->size() < N) return false;
  *p = in->data();
  in->remove_prefix(N);
  return true;
}
}  // namespace

bool GetFixed16(std::string_view* in, uint16_t* v) {
  const char* p;
  if (!Take<2>(in, &p)) return false;
  *v = DecodeFixed16(p);
  return true;
}
bool GetFixed32(std::string_view* in, uint32_t* v) {
  const char* p;
  if (!Take<4>(in, &p)) return false;
  *v = DecodeFixed32(p);
  return true;
}
bool GetFixed64(std::string_view* in, uint64_t* v) {
  const char* p;
  if (!Take<8>(in, &p)) return false;
  *v = DecodeFixed64(p);
  return true;
}
bool GetFloat(std::string_view* in, float* v) {
  const char* p;
  if (!Take<4>(in, &p)) return false;
  *v = DecodeFloat(p);
  return true;
}
bool GetDouble(std::string_view* in, double* v) {
  uint64_t bits;
  if (!GetFixed64(in, &bits)) return false;
  std::memcpy(v, &bits, 8);
  return true;
}

void PutBig32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeBig32(buf, v);
  dst->append(buf, 4);
}
void PutBig64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeBig64(buf, v);
  dst->append(buf, 8);
}
bool GetBig32(std::string_view* in, uint32_t* v) {
  const char* p;
  if (!Take<4>(in, &p)) return false;
  *v = DecodeBig32(p);
  return true;
}
bool GetBig64(std::string_view* in, uint64_t* v) {
  const char* p;
  if (!Take<8>(in, &p)) return false;
  *v = DecodeBig64(p);
  return true;
}

void PutVarint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Length];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  dst->append(buf, n);
}
void PutVarint32(std::string* dst, uint32_t v) { PutVarint64(dst, v); }
void PutVarsint64(std::string* dst, int64_t v) {
  PutVarint64(dst, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0, i = 0; i < kMaxVarint64Length && i < static_cast<int>(in->size());
       ++i, shift += 7) {
    uint64_t byte = static_cast<unsigned char>((*in)[i]);
    // The tenth byte may carry only the top bit of a 64-bit value.
    if (i == kMaxVarint64Length - 1 && byte > 1) return false;
    result |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      in->remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}
bool GetVarint32(std::string_view* in, uint32_t* v) {
  std::string_view copy = *in;
  uint64_t wide;
  if (!GetVarint64(&copy, &wide) || wide > UINT32_MAX) return false;
  *in = copy;
  *v = static_cast<uint32_t>(wide);
  return true;
}
bool GetVarsint64(std::string_view* in, int64_t* v) {
  uint64_t u;
  if (!GetVarint64(in, &u)) return false;
  *v = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return true;
}
int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++len;
  }
  return len;
}

void PutLengthPrefixed(std::string* dst, std::string_view v) {
  PutVarint32(dst, static_cast<uint32_t>(v.size()));
  dst->append(v.data(), v.size());
}
bool GetLengthPrefixed(std::string_view* in, std::string_view* v) {
  uint32_t len;
  std::string_view copy = *in;
  if (!GetVarint32(&copy, &len) || copy.size() < len) return false;
  *v = copy.substr(0, len);
  copy.remove_prefix(len);
  *in = copy;
  return true;
}

}  // namespace amem
