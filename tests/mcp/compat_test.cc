// The compatibility tools (tools/mcp/compat.h) on a real store, through the protocol
// core: the documented mapping onto nodes and edges, round trips, errors that write
// nothing, the memory.jsonl importer, unknown fields accepted as the official server
// does, concurrent writers that lose nothing (expected_revision), and the response
// budget (docs/MCP.md "Bounded output") on oversized nodes, entities and results.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <functional>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "common/coding.h"
#include "common/tokenizer.h"
#include "snapshot/reader.h"
#include "store/store.h"
#include "tests/sanitizer.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tools/io/ingest_line.h"
#include "tools/mcp/compat.h"
#include "tools/mcp/graph_view.h"
#include "tools/mcp/memory_line.h"
#include "tools/mcp/server.h"
#include "tools/mcp/memory_tools.h"

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

// The amem and compatibility tools of one server on `store`.
struct Tools {
  explicit Tools(Store* store) : ctx{store} {
    AddMemoryTools(&registry, &ctx);
    AddCompatTools(&registry, &ctx);
    server = std::make_unique<Server>(&registry);
  }
  // Calls a tool; returns the result object (content, structuredContent, isError).
  // last_bytes: the length of the whole response line.
  Json Call(const std::string& tool, const Json& args) {
    Json req{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "tools/call"},
             {"params", {{"name", tool}, {"arguments", args}}}};
    auto line = server->HandleLine(DumpLine(req));
    if (!line) throw std::runtime_error("no response");
    last_bytes = line->size();
    Json r = Json::parse(*line);
    if (!r.contains("result")) throw std::runtime_error("not a result: " + *line);
    return r["result"];
  }
  Json Ok(const std::string& tool, const Json& args) {
    Json r = Call(tool, args);
    INFO(DumpLine(r).substr(0, 2000));
    REQUIRE(r["isError"] == false);
    // The text content is the JSON of structuredContent (or a plain message).
    const std::string& text = r["content"][0]["text"].get_ref<const std::string&>();
    if (!text.empty() && text[0] == '{') CHECK(Json::parse(text) == r["structuredContent"]);
    return r["structuredContent"];
  }
  ToolContext ctx;
  ToolRegistry registry;
  std::unique_ptr<Server> server;
  int id = 0;
  size_t last_bytes = 0;
};

// A fresh store and a server on it. TempStore comes first: it outlives the tools.
struct CompatHarness : TempStore, Tools {
  CompatHarness() : Tools(TempStore::store.get()), ts(*this) {}
  TempStore& ts;
};

Json Entities(std::initializer_list<Json> list) { return Json{{"entities", Json(list)}}; }

}  // namespace

TEST_CASE("compat entities and observations map onto documented nodes", "[mcp][compat]") {
  CompatHarness h;
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
  CompatHarness h;
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
  uint64_t rev = s.revision().value();
  Json bad = h.Call("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "uses"}},
                                                       {{"from", "A"}, {"to", "Z"}, {"relationType", "uses"}}}}});
  CHECK(bad["isError"] == true);
  CHECK_THAT(bad["content"][0]["text"].get<std::string>(), Catch::Contains("Entity with name Z not found"));
  CHECK(s.revision().value() == rev);
}

TEST_CASE("compat delete_entities removes observations and relations", "[mcp][compat]") {
  CompatHarness h;
  h.Ok("create_entities", Entities({{{"name", "A"}, {"entityType", "t"}, {"observations", {"o1", "o2"}}},
                                    {{"name", "B"}, {"entityType", "t"}, {"observations", Json::array()}}}));
  h.Ok("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"}, {"relationType", "x y"}},
                                           {{"from", "B"}, {"to", "A"}, {"relationType", "part_of"}},
                                           {{"from", "A"}, {"to", "A"}, {"relationType", "self"}}}}});
  uint64_t before = h.ts.store->revision().value();
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

// delete_memory deletes a memory's edges with it; keep_edges leaves them, as the
// CLI's del-node does (and del-node --with-edges does what delete_memory does).
TEST_CASE("delete_memory: with its edges, or keep_edges", "[mcp][compat]") {
  CompatHarness h;
  for (const char* key : {"fact:a", "fact:b", "fact:c"}) {
    h.Ok("put_memory", {{"key", key}, {"type", "fact"}});
  }
  h.Ok("link", {{"src", "fact:a"}, {"rel", "supports"}, {"dst", "fact:b"}});
  h.Ok("link", {{"src", "fact:b"}, {"rel", "supports"}, {"dst", "fact:a"}});
  h.Ok("link", {{"src", "fact:a"}, {"rel", "related_to"}, {"dst", "fact:a"}});
  h.Ok("link", {{"src", "fact:b"}, {"rel", "supports"}, {"dst", "fact:c"}});
  auto out_of = [&](const char* key) {
    auto r = h.ts.store->Out(key);
    REQUIRE(r.ok());
    return r->size();
  };
  auto in_of = [&](const char* key) {
    auto r = h.ts.store->In(key);
    REQUIRE(r.ok());
    return r->size();
  };
  auto dangling = [&] {
    auto r = h.ts.store->Stats();
    REQUIRE(r.ok());
    return r->dangling_edges;
  };
  Json kept = h.Ok("delete_memory", {{"node", "fact:c"}, {"keep_edges", true}});
  CHECK(kept["edges_deleted"] == 0);
  CHECK(out_of("fact:b") == 2);  // b -> a, and b -> c now dangling
  CHECK(dangling() == 1);
  Json gone = h.Ok("delete_memory", {{"node", "fact:a"}});
  CHECK(gone["edges_deleted"] == 3);  // a -> b, b -> a, a -> a (once)
  CHECK(in_of("fact:b") == 0);
  CHECK(out_of("fact:b") == 1);
  CHECK(dangling() == 1);
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
                          "{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\",\"relationType\":1}"}) {
    auto r = ParseMemoryJsonl("{\"type\":\"entity\",\"name\":\"ok\",\"entityType\":\"t\",\"observations\":[]}\n" + bad);
    INFO(bad);
    REQUIRE(!r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK_THAT(r.status().message(), Catch::StartsWith("line 2: "));
  }
  // Fields the official format does not have are ignored, as the official server does.
  auto extra = ParseMemoryJsonl(
      "{\"type\":\"entity\",\"name\":\"x\",\"entityType\":\"t\",\"observations\":[],\"extra\":1}\n"
      "{\"type\":\"relation\",\"from\":\"x\",\"to\":\"x\",\"relationType\":\"r\",\"weight\":2}");
  REQUIRE(extra.ok());
  CHECK(extra->entities.size() == 1);
  CHECK(extra->relations.size() == 1);
  // Names longer than a key allows are refused, and nothing is written.
  KnowledgeGraph big;
  big.entities.push_back({"fine", "t", {}});
  big.entities.push_back({std::string(1001, 'n'), "t", {}});
  uint64_t rev = ts.store->revision().value();
  CHECK(!ImportKnowledgeGraph(ts.store.get(), big).ok());
  CHECK(ts.store->revision().value() == rev);
}

// The fast path takes plain entity and relation lines and declines the rest,
// which the reference parser then decides: same graph, same errors.
TEST_CASE("memory.jsonl fast path reads what the reference reads", "[mcp][compat][import]") {
  FastMemoryLineParser fast;
  auto add = [&](const std::string& line, KnowledgeGraph* g) {
    std::string padded = line;
    padded.resize(line.size() + io::kLinePadding, 'x');  // not NULs: the padding is only read
    return fast.Add(padded.data(), line.size(), g);
  };
  const std::vector<std::string> lines = {
      R"({"type":"entity","name":"a\"b\u00e9\u0000z","entityType":"t","observations":["x","\u2603",""]})",
      R"({"observations":[],"name":"n","type":"entity","entityType":"t2"})",
      R"( {"type":"relation","from":"a","to":"n","relationType":"r\n"} )"};
  KnowledgeGraph g;
  for (const std::string& line : lines) REQUIRE(add(line, &g));
  REQUIRE(g.entities.size() == 2);
  CHECK(g.entities[0].name == std::string("a\"b\xc3\xa9\0z", 7));
  CHECK(g.entities[0].entity_type == "t");
  CHECK(g.entities[0].observations == std::vector<std::string>{"x", "\xe2\x98\x83", ""});
  CHECK(g.entities[1].name == "n");
  CHECK(g.entities[1].observations.empty());  // not the previous line's
  REQUIRE(g.relations.size() == 1);
  CHECK(g.relations[0] == Relation{"a", "n", "r\n"});
  // The same lines through ParseMemoryJsonl: the last has no padding after it.
  auto whole = ParseMemoryJsonl(lines[0] + "\n" + lines[1] + "\n" + lines[2]);
  REQUIRE(whole.ok());
  REQUIRE(whole->entities.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(whole->entities[i].name == g.entities[i].name);
    CHECK(whole->entities[i].entity_type == g.entities[i].entity_type);
    CHECK(whole->entities[i].observations == g.entities[i].observations);
  }
  CHECK(whole->relations == g.relations);

  struct Declined {
    std::string line;
    bool reference_accepts;
  };
  const std::vector<Declined> declined = {
      {R"({"type":"entity","name":"a","entityType":"t","observations":[],"extra":1})", true},
      {R"({"type":"entity","name":"a","name":"b","entityType":"t","observations":[]})", true},
      {R"({"type":"entity","name":"a","entityType":"t"})", false},
      {R"({"type":"entity","name":"a","entityType":"t","observations":[1]})", false},
      {R"({"type":"relation","from":"a","to":"b","relationType":"r","from2":"c"})", true},
      {R"({"type":"relation","from":"a","to":"b"})", false},
      {R"({"type":"thing","from":"a","to":"b","relationType":"r"})", false},
      {R"({"type":"relation","from":"a","to":"b","relationType":"r"} x)", false},
      {"{\"type\":\"relation\",\"from\":\"\xff\",\"to\":\"b\",\"relationType\":\"r\"}", false},
      {R"([{"type":"relation","from":"a","to":"b","relationType":"r"}])", false},
  };
  for (const Declined& d : declined) {
    INFO(d.line);
    KnowledgeGraph none;
    CHECK_FALSE(add(d.line, &none));
    CHECK(none.entities.empty());
    CHECK(none.relations.empty());
    auto r = ParseMemoryJsonl(d.line);
    CHECK(r.ok() == d.reference_accepts);
    if (!r.ok()) CHECK_THAT(r.status().message(), Catch::StartsWith("line 1: "));
  }
}

TEST_CASE("read_graph pages with a pinned cursor", "[mcp][compat]") {
  CompatHarness h;
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

TEST_CASE("compat tools accept and ignore unknown fields; amem tools refuse them",
          "[mcp][compat][schema]") {
  CompatHarness h;
  // An entity copied from memory.jsonl keeps its "type"; the official server's zod
  // schemas strip what they do not know, so these calls pass there and here.
  Json created = h.Ok("create_entities",
                      {{"entities", {{{"type", "entity"}, {"name", "A"}, {"entityType", "t"},
                                      {"observations", {"o"}}, {"extra", {{"x", 1}}}}}},
                       {"comment", "top-level extra"}});
  REQUIRE(created["entities"].size() == 1);
  CHECK(created["entities"][0] == Json({{"name", "A"}, {"entityType", "t"}, {"observations", {"o"}}}));
  h.Ok("create_relations", {{"relations", {{{"type", "relation"}, {"from", "A"}, {"to", "A"},
                                            {"relationType", "self"}, {"weight", 2}}}}});
  h.Ok("add_observations", {{"observations", {{{"entityName", "A"}, {"contents", {"p"}}, {"n", 1}}}},
                            {"x", true}});
  Json g = h.Ok("read_graph", {{"verbose", true}});
  REQUIRE(g["entities"].size() == 1);
  CHECK(g["entities"][0] == Json({{"name", "A"}, {"entityType", "t"}, {"observations", {"o", "p"}}}));
  CHECK(g["relations"] == Json::array({{{"from", "A"}, {"to", "A"}, {"relationType", "self"}}}));
  CHECK(Json::parse(h.ts.store->GetNode("entity:A")->meta) ==
        Json({{"entityType", "t"}, {"kind", "t"}}));  // nothing of the extras stored
  CHECK(h.Ok("search_nodes", {{"query", "a"}, {"x", 1}})["entities"].size() == 1);
  CHECK(h.Ok("open_nodes", {{"names", {"A"}}, {"x", 1}})["entities"].size() == 1);
  h.Ok("delete_observations",
       {{"deletions", {{{"entityName", "A"}, {"observations", {"p"}}, {"x", 1}}}}, {"y", 2}});
  h.Ok("delete_relations", {{"relations", {{{"from", "A"}, {"to", "A"}, {"relationType", "self"},
                                            {"type", "relation"}}}}});
  h.Ok("delete_entities", {{"entityNames", {"A"}}, {"x", 1}});
  CHECK(h.Ok("read_graph", Json::object())["entities"].empty());

  // Known fields are still checked, nested ones too.
  auto error = [&](const std::string& tool, const Json& args) {
    Json r = h.Call(tool, args);
    CHECK(r["isError"] == true);
    return r["content"][0]["text"].get<std::string>();
  };
  CHECK_THAT(error("create_entities", {{"entities", {{{"name", 1}, {"entityType", "t"},
                                                      {"observations", Json::array()}}}}}),
             Catch::Contains("entities[0].name: expected a string"));
  CHECK_THAT(error("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"}}}}}),
             Catch::Contains("missing required field \"relationType\""));
  CHECK_THAT(error("read_graph", {{"limit", 0}, {"extra", 1}}), Catch::Contains("limit"));
  // amem's own tools name an unknown field, so a typo never passes silently.
  CHECK_THAT(error("get_memory", {{"node", "x"}, {"nod", "x"}}), Catch::Contains("unknown field \"nod\""));
  CHECK_THAT(error("put_memory", {{"key", "fact:x"}, {"type", "fact"}, {"links", {{{"rel", "part_of"},
                                                                                   {"to", "a"}, {"tp", "b"}}}}}),
             Catch::Contains("links[0]: unknown field \"tp\""));
}

namespace {

// Text that needs escaping: quotes, backslashes, newlines, tabs, a control
// character and multi-byte characters, about `bytes` long.
std::string AwkwardText(size_t bytes, const std::string& seed = "") {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) {
    s += seed + "line " + std::to_string(i) + ": \"quoted\" back\\slash\ttab \x01 naïve café ☕\n";
  }
  s.resize(bytes);
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0x80)) s.pop_back();  // whole characters
  return s;
}

}  // namespace

TEST_CASE("every response stays within the budget: big nodes, entities and echoes",
          "[mcp][compat][budget]") {
  CompatHarness h;
  auto within = [&](const char* what) {
    INFO(what << ": " << h.last_bytes << " bytes");
    CHECK(h.last_bytes <= kMaxResponseBytes);
  };

  // ---- a 1 MB node: get_memory answers with a slice and reads on from an offset ----
  std::string big = AwkwardText(1000000);
  h.Ok("put_memory", {{"key", "file:big"}, {"type", "file"}, {"content", big}});
  h.Ok("link", {{"src", "file:big"}, {"rel", "defines"}, {"dst", "symbol:x"}});
  Json g = h.Ok("get_memory", {{"node", "file:big"}});
  within("get_memory of a 1 MB node");
  CHECK(g["node"]["truncated"] == true);
  CHECK(g["node"]["content_bytes"] == big.size());
  CHECK(g["node"]["content_offset"] == 0);
  CHECK(g["out"].size() == 1);  // the edges still come
  std::string all = g["node"]["content"];
  CHECK(all.size() <= 8192);
  int calls = 1;
  while (g["node"].contains("next_content_offset")) {
    REQUIRE(calls < 200);
    g = h.Ok("get_memory", {{"node", "file:big"}, {"max_content_bytes", 24576},
                            {"content_offset", g["node"]["next_content_offset"]},
                            {"max_bytes", kMaxAnswerBytes}});
    within("get_memory with content_offset");
    all += g["node"]["content"].get<std::string>();
    ++calls;
  }
  CHECK(all == big);
  CHECK(calls > 40);  // ~24 KiB a call, less where escaping costs more
  CHECK(h.Call("get_memory", {{"node", "file:big"}, {"content_offset", 2000000}})["isError"] == true);
  // A short node is whole, without the slice fields.
  h.Ok("put_memory", {{"key", "fact:small"}, {"type", "fact"}, {"content", "short"}});
  Json small = h.Ok("get_memory", {{"node", "fact:small"}});
  CHECK(small["node"]["content"] == "short");
  CHECK(!small["node"].contains("truncated"));
  CHECK(!small["node"].contains("content_bytes"));

  // ---- create_entities with 3,000 entities: the echo is summarized ----
  Json ents = Json::array();
  for (int i = 0; i < 3000; ++i) {
    ents.push_back({{"name", "node-" + std::to_string(10000 + i) + "-with-a-longer-name"},
                    {"entityType", "module"},
                    {"observations", {"observation " + std::to_string(i) + " of a long-ish text"}}});
  }
  ents.push_back({{"name", "hub"}, {"entityType", "service"}, {"observations", Json::array()}});
  Json c = h.Ok("create_entities", {{"entities", ents}});
  within("create_entities of 3,000 entities");
  CHECK(c["truncated"] == true);
  CHECK(c["total"] == 3001);
  CHECK(c["entities"].size() > 50);
  CHECK(c["entities"].size() < 3001);
  CHECK(c["entities"][0] == ents[0]);  // the first ones, in the official shape

  // ---- an entity with 3,000 relations and 3,000 observations ----
  Json rels = Json::array();
  for (int i = 0; i < 3000; ++i) {
    rels.push_back({{"from", "hub"}, {"to", ents[i]["name"]}, {"relationType", "depends on"}});
  }
  c = h.Ok("create_relations", {{"relations", rels}});
  within("create_relations of 3,000 relations");
  CHECK(c["truncated"] == true);
  CHECK(c["total"] == 3000);
  Json contents = Json::array();
  for (int i = 0; i < 3000; ++i) contents.push_back("hub fact " + std::to_string(i) + " " + std::string(40, 'x'));
  c = h.Ok("add_observations", {{"observations", {{{"entityName", "hub"}, {"contents", contents}}}}});
  within("add_observations of 3,000 observations");
  CHECK(c["truncated"] == true);
  CHECK(c["observationsAdded"] == 3000);

  // open_nodes pages the hub: its observations split across pages, then relations.
  std::vector<std::string> hub_obs;
  std::set<std::string> hub_rels;
  Json args{{"names", {"hub", "missing"}}};
  int pages = 0;
  for (;;) {
    REQUIRE(pages < 100);
    Json p = h.Ok("open_nodes", args);
    within("open_nodes page of a hub");
    ++pages;
    for (const auto& e : p["entities"]) {
      CHECK(e["name"] == "hub");
      if (e.contains("observationOffset")) {
        CHECK(e["truncated"] == true);
        CHECK(e["observationCount"] == 3000);
        CHECK(e["observationOffset"] == hub_obs.size());
      }
      for (const auto& o : e["observations"]) hub_obs.push_back(o);
    }
    for (const auto& r : p["relations"]) hub_rels.insert(r["to"].get<std::string>());
    if (!p.contains("nextCursor")) break;
    args["cursor"] = p["nextCursor"];
  }
  CHECK(pages > 3);
  REQUIRE(hub_obs.size() == 3000);
  for (int i = 0; i < 3000; ++i) CHECK(hub_obs[i] == contents[i]);
  CHECK(hub_rels.size() == 3000);

  // ---- read_graph with the default limit on the big graph, and every page after ----
  g = h.Ok("read_graph", Json::object());
  within("the default read_graph page");
  REQUIRE(g.contains("nextCursor"));
  std::set<std::string> names;
  size_t relations = 0;
  args = Json::object();
  for (pages = 0;; ++pages) {
    REQUIRE(pages < 200);
    Json p = h.Ok("read_graph", args);
    within("a read_graph page");
    for (const auto& e : p["entities"]) names.insert(e["name"].get<std::string>());
    relations += p["relations"].size();
    if (!p.contains("nextCursor")) break;
    args["cursor"] = p["nextCursor"];
  }
  CHECK(names.size() == 3001);  // the entities only (file:big is not one)
  CHECK(relations == 3000);

  // ---- a 1 MB observation: cut in the listing, named so get_memory reads it whole ----
  std::string huge = AwkwardText(1000000, "obs ");
  h.Ok("create_entities", {{"entities", {{{"name", "diary"}, {"entityType", "log"},
                                          {"observations", {"short one", huge, "after"}}}}}});
  within("create_entities echoing a 1 MB observation");
  std::vector<std::string> diary;
  std::string key;
  Json dargs{{"names", {"diary"}}};
  for (pages = 0;; ++pages) {
    REQUIRE(pages < 10);
    Json p = h.Ok("open_nodes", dargs);
    within("open_nodes page of the diary");
    for (const auto& e : p["entities"]) {
      if (e.contains("truncatedObservations")) {
        const Json& note = e["truncatedObservations"][0];
        CHECK(note["bytes"] == huge.size());
        key = note["key"];
      }
      for (const auto& o : e["observations"]) diary.push_back(o);
    }
    if (!p.contains("nextCursor")) break;
    dargs["cursor"] = p["nextCursor"];
  }
  REQUIRE(diary.size() == 3);
  CHECK(diary[0] == "short one");
  CHECK(diary[1].ends_with("…"));
  CHECK(huge.starts_with(diary[1].substr(0, diary[1].size() - std::string("…").size())));
  CHECK(diary[2] == "after");
  REQUIRE(!key.empty());
  Json obs = h.Ok("get_memory", {{"node", key}});
  CHECK(obs["node"]["content_bytes"] == huge.size());

  // ---- long name lists in messages are cut ----
  Json nobody = Json::array();
  for (int i = 0; i < 3000; ++i) nobody.push_back("nobody-" + std::to_string(i) + std::string(100, 'n'));
  Json m = h.Ok("delete_entities", {{"entityNames", nobody}});
  within("delete_entities naming 3,000 missing entities");
  CHECK_THAT(m["message"].get<std::string>(), Catch::Contains("and 2980 more"));
}

TEST_CASE("two servers racing on one entity and one pair lose nothing", "[mcp][compat][race]") {
  TempStore ts;
  auto second = Store::Open(ts.dir);  // another handle, as another process has
  auto third = Store::Open(ts.dir);
  REQUIRE(second.ok());
  REQUIRE(third.ok());
  Tools a(ts.store.get()), b(second->get()), c(third->get());
  Json setup = Json::array();
  for (const char* n : {"A", "B", "shared"}) {
    setup.push_back({{"name", n}, {"entityType", "t"}, {"observations", Json::array()}});
  }
  a.Ok("create_entities", {{"entities", setup}});

  constexpr int kRounds = 30;
  std::atomic<int> failures{0};
  std::atomic<int> created[kRounds] = {};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  auto run = [&](Tools* t, const std::string& tag) {
    // Catch's macros are for the main thread: failures are counted here.
    auto ok = [&](const std::string& tool, const Json& args) {
      std::string why;
      try {
        Json r = t->Call(tool, args);
        if (r["isError"] == false) return r["structuredContent"];
        why = r["content"][0]["text"];
      } catch (const std::exception& e) {
        why = e.what();
      }
      ++failures;
      std::lock_guard lock(errors_mu);
      errors.push_back(tool + ": " + why);
      return Json(Json::object());
    };
    for (int i = 0; i < kRounds; ++i) {
      std::string n = std::to_string(i);
      // Free-form types between one pair share one edge's relationTypes list.
      ok("create_relations", {{"relations", {{{"from", "A"}, {"to", "B"},
                                              {"relationType", tag + " knows " + n}}}}});
      // Observations of one entity are numbered (seq) from what is there.
      ok("add_observations", {{"observations", {{{"entityName", "shared"},
                                                 {"contents", {tag + " note " + n}}}}}});
      // Both create the same entity: exactly one of them does.
      Json c = ok("create_entities", {{"entities", {{{"name", "common-" + n}, {"entityType", "t"},
                                                     {"observations", {"by " + tag}}}}}});
      if (c.contains("entities") && c["entities"].size() == 1) ++created[i];
      // One deletes an entity while the other adds to it: no orphan observation.
      if (tag == "a") {
        ok("create_entities", {{"entities", {{{"name", "victim-" + n}, {"entityType", "t"},
                                              {"observations", {"first"}}}}}});
        ok("delete_entities", {{"entityNames", {"victim-" + n}}});
      } else {
        // Fails (not found) when the delete came first: that is fine.
        try {
          t->Call("add_observations", {{"observations", {{{"entityName", "victim-" + n},
                                                          {"contents", {"late " + n}}}}}});
        } catch (const std::exception&) {
          ++failures;
        }
      }
    }
  };
  // A third writer that does not read first (put_memory, at an agent's pace) moves
  // the store on under the other two: their writes then conflict
  // (expected_revision) and are staged again.
  std::atomic<bool> done{false};
  std::atomic<int> puts{0};
  std::thread tc([&] {
    while (!done) {
      try {
        Json r = c.Call("put_memory", {{"key", "fact:p" + std::to_string(puts.load())}, {"type", "fact"},
                                       {"links", {{{"rel", "part_of"}, {"to", "entity:shared"}}}}});
        if (r["isError"] == false) ++puts; else ++failures;
      } catch (const std::exception&) {
        ++failures;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::thread ta([&] { run(&a, "a"); }), tb([&] { run(&b, "b"); });
  ta.join();
  tb.join();
  done = true;
  tc.join();
  for (const auto& e : errors) UNSCOPED_INFO(e);
  CHECK(failures == 0);

  auto graph = ReadKnowledgeGraph(*ts.store, ReadView::Latest());
  REQUIRE(graph.ok());
  std::set<std::string> types;
  for (const auto& r : graph->relations) {
    if (r.from == "A" && r.to == "B") types.insert(r.relation_type);
  }
  CHECK(types.size() == 2 * kRounds);
  std::set<std::string> notes;
  for (const auto& e : graph->entities) {
    if (e.name == "shared") notes.insert(e.observations.begin(), e.observations.end());
    if (e.name.starts_with("common-")) CHECK(e.observations.size() == 1);
  }
  CHECK(notes.size() == 2 * kRounds);
  for (int i = 0; i < kRounds; ++i) {
    INFO("common-" << i);
    CHECK(created[i] == 1);
  }
  // Every observation number of `shared` is distinct, so the order is kept.
  auto in = ts.store->In("entity:shared", "part_of");
  REQUIRE(in.ok());
  std::set<std::string> seqs;
  for (const auto& e : *in) {
    if (!e.src_key.starts_with("obs:")) continue;  // the third writer's facts
    auto n = ts.store->GetNode(e.src_key);
    REQUIRE(n.ok());
    seqs.insert(Json::parse(n->meta)["seq"].get<std::string>());
  }
  CHECK(seqs.size() == 2 * kRounds);
  CHECK(ts.store->In("entity:shared", "part_of")->size() == 2 * kRounds + static_cast<size_t>(puts));
  // No observation outlives its entity, whichever of delete and add came first.
  auto state = ts.store->ReadState();
  REQUIRE(state.ok());
  for (const auto& n : state->nodes) {
    if (!n.key.starts_with("obs:victim-")) continue;
    std::string entity = n.key.substr(4, n.key.rfind('#') - 4);
    INFO(n.key);
    CHECK(ts.store->GetNode("entity:" + entity).ok());
  }
}

namespace {

// The names search_nodes answers `q` with, in order.
std::vector<std::string> SearchNames(CompatHarness* h, const std::string& q) {
  Json r = h->Ok("search_nodes", {{"query", q}});
  std::vector<std::string> out;
  for (const Json& e : r["entities"]) out.push_back(e["name"]);
  return out;
}

}  // namespace

TEST_CASE("search_nodes matches within one field, case-insensitively, and sees writes",
          "[mcp][compat]") {
  CompatHarness h;
  h.Ok("create_entities",
       {{"entities",
         {{{"name", "Alpha"}, {"entityType", "Service"}, {"observations", {"Retries THREE times"}}},
          {{"name", "beta"}, {"entityType", "library"}, {"observations", Json::array()}},
          {{"name", "Gamma"}, {"entityType", "tool"},
           {"observations", {"uses alpha", std::string("nul\0inside", 10)}}}}}});
  h.Ok("create_relations", {{"relations", {{{"from", "Gamma"}, {"to", "beta"},
                                            {"relationType", "uses"}}}}});
  auto names = [&](const std::string& q) { return SearchNames(&h, q); };
  using V = std::vector<std::string>;
  CHECK(names("ALPHA") == V{"Alpha", "Gamma"});  // a name, and an observation
  CHECK(names("three") == V{"Alpha"});
  CHECK(names("LIBRARY") == V{"beta"});          // a type
  CHECK(names("alphaservice").empty());          // never across two fields
  CHECK(names("aservice").empty());
  CHECK(names("toolnul").empty());
  CHECK(names(std::string("nul\0ins", 7)) == V{"Gamma"});  // a NUL in the query
  CHECK(names("").size() == 3);                  // everything, as the official server
  CHECK(names("zzz").empty());
  CHECK(names("retries times") == V{"Alpha"});   // every word, in any order
  CHECK(names("times retries three") == V{"Alpha"});
  CHECK(names("retries alpha").empty());         // words of two fields do not match
  CHECK(names("alpha service").empty());
  Json beta = h.Ok("search_nodes", {{"query", "bet"}});
  CHECK(beta["relations"].size() == 1);          // relations touching the hits
  // A write makes the next search read the new revision.
  h.Ok("add_observations", {{"observations", {{{"entityName", "beta"}, {"contents", {"three"}}}}}});
  CHECK(names("three") == V{"Alpha", "beta"});
}

namespace {

// What amem mcp's start-up and merge threads build for the live view's base
// (GraphViewCache::Prepare): its relations' order and its odd labels.
void PrepareBase(CompatHarness* h) {
  std::shared_ptr<const snapshot::Reader> base;
  uint64_t revision = 0;
  {
    std::lock_guard<std::mutex> lock(h->ctx.live->mu);
    base = h->ctx.live->base;
    revision = h->ctx.live->base_revision;
  }
  REQUIRE(base != nullptr);
  REQUIRE(h->ctx.graphs != nullptr);
  h->ctx.graphs->Prepare(base, revision, *h->ts.store);
}

// While it lives, every search reads the base's term index to rule substring
// candidates out, however few they are (a small store has few).
struct ScanTermsAlways {
  ScanTermsAlways() { SetTermScanCandidatesForTesting(0); }
  ~ScanTermsAlways() { SetTermScanCandidatesForTesting(10000); }
};

}  // namespace

TEST_CASE("search_nodes finds names and types whose words no text of the file holds",
          "[mcp][compat]") {
  // A query whose words no content holds together is a word of no observation, and
  // the word rule reads only the candidates' names and types. Once the odd labels
  // are known (all rounds with the base's block; rounds 1 and 2 without), a query whose words no content or meta holds
  // together, or a string no text can hold, is checked against the entities whose
  // name or type may hold what no text does (odd labels) alone: a plain node's
  // name (in its key alone: no content, no meta), a type its meta holds escaped.
  // Every other entity's name is its content and its type stands in its meta as
  // it is.
  // With the base's odd labels block, they are known from the start; without it
  // (a base amem wrote before the block), once the base is prepared (scanned).
  const bool labels_block = GENERATE(true, false);
  INFO("odd labels block " << labels_block);
  ScanTermsAlways scan;
  CompatHarness h;
  h.ctx.live_options.entity_labels = labels_block;
  h.Ok("create_entities",
       Entities({{{"name", "Alpha"}, {"entityType", "service"},
                  {"observations", {"writer batch notes", "write once", "fix the bug with care", "taxrate"}}},
                 {{"name", "Tabbed"}, {"entityType", "tab\there"}, {"observations", {"a photo"}}},
                 {{"name", "Pipe Fitter"}, {"entityType", "person"}, {"observations", Json::array()}}}));
  NodeInput n;
  n.key = "entity:Queue Drainer";
  n.type = NodeType::kEntity;
  REQUIRE(h.ts.store->PutNode(std::move(n)).ok());
  auto names = [&](const std::string& q) { return SearchNames(&h, q); };
  using V = std::vector<std::string>;
  CHECK(names("drainer") == V{"Queue Drainer"});  // the first search makes the base
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);  // round 2: an entity of the delta holds the same
    if (round == 1) PrepareBase(&h);
    const V drainers = round < 2 ? V{"Queue Drainer"} : V{"Later", "Queue Drainer"};
    CHECK(names("drainer QUEUE") == drainers);  // odd: its name is no text
    CHECK(names("ue drain") == drainers);       // a string no text can hold
    CHECK(names("here tab") == V{"Tabbed"});    // odd: its meta says `tab\\there`
    CHECK(names("b\there") == V{"Tabbed"});
    CHECK(names("fitter pipe") == V{"Pipe Fitter"});  // its content holds both
    CHECK(names("person fitter").empty());            // a meta's word and a name's
    CHECK(names("service writer").empty());
    CHECK(names("batch writer") == V{"Alpha"});
    CHECK(names("write batch").empty());   // two observations' words
    CHECK(names("batched writer").empty());  // `batched`: no text holds it
    CHECK(names("queue writer").empty());    // a name's word and a text's
    CHECK(names("er batch no") == V{"Alpha"});  // `batch` is a term; `notes` starts with `no`
    CHECK(names("er batch nox").empty());       // no term starts with `nox`
    CHECK(names("r batchy n").empty());         // `batchy` is no term
    CHECK(names("ix the bu") == V{"Alpha"});    // `the`: a stop word, in no index
    CHECK(names("bug wi") == V{"Alpha"});       // no term starts with `wi`; `with` does
    CHECK(names("riter batch") == V{"Alpha"});  // `writer` ends with `riter`
    CHECK(names("xriter batch").empty());       // no term ends with `xriter`, which
                                                // `taxrate` has a word byte before
    CHECK(names("xwriter batch").empty());      // no field has a word byte before `xw`
    CHECK(names("he bu") == V{"Alpha"});        // no term ends with `he`; `the` does
    if (round == 1) {
      h.Ok("create_entities",
           Entities({{{"name", "Later"}, {"entityType", "queue drainer"}, {"observations", {"x"}}}}));
    }
  }
}

TEST_CASE("search_nodes finds identifiers by their words", "[mcp][compat][tokenizer]") {
  CompatHarness h;
  h.Ok("create_entities",
       {{"entities",
         {{{"name", "WriteBatch"}, {"entityType", "class"}, {"observations", {"batches puts"}}},
          {{"name", "write_ahead_log"}, {"entityType", "module"}, {"observations", Json::array()}},
          {{"name", "Builder"}, {"entityType", "class"},
           {"observations", {"amem::HashIndexBuilder builds the index"}}}}}});
  auto names = [&](const std::string& q) { return SearchNames(&h, q); };
  using V = std::vector<std::string>;
  // On the base (the first search builds it), then on an overlay after a write.
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    CHECK(names("write batch") == V{"WriteBatch"});
    CHECK(names("Batch Write") == V{"WriteBatch"});
    CHECK(names("index builder") == V{"Builder"});  // `HashIndexBuilder` in an observation
    CHECK(names("hash index builder") == V{"Builder"});
    CHECK(names("ahead log") == V{"write_ahead_log"});
    CHECK(names("write") == V{"WriteBatch", "write_ahead_log"});  // a substring, as before
    CHECK(names("write log batch").empty());  // no field has all three
    CHECK(names("index hash class").empty());  // an observation and a type
    h.Ok("add_observations",
         {{"observations", {{{"entityName", "write_ahead_log"}, {"contents", {"FsyncPolicy"}}}}}});
  }
  CHECK(names("fsync policy") == V{"write_ahead_log"});
}

// ---- read_graph and search_nodes on the live view (tools/mcp/graph_view.h) ----

namespace {

// search_nodes' answer computed from the store's graph the plain way: every field
// lowered and searched, or tokenized and holding every word of the query; the
// relations touching a hit.
// search_nodes lists the relations touching a hit; read_graph (query null) all of
// them, those between names that are no entity included (an import keeps them).
Json ExpectedSearch(const KnowledgeGraph& g, const std::string* query) {
  auto lower = [](std::string s) {
    for (char& c : s) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return s;
  };
  const std::string q = lower(query ? *query : "");
  const std::vector<std::string> words = Tokenize(q);
  auto has = [&](const std::string& field) {
    if (lower(field).find(q) != std::string::npos) return true;
    const std::vector<std::string> field_words = Tokenize(field);
    return !words.empty() && std::all_of(words.begin(), words.end(), [&](const std::string& w) {
      return std::find(field_words.begin(), field_words.end(), w) != field_words.end();
    });
  };
  Json entities = Json::array(), relations = Json::array();
  std::set<std::string> names;
  for (const Entity& e : g.entities) {
    bool match = has(e.name) || has(e.entity_type);
    for (const auto& o : e.observations) match = match || has(o);
    if (!match) continue;
    names.insert(e.name);
    entities.push_back({{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}});
  }
  for (const Relation& r : g.relations) {
    if (!query || names.contains(r.from) || names.contains(r.to)) {
      relations.push_back({{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}});
    }
  }
  return Json{{"entities", entities}, {"relations", relations}};
}

Json ExpectedGraph(const Store& store, uint64_t revision) {
  auto g = ReadKnowledgeGraph(store, ReadView::AtRevision(revision));
  REQUIRE(g.ok());
  return ExpectedSearch(*g, nullptr);
}

// Every page of a listing, from `args` on, concatenated; the revision of the first.
Json AllPages(Tools* t, const std::string& tool, Json args, uint64_t* revision = nullptr,
              const std::function<void()>& between_pages = {}) {
  Json all{{"entities", Json::array()}, {"relations", Json::array()}};
  for (int page = 0;; ++page) {
    REQUIRE(page < 1000);
    Json r = t->Ok(tool, args);
    for (const char* f : {"entities", "relations"}) {
      for (auto& item : r[f]) all[f].push_back(std::move(item));
    }
    if (!r.contains("nextCursor")) break;
    std::string cursor = r["nextCursor"];
    if (page == 0 && revision) *revision = std::stoull(cursor.substr(1));
    args["cursor"] = cursor;
    if (between_pages) between_pages();
  }
  return all;
}

}  // namespace

TEST_CASE("read_graph, search_nodes and open_nodes on the live view equal the store's graph across writes",
          "[mcp][compat][live]") {
  // Mode 2: no merge, and a stack of views (snapshot/live.h) with tiny caps, so
  // that its levels fold often and each keeps an overlay of its own. Mode 3 is
  // mode 2 as amem mcp runs it: level 0 compiled again on a thread, whose overlay
  // is built there (prepare_level). Mode 1's bases have no entity search block
  // (as amem wrote before it): its searches read the text and grams the server
  // builds in memory, the others' the file's. Modes 2 and 3's bases have no odd
  // labels block (as amem wrote before it): mode 2 searches without the labels,
  // mode 3 with those its thread scans; mode 0 reads them from its bases.
  ScanTermsAlways scan;
  for (int mode = 0; mode < 4; ++mode) {
    const bool merge_often = mode == 0;
    CompatHarness h;
    INFO("mode " << mode);
    h.ctx.live_options.entity_search = mode != 1;
    h.ctx.live_options.entity_labels = mode == 0;
    if (!merge_often) {
      h.ctx.live_options.merge_fraction = 1e9;
      h.ctx.live_options.merge_bytes = uint64_t{1} << 40;
    }
    if (mode >= 2) {
      h.ctx.live_options.write_delta_file = false;  // as amem mcp: the views kept are a stack
      h.ctx.live_options.top_level_records = 3;
      h.ctx.live_options.mid_level_records = 8;
    }
    if (mode == 3) {
      h.ctx.live_options.background_fold = true;
      StartLiveBaseWork(&h.ctx);  // the hooks (no base yet: no thread)
    }
    std::mt19937 rng(mode == 0 ? 7 : mode == 1 ? 11 : mode == 2 ? 13 : 17);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const std::vector<std::string> words = {"Alpha", "beta", "GAMMA", "delta", "Retry", "cache",
                                            "policy", "x", "ab", "Zeta Zeta", "tool"};
    auto name = [&] { return "Ent" + std::to_string(pick(14)); };
    auto text = [&] {
      std::string s = words[pick(words.size())];
      for (size_t k = pick(3); k > 0; --k) s += " " + words[pick(words.size())];
      return s;
    };
    const std::vector<std::string> rel_types = {"calls", "depends_on", "Works With", "related_to"};
    // Under the sanitizers 16 rounds (each mode's merges and folds still happen
    // several times); the Release build runs all 40.
    const int rounds = amem::testing::kSanitizerBuild ? 16 : 40;
    int deepest = 0;  // levels of the views read
    for (int round = 0; round < rounds; ++round) {
      INFO("round " << round);
      for (int op = 0, n = 1 + static_cast<int>(pick(4)); op < n; ++op) {
        switch (pick(7)) {
          case 0:
          case 1: {
            Json obs = Json::array();
            for (size_t k = pick(3); k > 0; --k) obs.push_back(text());
            h.Call("create_entities",
                   Entities({{{"name", name()}, {"entityType", words[pick(words.size())]},
                              {"observations", obs}}}));
            break;
          }
          case 2:
            h.Call("add_observations",
                   {{"observations", {{{"entityName", name()}, {"contents", {text(), text()}}}}}});
            break;
          case 3: {
            auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
            REQUIRE(g.ok());
            if (g->entities.empty()) break;
            const Entity& e = g->entities[pick(g->entities.size())];
            if (e.observations.empty()) break;
            h.Ok("delete_observations",
                 {{"deletions", {{{"entityName", e.name},
                                  {"observations", {e.observations[pick(e.observations.size())]}}}}}});
            break;
          }
          case 4:
            if (pick(3) == 0) h.Ok("delete_entities", {{"entityNames", {name()}}});
            break;
          case 5: {
            Json r{{"from", name()}, {"to", name()}, {"relationType", rel_types[pick(rel_types.size())]}};
            h.Call(pick(3) == 0 ? "delete_relations" : "create_relations", {{"relations", {r}}});
            break;
          }
          case 6: {
            // Another writer (ImportKnowledgeGraph on the store, not through the
            // server): the next call must see it. Relations may name missing
            // entities, which leaves stub endpoints in the snapshot.
            KnowledgeGraph g;
            g.entities.push_back({name(), "imported", {text()}});
            g.relations.push_back({name(), "Missing" + std::to_string(pick(3)), "uses"});
            REQUIRE(ImportKnowledgeGraph(h.ts.store.get(), g).ok());
            break;
          }
        }
        // Now and then the fold's level 0 is ready for the next call.
        if (mode == 3 && pick(2) == 0) h.ctx.live->WaitForFold();
        if (mode >= 2) {  // a view after every write: the stack's top moves each time
          auto now = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
          REQUIRE(now.ok());
          const std::string q = "e";
          CHECK(AllPages(&h, "search_nodes", {{"query", q}, {"limit", 10000}}) ==
                ExpectedSearch(*now, &q));
        }
      }
      auto rev = h.ts.store->revision();
      REQUIRE(rev.ok());
      auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
      REQUIRE(g.ok());
      // Small pages first: the base's relations are read only as far as each needs.
      CHECK(AllPages(&h, "read_graph", {{"limit", 3}}) == ExpectedSearch(*g, nullptr));
      CHECK(AllPages(&h, "read_graph", {{"limit", 10000}}) == ExpectedSearch(*g, nullptr));
      // Modes 0 and 3 search their bases as amem mcp does once its start-up or
      // merge thread has prepared them: with the odd labels known (mode 0 knows
      // them before, from its bases' block).
      if (mode == 0 || mode == 3) PrepareBase(&h);
      std::vector<std::string> queries = {"", "a", "AB", "zeta z", "ent1", "ENT", "etry ca",
                                          "alphaimported", "1imp", "t0i", std::string("a\0b", 3), "imported",
                                          "zzzz", "Ent13", "uses",
                                          // Both words of one type, or of one name; and `etry`,
                                          // a term of no text, where the word rule reads names
                                          // and types only.
                                          "imported Imported", "Ent7 ent", "etry retry",
                                          // Words of no one text (a type's and a text's, a
                                          // name's and a text's), and strings no text can
                                          // hold (`zetax`: no term; none starts with `tox`).
                                          "imported alpha", "Ent3 alpha", "x ab", "a zeta ga",
                                          "ta zetax b", "cache tox"};
      for (int k = 0; k < 6; ++k) {
        std::string t = text();
        size_t from = pick(t.size()), len = 1 + pick(6);
        std::string q = t.substr(from, len);
        if (pick(2)) {
          for (char& c : q) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        queries.push_back(q);
      }
      for (const std::string& q : queries) {
        INFO("query '" << q << "'");
        const Json want = ExpectedSearch(*g, &q);
        CHECK(AllPages(&h, "search_nodes", {{"query", q}, {"limit", 10000}}) == want);
        // A page searches only as far as its last entity and one more: small pages
        // over the base's hits and the overlays' put together list the same.
        for (int limit : {1, 3}) {
          INFO("limit " << limit);
          CHECK(AllPages(&h, "search_nodes", {{"query", q}, {"limit", limit}}) == want);
        }
      }
      const std::string a = "a";
      CHECK(AllPages(&h, "search_nodes", {{"query", a}, {"limit", 2}}) == ExpectedSearch(*g, &a));
      // open_nodes on the view lists what the store path reads, in its order.
      std::vector<std::string> names = {"no-such-entity"};
      for (size_t k = 0; k < g->entities.size() && names.size() < 6; k += 1 + pick(3)) {
        names.push_back(g->entities[k].name);
      }
      names.push_back(names.back());  // asked twice, listed once
      Json want{{"entities", Json::array()}, {"relations", Json::array()}};
      std::set<std::string> seen;
      std::set<std::tuple<std::string, std::string, std::string>> seen_rel;
      for (const std::string& name : names) {
        if (!seen.insert(name).second) continue;
        std::vector<Relation> rels;
        auto e = ReadEntity(*h.ts.store, name, ReadView::Latest(), &rels);
        if (!e.ok()) continue;
        want["entities"].push_back({{"name", e->name}, {"entityType", e->entity_type},
                                    {"observations", e->observations}});
        for (const Relation& r : rels) {
          if (seen_rel.insert({r.from, r.to, r.relation_type}).second) {
            want["relations"].push_back({{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}});
          }
        }
      }
      CHECK(AllPages(&h, "open_nodes", {{"names", names}, {"limit", 10000}}) == want);
      if (!merge_often && round > 0) {  // the overlay path is the one checked here
        REQUIRE(h.ctx.live->view != nullptr);
        CHECK(h.ctx.live->view->layered());
        int depth = 0;
        for (auto v = h.ctx.live->view; v->layered(); v = v->layer_base()) ++depth;
        deepest = std::max(deepest, depth);
      }
      // The answers name the revision they were read at.
      Json first = h.Ok("read_graph", {{"limit", 1}});
      if (first.contains("nextCursor")) {
        CHECK(first["nextCursor"].get<std::string>().starts_with("r" + std::to_string(*rev) + "o"));
      }
    }
    // Modes 2 and 3 went through every level of the stack; mode 3 read the
    // overlays the fold's thread built.
    if (mode >= 2) CHECK(deepest == static_cast<int>(snapshot::kMaxLiveLevels));
    if (mode == 3) CHECK(h.ctx.graphs->levels_prepared() > 3);
  }
}

TEST_CASE("search_nodes pages over a base whose hits a delta changed list every hit once, in order",
          "[mcp][compat][live]") {
  const bool indexed = GENERATE(true, false);  // the base's entity search block, or none
  INFO("entity search block " << indexed);
  CompatHarness h;
  h.ctx.live_options.entity_search = indexed;
  h.ctx.live_options.merge_fraction = 1e9;  // no merge: the writes stay a delta
  h.ctx.live_options.merge_bytes = uint64_t{1} << 40;
  Json ents = Json::array();
  for (int i = 0; i < 60; ++i) {
    ents.push_back({{"name", "n" + std::to_string(100 + i)}, {"entityType", "t"},
                    {"observations", {i % 3 == 0 ? "retry policy" : "cache note"}}});
  }
  h.Ok("create_entities", {{"entities", ents}});
  const std::string query = "retry";
  REQUIRE(h.Ok("search_nodes", {{"query", query}})["entities"].size() == 20);  // the base
  // Base hits deleted, entities changed to match, and new ones between them.
  for (int i = 3; i < 60; i += 6) {
    h.Ok("delete_entities", {{"entityNames", {"n" + std::to_string(100 + i)}}});
  }
  for (int i = 41; i < 60; i += 5) {  // none among the first deletions
    if (i % 6 == 3) continue;  // deleted above
    h.Ok("add_observations", {{"observations", {{{"entityName", "n" + std::to_string(100 + i)},
                                                  {"contents", {"a retry later"}}}}}});
  }
  for (int i = 45; i < 60; i += 9) {
    h.Call("create_entities", Entities({{{"name", "n" + std::to_string(100 + i) + "b"},
                                         {"entityType", "retry"}, {"observations", Json::array()}}}));
  }
  auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
  REQUIRE(g.ok());
  const Json want = ExpectedSearch(*g, &query);
  REQUIRE(want["entities"].size() > 10);
  for (int limit : {1, 2, 3, 5, 8, 13, 1000}) {
    INFO("limit " << limit);
    CHECK(AllPages(&h, "search_nodes", {{"query", query}, {"limit", limit}}) == want);
  }
  REQUIRE(h.ctx.live->view != nullptr);
  CHECK(h.ctx.live->view->layered());  // the hits came from a base and its overlay
}

TEST_CASE("read_graph and search_nodes pages stay at their revision across writes",
          "[mcp][compat][live]") {
  for (bool merge_every_write : {false, true}) {
  CompatHarness h;
  INFO("merge_every_write " << merge_every_write);
  // 0: every write merges, so a later page reads a past revision's own file.
  if (merge_every_write) {
    h.ctx.live_options.merge_fraction = 0;
    h.ctx.live_options.merge_records = 0;
  }
  Json ents = Json::array();
  for (int i = 0; i < 30; ++i) {
    ents.push_back({{"name", "node" + std::to_string(100 + i)}, {"entityType", "t"},
                    {"observations", {"text " + std::to_string(i)}}});
  }
  h.Ok("create_entities", {{"entities", ents}});
  int writes = 0;
  auto write = [&] {
    ++writes;
    h.Ok("create_entities", Entities({{{"name", "node" + std::to_string(writes)},
                                       {"entityType", "t"}, {"observations", {"text new"}}}}));
    h.Ok("delete_entities", {{"entityNames", {"node" + std::to_string(100 + writes)}}});
  };
  for (const std::string tool : {"read_graph", "search_nodes"}) {
    Json args{{"limit", 4}};
    if (tool == "search_nodes") args["query"] = "TEXT";
    uint64_t rev = 0;
    Json pages = AllPages(&h, tool, args, &rev, write);
    REQUIRE(rev > 0);
    auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::AtRevision(rev));
    REQUIRE(g.ok());
    const std::string text = "TEXT";
    CHECK(pages == ExpectedSearch(*g, tool == "search_nodes" ? &text : nullptr));
    CHECK(pages != ExpectedGraph(*h.ts.store, *h.ts.store->revision()));
  }
  }
}

TEST_CASE("search_nodes sees another process's write", "[mcp][compat][live]") {
  CompatHarness h;
  h.Ok("create_entities", Entities({{{"name", "first"}, {"entityType", "t"}, {"observations", {"one"}}}}));
  CHECK(h.Ok("search_nodes", {{"query", "second"}})["entities"].empty());
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto other = Store::Open(h.ts.dir);
    if (!other.ok()) ::_exit(1);
    KnowledgeGraph g;
    g.entities.push_back({"second", "t", {"Written ELSEWHERE"}});
    ::_exit(ImportKnowledgeGraph(other->get(), g).ok() ? 0 : 2);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  Json r = h.Ok("search_nodes", {{"query", "elsewhere"}});
  REQUIRE(r["entities"].size() == 1);
  CHECK(r["entities"][0]["name"] == "second");
  CHECK(h.Ok("read_graph", {})["entities"].size() == 2);
}

TEST_CASE("search_nodes after a background merge finds the graph built on the merge's thread",
          "[mcp][compat][live]") {
  CompatHarness h;
  // amem mcp's options, merging past 10 records.
  h.ctx.live_options.write_delta_file = false;
  h.ctx.live_options.check_records = false;
  h.ctx.live_options.background_merge = true;
  h.ctx.live_options.merge_fraction = 0;
  h.ctx.live_options.merge_records = 10;
  for (int k = 0; k < 6; ++k) {
    h.Ok("create_entities",
         Entities({{{"name", "Ent" + std::to_string(k)}, {"entityType", "service"},
                    {"observations", {"retry policy " + std::to_string(k), "cache note"}}}}));
  }
  h.Ok("create_relations", {{"relations", {{{"from", "Ent0"}, {"to", "Ent1"}, {"relationType", "calls"}}}}});
  // amem mcp's start: the live base's graph built on a thread of its own. The
  // search below waits for it or builds it first; either way it is built once.
  StartLiveBaseWork(&h.ctx);
  REQUIRE(h.ctx.graphs != nullptr);
  const std::vector<std::string> queries = {"", "retry", "ENT", "cache note", "policy 7", "e"};
  auto same_as_store = [&] {
    auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
    REQUIRE(g.ok());
    for (const std::string& q : queries) {
      INFO("query '" << q << "'");
      CHECK(AllPages(&h, "search_nodes", {{"query", q}, {"limit", 10000}}) == ExpectedSearch(*g, &q));
    }
    CHECK(AllPages(&h, "read_graph", {{"limit", 10000}}) == ExpectedSearch(*g, nullptr));
  };
  same_as_store();
  CHECK(h.ctx.graphs->built_by_get() + h.ctx.graphs->built_by_prepare() == 1);
  const uint64_t by_get = h.ctx.graphs->built_by_get();
  const uint64_t by_prepare = h.ctx.graphs->built_by_prepare();
  const uint64_t first_base = h.ctx.live->base_revision;

  // Writes, one entity each (a few records), each followed by searches, until one
  // finds the delta past its bound and starts the merge on a thread (the searches
  // answer from the views meanwhile), or a search already reads its base.
  int k = 6;
  for (; k < 40 && h.ctx.live->merge == nullptr && h.ctx.live->base_revision == first_base; ++k) {
    h.Ok("create_entities",
         Entities({{{"name", "Ent" + std::to_string(k)}, {"entityType", "service"},
                    {"observations", {"retry policy " + std::to_string(k)}}}}));
    same_as_store();
  }
  h.ctx.live->WaitForMerge();
  // The searches on the new base found its graph built, never built it in the call.
  same_as_store();
  CHECK(h.ctx.live->base_revision > first_base);
  CHECK(h.ctx.graphs->built_by_prepare() == by_prepare + 1);
  CHECK(h.ctx.graphs->built_by_get() == by_get);
  // Writes after the merge: overlays over the prepared graph, the same answers.
  for (int more = 0; more < 3; ++more, ++k) {
    h.Ok("add_observations",
         {{"observations", {{{"entityName", "Ent2"}, {"contents", {"late cache note " + std::to_string(k)}}}}}});
    same_as_store();
  }
  CHECK(h.ctx.graphs->built_by_get() == by_get);
}

namespace {

// A store of 2,000 entities, searched once so that its base is written, with
// enough text that the base's entity search block spans many pages, most of
// which an open does not read.
struct BigBase {
  std::string path;      // the store's base, current.amem
  std::string bytes;     // its bytes
  uint64_t search = 0;   // where its entity search block's body starts in them
};
BigBase MakeBigBase(CompatHarness* h) {
  Json ents = Json::array();
  for (int i = 0; i < 2000; ++i) {
    ents.push_back({{"name", "n" + std::to_string(100 + i)}, {"entityType", "t"},
                    {"observations", {"note " + std::to_string(i * 7919 % 100003) + " on " +
                                      std::to_string(i * 104729 % 99991)}}});
  }
  h->Ok("create_entities", {{"entities", ents}});
  REQUIRE(h->Ok("search_nodes", {{"query", "note"}, {"limit", 1}})["entities"].size() == 1);
  BigBase b;
  b.path = h->ts.dir + "/current.amem";
  b.bytes = snapshot_test::ReadFileBytes(b.path);
  auto r = snapshot::Reader::OpenBuffer(b.bytes);
  REQUIRE(r.ok());
  REQUIRE((*r)->has_entity_search());
  for (const snapshot::BlockInfo& block : (*r)->blocks()) {
    if (block.tag == static_cast<uint32_t>(snapshot::BlockTag::kEntitySearch)) {
      b.search = block.offset + 8;
    }
  }
  REQUIRE(b.search > 0);
  return b;
}

// Puts `bytes` in place of the base file, as a disk might damage it.
void OverwriteBase(const BigBase& b, const std::string& bytes) {
  std::ofstream out(b.path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// After a server answered from the damaged base: it made the base again, whole.
void CheckBaseMadeAgain(const BigBase& b, const std::string& damaged) {
  CHECK(snapshot_test::ReadFileBytes(b.path) != damaged);
  auto rebuilt = snapshot::Reader::Open(b.path);
  REQUIRE(rebuilt.ok());
  CHECK((*rebuilt)->Verify().ok());
}

}  // namespace

TEST_CASE("search_nodes over a base whose entity search list is damaged discards it and answers right",
          "[mcp][compat][live]") {
  CompatHarness h;
  const BigBase base = MakeBigBase(&h);
  // Flip a byte of the list in the middle of the lists and search for that
  // list's gram.
  std::string bytes = base.bytes;
  const uint64_t body = base.search;
  const uint32_t entities = DecodeFixed32(bytes.data() + body);
  const uint32_t grams = DecodeFixed32(bytes.data() + body + 4);
  const uint64_t directory = body + 8 + 8 * uint64_t{entities};
  const uint64_t lists = directory + 16 * (uint64_t{grams} + 1);
  const uint64_t list_bytes = DecodeFixed64(bytes.data() + directory + 16 * uint64_t{grams} + 8);
  REQUIRE(list_bytes > 8 * 4096);
  uint32_t t = 0;
  while (DecodeFixed64(bytes.data() + directory + 16 * uint64_t{t} + 8) < list_bytes / 2) ++t;
  const uint32_t gram = DecodeFixed32(bytes.data() + directory + 16 * uint64_t{t});
  std::string query;
  for (int shift = 8 * (static_cast<int>(gram >> 24) - 1); shift >= 0; shift -= 8) {
    query.push_back(static_cast<char>(gram >> shift & 0xFF));
  }
  INFO("gram '" << query << "'");
  const uint64_t at = lists + DecodeFixed64(bytes.data() + directory + 16 * uint64_t{t} + 8);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
  OverwriteBase(base, bytes);
  // The damage is not seen at open, only where the list is read.
  auto damaged = snapshot::Reader::OpenBuffer(bytes);
  REQUIRE(damaged.ok());
  CHECK((*damaged)->search_postings((*damaged)->search_gram(gram)).empty());
  CHECK((*damaged)->ReadStatus().IsCorruption());
  // A server started on the damaged base: its search reads the list, finds the
  // page that does not match its checksum, discards the base and answers from a
  // new one, never from the damaged list.
  auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
  REQUIRE(g.ok());
  const Json want = ExpectedSearch(*g, &query);
  REQUIRE(!want["entities"].empty());
  Tools fresh(h.ts.store.get());
  CHECK(AllPages(&fresh, "search_nodes", {{"query", query}, {"limit", 1000}}) == want);
  CheckBaseMadeAgain(base, bytes);
}

TEST_CASE("read_graph over a base whose entity table is damaged discards it and answers right",
          "[mcp][compat][live]") {
  CompatHarness h;
  const BigBase base = MakeBigBase(&h);
  auto g = ReadKnowledgeGraph(*h.ts.store, ReadView::Latest());
  REQUIRE(g.ok());
  const Json want = ExpectedSearch(*g, nullptr);
  // read_graph lists the base's entities from the block's table, read a page at
  // a time: flip a byte of entity 1,000's node number, which an open does not read.
  std::string bytes = base.bytes;
  const uint64_t at = base.search + 8 + 8 * 1000;
  bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
  OverwriteBase(base, bytes);
  auto damaged = snapshot::Reader::OpenBuffer(bytes);
  REQUIRE(damaged.ok());
  CHECK(!(*damaged)->search_entity(1000).has_value());
  CHECK((*damaged)->ReadStatus().IsCorruption());
  // A server started on it lists the first pages from the damaged base; the
  // page that reads entity 1,000 finds the damage, discards the base and is
  // read from a new one, as every page after it.
  Tools fresh(h.ts.store.get());
  CHECK(AllPages(&fresh, "read_graph", {{"limit", 300}}) == want);
  CheckBaseMadeAgain(base, bytes);
}
