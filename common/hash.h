// Hashing. Node ids are XXH3-64 of the canonical key (docs/DESIGN.md §2); checksums in
// snapshots are XXH3-64 too, written with PutFixed64 (not xxHash's canonical form).
#ifndef AMEM_COMMON_HASH_H_
#define AMEM_COMMON_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace amem {

uint64_t Hash64(std::string_view data);
uint64_t Hash64(const void* data, size_t n, uint64_t seed);

// A node's stable id: XXH3_64bits(key).
inline uint64_t NodeIdForKey(std::string_view key) { return Hash64(key); }

// 16 lower-case hex digits, and back. ParseHexId accepts exactly 16 hex digits
// (either case), optionally prefixed with "0x"; anything else returns false.
std::string FormatHexId(uint64_t id);
bool ParseHexId(std::string_view text, uint64_t* id);

// Streaming XXH3-64 for checksums over several ranges.
class Hasher64 {
 public:
  Hasher64();
  ~Hasher64();
  Hasher64(const Hasher64&) = delete;
  Hasher64& operator=(const Hasher64&) = delete;
  void Update(const void* data, size_t n);
  void Update(std::string_view data) { Update(data.data(), data.size()); }
  uint64_t Digest() const;

 private:
  void* state_;  // XXH3_state_t*, kept out of this header.
};

}  // namespace amem

#endif  // AMEM_COMMON_HASH_H_
