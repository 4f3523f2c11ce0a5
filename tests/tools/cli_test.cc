// Drives the real amem binary: every store command's happy path, --json fields,
// as-of reads, and bad arguments (one-line error, exit code, store unchanged).
#include <catch2/catch.hpp>

#include "tests/tools/amem_runner.h"

namespace amem::testing {
namespace {

// A failed command: the exit code, one line on stderr naming the command, nothing on
// stdout.
void RequireError(const RunResult& r, int code, const std::string& cmd,
                  const std::string& needle = "") {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("amem " + cmd + ": ", 0) == 0);
  CHECK(r.out.empty());
  if (!needle.empty()) CHECK(r.err.find(needle) != std::string::npos);
}

void RequireOk(const RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err.empty());
}

TEST_CASE("init creates a store once and reports it", "[tools][cli]") {
  TempDir dir;
  std::string store = dir / "s";
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
  RequireError(Amem(dir / "t", {"init", "--dimension", "0"}), 2, "init");
  RequireError(Amem(dir / "t", {"init", "--dimension", "x"}), 2, "init");
  CHECK(!std::filesystem::exists(dir / "t"));
}

TEST_CASE("commands on a missing store fail with NotFound and create nothing",
          "[tools][cli]") {
  TempDir dir;
  std::string store = dir / "missing";
  RequireError(Amem(store, {"get-node", "file:a"}), 3, "get-node", "amem init");
  RequireError(Amem(store, {"put-node", "file:a", "--type", "file"}), 3, "put-node");
  RequireError(Amem(store, {"stats"}), 3, "stats");
  RequireError(Amem(store, {"ingest", "-"}, "{\"op\":\"rel\",\"name\":\"x\"}\n"), 3, "ingest");
  CHECK(!std::filesystem::exists(store));
}

TEST_CASE("usage errors exit 2 with one line", "[tools][cli]") {
  TempStore s;
  RunResult r = RunProgram(AMEM_BINARY, {}, "", {}, "");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  r = RunProgram(AMEM_BINARY, {"no-such-command"}, "", {}, "");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  RequireError(s.Run({"put-node", "file:a"}), 2, "put-node", "--type");
  RequireError(s.Run({"get-node"}), 2, "get-node");
  RequireError(s.Run({"get-node", "file:a", "--as-of", "1", "--at", "5"}), 2, "get-node");
  RequireError(s.Run({"get-node", "file:a", "--as-of", "abc"}), 2, "get-node");
  RequireError(s.Run({"changes"}), 2, "changes");
  RequireError(s.Run({"changes", "--since-rev", "1", "--since", "5"}), 2, "changes");
  RequireError(s.Run({"put-edge", "a", "calls"}), 2, "put-edge");
  RequireError(s.Run({"kv-put", "s", "ns", "k"}), 2, "kv-put");
}

TEST_CASE("--help on every command explains it with an example", "[tools][cli]") {
  RunResult top = RunProgram(AMEM_BINARY, {"--help"}, "", {}, "");
  REQUIRE(top.exit_code == 0);
  CHECK(top.out.find("Exit codes") != std::string::npos);
  for (const char* cmd :
       {"init", "put-node", "get-node", "del-node", "put-edge", "del-edge", "def-rel", "out",
        "in", "kv-put", "kv-del", "kv-get", "kv-list", "kv-history", "changes", "ingest",
        "compact", "stats"}) {
    INFO(cmd);
    CHECK(top.out.find(std::string(cmd) + " ") != std::string::npos);
    RunResult r = RunProgram(AMEM_BINARY, {cmd, "--help"}, "", {}, "");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Example:") != std::string::npos);
    CHECK(r.out.find(std::string("amem ") + cmd) != std::string::npos);
  }
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

TEST_CASE("kv commands: put, get, list, history, delete, as-of", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"kv-put", "proj", "decisions", "db", "sqlite", "--ts", "100", "--run", "r1"}));
  RequireOk(s.Run({"kv-put", "proj", "decisions", "db", "lmdb", "--ts", "200", "--run", "r2"}));
  RequireOk(s.Run({"kv-put", "proj", "decisions", "lang", "c++20", "--ts", "200"}));
  RequireOk(s.Run({"kv-put", "other", "decisions", "db", "x", "--ts", "200"}));

  RunResult r = s.Run({"kv-get", "proj", "decisions", "db", "--json"});
  RequireOk(r);
  nlohmann::json j = r.json();
  CHECK(j["scope"] == "proj");
  CHECK(j["ns"] == "decisions");
  CHECK(j["key"] == "db");
  CHECK(j["value"] == "lmdb");
  CHECK(j["run"] == "r2");
  CHECK(j["ts"] == 200);
  CHECK(j["rev"] == 2);
  CHECK(s.Run({"kv-get", "proj", "decisions", "db", "--as-of", "1", "--json"}).json()["value"] ==
        "sqlite");

  r = s.Run({"kv-list", "proj", "decisions"});
  RequireOk(r);
  CHECK(r.out == "db = lmdb  (rev 2)\nlang = c++20  (rev 3)\n");
  j = s.Run({"kv-list", "proj", "decisions", "--at", "150", "--json"}).json();
  REQUIRE(j["entries"].size() == 1);
  CHECK(j["entries"][0]["value"] == "sqlite");

  RequireOk(s.Run({"kv-del", "proj", "decisions", "db", "--ts", "300"}));
  RequireError(s.Run({"kv-get", "proj", "decisions", "db"}), 3, "kv-get");
  RequireError(s.Run({"kv-del", "proj", "decisions", "db"}), 3, "kv-del");
  r = s.Run({"kv-history", "proj", "decisions", "db"});
  RequireOk(r);
  CHECK(r.out ==
        "rev 1 ts 100 run r1  sqlite\n"
        "rev 2 ts 200 run r2  lmdb\n"
        "rev 5 ts 300 (deleted)\n");
  j = s.Run({"kv-history", "proj", "decisions", "db", "--as-of", "2", "--json"}).json();
  REQUIRE(j["versions"].size() == 2);
  CHECK(j["versions"][1]["deleted"] == false);
  RequireError(s.Run({"kv-history", "proj", "decisions", "nothing"}), 3, "kv-history");
  RequireError(s.Run({"kv-put", "proj", "decisions", "k", "bad \xff"}), 4, "kv-put");
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

TEST_CASE("the default store is $AMEM_STORE, else ./.amem", "[tools][cli]") {
  TempDir dir;
  RunResult r = RunProgram(AMEM_BINARY, {"init"}, "", {"AMEM_STORE=" + (dir / "env")}, "");
  RequireOk(r);
  CHECK(std::filesystem::is_directory(dir / "env"));
  r = RunProgram(AMEM_BINARY, {"init", "--json"}, "", {}, dir.path());
  RequireOk(r);
  CHECK(r.json()["store"] == "./.amem");
  CHECK(std::filesystem::is_directory(dir / ".amem"));
}

}  // namespace
}  // namespace amem::testing
