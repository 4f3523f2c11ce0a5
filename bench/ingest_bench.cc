// ingest_bench: bulk ingest, single-operation commits and store open, for amem and
// its peers in the same run (docs/DESIGN.md §8; budgets: ingest of 100K nodes + 300K
// edges <= 0.6 s, open <= 1 ms). Workload: bench/workload.h.
//
//   ingest_bench [--benchmarks=LIST] [--num=10000,100000] [--runs=5] [--warmup=1] [--vectors=1]
//                [--commit_ops=1000] [--opens=200] [--sqlite_sync=normal]
//                [--malloc_trim=0] [--hub_edges=100000] [--hub_batch=1000]
//                [--hub_commits=100000]
//
// Benchmarks (default: all, in this order), each run for every size in --num:
//   ingest          amem: one Batch of N nodes + 3N edges, Store::Apply into a fresh
//                   store, durable commit, opened as amem ingest opens it
//                   (StoreOptions::write_map). Timed: Apply only (store opened before).
//   ingest_stream   amem ingest without its parsing: the workload's JSON Lines (as
//                   amem_gen writes them) cut and parsed into pieces as amem ingest
//                   cuts them (kIngestPieceOps operations or about kIngestPieceBytes
//                   of input each; untimed), then Store::ApplyStream of the pieces,
//                   durable, into a fresh store (timed as ApplyStream runs: its map
//                   growth from the input's size, each piece's disk reservation and,
//                   should the map still fill, parsing the pieces again). Set beside
//                   ingest, it is the cost of writing in pieces rather than as one
//                   sorted batch.
//   ingest_parse    the other half of amem ingest: the same JSON Lines cut and parsed
//                   into pieces (timed; the MB/s column is of the JSON text), nothing
//                   written. amem ingest parses on a second thread while it writes.
//   ingest_nosync   the same with StoreOptions::durable = false.
//   ingest_nodes    amem phases: the N nodes alone into a fresh store (durable) ...
//   ingest_edges    ... then the 3N edges alone into that store.
//   lmdb_ingest     raw LMDB, the floor: N + 3N puts with equivalent bytes (node:
//                   8-byte id -> key, fields, content, vector; edge: 17-byte
//                   src|rel|dst -> weight, ts, payload, run, task) in one txn into
//                   a fresh env (two named dbs), durable commit.
//   lmdb_ingest_writemap  the same with MDB_WRITEMAP (dirty pages live in the
//                   file mapping instead of malloc'd buffers): is it a cheaper floor?
//   sqlite_ingest   SQLite, the peer: the same rows in one transaction, prepared
//                   statements, fresh file, journal_mode=WAL, synchronous=NORMAL
//                   (--sqlite_sync=full for a synced commit). Tables:
//                   nodes(id INTEGER PRIMARY KEY, key TEXT UNIQUE, ...) and
//                   edges(src, rel, dst, ...) with UNIQUE(src, rel, dst) (serves
//                   "by src") and an index on dst.
//   commit          amem: --commit_ops Store::PutNode calls, one commit each,
//                   durable, into a store already holding the N-node workload.
//   commit_nosync   the same, durable = false.
//   lmdb_commit     raw LMDB: one put per txn, durable; lmdb_commit_nosync: MDB_NOSYNC.
//   commit_pair     commit and lmdb_commit alternating one commit each (the same
//                   disk for both on a machine whose disk speed varies), with the
//                   ratio of commits/s (budget: amem >= 50% of raw LMDB). Raw LMDB
//                   twice: into an empty database (commit_pair_lmdb, as before) and
//                   into one that holds the workload's N nodes and edges, as the
//                   store does (commit_pair_lmdb_loaded: the same tree depth).
//   open            amem: median of --opens Store::Open calls on that store.
//   lmdb_open       raw LMDB on the same directory: env create+open, a read txn
//                   opening the main db.
//   hub             run once, not per size: one node receives --hub_edges edges
//                   (src:i -calls-> hub, so the hub's in list grows to that
//                   size) into a fresh store, in batches of --hub_batch, durable
//                   (hub_batched) and not (hub_batched_nosync), then
//                   --hub_commits edges as single-edge commits, not durable
//                   (hub_commits: an fsync per commit would measure the disk, not
//                   the list). Prints wall and CPU us/edge for the first and the
//                   last 10K edges: equal figures mean appending stays O(1). The
//                   durable run also pays the write-back of every page a commit
//                   dirtied, which grows with the store (random source keys touch
//                   more distinct e/out pages per batch) until a batch's edges each
//                   dirty their own pages; the nosync runs isolate the list.
//                   hub_batched_lmdb: the same durable batches into raw LMDB (the
//                   edge records by the same keys and the hub's in list), the
//                   floor of a copy-on-write B-tree keyed by hash.
// By default malloc keeps freed memory, so timed runs reuse pages the warm-up touched;
// --malloc_trim=1 keeps glibc's default (large frees go back to the kernel, every run
// pays first-touch page faults, as a one-shot `amem ingest` process would).
// Ingest timings are medians of --runs runs after one warm-up run. Each line prints
// `name : X micros/op; Y MB/s;` (op = one node or edge put; MB = input bytes:
// keys, content, meta, vectors, payloads), the CPU time and minor page faults of
// the timed region, and a check of what was stored.
#include <lmdb.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/coding.h"
#include "common/hash.h"
#include "store/store.h"
#include "tools/io/ingest.h"

using namespace amem;
using namespace amem::bench;

namespace {

constexpr const char* kProgram = "ingest_bench";

struct Config {
  int runs = 5;
  bool warmup = true;  // one untimed run first (bench/run_1m.sh turns it off at 1M)
  uint64_t commit_ops = 1000;
  uint64_t opens = 200;
  bool sqlite_full_sync = false;
};

// ---- result of one benchmark at one size ----
struct Timing {
  double median = 0, min = 0, max = 0;  // wall seconds
  double cpu_median = 0;
  uint64_t faults_median = 0;
  std::string check;  // what was stored, for the reader to compare across systems
};

// Runs `once` (which returns its timed region and fills `check`) 1 + runs times and
// keeps the medians of all but the first.
Timing Measure(int runs, bool warmup, const std::function<Sample(std::string*)>& once) {
  Timing t;
  std::string check;
  if (warmup) once(&check);  // page cache, allocator arenas, code
  std::vector<double> wall, cpu, faults;
  for (int r = 0; r < runs; ++r) {
    Sample s = once(&t.check);
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
    faults.push_back(static_cast<double>(s.faults));
  }
  t.faults_median = static_cast<uint64_t>(Median(faults));
  t.median = Median(wall);
  t.min = *std::min_element(wall.begin(), wall.end());
  t.max = *std::max_element(wall.begin(), wall.end());
  t.cpu_median = Median(cpu);
  return t;
}

uint64_t InputBytes(const Workload& w) {
  uint64_t bytes = 0;
  for (const NodeInput& n : w.nodes) {
    bytes += n.key.size() + n.content.size() + n.meta.size() + 4 * n.vector.size();
  }
  for (const EdgeInput& e : w.edges) {
    bytes += e.src.size() + e.rel.size() + e.dst.size() + e.payload.size();
  }
  return bytes;
}

std::string Seconds(double s) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f s", s);
  return buf;
}

void ReportTiming(const std::string& name, const Timing& t, uint64_t ops, uint64_t bytes,
                  int runs) {
  std::string extra = "median " + Seconds(t.median) + " of " + std::to_string(runs) +
                      " (min " + Seconds(t.min) + ", max " + Seconds(t.max) + "), cpu " +
                      Seconds(t.cpu_median) + ", " + std::to_string(t.faults_median) +
                      " page faults; " + t.check;
  Report(name, t.median, ops, bytes, extra);
}

// ---- amem ----

// bulk: StoreOptions::write_map, as `amem ingest` opens the store.
std::unique_ptr<Store> OpenStore(const std::string& dir, bool durable, bool bulk = false) {
  StoreOptions options;
  options.durable = durable;
  options.write_map = bulk;
  Result<std::unique_ptr<Store>> store = Store::Open(dir, options);
  if (!store.ok()) Die(kProgram, "Store::Open: " + store.status().ToString());
  return std::move(store).value();
}

std::string StoreCheck(const Store& store) {
  Result<StoreStats> stats = store.Stats();
  if (!stats.ok()) Die(kProgram, "Stats: " + stats.status().ToString());
  return "nodes " + std::to_string(stats->live_nodes) + ", edges " +
         std::to_string(stats->live_edges) + ", rev " + std::to_string(stats->revision);
}

Sample AmemApply(const ScratchDir& scratch, const std::vector<const Batch*>& batches,
                 bool durable, std::string* check) {
  const std::string dir = scratch.Sub("amem");
  RemoveAll(dir);
  std::unique_ptr<Store> store = OpenStore(dir, durable, /*bulk=*/true);
  Sample sample;
  for (const Batch* batch : batches) {
    Stopwatch watch;
    Result<uint64_t> rev = store->Apply(*batch);
    sample = watch.Elapsed();  // the last batch is the one measured
    if (!rev.ok()) Die(kProgram, "Apply: " + rev.status().ToString());
  }
  *check = StoreCheck(*store);
  return sample;
}

// The workload as `amem ingest` reads it: its JSON Lines text (amem_gen's) cut
// into pieces by io::IngestReader, kIngestPieceOps operations or about
// kIngestPieceBytes of input each, all parsed before the clock starts. Rewind
// (a rerun after the map filled) parses them again.
class ParsedPieces : public BatchStream {
 public:
  explicit ParsedPieces(const std::string& text) : text_(text) { Parse(); }
  Status Rewind() override {
    if (next_ > 0) Parse();
    next_ = 0;
    return Status::OK();
  }
  Result<bool> Next(Batch* piece) override {
    if (next_ == pieces_.size()) return false;
    std::swap(*piece, pieces_[next_++]);
    return true;
  }
  uint64_t SizeHint() const override { return text_.size(); }
  size_t size() const { return pieces_.size(); }

 private:
  void Parse() {
    io::IngestReader reader(text_);
    pieces_.clear();
    for (;;) {
      Batch piece;
      Result<bool> more = reader.Next(&piece);
      if (!more.ok()) Die(kProgram, "parsing the workload: " + more.status().ToString());
      if (!*more) break;
      pieces_.push_back(std::move(piece));
    }
  }

  const std::string& text_;
  std::vector<Batch> pieces_;
  size_t next_ = 0;
};

// Store::ApplyStream of the parsed pieces into a fresh store opened as amem
// ingest opens it, durable: amem ingest without its parsing.
Sample AmemStream(const ScratchDir& scratch, const std::string& text, std::string* check) {
  const std::string dir = scratch.Sub("amem");
  RemoveAll(dir);
  std::unique_ptr<Store> store = OpenStore(dir, true, /*bulk=*/true);
  ParsedPieces pieces(text);
  Stopwatch watch;
  Result<uint64_t> rev = store->ApplyStream(&pieces);
  const Sample sample = watch.Elapsed();
  if (!rev.ok()) Die(kProgram, "ApplyStream: " + rev.status().ToString());
  *check = StoreCheck(*store) + ", " + std::to_string(pieces.size()) + " pieces";
  return sample;
}

// The other half of amem ingest: the same JSON Lines cut and parsed into pieces,
// as its read-ahead thread does, and nothing written.
Sample AmemParse(const std::string& text, std::string* check) {
  Stopwatch watch;
  ParsedPieces pieces(text);
  const Sample sample = watch.Elapsed();
  *check = std::to_string(pieces.size()) + " pieces";
  return sample;
}

// ---- raw LMDB ----

void CheckMdb(int rc, const char* what) {
  if (rc != MDB_SUCCESS) Die(kProgram, std::string(what) + ": " + mdb_strerror(rc));
}

struct RawEnv {
  MDB_env* env = nullptr;
  MDB_dbi nodes = 0, edges = 0;

  RawEnv(const std::string& dir, size_t map_size, unsigned flags) {
    CheckMdb(mdb_env_create(&env), "mdb_env_create");
    CheckMdb(mdb_env_set_maxdbs(env, 32), "mdb_env_set_maxdbs");
    if (map_size) CheckMdb(mdb_env_set_mapsize(env, map_size), "mdb_env_set_mapsize");
    CheckMdb(mdb_env_open(env, dir.c_str(), flags | MDB_NOTLS, 0644), "mdb_env_open");
  }
  ~RawEnv() { mdb_env_close(env); }
  RawEnv(const RawEnv&) = delete;
  RawEnv& operator=(const RawEnv&) = delete;

  void OpenDbs(MDB_txn* txn, unsigned flags) {
    CheckMdb(mdb_dbi_open(txn, "nodes", flags, &nodes), "mdb_dbi_open");
    CheckMdb(mdb_dbi_open(txn, "edges", flags, &edges), "mdb_dbi_open");
  }
};

void Put(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view value) {
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  CheckMdb(mdb_put(txn, dbi, &k, &v, 0), "mdb_put");
}

// The node record a store would keep, in the spirit of the store's own encoding.
void EncodeNode(const NodeInput& n, std::string* key, std::string* value) {
  key->clear();
  PutBig64(key, NodeIdForKey(n.key));
  value->clear();
  value->push_back(static_cast<char>(n.type));
  PutLengthPrefixed(value, n.key);
  PutFloat(value, n.confidence);
  PutVarsint64(value, n.ts.value_or(0));
  PutLengthPrefixed(value, n.run.value_or(""));
  PutLengthPrefixed(value, n.task.value_or(""));
  PutLengthPrefixed(value, n.scope.value_or(""));
  PutLengthPrefixed(value, n.meta);
  PutLengthPrefixed(value, n.content);
  for (float f : n.vector) PutFloat(value, f);
}

void EncodeEdge(const EdgeInput& e, std::string* key, std::string* value) {
  key->clear();
  PutBig64(key, NodeIdForKey(e.src));
  key->push_back(static_cast<char>(ParseBuiltinRelation(e.rel).value_or(0)));
  PutBig64(key, NodeIdForKey(e.dst));
  value->clear();
  PutFloat(value, e.weight);
  PutVarsint64(value, e.ts.value_or(0));
  PutLengthPrefixed(value, e.payload);
  PutLengthPrefixed(value, e.run.value_or(""));
  PutLengthPrefixed(value, e.task.value_or(""));
}

size_t RawMapSize(const Workload& w) {
  return std::max<size_t>(size_t{1} << 30, 4 * InputBytes(w));
}

std::string RawCheck(MDB_env* env, const RawEnv& raw) {
  MDB_txn* txn;
  CheckMdb(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
  MDB_stat ns, es;
  CheckMdb(mdb_stat(txn, raw.nodes, &ns), "mdb_stat");
  CheckMdb(mdb_stat(txn, raw.edges, &es), "mdb_stat");
  mdb_txn_abort(txn);
  return "nodes " + std::to_string(ns.ms_entries) + ", edges " + std::to_string(es.ms_entries);
}

// Creates the databases and puts every node and edge of `w` in one transaction.
void LoadRaw(const Workload& w, RawEnv* raw) {
  std::string key, value;
  MDB_txn* txn;
  CheckMdb(mdb_txn_begin(raw->env, nullptr, 0, &txn), "mdb_txn_begin");
  raw->OpenDbs(txn, MDB_CREATE);
  for (const NodeInput& n : w.nodes) {
    EncodeNode(n, &key, &value);
    Put(txn, raw->nodes, key, value);
  }
  for (const EdgeInput& e : w.edges) {
    EncodeEdge(e, &key, &value);
    Put(txn, raw->edges, key, value);
  }
  CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
}

Sample LmdbIngest(const ScratchDir& scratch, const Workload& w, unsigned flags,
                  std::string* check) {
  const std::string dir = scratch.Sub("lmdb");
  RemoveAll(dir);
  std::filesystem::create_directories(dir);
  RawEnv raw(dir, RawMapSize(w), flags);
  Stopwatch watch;
  LoadRaw(w, &raw);
  Sample sample = watch.Elapsed();
  *check = RawCheck(raw.env, raw);
  return sample;
}

// ---- SQLite ----

void CheckSql(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    Die(kProgram, std::string(what) + ": " + sqlite3_errmsg(db));
  }
}

void Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = std::string(sql) + ": " + (err ? err : "?");
    sqlite3_free(err);
    Die(kProgram, msg);
  }
}

int64_t SqlCount(sqlite3* db, const char* sql) {
  sqlite3_stmt* st;
  CheckSql(db, sqlite3_prepare_v2(db, sql, -1, &st, nullptr), sql);
  CheckSql(db, sqlite3_step(st), sql);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

void BindText(sqlite3_stmt* st, int i, std::string_view s) {
  sqlite3_bind_text(st, i, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
}

Sample SqliteIngest(const ScratchDir& scratch, const Workload& w, bool full_sync,
                    std::string* check) {
  const std::string path = scratch.Sub("peer.sqlite");
  for (const char* suffix : {"", "-wal", "-shm"}) RemoveAll(path + suffix);
  sqlite3* db;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) Die(kProgram, "sqlite3_open " + path);
  Exec(db, "PRAGMA journal_mode=WAL");
  Exec(db, full_sync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  Exec(db,
       "CREATE TABLE nodes(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, type INTEGER,"
       " content TEXT, meta TEXT, confidence REAL, vector BLOB, ts INTEGER, run TEXT,"
       " task TEXT, scope TEXT);"
       "CREATE TABLE edges(src INTEGER NOT NULL, rel INTEGER NOT NULL, dst INTEGER NOT NULL,"
       " weight REAL, payload TEXT, ts INTEGER, run TEXT, task TEXT,"
       " UNIQUE(src, rel, dst));"
       "CREATE INDEX edges_by_dst ON edges(dst);");
  Stopwatch watch;
  sqlite3_stmt *ins_node, *ins_edge;
  CheckSql(db, sqlite3_prepare_v2(db, "INSERT INTO nodes VALUES(?,?,?,?,?,?,?,?,?,?,?)", -1,
                                  &ins_node, nullptr), "prepare");
  CheckSql(db, sqlite3_prepare_v2(db, "INSERT INTO edges VALUES(?,?,?,?,?,?,?,?)", -1,
                                  &ins_edge, nullptr), "prepare");
  Exec(db, "BEGIN");
  std::string vec;
  for (const NodeInput& n : w.nodes) {
    sqlite3_bind_int64(ins_node, 1, static_cast<int64_t>(NodeIdForKey(n.key)));
    BindText(ins_node, 2, n.key);
    sqlite3_bind_int(ins_node, 3, static_cast<int>(n.type));
    BindText(ins_node, 4, n.content);
    BindText(ins_node, 5, n.meta);
    sqlite3_bind_double(ins_node, 6, n.confidence);
    vec.clear();
    for (float f : n.vector) PutFloat(&vec, f);
    sqlite3_bind_blob(ins_node, 7, vec.data(), static_cast<int>(vec.size()), SQLITE_STATIC);
    sqlite3_bind_int64(ins_node, 8, n.ts.value_or(0));
    BindText(ins_node, 9, n.run.value_or(""));
    BindText(ins_node, 10, n.task.value_or(""));
    BindText(ins_node, 11, n.scope.value_or(""));
    CheckSql(db, sqlite3_step(ins_node), "insert node");
    sqlite3_reset(ins_node);
  }
  for (const EdgeInput& e : w.edges) {
    sqlite3_bind_int64(ins_edge, 1, static_cast<int64_t>(NodeIdForKey(e.src)));
    sqlite3_bind_int(ins_edge, 2, ParseBuiltinRelation(e.rel).value_or(0));
    sqlite3_bind_int64(ins_edge, 3, static_cast<int64_t>(NodeIdForKey(e.dst)));
    sqlite3_bind_double(ins_edge, 4, e.weight);
    BindText(ins_edge, 5, e.payload);
    sqlite3_bind_int64(ins_edge, 6, e.ts.value_or(0));
    BindText(ins_edge, 7, e.run.value_or(""));
    BindText(ins_edge, 8, e.task.value_or(""));
    CheckSql(db, sqlite3_step(ins_edge), "insert edge");
    sqlite3_reset(ins_edge);
  }
  Exec(db, "COMMIT");
  Sample sample = watch.Elapsed();
  sqlite3_finalize(ins_node);
  sqlite3_finalize(ins_edge);
  *check = "nodes " + std::to_string(SqlCount(db, "SELECT count(*) FROM nodes")) + ", edges " +
           std::to_string(SqlCount(db, "SELECT count(*) FROM edges"));
  sqlite3_close(db);
  return sample;
}

// ---- single-operation commits and open, on a store holding the workload ----

// Node `i` of the commit benchmarks: workload content under a fresh key.
NodeInput CommitNode(const Workload& w, uint64_t i, const std::string& tag) {
  NodeInput n = w.nodes[i % w.nodes.size()];
  n.key = "commit:" + tag + "-" + std::to_string(i);
  return n;
}

void ReportCommits(const char* name, Sample s, uint64_t ops, const std::string& check) {
  char extra[96];
  std::snprintf(extra, sizeof(extra), "%.0f commits/s, cpu %.1f us/op, %.1f faults/op; ",
                static_cast<double>(ops) / s.wall, s.cpu * 1e6 / static_cast<double>(ops),
                static_cast<double>(s.faults) / static_cast<double>(ops));
  Report(name, s.wall, ops, 0, extra + check);
}

void AmemCommits(const std::string& dir, const Workload& w, const Config& config,
                 bool durable) {
  std::unique_ptr<Store> store = OpenStore(dir, durable);
  const std::string tag = durable ? "sync" : "nosync";
  std::vector<NodeInput> inputs;
  for (uint64_t i = 0; i < config.commit_ops; ++i) inputs.push_back(CommitNode(w, i, tag));
  Stopwatch watch;
  for (NodeInput& n : inputs) {
    Result<uint64_t> rev = store->PutNode(std::move(n));
    if (!rev.ok()) Die(kProgram, "PutNode: " + rev.status().ToString());
  }
  ReportCommits(durable ? "commit" : "commit_nosync", watch.Elapsed(), config.commit_ops,
                StoreCheck(*store));
}

void LmdbCommits(const ScratchDir& scratch, const Workload& w, const Config& config,
                 bool durable) {
  const std::string dir = scratch.Sub(durable ? "lmdb_commit" : "lmdb_commit_nosync");
  RemoveAll(dir);
  std::filesystem::create_directories(dir);
  RawEnv raw(dir, RawMapSize(w), durable ? 0 : MDB_NOSYNC);
  {
    MDB_txn* txn;
    CheckMdb(mdb_txn_begin(raw.env, nullptr, 0, &txn), "mdb_txn_begin");
    raw.OpenDbs(txn, MDB_CREATE);
    CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  std::vector<NodeInput> inputs;
  for (uint64_t i = 0; i < config.commit_ops; ++i) inputs.push_back(CommitNode(w, i, "raw"));
  std::string key, value;
  Stopwatch watch;
  for (const NodeInput& n : inputs) {
    MDB_txn* txn;
    CheckMdb(mdb_txn_begin(raw.env, nullptr, 0, &txn), "mdb_txn_begin");
    EncodeNode(n, &key, &value);
    Put(txn, raw.nodes, key, value);
    CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  ReportCommits(durable ? "lmdb_commit" : "lmdb_commit_nosync", watch.Elapsed(),
                config.commit_ops, RawCheck(raw.env, raw));
}

// amem's durable PutNode and raw LMDB's durable put, alternating one commit each,
// so that all see the same disk (its speed varies with the machine's load). Raw
// LMDB twice: an empty database, and one holding the workload as the store does
// (the same number of records, so the same tree depth for a put to go through).
// Reports each and the ratios of commits/s: the budget is amem >= 50% of LMDB.
void PairedCommits(const std::string& dir, const ScratchDir& scratch, const Workload& w,
                   const Config& config) {
  std::unique_ptr<Store> store = OpenStore(dir, true);
  auto raw_env = [&](const std::string& name) {
    const std::string raw_dir = scratch.Sub(name);
    RemoveAll(raw_dir);
    std::filesystem::create_directories(raw_dir);
    return std::make_unique<RawEnv>(raw_dir, RawMapSize(w), 0);
  };
  std::unique_ptr<RawEnv> empty = raw_env("lmdb_commit_pair"), loaded = raw_env("lmdb_loaded");
  {
    MDB_txn* txn;
    CheckMdb(mdb_txn_begin(empty->env, nullptr, 0, &txn), "mdb_txn_begin");
    empty->OpenDbs(txn, MDB_CREATE);
    CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  LoadRaw(w, loaded.get());
  std::string key, value;
  Sample amem, lmdb, lmdb_loaded;
  auto add = [](Sample* to, const Sample& s) {
    to->wall += s.wall;
    to->cpu += s.cpu;
    to->faults += s.faults;
  };
  auto raw_put = [&](RawEnv* raw, Sample* into) {
    Stopwatch b;
    MDB_txn* txn;
    CheckMdb(mdb_txn_begin(raw->env, nullptr, 0, &txn), "mdb_txn_begin");
    Put(txn, raw->nodes, key, value);
    CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
    add(into, b.Elapsed());
  };
  for (uint64_t i = 0; i < config.commit_ops; ++i) {
    NodeInput n = CommitNode(w, i, "pair");
    EncodeNode(CommitNode(w, i, "raw"), &key, &value);
    Stopwatch a;
    Result<uint64_t> rev = store->PutNode(std::move(n));
    add(&amem, a.Elapsed());
    if (!rev.ok()) Die(kProgram, "PutNode: " + rev.status().ToString());
    raw_put(empty.get(), &lmdb);
    raw_put(loaded.get(), &lmdb_loaded);
  }
  ReportCommits("commit_pair_amem", amem, config.commit_ops, StoreCheck(*store));
  ReportCommits("commit_pair_lmdb", lmdb, config.commit_ops, RawCheck(empty->env, *empty));
  ReportCommits("commit_pair_lmdb_loaded", lmdb_loaded, config.commit_ops,
                RawCheck(loaded->env, *loaded));
  std::printf("   ratio durable commits/s amem / lmdb: %.0f%% against an empty database, "
              "%.0f%% against one holding the workload (budget >= 50%%)\n",
              100.0 * lmdb.wall / amem.wall, 100.0 * lmdb_loaded.wall / amem.wall);
}

void AmemOpens(const std::string& dir, const Config& config) {
  std::vector<double> samples;
  for (uint64_t i = 0; i <= config.opens; ++i) {
    StoreOptions options;
    options.create_if_missing = false;
    double start = NowSeconds();
    Result<std::unique_ptr<Store>> store = Store::Open(dir, options);
    double seconds = NowSeconds() - start;
    if (!store.ok()) Die(kProgram, "Store::Open: " + store.status().ToString());
    if (i > 0) samples.push_back(seconds);  // the first is the warm-up
  }
  double median = Median(samples);
  char extra[96];
  std::snprintf(extra, sizeof(extra), "median %.3f ms of %llu; budget 1 ms: %s", median * 1e3,
                static_cast<unsigned long long>(config.opens), median <= 1e-3 ? "met" : "MISSED");
  Report("open", median, 1, 0, extra);
}

void LmdbOpens(const std::string& dir, const Config& config) {
  std::vector<double> samples;
  for (uint64_t i = 0; i <= config.opens; ++i) {
    double start = NowSeconds();
    {
      RawEnv raw(dir, 0, 0);
      MDB_txn* txn;
      CheckMdb(mdb_txn_begin(raw.env, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin");
      MDB_dbi main_db;
      CheckMdb(mdb_dbi_open(txn, nullptr, 0, &main_db), "mdb_dbi_open");
      mdb_txn_abort(txn);
      if (i > 0) samples.push_back(NowSeconds() - start);
    }
  }
  double median = Median(samples);
  char extra[128];
  std::snprintf(extra, sizeof(extra),
                "median %.3f ms of %llu (env create+open, a read txn opening the main db)",
                median * 1e3, static_cast<unsigned long long>(config.opens));
  Report("lmdb_open", median, 1, 0, extra);
}

// ---- a hub: one node receiving many edges ----

struct HubConfig {
  uint64_t edges = 100000;
  uint64_t batch = 1000;
  uint64_t commits = 100000;
};

EdgeInput HubEdge(uint64_t i) {
  EdgeInput e;
  e.src = "symbol:caller-" + std::to_string(i);
  e.rel = "calls";
  e.dst = "symbol:hub";
  return e;
}

// Bytes this process has written with write(2)/pwrite(2) so far (/proc/self/io
// wchar): the pages a commit writes out (without MDB_WRITEMAP), 0 if unreadable.
uint64_t BytesWritten() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return 0;
  char line[128];
  unsigned long long v = 0;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "wchar: %llu", &v) == 1) break;
  }
  std::fclose(f);
  return v;
}

// Adds `edges` edges into the hub, `per_commit` per commit(begin, end) (which
// writes edges [begin, end) in one transaction and says how long it took), and
// reports the time per edge over the first and the last `window` edges and overall.
// `check` describes the result afterwards (and dies if it is wrong).
void HubWindows(const char* name, uint64_t edges, uint64_t per_commit, bool durable,
                const std::function<Sample(uint64_t, uint64_t)>& commit,
                const std::function<std::string()>& check) {
  const uint64_t window = std::min<uint64_t>(10000, edges / 2);
  double first = 0, last = 0, total = 0, first_cpu = 0, last_cpu = 0;
  double first_bytes = 0, last_bytes = 0;
  for (uint64_t begin = 0; begin < edges; begin += per_commit) {
    const uint64_t end = std::min(edges, begin + per_commit);
    const uint64_t written = BytesWritten();
    const Sample sample = commit(begin, end);
    const double bytes_per_edge =
        static_cast<double>(BytesWritten() - written) / static_cast<double>(end - begin);
    total += sample.wall;
    // A commit straddling a window boundary is split by its share of edges.
    const double per_edge = sample.wall / static_cast<double>(end - begin);
    const double cpu_per_edge = sample.cpu / static_cast<double>(end - begin);
    auto overlap = [&](uint64_t lo, uint64_t hi) {
      return static_cast<double>(std::min(end, hi) > std::max(begin, lo)
                                     ? std::min(end, hi) - std::max(begin, lo)
                                     : 0);
    };
    first += per_edge * overlap(0, window);
    last += per_edge * overlap(edges - window, edges);
    first_cpu += cpu_per_edge * overlap(0, window);
    last_cpu += cpu_per_edge * overlap(edges - window, edges);
    first_bytes += bytes_per_edge * overlap(0, window);
    last_bytes += bytes_per_edge * overlap(edges - window, edges);
  }
  const std::string result = check();
  const double w = static_cast<double>(window);
  char extra[384];
  std::snprintf(extra, sizeof(extra),
                "%llu edges, %llu per commit%s: first %lluK %.2f us/edge (cpu %.2f), "
                "last %lluK %.2f us/edge (cpu %.2f), last/first %.2fx (cpu %.2fx); "
                "pages written %.0f -> %.0f bytes/edge; %s",
                static_cast<unsigned long long>(edges),
                static_cast<unsigned long long>(per_commit), durable ? "" : ", nosync",
                static_cast<unsigned long long>(window / 1000), first * 1e6 / w,
                first_cpu * 1e6 / w, static_cast<unsigned long long>(window / 1000),
                last * 1e6 / w, last_cpu * 1e6 / w, last / first, last_cpu / first_cpu,
                first_bytes / w, last_bytes / w, result.c_str());
  Report(name, total, edges, 0, extra);
}

// The hub through amem: Store::Apply of HubEdge batches into a fresh store.
void HubRun(const ScratchDir& scratch, const char* name, uint64_t edges, uint64_t per_commit,
            bool durable) {
  const std::string dir = scratch.Sub(name);
  RemoveAll(dir);
  std::unique_ptr<Store> store = OpenStore(dir, durable);
  HubWindows(
      name, edges, per_commit, durable,
      [&](uint64_t begin, uint64_t end) {
        Batch batch;
        for (uint64_t i = begin; i < end; ++i) batch.PutEdge(HubEdge(i));
        Stopwatch watch;
        Result<uint64_t> rev = store->Apply(batch);
        const Sample sample = watch.Elapsed();
        if (!rev.ok()) Die(kProgram, "Apply: " + rev.status().ToString());
        return sample;
      },
      [&] {
        Result<std::vector<EdgeRecord>> in = store->In("symbol:hub");
        if (!in.ok()) Die(kProgram, "In: " + in.status().ToString());
        if (in->size() != edges) Die(kProgram, "hub has " + std::to_string(in->size()) + " edges");
        return "in(hub) lists " + std::to_string(in->size());
      });
}

// The same edges into raw LMDB, durable, as a store keeps them at the least: the
// edge record under its key (source id, relation, target id: spread by the hash of
// the source, as amem's) and the hub's in list (one DUPSORT key, the sources'
// ids). The floor a copy-on-write B-tree keyed by hash sets for this workload.
void HubRawRun(const ScratchDir& scratch, const char* name, uint64_t edges,
               uint64_t per_commit) {
  const std::string dir = scratch.Sub(name);
  RemoveAll(dir);
  std::filesystem::create_directories(dir);
  RawEnv raw(dir, size_t{1} << 30, 0);
  MDB_dbi in_list = 0;
  {
    MDB_txn* txn;
    CheckMdb(mdb_txn_begin(raw.env, nullptr, 0, &txn), "mdb_txn_begin");
    raw.OpenDbs(txn, MDB_CREATE);
    CheckMdb(mdb_dbi_open(txn, "in", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &in_list),
             "mdb_dbi_open");
    CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }
  std::string key, value, hub;
  PutBig64(&hub, NodeIdForKey("symbol:hub"));
  HubWindows(
      name, edges, per_commit, true,
      [&](uint64_t begin, uint64_t end) {
        Stopwatch watch;
        MDB_txn* txn;
        CheckMdb(mdb_txn_begin(raw.env, nullptr, 0, &txn), "mdb_txn_begin");
        for (uint64_t i = begin; i < end; ++i) {
          const EdgeInput e = HubEdge(i);
          EncodeEdge(e, &key, &value);
          Put(txn, raw.edges, key, value);
          Put(txn, in_list, hub, key.substr(0, 8));  // the source's id
        }
        CheckMdb(mdb_txn_commit(txn), "mdb_txn_commit");
        return watch.Elapsed();
      },
      [&] {
        std::string counts = RawCheck(raw.env, raw);
        if (counts != "nodes 0, edges " + std::to_string(edges)) {
          Die(kProgram, "raw hub: " + counts);
        }
        return counts;
      });
}

void HubBench(const HubConfig& config) {
  std::printf("== hub: one node receiving %llu edges\n",
              static_cast<unsigned long long>(config.edges));
  ScratchDir scratch("amem-hub-bench");
  HubRun(scratch, "hub_batched", config.edges, config.batch, true);
  HubRun(scratch, "hub_batched_nosync", config.edges, config.batch, false);
  HubRun(scratch, "hub_commits", config.commits, 1, false);
  HubRawRun(scratch, "hub_batched_lmdb", config.edges, config.batch);
  std::fflush(stdout);
}

// ---- driver ----

bool Wanted(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

void RunSize(uint64_t n, const std::vector<std::string>& benchmarks, bool vectors,
             const Config& config) {
  WorkloadOptions wo;
  wo.num_nodes = n;
  wo.vectors = vectors;
  // At 1M the fixed start would put the last sessions years ahead of the clock,
  // which the store refuses; smaller sizes keep the fixed start (and checksums).
  wo.start_ts = std::min(wo.start_ts, WorkloadStartEndingNow(wo));
  double gen_start = NowSeconds();
  Workload w = GenerateWorkload(wo);
  const double gen_seconds = NowSeconds() - gen_start;
  const uint64_t ops = w.nodes.size() + w.edges.size();
  const uint64_t bytes = InputBytes(w);
  std::printf("== N = %zu nodes, %zu edges, %.1f MB input, vectors %s; "
              "workload checksum %016llx (generated in %.2f s)\n",
              w.nodes.size(), w.edges.size(), bytes / 1048576.0, vectors ? "on" : "off",
              static_cast<unsigned long long>(WorkloadChecksum(w)), gen_seconds);

  ScratchDir scratch("amem-ingest-bench");
  Batch all, nodes_only, edges_only;
  double batch_start = NowSeconds();
  AddToBatch(w, &all);
  const double batch_seconds = NowSeconds() - batch_start;
  for (const NodeInput& node : w.nodes) nodes_only.PutNode(node);
  for (const EdgeInput& edge : w.edges) edges_only.PutEdge(edge);

  std::map<std::string, Timing> medians;
  auto ingest = [&](const std::string& name, uint64_t name_ops, uint64_t name_bytes,
                    const std::function<Sample(std::string*)>& once) {
    if (!Wanted(benchmarks, name)) return;
    Timing t = Measure(config.runs, config.warmup, once);
    medians[name] = t;
    ReportTiming(name, t, name_ops, name_bytes, config.runs);
  };
  ingest("ingest", ops, bytes, [&](std::string* check) {
    return AmemApply(scratch, {&all}, true, check);
  });
  if (Wanted(benchmarks, "ingest_stream") || Wanted(benchmarks, "ingest_parse")) {
    std::string text;
    for (const NodeInput& node : w.nodes) text += NodeToJsonLine(node);
    for (const EdgeInput& edge : w.edges) text += EdgeToJsonLine(edge);
    ingest("ingest_stream", ops, bytes,
           [&](std::string* check) { return AmemStream(scratch, text, check); });
    ingest("ingest_parse", ops, text.size(),
           [&](std::string* check) { return AmemParse(text, check); });
  }
  ingest("ingest_nosync", ops, bytes, [&](std::string* check) {
    return AmemApply(scratch, {&all}, false, check);
  });
  uint64_t edge_bytes = 0;
  for (const EdgeInput& e : w.edges) {
    edge_bytes += e.src.size() + e.rel.size() + e.dst.size() + e.payload.size();
  }
  ingest("ingest_nodes", w.nodes.size(), bytes - edge_bytes, [&](std::string* check) {
    return AmemApply(scratch, {&nodes_only}, true, check);
  });
  ingest("ingest_edges", w.edges.size(), edge_bytes, [&](std::string* check) {
    return AmemApply(scratch, {&nodes_only, &edges_only}, true, check);
  });
  ingest("lmdb_ingest", ops, bytes, [&](std::string* check) {
    return LmdbIngest(scratch, w, 0, check);
  });
  ingest("lmdb_ingest_writemap", ops, bytes, [&](std::string* check) {
    return LmdbIngest(scratch, w, MDB_WRITEMAP, check);
  });
  ingest("sqlite_ingest", ops, bytes, [&](std::string* check) {
    return SqliteIngest(scratch, w, config.sqlite_full_sync, check);
  });

  if (medians.count("ingest")) {
    const Timing& amem = medians["ingest"];
    std::printf("   batch build (AddToBatch copies, untimed above): %s\n",
                Seconds(batch_seconds).c_str());
    for (const char* peer : {"lmdb_ingest", "sqlite_ingest"}) {
      if (medians.count(peer)) {
        const Timing& p = medians[peer];
        std::printf("   ratio ingest / %-14s %.2fx wall, %.2fx cpu\n",
                    (std::string(peer) + ":").c_str(), amem.median / p.median,
                    amem.cpu_median / p.cpu_median);
      }
    }
    // The budget is stated for 100K nodes + 300K edges; scale it linearly.
    const double budget = 0.6 * static_cast<double>(n) / 100000.0;
    auto verdict = [&](double t) {
      if (t <= budget) return std::string("met");
      return "MISSED by " + Seconds(t - budget) + " (" +
             std::to_string(static_cast<int>(100 * t / budget)) + "% of budget)";
    };
    std::printf("   budget %s for this size (0.6 s per 100K nodes + 300K edges): wall %s;"
                " cpu %s\n", Seconds(budget).c_str(), verdict(amem.median).c_str(),
                verdict(amem.cpu_median).c_str());
  }

  const bool need_store = Wanted(benchmarks, "commit") || Wanted(benchmarks, "commit_nosync") ||
                          Wanted(benchmarks, "commit_pair") ||
                          Wanted(benchmarks, "open") || Wanted(benchmarks, "lmdb_open");
  if (need_store) {
    const std::string dir = scratch.Sub("populated");
    {
      std::unique_ptr<Store> store = OpenStore(dir, false);
      Result<uint64_t> rev = store->Apply(all);
      if (!rev.ok()) Die(kProgram, "Apply: " + rev.status().ToString());
    }
    if (Wanted(benchmarks, "open")) AmemOpens(dir, config);
    if (Wanted(benchmarks, "lmdb_open")) LmdbOpens(dir, config);
    if (Wanted(benchmarks, "commit")) AmemCommits(dir, w, config, true);
    if (Wanted(benchmarks, "commit_nosync")) AmemCommits(dir, w, config, false);
    if (Wanted(benchmarks, "commit_pair")) PairedCommits(dir, scratch, w, config);
  }
  if (Wanted(benchmarks, "lmdb_commit")) LmdbCommits(scratch, w, config, true);
  if (Wanted(benchmarks, "lmdb_commit_nosync")) LmdbCommits(scratch, w, config, false);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  const std::vector<std::string> known = {
      "ingest",      "ingest_stream", "ingest_parse", "ingest_nosync", "ingest_nodes", "ingest_edges", "lmdb_ingest",
      "lmdb_ingest_writemap", "sqlite_ingest", "commit", "commit_nosync", "lmdb_commit",
      "lmdb_commit_nosync", "commit_pair", "open", "lmdb_open", "hub"};
  std::string all_names;
  for (const std::string& k : known) all_names += (all_names.empty() ? "" : ",") + k;
  std::vector<std::string> benchmarks = flags.List("benchmarks", all_names);
  std::vector<std::string> sizes = flags.List("num", "10000,100000");
  Config config;
  config.runs = static_cast<int>(flags.Uint("runs", 5));
  config.warmup = flags.Bool("warmup", true);
  config.commit_ops = flags.Uint("commit_ops", 1000);
  config.opens = flags.Uint("opens", 200);
  std::string sync = flags.String("sqlite_sync", "normal");
  bool vectors = flags.Bool("vectors", true);
  bool malloc_trim = flags.Bool("malloc_trim", false);
  HubConfig hub;
  hub.edges = flags.Uint("hub_edges", hub.edges);
  hub.batch = flags.Uint("hub_batch", hub.batch);
  hub.commits = flags.Uint("hub_commits", hub.commits);
  if (!flags.Unknown().empty()) {
    Die(kProgram, "unknown argument " + flags.Unknown()[0] +
                      "\nusage: ingest_bench [--benchmarks=a,b] [--num=10000,100000] "
                      "[--runs=5] [--vectors=0|1] [--commit_ops=1000] [--opens=200] "
                      "[--sqlite_sync=normal|full] [--malloc_trim=0|1] [--hub_edges=100000] "
                      "[--hub_batch=1000] [--hub_commits=100000]", 2);
  }
  for (const std::string& b : benchmarks) {
    if (!Wanted(known, b)) Die(kProgram, "unknown benchmark " + b + "; known: " + all_names, 2);
  }
  if (sync != "normal" && sync != "full") Die(kProgram, "--sqlite_sync is normal or full", 2);
  config.sqlite_full_sync = sync == "full";
  if (config.runs < 1 || config.commit_ops < 1 || config.opens < 1) {
    Die(kProgram, "--runs, --commit_ops and --opens must be at least 1", 2);
  }
  if (hub.edges < 2 || hub.commits < 2 || hub.batch < 1) {
    Die(kProgram, "--hub_edges and --hub_commits must be at least 2, --hub_batch 1", 2);
  }
  std::vector<uint64_t> nums;
  for (const std::string& s : sizes) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str() || *end != '\0' || v < 2 || v >= (1ULL << 31)) {
      Die(kProgram, "--num wants sizes >= 2, got '" + s + "'", 2);
    }
    nums.push_back(v);
  }
  const char* malloc_mode = ConfigureMalloc(malloc_trim);
  std::printf("ingest_bench: amem vs raw %s vs SQLite %s (journal_mode=WAL, "
              "synchronous=%s); medians of %d runs%s; %s\n",
              MDB_VERSION_STRING, sqlite3_libversion(), sync.c_str(), config.runs,
              config.warmup ? " after a warm-up" : " without warm-up (cold)", malloc_mode);
  // The hub runs once; the rest per size, and only if one of them was asked for.
  if (std::any_of(benchmarks.begin(), benchmarks.end(),
                  [](const std::string& b) { return b != "hub"; })) {
    for (uint64_t n : nums) RunSize(n, benchmarks, vectors, config);
  }
  if (Wanted(benchmarks, "hub")) HubBench(hub);
  return 0;
}
