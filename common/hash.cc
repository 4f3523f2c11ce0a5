#include "common/hash.h"

#include <xxhash.h>

namespace amem {

uint64_t Hash64(std::string_view data) { return XXH3_64bits(data.data(), data.size()); }

uint64_t Hash64(const void* data, size_t n, uint64_t seed) {
  return XXH3_64bits_withSeed(data, n, seed);
}

std::string FormatHexId(uint64_t id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[id & 0xf];
    id >>= 4;
  }
  return out;
}

bool ParseHexId(std::string_view text, uint64_t* id) {
  if (text.size() == 18 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  if (text.size() != 16) return false;
  uint64_t v = 0;
  for (char c : text) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *id = v;
  return true;
}

Hasher64::Hasher64() : state_(XXH3_createState()) {
  XXH3_64bits_reset(static_cast<XXH3_state_t*>(state_));
}
Hasher64::~Hasher64() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void Hasher64::Update(const void* data, size_t n) {
  XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, n);
}
uint64_t Hasher64::Digest() const {
  return XXH3_64bits_digest(static_cast<XXH3_state_t*>(state_));
}

}  // namespace amem
