// Drives `amem export|import|verify|info|diff` through the real binary.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "snapshot/format.h"
#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

void RequireRun(const RunResult& r, int code = 0) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == code);
}

void RequireFails(const RunResult& r, int code, const std::string& cmd) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("amem " + cmd + ": ", 0) == 0);
  CHECK(r.out.empty());
}

const char kRun[] =
    R"({"op":"node","key":"file:src/a.cc","type":"file","content":"store code","ts":100,"run":"r1"}
{"op":"node","key":"fact:cache","type":"fact","content":"the cache is enabled","confidence":0.6,"ts":100,"run":"r1"}
{"op":"edge","src":"file:src/a.cc","rel":"defines","dst":"symbol:Put","ts":100}
{"op":"kv","scope":"amem","ns":"decisions","key":"engine","value":"lmdb","ts":100}
)";
const char kCorrection[] =
    R"({"op":"node","key":"fact:cache-v2","type":"correction","content":"the cache is disabled","ts":200,"run":"r2"}
{"op":"edge","src":"fact:cache-v2","rel":"supersedes","dst":"fact:cache","ts":200}
)";

TEST_CASE("export, info and verify a snapshot", "[tools][snapshot]") {
  TempStore s(4);
  RequireRun(s.Run({"ingest", "-"}, kRun));
  std::string file = s.dir() / "run.amem";
  RunResult r = s.Run({"export", file, "--json"});
  RequireRun(r);
  nlohmann::json j = r.json();
  CHECK(j["nodes"] == 3);  // two nodes and the stub symbol:Put
  CHECK(j["stubs"] == 1);
  CHECK(j["edges"] == 1);
  CHECK(j["kv"] == 1);
  CHECK(j["revision"] == 1);

  r = s.Run({"info", file, "--json"});
  RequireRun(r);
  CHECK(r.json().is_object());
  CHECK(r.out.find("\"dimension\":4") != std::string::npos);

  RequireRun(s.Run({"verify", file}));

  // A flipped byte in the content is caught: by the structure checks (5) or by the
  // checksum (1); never exit 0.
  std::string bytes = ReadFile(file);
  std::string bad = s.dir() / "bad.amem";
  bytes[bytes.size() / 2] ^= 0x40;
  WriteFile(bad, bytes);
  r = s.Run({"verify", bad});
  CHECK((r.exit_code == 1 || r.exit_code == 5));

  // A changed edge weight is still a valid record (finite): only the checksum
  // catches it, and that is exit 1.
  bytes = ReadFile(file);
  snapshot::Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  REQUIRE(h.edge_count == 1);
  const size_t weight = snapshot::Header::kEncodedLength +
                        size_t{h.node_count} * snapshot::NodeEntry::kEncodedLength +
                        snapshot::EdgeEntry::kWeightOffset;  // low mantissa byte of edge 0
  bytes[weight] ^= 0x01;
  WriteFile(bad, bytes);
  r = s.Run({"verify", bad});
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("checksum") != std::string::npos);
  r = s.Run({"verify", bad, "--json"});
  CHECK(r.exit_code == 1);
  CHECK(r.json()["structure"] == "ok");
  CHECK(r.json()["checksum"] == "mismatch");

  WriteFile(bad, ReadFile(file).substr(0, 100));
  RequireFails(s.Run({"verify", bad}), 5, "verify");
  RequireFails(s.Run({"verify", s.dir() / "missing.amem"}), 6, "verify");
  RequireFails(s.Run({"info", bad}), 5, "info");
}

TEST_CASE("diff before and after a correction; as-of export", "[tools][snapshot]") {
  TempStore s(4);
  RequireRun(s.Run({"ingest", "-"}, kRun));
  RequireRun(s.Run({"ingest", "-"}, kCorrection));
  std::string before = s.dir() / "before.amem", after = s.dir() / "after.amem";
  RequireRun(s.Run({"export", before, "--as-of", "1"}));
  RequireRun(s.Run({"export", after}));

  RunResult r = s.Run({"diff", before, before});
  RequireRun(r, 0);
  r = s.Run({"diff", before, after, "--json"});
  RequireRun(r, 1);
  nlohmann::json j = r.json();
  REQUIRE(j["nodes"]["added"].size() == 1);
  CHECK(j["nodes"]["added"][0].dump().find("fact:cache-v2") != std::string::npos);
  CHECK(j["nodes"]["removed"].empty());
  REQUIRE(j["edges"]["added"].size() == 1);

  // --at gives the same state as --as-of for the first revision's time.
  std::string at = s.dir() / "at.amem";
  RequireRun(s.Run({"export", at, "--at", "150"}));
  CHECK(ReadFile(at) == ReadFile(before));
  RequireFails(s.Run({"export", at, "--as-of", "1", "--at", "100"}), 2, "export");
  RequireFails(s.Run({"diff", before, s.dir() / "nope.amem"}), 6, "diff");
}

TEST_CASE("import into an empty store reproduces the snapshot byte for byte",
          "[tools][snapshot][import]") {
  TempStore s(4);
  RequireRun(s.Run({"ingest", "-"}, kRun));
  RequireRun(s.Run({"ingest", "-"}, kCorrection));
  std::string first = s.dir() / "first.amem", second = s.dir() / "second.amem";
  RequireRun(s.Run({"export", first}));

  std::string copy = s.dir() / "copy";
  RequireRun(Amem(copy, {"init", "--dimension", "4"}));
  RequireRun(Amem(copy, {"import", first}));
  RequireRun(Amem(copy, {"export", second}));
  CHECK(ReadFile(first) == ReadFile(second));

  // Importing into a store that is not empty is refused and changes nothing.
  std::string stats = s.Stats();
  RunResult r = s.Run({"import", first});
  CHECK(r.exit_code != 0);
  CHECK(r.err_lines() == 1);
  CHECK(s.Stats() == stats);

  // --revision: the store is left at that revision, with no history before it.
  std::string at7 = s.dir() / "at7";
  RequireRun(Amem(at7, {"init", "--dimension", "4"}));
  r = Amem(at7, {"import", first, "--revision", "7", "--revision-ts", "250", "--json"});
  RequireRun(r);
  CHECK(r.json()["revision"] == 7);
  std::string third = s.dir() / "third.amem";
  RequireRun(Amem(at7, {"export", third}));
  CHECK(ReadFile(first) == ReadFile(third));
  RequireRun(Amem(at7, {"get-node", "fact:cache", "--as-of", "7"}));
  RequireRun(Amem(at7, {"get-node", "fact:cache", "--at", "250"}));
  for (std::vector<std::string> before :
       {std::vector<std::string>{"get-node", "fact:cache", "--as-of", "6"},
        std::vector<std::string>{"get-node", "fact:cache", "--at", "249"},
        std::vector<std::string>{"log"}}) {
    r = Amem(at7, before);
    RequireFails(r, 4, before[0]);
    CHECK(r.err.find("the store was imported from a snapshot of revision 7; history before "
                     "it is not in this store") != std::string::npos);
  }
  RequireRun(Amem(at7, {"log", "--since-rev", "7"}));

  // A store bound to a stream refuses: the import would not be in the stream.
  std::string bound = s.dir() / "bound";
  RequireRun(Amem(bound, {"init", "--dimension", "4"}));
  {
    std::ofstream f(bound + "/remote.json");
    f << R"({"servers":["nats://127.0.0.1:9"],"stream":"team","replicas":1})" << "\n";
  }
  RequireFails(Amem(bound, {"import", first}), 4, "import");
  RequireFails(Amem(bound, {"import", first, "--revision", "0"}), 2, "import");
  r = Amem(bound, {"stats", "--json"});
  RequireRun(r);
  CHECK(r.json()["revision"] == 0);
}

}  // namespace
}  // namespace amem::testing
