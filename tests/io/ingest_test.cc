// JSON Lines ingest: the parser (in process) and `amem ingest` (the binary).
#include "tests/test_paths.h"
#include "tools/io/ingest.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "common/model.h"
#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

using io::IngestBatch;
using io::ParseIngest;

std::string ParseError(std::string_view text) {
  Result<IngestBatch> r = ParseIngest(text);
  if (r.ok()) return "ok";
  CHECK(r.status().IsInvalidArgument());
  return r.status().message();
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST_CASE("ParseIngest maps every op and counts lines", "[tools][ingest]") {
  Result<IngestBatch> r = ParseIngest(
      "{\"op\":\"rel\",\"name\":\"blocks\"}\n"
      "\n"
      "  \r\n"
      "{\"op\":\"node\",\"key\":\"file:a\",\"type\":\"file\",\"content\":\"x\",\"meta\":{\"k\":"
      "\"v\"},\"confidence\":0.5,\"vector\":[1,2],\"ts\":5,\"run\":\"r\",\"task\":\"t\","
      "\"scope\":\"s\"}\r\n"
      "{\"op\":\"edge\",\"src\":\"file:a\",\"rel\":\"blocks\",\"dst\":\"file:b\",\"weight\":2,"
      "\"payload\":[1]}\n"
      "{\"op\":\"kv\",\"scope\":\"s\",\"ns\":\"decisions\",\"key\":\"k\",\"value\":{\"a\":1}}\n"
      "{\"op\":\"del_edge\",\"src\":\"file:a\",\"rel\":\"blocks\",\"dst\":\"file:b\"}\n"
      "{\"op\":\"del_kv\",\"scope\":\"s\",\"ns\":\"decisions\",\"key\":\"k\"}\n"
      "{\"op\":\"del_node\",\"key\":\"file:a\"}");
  REQUIRE(r.ok());
  CHECK(r->batch.size() == 7);
  CHECK(r->op_lines == std::vector<size_t>{1, 4, 5, 6, 7, 8, 9});
  CHECK(r->lines == 9);
  CHECK(ParseIngest("").ok());
  CHECK(ParseIngest("\n\n")->lines == 2);
}

TEST_CASE("ParseIngest rejects bad lines naming the line", "[tools][ingest]") {
  const std::string good = "{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\"}\n";
  struct Case {
    std::string line;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\"", "malformed JSON"},
      {"not json", "malformed JSON"},
      {"[1,2]", "expected a JSON object"},
      {"{\"key\":\"a\"}", "missing field \"op\""},
      {"{\"op\":7}", "op: not a string"},
      {"{\"op\":\"nod\",\"key\":\"a\"}", "unknown op \"nod\""},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"contnet\":\"x\"}",
       "unknown field \"contnet\""},
      {"{\"op\":\"node\",\"type\":\"fact\"}", "missing field \"key\""},
      {"{\"op\":\"node\",\"key\":\"a\"}", "missing field \"type\""},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"factoid\"}", "unknown node type"},
      {"{\"op\":\"node\",\"key\":1,\"type\":\"fact\"}", "key: not a string"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"content\":5}", "content"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"meta\":\"x\"}", "meta"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"confidence\":\"high\"}",
       "confidence"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"confidence\":1e999}", "overflow"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"confidence\":1e300}",
       "not a finite"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"vector\":[1,null]}", "vector[1]"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"vector\":1}", "vector"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"ts\":1.5}", "ts: not an integer"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"ts\":18446744073709551615}",
       "out of range"},
      {"{\"op\":\"node\",\"key\":\"a\",\"type\":\"fact\",\"run\":3}", "run"},
      {"{\"op\":\"node\",\"key\":\"a\",\"key\":\"b\",\"type\":\"fact\"}", "duplicate field"},
      {"{\"op\":\"node\",\"key\":\"\xff\",\"type\":\"fact\"}", "UTF-8"},
      {"{\"op\":\"edge\",\"src\":\"a\",\"rel\":\"calls\"}", "missing field \"dst\""},
      {"{\"op\":\"edge\",\"src\":\"a\",\"rel\":\"calls\",\"dst\":\"b\",\"weight\":true}",
       "weight"},
      {"{\"op\":\"edge\",\"src\":\"a\",\"rel\":\"calls\",\"dst\":\"b\",\"type\":\"x\"}",
       "unknown field \"type\""},
      {"{\"op\":\"kv\",\"scope\":\"s\",\"ns\":\"n\",\"key\":\"k\"}", "missing field \"value\""},
      {"{\"op\":\"kv\",\"scope\":\"s\",\"ns\":\"n\",\"key\":\"k\",\"value\":3}", "value"},
      {"{\"op\":\"kv\",\"ns\":\"n\",\"key\":\"k\",\"value\":\"v\"}", "missing field \"scope\""},
      {"{\"op\":\"del_node\"}", "missing field \"key\""},
      {"{\"op\":\"del_edge\",\"src\":\"a\",\"dst\":\"b\"}", "missing field \"rel\""},
      {"{\"op\":\"rel\"}", "missing field \"name\""},
      {"{\"op\":\"rel\",\"name\":\"x\",\"id\":64}", "unknown field \"id\""},
  };
  for (const Case& c : cases) {
    INFO(c.line);
    std::string msg = ParseError(good + "\n" + c.line + "\n" + good);
    CHECK(StartsWith(msg, "line 3: "));
    CHECK(msg.find(c.needle) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("ApplyErrorToLine rewrites the store's op number", "[tools][ingest]") {
  std::vector<size_t> lines{2, 5, 9};
  Status s = io::ApplyErrorToLine(Status::InvalidArgument("op 1: unknown relation"), lines);
  CHECK(s.IsInvalidArgument());
  CHECK(s.message() == "line 5: unknown relation");
  CHECK(io::ApplyErrorToLine(Status::InvalidArgument("op 7: x"), lines).message() == "op 7: x");
  CHECK(io::ApplyErrorToLine(Status::IOError("disk"), lines).message() == "disk");
  CHECK(io::ApplyErrorToLine(Status::InvalidArgument("op x"), lines).message() == "op x");
}

// A long ingest file: n nodes chained by edges.
std::string ChainFile(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "{\"op\":\"node\",\"key\":\"fact:" + std::to_string(i) +
            "\",\"type\":\"fact\",\"content\":\"fact number " + std::to_string(i) + "\"}\n";
    if (i > 0) {
      text += "{\"op\":\"edge\",\"src\":\"fact:" + std::to_string(i) +
              "\",\"rel\":\"supports\",\"dst\":\"fact:" + std::to_string(i - 1) + "\"}\n";
    }
  }
  return text;
}

TEST_CASE("amem ingest applies a file in one revision, from a file or stdin",
          "[tools][ingest]") {
  TempStore s;
  WriteFile(s.dir().Sub("a.jsonl"), ChainFile(50));
  RunResult r = s.Run({"ingest", s.dir().Sub("a.jsonl"), "--ts", "1000", "--run", "r1", "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  nlohmann::json j = r.json();
  CHECK(j["rev"] == 1);
  CHECK(j["ops"] == 99);
  CHECK(j["lines"] == 99);
  j = s.Run({"get-node", "fact:49", "--json"}).json();
  CHECK(j["run"] == "r1");
  CHECK(j["created_ts"] == 1000);
  CHECK(s.Run({"out", "fact:49", "--json"}).json()["edges"][0]["dst"] == "fact:48");

  r = s.Run({"ingest", "-", "--ts", "2000"},
            "{\"op\":\"kv\",\"scope\":\"p\",\"ns\":\"decisions\",\"key\":\"k\",\"value\":"
            "{\"why\":\"fast\"},\"run\":\"r2\"}\n"
            "{\"op\":\"node\",\"key\":\"fact:0\",\"type\":\"fact\",\"content\":\"new\",\"ts\":"
            "1500,\"scope\":\"p\"}\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "ingested 2 operations from 2 lines at rev 2\n");
  j = s.Run({"kv-get", "p", "decisions", "k", "--json"}).json();
  CHECK(j["value"] == "{\"why\":\"fast\"}");
  CHECK(j["run"] == "r2");
  j = s.Run({"get-node", "fact:0", "--json"}).json();
  CHECK(j["updated_ts"] == 1500);
  CHECK(j["scope"] == "p");

  // An empty file commits nothing.
  r = s.Run({"ingest", "-", "--json"}, "\n\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.json()["ops"] == 0);
  CHECK(s.Run({"stats", "--json"}).json()["revision"] == 2);
}

TEST_CASE("amem ingest rejects a bad file naming the line and writes nothing",
          "[tools][ingest]") {
  TempStore s;
  const std::string base = ChainFile(400);  // 799 lines
  const std::string before = s.Stats();
  struct Case {
    std::string last_line;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\"", "malformed JSON"},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"bogus\":1}", "unknown field"},
      {"{\"op\":\"nope\"}", "unknown op"},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"wizard\"}", "unknown node type"},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"confidence\":1e999}", "overflow"},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"confidence\":2}", ""},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"vector\":[1,2,3]}", ""},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"meta\":{\"a\":{\"b\":1}}}", ""},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"content\":\"\xc3\x28\"}", "UTF-8"},
      {"{\"op\":\"node\",\"key\":\"x\",\"type\":\"fact\",\"content\":\"" +
           std::string(kMaxContentBytes + 1, 'c') + "\"}",
       ""},
      {"{\"op\":\"edge\",\"src\":\"fact:1\",\"rel\":\"blocks\",\"dst\":\"fact:2\"}", "blocks"},
      {"{\"op\":\"edge\",\"src\":\"fact:1\",\"rel\":\"calls\",\"dst\":\"fact:2\","
       "\"weight\":\"heavy\"}",
       "weight"},
      {"{\"op\":\"rel\",\"name\":\"Not Valid\"}", ""},
  };
  for (const Case& c : cases) {
    INFO(c.last_line.substr(0, 100));
    WriteFile(s.dir().Sub("bad.jsonl"), base + c.last_line + "\n");
    RunResult r = s.Run({"ingest", s.dir().Sub("bad.jsonl"), "--ts", "5"});
    INFO(r.err.substr(0, 300));
    CHECK(r.exit_code == 4);
    CHECK(r.out.empty());
    CHECK(r.err_lines() == 1);
    CHECK(StartsWith(r.err, "amem ingest: Invalid argument: line 800: "));
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(s.Stats() == before);
  }
  // A bad line in the middle, read from stdin.
  RunResult r = s.Run({"ingest", "-"}, "{\"op\":\"rel\",\"name\":\"blocks\"}\n\n{}\n" + base);
  CHECK(r.exit_code == 4);
  CHECK(StartsWith(r.err, "amem ingest: Invalid argument: line 3: "));
  CHECK(s.Stats() == before);
  // A missing file is an I/O error.
  r = s.Run({"ingest", s.dir().Sub("no-such.jsonl")});
  CHECK(r.exit_code == 6);
  CHECK(r.err_lines() == 1);
  // A missing store is reported before the file is read (and nothing is created).
  const std::string nowhere = s.dir().Sub("no-store");
  r = Amem(nowhere, {"ingest", s.dir().Sub("no-such.jsonl")});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("no store at " + nowhere) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(nowhere));
}

TEST_CASE("the demo data ingests", "[tools][ingest][demo]") {
  TempStore s(128);
  int64_t ts = 1700000000;
  for (const char* file : {"1-explore.jsonl", "2-correct.jsonl", "3-next-run.jsonl"}) {
    RunResult r = s.Run({"ingest", std::string(AMEM_SOURCE_DIR) + "/tests/data/demo/" + file,
                         "--ts", std::to_string(ts), "--scope", "amem"});
    INFO(file << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    ts += 600;
  }
  nlohmann::json j = s.Run({"stats", "--json"}).json();
  CHECK(j["revision"] == 3);
  CHECK(j["live_nodes"].get<int>() > 20);
  CHECK(j["custom_relations"] == 1);
}

}  // namespace
}  // namespace amem::testing
