// Drives the real amem binary: every store command's happy path, --json fields,
// as-of reads, and bad arguments (one-line error, exit code, store unchanged).
#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "common/hash.h"
#include "tests/store/raw_lmdb.h"
#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

TEST_CASE("init creates a store once and reports it", "[tools][cli]") {
  TempDir dir;
  std::string store = dir.Sub("s");
  RunResult r = Amem(store, {"init", "--dimension", "8", "--json"});
  RequireOk(r);
  nlohmann::json j = r.json();
  CHECK(j["created"] == true);
  CHECK(j["dimension"] == 8);
  CHECK(j["store"] == store);
  CHECK(j["revision"] == 0);

  r = Amem(store, {"init"});
  RequireOk(r);
  CHECK(r.out.find("already exists") != std::string::npos);
  CHECK(r.out.find("dimension 8") != std::string::npos);
  RequireError(Amem(store, {"init", "--dimension", "16"}), 4, "init", "dimension 8");
  RequireError(Amem(dir.Sub("t"), {"init", "--dimension", "0"}), 2, "init");
  RequireError(Amem(dir.Sub("t"), {"init", "--dimension", "x"}), 2, "init");
  CHECK(!std::filesystem::exists(dir.Sub("t")));
}

TEST_CASE("put-node and get-node, by key and by id, text and JSON", "[tools][cli]") {
  TempStore s;
  RunResult r = s.Run({"put-node", "file:src/a.cc", "--type", "file", "--content",
                       "line one\nline two", "--meta", "{\"lang\":\"c++\"}", "--confidence",
                       "0.9", "--vector", "[1, 0.5, -2, 0]", "--scope", "proj", "--run", "r1",
                       "--task", "t1", "--ts", "1700000000", "--json"});
  RequireOk(r);
  nlohmann::json put = r.json();
  CHECK(put["key"] == "file:src/a.cc");
  CHECK(put["rev"] == 1);
  std::string id = put["id"];
  CHECK(id.size() == 16);

  r = s.Run({"get-node", "file:src/a.cc", "--json"});
  RequireOk(r);
  nlohmann::json j = r.json();
  CHECK(j["id"] == id);
  CHECK(j["key"] == "file:src/a.cc");
  CHECK(j["type"] == "file");
  CHECK(j["content"] == "line one\nline two");
  CHECK(j["meta"] == nlohmann::json{{"lang", "c++"}});
  CHECK(j["confidence"].get<double>() == Approx(0.9));
  CHECK(j["scope"] == "proj");
  CHECK(j["run"] == "r1");
  CHECK(j["task"] == "t1");
  CHECK(j["created_ts"] == 1700000000);
  CHECK(j["updated_ts"] == 1700000000);
  CHECK(j["rev"] == 1);
  CHECK(j["vector"] == nlohmann::json::parse("[1, 0.5, -2, 0]"));
  // The short form of the f32 survives ("0.9", not "0.899999976...").
  CHECK(r.out.find("\"confidence\":0.9,") != std::string::npos);

  r = s.Run({"get-node", id});
  RequireOk(r);
  CHECK(r.out.find("key:        file:src/a.cc\n") != std::string::npos);
  CHECK(r.out.find("type:       file\n") != std::string::npos);
  CHECK(r.out.find("content:    line one\n            line two\n") != std::string::npos);
  CHECK(r.out.find("vector:     4 floats\n") != std::string::npos);

  // A node without a vector has "vector": null.
  RequireOk(s.Run({"put-node", "fact:x", "--type", "fact", "--ts", "1700000001"}));
  CHECK(s.Run({"get-node", "fact:x", "--json"}).json()["vector"].is_null());
  // --vector '[]' is the empty vector: a node without one.
  RequireOk(s.Run({"put-node", "fact:y", "--type", "fact", "--vector", "[]"}));
  CHECK(s.Run({"get-node", "fact:y", "--json"}).json()["vector"].is_null());
  // Global flags may come before the command too.
  r = Amem(s.store(), {"--json", "get-node", "fact:x"});
  RequireOk(r);
  CHECK(r.json()["type"] == "fact");
}

TEST_CASE("bad put-node arguments fail with invalid input and change nothing",
          "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-node", "file:a", "--type", "file", "--ts", "100"}));
  const std::string before = s.Stats();
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {{"--type", "nonsense"}, "unknown node type"},
      {{"--type", "file", "--meta", "{bad json"}, "--meta"},
      {{"--type", "file", "--meta", "[1,2]"}, "--meta"},
      {{"--type", "file", "--meta", "{\"a\":1}"}, ""},
      {{"--type", "file", "--confidence", "nan"}, "--confidence"},
      {{"--type", "file", "--confidence", "inf"}, "--confidence"},
      {{"--type", "file", "--confidence", "-inf"}, "--confidence"},
      {{"--type", "file", "--confidence", "1.5"}, ""},
      {{"--type", "file", "--confidence", "-0.1"}, ""},
      {{"--type", "file", "--vector", "[1,2]"}, ""},
      {{"--type", "file", "--vector", "[1,2,3,\"x\"]"}, "--vector"},
      {{"--type", "file", "--vector", "{}"}, "--vector"},
      {{"--type", "file", "--vector", "[1,2,3,1e999]"}, "--vector"},
      {{"--type", "file", "--content", "bad \xff utf8"}, ""},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"put-node", "file:b"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    INFO(args[3] + " " + (args.size() > 5 ? args[5].substr(0, 40) : ""));
    RequireError(s.Run(args), 4, "put-node", c.needle);
  }
  RequireError(s.Run({"put-node", "", "--type", "file"}), 4, "put-node");
  CHECK(s.Stats() == before);
  RequireError(s.Run({"get-node", "file:b"}), 3, "get-node");
}

TEST_CASE("as-of reads see the past; del-node keeps history", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-node", "fact:f", "--type", "fact", "--content", "v1", "--ts", "1000"}));
  RequireOk(s.Run({"put-node", "fact:f", "--type", "fact", "--content", "v2", "--ts", "2000"}));
  RequireOk(s.Run({"del-node", "fact:f", "--ts", "3000"}));

  RequireError(s.Run({"get-node", "fact:f"}), 3, "get-node");
  CHECK(s.Run({"get-node", "fact:f", "--as-of", "1", "--json"}).json()["content"] == "v1");
  CHECK(s.Run({"get-node", "fact:f", "--as-of", "2", "--json"}).json()["content"] == "v2");
  CHECK(s.Run({"get-node", "fact:f", "--at", "1999", "--json"}).json()["content"] == "v1");
  CHECK(s.Run({"get-node", "fact:f", "--at", "2000", "--json"}).json()["content"] == "v2");
  RequireError(s.Run({"get-node", "fact:f", "--at", "999"}), 3, "get-node");
  RequireError(s.Run({"del-node", "fact:f"}), 3, "del-node");
  RequireError(s.Run({"del-node", "fact:never"}), 3, "del-node");
}

TEST_CASE("del-node keeps the node's edges; --with-edges deletes them too", "[tools][cli]") {
  TempStore s;
  for (const char* key : {"fact:a", "fact:b", "fact:c", "fact:d"}) {
    RequireOk(s.Run({"put-node", key, "--type", "fact"}));
  }
  RequireOk(s.Run({"put-edge", "fact:a", "supports", "fact:b"}));
  RequireOk(s.Run({"put-edge", "fact:b", "supports", "fact:a"}));
  RequireOk(s.Run({"put-edge", "fact:a", "related_to", "fact:a"}));
  RequireOk(s.Run({"put-edge", "fact:b", "supports", "fact:c"}));
  RequireOk(s.Run({"put-edge", "fact:d", "supports", "fact:b"}));
  RequireOk(s.Run({"del-node", "fact:c"}));  // its in-edge stays, dangling
  CHECK(s.Run({"--json", "stats"}).json()["dangling_edges"] == 1);
  RunResult r = s.Run({"--json", "del-node", "fact:a", "--with-edges"});
  RequireOk(r);
  CHECK(r.json()["key"] == "fact:a");
  CHECK(r.json()["edges_deleted"] == 3);  // a -> b, b -> a, a -> a (once)
  const auto stats = s.Run({"--json", "stats"}).json();
  CHECK(stats["live_edges"] == 2);  // b -> c (dangling) and d -> b
  CHECK(stats["dangling_edges"] == 1);
  CHECK(s.Run({"--json", "in", "fact:b"}).json()["edges"].size() == 1);
  // One revision for the node and its edges; a missing node is NotFound either way.
  const std::string before = std::to_string(r.json()["rev"].get<int>() - 1);
  CHECK(s.Run({"--json", "changes", "--since-rev", before}).json()["changes"].size() == 4);
  RequireError(s.Run({"del-node", "fact:a", "--with-edges"}), 3, "del-node");
  RequireError(s.Run({"del-node", "fact:never", "--with-edges"}), 3, "del-node");
}

TEST_CASE("edges: put, out, in, filter, delete, custom relations", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-node", "file:a.cc", "--type", "file", "--ts", "10"}));
  RequireOk(s.Run({"put-node", "symbol:f", "--type", "symbol", "--ts", "10"}));
  RequireOk(s.Run({"put-node", "symbol:g", "--type", "symbol", "--ts", "10"}));
  RequireOk(s.Run({"put-edge", "file:a.cc", "defines", "symbol:f", "--ts", "11"}));
  RequireOk(s.Run({"put-edge", "file:a.cc", "defines", "symbol:g", "--ts", "11"}));
  RunResult r = s.Run({"put-edge", "symbol:f", "calls", "symbol:g", "--weight", "0.5",
                       "--payload", "{\"line\":3}", "--run", "r", "--ts", "12", "--json"});
  RequireOk(r);
  CHECK(r.json()["rev"] == 6);
  CHECK(r.json()["rel"] == "calls");

  r = s.Run({"out", "file:a.cc"});
  RequireOk(r);
  // Ordered by (relation, target id); ids are hashes of the keys.
  CHECK(r.out.size() == 2 * std::string("file:a.cc --defines--> symbol:f  weight=1 rev=4\n").size());
  CHECK(r.out.find("file:a.cc --defines--> symbol:f  weight=1 rev=4\n") != std::string::npos);
  CHECK(r.out.find("file:a.cc --defines--> symbol:g  weight=1 rev=5\n") != std::string::npos);
  r = s.Run({"in", "symbol:g", "--json"});
  RequireOk(r);
  nlohmann::json j = r.json();
  CHECK(j["node"] == "symbol:g");
  CHECK(j["direction"] == "in");
  REQUIRE(j["edges"].size() == 2);
  r = s.Run({"in", "symbol:g", "--rel", "calls", "--json"});
  j = r.json();
  REQUIRE(j["edges"].size() == 1);
  nlohmann::json e = j["edges"][0];
  CHECK(e["src"] == "symbol:f");
  CHECK(e["rel"] == "calls");
  CHECK(e["dst"] == "symbol:g");
  CHECK(e["weight"] == 0.5);
  CHECK(e["payload"] == nlohmann::json{{"line", 3}});
  CHECK(e["run"] == "r");
  CHECK(e["created_ts"] == 12);
  CHECK(e["rev"] == 6);
  CHECK(e["src_id"].get<std::string>().size() == 16);

  // Node arguments accept ids.
  std::string f_id = s.Run({"get-node", "symbol:f", "--json"}).json()["id"];
  r = s.Run({"out", f_id});
  RequireOk(r);
  CHECK(r.out == "symbol:f --calls--> symbol:g  weight=0.5 rev=6 payload={\"line\":3}\n");

  const std::string before = s.Stats();
  RequireError(s.Run({"put-edge", "file:a.cc", "blocks", "symbol:f"}), 4, "put-edge", "blocks");
  RequireError(s.Run({"put-edge", "file:a.cc", "calls", "symbol:f", "--weight", "nan"}), 4,
               "put-edge", "--weight");
  RequireError(s.Run({"put-edge", "file:a.cc", "calls", "symbol:f", "--weight", "inf"}), 4,
               "put-edge", "--weight");
  RequireError(s.Run({"put-edge", "file:a.cc", "calls", "symbol:f", "--payload", "{x"}), 4,
               "put-edge", "--payload");
  RequireError(s.Run({"out", "file:a.cc", "--rel", "nonsense"}), 4, "out");
  RequireError(s.Run({"out", "file:none"}), 3, "out");
  RequireError(s.Run({"def-rel", "Bad-Name"}), 4, "def-rel");
  CHECK(s.Stats() == before);

  r = s.Run({"def-rel", "blocks", "--json"});
  RequireOk(r);
  CHECK(r.json()["id"] == 64);
  RequireOk(s.Run({"put-edge", "file:a.cc", "blocks", "symbol:f", "--ts", "13"}));
  CHECK(s.Run({"out", "file:a.cc", "--rel", "blocks", "--json"}).json()["edges"].size() == 1);

  RequireOk(s.Run({"del-edge", "file:a.cc", "defines", "symbol:g", "--ts", "14"}));
  CHECK(s.Run({"out", "file:a.cc", "--rel", "defines", "--json"}).json()["edges"].size() == 1);
  CHECK(s.Run({"out", "file:a.cc", "--rel", "defines", "--as-of", "6", "--json"})
            .json()["edges"]
            .size() == 2);
  RequireError(s.Run({"del-edge", "file:a.cc", "defines", "symbol:g"}), 3, "del-edge");

  // An edge to a node that does not exist is allowed; `in` finds it.
  RequireOk(s.Run({"put-edge", "symbol:f", "references", "symbol:missing", "--ts", "15"}));
  r = s.Run({"in", "symbol:missing"});
  RequireOk(r);
  CHECK(r.out.find("symbol:f --references--> symbol:missing") != std::string::npos);
}

TEST_CASE("changes since a revision or a time, stats and compact", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-node", "file:a", "--type", "file", "--ts", "100", "--run", "r1"}));
  RequireOk(s.Run({"put-node", "file:a", "--type", "file", "--ts", "200"}));
  RequireOk(s.Run({"put-edge", "file:a", "defines", "symbol:x", "--ts", "300"}));
  RequireOk(s.Run({"kv-put", "p", "constraints", "c", "v", "--ts", "400"}));

  RunResult r = s.Run({"changes", "--since-rev", "1"});
  RequireOk(r);
  CHECK(r.out ==
        "rev 2 ts 200 put_node file:a (overwrite)\n"
        "rev 3 ts 300 put_edge file:a --defines--> symbol:x\n"
        "rev 4 ts 400 put_kv p/constraints/c\n");
  nlohmann::json j = s.Run({"changes", "--since", "250", "--json"}).json();
  CHECK(j["since"] == 250);
  REQUIRE(j["changes"].size() == 2);
  CHECK(j["changes"][0]["kind"] == "put_edge");
  CHECK(j["changes"][0]["src"] == "file:a");
  CHECK(j["changes"][1]["scope"] == "p");
  CHECK(s.Run({"changes", "--since-rev", "0", "--json"}).json()["changes"][0]["run"] == "r1");

  j = s.Run({"stats", "--json"}).json();
  CHECK(j["revision"] == 4);
  CHECK(j["live_nodes"] == 1);
  CHECK(j["live_edges"] == 1);
  CHECK(j["dangling_edges"] == 1);
  CHECK(j["kv_entries"] == 1);
  CHECK(j["dimension"] == 4);
  CHECK(j["warnings"].is_array());
  r = s.Run({"stats"});
  RequireOk(r);
  CHECK(r.out.find("Revision: 4 (ts 400)") != std::string::npos);

  const std::string before = s.Stats();
  j = s.Run({"compact", "--dry-run", "--json"}).json();
  CHECK(j["dry_run"] == true);
  CHECK(s.Stats() == before);
  RequireOk(s.Run({"compact"}));
}

TEST_CASE("deleting writes warn once on stderr when tombstones accumulate", "[tools][cli]") {
  TempStore s;
  std::string puts, dels;
  for (int i = 0; i < 150; ++i) {
    puts += "{\"op\":\"node\",\"key\":\"fact:" + std::to_string(i) + "\",\"type\":\"fact\"}\n";
  }
  for (int i = 0; i < 100; ++i) dels += "{\"op\":\"del_node\",\"key\":\"fact:" + std::to_string(i) + "\"}\n";
  RequireOk(s.Run({"ingest", "-", "--ts", "100"}, puts));
  // 99 tombstones: below kWarnMinTombstones, no warning.
  std::string first99 = dels.substr(0, dels.rfind("{\"op\""));
  RequireOk(s.Run({"ingest", "-", "--ts", "200"}, first99));
  RequireOk(s.Run({"kv-put", "p", "ns", "k", "v", "--ts", "250"}));
  RequireOk(s.Run({"kv-del", "p", "ns", "k", "--ts", "260"}));  // kv tombstones do not count

  RunResult r = s.Run({"ingest", "-", "--ts", "300"}, dels);  // 99 no-ops and one delete
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ingested 100 operations from 100 lines at rev 5\n");
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("warning: 100 tombstones (66% of node and edge records) have accumulated", 0) ==
        0);
  CHECK(r.err.find("amem compact") != std::string::npos);

  // Single deletes warn too (JSON output untouched); writes that delete nothing,
  // or put, do not.
  r = s.Run({"del-node", "fact:120", "--json", "--ts", "400"});
  CHECK(r.exit_code == 0);
  CHECK(r.json()["rev"] == 6);
  CHECK(r.err.rfind("warning: 101 tombstones", 0) == 0);
  CHECK(r.err_lines() == 1);
  RequireOk(s.Run({"put-node", "fact:121", "--type", "fact", "--ts", "500"}));
  RequireOk(s.Run({"put-edge", "fact:121", "calls", "fact:122", "--ts", "500"}));
  r = s.Run({"del-edge", "fact:121", "calls", "fact:122", "--ts", "600"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.rfind("warning: 102 tombstones", 0) == 0);
  RequireError(s.Run({"del-node", "fact:120"}), 3, "del-node");  // no warning line

  // Compaction clears it; stats agrees with the write path.
  CHECK(s.Run({"stats"}).out.find("warning: 102 tombstones") != std::string::npos);
  RequireOk(s.Run({"compact"}));
  RequireOk(s.Run({"del-node", "fact:130", "--ts", "700"}));
}

TEST_CASE("re-creating an edge after a partial compaction lists it both ways",
          "[tools][cli]") {
  TempStore s;
  for (const char* x : {"A", "B", "C", "D"}) RequireOk(s.Run({"put-edge", "S", "calls", x}));
  for (int i = 1; i <= 9; ++i) {
    RequireOk(s.Run({"put-edge", "X" + std::to_string(i), "calls", "D"}));
  }
  RequireOk(s.Run({"del-edge", "S", "calls", "D"}));
  RequireOk(s.Run({"compact"}));
  RequireOk(s.Run({"put-edge", "S", "calls", "D"}));
  nlohmann::json out = s.Run({"out", "S", "--json"}).json();
  REQUIRE(out["edges"].size() == 4);
  std::set<std::string> dsts;
  for (const auto& e : out["edges"]) dsts.insert(e["dst"].get<std::string>());
  CHECK(dsts == std::set<std::string>{"A", "B", "C", "D"});
  CHECK(s.Run({"in", "D", "--json"}).json()["edges"].size() == 10);
  nlohmann::json stats = s.Run({"stats", "--json"}).json();
  CHECK(stats["live_edges"] == 13);
  CHECK(stats["adjacency_entries"] == 26);
}

TEST_CASE("oversized keys and meta exit 4 and change nothing", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"put-node", "file:a", "--type", "file", "--ts", "100"}));
  const std::string before = s.Stats();
  const std::string long_key = "file:" + std::string(1024, 'k');  // > 1024 bytes
  RequireError(s.Run({"put-node", long_key, "--type", "file"}), 4, "put-node",
               "longer than 1024 bytes");
  RequireError(s.Run({"put-edge", "file:a", "calls", long_key}), 4, "put-edge",
               "longer than 1024 bytes");
  RequireError(s.Run({"ingest", "-"}, "{\"op\":\"node\",\"key\":\"" + long_key +
                                          "\",\"type\":\"file\"}\n"),
               4, "ingest", "line 1");
  // 64 KiB of meta is the limit; this one is over it after canonicalisation.
  const std::string big_meta = "{\"a\":\"" + std::string(64 << 10, 'm') + "\"}";
  RequireError(s.Run({"put-node", "file:b", "--type", "file", "--meta", big_meta}), 4,
               "put-node", "meta: longer than 65536 bytes");
  CHECK(s.Stats() == before);
  CHECK(s.Run({"stats", "--json"}).json()["revision"] == 1);
  RequireError(s.Run({"get-node", "file:b"}), 3, "get-node");
}

}  // namespace
}  // namespace amem::testing
