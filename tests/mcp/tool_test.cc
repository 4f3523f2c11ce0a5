// tools/mcp/tool.h: the answer bound of a call (AnswerBytes, max_bytes) on every tool.
// Bounded answers (docs/MCP.md "Bounded output"): every tool of the `all` profile,
// asked for a big answer on a big store, answers within the default bound of
// kDefaultAnswerBytes bytes of text, says when it cut, and a paged answer's cursor
// goes on exactly where the cut happened. The cases are a table keyed by tool name,
// checked against the registry: a tool added without a case fails here.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/mcp/tool_harness.h"
#include "tests/sanitizer.h"

using namespace amem::mcp;
using amem::mcp::testing::Harness;

namespace {

// 300 of each in the normal build; 100 under the sanitizers, where paging through
// every listing (each page of the history tools re-reads the whole history) took a
// minute: every natural answer is still several times the default bound.
constexpr int kScale = amem::testing::kSanitizerBuild ? 100 : 300;
constexpr int kFacts = kScale;     // fact:f<i>, chained f<i> --supports--> f<i+1>
constexpr int kEntries = kScale;   // kv decisions/k<i>
constexpr int kEntities = kScale;  // compatibility entities e<i>, each with 3 observations

std::string Filler(int i, size_t bytes) {
  std::string s = "widget alpha " + std::to_string(i) + " ";
  while (s.size() < bytes) s += "lorem \"quoted\" text\n";
  return s;
}

// A store whose natural answers are far over the bound: many nodes with long
// contents, many edges on one hub and along a chain, big kv values, a big node.
void PopulateTools(Harness& h) {
  Json ops = Json::array();
  for (int i = 0; i < kFacts; ++i) {
    const std::string key = "fact:f" + std::to_string(i);
    ops.push_back({{"op", "node"}, {"key", key}, {"type", i % 2 ? "fact" : "decision"},
                   {"content", Filler(i, 400)}, {"confidence", 0.3 + (i % 7) / 10.0}});
    ops.push_back({{"op", "edge"}, {"src", "file:hub.cc"}, {"rel", "related_to"}, {"dst", key}});
    if (i + 1 < kFacts) {
      ops.push_back({{"op", "edge"}, {"src", key}, {"rel", "supports"},
                     {"dst", "fact:f" + std::to_string(i + 1)}});
    }
  }
  ops.push_back({{"op", "node"}, {"key", "file:hub.cc"}, {"type", "file"}, {"content", "hub"}});
  ops.push_back({{"op", "node"}, {"key", "fact:victim"}, {"type", "fact"}, {"content", "v"}});
  ops.push_back({{"op", "node"}, {"key", "file:big.cc"}, {"type", "file"},
                 {"content", Filler(0, 200000)}});
  h.Ok("write_batch", {{"operations", ops}, {"run", "r1"}});
  for (int i = 0; i < 120; ++i) {  // one run each: drift has a cluster per run
    h.Ok("put_memory", {{"key", "fact:run" + std::to_string(i)}, {"type", "fact"},
                        {"content", Filler(i, 50)}, {"run", "session-" + std::to_string(i)}});
  }
  for (int i = 0; i < kEntries; ++i) {
    h.Ok("remember", {{"namespace", "decisions"}, {"key", "k" + std::to_string(i)},
                      {"value", Filler(i, 300)}, {"run", i % 2 ? "r1" : "r2"}});
  }
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "big"}, {"value", Filler(1, 100000)}});
  h.Ok("remember", {{"namespace", "decisions"}, {"key", "victim"}, {"value", "v"}});
  Json ents = Json::array(), rels = Json::array();
  for (int i = 0; i < kEntities; ++i) {
    const std::string name = "e" + std::to_string(i);
    ents.push_back({{"name", name}, {"entityType", "service"},
                    {"observations", {Filler(i, 120), Filler(i + 1, 120), Filler(i + 2, 120)}}});
    if (i > 0) rels.push_back({{"from", "e0"}, {"to", name}, {"relationType", "depends on"}});
  }
  ents.push_back({{"name", "victim"}, {"entityType", "x"}, {"observations", {"o"}}});
  h.Ok("create_entities", {{"entities", ents}});
  h.Ok("create_relations", {{"relations", rels}});
}

std::vector<std::string> ManyNames(size_t n) {
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("missing-name-" + std::to_string(i));
  return names;
}

// How a tool's big answer is bounded.
enum class Kind {
  kPaged,  // cut with truncated and nextCursor; the cursor pages through everything once
  kCut,    // cut where it stands (truncated: true; omitted counts, slices, orphans_total)
  kError,  // refuses with a message (a drawing over the bound: give path)
  kSmall,  // the answer does not grow with the store or the input (an acknowledgement)
};

struct Case {
  Json args;
  Kind kind;
  // kPaged: the list fields whose items a page carries (empty: every array field).
  std::vector<std::string> lists{};
  // kCut: what raises the bound (merged into args): max_bytes, or the tool's own size.
  Json more = {{"max_bytes", kMaxAnswerBytes}};
};

std::map<std::string, Case> Cases() {
  std::vector<std::string> all_names;
  for (int i = 0; i < kEntities; ++i) all_names.push_back("e" + std::to_string(i));
  std::map<std::string, Case> c;
  c["remember"] = {{{"namespace", "decisions"}, {"key", "huge"}, {"value", Filler(2, 300000)}},
                   Kind::kSmall};
  c["recall"] = {{{"namespace", "decisions"}}, Kind::kPaged, {"entries"}};
  c["forget"] = {{{"namespace", "decisions"}, {"key", "victim"}}, Kind::kSmall};
  c["put_memory"] = {{{"key", "fact:huge"}, {"type", "fact"}, {"content", Filler(3, 300000)}},
                     Kind::kSmall};
  c["get_memory"] = {{{"node", "file:hub.cc"}, {"edge_limit", 1000}}, Kind::kPaged, {"out", "in"}};
  c["delete_memory"] = {{{"node", "fact:victim"}}, Kind::kSmall};
  c["link"] = {{{"src", "fact:f1"}, {"rel", "related_to"}, {"dst", "fact:f2"},
                {"payload", {{"note", Filler(4, 100000)}}}},
               Kind::kSmall};
  c["unlink"] = {{{"src", "fact:f1"}, {"rel", "related_to"}, {"dst", "fact:f2"}}, Kind::kSmall};
  c["define_relation"] = {{{"name", "bound_check"}}, Kind::kSmall};
  Json batch = Json::array();
  for (int i = 0; i < 2000; ++i) {
    batch.push_back({{"op", "node"}, {"key", "fact:batch" + std::to_string(i)}, {"type", "fact"},
                     {"content", "b"}});
  }
  c["write_batch"] = {{{"operations", batch}}, Kind::kSmall};
  c["changes_since"] = {{{"since_rev", 0}}, Kind::kPaged, {"changes"}};
  c["store_stats"] = {Json::object(), Kind::kSmall};
  c["index_code"] = {{{"ctags", "/nonexistent/ctags.json"}, {"root", "."}}, Kind::kSmall};
  c["traverse"] = {{{"node", "file:hub.cc"}, {"limit", 1000}}, Kind::kPaged};
  c["find_memories"] = {{{"limit", 1000}}, Kind::kPaged};
  c["temporal"] = {{{"earlier", "run:r2"}, {"later", "run:r1"}, {"limit", 500}}, Kind::kPaged};
  c["impact"] = {{{"node", "fact:f0"}, {"depth", 100}, {"limit", 1000}}, Kind::kPaged};
  c["context"] = {{{"seeds", {"file:hub.cc"}}, {"limit", 1000}, {"max_content", 4000}},
                  Kind::kCut, {}, {{"budget_tokens", 7000}}};
  c["resolve"] = {{{"node", "fact:f1"}}, Kind::kSmall};
  c["path"] = {{{"from", "fact:f0"},
                {"to", "fact:f" + std::to_string(kFacts - 1)},
                {"direction", "out"},
                {"max_depth", 1000}},
               Kind::kPaged,
               {"nodes", "edges"}};
  c["similar"] = {{{"text", "widget alpha lorem"}, {"limit", 200}}, Kind::kPaged};
  c["text_search"] = {{{"query", "widget alpha lorem"}, {"limit", 200}}, Kind::kPaged};
  c["hybrid_search"] = {{{"query", "widget alpha lorem"}, {"limit", 200}}, Kind::kPaged};
  c["centrality"] = {{{"metric", "degree"}, {"limit", 1000}}, Kind::kPaged};
  c["revise"] = {{{"node", "fact:f0"}, {"limit", 1000}}, Kind::kPaged};
  c["gaps"] = {{{"limit", 1000}, {"threshold", 1.0}}, Kind::kPaged};
  c["analogy"] = {{{"node", "fact:f1"}, {"limit", 200}}, Kind::kPaged};
  c["drift"] = {{{"limit", 100}, {"trajectory_limit", 500}}, Kind::kPaged};
  c["consolidate"] = {{{"limit", 1000}, {"dedup_threshold", 0.1}}, Kind::kCut};
  c["export_snapshot"] = {{{"path", "bound.amem"}}, Kind::kSmall};
  c["view"] = {{{"query", "traverse"}, {"arguments", {{"node", "file:hub.cc"}, {"limit", 1000}}}},
               Kind::kError};
  Json many_ents = Json::array();
  for (int i = 0; i < 2000; ++i) {
    many_ents.push_back({{"name", "new" + std::to_string(i)}, {"entityType", "t"},
                         {"observations", {Filler(i, 100)}}});
  }
  c["create_entities"] = {{{"entities", many_ents}}, Kind::kCut};
  Json many_rels = Json::array();
  for (int i = 1; i < kEntities; ++i) {  // both ways: over the bound at 100 entities too
    const std::string name = "e" + std::to_string(i);
    many_rels.push_back({{"from", name}, {"to", "e0"}, {"relationType", "uses"}});
    many_rels.push_back({{"from", "e0"}, {"to", name}, {"relationType", "serves"}});
  }
  c["create_relations"] = {{{"relations", many_rels}}, Kind::kCut};
  Json contents = Json::array();
  for (int i = 0; i < 1000; ++i) contents.push_back(Filler(i + 1000, 100));
  c["add_observations"] = {{{"observations", {{{"entityName", "e1"}, {"contents", contents}}}}},
                           Kind::kCut};
  Json names = ManyNames(5000);
  names.push_back("victim");
  c["delete_entities"] = {{{"entityNames", names}}, Kind::kSmall};
  Json deletions = Json::array();
  for (const auto& n : ManyNames(5000)) {
    deletions.push_back({{"entityName", n}, {"observations", {"x"}}});
  }
  c["delete_observations"] = {{{"deletions", deletions}}, Kind::kSmall};
  Json missing_rels = Json::array();
  for (const auto& n : ManyNames(5000)) {
    missing_rels.push_back({{"from", n}, {"to", n}, {"relationType", "r"}});
  }
  c["delete_relations"] = {{{"relations", missing_rels}}, Kind::kSmall};
  c["read_graph"] = {Json::object(), Kind::kPaged, {"entities", "relations"}};
  c["search_nodes"] = {{{"query", "widget"}}, Kind::kPaged, {"entities", "relations"}};
  c["open_nodes"] = {{{"names", all_names}}, Kind::kPaged, {"entities", "relations"}};
  return c;
}

// The response's text and structuredContent JSON, each within `bound` bytes.
void CheckWithin(const Json& result, size_t bound) {
  const std::string text = result["content"][0]["text"];
  CHECK(text.size() <= bound);
  if (result.contains("structuredContent")) CHECK(DumpLine(result["structuredContent"]).size() <= bound);
}

std::vector<std::string> ListFields(const Case& c, const Json& page) {
  if (!c.lists.empty()) return c.lists;
  std::vector<std::string> fields;
  for (const auto& [field, value] : page.items()) {
    if (value.is_array()) fields.push_back(field);
  }
  return fields;
}

// An item's identity within a paged answer: an entity part is its name and where its
// observations start, a relation its ends and type, anything else its JSON.
std::string Identity(const std::string& field, const Json& item) {
  if (field == "entities") {
    return item["name"].get<std::string>() + "@" +
           std::to_string(item.value("observationOffset", 0));
  }
  if (field == "relations") {
    return DumpLine(Json::array({item["from"], item["relationType"], item["to"]}));
  }
  return DumpLine(item);
}

// Follows nextCursor from the first page: every page within the bound, every item
// seen once, as many as the answer's total (when it has one), and the same items as
// paging with the largest bound (nothing lost at a cut).
void CheckPaging(Harness& h, const std::string& tool, const Case& c, const Json& first) {
  std::set<std::string> seen;
  Json page = first, args = c.args;
  size_t pages = 1, items = 0;
  for (;;) {
    CHECK(page.value("truncated", false) == page.contains("nextCursor"));
    for (const auto& field : ListFields(c, page)) {
      for (const auto& item : page[field]) {
        ++items;
        CHECK(seen.insert(field + ":" + Identity(field, item)).second);  // never twice
      }
    }
    if (!page.contains("nextCursor")) break;
    REQUIRE(pages < 2000);
    args["cursor"] = page["nextCursor"];
    Json r = h.Call(tool, args);
    REQUIRE(r["isError"] == false);
    CheckWithin(r, kDefaultAnswerBytes);
    page = r["structuredContent"];
    ++pages;
  }
  CHECK(pages > 1);
  if (first.contains("total")) CHECK(items == first["total"].get<size_t>());
  // Nothing lost: the same listing with a limit and bound large enough, page by page
  // too (one page of 30,000 bytes does not hold every item), gives the same items.
  std::set<std::string> big;
  Json bargs = c.args;
  bargs["max_bytes"] = kMaxAnswerBytes;
  for (size_t n = 0;; ++n) {
    REQUIRE(n < 2000);
    Json p = h.Ok(tool, bargs);
    for (const auto& field : ListFields(c, p)) {
      for (const auto& item : p[field]) {
        // Entities split across pages differently at another bound: compare names.
        big.insert(field + ":" + (field == "entities" ? item["name"].get<std::string>()
                                                      : Identity(field, item)));
      }
    }
    if (!p.contains("nextCursor")) break;
    bargs["cursor"] = p["nextCursor"];
  }
  std::set<std::string> small;
  for (const auto& s : seen) {
    small.insert(s.rfind("entities:", 0) == 0 ? s.substr(0, s.rfind('@')) : s);
  }
  CHECK(small == big);
}

}  // namespace

TEST_CASE("every tool's answer stays within the default bound and says when it is cut",
          "[mcp][budget][bounds]") {
  Harness h;
  PopulateTools(h);
  std::map<std::string, Case> cases = Cases();
  for (const std::string& tool : h.registry.AllNames()) {
    INFO("tool " << tool);
    auto it = cases.find(tool);
    if (it == cases.end()) {
      FAIL("no bound case for the tool " << tool << ": add one to Cases()");
    }
    const Case& c = it->second;
    Json r = h.Call(tool, c.args);
    INFO(DumpLine(r).substr(0, 600));
    CheckWithin(r, kDefaultAnswerBytes);
    switch (c.kind) {
      case Kind::kPaged:
        REQUIRE(r["isError"] == false);
        CHECK(r["structuredContent"]["truncated"] == true);
        REQUIRE(r["structuredContent"].contains("nextCursor"));
        CheckPaging(h, tool, c, r["structuredContent"]);
        break;
      case Kind::kCut:
        REQUIRE(r["isError"] == false);
        CHECK(r["structuredContent"].value("truncated", false) == true);
        // Asked with a higher bound, the same call gives more (the bound, not the
        // store, cut it).
        {
          Json more = Merge(c.args, c.more);
          if (tool.rfind("create_", 0) != 0 && tool != "add_observations") {
            Json r2 = h.Call(tool, more);
            REQUIRE(r2["isError"] == false);
            CheckWithin(r2, kMaxAnswerBytes);
            CHECK(r2["content"][0]["text"].get<std::string>().size() >
                  r["content"][0]["text"].get<std::string>().size());
          }
        }
        break;
      case Kind::kError:
        REQUIRE(r["isError"] == true);
        CHECK_THAT(r["content"][0]["text"].get<std::string>(), Catch::Contains("max_bytes"));
        break;
      case Kind::kSmall:
        break;
    }
  }
}

TEST_CASE("max_bytes: bad values are refused and change nothing", "[mcp][budget][bounds]") {
  Harness h;
  const uint64_t before = h.Ok("store_stats", Json::object())["revision"];
  for (const Json& bad : {Json(-1), Json(0), Json(999), Json(30001), Json(int64_t{1} << 40),
                          Json(8000.5), Json("8000"), Json(nullptr), Json::array({8000})}) {
    INFO(DumpLine(bad));
    std::string e = h.Error("remember", {{"namespace", "n"}, {"key", "k"}, {"value", "v"},
                                         {"max_bytes", bad}});
    CHECK_THAT(e, Catch::Contains("max_bytes: must be an integer from 1000 to 30000"));
  }
  CHECK(h.Ok("store_stats", Json::object())["revision"] == before);
  CHECK(h.Error("recall", {{"namespace", "n"}, {"key", "k"}}).find("NotFound") != std::string::npos);
  // A good value is taken by every tool, and is not an unknown field.
  CHECK(h.Ok("remember", {{"namespace", "n"}, {"key", "k"}, {"value", "v"}, {"max_bytes", 1000}})
            .contains("revision"));
  CHECK(h.Ok("store_stats", {{"max_bytes", 30000}})["revision"] == before + 1);
}

TEST_CASE("a malformed cursor is refused and changes nothing", "[mcp][budget][bounds]") {
  Harness h;
  for (int i = 0; i < 50; ++i) {
    h.Ok("remember", {{"namespace", "n"}, {"key", "k" + std::to_string(i)}, {"value", Filler(i, 400)}});
  }
  Json first = h.Ok("recall", {{"namespace", "n"}, {"max_bytes", 1000}});
  REQUIRE(first.contains("nextCursor"));
  for (const char* tool :
       {"recall", "changes_since", "read_graph", "search_nodes", "open_nodes", "text_search"}) {
    Json base = Json::object();
    if (std::string(tool) == "recall") base = {{"namespace", "n"}};
    if (std::string(tool) == "changes_since") base = {{"since_rev", 0}};
    if (std::string(tool) == "search_nodes" || std::string(tool) == "text_search") {
      base = {{"query", "x"}};
    }
    if (std::string(tool) == "open_nodes") base = {{"names", {"x"}}};
    for (const Json& bad : {Json("garbage"), Json("r1o"), Json("r-1o0"), Json("r1o99999999999999999999"),
                            Json(""), Json(7), Json("r1o1,,2"), Json("r1o1,x"), Json("r0o1")}) {
      INFO(tool << " " << DumpLine(bad));
      Json args = base;
      args["cursor"] = bad;
      Json r = h.Call(tool, args);
      CHECK(r["isError"] == true);
    }
  }
  CHECK(h.Ok("recall", {{"namespace", "n"}, {"max_bytes", 1000}}) == first);
}
