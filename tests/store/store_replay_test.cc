// Store::ReadHistory and Store::ApplyRevisions (docs/LOG.md): a random history,
// logged as text and replayed into a fresh store, gives byte-identical snapshots
// at every revision, the same change log and the same log; bad logs are refused
// with nothing written.
#include <catch2/catch.hpp>

#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "snapshot/writer.h"
#include "tests/store/random_history.h"
#include "tests/store/store_test_util.h"
#include "tools/io/history_log.h"
#include "tools/io/json_records.h"

using namespace amem;
using amem::testing::History;
using amem::testing::Must;
using amem::testing::TempDir;

namespace {

std::string Export(const Store& store, uint64_t rev) {
  return Must(snapshot::BuildSnapshot(Must(store.ReadState(ReadView::AtRevision(rev)))));
}

std::string Log(const Store& store, uint64_t since = 0, uint64_t until = 0) {
  std::string text;
  Status s = store.ReadHistory(since, until, [&](const LoggedRevision& r) {
    io::AppendLogLines(r, &text);
    return Status::OK();
  });
  INFO(s.ToString());
  REQUIRE(s.ok());
  return text;
}

std::string Changes(const Store& store) {
  std::string text;
  for (const Change& c : Must(store.ChangesSinceRevision(0))) {
    text += io::ChangeToJson(c).dump() + "\n";
  }
  return text;
}

Status Replay(Store* store, const std::string& text) {
  auto log = io::ParseLog(text);
  if (!log.ok()) return log.status();
  auto rev = store->ApplyRevisions(log->revisions);
  return rev.ok() ? Status::OK() : io::ReplayErrorToLine(rev.status(), *log);
}

std::string Line(std::string_view text, size_t n) {  // 1-based, without "\n"
  size_t start = 0;
  for (size_t k = 1; k < n; ++k) start = text.find('\n', start) + 1;
  return std::string(text.substr(start, text.find('\n', start) - start));
}

}  // namespace

TEST_CASE("replay: a random history replays to identical exports and logs",
          "[replay][store]") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    TempDir dir;
    auto original = testing::OpenStore(dir / "a");
    History history(seed, /*per_op_attribution=*/true);
    history.Grow(original.get(), 300);
    const uint64_t head = original->revision().value();
    const std::string log = Log(*original);

    auto copy = testing::OpenStore(dir / "b");
    Status s = Replay(copy.get(), log);
    INFO(s.ToString());
    REQUIRE(s.ok());
    REQUIRE(copy->revision().value() == head);
    for (uint64_t k = 0; k < 20; ++k) {
      const uint64_t rev = 1 + (k * 7919 + seed) % head;
      INFO("revision " << rev);
      CHECK(Export(*copy, rev) == Export(*original, rev));
    }
    CHECK(Export(*copy, head) == Export(*original, head));
    CHECK(Log(*copy) == log);
    CHECK(Changes(*copy) == Changes(*original));
  }
}

TEST_CASE("replay: a log in parts continues the store it was cut from", "[replay][store]") {
  TempDir dir;
  auto original = testing::OpenStore(dir / "a");
  History history(7, true);
  history.Grow(original.get(), 60);
  auto copy = testing::OpenStore(dir / "b");
  REQUIRE(Replay(copy.get(), Log(*original, 0, 25)).ok());
  CHECK(copy->revision().value() == 25);
  REQUIRE(Replay(copy.get(), Log(*original, 25)).ok());
  CHECK(copy->revision().value() == 60);
  CHECK(Export(*copy, 60) == Export(*original, 60));
  CHECK(Log(*copy, 10, 30) == Log(*original, 10, 30));
}

TEST_CASE("replay: a compacted store (tombstones removed) still logs and replays",
          "[replay][store]") {
  TempDir dir;
  auto original = testing::OpenStore(dir / "a");
  History history(13, true);
  history.Grow(original.get(), 120);
  auto report = Must(original->Compact());
  CHECK(report.tombstones_removed > 0);
  auto copy = testing::OpenStore(dir / "b");
  Status s = Replay(copy.get(), Log(*original));
  INFO(s.ToString());
  REQUIRE(s.ok());
  for (uint64_t rev : {1u, 30u, 60u, 90u, 120u}) {
    INFO("revision " << rev);
    CHECK(Export(*copy, rev) == Export(*original, rev));
  }
  SECTION("history dropped by compaction cannot be logged") {
    Must(original->Compact({.dry_run = false, .drop_history_before = 50}));
    Status cut = original->ReadHistory(0, 0, [](const LoggedRevision&) { return Status::OK(); });
    CHECK(cut.IsInvalidArgument());
    CHECK(cut.message().find("--since-rev 49") != std::string::npos);
    CHECK(original->ReadHistory(49, 0, [](const LoggedRevision&) { return Status::OK(); }).ok());
  }
}

TEST_CASE("replay: a revision with a put then a delete of one item", "[replay][store]") {
  TempDir dir;
  auto original = testing::OpenStore(dir / "a");
  Batch b;
  NodeInput n = testing::Node("k", "first", NodeType::kDecision);
  n.ts = 100;
  b.PutNode(n);
  n.content = "second";
  n.ts = 200;
  b.PutNode(n);
  b.DeleteNode("k");
  n.content = "third";
  n.ts = 300;
  b.PutNode(n);
  n.ts = 400;
  b.PutNode(n);
  b.PutEdge(testing::Edge("k", "supports", "j"));
  b.DeleteEdge("k", "supports", "j");
  REQUIRE(original->Apply(b, testing::At(500)).ok());
  auto copy = testing::OpenStore(dir / "b");
  REQUIRE(Replay(copy.get(), Log(*original)).ok());
  CHECK(Export(*copy, 1) == Export(*original, 1));
  auto node = Must(copy->GetNode("k"));
  CHECK(node.created_ts == 300);
  CHECK(node.updated_ts == 400);
  CHECK(Changes(*copy) == Changes(*original));
}

TEST_CASE("replay: bad logs are refused, naming the line, with nothing written",
          "[replay][store]") {
  TempDir dir;
  auto original = testing::OpenStore(dir / "a");
  History history(11, true);
  history.Grow(original.get(), 12);
  const std::string log = Log(*original);
  auto copy = testing::OpenStore(dir / "b");
  REQUIRE(Replay(copy.get(), Log(*original, 0, 3)).ok());
  const std::string before = Export(*copy, 3);

  // Commit times after the history's (which took the clock), within the day of
  // skew the store accepts.
  const int64_t now = std::time(nullptr);
  auto with_ts = [&](std::string text) {
    for (auto [mark, value] : {std::pair{"@TS1@", now + 3601}, std::pair{"@TS@", now + 3600}}) {
      for (size_t at; (at = text.find(mark)) != std::string::npos;) {
        text.replace(at, std::strlen(mark), std::to_string(value));
      }
    }
    return text;
  };
  auto refused = [&](const std::string& raw_text, const std::string& raw_expected) {
    const std::string text = with_ts(raw_text), expected = with_ts(raw_expected);
    Status s = Replay(copy.get(), text);
    INFO(s.ToString());
    CHECK(s.IsInvalidArgument());
    CHECK(s.message().find(expected) != std::string::npos);
    CHECK(copy->revision().value() == 3);
    CHECK(Export(*copy, 3) == before);
  };
  const std::string rest = Log(*original, 3);
  const std::string first = Line(rest, 1);
  SECTION("a log that does not continue the store") {
    refused(log, "line 1: revision 1: does not continue the store");
    refused(Log(*original, 4), "does not continue the store, which is at revision 3");
  }
  SECTION("a truncated line") {
    refused(rest + first.substr(0, first.size() / 2) + "\n", "malformed JSON");
    refused(first.substr(0, first.size() - 1), "line 1: malformed JSON");
  }
  SECTION("a missing revision") {
    std::string gap = Log(*original, 3, 4) + Log(*original, 5);
    refused(gap, "revision 6 follows revision 4: revision 5 is missing");
  }
  SECTION("revisions out of order") {
    refused(Log(*original, 5) + Log(*original, 3, 5), "revisions must ascend");
  }
  SECTION("an unknown op") {
    refused(R"({"rev":4,"rev_ts":@TS@,"op":"frobnicate","key":"x"})" "\n",
            "line 1: unknown op \"frobnicate\"");
  }
  SECTION("a line without a revision") {
    refused(R"({"op":"node","key":"x","type":"fact"})" "\n", "missing field \"rev\"");
  }
  SECTION("values the store refuses") {
    refused("\n" R"({"rev":4,"rev_ts":@TS@,"op":"node","key":"x","type":"fact"})" "\n"
            R"({"rev":4,"rev_ts":@TS@,"op":"node","key":"y","type":"fact","vector":[1,2]})"
            "\n",
            "line 3: vector");
    refused(R"({"rev":4,"rev_ts":@TS@,"op":"edge","src":"a","rel":"nope","dst":"b"})" "\n",
            "line 1: unknown relation");
  }
  SECTION("an operation that changes nothing") {
    refused(R"({"rev":4,"rev_ts":@TS@,"op":"del_node","key":"never-written"})" "\n",
            "line 1: revision 4: 1 of its 1 operations change nothing");
  }
  SECTION("commit times that go back") {
    refused(R"({"rev":4,"rev_ts":-5,"op":"node","key":"x","type":"fact"})" "\n",
            "line 1: revision 4: commit time -5 is before revision 3's");
  }
  SECTION("one revision with two commit times") {
    refused(R"({"rev":4,"rev_ts":@TS@,"op":"node","key":"x","type":"fact"})" "\n"
            R"({"rev":4,"rev_ts":@TS1@,"op":"node","key":"y","type":"fact"})" "\n",
            "line 2: rev_ts @TS1@ differs");
  }
}
