#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "snapshot/diff.h"
#include "snapshot/info.h"
#include "snapshot/writer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/snapshot/test_state.h"
#include "tests/store/store_test_util.h"

namespace amem::snapshot {
using snapshot_test::OpenState;

TEST_CASE("Info describes a snapshot", "[snapshot][info]") {
  auto r = OpenState(snapshot_test::SmallState());
  InfoResult in = SnapshotInfo(*r);
  CHECK(in.nodes == 14);
  CHECK(in.stubs == 1);
  CHECK(in.edges == 18);
  CHECK(in.kv == 2);
  CHECK(in.dimension == 4);
  CHECK(in.sessions == 4);
  CHECK(in.has_checksum);
  CHECK(in.type_counts[static_cast<int>(NodeType::kEntity)] == 2);
  CHECK(in.session_list[0].run.empty());
  CHECK(in.blocks.back().name == "checksum");
  auto j = nlohmann::json::parse(InfoToJson(in));
  CHECK(j["nodes"] == 14);
  CHECK(j["types"]["entity"] == 2);
  CHECK(InfoToText(in).find("nodes: 14 (1 stubs)") != std::string::npos);
  // One live entity:NAME node (the other entity-typed node is the stub).
  CHECK(in.has_entity_search);
  CHECK(in.search_entities == 1);
  CHECK(j["search_entities"] == 1);
  // Its content is not its name (a node of the small state): its labels are odd.
  CHECK(in.search_odd_labels == 1u);
  CHECK(j["search_odd_labels"] == 1);
  CHECK(InfoToText(in).find("entity search: yes (1 entities, 1 with odd labels)") != std::string::npos);
  // A store without entities (every code graph) has no block, and no such line.
  StoreState plain;
  plain.dimension = 4;
  plain.nodes.push_back(snapshot_test::MakeNode("fact:a", NodeType::kFact, "a note", 1));
  InfoResult none = SnapshotInfo(*OpenState(plain));
  CHECK_FALSE(none.has_entity_search);
  CHECK(none.search_entities == 0);
  CHECK_FALSE(none.search_odd_labels.has_value());
  CHECK(nlohmann::json::parse(InfoToJson(none))["search_odd_labels"].is_null());
  CHECK(InfoToText(none).find("entity search") == std::string::npos);
}

TEST_CASE("Verify distinguishes structure, checksum and I/O failures", "[snapshot][info]") {
  amem::testing::TempDir dir;
  auto bytes = BuildSnapshot(snapshot_test::SmallState());
  REQUIRE(bytes.ok());
  const std::string path = dir.Sub("x.amem");
  REQUIRE(WriteFileAtomic(path, *bytes).ok());
  CHECK(VerifySnapshotFile(path).outcome == VerifyReport::Outcome::kOk);
  CHECK(VerifySnapshotFile(dir.Sub("missing.amem")).outcome == VerifyReport::Outcome::kIOError);
  std::string bad = *bytes;
  Header h;
  REQUIRE(h.DecodeFrom(bad).ok());
  bad[h.content_offset + 20] ^= 0x40;  // inside the LZ4 frame: only Verify sees it
  REQUIRE(WriteFileAtomic(path, bad).ok());
  VerifyReport v = VerifySnapshotFile(path);
  CHECK(v.outcome == VerifyReport::Outcome::kChecksum);
  CHECK(v.status.IsCorruption());
  bad = *bytes;
  bad[Header::kNodeCountOffset] ^= 0x01;
  REQUIRE(WriteFileAtomic(path, bad).ok());
  CHECK(VerifySnapshotFile(path).outcome == VerifyReport::Outcome::kStructure);
}

}  // namespace amem::snapshot
