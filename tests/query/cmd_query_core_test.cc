// The query-core CLI commands through the real binary: JSON fields, text output,
// the current snapshot following store writes, --snapshot, --as-of, bad arguments.
#include <catch2/catch.hpp>

#include "tests/tools/amem_runner.h"

namespace amem::testing {
namespace {

void RequireOk(const RunResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.err.empty());
}

void RequireError(const RunResult& r, int code, const std::string& cmd) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("amem " + cmd + ": ", 0) == 0);
  CHECK(r.out.empty());
}

const char* kGraph =
    R"({"op":"node","key":"fact:a","type":"fact","content":"A is true","ts":100}
{"op":"node","key":"inference:b","type":"inference","content":"so B","ts":200}
{"op":"node","key":"decision:c","type":"decision","content":"do C","ts":300}
{"op":"edge","src":"inference:b","rel":"caused_by","dst":"fact:a"}
{"op":"edge","src":"inference:b","rel":"supports","dst":"decision:c"}
)";

TEST_CASE("query-core commands answer on the store's current snapshot", "[query][cli]") {
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
  std::filesystem::copy_file(s.store() + "/current.amem", s.dir() / "x.amem");
  r = s.Run({"--json", "resolve", "fact:a", "--snapshot", s.dir() / "x.amem"});
  RequireOk(r);
  CHECK(r.json()["current"]["key"] == "fact:a2");
}

TEST_CASE("query-core commands reject bad arguments with one line", "[query][cli]") {
  TempStore s;
  RequireOk(s.Run({"ingest", "-"}, kGraph));
  RequireError(s.Run({"traverse", "fact:missing"}), 3, "traverse");
  RequireError(s.Run({"traverse", "fact:a", "--direction", "up"}), 4, "traverse");
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
