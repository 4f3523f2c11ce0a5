#include <catch2/catch.hpp>
#include <cmath>

#include "common/hash.h"
#include "common/model.h"
#include "common/status.h"
#include "common/tokenizer.h"
#include "common/utf8.h"

using namespace amem;

TEST_CASE("Ids, types and relations", "[common][model]") {
  uint64_t id = NodeIdForKey("file:src/a.cc");
  uint64_t back;
  REQUIRE(ParseHexId(FormatHexId(id), &back));
  CHECK(back == id);
  CHECK_FALSE(ParseHexId("xyz", &back));
  CHECK_FALSE(ParseHexId("0123456789abcdeg", &back));
  CHECK(ParseNodeType("constraint") == NodeType::kConstraint);
  CHECK(ParseNodeType("procedure") == NodeType::kSkill);
  CHECK_FALSE(ParseNodeType("bogus"));
  CHECK(ParseBuiltinRelation("derived_from") == kDerivedFrom);
  CHECK(std::string(BuiltinRelationName(kSupersedes)) == "supersedes");
  CHECK(BuiltinRelationName(16) == nullptr);
  CHECK(IsValidRelationName("blocks_on"));
  CHECK_FALSE(IsValidRelationName("Blocks"));
  CHECK_FALSE(IsValidRelationName(""));
  Status s = Status::Corruption("edge block 7");
  CHECK(s.ToString() == "Corruption: edge block 7");
  CHECK(s.WithContext("file.amem").ToString() == "Corruption: file.amem: edge block 7");
}
