#include "common/sha256.h"

#include <catch2/catch.hpp>
#include <string>

namespace amem {
namespace {

std::string Hex(std::string_view data, size_t piece = 0) {
  Sha256 h;
  if (piece == 0) {
    h.Update(data);
  } else {
    for (size_t i = 0; i < data.size(); i += piece) h.Update(data.substr(i, piece));
  }
  const auto d = h.Finish();
  return HexBytes(d.data(), d.size());
}

TEST_CASE("SHA-256 gives the FIPS 180-4 example digests", "[common][sha256]") {
  CHECK(Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(Hex(two_blocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  CHECK(Hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Fed in pieces that straddle the 64-byte blocks: the same digest.
  for (size_t piece : {1, 3, 55, 63, 64, 65, 1000}) {
    INFO("piece " << piece);
    CHECK(Hex(two_blocks, piece) == Hex(two_blocks));
    CHECK(Hex(million.substr(0, 4099), piece) == Hex(million.substr(0, 4099)));
  }
}

TEST_CASE("Base64url encodes with padding and decodes only what it encodes",
          "[common][sha256]") {
  CHECK(Base64Url("") == "");
  CHECK(Base64Url("f") == "Zg==");
  CHECK(Base64Url("fo") == "Zm8=");
  CHECK(Base64Url("foo") == "Zm9v");
  CHECK(Base64Url("\xfb\xff\xbf") == "-_-_");
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= all.size(); n += 37) {
    std::string back;
    REQUIRE(DecodeBase64Url(Base64Url(all.substr(0, n)), &back));
    CHECK(back == all.substr(0, n));
  }
  std::string out;
  for (const char* bad : {"Zg=", "Z===", "Zg+=", "Zg/=", "Z=g=", "Zm9v\n"}) {
    INFO(bad);
    CHECK_FALSE(DecodeBase64Url(bad, &out));
  }
}

}  // namespace
}  // namespace amem
