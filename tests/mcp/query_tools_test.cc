// The query tools of `amem mcp` (tools/mcp/query_tools.h) on a small hand-built store,
// through the protocol core: each of the 16 queries and export_snapshot answers with
// the expected memories, as_of reads the past, limits hold, answers stay within the
// result budget, bad arguments give isError with a message saying what to fix, the
// consolidate dry run writes nothing, and an exported file verifies; impact takes a
// diff instead of a node, and gaps lists orphaned memories.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "snapshot/info.h"
#include "tests/mcp/tool_harness.h"
#include "tests/store/store_test_util.h"  // TempDir
#include "store/store.h"
#include "tests/test_paths.h"
#include "tools/io/query_table.h"
#include "tools/mcp/query_tools.h"
#include "tools/mcp/server.h"
#include "tools/mcp/memory_tools.h"

using namespace amem;
using namespace amem::mcp;

namespace {

using amem::mcp::testing::Harness;

Json Node(const std::string& key, const std::string& type, const std::string& content,
          double confidence = 1) {
  return Json{{"op", "node"}, {"key", key}, {"type", type}, {"content", content},
              {"confidence", confidence}};
}

Json Edge(const std::string& src, const std::string& rel, const std::string& dst) {
  return Json{{"op", "edge"}, {"src", src}, {"rel", rel}, {"dst", dst}};
}

// The store of tests/mcp/query_fixture.json (two write_batch calls; what is in it is
// described there). Returns the two revisions.
std::pair<uint64_t, uint64_t> PopulateQueryGraph(Harness& h) {
  std::ifstream in(std::string(AMEM_SOURCE_DIR) + "/tests/mcp/query_fixture.json");
  REQUIRE(in);
  Json fixture = Json::parse(in);
  std::vector<uint64_t> revs;
  for (const Json& batch : fixture["batches"]) {
    revs.push_back(h.Ok("write_batch", batch)["revision"].get<uint64_t>());
  }
  REQUIRE(revs.size() == 2);
  return {revs[0], revs[1]};
}

std::vector<std::string> Keys(const Json& rows, const char* field = nullptr) {
  std::vector<std::string> keys;
  for (const auto& row : rows) {
    keys.push_back((field ? row[field] : row)["key"].get<std::string>());
  }
  return keys;
}

bool Has(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

const std::vector<std::string> kQueryTools = {
    "context", "text_search", "hybrid_search", "similar", "centrality", "traverse",
    "find_memories", "temporal", "impact", "resolve", "path", "revise", "gaps", "analogy",
    "drift", "consolidate"};

// impact with diff: the code-graph form of the impact tool (docs/CODE.md §5).
Json Symbol(const std::string& file, const std::string& name, const std::string& lines) {
  return Json{{"op", "node"},
              {"key", "symbol:" + file + "#" + name},
              {"type", "symbol"},
              {"content", "function " + name},
              {"meta", {{"file", file}, {"lines", lines}, {"indexer", "ctags"}}}};
}

const char* kPatch =
    "diff --git a/src/parse.cc b/src/parse.cc\n"
    "--- a/src/parse.cc\n"
    "+++ b/src/parse.cc\n"
    "@@ -12 +12 @@\n"
    "-  int b = new int;\n"
    "+  int b = 0;\n";

TEST_CASE("mcp impact: diff instead of node", "[mcp][query-tools][code-impact]") {
  Harness h;
  const Json ops = Json::array(
      {Json{{"op", "node"}, {"key", "file:src/parse.cc"}, {"type", "file"}, {"content", "x"}},
       Symbol("src/parse.cc", "Parse", "10-20"),
       Edge("file:src/parse.cc", "defines", "symbol:src/parse.cc#Parse"),
       Symbol("src/main.cc", "main", "1-5"),
       Edge("symbol:src/main.cc#main", "calls", "symbol:src/parse.cc#Parse"),
       Json{{"op", "node"}, {"key", "constraint:no-alloc"}, {"type", "constraint"},
            {"content", "Parse must not allocate"}},
       Edge("constraint:no-alloc", "constrains", "symbol:src/parse.cc#Parse")});
  const uint64_t rev1 = h.Ok("write_batch", {{"operations", ops}})["revision"].get<uint64_t>();
  h.Ok("write_batch",
       {{"operations", Json::array({Symbol("src/cli.cc", "Main", "1-3"),
                                    Edge("symbol:src/cli.cc#Main", "calls",
                                         "symbol:src/parse.cc#Parse")})}});

  Json a = h.Ok("impact", {{"diff", kPatch}});
  CHECK(a["mode"] == "diff");
  CHECK(Keys(a["changed"]) == std::vector<std::string>{"symbol:src/parse.cc#Parse"});
  CHECK(Keys(a["affected"]) ==
        std::vector<std::string>{"symbol:src/cli.cc#Main", "symbol:src/main.cc#main"});
  CHECK(a["tests"].empty());
  CHECK(Keys(a["memories"]) == std::vector<std::string>{"constraint:no-alloc"});
  CHECK(a["memories"][0]["direction"] == "out");
  a = h.Ok("impact", {{"diff", kPatch}, {"as_of", rev1}});
  CHECK(Keys(a["affected"]) == std::vector<std::string>{"symbol:src/main.cc#main"});
  a = h.Ok("impact", {{"diff", kPatch}, {"limit", 1}});
  CHECK(a["affected"].size() == 1);
  CHECK(a["truncated"] == true);
  CHECK(h.Ok("impact", {{"diff", ""}})["changed"].empty());
  // The node form is unchanged.
  CHECK(h.Ok("impact", {{"node", "constraint:no-alloc"}})["query"] == "impact");

  CHECK_THAT(h.Error("impact", {{"node", "constraint:no-alloc"}, {"diff", kPatch}}),
             Catch::Contains("give either \"node\" or \"diff\" (exactly one)"));
  CHECK_THAT(h.Error("impact", Json::object()),
             Catch::Contains("give either \"node\" or \"diff\" (exactly one)"));
  CHECK_THAT(h.Error("impact", {{"diff", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n"}}),
             Catch::Contains("\"diff\": line 6: more lines than the hunk at line 3"));
  CHECK_THAT(h.Error("impact", {{"diff", kPatch}, {"budget_tokens", 3}}),
             Catch::Contains("a budget of 3 tokens"));

  // The schema offers both, neither required.
  const Tool* tool = h.registry.Find("impact");
  REQUIRE(tool != nullptr);
  CHECK(tool->input_schema["properties"]["diff"]["type"] == "string");
  CHECK(tool->input_schema["properties"].contains("budget_tokens"));
  CHECK_FALSE(tool->input_schema.contains("required"));

  // A deleted symbol leaves the constraint orphaned.
  h.Ok("write_batch", {{"operations", Json::array({Json{
                                          {"op", "del_node"},
                                          {"key", "symbol:src/parse.cc#Parse"}}})}});
  Json g = h.Ok("gaps", {{"categories", {"orphaned"}}});
  CHECK(Keys(g["gaps"]) == std::vector<std::string>{"constraint:no-alloc"});
}

}  // namespace

TEST_CASE("query tools are listed with schemas, limits, as_of and hints", "[mcp][query-tools]") {
  Harness h;
  std::vector<std::string> all = kQueryTools;
  all.push_back("export_snapshot");
  for (const std::string& name : all) {
    INFO(name);
    const Tool* t = h.registry.Find(name);
    REQUIRE(t != nullptr);
    // One or two sentences (docs/MCP.md "Profiles"): tools/list is sent every turn.
    CHECK(t->description.size() > 40);
    CHECK(t->description.size() <= 200);
    CHECK(t->input_schema["type"] == "object");
    CHECK(t->input_schema["additionalProperties"] == false);
    CHECK(t->input_schema["properties"].contains("as_of"));
    CHECK(t->input_schema["properties"].contains("at"));
    CHECK(t->destructive == (name == "export_snapshot"));  // it may replace a file
    if (name != "export_snapshot") {
      CHECK(t->input_schema["properties"].contains("limit"));
      CHECK(t->input_schema["properties"]["limit"]["description"].get<std::string>().find(
                "default") != std::string::npos);
    }
    CHECK(t->read_only == (name != "consolidate" && name != "export_snapshot"));
  }
  CHECK(h.registry.Find("consolidate")->input_schema["properties"].contains("execute"));
}

TEST_CASE("each tool's schema is its query's table entry", "[mcp][query-tools]") {
  // tools/io/query_table.h: the CLI flags and these schemas come from one table.
  Harness h;
  REQUIRE(io::Queries().size() == kQueryTools.size());
  for (const io::QueryDef& def : io::Queries()) {
    INFO(def.tool);
    const Tool* t = h.registry.Find(def.tool);
    REQUIRE(t != nullptr);
    // The list carries the brief; the CLI's --help carries the full description.
    CHECK(t->description == def.brief);
    CHECK(def.description.size() > def.brief.size());
    const Json& props = t->input_schema["properties"];
    std::vector<std::string> required;
    for (const io::Param& p : def.params) {
      INFO(p.name);
      if (p.scope == io::ParamScope::kCliOnly) {
        CHECK_FALSE(props.contains(p.name));
        continue;
      }
      REQUIRE(props.contains(p.name));
      const Json& prop = props[p.name];
      const std::string text = prop["description"].get<std::string>();
      CHECK(text == io::ParamHelp(p, io::FrontEnd::kMcp));
      if (!p.default_text.empty() && p.default_text != "all") {
        CHECK(text.find("(default " + p.default_text + ")") != std::string::npos);
      }
      if (auto min = p.mcp_min ? p.mcp_min : p.min) CHECK(prop["minimum"].get<double>() == *min);
      if (auto max = p.mcp_max ? p.mcp_max : p.max) CHECK(prop["maximum"].get<double>() == *max);
      if (!p.choices.empty()) CHECK(prop["enum"] == Json(p.choices));
      if (p.required) required.push_back(p.name);
    }
    CHECK(t->input_schema.value("required", Json::array()) == Json(required));
    // The one-of rules name the entry's own parameters, which MCP sends.
    for (const auto* rule : {&def.exactly_one, &def.at_least_one}) {
      CHECK(rule->size() != 1);
      for (const std::string& name : *rule) {
        INFO(name);
        CHECK(props.contains(name));
      }
    }
  }
  // The defaults shown are the query's Options (query/traverse.h: depth 5, limit 50).
  const Json& traverse = h.registry.Find("traverse")->input_schema["properties"];
  CHECK(traverse["depth"]["description"].get<std::string>().find("(default 5)") !=
        std::string::npos);
  CHECK(traverse["limit"]["description"].get<std::string>().find("(default 50)") !=
        std::string::npos);
}

TEST_CASE("navigation tools: traverse, find_memories, temporal, impact, resolve, path",
          "[mcp][query-tools]") {
  Harness h;
  auto [rev1, rev2] = PopulateQueryGraph(h);

  Json t = h.Ok("traverse", {{"node", "file:src/store.cc"}, {"depth", 1}});
  CHECK(t["query"] == "traverse");
  CHECK(t["revision"] == rev2);
  auto keys = Keys(t["nodes"]);
  CHECK(keys.front() == "file:src/store.cc");
  CHECK(Has(keys, "symbol:Store::Open"));
  CHECK(Has(keys, "module:store"));
  CHECK_FALSE(Has(keys, "decision:use-lmdb"));  // two hops away
  t = h.Ok("traverse", {{"node", "file:src/store.cc"}, {"relations", {"defines"}}});
  CHECK(Keys(t["nodes"]) == std::vector<std::string>{"file:src/store.cc", "symbol:Store::Open"});
  t = h.Ok("traverse", {{"node", "module:store"}, {"direction", "in"}, {"limit", 2}});
  CHECK(t["nodes"].size() == 2);
  CHECK(t["truncated"] == true);
  // A dense index (#N) and a 16-hex id name nodes too.
  int64_t index = t["nodes"][1]["index"];
  std::string id = t["nodes"][1]["id"];
  CHECK(h.Ok("traverse", {{"node", "#" + std::to_string(index)}, {"depth", 0}})["nodes"][0]["key"] ==
        t["nodes"][1]["key"]);
  CHECK(h.Ok("traverse", {{"node", id}, {"depth", 0}})["nodes"][0]["key"] == t["nodes"][1]["key"]);

  Json f = h.Ok("find_memories", {{"types", {"decision"}}});
  keys = Keys(f["nodes"]);
  CHECK(keys.front() == "decision:use-lmdb-v2");  // newest first
  CHECK(Has(keys, "decision:use-lmdb"));
  CHECK(Has(keys, "decision:tabs"));
  CHECK(keys.size() == 3);
  f = h.Ok("find_memories", {{"types", {"decision"}}, {"as_of", rev1}});
  CHECK(f["revision"] == rev1);
  CHECK_FALSE(Has(Keys(f["nodes"]), "decision:use-lmdb-v2"));
  CHECK(Keys(h.Ok("find_memories", {{"runs", {"r2"}}, {"types", {"fact"}}})["nodes"]) ==
        std::vector<std::string>{"fact:cache-off"});
  CHECK(h.Ok("find_memories", {{"limit", 2}})["nodes"].size() == 2);
  CHECK(h.Ok("find_memories", {{"sort", "confidence"}, {"max_confidence", 0.65}})["nodes"][0]["key"] ==
        "decision:tabs");

  Json tm = h.Ok("temporal", {{"earlier", "run:r1"}, {"later", "run:r2"}});
  CHECK(Has(Keys(tm["added"]), "decision:use-lmdb-v2"));
  CHECK(Has(Keys(tm["added"]), "fact:cache-off"));
  REQUIRE(tm["corrected"].size() == 1);
  CHECK(tm["corrected"][0]["newer"]["key"] == "decision:use-lmdb-v2");
  CHECK(tm["corrected"][0]["older"]["key"] == "decision:use-lmdb");
  tm = h.Ok("temporal", {{"earlier", "..2000"}, {"later", "2000.."}, {"limit", 1}});
  CHECK(tm["added"].size() == 1);
  CHECK(tm["counts"]["added"] == 2);

  Json im = h.Ok("impact", {{"node", "fact:lmdb-fast"}});
  keys = Keys(im["dependents"]);
  CHECK(Has(keys, "decision:use-lmdb"));
  CHECK(Has(keys, "inference:reads-cheap"));
  CHECK(im["affected_decisions"] == 1);
  CHECK(im["affected_inferences"] == 1);

  Json rs = h.Ok("resolve", {{"node", "decision:use-lmdb"}});
  CHECK(rs["current"]["key"] == "decision:use-lmdb-v2");
  CHECK(rs["is_current"] == false);
  rs = h.Ok("resolve", {{"node", "decision:use-lmdb"}, {"as_of", rev1}});
  CHECK(rs["current"]["key"] == "decision:use-lmdb");  // the correction came later
  CHECK(rs["is_current"] == true);

  Json p = h.Ok("path", {{"from", "fact:lmdb-safe"}, {"to", "symbol:Store::Open"}});
  CHECK(p["found"] == true);
  CHECK(Keys(p["nodes"]) == std::vector<std::string>{"fact:lmdb-safe", "decision:use-lmdb",
                                                     "module:store", "file:src/store.cc",
                                                     "symbol:Store::Open"});
  CHECK(p["edges"].size() == 4);
  p = h.Ok("path", {{"from", "fact:lmdb-safe"}, {"to", "symbol:Store::Open"}, {"limit", 2}});
  CHECK(p["nodes"].size() == 2);
  CHECK(p["edges"].size() == 1);
  CHECK(p["truncated"] == true);
  p = h.Ok("path", {{"from", "fact:lmdb-safe"}, {"to", "symbol:Store::Open"}, {"direction", "out"}});
  CHECK(p["found"] == false);
  CHECK(h.Ok("path", {{"from", "fact:lmdb-safe"}, {"to", "module:store"}, {"cost", "neglog"}})["weighted"] ==
        true);
}

TEST_CASE("recall tools: context, text_search, hybrid_search, similar, centrality",
          "[mcp][query-tools]") {
  Harness h;
  auto [rev1, rev2] = PopulateQueryGraph(h);

  Json r = h.Call("context", {{"seeds", {"file:src/store.cc"}}, {"depth", 1}});
  REQUIRE(r["isError"] == false);
  std::string text = r["content"][0]["text"];
  CHECK(text.starts_with("# amem context"));
  CHECK(text.find("symbol:Store::Open (symbol") != std::string::npos);
  CHECK(text.find("file:src/store.cc --defines--> symbol:Store::Open") != std::string::npos);
  CHECK(r["structuredContent"]["query"] == "context");
  CHECK(Has(Keys(r["structuredContent"]["nodes"]), "module:store"));

  // A question: its best keyword matches are the seeds.
  r = h.Call("context", {{"question", "which storage engine do we use"}, {"question_seeds", 1}});
  REQUIRE(r["isError"] == false);
  Json c = r["structuredContent"];
  REQUIRE(c["seeds"].size() == 1);
  CHECK(c["seeds"][0].get<std::string>().starts_with("decision:use-lmdb"));
  CHECK(c["question"] == "which storage engine do we use");
  // A question nothing matches: an empty answer, not an error.
  r = h.Call("context", {{"question", "quantum chromodynamics"}});
  REQUIRE(r["isError"] == false);
  CHECK(r["content"][0]["text"].get<std::string>().find("no memory contains") != std::string::npos);
  CHECK(r["structuredContent"]["nodes"].empty());
  // The budget bounds the text.
  r = h.Call("context", {{"seeds", {"decision:use-lmdb"}}, {"budget_tokens", 100}});
  REQUIRE(r["isError"] == false);
  CHECK(r["content"][0]["text"].get<std::string>().size() <= 100 * 4);
  CHECK(r["structuredContent"]["truncated"] == true);
  // as_of: the later version is not there yet.
  r = h.Call("context", {{"seeds", {"decision:use-lmdb"}}, {"as_of", rev1}});
  CHECK(r["content"][0]["text"].get<std::string>().find("use-lmdb-v2") == std::string::npos);
  r = h.Call("context", {{"seeds", {"decision:use-lmdb"}}});
  CHECK(r["content"][0]["text"].get<std::string>().find("use-lmdb-v2") != std::string::npos);

  Json ts = h.Ok("text_search", {{"query", "LMDB"}});
  auto keys = Keys(ts["results"]);
  CHECK(keys.size() == 6);
  CHECK(Has(keys, "fact:lmdb-safe"));
  CHECK(ts["results"][0]["score"].get<double>() > 0);
  CHECK(h.Ok("text_search", {{"query", "LMDB"}, {"limit", 2}})["results"].size() == 2);
  CHECK(Keys(h.Ok("text_search", {{"query", "LMDB"}, {"types", {"decision"}}, {"as_of", rev1}})["results"]) ==
        std::vector<std::string>{"decision:use-lmdb"});
  CHECK(Keys(h.Ok("text_search", {{"query", "LMDB crashes"}, {"match_all", true}})["results"]) ==
        std::vector<std::string>{"fact:lmdb-safe"});

  Json hy = h.Ok("hybrid_search", {{"query", "snapshot cache enabled"}, {"limit", 3}});
  CHECK(hy["results"].size() == 3);
  CHECK(hy["results"][0]["key"].get<std::string>().starts_with("fact:cache-"));

  Json si = h.Ok("similar", {{"node", "fact:cache-on"}, {"limit", 1}});
  REQUIRE(si["results"].size() == 1);
  CHECK(si["results"][0]["key"] == "fact:cache-on-copy");  // identical words
  si = h.Ok("similar", {{"text", "zebra stripes"}, {"limit", 1}});
  CHECK(si["results"][0]["key"] == "fact:zebra");

  Json ce = h.Ok("centrality", {{"metric", "degree"}, {"limit", 1}});
  REQUIRE(ce["results"].size() == 1);
  CHECK(ce["results"][0]["key"] == "decision:use-lmdb");  // 4 edges
  ce = h.Ok("centrality", {{"types", {"module"}}});
  CHECK(Keys(ce["results"]) == std::vector<std::string>{"module:store"});
}

TEST_CASE("reasoning tools: revise, gaps, analogy, drift", "[mcp][query-tools]") {
  Harness h;
  auto [rev1, rev2] = PopulateQueryGraph(h);

  Json rv = h.Ok("revise", {{"node", "fact:lmdb-fast"}});
  CHECK(Keys(rv["retracted"]) == std::vector<std::string>{"fact:lmdb-fast"});
  CHECK(Keys(rv["unsupported_inferences"]) == std::vector<std::string>{"inference:reads-cheap"});
  CHECK(rv["unsupported_decisions"].empty());  // lmdb-safe still supports it
  rv = h.Ok("revise", {{"hypothesis", "LMDB transactions never survive crashes"}});
  CHECK(Keys(rv["retracted"]) == std::vector<std::string>{"fact:lmdb-safe"});
  CHECK(rv["hypothesis"] == "LMDB transactions never survive crashes");

  Json g = h.Ok("gaps", Json::object());
  bool tabs = false;
  for (const auto& row : g["gaps"]) {
    if (row["key"] == "decision:tabs") tabs = row["kind"] == "unjustified_decision";
  }
  CHECK(tabs);
  CHECK(g["counts"]["single_source_inference"] == 1);
  CHECK(h.Ok("gaps", {{"limit", 1}})["gaps"].size() == 1);

  Json an = h.Ok("analogy", {{"node", "fact:lmdb-safe"}, {"limit", 3}});
  CHECK(an["anchor"]["key"] == "fact:lmdb-safe");
  CHECK(an["analogies"].size() <= 3);
  CHECK_FALSE(Has(Keys(an["analogies"]), "decision:use-lmdb"));  // a neighbour
  an = h.Ok("analogy", {{"text", "zebra crossings"}});
  CHECK(an["anchor"]["key"] == "fact:zebra");

  Json d = h.Ok("drift", Json::object());
  CHECK(d["clustering"] == "run");
  std::vector<std::string> labels;
  for (const auto& cl : d["clusters"]) labels.push_back(cl["label"]);
  CHECK(Has(labels, "r1"));
  d = h.Ok("drift", {{"topic", "storage engine"}});
  CHECK(d["clustering"] == "topic");
  REQUIRE(!d["clusters"].empty());
  CHECK(d["clusters"][0]["head"]["key"] == "decision:use-lmdb-v2");
  CHECK(d["clusters"][0]["events"] == 1);
  d = h.Ok("drift", {{"topic", "storage engine"}, {"as_of", rev1}});
  CHECK(d["clusters"][0]["events"] == 0);
}

TEST_CASE("consolidate: a dry run writes nothing; execute writes once", "[mcp][query-tools]") {
  Harness h;
  auto [rev1, rev2] = PopulateQueryGraph(h);

  Json dry = h.Ok("consolidate", Json::object());
  CHECK(dry["dry_run"] == true);
  CHECK(dry["applied"].is_null());
  CHECK(dry["duplicate_count"] == 1);
  CHECK(dry["duplicates"][0]["keep"]["key"] == "fact:cache-on");
  CHECK(dry["duplicates"][0]["drop"]["key"] == "fact:cache-on-copy");
  CHECK(dry["contradiction_count"] == 2);
  CHECK(Has(Keys(dry["orphans"]), "fact:zebra"));
  CHECK(h.store->revision().value() == rev2);  // nothing written
  // As of revision 1 the contradicting fact did not exist yet.
  CHECK(h.Ok("consolidate", {{"as_of", rev1}})["contradiction_count"] == 0);
  CHECK(h.Ok("consolidate", {{"limit", 1}})["contradictions"].size() == 1);

  std::string err = h.Error("consolidate", {{"execute", true}, {"as_of", rev1}});
  CHECK(err.find("leave out as_of/at") != std::string::npos);
  CHECK(h.store->revision().value() == rev2);

  Json done = h.Ok("consolidate", {{"execute", true}, {"run", "cleanup"}});
  CHECK(done["dry_run"] == false);
  CHECK(done["applied"]["supersedes_written"] == 1);
  CHECK(done["applied"]["contradicts_written"] == 2);
  CHECK(done["applied"]["revision"].get<uint64_t>() > rev2);
  CHECK(h.store->revision().value() > rev2);
  CHECK(h.store->GetEdge("fact:cache-on", "supersedes", "fact:cache-on-copy").ok());
  Json again = h.Ok("consolidate", Json::object());
  CHECK(again["duplicate_count"] == 0);
  CHECK(again["contradiction_count"] == 0);
}

TEST_CASE("export_snapshot writes a file that verifies", "[mcp][query-tools]") {
  Harness h;
  auto [rev1, rev2] = PopulateQueryGraph(h);
  const std::string root = h.ctx.export_dir;
  const std::string out = root + "/out/now.amem";
  std::string err = h.Error("export_snapshot", {{"path", "out/now.amem"}});
  CHECK(err.find("does not exist") != std::string::npos);
  std::filesystem::create_directories(h.dir / "out");

  Json e = h.Ok("export_snapshot", {{"path", "out/now.amem"}});
  CHECK(e["path"] == out);
  CHECK(e["revision"] == rev2);
  CHECK(e["nodes"] == 13);
  CHECK(e["bytes"] == std::filesystem::file_size(out));
  CHECK(snapshot::VerifySnapshotFile(out).outcome == snapshot::VerifyReport::Outcome::kOk);
  CHECK(h.store->revision().value() == rev2);  // the store is not written

  err = h.Error("export_snapshot", {{"path", "out/now.amem"}});
  CHECK(err.find("overwrite: true") != std::string::npos);
  Json old = h.Ok("export_snapshot", {{"path", "out/./now.amem"}, {"overwrite", true},
                                      {"as_of", rev1}});
  CHECK(old["revision"] == rev1);
  CHECK(old["nodes"] == 11);
  CHECK(snapshot::VerifySnapshotFile(out).outcome == snapshot::VerifyReport::Outcome::kOk);

  err = h.Error("export_snapshot", {{"path", "store/x.amem"}, {"overwrite", true}});
  CHECK(err.find("inside the store directory") != std::string::npos);
  err = h.Error("export_snapshot", {{"path", "out"}});
  CHECK(err.find("must end in .amem") != std::string::npos);
  std::filesystem::create_directories(h.dir / "out/dir.amem");
  err = h.Error("export_snapshot", {{"path", "out/dir.amem"}});
  CHECK(err.find("is a directory") != std::string::npos);
}

TEST_CASE("export_snapshot never writes outside its export directory",
          "[mcp][query-tools][hardening]") {
  namespace fs = std::filesystem;
  Harness h;
  PopulateQueryGraph(h);
  amem::testing::TempDir outside;
  const std::string victim = outside / "victim.amem";
  const std::string config = h.dir / "config";
  {
    std::ofstream(victim) << "precious";
    std::ofstream(config) << "[core]\n";
  }
  fs::create_directories(h.dir / "out");
  fs::create_symlink(victim, h.dir / "out/link.amem");
  fs::create_symlink(outside.path(), h.dir / "out/away");
  auto refused = [&](const Json& args, const std::string& why) {
    std::string err = h.Error("export_snapshot", args);
    INFO(err);
    CHECK(err.find(why) != std::string::npos);
  };
  refused({{"path", victim}, {"overwrite", true}}, "relative to the export directory");
  refused({{"path", "../x.amem"}}, "'..' is not allowed");
  refused({{"path", "out/../../x.amem"}}, "'..' is not allowed");
  refused({{"path", "out/link.amem"}, {"overwrite", true}}, "symbolic link");
  refused({{"path", "out/away/new.amem"}}, "outside the export directory");
  refused({{"path", "config"}, {"overwrite", true}}, "must end in .amem");
  refused({{"path", ""}}, "must not be empty");
  // A file that is not a snapshot is never replaced, even with overwrite.
  {
    std::ofstream(h.dir / "notes.amem") << "my notes";
  }
  refused({{"path", "notes.amem"}, {"overwrite", true}}, "not an .amem snapshot");

  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(read(victim) == "precious");
  CHECK(read(config) == "[core]\n");
  CHECK(read(h.dir / "notes.amem") == "my notes");
  CHECK_FALSE(fs::exists(outside / "new.amem"));
  CHECK(fs::is_symlink(h.dir / "out/link.amem"));

  // With no export directory, the tool refuses every path.
  h.ctx.export_dir.clear();
  refused({{"path", "out/fine.amem"}}, "writing files is disabled");
}

TEST_CASE("query tools reject bad arguments with a message saying what to fix",
          "[mcp][query-tools]") {
  Harness h;
  PopulateQueryGraph(h);
  std::string err = h.Error("traverse", {{"node", "file:nope.cc"}});
  CHECK(err.find("traverse") != std::string::npos);
  CHECK(err.find("file:nope.cc") != std::string::npos);
  CHECK(err.find("check the key") != std::string::npos);
  err = h.Error("traverse", {{"node", "module:store"}, {"relations", {"is_friend_of"}}});
  CHECK(err.find("is_friend_of") != std::string::npos);
  err = h.Error("traverse", {{"node", "module:store"}, {"direction", "sideways"}});
  CHECK(err.find("direction") != std::string::npos);
  err = h.Error("traverse", {{"node", "module:store"}, {"as_of", 1}, {"at", 5}});
  CHECK(err.find("not both") != std::string::npos);
  err = h.Error("traverse", {{"depth", 2}});
  CHECK(err.find("missing required field \"node\"") != std::string::npos);
  err = h.Error("text_search", {{"query", "LMDB"}, {"limit", 0}});
  CHECK(err.find("limit: must be at least 1") != std::string::npos);
  err = h.Error("text_search", {{"query", "LMDB"}, {"limt", 3}});
  CHECK(err.find("unknown field \"limt\"") != std::string::npos);
  err = h.Error("text_search", {{"query", "a the"}});
  INFO(err);
  CHECK(err.find("no searchable terms") != std::string::npos);
  err = h.Error("find_memories", {{"types", {"decisions"}}});
  CHECK(err.find("must be one of") != std::string::npos);
  err = h.Error("temporal", {{"earlier", "yesterday"}, {"later", "run:r2"}});
  CHECK(err.find("yesterday") != std::string::npos);
  err = h.Error("similar", {{"node", "fact:zebra"}, {"text", "zebra"}});
  CHECK(err.find("exactly one of") != std::string::npos);
  // Integers beyond i64 are clamped, never wrapped (2^64 - 1 is not -1).
  CHECK(h.Ok("find_memories", {{"after", UINT64_MAX}})["matched"] == 0);
  CHECK(h.Ok("gaps", {{"now", UINT64_MAX}})["now"] == INT64_MAX);
  err = h.Error("similar", {{"vector", {1.0, 0.0}}});
  CHECK(err.find("dimension") != std::string::npos);
  // Vectors are read as the CLI reads --vector (io::VectorFromJson): f32 range.
  err = h.Error("similar", {{"vector", {1e39, 0.0}}});
  CHECK(err.find("vector[0]") != std::string::npos);
  err = h.Error("revise", Json::object());
  CHECK(err.find("give either \"node\" or \"hypothesis\"") != std::string::npos);
  err = h.Error("analogy", {{"node", "fact:zebra"}, {"text", "zebra"}});
  CHECK(err.find("exactly one") != std::string::npos);
  err = h.Error("context", Json::object());
  CHECK(err.find("give \"seeds\" (memory keys), \"question\" or both") != std::string::npos);
  // Checked before the view is opened: a missing node/text/vector is reported as
  // such, not the as_of that is past the latest revision.
  err = h.Error("similar", {{"as_of", 999999}});
  CHECK(err.find("give exactly one of \"node\", \"text\" or \"vector\"") != std::string::npos);
  err = h.Error("context", {{"seeds", {"module:store", "nope"}}});
  CHECK(err.find("nope") != std::string::npos);
  err = h.Error("resolve", {{"node", "decision:use-lmdb"}, {"as_of", 99}});
  CHECK(err.find("resolve") != std::string::npos);
}

TEST_CASE("query answers stay within the result budget", "[mcp][query-tools]") {
  Harness h;
  Json ops = Json::array();
  std::string pad(600, 'k');
  for (int i = 0; i < 300; ++i) {
    std::string key = "fact:" + pad + std::to_string(1000 + i);
    ops.push_back(Node(key, "fact", "budget test memory number " + std::to_string(i)));
    if (i > 0) ops.push_back(Edge(key, "temporal_next", "fact:" + pad + std::to_string(999 + i)));
  }
  h.Ok("write_batch", {{"operations", ops}, {"ts", 5000}});
  for (const auto& [tool, args] : std::vector<std::pair<std::string, Json>>{
           {"find_memories", {{"limit", 1000}}},
           {"text_search", {{"query", "budget memory"}, {"limit", 200}}},
           {"centrality", {{"limit", 1000}}},
           {"traverse", {{"node", "fact:" + pad + "1299"}, {"depth", 100}, {"limit", 1000}}},
           {"path", {{"from", "fact:" + pad + "1299"}, {"to", "fact:" + pad + "1000"},
                     {"max_depth", 1000}}},
           {"context", {{"seeds", {"fact:" + pad + "1150"}}, {"depth", 10},
                        {"budget_tokens", 8000}}}}) {
    INFO(tool);
    Json r = h.Call(tool, args);
    REQUIRE(r["isError"] == false);
    const Json& sc = r["structuredContent"];
    const std::string& text = r["content"][0]["text"].get_ref<const std::string&>();
    CHECK(h.last_bytes <= kMaxResponseBytes);
    if (tool == "context") {
      CHECK(JsonStringBytes(text) + DumpLine(sc).size() <= kMaxResultBytes);
      CHECK(text.size() <= 8000 * 4);
      CHECK(sc["truncated"] == true);
    } else {
      CHECK(ResultCost(sc) <= kMaxResultBytes);
      CHECK(text == DumpLine(sc));
    }
    if (tool == "path") {
      CHECK(sc["truncated"] == true);
      CHECK(sc["edges"].size() + 1 == sc["nodes"].size());
    } else if (tool != "context") {
      REQUIRE(sc.contains("omitted"));
      CHECK(sc["omitted"].begin().value().get<int>() > 0);
    }
  }
}

TEST_CASE("FitToBudget shares the budget between lists", "[mcp][query-tools]") {
  Json doc{{"query", "x"}, {"small", Json::array({1, 2, 3})}, {"big", Json::array()},
           {"also_big", Json::array()}};
  for (int i = 0; i < 1000; ++i) {
    doc["big"].push_back(std::string(100, 'b'));
    doc["also_big"].push_back(std::string(100, 'a'));
  }
  FitToBudget(&doc, 20000);
  CHECK(doc["small"].size() == 3);
  CHECK(doc["big"].size() > 40);  // each ~210 bytes of ResultCost: ~45 fit in half
  CHECK(doc["big"].size() + 1 >= doc["also_big"].size());
  CHECK(doc["also_big"].size() + 1 >= doc["big"].size());
  CHECK(ResultCost(doc) <= 20000);
  CHECK(ResultCost(doc) > 19000);  // the budget is used, not wasted
  CHECK(doc["omitted"]["big"].get<size_t>() + doc["big"].size() == 1000);
  CHECK_FALSE(doc["omitted"].contains("small"));
  Json fits{{"rows", Json::array({1, 2})}};
  FitToBudget(&fits, 1000);
  CHECK_FALSE(fits.contains("omitted"));
}
