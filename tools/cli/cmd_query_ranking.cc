// amem similar | text-search | hybrid-search | centrality (docs/QUERIES.md #5, 8, 9, 10).
// Each runs on --snapshot FILE, or on the store's current snapshot
// (snapshot/live.h; with --as-of / --at, a snapshot of that revision).
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "query/centrality.h"
#include "snapshot/live.h"
#include "query/hybrid_search.h"
#include "query/query.h"
#include "query/render.h"
#include "query/similar.h"
#include "query/text_search.h"
#include "snapshot/reader.h"
#include "tools/cli/cmd_query_ranking.h"
#include "tools/cli/query_args.h"
#include "tools/io/json_input.h"

namespace amem::cli {

namespace {

// --vector '[0.1, 0.2, ...]' (empty text: not given). A query vector has at least
// one element, as MCP's schema asks.
Result<std::vector<float>> ParseVector(const std::string& text) {
  if (text.empty()) return std::vector<float>{};
  Result<std::vector<float>> v = io::VectorFromText(text, "--vector");
  if (v.ok() && v->empty()) return Status::InvalidArgument("--vector: an empty vector");
  return v;
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// Type and run filters shared by the three retrieval commands.
struct Filters {
  std::vector<std::string> types, runs;
};

void AddFilterFlags(CLI::App* cmd, Filters* f) {
  cmd->add_option("--type", f->types,
                  "Only return nodes of these types (fact, decision, inference, correction, "
                  "skill, episode, constraint, file, symbol, module, entity); repeat or "
                  "comma-separate")
      ->type_name("TYPE");
  cmd->add_option("--run", f->runs, "Only return nodes written by these runs (sessions)")
      ->type_name("RUN");
}

Status ApplyFilters(const snapshot::Reader& reader, const Filters& f, query::TypeFilter* types,
                    query::RunFilter* runs) {
  auto t = query::ParseTypes(f.types);
  if (!t.ok()) return t.status();
  *types = *t;
  *runs = query::ParseRuns(reader, query::SplitList(f.runs));
  return Status::OK();
}

// ---- similar ----
struct SimilarArgs {
  SnapshotArgs src;
  Filters filters;
  std::string node, vector, text;
  uint32_t limit = 10;
  double min_similarity = 0;
};

Status RunSimilar(Context& ctx, const SimilarArgs& a) {
  if (!a.node.empty() + !a.vector.empty() + !a.text.empty() != 1) {
    return ctx.UsageError("give exactly one of NODE, --vector or --text");
  }
  auto reader = OpenSnapshot(ctx, a.src);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  query::SimilarOptions o;
  if (!a.node.empty()) {
    auto node = query::ResolveNode(r, a.node);
    if (!node.ok()) return node.status();
    o.node = *node;
  }
  auto vec = ParseVector(a.vector);
  if (!vec.ok()) return vec.status();
  o.vector = std::move(vec).value();
  o.text = a.text;
  o.limit = a.limit;
  o.min_similarity = a.min_similarity;
  AMEM_RETURN_IF_ERROR(ApplyFilters(r, a.filters, &o.types, &o.runs));
  auto res = query::Similar(r, o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::SimilarJson(r, *res));
}

// ---- text-search ----
struct TextSearchArgs {
  SnapshotArgs src;
  Filters filters;
  std::vector<std::string> words;
  uint32_t limit = 10;
  bool all = false;
  bool scan = false;
};

Status RunTextSearch(Context& ctx, const TextSearchArgs& a) {
  auto reader = OpenSnapshot(ctx, a.src);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  query::TextSearchOptions o;
  o.query = JoinWords(a.words);
  o.limit = a.limit;
  o.match_all = a.all;
  if (a.scan) o.path = query::TextSearchOptions::Path::kScan;
  AMEM_RETURN_IF_ERROR(ApplyFilters(r, a.filters, &o.types, &o.runs));
  auto res = query::TextSearch(r, o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::TextSearchJson(r, *res));
}

// ---- hybrid-search ----
struct HybridArgs {
  SnapshotArgs src;
  Filters filters;
  std::vector<std::string> words;
  std::string vector;
  uint32_t limit = 10;
  double bm25_weight = 0.5, vector_weight = 0.5, k = 60;
};

Status RunHybrid(Context& ctx, const HybridArgs& a) {
  auto reader = OpenSnapshot(ctx, a.src);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  query::HybridSearchOptions o;
  o.text = JoinWords(a.words);
  auto vec = ParseVector(a.vector);
  if (!vec.ok()) return vec.status();
  o.vector = std::move(vec).value();
  o.limit = a.limit;
  o.bm25_weight = a.bm25_weight;
  o.vector_weight = a.vector_weight;
  o.k = a.k;
  AMEM_RETURN_IF_ERROR(ApplyFilters(r, a.filters, &o.types, &o.runs));
  auto res = query::HybridSearch(r, o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::HybridSearchJson(r, *res));
}

// ---- centrality ----
struct CentralityArgs {
  SnapshotArgs src;
  std::string metric = "pagerank";
  std::vector<std::string> types, rels;
  uint32_t limit = 20;
  int threads = 0;
};

Status RunCentrality(Context& ctx, const CentralityArgs& a) {
  auto metric = query::ParseCentralityMetric(a.metric);
  if (!metric.ok()) return ctx.UsageError(metric.status().message());
  auto reader = OpenSnapshot(ctx, a.src);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  query::CentralityOptions o;
  o.metric = *metric;
  auto types = query::ParseTypes(a.types);
  if (!types.ok()) return types.status();
  o.types = *types;
  auto rels = query::ParseRelations(r, a.rels);
  if (!rels.ok()) return rels.status();
  o.rels = *rels;
  o.limit = a.limit;
  o.threads = a.threads;
  auto res = query::Centrality(r, o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::CentralityJson(r, *res));
}

}  // namespace

void AddRankingQueryCommands(CLI::App& app, Context& ctx) {
  {
    auto a = std::make_shared<SimilarArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "similar",
        "Memories semantically close to a node, a vector or a text: exact cosine top-k. "
        "The query decides the space (reported as basis): a --vector, or a NODE with a "
        "stored vector, is compared with the stored vectors (nodes without one use amem's "
        "built-in hashed text embedding of their content); a --text, or a NODE without a "
        "vector, is embedded with the built-in embedding and compared with the built-in "
        "embedding of every node's content, stored vectors ignored. Give exactly one of NODE, --vector and --text.",
        "amem similar decision:use-lmdb --limit 5\n"
        "amem similar --text \"memory-mapped snapshot\" --type fact\n"
        "amem similar --vector '[0.1, 0.0, ...]' --min-similarity 0.5");
    cmd->add_option("NODE", a->node,
                    "Query node: a key, a 16-hex-digit id or a dense index (#N); it is "
                    "never returned itself");
    cmd->add_option("--vector", a->vector,
                    "Query vector as a JSON array of the snapshot's dimension")
        ->type_name("JSON");
    cmd->add_option("--text", a->text, "Query text (embedded with the built-in embedding)");
    cmd->add_option("--limit", a->limit, "Rows to return (default 10)");
    cmd->add_option("--min-similarity", a->min_similarity,
                    "Drop rows with a cosine below this (default 0)");
    AddFilterFlags(cmd, &a->filters);
    AddSnapshotFlags(cmd, &a->src);
    ctx.SetAction(cmd, [&ctx, a] { return RunSimilar(ctx, *a); });
  }
  {
    auto a = std::make_shared<TextSearchArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "text-search",
        "Keyword recall: BM25 (k1 1.2, b 0.75) over node contents, using the "
        "snapshot's term index (or a full scan, same results). Words are lower-cased; "
        "stop words and one-letter words are ignored; a word counts once. Output: "
        "score and the query terms each row matched.",
        "amem text-search lmdb snapshot --limit 5\n"
        "amem text-search --all \"rate limit\" --type decision");
    cmd->add_option("QUERY", a->words, "Query words")->required();
    cmd->add_option("--limit", a->limit, "Rows to return (default 10)");
    cmd->add_flag("--all", a->all, "Only rows containing every query term (AND); default OR");
    cmd->add_flag("--scan", a->scan, "Ignore the term index and scan every content");
    AddFilterFlags(cmd, &a->filters);
    AddSnapshotFlags(cmd, &a->src);
    ctx.SetAction(cmd, [&ctx, a] { return RunTextSearch(ctx, *a); });
  }
  {
    auto a = std::make_shared<HybridArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "hybrid-search",
        "Keyword + semantic recall: Reciprocal Rank Fusion of the BM25 list and the "
        "cosine list (each fetched to 3 x limit): score = w_bm25/(k + bm25 rank) + "
        "w_vector/(k + vector rank); a node missing from a list counts as that list's "
        "length + 1. Output: combined score, both ranks and both raw scores.",
        "amem hybrid-search \"snapshot format\" --limit 5\n"
        "amem hybrid-search lmdb --vector '[...]' --bm25-weight 0.7 --vector-weight 0.3");
    cmd->add_option("QUERY", a->words, "Query words")->required();
    cmd->add_option("--vector", a->vector,
                    "Query vector (JSON array), compared with the stored vectors; default: "
                    "the built-in embedding of the query text, compared with the built-in "
                    "embedding of every node's content")
        ->type_name("JSON");
    cmd->add_option("--limit", a->limit, "Rows to return (default 10)");
    cmd->add_option("--bm25-weight", a->bm25_weight, "Weight of the BM25 ranking (default 0.5)");
    cmd->add_option("--vector-weight", a->vector_weight,
                    "Weight of the cosine ranking (default 0.5)");
    cmd->add_option("--k", a->k, "RRF constant k (default 60)");
    AddFilterFlags(cmd, &a->filters);
    AddSnapshotFlags(cmd, &a->src);
    ctx.SetAction(cmd, [&ctx, a] { return RunHybrid(ctx, *a); });
  }
  {
    auto a = std::make_shared<CentralityArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "centrality",
        "Which memories are central. pagerank: alpha 0.85 over directed edges, stops at "
        "an L1 change < 1e-6 or 100 iterations (reports iterations, converged). degree: "
        "(in + out) / (N - 1). betweenness: Brandes on the undirected graph, exact up to "
        "1,000 nodes, else 200 fixed-seed sources scaled by N/200, normalised by "
        "(N-1)(N-2). --rel restricts the edges the metric sees; --type only filters the "
        "rows shown.",
        "amem centrality --limit 10\n"
        "amem centrality --metric betweenness --type decision\n"
        "amem centrality --metric degree --rel supports,caused_by");
    cmd->add_option("--metric", a->metric, "pagerank | degree | betweenness (default pagerank)");
    cmd->add_option("--type", a->types, "Only show nodes of these types")->type_name("TYPE");
    cmd->add_option("--rel", a->rels, "Only these relations form the graph (names or ids)")
        ->type_name("REL");
    cmd->add_option("--limit", a->limit, "Rows to return (default 20)");
    cmd->add_option("--threads", a->threads,
                    "Betweenness worker threads (default: all cores; results are "
                    "identical for any count)");
    AddSnapshotFlags(cmd, &a->src);
    ctx.SetAction(cmd, [&ctx, a] { return RunCentrality(ctx, *a); });
  }
}

}  // namespace amem::cli
