// The tools on damaged snapshot files (the reliability audit, defects 5, 6 and part of 8): a
// damaged index or content frame gives exit 5 (MCP: an error) instead of an answer
// with exit 0; verify says when a file carries no checksum; verify on a directory
// or a FIFO answers at once.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "common/coding.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

// A store with a few linked memories, exported to `file`.
void MakeSnapshot(const TempStore& t, const std::string& file) {
  for (int i = 0; i < 6; ++i) {
    const std::string k = "fact:v" + std::to_string(i);
    REQUIRE(t.Run({"put-node", k, "--type", "fact", "--content",
                   "retry policy number " + std::to_string(i) + " for the cache layer"})
                .exit_code == 0);
    if (i > 0) {
      REQUIRE(t.Run({"put-edge", "fact:v" + std::to_string(i - 1), "supports", k}).exit_code == 0);
    }
  }
  REQUIRE(t.Run({"export", file}).exit_code == 0);
}

// Offset of the body of block `tag` in the file's bytes.
size_t BodyOf(const std::string& bytes, snapshot::BlockTag tag) {
  auto r = snapshot::Reader::OpenBuffer(bytes);
  REQUIRE(r.ok());
  for (const snapshot::BlockInfo& b : (*r)->blocks()) {
    if (b.tag == static_cast<uint32_t>(tag)) return b.offset + snapshot::kBlockHeaderLength;
  }
  FAIL("block missing");
  return 0;
}

void FlipContent(const std::string& path) {
  std::string bytes = ReadFile(path);
  snapshot::Header h;
  REQUIRE(h.DecodeFrom(bytes).ok());
  bytes[h.content_offset + h.content_length / 2] ^= 0x10;
  snapshot_test::RedoPageChecksums(&bytes);  // the damage then meets the content frame's checks
  WriteFile(path, bytes);
}

}  // namespace

TEST_CASE("A query on a snapshot with a damaged key order exits 5", "[cli][hardening]") {
  TempStore t;
  const std::string file = t.dir().Sub("a.amem");
  MakeSnapshot(t, file);
  const std::string queries = t.dir().Sub("q.jsonl");
  REQUIRE(t.Run({"--query-log", queries, "traverse", "fact:v1", "--snapshot", file}).exit_code ==
          0);
  std::string bytes = ReadFile(file);
  const size_t body = BodyOf(bytes, snapshot::BlockTag::kNodeKeys);
  for (size_t k = 0; k < 3; ++k) {  // the 6 nodes' key order, reversed
    const uint32_t a = DecodeFixed32(bytes.data() + body + 4 * k);
    EncodeFixed32(bytes.data() + body + 4 * k, DecodeFixed32(bytes.data() + body + 4 * (5 - k)));
    EncodeFixed32(bytes.data() + body + 4 * (5 - k), a);
  }
  snapshot_test::RedoPageChecksums(&bytes);  // past the pages, to the order's checks
  WriteFile(file, bytes);
  REQUIRE(snapshot::Reader::Open(file).ok());  // still opens: only the order is wrong
  RunResult r = t.Run({"traverse", "fact:v1", "--snapshot", file});
  CHECK(r.exit_code == 5);
  CHECK(r.out.empty());
  CHECK(r.err.find("node keys") != std::string::npos);
  // Asking recorded queries again on it is refused the same way.
  r = t.Run({"replay-queries", queries, "--snapshot", file});
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("node keys") != std::string::npos);
  // verify names the block too, as a structural failure.
  RunResult v = t.Run({"verify", file});
  CHECK(v.exit_code == 5);
  CHECK(v.err.find("node keys") != std::string::npos);
}

TEST_CASE("Damaged content is exit 5 for every command that shows content",
          "[cli][hardening]") {
  TempStore t;
  const std::string file = t.dir().Sub("a.amem"), copy = t.dir().Sub("b.amem");
  MakeSnapshot(t, file);
  WriteFile(copy, ReadFile(file));
  FlipContent(file);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"context", "fact:v1", "--snapshot", file},
        {"context", "fact:v1", "--snapshot", file, "--json"},
        {"traverse", "fact:v1", "--snapshot", file},
        {"text-search", "retry policy", "--snapshot", file},
        {"search", "--snapshot", file},
        {"diff", copy, file},
        {"diff", file, copy}}) {
    RunResult r = t.Run(args);
    INFO(args[0] << " " << args[1] << ": " << r.out << r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.out.empty());
    CHECK(r.err.find("content block") != std::string::npos);
  }
  // The intact copy still answers.
  CHECK(t.Run({"context", "fact:v1", "--snapshot", copy}).exit_code == 0);
}

TEST_CASE("MCP never answers empty texts from damaged content: the store's own file is exported again",
          "[mcp][hardening]") {
  TempStore t;
  MakeSnapshot(t, t.dir().Sub("a.amem"));
  // The first query exports the store's own snapshot; damage that file in place.
  REQUIRE(t.Run({"text-search", "retry"}).exit_code == 0);
  std::string current;
  for (const auto& e : std::filesystem::recursive_directory_iterator(t.store())) {
    if (e.path().extension() == ".amem") current = e.path().string();
  }
  REQUIRE(!current.empty());
  FlipContent(current);
  const std::string input =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
      "\n"
      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"context","arguments":{"seeds":["fact:v1"]}}})"
      "\n";
  RunResult r = t.Run({"mcp", "--tools", "all"}, input);
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  nlohmann::json reply;
  for (size_t at = 0; at < r.out.size();) {
    const size_t end = r.out.find('\n', at);
    auto line = nlohmann::json::parse(r.out.substr(at, end - at));
    if (line.contains("id") && line["id"] == 2) reply = line;
    at = end == std::string::npos ? r.out.size() : end + 1;
  }
  CHECK(reply["id"] == 2);
  // The store's snapshot is a cache of the store: the damaged file is discarded,
  // said on stderr, and the answer comes from a new export.
  CHECK(reply["result"]["isError"] == false);
  CHECK(reply["result"]["content"][0]["text"].get<std::string>().find(
            "retry policy number 1 for the cache layer") != std::string::npos);
  CHECK(r.err.find("content block") != std::string::npos);
  CHECK(r.err.find("discarded current.rev, current.amem") != std::string::npos);
  CHECK(t.Run({"verify", current}).exit_code == 0);
}

TEST_CASE("verify says NO CHECKSUM and exits 1 for a file without one", "[cli][hardening]") {
  TempStore t;
  const std::string file = t.dir().Sub("a.amem");
  MakeSnapshot(t, file);
  RunResult ok = t.Run({"verify", file});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("ok (structure and checksum)") != std::string::npos);
  // Clearing the header's index flag and feature bits hides the checksum block.
  std::string bytes = ReadFile(file);
  EncodeFixed16(bytes.data() + 6,
                static_cast<uint16_t>(DecodeFixed16(bytes.data() + 6) & ~snapshot::kFlagHasIndexes));
  EncodeFixed32(bytes.data() + 56, 0);
  WriteFile(file, bytes);
  RunResult r = t.Run({"verify", file});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("NO CHECKSUM") != std::string::npos);
  RunResult j = t.Run({"verify", file, "--json"});
  CHECK(j.exit_code == 1);
  CHECK(j.json()["checksum"] == "none");
  CHECK(j.json()["ok"] == false);
  RunResult allowed = t.Run({"verify", file, "--allow-no-checksum"});
  CHECK(allowed.exit_code == 0);
  CHECK(allowed.out.find("NO CHECKSUM") != std::string::npos);
}

TEST_CASE("verify and queries refuse a directory and a FIFO at once", "[cli][hardening]") {
  TempStore t;
  const std::string fifo = t.dir().Sub("pipe.amem");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {t.dir().path(), fifo}) {
    RunResult v = t.Run({"verify", path});
    INFO(path << ": " << v.err);
    CHECK(v.exit_code == 4);
    CHECK(v.err.find("not a snapshot file") != std::string::npos);
    RunResult q = t.Run({"search", "--snapshot", path});
    CHECK(q.exit_code == 4);
    RunResult i = t.Run({"info", path});
    CHECK(i.exit_code == 4);
  }
}

}  // namespace amem::testing
