#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "snapshot/diff.h"
#include "snapshot/info.h"
#include "snapshot/writer.h"
#include "tests/snapshot/test_state.h"
#include "tests/store/store_test_util.h"

namespace amem::snapshot {
namespace {

std::unique_ptr<Reader> Open(const StoreState& s) {
  auto b = BuildSnapshot(s);
  REQUIRE(b.ok());
  auto r = Reader::OpenBuffer(*b);
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("Diff reports added, removed and changed items by key", "[snapshot][diff]") {
  StoreState a = snapshot_test::SmallState();
  StoreState b = a;
  CHECK(DiffSnapshots(*Open(a), *Open(b)).equal());

  b.nodes[0].content = "changed";
  b.nodes[0].confidence = 0.01f;
  b.nodes.erase(b.nodes.begin() + 1);  // decision:n1: its edges now point at a stub
  b.nodes.push_back(snapshot_test::MakeNode("fact:new", NodeType::kFact, "new", 5));
  b.edges[2].weight = 9.0f;
  b.edges.pop_back();  // module:n9 -imports-> module:missing (and the stub)
  b.kv[0].value = "changed";
  b.kv.pop_back();
  DiffResult d = DiffSnapshots(*Open(a), *Open(b));
  CHECK_FALSE(d.equal());
  REQUIRE(d.nodes_added.size() == 1);
  CHECK(d.nodes_added[0].key == "fact:new");
  REQUIRE(d.nodes_removed.size() == 1);
  CHECK(d.nodes_removed[0].key == "module:missing");
  REQUIRE(d.nodes_changed.size() == 2);
  CHECK(d.nodes_changed[0].key == "decision:n1");  // became a stub
  CHECK(d.nodes_changed[1].key == "fact:n0");
  CHECK(d.nodes_changed[1].fields == std::vector<std::string>{"content", "confidence"});
  REQUIRE(d.edges_removed.size() == 1);
  CHECK(d.edges_removed[0].key == "module:n9 -imports-> module:missing");
  REQUIRE(d.edges_changed.size() == 1);
  CHECK(d.edges_changed[0].fields == std::vector<std::string>{"weight"});
  CHECK(d.kv_changed.size() == 1);
  CHECK(d.kv_removed.size() == 1);
  auto j = nlohmann::json::parse(DiffToJson(d));
  CHECK(j["equal"] == false);
  CHECK(j["nodes"]["added"][0] == "fact:new");
  CHECK(j["edges"]["changed"][0]["fields"][0] == "weight");
  std::string text = DiffToText(d);
  CHECK(text.find("+ node fact:new\n") != std::string::npos);
  CHECK(text.find("~ node fact:n0: content, confidence\n") != std::string::npos);
}

TEST_CASE("Info describes a snapshot", "[snapshot][info]") {
  auto r = Open(snapshot_test::SmallState());
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
