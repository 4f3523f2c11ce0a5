// The graph query CLI commands (traverse, search, temporal, impact, context,
// resolve, path) through the real binary: JSON fields, text output,
// the current snapshot following store writes, --snapshot, --as-of, bad arguments;
// and all of queries 1-11: identical JSON on two runs (betweenness for any thread
// count), empty answers on an empty store.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

const char* kGraph =
    R"({"op":"node","key":"fact:a","type":"fact","content":"A is true","ts":100}
{"op":"node","key":"inference:b","type":"inference","content":"so B","ts":200}
{"op":"node","key":"decision:c","type":"decision","content":"do C","ts":300}
{"op":"edge","src":"inference:b","rel":"caused_by","dst":"fact:a"}
{"op":"edge","src":"inference:b","rel":"supports","dst":"decision:c"}
)";

TEST_CASE("graph query commands answer on the store's current snapshot", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));

  RunResult r = s.Run({"--json", "impact", "fact:a"});
  RequireOk(r);
  auto j = r.json();
  CHECK(j["query"] == "impact");
  CHECK(j["reached"] == 2);
  CHECK(j["affected_decisions"] == 1);
  CHECK(j["dependents"][0]["key"] == "inference:b");
  CHECK(j["dependents"][0]["id"].get<std::string>().size() == 16);

  r = s.Run({"traverse", "inference:b"});
  RequireOk(r);
  CHECK(r.out.find("query: traverse\n") == 0);
  CHECK(r.out.find("decision:c (decision #") != std::string::npos);

  r = s.Run({"path", "fact:a", "decision:c", "--json"});
  RequireOk(r);
  CHECK(r.json()["found"] == true);
  CHECK(r.json()["hops"] == 2);
  r = s.Run({"path", "fact:a", "decision:c", "--direction", "out", "--json"});
  CHECK(r.json()["found"] == false);

  r = s.Run({"context", "inference:b", "--depth", "1"});
  RequireOk(r);
  CHECK(r.out.rfind("# amem context: 3 nodes, 2 edges", 0) == 0);
  r = s.Run({"context", "inference:b", "--format", "json"});
  RequireOk(r);
  CHECK(nlohmann::json::parse(r.out)["nodes"].size() == 3);

  RequireOk(s.Run({"search", "--type", "decision", "--json"}));
  RequireOk(s.Run({"resolve", "fact:a", "--json"}));
  RequireOk(s.Run({"temporal", "..200", "200..", "--json"}));

  // A write makes the current snapshot stale; the next query sees it.
  RequireOk(s.Run({"put-node", "fact:a2", "--type", "fact", "--content", "A, revised"}));
  RequireOk(s.Run({"put-edge", "fact:a2", "supersedes", "fact:a"}));
  r = s.Run({"--json", "resolve", "fact:a"});
  RequireOk(r);
  CHECK(r.json()["current"]["key"] == "fact:a2");
  // ... but not as of revision 1 (the ingest).
  r = s.Run({"--json", "resolve", "fact:a", "--as-of", "1"});
  RequireOk(r);
  CHECK(r.json()["current"]["key"] == "fact:a");

  // --snapshot reads a file directly.
  RequireOk(s.Run({"export", s.dir() / "x.amem"}));
  r = s.Run({"--json", "resolve", "fact:a", "--snapshot", s.dir() / "x.amem"});
  RequireOk(r);
  CHECK(r.json()["current"]["key"] == "fact:a2");
}

TEST_CASE("path --limit cuts the rows, not the path's hops and cost", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));
  RunResult r = s.Run({"path", "fact:a", "decision:c", "--limit", "1", "--json"});
  RequireOk(r);
  auto j = r.json();
  CHECK(j["found"] == true);
  CHECK(j["truncated"] == true);
  CHECK(j["nodes"].size() == 1);
  CHECK(j["edges"].empty());
  CHECK(j["hops"] == 2);
  CHECK(j["cost"] == 2.0);
  r = s.Run({"path", "fact:a", "decision:c", "--limit", "1"});
  RequireOk(r);
  CHECK(r.out.find("hops: 2\n") != std::string::npos);
}

TEST_CASE("context never exceeds --budget-tokens; too small a budget names the minimum",
          "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));
  RunResult r = s.Run({"context", "inference:b", "--budget-tokens", "20"});
  RequireError(r, 4, "context");
  CHECK(r.err.find("give at least ") != std::string::npos);
  size_t at = r.err.find("give at least ") + 14;
  const size_t minimum = std::stoul(r.err.substr(at));
  CHECK(minimum > 20);
  for (const char* format : {"text", "json"}) {
    INFO(format);
    RequireError(s.Run({"context", "inference:b", "--format", format, "--budget-tokens",
                        std::to_string(minimum / 2)}),
                 4, "context");
    for (size_t budget = 1; budget <= 200; budget += 5) {
      INFO(budget);
      r = s.Run({"context", "inference:b", "--format", format, "--budget-tokens",
                 std::to_string(budget)});
      if (r.exit_code == 4) continue;  // below this format's skeleton
      RequireOk(r);
      CHECK((r.out.size() + 3) / 4 <= budget);
    }
  }
  r = s.Run({"--json", "context", "inference:b", "--budget-tokens", "0"});
  RequireOk(r);
  CHECK(r.json()["tokens"] == (r.out.size() + 3) / 4);
}

TEST_CASE("traverse, impact and search --as-of give the past answer", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));                                      // rev 1
  RequireOk(s.Run({"put-node", "fact:new", "--type", "fact", "--content", "new"}));  // rev 2
  RequireOk(s.Run({"put-edge", "inference:b", "related_to", "fact:new"}));         // rev 3
  RequireOk(s.Run({"put-edge", "fact:new", "caused_by", "fact:a"}));               // rev 4
  auto keys = [](const nlohmann::json& rows) {
    std::vector<std::string> out;
    for (const auto& row : rows) out.push_back(row["key"]);
    std::sort(out.begin(), out.end());
    return out;
  };
  using V = std::vector<std::string>;

  const std::vector<std::string> traverse = {"--json", "traverse", "inference:b"};
  auto now = s.Run(traverse);
  RequireOk(now);
  CHECK(keys(now.json()["nodes"]) == V{"decision:c", "fact:a", "fact:new", "inference:b"});
  for (const char* rev : {"1", "2"}) {
    std::vector<std::string> args = traverse;
    args.insert(args.end(), {"--as-of", rev});
    RunResult past = s.Run(args);
    RequireOk(past);
    CHECK(keys(past.json()["nodes"]) == V{"decision:c", "fact:a", "inference:b"});
  }

  now = s.Run({"--json", "impact", "fact:a"});
  RequireOk(now);
  CHECK(now.json()["reached"] == 3);
  CHECK(keys(now.json()["dependents"]) == V{"decision:c", "fact:new", "inference:b"});
  RunResult past = s.Run({"--json", "impact", "fact:a", "--as-of", "3"});
  RequireOk(past);
  CHECK(past.json()["reached"] == 2);
  CHECK(keys(past.json()["dependents"]) == V{"decision:c", "inference:b"});

  now = s.Run({"--json", "search", "--type", "fact"});
  RequireOk(now);
  CHECK(keys(now.json()["nodes"]) == V{"fact:a", "fact:new"});
  past = s.Run({"--json", "search", "--type", "fact", "--as-of", "1"});
  RequireOk(past);
  CHECK(keys(past.json()["nodes"]) == V{"fact:a"});
  past = s.Run({"--json", "search", "--type", "fact", "--as-of", "2"});
  RequireOk(past);
  CHECK(keys(past.json()["nodes"]) == V{"fact:a", "fact:new"});
}

// Ties on purpose (equal timestamps, equal confidences, twin vectors, a cycle) so
// that any order depending on hashing or threads would show.
const char* kTies =
    R"({"op":"node","key":"fact:a","type":"fact","content":"LMDB has one writer","ts":100,"vector":[1,0,0,0]}
{"op":"node","key":"fact:a2","type":"fact","content":"LMDB has a single writer","ts":300,"vector":[1,0,0,0]}
{"op":"node","key":"inference:b","type":"inference","content":"so writes are serialised","ts":200}
{"op":"node","key":"decision:c","type":"decision","content":"batch writes per ingest","ts":200,"vector":[0,1,0,0]}
{"op":"node","key":"decision:d","type":"decision","content":"batch reads too","ts":200,"vector":[0,1,0,0]}
{"op":"node","key":"entity:e","type":"entity","content":"the writer lock","ts":250}
{"op":"edge","src":"inference:b","rel":"caused_by","dst":"fact:a"}
{"op":"edge","src":"inference:b","rel":"supports","dst":"decision:c"}
{"op":"edge","src":"inference:b","rel":"supports","dst":"decision:d"}
{"op":"edge","src":"fact:a2","rel":"supersedes","dst":"fact:a"}
{"op":"edge","src":"decision:c","rel":"related_to","dst":"entity:e"}
{"op":"edge","src":"entity:e","rel":"related_to","dst":"decision:d"}
{"op":"edge","src":"decision:d","rel":"related_to","dst":"decision:c"}
)";

TEST_CASE("every query gives identical JSON on two runs", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kTies));
  const std::vector<std::vector<std::string>> queries = {
      {"traverse", "inference:b", "--direction", "both"},
      {"search", "--sort", "confidence"},
      {"temporal", "..200", "200.."},
      {"impact", "fact:a"},
      {"similar", "fact:a", "--min-similarity", "-1"},
      {"similar", "--text", "writer lock"},
      {"context", "inference:b", "--budget-tokens", "120"},
      {"resolve", "fact:a"},
      {"text-search", "writer", "batch"},
      {"hybrid-search", "batch", "writes"},
      {"centrality", "--metric", "betweenness"},
      {"path", "fact:a", "entity:e"},
  };
  for (std::vector<std::string> q : queries) {
    INFO(q[0] << " " << q[1]);
    q.push_back("--json");
    RunResult first = s.Run(q);
    RequireOk(first);
    CHECK(first.json()["query"] == q[0]);
    RunResult second = s.Run(q);
    RequireOk(second);
    CHECK(first.out == second.out);
  }
  for (const char* metric : {"pagerank", "degree", "betweenness"}) {
    INFO(metric);
    RunResult one = s.Run({"centrality", "--metric", metric, "--threads", "1", "--json"});
    RunResult two = s.Run({"centrality", "--metric", metric, "--threads", "2", "--json"});
    RequireOk(one);
    RequireOk(two);
    CHECK(one.out == two.out);
  }
}

TEST_CASE("search, temporal and hybrid-search on an empty store answer empty",
          "[query][cli]") {
  TempStore s;
  RunResult r = s.Run({"--json", "search"});
  RequireOk(r);
  CHECK(r.json()["nodes"].empty());
  CHECK(r.json()["matched"] == 0);
  r = s.Run({"--json", "temporal", "..200", "200.."});
  RequireOk(r);
  CHECK(r.json()["counts"]["added"] == 0);
  CHECK(r.json()["added"].empty());
  r = s.Run({"--json", "hybrid-search", "lmdb", "writer"});
  RequireOk(r);
  CHECK(r.json()["results"].empty());
  r = s.Run({"--json", "hybrid-search", "lmdb", "--vector", "[1,0,0,0]"});
  RequireOk(r);
  CHECK(r.json()["results"].empty());
}

TEST_CASE("graph query commands reject bad arguments with one line", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));
  RequireError(s.Run({"traverse", "fact:missing"}), 3, "traverse");
  RequireError(s.Run({"traverse", "fact:a", "--direction", "up"}), 2, "traverse");
  RequireError(s.Run({"traverse", "fact:a", "--rel", "nope"}), 4, "traverse");
  RequireError(s.Run({"search", "--type", "nope"}), 4, "search");
  RequireError(s.Run({"temporal", "yesterday", "today"}), 4, "temporal");
  RequireError(s.Run({"path", "fact:a"}), 2, "path");
  RequireError(s.Run({"path", "fact:a", "decision:c", "--cost", "x"}), 2, "path");
  RequireError(s.Run({"context", "fact:a", "--format", "xml"}), 2, "context");
  RequireError(s.Run({"impact", "fact:a", "--snapshot", s.dir() / "none.amem"}), 6, "impact");
  WriteFile(s.dir() / "bad.amem", "AMEM not really a snapshot");
  RequireError(s.Run({"impact", "fact:a", "--snapshot", s.dir() / "bad.amem"}), 5, "impact");
  RequireError(Amem(s.dir() / "nostore", {"impact", "fact:a"}), 3, "impact");
}

}  // namespace
}  // namespace amem::testing
