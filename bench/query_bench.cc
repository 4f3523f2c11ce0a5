// query_bench: queries 1-11 on the paper's workload (bench/workload.h), side by
// side with the peers of docs/DESIGN.md §8, in one run on this machine.
//
//   query_bench [--num=10000,100000] [--reps=21] [--pairs=50] [--peers=1]
//               [--nx_betweenness_max=10000] [--igraph_betweenness_max=1000000]
//               [--nx_pagerank_max=100000] [--threads=2] [--betweenness_reps=3]
//               [--benchmarks=traverse,search,temporal,impact,similar,context,
//                 resolve,bm25,hybrid,pagerank,degree,betweenness,bfs,dijkstra]
//
// Per size N: the workload is generated, compiled into a snapshot file and mapped
// (pages pre-faulted), then every query is warmed up and timed call by call; the
// medians are printed as db_bench lines and, at the end, as one table:
//   query | N | amem median | peer | peer median | amem/peer | budget
// Peers: SQLite FTS5 (bm25(), same documents and query strings) for text search,
// a plain C cosine scan and a raw read of the vector block (the bandwidth floor)
// for similar, and bench/peers/graph_peers.py (igraph's C core and networkx,
// /usr/bin/python3) for PageRank, betweenness and shortest paths on the same
// edges, sources and node pairs. Budgets are docs/DESIGN.md §8 / docs/QUERIES.md at 100K.
//
// Betweenness peers compute what amem does: Brandes from amem's 200 sampled sources
// (query::SampleSources, the same seed) to every target on the undirected simple
// graph — networkx's betweenness_centrality_subset and igraph's C
// igraph_betweenness_subset (through ctypes from libigraph3, as Debian's
// python3-igraph 0.10.2 has no sources= argument; see graph_peers.py). After
// timing, amem's scores are compared with each peer's and the largest difference is
// printed ("betweenness agreement"). Each peer is one timed run. igraph's C core
// covers every default size (8.1 s at 100K nodes / 300K edges on this 2-core
// machine; default limit 1M). networkx's pure Python took 6.4 s at 10K but 269 s
// (4.5 min, one run, the whole rest of the 100K betweenness bench took under a
// minute) at 100K, so by default it runs up to 10K only, which keeps the default
// bench to minutes; --nx_betweenness_max=100000 adds it at 100K.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/hash.h"
#include "common/tokenizer.h"
#include "query/centrality.h"
#include "query/context.h"
#include "query/internal/graph_kernels.h"
#include "query/hybrid_search.h"
#include "query/impact.h"
#include "query/path.h"
#include "query/resolve.h"
#include "query/search.h"
#include "query/similar.h"
#include "query/temporal.h"
#include "query/text_search.h"
#include "query/traverse.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"

namespace amem::bench {
namespace {

constexpr const char* kProgram = "query_bench";
uint64_t g_sink = 0;  // results feed this so no call is optimised away

struct Row {
  std::string query;
  uint64_t n = 0;
  double amem = 0;       // seconds
  std::string peer;      // "" when none
  double peer_time = 0;  // seconds
  std::string budget;
};
std::vector<Row> g_rows;

std::string FormatTime(double s) {
  char buf[32];
  if (s <= 0) return "-";
  if (s < 1e-3) {
    std::snprintf(buf, sizeof(buf), "%.1f us", s * 1e6);
  } else if (s < 1) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f s", s);
  }
  return buf;
}

// Median seconds per call of fn(i), i = 0..reps-1, after `warmup` calls.
double TimeCalls(int reps, const std::function<void(int)>& fn, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) fn(i);
  std::vector<double> samples;
  samples.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    double t = NowSeconds();
    fn(i);
    samples.push_back(NowSeconds() - t);
  }
  return Median(samples);
}

void Record(const std::string& query, uint64_t n, double amem, const std::string& peer,
            double peer_time, const std::string& budget) {
  g_rows.push_back({query, n, amem, peer, peer_time, budget});
  std::string extra = "(" + std::to_string(n) + " nodes)";
  if (!peer.empty() && peer_time > 0) extra += " peer " + peer + " " + FormatTime(peer_time);
  Report(query, amem, 1, 0, extra);
}

// ---- peers ----

class Fts5 {
 public:
  explicit Fts5(const snapshot::Reader& r) {
    if (sqlite3_open(":memory:", &db_) != SQLITE_OK) Die(kProgram, "sqlite3_open failed");
    Exec("CREATE VIRTUAL TABLE docs USING fts5(content)");
    Exec("BEGIN");
    sqlite3_stmt* ins = nullptr;
    sqlite3_prepare_v2(db_, "INSERT INTO docs(rowid, content) VALUES(?1, ?2)", -1, &ins, nullptr);
    for (uint32_t i = 0; i < r.node_count(); ++i) {
      std::string_view c = r.content(i);
      sqlite3_bind_int64(ins, 1, i);
      sqlite3_bind_text(ins, 2, c.data(), static_cast<int>(c.size()), SQLITE_STATIC);
      if (sqlite3_step(ins) != SQLITE_DONE) Die(kProgram, sqlite3_errmsg(db_));
      sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    Exec("COMMIT");
    sqlite3_prepare_v2(db_, "SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY rank LIMIT 10",
                       -1, &query_, nullptr);
  }
  ~Fts5() {
    sqlite3_finalize(query_);
    sqlite3_close(db_);
  }
  size_t Search(const std::string& match) {
    sqlite3_bind_text(query_, 1, match.data(), static_cast<int>(match.size()), SQLITE_STATIC);
    size_t rows = 0;
    while (sqlite3_step(query_) == SQLITE_ROW) rows += 1 + sqlite3_column_int64(query_, 0);
    sqlite3_reset(query_);
    return rows;
  }

 private:
  void Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      Die(kProgram, std::string("sqlite: ") + (err ? err : "?") +
                        " (is SQLite built with FTS5?)");
    }
  }
  sqlite3* db_ = nullptr;
  sqlite3_stmt* query_ = nullptr;
};

// The "plain C scan": cosine of every stored vector with the query, top 10 kept
// by insertion. Scalar loops as anyone would write them.
uint32_t CScanTop10(const snapshot::Reader& r, const float* q, uint32_t dim) {
  double best[10];
  uint32_t idx[10];
  int kept = 0;
  double qn = 0;
  for (uint32_t k = 0; k < dim; ++k) qn += q[k] * q[k];
  qn = std::sqrt(qn);
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    const float* v = r.vector(i);
    if (!v) continue;
    float dot = 0, vn = 0;
    for (uint32_t k = 0; k < dim; ++k) {
      dot += q[k] * v[k];
      vn += v[k] * v[k];
    }
    if (vn == 0) continue;
    double sim = dot / (qn * std::sqrt(vn));
    if (kept == 10 && sim <= best[9]) continue;
    int p = kept < 10 ? kept++ : 9;
    while (p > 0 && best[p - 1] < sim) {
      best[p] = best[p - 1];
      idx[p] = idx[p - 1];
      --p;
    }
    best[p] = sim;
    idx[p] = i;
  }
  return kept ? idx[0] : 0;
}

// Reads every vector once (8 independent sums): the memory-bandwidth floor of a scan.
float ReadFloor(const snapshot::Reader& r, uint32_t dim) {
  float acc[8] = {0};
  for (uint32_t i = 0; i < r.node_count(); ++i) {
    const float* v = r.vector(i);
    if (!v) continue;
    for (uint32_t k = 0; k + 8 <= dim; k += 8) {
      for (int l = 0; l < 8; ++l) acc[l] += v[k + l];
    }
  }
  float s = 0;
  for (float a : acc) s += a;
  return s;
}

bool EnsurePythonPeers() {
  // libigraph3: igraph's C core as a shared library, for igraph_betweenness_subset
  // (graph_peers.py) when python-igraph has no sources= argument.
  const char* kCheck =
      "/usr/bin/python3 -c 'import ctypes, networkx, igraph; ctypes.CDLL(\"libigraph.so.3\")' "
      "2>/dev/null";
  if (std::system(kCheck) == 0) return true;
  std::fprintf(stderr, "%s: installing python3-networkx python3-igraph libigraph3 with apt-get\n",
               kProgram);
  std::system("apt-get install -y python3-networkx python3-igraph libigraph3 >/dev/null 2>&1");
  return std::system("/usr/bin/python3 -c 'import networkx, igraph' 2>/dev/null") == 0;
}

std::string PeersScript() {
  std::string here = __FILE__;
  return here.substr(0, here.find_last_of('/')) + "/peers/graph_peers.py";
}

// The scores a peer wrote with --scores-dir (one per node, amem's scaling); empty
// when there is no such file.
std::vector<double> ReadPeerScores(const ScratchDir& dir, const std::string& peer) {
  std::vector<double> scores;
  std::FILE* f = std::fopen(dir.Sub("betweenness_" + peer + ".txt").c_str(), "r");
  if (f == nullptr) return scores;
  double x = 0;
  while (std::fscanf(f, "%lf", &x) == 1) scores.push_back(x);
  std::fclose(f);
  return scores;
}

nlohmann::json RunGraphPeers(const snapshot::Reader& r, const ScratchDir& dir,
                             const std::vector<std::pair<uint32_t, uint32_t>>& pairs,
                             const std::vector<uint32_t>& sources, bool nx_betweenness,
                             bool ig_betweenness, bool nx_pagerank) {
  std::string edges = dir.Sub("edges.txt"), pf = dir.Sub("pairs.txt"), sf = dir.Sub("sources.txt");
  {
    std::FILE* f = std::fopen(edges.c_str(), "w");
    for (uint32_t j = 0; j < r.edge_count(); ++j) {
      std::fprintf(f, "%u %u %.9g\n", r.edge_source(j), r.edge_target(j), r.edge_weight(j));
    }
    std::fclose(f);
    f = std::fopen(pf.c_str(), "w");
    for (auto [u, v] : pairs) std::fprintf(f, "%u %u\n", u, v);
    std::fclose(f);
    f = std::fopen(sf.c_str(), "w");
    for (uint32_t s : sources) std::fprintf(f, "%u\n", s);
    std::fclose(f);
  }
  std::string cmd = "/usr/bin/python3 " + PeersScript() + " --edges " + edges + " --nodes " +
                    std::to_string(r.node_count()) + " --pairs " + pf + " --sources " + sf +
                    " --nx-betweenness " + (nx_betweenness ? "1" : "0") +
                    " --igraph-betweenness " + (ig_betweenness ? "1" : "0") +
                    " --nx-pagerank " + (nx_pagerank ? "1" : "0") + " --scores-dir " +
                    dir.path();
  std::fprintf(stderr, "%s: running %s\n", kProgram, cmd.c_str());
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  while (size_t got = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, got);
  if (pclose(p) != 0 || out.empty()) {
    std::fprintf(stderr, "%s: graph peers failed\n", kProgram);
    return {};
  }
  return nlohmann::json::parse(out, nullptr, false);
}

double PeerTime(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) return 0;
  return j[name].get<double>();
}

// ---- one size ----

struct Context {
  Flags* flags;
  std::vector<std::string> benchmarks;
  int bc_reps = 3;  // timed betweenness calls
  bool Want(const std::string& b) const {
    return benchmarks.empty() ||
           std::find(benchmarks.begin(), benchmarks.end(), b) != benchmarks.end();
  }
};

void RunSize(const Context& ctx, uint64_t num, int reps, uint32_t pair_count, bool peers,
             uint64_t nx_bc_max, uint64_t ig_bc_max, uint64_t nx_pr_max, int threads) {
  WorkloadOptions wo;
  wo.num_nodes = num;
  double t0 = NowSeconds();
  Workload w = GenerateWorkload(wo);
  StoreState state = StateOfWorkload(w, wo.dimension);
  auto bytes = snapshot::BuildSnapshot(state);
  if (!bytes.ok()) Die(kProgram, bytes.status().ToString());
  ScratchDir dir("query_bench");
  std::string path = dir.Sub("w.amem");
  if (Status s = snapshot::WriteFileAtomic(path, *bytes); !s.ok()) Die(kProgram, s.ToString());
  bytes = Status::NotFound("freed");
  snapshot::ReadOptions ro;
  ro.populate = true;
  // A reader that answers many queries checks its records once at open, as amem
  // mcp does; a one-shot CLI process checks what it reads (docs/FORMAT.md §9).
  ro.check_records = true;
  auto opened = snapshot::Reader::Open(path, ro);
  if (!opened.ok()) Die(kProgram, opened.status().ToString());
  const snapshot::Reader& r = **opened;
  // What amem mcp's start-up thread does to each base (each term's postings and
  // order checked, the content decompressed) before its calls read it.
  if (Status s = r.Warm(); !s.ok()) Die(kProgram, s.ToString());
  const uint32_t n = r.node_count();
  std::fprintf(stderr, "%s: %u nodes, %u edges, snapshot %.1f MB, prepared in %.1f s\n", kProgram,
               n, r.edge_count(), r.file_size() / 1e6, NowSeconds() - t0);

  Random rnd(num * 7919 + 1);
  std::vector<uint32_t> picks(std::max(reps, 64));
  for (uint32_t& p : picks) p = static_cast<uint32_t>(rnd.Uniform(n));
  auto pick = [&](int i) { return picks[static_cast<size_t>(i) % picks.size()]; };

  // ---- 1-4, 6, 7: navigation queries (no peer in docs/DESIGN.md §8) ----
  const std::string nav_budget = "<100 ms at 1M";
  if (ctx.Want("traverse")) {
    query::TraverseOptions o;
    Record("traverse depth 5", num, TimeCalls(reps, [&](int i) {
             g_sink += query::Traverse(r, pick(i), o).nodes.size();
           }), "", 0, nav_budget);
  }
  if (ctx.Want("search")) {
    query::SearchOptions o;
    o.types.Add(NodeType::kDecision);
    o.min_confidence = 0.8f;
    Record("search type+confidence", num, TimeCalls(reps, [&](int) {
             g_sink += query::Search(r, o).nodes.size();
           }), "", 0, nav_budget);
    query::SearchOptions run;
    Record("search one run", num, TimeCalls(reps, [&](int i) {
             char name[32];
             std::snprintf(name, sizeof(name), "run-%05u", pick(i) / wo.session_size);
             run.runs = {name};
             g_sink += query::Search(r, run).nodes.size();
           }), "", 0, nav_budget);
  }
  if (ctx.Want("temporal")) {
    Record("temporal run vs next run", num, TimeCalls(reps, [&](int i) {
             uint32_t s = pick(i) / wo.session_size;
             char a[32], b[32];
             std::snprintf(a, sizeof(a), "run-%05u", s);
             std::snprintf(b, sizeof(b), "run-%05u", s + 1);
             query::TemporalOptions o;
             o.a.runs = {a};
             o.b.runs = {b};
             g_sink += query::Temporal(r, o).added_count;
           }), "", 0, nav_budget);
  }
  if (ctx.Want("impact")) {
    query::ImpactOptions o;
    Record("impact depth 10", num, TimeCalls(reps, [&](int i) {
             g_sink += query::Impact(r, pick(i), o).reached;
           }), "", 0, nav_budget);
  }
  if (ctx.Want("context")) {
    query::ContextOptions o;
    Record("context depth 2, 2000 tokens", num, TimeCalls(reps, [&](int i) {
             query::ContextResult c = query::BuildContext(r, {pick(i)}, o);
             g_sink += query::ContextText(r, c, o).size();
           }), "", 0, nav_budget);
  }
  if (ctx.Want("resolve") && !w.chains.empty()) {
    std::vector<uint32_t> heads;
    for (const auto& chain : w.chains) {
      if (auto d = r.FindKey(w.nodes[chain.front()].key)) heads.push_back(*d);
    }
    query::ResolveOptions o;
    Record("resolve supersedes chain", num, TimeCalls(reps, [&](int i) {
             g_sink += query::Resolve(r, heads[i % heads.size()], o).chain.size();
           }), "", 0, nav_budget);
  }

  // ---- 5: similar ----
  if (ctx.Want("similar")) {
    const uint32_t dim = r.dimension();
    query::SimilarOptions o;
    double amem = TimeCalls(reps, [&](int i) {
      o.node = pick(i);
      auto res = query::Similar(r, o);
      g_sink += res.ok() ? res->hits.size() : 0;
    });
    double cscan = TimeCalls(reps, [&](int i) {
      const float* q = r.vector(pick(i));
      if (q) g_sink += CScanTop10(r, q, dim);
    });
    double floor = TimeCalls(reps, [&](int) { g_sink += ReadFloor(r, dim) > 0; });
    Record("similar top-10 (exact cosine)", num, amem, "C scan", cscan, "<= 1.5 ms");
    Record("similar vs read-only floor", num, amem, "read floor", floor, "<= 1.25x floor");
  }

  // ---- 8, 9: BM25 and hybrid, with SQLite FTS5 ----
  if (ctx.Want("bm25") || ctx.Want("hybrid")) {
    // Query strings from the corpus itself, so every query has hits.
    const auto& vocab = Vocabulary();
    std::map<std::string, uint32_t> rank;
    for (uint32_t k = 0; k < vocab.size(); ++k) rank.emplace(vocab[k], k);
    std::vector<std::string> common;
    for (const std::string& word : vocab) {
      if (common.size() < 30 && query::QueryTerms(word) == std::vector<std::string>{word}) {
        common.push_back(word);
      }
    }
    std::vector<std::vector<std::string>> rare_and, or3, common_or;
    for (int q = 0; q < 64; ++q) {
      std::vector<std::string> toks = Tokenize(r.content(pick(q)));
      std::sort(toks.begin(), toks.end());
      toks.erase(std::unique(toks.begin(), toks.end()), toks.end());
      if (toks.size() < 3) continue;
      std::vector<std::string> by_rarity = toks;
      std::sort(by_rarity.begin(), by_rarity.end(), [&](const std::string& a, const std::string& b) {
        uint32_t ra = rank.count(a) ? rank[a] : 0, rb = rank.count(b) ? rank[b] : 0;
        return ra > rb || (ra == rb && a < b);
      });
      rare_and.push_back({by_rarity[0], by_rarity[1]});
      or3.push_back({toks[rnd.Uniform(toks.size())], toks[rnd.Uniform(toks.size())],
                     toks[rnd.Uniform(toks.size())]});
      common_or.push_back({common[rnd.Uniform(common.size())], common[rnd.Uniform(common.size())],
                           common[rnd.Uniform(common.size())]});
    }
    auto join = [](const std::vector<std::string>& t, const char* op) {
      std::string s;
      for (size_t k = 0; k < t.size(); ++k) s += (k ? op : "") + ("\"" + t[k] + "\"");
      return s;
    };
    auto plain = [](const std::vector<std::string>& t) {
      std::string s;
      for (const std::string& x : t) s += x + " ";
      return s;
    };
    std::unique_ptr<Fts5> fts;
    if (peers && ctx.Want("bm25")) {
      double tb = NowSeconds();
      fts = std::make_unique<Fts5>(r);
      std::fprintf(stderr, "%s: FTS5 index built in %.2f s\n", kProgram, NowSeconds() - tb);
    }
    struct Mix {
      const char* name;
      std::vector<std::vector<std::string>>* queries;
      bool all;
      const char* budget;
    } mixes[] = {{"bm25 top-10 rare-term AND", &rare_and, true, "< FTS5"},
                 {"bm25 top-10 3-term OR", &or3, false, "<= 0.3 ms"},
                 {"bm25 top-10 common-term OR", &common_or, false, "< FTS5"}};
    if (ctx.Want("bm25")) {
      for (const Mix& m : mixes) {
        query::TextSearchOptions o;
        o.match_all = m.all;
        double amem = TimeCalls(reps, [&](int i) {
          o.query = plain((*m.queries)[i % m.queries->size()]);
          auto res = query::TextSearch(r, o);
          g_sink += res.ok() ? res->hits.size() : 0;
        });
        double peer = 0;
        if (fts) {
          peer = TimeCalls(reps, [&](int i) {
            g_sink += fts->Search(join((*m.queries)[i % m.queries->size()], m.all ? " AND " : " OR "));
          });
        }
        Record(m.name, num, amem, fts ? "SQLite FTS5" : "", peer, m.budget);
      }
      query::TextSearchOptions scan;
      scan.path = query::TextSearchOptions::Path::kScan;
      Record("bm25 3-term OR, scan path (no index)", num, TimeCalls(std::max(5, reps / 4), [&](int i) {
               scan.query = plain(or3[i % or3.size()]);
               auto res = query::TextSearch(r, scan);
               g_sink += res.ok() ? res->hits.size() : 0;
             }, 1), "", 0, "(paper 122 ms)");
    }
    if (ctx.Want("hybrid")) {
      // With a caller's vector the cosine list is one scan of the stored vectors
      // (the budget's case). Without one, the text's built-in embedding is compared
      // with the built-in embedding of every node's content, which the snapshot
      // stores (embeddings block, docs/FORMAT.md §8.20): one scan of its entries.
      query::HybridSearchOptions o;
      Record("hybrid-search top-10 (RRF, --vector)", num, TimeCalls(reps, [&](int i) {
               o.text = plain(or3[i % or3.size()]);
               const float* v = r.vector(pick(i));
               o.vector = v ? std::vector<float>(v, v + r.dimension()) : std::vector<float>();
               auto res = query::HybridSearch(r, o);
               g_sink += res.ok() ? res->hits.size() : 0;
             }), "", 0, "BM25 + one scan (paper 10.83 ms)");
      o.vector.clear();
      Record("hybrid-search top-10 (RRF, text only)", num, TimeCalls(reps, [&](int i) {
               o.text = plain(or3[i % or3.size()]);
               auto res = query::HybridSearch(r, o);
               g_sink += res.ok() ? res->hits.size() : 0;
             }), "", 0, "BM25 + one scan of the embeddings block");
      query::SimilarOptions so;
      Record("similar top-10 (--text, built-in embedding)", num, TimeCalls(reps, [&](int i) {
               so.text = plain(or3[i % or3.size()]);
               auto res = query::Similar(r, so);
               g_sink += res.ok() ? res->hits.size() : 0;
             }), "", 0, "one scan of the embeddings block");
    }
  }

  // ---- 10, 11: centrality and paths, with igraph / networkx ----
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t k = 0; k < pair_count; ++k) {
    pairs.emplace_back(static_cast<uint32_t>(rnd.Uniform(n)), static_cast<uint32_t>(rnd.Uniform(n)));
  }
  query::CentralityOptions bc_opts;
  bc_opts.metric = query::CentralityMetric::kBetweenness;
  bc_opts.threads = threads;
  std::vector<uint32_t> sources = query::SampleSources(
      n, n <= bc_opts.exact_limit ? n : bc_opts.sample_sources, bc_opts.seed);
  nlohmann::json peer;
  bool graph_wanted = ctx.Want("pagerank") || ctx.Want("betweenness") || ctx.Want("bfs") ||
                      ctx.Want("dijkstra");
  if (peers && graph_wanted) {
    if (EnsurePythonPeers()) {
      peer = RunGraphPeers(r, dir, pairs, sources, num <= nx_bc_max, num <= ig_bc_max,
                           num <= nx_pr_max);
    } else {
      std::fprintf(stderr, "%s: python3-networkx/python3-igraph unavailable\n", kProgram);
    }
  }
  if (ctx.Want("pagerank")) {
    query::CentralityOptions o;
    int iterations = 0;
    double amem = TimeCalls(std::max(5, reps / 2), [&](int) {
      auto res = query::Centrality(r, o);
      iterations = res.ok() ? res->iterations : -1;
      g_sink += res.ok() ? res->rows.size() : 0;
    });
    std::fprintf(stderr, "%s: pagerank converged in %d iterations\n", kProgram, iterations);
    Record("pagerank", num, amem, "igraph", PeerTime(peer, "pagerank_igraph"), "<= 12 ms");
    if (PeerTime(peer, "pagerank_networkx") > 0) {
      Record("pagerank", num, amem, "networkx", PeerTime(peer, "pagerank_networkx"), "-");
    }
  }
  if (ctx.Want("degree")) {
    query::CentralityOptions o;
    o.metric = query::CentralityMetric::kDegree;
    Record("degree centrality", num, TimeCalls(std::max(5, reps / 2), [&](int) {
             auto res = query::Centrality(r, o);
             g_sink += res.ok() ? res->rows.size() : 0;
           }), "", 0, "(paper 20.7 ms)");
  }
  if (ctx.Want("betweenness")) {
    // 22 s a call at 1M: bench/run_1m.sh times one call, without warm-up.
    const int bc_reps = ctx.bc_reps;
    double amem = TimeCalls(bc_reps, [&](int) {
      auto res = query::Centrality(r, bc_opts);
      g_sink += res.ok() ? res->rows.size() : 0;
    }, bc_reps > 1 ? 1 : 0);
    std::string name = "betweenness " + std::to_string(sources.size()) + " sources, " +
                       std::to_string(threads) + " threads";
    const std::string label = std::to_string(sources.size()) + " sources";
    Record(name, num, amem, "igraph " + label, PeerTime(peer, "betweenness_igraph"),
           "<= 0.35 s");
    if (PeerTime(peer, "betweenness_networkx") > 0) {
      Record(name, num, amem, "networkx " + label, PeerTime(peer, "betweenness_networkx"), "-");
    }
    // Same sources, same graph: the peers' scores must equal amem's.
    std::vector<double> amem_scores;
    for (const char* p : {"igraph", "networkx"}) {
      std::vector<double> theirs = ReadPeerScores(dir, p);
      if (theirs.empty()) continue;
      if (amem_scores.empty()) {
        query::CentralityOptions all = bc_opts;
        all.limit = n;
        auto mine = query::Centrality(r, all);
        if (!mine.ok()) Die(kProgram, mine.status().ToString());
        amem_scores.assign(n, 0.0);
        for (const query::CentralityRow& row : mine->rows) amem_scores[row.index] = row.score;
      }
      if (theirs.size() != n) {
        std::fprintf(stderr, "%s: betweenness agreement: %s gave %zu scores for %u nodes\n",
                     kProgram, p, theirs.size(), n);
        continue;
      }
      double max_diff = 0, max_score = 0;
      for (uint32_t i = 0; i < n; ++i) {
        max_diff = std::max(max_diff, std::fabs(amem_scores[i] - theirs[i]));
        max_score = std::max(max_score, std::fabs(amem_scores[i]));
      }
      const bool agree = max_diff <= 1e-9 * std::max(max_score, 1e-300);
      std::fprintf(stderr,
                   "%s: betweenness agreement with %s at N=%llu: max |amem - peer| = %.3g "
                   "(largest score %.6g) %s\n",
                   kProgram, p, static_cast<unsigned long long>(num), max_diff, max_score,
                   agree ? "ok" : "MISMATCH");
    }
  }
  if (ctx.Want("bfs")) {
    query::PathOptions o;
    double amem = TimeCalls(static_cast<int>(pairs.size()), [&](int i) {
      g_sink += query::FindPath(r, pairs[i].first, pairs[i].second, o).nodes.size();
    });
    Record("path BFS (both directions)", num, amem, "networkx", PeerTime(peer, "bfs_networkx"),
           "<= 30 us, >= 3x nx");
    Record("path BFS (both directions)", num, amem, "igraph", PeerTime(peer, "bfs_igraph"), "-");
  }
  if (ctx.Want("dijkstra")) {
    query::PathOptions o;
    o.weighted = true;
    double amem = TimeCalls(static_cast<int>(pairs.size()), [&](int i) {
      g_sink += query::FindPath(r, pairs[i].first, pairs[i].second, o).nodes.size();
    });
    Record("path Dijkstra (weights)", num, amem, "networkx",
           PeerTime(peer, "dijkstra_networkx"), "(paper 17.6 ms)");
    Record("path Dijkstra (weights)", num, amem, "igraph", PeerTime(peer, "dijkstra_igraph"), "-");
  }
}

void PrintTable() {
  std::printf("\n%-40s %8s %12s %-20s %12s %10s  %s\n", "query", "N", "amem", "peer",
              "peer time", "amem/peer", "budget (100K)");
  for (const Row& row : g_rows) {
    char ratio[32] = "-";
    if (row.peer_time > 0) std::snprintf(ratio, sizeof(ratio), "%.3f", row.amem / row.peer_time);
    std::printf("%-40s %8llu %12s %-20s %12s %10s  %s\n", row.query.c_str(),
                static_cast<unsigned long long>(row.n), FormatTime(row.amem).c_str(),
                row.peer.empty() ? "-" : row.peer.c_str(), FormatTime(row.peer_time).c_str(),
                ratio, row.budget.c_str());
  }
  std::printf("checksum %llu\n", static_cast<unsigned long long>(g_sink));
}

}  // namespace
}  // namespace amem::bench

int main(int argc, char** argv) {
  using namespace amem::bench;
  Flags flags(argc, argv);
  std::vector<std::string> nums = flags.List("num", "10000,100000");
  int reps = static_cast<int>(flags.Uint("reps", 21));
  uint32_t pairs = static_cast<uint32_t>(flags.Uint("pairs", 50));
  bool peers = flags.Bool("peers", true);
  uint64_t nx_bc_max = flags.Uint("nx_betweenness_max", 10000);  // 269 s at 100K: see top
  uint64_t ig_bc_max = flags.Uint("igraph_betweenness_max", 1000000);
  uint64_t nx_pr_max = flags.Uint("nx_pagerank_max", 100000);
  int threads = static_cast<int>(flags.Uint("threads", 2));
  Context ctx{&flags, flags.List("benchmarks", ""),
              static_cast<int>(std::max<uint64_t>(1, flags.Uint("betweenness_reps", 3)))};
  if (!flags.Unknown().empty()) Die(kProgram, "unknown flag " + flags.Unknown()[0], 2);
  for (const std::string& n : nums) {
    RunSize(ctx, std::stoull(n), reps, pairs, peers, nx_bc_max, ig_bc_max, nx_pr_max, threads);
  }
  PrintTable();
  return 0;
}
