// The CLI against the inputs of the reliability audit: deep JSON
// nesting, far-future timestamps, reads in a directory that is not a store, a
// snapshot from a newer format, and the exit code of a conflict.
#include <catch2/catch.hpp>

#include <ctime>
#include <filesystem>
#include <string>

#include "common/json_parse.h"
#include "snapshot/format.h"
#include "tests/cli/amem_runner.h"
#include "tools/cli/command.h"

namespace amem::testing {
namespace {

std::string Nested(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

}  // namespace

TEST_CASE("deep JSON nesting is refused with exit 4 and changes nothing", "[cli][hardening]") {
  TempStore t;
  const std::string before = t.Stats();
  // An edge payload nested 300,000 deep once crashed amem ingest (SIGSEGV).
  const std::string file = t.dir().Sub("deep.jsonl");
  WriteFile(file,
            R"({"op":"node","key":"fact:a","type":"fact","content":"a"})"
            "\n"
            R"({"op":"edge","src":"fact:a","rel":"supports","dst":"fact:a","payload":)" +
                Nested(300000) + "}\n");
  RunResult r = t.Run({"ingest", file});
  INFO(r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("line 2") != std::string::npos);
  CHECK(r.err.find("nested deeper than 64 levels") != std::string::npos);
  CHECK(t.Stats() == before);

  // At the limit is fine; one more level is not (--meta and --payload alike).
  std::string at_limit = "{\"a\":" + Nested(kMaxJsonDepth - 1) + "}";
  std::string past_limit = "{\"a\":" + Nested(kMaxJsonDepth) + "}";
  REQUIRE(t.Run({"put-node", "fact:ok", "--type", "fact"}).exit_code == 0);
  r = t.Run({"put-edge", "fact:ok", "supports", "fact:ok", "--payload", at_limit});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  r = t.Run({"put-edge", "fact:ok", "caused_by", "fact:ok", "--payload", past_limit});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("nested deeper than 64 levels") != std::string::npos);
  r = t.Run({"put-node", "fact:deep", "--type", "fact", "--meta", past_limit});
  CHECK(r.exit_code == 4);
  CHECK(t.Run({"get-node", "fact:deep"}).exit_code == 3);
}

TEST_CASE("a timestamp far in the future is refused; the clock never freezes",
          "[cli][hardening]") {
  TempStore t;
  const std::string before = t.Stats();
  // Milliseconds by mistake.
  RunResult r = t.Run({"put-node", "fact:ms", "--type", "fact", "--ts", "1700000000000"});
  INFO(r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("more than a day past the clock") != std::string::npos);
  CHECK(r.err.find("Unix seconds") != std::string::npos);
  CHECK(t.Stats() == before);
  const std::string ingest = t.dir().Sub("future.jsonl");
  WriteFile(ingest, R"({"op":"node","key":"fact:f","type":"fact","ts":99999999999})"
                    "\n");
  r = t.Run({"ingest", ingest});
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("line 1") != std::string::npos);
  CHECK(t.Stats() == before);

  // An hour ahead (clock skew) is accepted; a later write without ts is stamped
  // with its own time, and --at now finds it.
  const int64_t now = std::time(nullptr);
  REQUIRE(t.Run({"put-node", "fact:skew", "--type", "fact", "--ts", std::to_string(now + 3600)})
              .exit_code == 0);
  REQUIRE(t.Run({"put-node", "fact:later", "--type", "fact"}).exit_code == 0);
  r = t.Run({"get-node", "fact:later", "--json"});
  REQUIRE(r.exit_code == 0);
  const int64_t stamped = r.json()["updated_ts"].get<int64_t>();
  CHECK(stamped >= now);
  CHECK(stamped < now + 600);
  r = t.Run({"get-node", "fact:later", "--at", std::to_string(now + 3600)});
  CHECK(r.exit_code == 0);
}

TEST_CASE("reads in a directory that is not a store create nothing", "[cli][hardening]") {
  TempDir dir;
  const std::string src = dir.Sub("src");
  std::filesystem::create_directories(src);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"get-node", "x"}, {"stats"}, {"text-search", "retry"}, {"changes", "--since-rev", "0"}}) {
    RunResult r = Amem(src, args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("no store") != std::string::npos);
    CHECK(r.err.find("amem init") != std::string::npos);
  }
  CHECK(std::filesystem::is_empty(src));
}

TEST_CASE("a snapshot of a newer format is NotSupported (exit 7), not corruption",
          "[cli][hardening]") {
  TempStore t;
  REQUIRE(t.Run({"put-node", "fact:a", "--type", "fact", "--content", "a"}).exit_code == 0);
  const std::string file = t.dir().Sub("a.amem");
  REQUIRE(t.Run({"export", file}).exit_code == 0);
  std::string bytes = ReadFile(file);
  bytes[snapshot::Header::kVersionOffset] = static_cast<char>(snapshot::kFormatVersion + 1);
  bytes[snapshot::Header::kVersionOffset + 1] = 0;
  WriteFile(file, bytes);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"info", file}, {"verify", file}, {"traverse", "fact:a", "--snapshot", file}}) {
    RunResult r = t.Run(args);
    INFO(args[0] << ": " << r.err);
    CHECK(r.exit_code == 7);
    CHECK(r.err.find("newer than this build reads") != std::string::npos);
  }
}

TEST_CASE("a conflict has its own exit code", "[cli][hardening]") {
  CHECK(cli::ExitCodeForStatus(Status::Aborted("another writer committed")) == 8);
  CHECK(cli::ExitCodeForStatus(Status::IOError("disk")) == 6);
  CHECK(std::string(cli::ExitCodeHelp()).find("8 conflict") != std::string::npos);
}

}  // namespace amem::testing
