// The compatibility tools (tools/mcp_compat.h) on a real store, through the protocol
// core: the documented mapping onto nodes and edges, round trips, errors that write
// nothing, and the memory.jsonl importer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <string>

#include "store/store.h"
#include "tools/mcp_compat.h"
#include "tools/mcp_server.h"

using namespace amem;
using namespace amem::mcp;

namespace {

struct TempStore {
  TempStore() {
    std::random_device rd;
    dir = (std::filesystem::temp_directory_path() /
           ("amem_mcp_compat_" + std::to_string(rd()) + std::to_string(rd())))
              .string();
    auto s = Store::Open(dir);
    REQUIRE(s.ok());
    store = std::move(*s);
  }
  ~TempStore() {
    store.reset();
    std::filesystem::remove_all(dir);
  }
  std::string dir;
  std::unique_ptr<Store> store;
};

struct Harness {
  Harness() : ctx{ts.store.get()} {
    AddCompatTools(&registry, &ctx);
    server = std::make_unique<Server>(&registry);
  }
  // Calls a tool; returns the result object (content, structuredContent, isError).
  Json Call(const std::string& tool, const Json& args) {
    Json req{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", args}}}};
    auto line = server->HandleLine(DumpLine(req));
    REQUIRE(line);
    Json r = Json::parse(*line);
    REQUIRE(r.contains("result"));
    return r["result"];
  }
  Json Ok(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(DumpLine(r));
    REQUIRE(r["isError"] == false);
    return r["structuredContent"];
  }
  TempStore ts;
  ToolContext ctx;
  ToolRegistry registry;
  std::unique_ptr<Server> server;
  int id = 0;
};

Json Entities(std::initializer_list<Json> list) { return Json{{"entities", Json(list)}}; }

}  // namespace

TEST_CASE("compat entities and observations map onto documented nodes", "[mcp][compat]") {
  Harness h;
  Json created = h.Ok("create_entities", Entities({
      {{"name", "Alice"}, {"entityType", "person"}, {"observations", {"likes tea", "likes tea", "x"}}},
      {{"name", "use-lmdb"}, {"entityType", "decision"}, {"observations", Json::array()}},
  }));
  CHECK(created["entities"].size() == 2);
  Store& s = *h.ts.store;
  auto alice = s.GetNode("entity:Alice");
  REQUIRE(alice.ok());
  CHECK(alice->type == NodeType::kEntity);
  CHECK(alice->content == "Alice");
  CHECK(Json::parse(alice->meta)["entityType"] == "person");
  auto decision = s.GetNode("entity:use-lmdb");
  REQUIRE(decision.ok());
  CHECK(decision->type == NodeType::kDecision);  // entityType names a node type
  auto obs = s.GetNode(ObservationKey("Alice", "likes tea"));
  REQUIRE(obs.ok());
  CHECK(obs->type == NodeType::kFact);
  CHECK(obs->content == "likes tea");
  CHECK(s.GetEdge(obs->key, "part_of", "entity:Alice").ok());

  // Observations keep their order and are a set per entity.
  h.Ok("add_observations", {{"observations", {{{"entityName", "Alice"}, {"contents", {"b", "a", "x"}}}}}});
  Json g = h.Ok("open_nodes", {{"names", {"Alice"}}});
  CHECK(g["entities"][0]["observations"] == Json({"likes tea", "x", "b", "a"}));

  // An existing name is skipped, not overwritten.
  created = h.Ok("create_entities", Entities({{{"name", "Alice"}, {"entityType", "robot"},
                                               {"observations", Json::array()}}}));
  CHECK(created["entities"].empty());
  CHECK(Json::parse(s.GetNode("entity:Alice")->meta)["entityType"] == "person");
}

TEST_CASE("compat relations: built-in, custom and free-form types", "[mcp][compat]") {
  Harness h;
  h.Ok("create_entities", Entities({{{"name", "A"}, {"entityType", "t"}, {"observations", Json::array()}},
                                    {{"name", "B"}, {"entityType", "t"}, {"observations", Json::array()}}}));
  Json rels{{"relations",
             {{{"from", "A"}, {"to", "B"}, {"relationType", "calls"}},
              {{"from", "A"}, {"to", "B"}, {"relationType", "works_at"}},
              {{"from", "A"}, {"to", "B"}, {"relationType", "Is Friends With"}},
              {{"from", "A"}, {"to", "B"}, {"relationType", "related_to"}},
              {{"from", "A"}, {"to", "B"}, {"relationType", "calls"}}}}};
  CHECK(h.Ok("create_relations", rels)["relations"].size() == 4);
  CHECK(h.Ok("create_relations", rels)["relations"].empty());
  Store& s = *h.ts.store;
  CHECK(s.GetEdge("entity:A", "calls", "entity:B").ok());
  CHECK(s.GetEdge("entity:A", "works_at", "entity:B").ok());  // defined on first use
  auto listed = s.GetEdge("entity:A", "related_to", "entity:B");
  REQUIRE(listed.ok());
  CHECK(Json::parse(listed->payload)["relationTypes"] == Json({"Is Friends With", "related_to"}));

  Json g = h.Ok("read_graph", Json::object());
  CHECK(g["relations"].size() == 4);

  h.Ok("delete_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "Is Friends With"}},
                                           {{"from", "A"}, {"to", "B"}, {"relationType", "works_at"}}}}});
  CHECK(!s.GetEdge("entity:A", "works_at", "entity:B").ok());
  listed = s.GetEdge("entity:A", "related_to", "entity:B");
  REQUIRE(listed.ok());
  CHECK(Json::parse(listed->payload)["relationTypes"] == Json({"related_to"}));
  h.Ok("delete_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "related_to"}}}}});
  CHECK(!s.GetEdge("entity:A", "related_to", "entity:B").ok());
  CHECK(h.Ok("read_graph", Json::object())["relations"].size() == 1);

  // A relation to a missing entity fails and writes nothing.
  uint64_t rev = s.revision();
  Json bad = h.Call("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "uses"}},
                                                       {{"from", "A"}, {"to", "Z"}, {"relationType", "uses"}}}}});
  CHECK(bad["isError"] == true);
  CHECK_THAT(bad["content"][0]["text"].get<std::string>(), Catch::Contains("Entity with name Z not found"));
  CHECK(s.revision() == rev);
}

TEST_CASE("compat delete_entities removes observations and relations", "[mcp][compat]") {
  Harness h;
  h.Ok("create_entities", Entities({{{"name", "A"}, {"entityType", "t"}, {"observations", {"o1", "o2"}}},
                                    {{"name", "B"}, {"entityType", "t"}, {"observations", Json::array()}}}));
  h.Ok("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "x y"}},
                                           {{"from", "B"}, {"to", "A"}, {"relationType", "part_of"}},
                                           {{"from", "A"}, {"to", "A"}, {"relationType", "self"}}}}});
  uint64_t before = h.ts.store->revision();
  Json r = h.Ok("delete_entities", {{"entityNames", {"A", "A", "nobody"}}});
  CHECK_THAT(r["message"].get<std::string>(), Catch::Contains("Not found: nobody"));
  Json g = h.Ok("read_graph", Json::object());
  CHECK(g["entities"].size() == 1);
  CHECK(g["relations"].empty());
  CHECK(!h.ts.store->GetNode(ObservationKey("A", "o1")).ok());
  auto stats = h.ts.store->Stats();
  REQUIRE(stats.ok());
  CHECK(stats->live_edges == 0);
  // History keeps the old state.
  Json old = h.Ok("read_graph", {{"as_of", before}});
  CHECK(old["entities"].size() == 2);
  CHECK(old["relations"].size() == 3);
}

TEST_CASE("memory.jsonl parser and importer", "[mcp][compat][import]") {
  auto g = ParseMemoryJsonl(
      "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[\"1\",\"2\"]}\r\n"
      "\n"
      "{\"type\":\"relation\",\"from\":\"A\",\"to\":\"Ghost\",\"relationType\":\"haunts\"}\n"
      "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"t\",\"observations\":[\"2\",\"3\"]}");
  REQUIRE(g.ok());
  CHECK(g->entities.size() == 2);
  CHECK(g->relations.size() == 1);
  TempStore ts;
  auto report = ImportKnowledgeGraph(ts.store.get(), *g);
  REQUIRE(report.ok());
  CHECK(report->entities_created == 1);
  CHECK(report->entities_merged == 1);
  CHECK(report->observations_added == 3);
  CHECK(report->relations_created == 1);
  auto back = ReadKnowledgeGraph(*ts.store, ReadView::Latest());
  REQUIRE(back.ok());
  REQUIRE(back->entities.size() == 1);
  CHECK(back->entities[0].observations == std::vector<std::string>{"1", "2", "3"});
  REQUIRE(back->relations.size() == 1);  // dangling relations survive an import
  CHECK(back->relations[0] == Relation{"A", "Ghost", "haunts"});

  for (std::string bad : {"{\"type\":\"entity\"}", "[1]", "not json",
                          "{\"type\":\"thing\",\"name\":\"x\"}",
                          "{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\",\"relationType\":1}",
                          "{\"type\":\"entity\",\"name\":\"x\",\"entityType\":\"t\",\"observations\":[],\"extra\":1}"}) {
    auto r = ParseMemoryJsonl("{\"type\":\"entity\",\"name\":\"ok\",\"entityType\":\"t\",\"observations\":[]}\n" + bad);
    INFO(bad);
    REQUIRE(!r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::StartsWith("line 2: "));
  }
  // Names longer than a key allows are refused, and nothing is written.
  KnowledgeGraph big;
  big.entities.push_back({"fine", "t", {}});
  big.entities.push_back({std::string(1001, 'n'), "t", {}});
  uint64_t rev = ts.store->revision();
  CHECK(!ImportKnowledgeGraph(ts.store.get(), big).ok());
  CHECK(ts.store->revision() == rev);
}

TEST_CASE("read_graph pages with a pinned cursor", "[mcp][compat]") {
  Harness h;
  Json ents = Json::array();
  for (int i = 0; i < 12; ++i) {
    ents.push_back({{"name", "e" + std::to_string(100 + i)}, {"entityType", "t"}, {"observations", {"o"}}});
  }
  h.Ok("create_entities", {{"entities", ents}});
  std::vector<std::string> names;
  Json args{{"limit", 5}};
  for (int page = 0;; ++page) {
    REQUIRE(page < 5);
    Json g = h.Ok("read_graph", args);
    CHECK(g["entities"].size() <= 5);
    for (const auto& e : g["entities"]) names.push_back(e["name"]);
    if (page == 0) h.Ok("delete_entities", {{"entityNames", {"e111"}}});  // not seen by later pages
    if (!g.contains("nextCursor")) break;
    args["cursor"] = g["nextCursor"];
  }
  CHECK(names.size() == 12);
  for (std::string bad : {"", "r0o1", "x", "r1o", "r1ox", "r99999999999999999999o1"}) {
    Json r = h.Call("read_graph", {{"cursor", bad}});
    INFO(bad);
    CHECK(r["isError"] == true);
  }
}
