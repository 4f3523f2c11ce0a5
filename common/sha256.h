// SHA-256 (FIPS 180-4), for content digests that other tools check too: the
// JetStream object store's "SHA-256=" digests of published snapshots
// (docs/REPLICATION.md). Not for hashing inside amem (common/hash.h is faster).
#ifndef AMEM_COMMON_SHA256_H_
#define AMEM_COMMON_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace amem {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t n);
  void Update(std::string_view s) { Update(s.data(), s.size()); }
  // The 32-byte digest; the object is spent afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buffered_ = 0;
  uint64_t length_ = 0;  // bytes
};

// Lower-case hex, and base64 with the URL-safe alphabet and '=' padding (RFC 4648
// §5), as the object store writes digests.
std::string HexBytes(const uint8_t* p, size_t n);
std::string Base64Url(std::string_view bytes);
// InvalidArgument-free decoding: false when `text` is not padded base64url.
bool DecodeBase64Url(std::string_view text, std::string* out);

}  // namespace amem

#endif  // AMEM_COMMON_SHA256_H_
