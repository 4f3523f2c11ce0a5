#include "snapshot/live.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <thread>
#include <vector>

#include "common/coding.h"
#include "common/files.h"
#include "common/hash.h"
#include "snapshot/delta.h"
#include "snapshot/export.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "tests/sanitizer.h"
#include "tests/snapshot/reader_compare.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/store/random_history.h"
#include "tests/store/store_test_util.h"

using namespace amem;
using namespace amem::snapshot;
using amem::testing::TempDir;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `bytes` as an amem before the code-aware tokenizer labelled them: format version
// 1, the checksum (FORMAT.md §8.21: over every byte before its block header) redone.
std::string AsVersion1(std::string bytes) {
  bytes[Header::kVersionOffset] = 1;
  bytes[Header::kVersionOffset + 1] = 0;
  snapshot_test::RedoPageChecksums(&bytes);
  const size_t sum_at = bytes.size() - 8;
  std::string sum;
  PutFixed64(&sum, Hash64(std::string_view(bytes).substr(0, sum_at - 8)));
  bytes.replace(sum_at, 8, sum);
  return bytes;
}

std::string Hex16(uint64_t x) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(x));
  return hex;
}

// current.rev as amem writes it for revision `rev` of `store` and the base now in
// place: "B <identity> <the base's checksum block>\n".
std::string RevText(const Store& store, uint64_t rev) {
  const std::string base = ReadFile(store.path() + "/current.amem");
  const uint64_t fingerprint = base.size() < 8 ? 0 : DecodeFixed64(base.data() + base.size() - 8);
  return std::to_string(rev) + " " + Hex16(store.RevisionIdentity(rev).value()) + " " +
         Hex16(fingerprint) + "\n";
}

// snapshots/rev-R-ID.amem of `store`.
std::string PastPath(const Store& store, const std::string& dir, uint64_t rev) {
  std::string text = RevText(store, rev);
  return dir + "/snapshots/rev-" + std::to_string(rev) + "-" + text.substr(text.find(' ') + 1, 16) +
         ".amem";
}

WriteOptions At(int64_t ts) {
  WriteOptions w;
  w.ts = ts;
  return w;
}

}  // namespace

TEST_CASE("current snapshot is exported once per store revision", "[snapshot][live]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "first"), At(100)).ok());

  auto first = EnsureSnapshot(*store);
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  CHECK(first->exported);
  CHECK(first->revision == 1);
  CHECK(first->path == dir.path() + "/current.amem");
  CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, 1));
  {
    auto reader = snapshot::Reader::Open(first->path);
    REQUIRE(reader.ok());
    CHECK((*reader)->node_count() == 1);
  }

  auto again = EnsureSnapshot(*store);
  REQUIRE(again.ok());
  CHECK_FALSE(again->exported);  // fresh: not rewritten

  REQUIRE(store->PutNode(amem::testing::Node("fact:b", "second"), At(200)).ok());
  auto stale = EnsureSnapshot(*store);
  REQUIRE(stale.ok());
  CHECK(stale->exported);
  CHECK(stale->revision == 2);
  auto reader = snapshot::Reader::Open(stale->path);
  REQUIRE(reader.ok());
  CHECK((*reader)->node_count() == 2);

  // A past revision goes to its own cached file and leaves current alone.
  auto old = EnsureSnapshot(*store, ReadView::AtRevision(1));
  REQUIRE(old.ok());
  CHECK(old->exported);
  CHECK(old->path == PastPath(*store, dir.path(), 1));
  auto old_reader = snapshot::Reader::Open(old->path);
  REQUIRE(old_reader.ok());
  CHECK((*old_reader)->node_count() == 1);
  CHECK_FALSE(EnsureSnapshot(*store, ReadView::AtRevision(1))->exported);
  auto by_time = EnsureSnapshot(*store, ReadView::AtTime(150));
  REQUIRE(by_time.ok());
  CHECK(by_time->revision == 1);
  CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, 2));

  // A damaged rev file only causes a re-export.
  std::ofstream(dir.path() + "/current.rev") << "garbage";
  auto repaired = EnsureSnapshot(*store);
  REQUIRE(repaired.ok());
  CHECK(repaired->exported);
  CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, 2));
  // By directory, as the CLI does (after closing ours: LMDB allows one open
  // environment per process).
  REQUIRE(store->PutNode(amem::testing::Node("fact:c"), At(300)).ok());
  store.reset();
  auto by_dir = EnsureSnapshot(dir.path());
  REQUIRE(by_dir.ok());
  CHECK(by_dir->exported);
  CHECK(by_dir->revision == 3);
  // No temporary files are left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().string().find(".tmp") == std::string::npos);
  }
}

TEST_CASE("current snapshot: concurrent callers agree and a missing store is NotFound",
          "[snapshot][live]") {
  TempDir dir;
  // One Store shared by the threads: LMDB forbids opening one environment twice
  // in a process. The flock is per open file, so the threads still contend for it
  // as processes would.
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a"), At(1)).ok());
  std::vector<std::thread> threads;
  std::vector<int> exported(4, -1);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto f = EnsureSnapshot(*store);
      exported[t] = f.ok() ? (f->exported ? 1 : 0) : -1;
    });
  }
  for (auto& th : threads) th.join();
  int total = 0;
  for (int e : exported) {
    CHECK(e >= 0);
    total += e;
  }
  CHECK(total == 1);  // exactly one of them exported

  auto none = EnsureSnapshot(dir.Sub("nope"));
  CHECK(none.status().IsNotFound());
}

TEST_CASE("past snapshots are cached up to a limit, the least recently used removed first",
          "[snapshot][live]") {
  namespace fs = std::filesystem;
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  for (int i = 1; i <= 8; ++i) {
    REQUIRE(store->PutNode(amem::testing::Node("fact:n" + std::to_string(i), "v"), At(100 * i))
                .ok());
  }
  auto path = [&](int rev) {
    return PastPath(*store, dir.path(), rev);
  };
  // Last used `seconds` ago (the mtime is the LRU clock).
  auto used_ago = [&](int rev, int seconds) {
    fs::last_write_time(path(rev),
                        fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
  };
  auto cached = [&] {
    std::vector<int> revs;
    for (int r = 1; r <= 8; ++r) {
      if (fs::exists(path(r))) revs.push_back(r);
    }
    return revs;
  };
  REQUIRE(kMaxCachedSnapshots == 4);
  for (int r = 1; r <= 4; ++r) REQUIRE(EnsureSnapshot(*store, ReadView::AtRevision(r))->exported);
  CHECK(cached() == std::vector<int>{1, 2, 3, 4});
  used_ago(1, 400);
  used_ago(2, 300);
  used_ago(3, 200);
  used_ago(4, 100);
  // A use makes rev-1 the most recent; a fifth snapshot then pushes out rev-2.
  CHECK_FALSE(EnsureSnapshot(*store, ReadView::AtRevision(1))->exported);
  CHECK(EnsureSnapshot(*store, ReadView::AtRevision(5))->exported);
  CHECK(cached() == std::vector<int>{1, 3, 4, 5});
  used_ago(1, 50);
  used_ago(5, 40);
  CHECK(EnsureSnapshot(*store, ReadView::AtRevision(6))->exported);
  CHECK(cached() == std::vector<int>{1, 4, 5, 6});
  // The bound holds in a burst too: files just used go as well, oldest use first.
  for (int r : {1, 4, 5, 6}) fs::last_write_time(path(r), fs::file_time_type::clock::now());
  used_ago(4, 1);
  CHECK(EnsureSnapshot(*store, ReadView::AtRevision(7))->exported);
  CHECK(cached() == std::vector<int>{1, 5, 6, 7});
  // A bound in bytes: with room for two files, two stay.
  LiveOptions two;
  two.max_cached_bytes = fs::file_size(path(7)) * 2 + fs::file_size(path(7)) / 2;
  CHECK(EnsureSnapshot(*store, ReadView::AtRevision(2), two)->exported);
  CHECK(cached().size() == 2);
  // Every answer still reads right after evictions.
  auto r2 = EnsureSnapshot(*store, ReadView::AtRevision(2));
  REQUIRE(r2.ok());
  auto reader = snapshot::Reader::Open(r2->path);
  REQUIRE(reader.ok());
  CHECK((*reader)->node_count() == 2);
}

TEST_CASE("a base written before the embeddings block is rebuilt once", "[snapshot][live]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "retry policy cache"), At(100)).ok());
  REQUIRE(store->PutNode(amem::testing::Node("fact:b", "graph memory"), At(200)).ok());
  // current.amem as an older amem wrote it: everything but the embeddings block.
  auto state = store->ReadState();
  REQUIRE(state.ok());
  WriterOptions old_writer;
  old_writer.embeddings = false;
  auto bytes = BuildSnapshot(*state, old_writer);
  REQUIRE(bytes.ok());
  std::ofstream(dir.path() + "/current.amem", std::ios::binary) << *bytes;
  std::ofstream(dir.path() + "/current.rev") << RevText(*store, 2);

  LiveOptions options;
  auto first = OpenLive(*store, ReadView::Latest(), options);
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  CHECK(first->exported);
  CHECK((first->reader->features() & kFeatureEmbeddings) != 0);
  std::span<const uint32_t> entries;
  CHECK(first->reader->embedding(0, &entries));
  CHECK_FALSE(entries.empty());
  // Then it is the base like any other: not rebuilt again.
  auto second = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(second.ok());
  CHECK_FALSE(second->exported);
}

TEST_CASE("a base or cached file from the former tokenizer (version 1) is rebuilt once",
          "[snapshot][live][tokenizer]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "WriteBatch is atomic"), At(100)).ok());
  auto state = store->ReadState();
  REQUIRE(state.ok());
  auto bytes = BuildSnapshot(*state);
  REQUIRE(bytes.ok());
  const std::string old = AsVersion1(*bytes);
  {
    // Read as it is: a valid file of the older version.
    auto r = Reader::OpenBuffer(old);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK((*r)->version() == 1);
    CHECK((*r)->Verify().ok());
  }
  // Without a term index the writer keeps the seed's version (no word written).
  WriterOptions plain;
  plain.term_index = false;
  auto plain_bytes = BuildSnapshot(*state, plain);
  REQUIRE(plain_bytes.ok());
  CHECK(Reader::OpenBuffer(*plain_bytes).value()->version() == kSeedFormatVersion);

  const std::string current = dir.path() + "/current.amem";
  auto install_old = [&] {
    std::ofstream(current, std::ios::binary | std::ios::trunc) << old;
    std::ofstream(dir.path() + "/current.rev", std::ios::trunc) << RevText(*store, 1);
  };
  install_old();
  auto file = EnsureSnapshot(*store);
  REQUIRE(file.ok());
  CHECK(file->exported);  // fresh by revision, but of the older version
  CHECK(Reader::Open(current).value()->version() == kFormatVersion);
  CHECK_FALSE(EnsureSnapshot(*store)->exported);

  install_old();
  LiveOptions options;
  auto first = OpenLive(*store, ReadView::Latest(), options);
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  CHECK(first->exported);
  CHECK(first->reader->version() == kFormatVersion);
  CHECK(first->reader->FindTerm("batch").has_value());  // a part of WriteBatch
  auto second = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(second.ok());
  CHECK_FALSE(second->exported);
}

TEST_CASE("the delta cache names the commits at its base and head; another history's is not read",
          "[snapshot][live][identity]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "alpha"), At(100)).ok());
  REQUIRE(EnsureSnapshot(*store).ok());  // the base, at revision 1
  REQUIRE(store->PutNode(amem::testing::Node("fact:b", "bravo"), At(200)).ok());
  LiveOptions options;
  options.merge_fraction = 1e6;  // a delta however large next to this tiny base
  auto live = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(live.ok());
  CHECK(live->compiled);
  CHECK(live->note.empty());
  auto base = Reader::Open(dir.path() + "/current.amem");
  REQUIRE(base.ok());
  const std::string delta_path = dir.path() + "/current.amdl";
  auto delta = Delta::Open(delta_path, **base);
  REQUIRE(delta.ok());
  CHECK((*delta)->base_identity() == store->RevisionIdentity(1).value());
  CHECK((*delta)->head_identity() == store->RevisionIdentity(2).value());
  // Read from the file by the next call.
  auto again = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(again.ok());
  CHECK_FALSE(again->compiled);

  // The same delta with another head commit named (checksum redone): compiled again.
  std::string bytes = ReadFile(delta_path);
  bytes[56] ^= 0x01;  // head_identity (docs/FORMAT.md §11.1)
  const size_t sum_at = bytes.size() - 8;
  std::string sum;
  PutFixed64(&sum, Hash64(bytes.data(), sum_at - 8, 0));
  bytes.replace(sum_at, 8, sum);
  std::ofstream(delta_path, std::ios::binary | std::ios::trunc) << bytes;
  REQUIRE(Delta::Open(delta_path, **base).ok());  // a valid file, of another history
  auto other = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(other.ok());
  CHECK(other->compiled);
  CHECK(other->reader->node_count() == 2);
}

TEST_CASE("a base renamed into place without its record is exported again, not paired with "
          "the old record", "[snapshot][live][crash]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  REQUIRE(store->PutNode(amem::testing::Node("fact:a", "alpha"), At(100)).ok());
  REQUIRE(store->PutNode(amem::testing::Node("fact:b", "bravo"), At(200)).ok());
  REQUIRE(EnsureSnapshot(*store).ok());  // the base, at revision 2
  REQUIRE(store->DeleteNode("fact:a", At(300)).ok());
  REQUIRE(store->PutNode(amem::testing::Node("fact:c", "charlie"), At(400)).ok());
  LiveOptions options;
  options.merge_fraction = 1e6;  // layered, however large next to this tiny base
  auto layered = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(layered.ok());
  CHECK(layered->compiled);
  CHECK(layered->reader->node_count() == 2);
  const std::string old_record = ReadFile(dir.path() + "/current.rev");
  REQUIRE(std::filesystem::exists(dir.path() + "/current.amdl"));  // names base 2

  // A merge killed after renaming the new base (revision 4) into place and before
  // writing its record: current.rev and current.amdl still name revision 2.
  ExportOptions at_head;
  REQUIRE(ExportSnapshot(*store, dir.path() + "/current.amem", at_head).ok());
  REQUIRE(ReadFile(dir.path() + "/current.rev") == old_record);

  for (const bool cached : {false, true}) {
    INFO("through a LiveCache: " << cached);
    LiveCache cache;
    auto after = OpenLive(*store, ReadView::Latest(), options, cached ? &cache : nullptr);
    INFO(after.status().ToString());
    REQUIRE(after.ok());
    CHECK(after->base_revision == 4);
    CHECK(after->reader->node_count() == 2);
    CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, 4));
  }
  // The record is the base's own now: the next open exports nothing.
  auto next = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(next.ok());
  CHECK_FALSE(next->exported);
  CHECK(EnsureSnapshot(*store).ok());
  CHECK_FALSE(EnsureSnapshot(*store)->exported);

  // A record of the right revision for another file (its fingerprint changed) is
  // not trusted either.
  std::string record = ReadFile(dir.path() + "/current.rev");
  record[record.size() - 2] = record[record.size() - 2] == '0' ? '1' : '0';
  std::ofstream(dir.path() + "/current.rev", std::ios::trunc) << record;
  auto redone = EnsureSnapshot(*store);
  REQUIRE(redone.ok());
  CHECK(redone->exported);
  CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, 4));
}

// Issue 40's cliff scaled down: one write deletes 80% of the nodes with their edges.
// Its delta is a small file next to the base (the former bound, a quarter of the
// base's bytes, kept it layered, and every later query compiled it again), but it
// touches most of the base's records: the bound on records merges it once, and the
// queries after later writes layer a small delta over the new base.
TEST_CASE("a delta that deletes most of the store merges though its file is small",
          "[snapshot][live][merge-bound]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  constexpr int kNodes = 2000;
  auto key = [](int i) { return "fact:n" + std::to_string(i); };
  auto targets = [](int i) {
    return std::vector<int>{(i + 1) % kNodes, (i + 7) % kNodes, (i + 31) % kNodes};
  };
  Batch build;
  for (int i = 0; i < kNodes; ++i) {
    build.PutNode(amem::testing::Node(key(i), "retry policy note " + std::to_string(i) +
                                                  " about the cache layer and its eviction rules"));
  }
  for (int i = 0; i < kNodes; ++i) {
    for (int t : targets(i)) build.PutEdge(amem::testing::Edge(key(i), "references", key(t)));
  }
  REQUIRE(store->Apply(build, At(100)).ok());
  const LiveOptions options;  // the defaults
  auto first = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(first.ok());
  REQUIRE(first->exported);

  // Delete 1600 of the 2000 nodes and every edge that touches them.
  constexpr int kDeleted = kNodes * 4 / 5;
  Batch del;
  for (int i = 0; i < kNodes; ++i) {
    for (int t : targets(i)) {
      if (i < kDeleted || t < kDeleted) del.DeleteEdge(key(i), "references", key(t));
    }
  }
  for (int i = 0; i < kDeleted; ++i) del.DeleteNode(key(i));
  auto del_rev = store->Apply(del, At(200));
  REQUIRE(del_rev.ok());

  // What the delta would be: a small file, most of the base's records.
  {
    auto base = Reader::Open(dir.path() + "/current.amem");
    REQUIRE(base.ok());
    std::string bytes;
    auto summary = CompileDelta(*store, **base, first->revision, *del_rev, &bytes);
    REQUIRE(summary.ok());
    CHECK_FALSE(summary->over_bound);
    const uint64_t base_records = (*base)->node_count() + (*base)->edge_count();
    CHECK(bytes.size() * 4 < (*base)->file_size());      // under the former bound
    CHECK(summary->records * 2 > base_records);           // most of the base
    CHECK(summary->removed_nodes == kDeleted);
    // A bound below what the change log names stops before compiling anything.
    std::string untouched = "x";
    auto stopped = CompileDelta(*store, **base, first->revision, *del_rev, &untouched, 100);
    REQUIRE(stopped.ok());
    CHECK(stopped->over_bound);
    CHECK(stopped->records > 100);
    CHECK(untouched == "x");
  }

  // The first query after the delete merges: the base is the latest revision.
  auto after = OpenLive(*store, ReadView::Latest(), options);
  REQUIRE(after.ok());
  CHECK(after->merged);
  CHECK(after->exported);
  CHECK(after->base_revision == *del_rev);
  CHECK(after->revision == *del_rev);
  CHECK_FALSE(after->reader->layered());
  CHECK(after->reader->node_count() == kNodes - kDeleted);
  CHECK(ReadFile(dir.path() + "/current.rev") == RevText(*store, *del_rev));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/current.amdl"));

  // Later writes layer a small delta over the merged base.
  for (int w = 0; w < 3; ++w) {
    REQUIRE(store->PutNode(amem::testing::Node("fact:late" + std::to_string(w), "late note"),
                           At(300 + w))
                .ok());
    auto later = OpenLive(*store, ReadView::Latest(), options);
    REQUIRE(later.ok());
    CHECK_FALSE(later->merged);
    CHECK_FALSE(later->exported);
    CHECK(later->compiled);
    CHECK(later->base_revision == *del_rev);
    CHECK(later->reader->layered());
    CHECK(later->reader->node_count() == static_cast<uint32_t>(kNodes - kDeleted + w + 1));
    CHECK(std::filesystem::exists(dir.path() + "/current.amdl"));
    auto again = OpenLive(*store, ReadView::Latest(), options);  // the cached delta
    REQUIRE(again.ok());
    CHECK_FALSE(again->compiled);
    CHECK(again->base_revision == *del_rev);
  }
}

TEST_CASE("the merge bound counts records: a fraction of the base's, at least merge_records",
          "[snapshot][live][merge-bound]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  Batch build;
  for (int i = 0; i < 100; ++i) {
    build.PutNode(amem::testing::Node("fact:b" + std::to_string(i), "base"));
  }
  REQUIRE(store->Apply(build, At(100)).ok());
  REQUIRE(EnsureSnapshot(*store).ok());
  // 20 new nodes: 20 records over a base of 100.
  Batch more;
  for (int i = 0; i < 20; ++i) {
    more.PutNode(amem::testing::Node("fact:m" + std::to_string(i), "more"));
  }
  auto rev = store->Apply(more, At(200));
  REQUIRE(rev.ok());
  struct Case {
    double fraction;
    uint64_t floor;
    bool merges;
  };
  for (const Case& c : {Case{0.1, 0, true}, Case{0.3, 0, false}, Case{0.1, 20, false},
                        Case{0.1, 19, true}, Case{0, 0, true}}) {
    INFO("fraction " << c.fraction << " merge_records " << c.floor);
    // Each case starts from the base at revision 1.
    TempDir copy;
    namespace fs = std::filesystem;
    fs::copy(dir.path(), copy.path(),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    auto s = amem::testing::OpenStore(copy.path());
    LiveOptions options;
    options.merge_fraction = c.fraction;
    options.merge_records = c.floor;
    auto view = OpenLive(*s, ReadView::Latest(), options);
    REQUIRE(view.ok());
    CHECK(view->merged == c.merges);
    CHECK(view->base_revision == (c.merges ? *rev : 1));
    CHECK(view->reader->node_count() == 120);
  }
}

TEST_CASE("a LiveCache extends its delta write by write; every view is the full export's",
          "[snapshot][live][incremental]") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    amem::testing::History history(seed);
    history.Grow(store.get(), 8);
    auto other = Store::Open(dir.path());  // another handle, as another process has
    REQUIRE(other.ok());
    // amem mcp's: no delta file; a merge every ~40 records
    const LiveOptions options = amem::snapshot_test::McpLiveOptions(40);
    LiveCache cache;
    int merges = 0, compiled = 0;
    for (int round = 0; round < 60; ++round) {
      // Writes by this handle, now and then by the other one, some refused.
      history.Step(round % 7 == 3 ? other->get() : store.get());
      auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
      INFO("round " << round << ": " << view.status().ToString());
      REQUIRE(view.ok());
      merges += view->merged;
      compiled += view->compiled;
      const uint64_t head = store->revision().value();
      REQUIRE(view->revision == head);
      auto state = store->ReadState(ReadView::AtRevision(head));
      REQUIRE(state.ok());
      auto full = BuildSnapshot(*state);
      REQUIRE(full.ok());
      const Reader& r = *view->reader;
      if (!r.layered()) {
        auto whole = Reader::OpenBuffer(*full);
        REQUIRE(whole.ok());
        CHECK(r.node_count() == (*whole)->node_count());
        CHECK(r.edge_count() == (*whole)->edge_count());
        CHECK(r.kv_count() == (*whole)->kv_count());
        continue;
      }
      // Base + the view's delta is the full export at the head, to the byte.
      auto merged = MergeState(*r.layer_base(), *r.layer_delta());
      REQUIRE(merged.ok());
      auto bytes = BuildSnapshot(*merged);
      REQUIRE(bytes.ok());
      CHECK(*bytes == *full);
      CHECK(r.ContentStatus().ok());
    }
    CHECK(merges > 0);
    CHECK(compiled > 10);
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/current.amdl"));
  }
}

TEST_CASE("a LiveCache stacks the latest writes over its kept views; every view is the full "
          "export's", "[snapshot][live][incremental][stack]") {
  // Small caps, so that random histories go through every move of the stack: a new
  // level, the top extended, a middle level and level 0 folded, a merge.
  const uint32_t seeds = amem::testing::kSanitizerBuild ? 2 : 5;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    INFO("seed " << seed);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    amem::testing::History history(seed, /*per_op_attribution=*/seed % 2 == 0);
    history.Grow(store.get(), 8);
    auto other = Store::Open(dir.path());  // another handle, as another process has
    REQUIRE(other.ok());
    const LiveOptions options = amem::snapshot_test::McpLiveOptions(100, 10, 30);
    LiveCache cache;
    int merges = 0, stacked = 0, deepest = 0;
    std::shared_ptr<const Reader> previous_top_base;
    int kept_levels = 0;
    for (int round = 0; round < 120; ++round) {
      // Random batches by this handle, now and then by the other one, some
      // refused; between them an agent's one-node writes, which the top takes.
      if (round % 3 == 0) {
        REQUIRE(store->PutNode(amem::testing::Node("fact:agent-" + std::to_string(round % 40),
                                                   "agent note " + std::to_string(round)))
                    .ok());
      } else {
        history.Step(round % 7 == 4 ? other->get() : store.get());
      }
      auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
      INFO("round " << round << ": " << view.status().ToString());
      REQUIRE(view.ok());
      merges += view->merged;
      const uint64_t head = store->revision().value();
      REQUIRE(view->revision == head);
      const Reader& r = *view->reader;
      int depth = 0;
      for (const Reader* x = &r; x->layered(); x = x->layer_base().get()) ++depth;
      deepest = std::max(deepest, depth);
      stacked += depth > 1;
      if (depth > 1 && r.layer_base() == previous_top_base) ++kept_levels;
      previous_top_base = depth > 0 ? r.layer_base() : nullptr;
      CHECK(static_cast<size_t>(depth) <= kMaxLiveLevels);
      auto head_bytes = BuildSnapshot(*store->ReadState(ReadView::AtRevision(head)));
      REQUIRE(head_bytes.ok());
      auto full = Reader::OpenBuffer(*head_bytes);
      REQUIRE(full.ok());
      // Every accessor as the full export's, on sequences first and, now and
      // then, on the view's flat tables (which make the levels below build theirs).
      amem::snapshot_test::CheckSameReader(r, **full, /*bulk=*/false);
      if (round % 5 == 4) amem::snapshot_test::CheckSameReader(r, **full, /*bulk=*/true);
      CHECK(r.ContentStatus().ok());
      if (depth > 0) {
        // The top level is its base plus its delta, to the byte.
        auto merged = MergeState(*r.layer_base(), *r.layer_delta());
        REQUIRE(merged.ok());
        auto bytes = BuildSnapshot(*merged);
        REQUIRE(bytes.ok());
        CHECK(*bytes == *head_bytes);
      }
    }
    INFO("merges " << merges << " stacked " << stacked << " kept " << kept_levels);
    CHECK(merges > 0);
    CHECK(stacked > 20);
    CHECK(deepest == static_cast<int>(kMaxLiveLevels));
    CHECK(kept_levels > 10);  // a write reuses the levels below the top
    CHECK_FALSE(std::filesystem::exists(dir.path() + "/current.amdl"));
  }
}

TEST_CASE("with background_fold no call compiles level 0 again: a thread does, hands the level "
          "to prepare_level, and every view is the full export's", "[snapshot][live][stack][background]") {
  // Tiny caps and no merge, so that level 1 fills often; some rounds wait for the
  // fold (the next view takes its level 0), the others race it. A second handle
  // writes now and then, as another process does.
  for (const bool merges : {false, true}) {
    INFO("merges " << merges);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    amem::testing::History history(merges ? 9 : 8);
    history.Grow(store.get(), 8);
    auto other = Store::Open(dir.path());
    REQUIRE(other.ok());
    LiveOptions options = amem::snapshot_test::McpLiveOptions(merges ? 150 : 1000000, 3, 8);
    options.background_fold = true;
    options.background_merge = merges;
    std::mutex mu;
    std::vector<std::shared_ptr<const Reader>> prepared;  // the levels 0 prepare_level saw
    options.prepare_level = [&](const Store&, const std::shared_ptr<const Reader>& level) {
      std::lock_guard<std::mutex> lock(mu);
      prepared.push_back(level);
    };
    LiveCache cache;
    const Reader* first_level0 = nullptr;
    int folded = 0, raced = 0;  // views over a prepared level 0; calls while a fold ran
    for (int round = 0; round < 160; ++round) {
      if (round % 2 == 0) {
        REQUIRE(store->PutNode(amem::testing::Node("fact:agent-" + std::to_string(round % 30),
                                                   "agent note " + std::to_string(round)))
                    .ok());
      } else {
        history.Step(round % 9 == 5 ? other->get() : store.get());
      }
      if (round % 4 == 3) cache.WaitForFold();
      raced += cache.fold != nullptr;
      auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
      INFO("round " << round << ": " << view.status().ToString());
      REQUIRE(view.ok());
      const uint64_t head = store->revision().value();
      REQUIRE(view->revision == head);
      const Reader& r = *view->reader;
      // Level 0: the view over the base.
      const Reader* level0 = nullptr;
      int depth = 0;
      for (const Reader* x = &r; x->layered(); x = x->layer_base().get()) {
        ++depth;
        level0 = x;
      }
      CHECK(static_cast<size_t>(depth) <= kMaxLiveLevels);
      if (!merges && level0 != nullptr) {
        // Past the first, every level 0 came from a fold's thread.
        if (first_level0 == nullptr) first_level0 = level0;
        if (level0 != first_level0) {
          std::lock_guard<std::mutex> lock(mu);
          const bool from_fold = std::any_of(prepared.begin(), prepared.end(),
                                             [&](const auto& p) { return p.get() == level0; });
          CHECK(from_fold);
          folded += from_fold;
        }
      }
      auto head_bytes = BuildSnapshot(*store->ReadState(ReadView::AtRevision(head)));
      REQUIRE(head_bytes.ok());
      auto full = Reader::OpenBuffer(*head_bytes);
      REQUIRE(full.ok());
      amem::snapshot_test::CheckSameReader(r, **full, /*bulk=*/round % 5 == 4);
      CHECK(r.ContentStatus().ok());
    }
    cache.WaitForMerge();
    cache.WaitForFold();
    INFO("folded " << folded << " raced " << raced << " prepared " << prepared.size());
    CHECK(prepared.size() > 3);
    if (!merges) CHECK(folded > 10);
  }
}

TEST_CASE("a background fold that fails changes no view: level 0 stays, its compiler comes back, "
          "and a later call starts the fold again", "[snapshot][live][stack][background]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  amem::testing::History history(10);
  history.Grow(store.get(), 8);
  LiveOptions options = amem::snapshot_test::McpLiveOptions(1000000, 3, 8);
  options.background_fold = true;
  std::mutex mu;
  int prepared = 0;
  options.prepare_level = [&](const Store&, const std::shared_ptr<const Reader>&) {
    std::lock_guard<std::mutex> lock(mu);
    ++prepared;
  };
  LiveCache cache;
  auto check = [&](const char* what) -> const Reader* {
    INFO(what);
    auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
    INFO(view.status().ToString());
    REQUIRE(view.ok());
    const uint64_t head = store->revision().value();
    REQUIRE(view->revision == head);
    auto head_bytes = BuildSnapshot(*store->ReadState(ReadView::AtRevision(head)));
    REQUIRE(head_bytes.ok());
    auto full = Reader::OpenBuffer(*head_bytes);
    REQUIRE(full.ok());
    amem::snapshot_test::CheckSameReader(*view->reader, **full, false);
    const Reader* level0 = nullptr;
    for (const Reader* x = view->reader.get(); x->layered(); x = x->layer_base().get()) level0 = x;
    return level0;
  };
  check("the base");
  REQUIRE(store->PutNode(amem::testing::Node("fact:first", "first note")).ok());
  const Reader* level0 = check("level 0, compiled in the call");
  REQUIRE(level0 != nullptr);
  REQUIRE(cache.compiler != nullptr);
  const DeltaCompiler* compiler = cache.compiler.get();
  // Every level 0 the fold compiles holds more than this one: over merge_bytes, it
  // fails (CompileLevel0 returns no level), as a compile that errs does.
  options.merge_bytes = level0->layer_delta()->size();
  const BackgroundFold* last = nullptr;
  int started = 0;
  for (int round = 0; round < 40; ++round) {
    if (round % 2 == 0) {
      REQUIRE(store->PutNode(amem::testing::Node("fact:agent-" + std::to_string(round % 7),
                                                 "agent note " + std::to_string(round)))
                  .ok());
    } else {
      history.Step(store.get());
    }
    if (round % 3 == 2) cache.WaitForFold();
    INFO("round " << round);
    CHECK(check("a view while folds fail") == level0);
    if (cache.fold != nullptr && cache.fold.get() != last) {
      ++started;
      last = cache.fold.get();
      CHECK(cache.compiler == nullptr);  // lent to the fold
    }
  }
  cache.WaitForFold();
  CHECK(check("after the last fold") == level0);
  // A fold starts only with level 0's own compiler at hand (levels[0].compiler):
  // a second start means the failed fold gave it back.
  CHECK(started >= 2);
  CHECK(prepared == 0);
  CHECK(cache.levels[0].compiler.get() == compiler);
}

TEST_CASE("a background merge warms its base, hands it to prepare_base and compiles the writes "
          "made meanwhile; the views on it are the full export's", "[snapshot][live][background]") {
  for (uint32_t seed : {3u, 4u}) {
    INFO("seed " << seed);
    TempDir dir;
    auto store = amem::testing::OpenStore(dir.path());
    amem::testing::History history(seed);
    history.Grow(store.get(), 20);
    LiveOptions options = amem::snapshot_test::McpLiveOptions(30);
    options.check_records = true;
    options.background_merge = true;
    options.warm_base = true;
    // The hook runs on the merge's thread before it is done: it records the base
    // and writes, as a session goes on writing while a merge runs. (Catch2 asserts
    // on the test's thread only.)
    std::mutex mu;
    std::vector<std::pair<const Reader*, uint32_t>> prepared;  // base, pages left
    // Whether another process could have read the base meanwhile: current.lock,
    // which the merge takes exclusively to put its base in place, is free again
    // (flock: another open file conflicts as another process's would).
    int lock_free = 0, lock_held = 0;
    options.prepare_base = [&](const Store&, const std::shared_ptr<const Reader>& base, uint64_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        prepared.emplace_back(base.get(), base->PagesLeft());
        const int fd = ::open((dir.path() + "/current.lock").c_str(), O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && ::flock(fd, LOCK_SH | LOCK_NB) == 0) {
          ++lock_free;
        } else {
          ++lock_held;
        }
        if (fd >= 0) ::close(fd);
      }
      for (int w = 0; w < 3; ++w) {
        (void)store->PutNode(amem::testing::Node("fact:during-" + std::to_string(w),
                                                 "written while the merge ran " + std::to_string(w)));
      }
    };
    LiveCache cache;
    int taken = 0;
    for (int round = 0; round < 40; ++round) {
      history.Step(store.get());
      if (round % 10 == 9) cache.WaitForMerge();  // the next view takes its base
      auto view = OpenLive(*store, ReadView::Latest(), options, &cache);
      REQUIRE(view.ok());
      // A merge's hook may write while the view is read: its revision, not the head.
      const uint64_t head = view->revision;
      const Reader* base = view->reader.get();
      while (base->layered()) base = base->layer_base().get();
      {
        std::lock_guard<std::mutex> lock(mu);
        for (const auto& [b, pages_left] : prepared) {
          if (b != base) continue;
          ++taken;  // a view on a base the merge warmed and prepared
          CHECK(pages_left == 0);
        }
      }
      auto head_bytes = BuildSnapshot(*store->ReadState(ReadView::AtRevision(head)));
      REQUIRE(head_bytes.ok());
      auto full = Reader::OpenBuffer(*head_bytes);
      REQUIRE(full.ok());
      amem::snapshot_test::CheckSameReader(*view->reader, **full, /*bulk=*/false);
      CHECK(view->reader->ContentStatus().ok());
    }
    cache.WaitForMerge();
    CHECK(taken > 0);
    CHECK(lock_free > 0);
    CHECK(lock_held == 0);
    // The merges grew the map ahead of their exports (Store::ReserveMap): the
    // writes their hook made while each export read did not wait for it.
    const auto stats = store->Stats();
    REQUIRE(stats.ok());
    CHECK(stats->map_size >= stats->used_bytes + (uint64_t{1} << 30));
  }
}

TEST_CASE("writes made during a background merge past four times the bound but under an "
          "export's cost are compiled on its thread, and the next merge starts from them",
          "[snapshot][live][background]") {
  TempDir dir;
  auto store = amem::testing::OpenStore(dir.path());
  Batch bulk;
  for (int i = 0; i < 2000; ++i) {
    bulk.PutNode(amem::testing::Node("fact:bulk-" + std::to_string(i), "bulk note " + std::to_string(i)));
  }
  REQUIRE(store->Apply(bulk).ok());
  // amem mcp's, with a bound far below an export's cost
  LiveOptions options = amem::snapshot_test::McpLiveOptions(10);
  options.background_merge = true;
  // The merge's hook writes 60 nodes while it runs: past 4 x 10 records, under a
  // 25th of the base's 2,000 (what compiling them costs against an export).
  std::atomic<int> hooked{0};
  options.prepare_base = [&](const Store&, const std::shared_ptr<const Reader>&, uint64_t) {
    if (hooked++ > 0) return;
    Batch during;
    for (int i = 0; i < 60; ++i) {
      during.PutNode(amem::testing::Node("fact:during-" + std::to_string(i), "written meanwhile"));
    }
    (void)store->Apply(during);  // (Catch2 asserts on the test's thread only)
  };
  LiveCache cache;
  REQUIRE(OpenLive(*store, ReadView::Latest(), options, &cache).ok());  // the base
  for (int i = 0; i < 12; ++i) {  // past the bound: a merge starts
    REQUIRE(store->PutNode(amem::testing::Node("fact:w-" + std::to_string(i), "a write")).ok());
  }
  auto started = OpenLive(*store, ReadView::Latest(), options, &cache);
  REQUIRE(started.ok());
  CHECK_FALSE(started->merged);
  cache.WaitForMerge();
  REQUIRE(hooked.load() == 1);
  auto full_at = [&](uint64_t revision) {
    auto bytes = BuildSnapshot(*store->ReadState(ReadView::AtRevision(revision)));
    REQUIRE(bytes.ok());
    auto r = Reader::OpenBuffer(*bytes);
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  // The new base with the 60 writes as its level 0, compiled by the merge's
  // thread: no export here. That level is past the bound, so this call starts
  // the next merge and answers from the stack meanwhile.
  auto after = OpenLive(*store, ReadView::Latest(), options, &cache);
  REQUIRE(after.ok());
  CHECK_FALSE(after->merged);
  CHECK_FALSE(after->exported);
  REQUIRE(after->reader->layered());
  CHECK(after->base_revision < after->revision);
  CHECK(cache.merge != nullptr);
  amem::snapshot_test::CheckSameReader(*after->reader, *full_at(after->revision), /*bulk=*/false);
  // A write while it runs: a level over the stack, no bound.
  REQUIRE(store->PutNode(amem::testing::Node("fact:next", "one more write")).ok());
  auto next = OpenLive(*store, ReadView::Latest(), options, &cache);
  REQUIRE(next.ok());
  CHECK_FALSE(next->merged);
  CHECK_FALSE(next->exported);
  amem::snapshot_test::CheckSameReader(*next->reader, *full_at(next->revision), /*bulk=*/false);
  cache.WaitForMerge();
}

using amem::snapshot_test::TempFilesIn;

TEST_CASE("a background merge SIGKILLed at any point leaves the live view right, and no temp "
          "file or held lock once the next merge ran", "[snapshot][live][crash][background]") {
  TempDir dir;
  {
    auto store = amem::testing::OpenStore(dir.path());
    amem::testing::History history(21);
    history.Grow(store.get(), 60);
    // Enough nodes that an export takes a while to kill it in.
    Batch b;
    for (int i = 0; i < 3000; ++i) {
      b.PutNode(amem::testing::Node("fact:bulk-" + std::to_string(i),
                                    "bulk note " + std::to_string(i) + " on the retry cache"));
    }
    REQUIRE(store->Apply(b).ok());
    REQUIRE(OpenLive(*store, ReadView::Latest(), LiveOptions{}).ok());  // the base
  }
  LiveOptions options = amem::snapshot_test::McpLiveOptions(10);  // merging past 10 records
  options.background_merge = true;
  // A trial's writes: 12 new nodes and 2 edges, past the bound and under four times
  // it (the background merge's range), on a base at the head.
  auto grow = [&](int trial) {
    auto store = amem::testing::OpenStore(dir.path());
    Batch w;
    const std::string prefix = "fact:trial-" + std::to_string(trial) + "-";
    for (int i = 0; i < 12; ++i) {
      w.PutNode(amem::testing::Node(prefix + std::to_string(i), "trial note on the retry cache"));
    }
    w.PutEdge(amem::testing::Edge(prefix + "0", "references", prefix + "1"));
    w.PutEdge(amem::testing::Edge(prefix + "2", "references", "fact:bulk-7"));
    REQUIRE(store->Apply(w).ok());
  };
  // A child: the query that finds the delta past the bound, then the merge it
  // started, which its LiveCache's destructor waits for.
  auto start_child = [&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      StoreOptions o;
      o.create_if_missing = false;
      auto store = Store::Open(dir.path(), o);
      if (!store.ok()) ::_exit(2);
      {
        LiveCache cache;
        if (!OpenLive(**store, ReadView::Latest(), options, &cache).ok()) ::_exit(3);
      }
      ::_exit(0);
    }
    return pid;
  };
  // How long a child takes unkilled, in this build on this machine (under the
  // sanitizers several times longer): the kills land anywhere in that span.
  grow(-1);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t calibration = start_child();
  REQUIRE(calibration > 0);
  int calibration_status = 0;
  REQUIRE(::waitpid(calibration, &calibration_status, 0) == calibration);
  REQUIRE(WIFEXITED(calibration_status));
  REQUIRE(WEXITSTATUS(calibration_status) == 0);
  const auto span_us = std::max<int64_t>(
      1000, std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - t0).count());
  std::mt19937 rng(5);
  int killed = 0, finished = 0, mid_export = 0;
  // 24 trials, and more (up to 72) until over 10 kills and 3 of them mid-export
  // have happened: on a loaded machine the calibrated span can be off.
  int trial = 0;
  for (;; ++trial) {
    INFO("trial " << trial << " (a child takes " << span_us << " us)");
    grow(trial);
    const int64_t delay_us = trial % 6 == 5 ? -1 : static_cast<int64_t>(rng() % span_us);
    const pid_t pid = start_child();
    REQUIRE(pid >= 0);
    int status = 0;
    if (delay_us >= 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      ::kill(pid, SIGKILL);
    }
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status)) {
      ++killed;
      mid_export += !TempFilesIn(dir.path()).empty();  // killed while exporting
    } else {
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      ++finished;
    }
    // Whatever the kill left, a query reads the latest state right.
    auto store = amem::testing::OpenStore(dir.path());
    auto view = OpenLive(*store, ReadView::Latest(), LiveOptions{});
    INFO(view.status().ToString());
    REQUIRE(view.ok());
    const uint64_t head = store->revision().value();
    CHECK(view->revision == head);
    auto state = store->ReadState(ReadView::AtRevision(head));
    REQUIRE(state.ok());
    auto full = BuildSnapshot(*state);
    REQUIRE(full.ok());
    auto whole = Reader::OpenBuffer(*full);
    REQUIRE(whole.ok());
    amem::snapshot_test::CheckSameReader(*view->reader, **whole, /*bulk=*/false);
    const bool more = trial + 1 < 24 || ((killed <= 10 || mid_export <= 2) && trial + 1 < 72);
    if (!more) break;
    {
      // The next child starts from a base at the head, so that its delta is its own
      // trial's writes. (Killed ones' deltas would add up past four times the bound,
      // and the child would merge in the foreground.) The last trial's leftovers are
      // for the merge below.
      LiveOptions every_write;
      every_write.merge_fraction = 0;
      every_write.merge_records = 0;
      REQUIRE(OpenLive(*store, ReadView::Latest(), every_write).ok());
    }
  }
  INFO("killed " << killed << ", " << mid_export << " of them while exporting");
  CHECK(killed > 10);
  CHECK(mid_export > 2);
  CHECK(finished > 0);
  // The next merge removes what killed ones left; no lock stays held.
  grow(trial + 1);
  auto store = amem::testing::OpenStore(dir.path());
  {
    LiveCache cache;
    REQUIRE(OpenLive(*store, ReadView::Latest(), options, &cache).ok());
  }
  CHECK(TempFilesIn(dir.path()).empty());
  for (const char* name : {"/merge.lock", "/current.lock"}) {
    const int fd = ::open((dir.path() + name).c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    ::close(fd);
  }
  // The background merge put its base in: a query needs no merge of its own.
  auto later = OpenLive(*store, ReadView::Latest(), LiveOptions{});
  REQUIRE(later.ok());
  CHECK(later->base_revision == store->revision().value());
  CHECK_FALSE(later->merged);
}
