// Bound stores against an in-memory revision log (tools/cli/replication.h): the
// commit hook, catching up, and binding. The NATS JetStream log itself is tested
// against a real cluster (tests/replication/cluster_test.sh).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/store/store_test_util.h"
#include "tools/cli/replication.h"

namespace amem::testing {
namespace {

using cli::RevisionLog;

// The log every FakeLog of a test shares: message i + 1 is messages[i].
struct FakeStream {
  std::vector<std::string> messages;
  Status fail;          // when set, every call returns it
  int appends_refused = 0;  // Append answers Aborted (the stream moved on)
  int appends_left = -1;    // when >= 0: appends accepted before Append fails
  uint64_t unreadable = 0;  // Get of this sequence fails (the stream lost midway)
  std::map<uint64_t, std::string> digests;  // the digest bucket
  std::vector<cli::PublishedSnapshot> snapshots;  // the snapshot bucket
};

class FakeLog final : public RevisionLog {
 public:
  explicit FakeLog(std::shared_ptr<FakeStream> s) : s_(std::move(s)) {}
  Result<cli::LogInfo> Open(bool, uint32_t) override {
    if (!s_->fail.ok()) return s_->fail;
    cli::LogInfo info;
    info.first_seq = s_->messages.empty() ? 0 : 1;
    info.last_seq = s_->messages.size();
    return info;
  }
  Result<std::string> Get(uint64_t seq) override {
    if (!s_->fail.ok()) return s_->fail;
    if (seq == 0 || seq > s_->messages.size()) return Status::NotFound("no message");
    if (seq == s_->unreadable) return Status::IOError("connection lost");
    return s_->messages[seq - 1];
  }
  Result<uint64_t> Append(uint64_t expected_last, const std::string& record) override {
    if (!s_->fail.ok()) return s_->fail;
    if (expected_last != s_->messages.size()) return Status::Aborted("wrong last sequence");
    if (s_->appends_refused > 0) {
      --s_->appends_refused;
      return Status::Aborted("wrong last sequence");
    }
    if (s_->appends_left == 0) return Status::IOError("connection lost");
    if (s_->appends_left > 0) --s_->appends_left;
    s_->messages.push_back(record);
    return s_->messages.size();
  }
  Result<std::string> GetDigest(uint64_t rev) override {
    auto it = s_->digests.find(rev);
    if (it == s_->digests.end()) return Status::NotFound("no key");
    return it->second;
  }
  Result<std::string> PublishDigest(uint64_t rev, const std::string& value,
                                    bool* created) override {
    *created = s_->digests.emplace(rev, value).second;
    return s_->digests[rev];
  }
  Result<std::vector<cli::PublishedSnapshot>> Snapshots() override { return s_->snapshots; }
  Status DeleteSnapshot(const cli::PublishedSnapshot& snap) override {
    auto& v = s_->snapshots;
    auto it = std::find_if(v.begin(), v.end(), [&](const auto& x) { return x.name == snap.name; });
    if (it == v.end()) return Status::NotFound("no snapshot " + snap.name);
    v.erase(it);
    return Status::OK();
  }

 private:
  std::shared_ptr<FakeStream> s_;
};

// Stores bound to one fake stream through the real binding file and hook.
struct Bound {
  TempDir dir;
  std::shared_ptr<FakeStream> stream = std::make_shared<FakeStream>();
  Bound() {
    cli::SetRevisionLogFactory(
        [s = stream](const cli::RemoteBinding&,
                     const cli::RemoteAccess&) -> Result<std::unique_ptr<RevisionLog>> {
          return std::unique_ptr<RevisionLog>(new FakeLog(s));
        });
  }
  ~Bound() { cli::SetRevisionLogFactory(nullptr); }
  std::unique_ptr<Store> Open(const std::string& name, bool bind = true) {
    auto store = OpenStore(dir / name);
    if (bind) {
      Result<cli::RemoteBinding> b = cli::ParseRemote("nats://127.0.0.1:1", "team", 3);
      REQUIRE(b.ok());
      REQUIRE(cli::WriteRemoteBinding(dir / name, *b).ok());
      REQUIRE(cli::InstallReplication(dir / name, store.get()).ok());
    }
    return store;
  }
  Status CatchUp(Store& store) {
    FakeLog log(stream);
    return cli::CatchUp(store, log, "team").status();
  }
};

std::string Export(const Store& store) {
  std::string out;
  REQUIRE(store.ReadHistory(0, 0, [&](const LoggedRevision& r) {
                 out += cli::RevisionRecord(r);
                 return Status::OK();
               })
              .ok());
  return out;
}

uint64_t Rev(const Store& store) {
  auto r = store.revision();
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("replication: writers of stores bound to one log interleave; each write once",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x");
  auto y = b.Open("y");
  for (int i = 0; i < 10; ++i) {
    // y is behind x at every write: its publish is refused, it catches up, and
    // its write is validated again on the newer state and published after x's.
    REQUIRE(x->PutNode(Node("fact:k" + std::to_string(i % 3), "x" + std::to_string(i))).ok());
    auto r = y->PutNode(Node("fact:k" + std::to_string(i % 3), "y" + std::to_string(i)));
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(*r == 2 * static_cast<uint64_t>(i) + 2);
  }
  CHECK(b.stream->messages.size() == 20);
  REQUIRE(b.CatchUp(*x).ok());
  CHECK(Rev(*x) == 20);
  CHECK(Rev(*y) == 20);
  CHECK(Export(*x) == Export(*y));
  // The log's message N is the store's revision N as amem log writes it.
  std::string all;
  for (const std::string& m : b.stream->messages) all += m;
  CHECK(all == Export(*x));
  // A delete that the other writer made moot fails as it would locally.
  REQUIRE(x->DeleteNode("fact:k0").ok());
  auto moot = y->DeleteNode("fact:k0");
  CHECK(moot.status().IsNotFound());
  CHECK(b.stream->messages.size() == 21);
  CHECK(Rev(*y) == 21);
}

TEST_CASE("replication: a write the log does not accept changes nothing",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x");
  REQUIRE(x->PutNode(Node("fact:a", "one")).ok());
  const std::string before = Export(*x);
  b.stream->fail = Status::IOError("cannot reach stream team");
  auto r = x->PutNode(Node("fact:b", "two"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsIOError());
  CHECK(r.status().message().find("cannot reach stream team") != std::string::npos);
  CHECK(Rev(*x) == 1);
  CHECK(Export(*x) == before);
  CHECK(x->GetNode("fact:b").status().IsNotFound());
  b.stream->fail = Status::OK();
  REQUIRE(x->PutNode(Node("fact:b", "two")).ok());
  CHECK(b.stream->messages.size() == 2);
}

TEST_CASE("replication: catch-up stops at a foreign message, naming its sequence",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x");
  REQUIRE(x->PutNode(Node("fact:a", "one")).ok());
  REQUIRE(x->PutNode(Node("fact:b", "two")).ok());
  auto y = b.Open("y");
  b.stream->messages.push_back("hello world");
  Status s = b.CatchUp(*y);
  INFO(s.ToString());
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("stream team, sequence 3: not an amem revision") != std::string::npos);
  CHECK(Rev(*y) == 2);  // the two before it are applied
  // A message that holds another revision than its sequence.
  b.stream->messages.back() = b.stream->messages[0];
  s = b.CatchUp(*y);
  CHECK(s.message().find("stream team, sequence 3: holds revision 1, not 3") !=
        std::string::npos);
  CHECK(Rev(*y) == 2);
}

// Message `rev` of a log written by hand (docs/LOG.md): one node, or `op` instead.
std::string HandRecord(uint64_t rev, const std::string& op = "") {
  const std::string head = "{\"rev\":" + std::to_string(rev) + ",\"rev_ts\":1700000000,";
  if (!op.empty()) return head + op + "}\n";
  return head + "\"op\":\"node\",\"key\":\"fact:n" + std::to_string(rev) +
         "\",\"type\":\"fact\",\"content\":\"c\",\"meta\":{},\"confidence\":1.0,"
         "\"ts\":1700000000}\n";
}

TEST_CASE("replication: catch-up applies in batches and keeps the revisions before a failure",
          "[replication][tools]") {
  // More than two batches (kCatchUpBatch), with three kinds of failure midway: a
  // foreign message, one that cannot be applied, and the log lost. Each time the
  // revisions before it are applied, it is not, and the error names its sequence.
  const uint64_t n = 2 * cli::kCatchUpBatch + 500;
  const uint64_t foreign = cli::kCatchUpBatch + 300, moot = foreign + 400, lost = moot + 500;
  REQUIRE(lost < n);
  Bound b;
  for (uint64_t rev = 1; rev <= n; ++rev) b.stream->messages.push_back(HandRecord(rev));
  b.stream->messages[foreign - 1] = "hello world";
  // A delete of a node that does not exist cannot be a revision of this log.
  b.stream->messages[moot - 1] =
      HandRecord(moot, "\"op\":\"del_node\",\"key\":\"fact:absent\",\"ts\":1700000000");
  b.stream->unreadable = lost;
  auto y = b.Open("y", /*bind=*/false);
  Status s = b.CatchUp(*y);
  INFO(s.ToString());
  CHECK(s.message().find("stream team, sequence " + std::to_string(foreign) +
                         ": not an amem revision") != std::string::npos);
  CHECK(Rev(*y) == foreign - 1);
  b.stream->messages[foreign - 1] = HandRecord(foreign);
  s = b.CatchUp(*y);
  INFO(s.ToString());
  CHECK(s.message().find("stream team, sequence " + std::to_string(moot) +
                         ": cannot be applied") != std::string::npos);
  CHECK(Rev(*y) == moot - 1);
  b.stream->messages[moot - 1] = HandRecord(moot);
  s = b.CatchUp(*y);
  INFO(s.ToString());
  CHECK(s.IsIOError());
  CHECK(s.message().find("stream team: sequence " + std::to_string(lost) + ": connection lost") !=
        std::string::npos);
  CHECK(Rev(*y) == lost - 1);
  b.stream->unreadable = 0;
  REQUIRE(b.CatchUp(*y).ok());
  CHECK(Rev(*y) == n);
  std::string all;
  for (const std::string& m : b.stream->messages) all += m;
  CHECK(all == Export(*y));
}

// Revisions from..to of a log written by hand, parsed as amem replay parses them.
std::vector<LoggedRevision> HandLog(uint64_t from, uint64_t to, const std::string& prefix = "") {
  std::vector<LoggedRevision> log;
  for (uint64_t rev = from; rev <= to; ++rev) {
    std::string record = HandRecord(rev);
    if (!prefix.empty()) record.replace(record.find("fact:n"), 6, "fact:" + prefix);
    auto r = cli::ParseRevisionRecord("team", rev, record);
    REQUIRE(r.ok());
    log.push_back(std::move(r).value());
  }
  return log;
}

TEST_CASE("replication: a replay into a bound store publishes each revision and resumes",
          "[replication][tools]") {
  Bound b;
  const std::vector<LoggedRevision> log = HandLog(1, 6);
  auto x = b.Open("x");
  // The stream stops accepting after two revisions: those two are in the stream
  // and applied; the rest neither.
  b.stream->appends_left = 2;
  auto r = cli::ReplayRevisions(*x, b.dir / "x", log);
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().IsIOError());
  CHECK(r.status().message().find("the log did not accept revision 3: connection lost") !=
        std::string::npos);
  CHECK(r.status().message().find("replay stopped after revision 2 (revisions 1..2 are in "
                                  "stream team and applied here") != std::string::npos);
  CHECK(b.stream->messages.size() == 2);
  CHECK(Rev(*x) == 2);
  // Again: the two it has are skipped, the rest published.
  b.stream->appends_left = -1;
  r = cli::ReplayRevisions(*x, b.dir / "x", log);
  REQUIRE(r.ok());
  CHECK(r->stream == "team");
  CHECK(r->skipped == 2);
  CHECK(r->published == 4);
  CHECK(r->rev == 6);
  std::string all;
  for (const std::string& m : b.stream->messages) all += m;
  CHECK(all == Export(*x));
  // A replica catches up to the same history; the same log again changes nothing.
  auto y = b.Open("y");
  r = cli::ReplayRevisions(*y, b.dir / "y", log);
  REQUIRE(r.ok());
  CHECK(r->skipped == 6);
  CHECK(r->published == 0);
  CHECK(Export(*y) == Export(*x));
  CHECK(b.stream->messages.size() == 6);
  // The log continued by hand: revision 7 on y is published, x gets it by catching up.
  r = cli::ReplayRevisions(*y, b.dir / "y", HandLog(7, 7));
  REQUIRE(r.ok());
  CHECK(r->published == 1);
  REQUIRE(b.CatchUp(*x).ok());
  CHECK(Export(*x) == Export(*y));
}

TEST_CASE("replication: a replay into a bound store that cannot go in writes nothing",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x");
  REQUIRE(cli::ReplayRevisions(*x, b.dir / "x", HandLog(1, 3)).ok());
  const std::string before = Export(*x);
  // Another history: its revision 2 differs from the stream's.
  std::vector<LoggedRevision> other = HandLog(1, 1);
  for (LoggedRevision& r : HandLog(2, 4, "other")) other.push_back(std::move(r));
  auto r = cli::ReplayRevisions(*x, b.dir / "x", other);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("revision 2: differs from the store's revision 2, which "
                                  "stream team, sequence 2 holds") != std::string::npos);
  // Another writer came first: the replayed revision keeps its number, so it stops.
  b.stream->appends_refused = 1;
  r = cli::ReplayRevisions(*x, b.dir / "x", HandLog(4, 5));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("stream team moved past revision 3") != std::string::npos);
  // A log that does not continue the store; a revision that cannot be applied.
  r = cli::ReplayRevisions(*x, b.dir / "x", HandLog(5, 6));
  CHECK(r.status().IsInvalidArgument());
  CHECK(r.status().message().find("revision 5: does not continue the store") != std::string::npos);
  auto moot = cli::ParseRevisionRecord(
      "team", 4, HandRecord(4, "\"op\":\"del_node\",\"key\":\"fact:absent\",\"ts\":1700000000"));
  REQUIRE(moot.ok());
  r = cli::ReplayRevisions(*x, b.dir / "x", {*moot});
  CHECK_FALSE(r.ok());
  CHECK(b.stream->messages.size() == 3);
  CHECK(Export(*x) == before);
  // The stream unreachable: nothing replayed.
  b.stream->fail = Status::IOError("cannot reach stream team");
  r = cli::ReplayRevisions(*x, b.dir / "x", HandLog(4, 4));
  CHECK(r.status().IsIOError());
  CHECK(r.status().message().find("the store is bound to stream team; nothing was replayed") !=
        std::string::npos);
  CHECK(Export(*x) == before);
}

TEST_CASE("replication: a long-lived handle follows its binding as it changes",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x", /*bind=*/false);
  REQUIRE(cli::InstallReplication(b.dir / "x", x.get()).ok());
  REQUIRE(x->PutNode(Node("fact:a", "local")).ok());
  CHECK(b.stream->messages.empty());
  // amem remote add: the history goes to the stream, then the binding is written.
  {
    FakeLog log(b.stream);
    REQUIRE(cli::ReconcileHistory(*x, log, "team").ok());
  }
  auto binding = cli::ParseRemote("nats://127.0.0.1:1", "team", 3);
  REQUIRE(binding.ok());
  REQUIRE(cli::WriteRemoteBinding(b.dir / "x", *binding).ok());
  REQUIRE(x->PutNode(Node("fact:b", "published")).ok());
  CHECK(b.stream->messages.size() == 2);
  // Another store's write comes first; this handle catches up before its own.
  auto y = b.Open("y");
  REQUIRE(y->PutNode(Node("fact:c", "from y")).ok());
  REQUIRE(x->PutNode(Node("fact:d", "after y")).ok());
  CHECK(b.stream->messages.size() == 4);
  CHECK(Rev(*x) == 4);
  // amem remote remove: local writes again.
  REQUIRE(cli::RemoveRemoteBinding(b.dir / "x").ok());
  REQUIRE(x->PutNode(Node("fact:e", "local again")).ok());
  CHECK(b.stream->messages.size() == 4);
  CHECK(Rev(*x) == 5);
  // A damaged binding fails the write and writes nothing.
  std::FILE* f = std::fopen((b.dir / "x/remote.json").c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("{\"servers\": 1}", f);
  std::fclose(f);
  auto r = x->PutNode(Node("fact:f", "refused"));
  CHECK(r.status().IsCorruption());
  CHECK(Rev(*x) == 5);
}

TEST_CASE("replication: a store ahead of the log or diverged from it refuses to follow",
          "[replication][tools]") {
  Bound b;
  WriteOptions at;  // the same revision 1 in both stores
  at.ts = 1700000000;
  auto x = b.Open("x");
  REQUIRE(x->PutNode(Node("fact:a", "one"), at).ok());
  auto ahead = b.Open("ahead", /*bind=*/false);
  REQUIRE(ahead->PutNode(Node("fact:a", "one"), at).ok());
  REQUIRE(ahead->PutNode(Node("fact:z", "local only")).ok());
  Status s = b.CatchUp(*ahead);
  CHECK(s.message().find("the store is at revision 2 but stream team ends at sequence 1") !=
        std::string::npos);
  auto other = b.Open("other", /*bind=*/false);
  REQUIRE(other->PutNode(Node("fact:q", "not the team's")).ok());
  s = b.CatchUp(*other);
  CHECK(s.message().find("the store's revision 1 differs from stream team, sequence 1") !=
        std::string::npos);
  CHECK(Rev(*other) == 1);
  // Binding compares histories the same way, and publishes what the log lacks.
  FakeLog log(b.stream);
  auto refused = cli::ReconcileHistory(*other, log, "team");
  CHECK(refused.status().message().find("revision 1 differs from stream team, sequence 1") !=
        std::string::npos);
  auto appended = cli::ReconcileHistory(*ahead, log, "team");
  REQUIRE(appended.ok());
  CHECK(*appended == 1);
  CHECK(b.stream->messages.size() == 2);
  REQUIRE(b.CatchUp(*x).ok());
  CHECK(Export(*x) == Export(*ahead));
}

TEST_CASE("replication: replicas compare export digests published beside the log",
          "[replication][tools]") {
  Bound b;
  auto x = b.Open("x");
  REQUIRE(x->PutNode(Node("fact:a", "one")).ok());
  REQUIRE(x->PutNode(Node("fact:b", "two")).ok());
  auto y = b.Open("y", /*bind=*/false);
  REQUIRE(b.CatchUp(*y).ok());
  auto binding = cli::ParseRemote("nats://127.0.0.1:1", "team", 3);
  REQUIRE(binding.ok());
  CHECK(binding->digest_bucket() == "amem-team-digests");
  FakeLog log(b.stream);
  // None published: NotFound saying how to publish one; nothing was published.
  auto none = cli::CheckReplica(*y, log, *binding, 2, /*publish=*/false);
  CHECK(none.status().IsNotFound());
  CHECK(none.status().message().find("no export digest of revision 2 in bucket "
                                     "amem-team-digests") != std::string::npos);
  CHECK(b.stream->digests.empty());
  auto published = cli::CheckReplica(*x, log, *binding, 2, /*publish=*/true);
  REQUIRE(published.ok());
  CHECK(published->published_now);
  CHECK(published->equal());
  CHECK(published->local.xxh3.size() == 16);
  auto same = cli::CheckReplica(*y, log, *binding, 2, /*publish=*/false);
  REQUIRE(same.ok());
  CHECK(same->equal());
  CHECK(same->local == published->local);
  // A revision the store has not reached is refused.
  CHECK(cli::CheckReplica(*y, log, *binding, 3, false).status().IsInvalidArgument());
  // y writes a revision 3 of its own (not through the log); the log's revision 3
  // is x's. y differs at 3, still agrees at 2, and cannot replace x's digest.
  REQUIRE(y->PutNode(Node("fact:c", "y only")).ok());
  REQUIRE(x->PutNode(Node("fact:c", "x")).ok());
  REQUIRE(cli::CheckReplica(*x, log, *binding, 3, /*publish=*/true).ok());
  const std::string xs = b.stream->digests[3];
  auto differs = cli::CheckReplica(*y, log, *binding, 3, /*publish=*/true);
  REQUIRE(differs.ok());
  CHECK_FALSE(differs->equal());
  CHECK_FALSE(differs->published_now);
  CHECK(b.stream->digests[3] == xs);
  auto earlier = cli::CheckReplica(*y, log, *binding, 2, /*publish=*/false);
  REQUIRE(earlier.ok());
  CHECK(earlier->equal());
  // A value in the bucket that is not a digest of that revision is refused.
  b.stream->digests[2] = b.stream->digests[3];
  auto bad = cli::CheckReplica(*y, log, *binding, 2, false);
  CHECK(bad.status().IsInvalidArgument());
  CHECK(bad.status().message().find("bucket amem-team-digests, key 2: not an amem export "
                                    "digest of revision 2") != std::string::npos);
}

TEST_CASE("replication: pruning keeps the newest snapshots and the one just published",
          "[replication][tools]") {
  auto stream = std::make_shared<FakeStream>();
  for (uint64_t rev : {40, 10, 30, 20}) {
    cli::PublishedSnapshot p;
    p.rev = rev;
    p.name = "rev-" + std::to_string(rev) + "-x";
    stream->snapshots.push_back(p);
  }
  FakeLog log(stream);
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& p : stream->snapshots) out.push_back(p.name);
    std::sort(out.begin(), out.end());
    return out;
  };
  // The one just published (rev 10, --at an older revision) stays though it is older.
  auto deleted = cli::PruneSnapshots(log, 2, "rev-10-x");
  REQUIRE(deleted.ok());
  REQUIRE(deleted->size() == 1);
  CHECK((*deleted)[0].name == "rev-20-x");
  CHECK(names() == std::vector<std::string>{"rev-10-x", "rev-30-x", "rev-40-x"});
  deleted = cli::PruneSnapshots(log, 1, "rev-40-x");
  REQUIRE(deleted.ok());
  REQUIRE(deleted->size() == 2);
  CHECK((*deleted)[0].name == "rev-30-x");  // highest revision first
  CHECK((*deleted)[1].name == "rev-10-x");
  CHECK(names() == std::vector<std::string>{"rev-40-x"});
  // Nothing past N: nothing deleted.
  deleted = cli::PruneSnapshots(log, 3, "rev-40-x");
  REQUIRE(deleted.ok());
  CHECK(deleted->empty());
}

TEST_CASE("replication: without NATS a bound store refuses writes, saying how to get it",
          "[replication][tools]") {
  TempDir dir;
  auto store = OpenStore(dir / "x");
  REQUIRE(store->PutNode(Node("fact:a", "one")).ok());
  Result<cli::RemoteBinding> b = cli::ParseRemote("nats://127.0.0.1:1", "team", 3);
  REQUIRE(b.ok());
  REQUIRE(cli::WriteRemoteBinding(dir / "x", *b).ok());
  cli::SetRevisionLogFactory(nullptr);
  REQUIRE(cli::InstallReplication(dir / "x", store.get()).ok());
  auto r = store->PutNode(Node("fact:b", "two"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().IsNotSupported());
  CHECK(r.status().message().find("install libnats-dev") != std::string::npos);
  CHECK(Rev(*store) == 1);
  CHECK(store->GetNode("fact:a").ok());  // reads work
  // The binding file round-trips; a damaged one is Corruption naming it.
  auto read = cli::ReadRemoteBinding(dir / "x");
  REQUIRE(read.ok());
  CHECK(read->servers == b->servers);
  CHECK(read->subject() == "amem.team.rev");
  std::FILE* f = std::fopen((dir / "x/remote.json").c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs("{\"servers\": 1}", f);
  std::fclose(f);
  auto damaged = cli::ReadRemoteBinding(dir / "x");
  CHECK(damaged.status().IsCorruption());
  CHECK(damaged.status().message().find("remote.json") != std::string::npos);
  CHECK(cli::ParseRemote("http://x:1", "team", 3).status().IsInvalidArgument());
  CHECK(cli::ParseRemote("nats://x:1", "a.b", 3).status().IsInvalidArgument());
  CHECK(cli::ParseRemote("nats://x:1", "team", 0).status().IsInvalidArgument());
}

}  // namespace
}  // namespace amem::testing
