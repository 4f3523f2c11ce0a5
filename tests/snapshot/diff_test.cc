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

TEST_CASE("Diff reports added, removed and changed items by key", "[snapshot][diff]") {
  StoreState a = snapshot_test::SmallState();
  StoreState b = a;
  CHECK(DiffSnapshots(*OpenState(a), *OpenState(b)).equal());

  b.nodes[0].content = "changed";
  b.nodes[0].confidence = 0.01f;
  b.nodes.erase(b.nodes.begin() + 1);  // decision:n1: its edges now point at a stub
  b.nodes.push_back(snapshot_test::MakeNode("fact:new", NodeType::kFact, "new", 5));
  b.edges[2].weight = 9.0f;
  b.edges.pop_back();  // module:n9 -imports-> module:missing (and the stub)
  b.kv[0].value = "changed";
  b.kv.pop_back();
  DiffResult d = DiffSnapshots(*OpenState(a), *OpenState(b));
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

}  // namespace amem::snapshot
