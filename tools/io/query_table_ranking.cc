// The ranking queries of the query table: similar, text-search, hybrid-search,
// centrality (docs/QUERIES.md #5, 8, 9, 10).
#include <string>
#include <utility>
#include <vector>

#include "query/centrality.h"
#include "query/hybrid_search.h"
#include "query/query.h"
#include "query/render.h"
#include "query/similar.h"
#include "query/text_search.h"
#include "snapshot/reader.h"
#include "tools/io/internal/query_families.h"

namespace amem::io {

namespace {

// The type and run filters of the ranked retrievals.
Param TypeFilter() { return TypesParam("Only these types"); }
Param RunFilter() { return RunsParam("Only these runs (sessions)"); }

Param VectorParam(std::string help) {
  return Param{.name = "vector", .type = ParamType::kVector, .help = std::move(help),
               .brief = "A query embedding", .max_items = 65536};
}

// The last steps of the ranked retrievals: limit and filters from the arguments,
// run, render.
template <typename Options, typename Run, typename Render>
Result<QueryAnswer> Ranked(const QueryCall& c, Options o, Run run, Render render) {
  const snapshot::Reader& r = c.reader;
  o.limit = c.Int("limit", o.limit);
  AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(c.Strings("types")));
  o.types = types;
  o.runs = query::ParseRuns(r, c.Strings("runs"));
  AMEM_ASSIGN_OR_RETURN(res, run(r, o));
  return QueryAnswer{render(r, res)};
}

QueryDef Similar() {
  const query::SimilarOptions d;
  return QueryDef{
      .command = "similar",
      .tool = "similar",
      .cli_help =
          "Memories semantically close to a node, a vector or a text: exact cosine top-k. "
          "The query decides the space (reported as basis): a --vector, or a NODE with a "
          "stored vector, is compared with the stored vectors (nodes without one use amem's "
          "built-in hashed text embedding of their content); a --text, or a NODE without a "
          "vector, is embedded with the built-in embedding and compared with the built-in "
          "embedding of every node's content, stored vectors ignored. Give exactly one of "
          "NODE, --vector and --text.",
      .example = "amem similar decision:use-lmdb --limit 5\n"
                 "amem similar --text \"memory-mapped snapshot\" --type fact\n"
                 "amem similar --vector '[0.1, 0.0, ...]' --min-similarity 0.5",
      .title = "Semantically similar memories",
      .description =
          "Which memories are semantically close to a memory (node), a text or an embedding "
          "(vector): exact cosine ranking. A vector, or a node with a stored vector, is "
          "compared with the stored vectors; a text, or a node without one, with amem's "
          "built-in text embedding of every memory's content (basis says which). Give exactly "
          "one of node, text or vector; a node is never returned itself. Use it to find "
          "related or duplicate knowledge.",
      .brief = "Memories close in meaning to a node, a text or a vector.",
      .params = {Brief(NodeParam("node", "NODE", "Memory to compare with (never returned itself)",
                           false), "Memory to compare with"),
                 {.name = "text", .help = "Text to compare with (embedded with the built-in "
                                          "embedding)", .brief = "Text to compare with"},
                 VectorParam("A query embedding of the store's dimension (JSON array), "
                             "compared with the stored vectors"),
                 {.name = "min_similarity", .type = ParamType::kNumber,
                  .help = "Drop rows with a cosine below this", .brief = "Min cosine",
                  .default_text = DefaultText(d.min_similarity), .min = -1, .max = 1},
                 TypeFilter(), RunFilter(), LimitParam(d.limit, 200)},
      .exactly_one = {"node", "text", "vector"},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::SimilarOptions o;
        if (c.Has("node")) {
          AMEM_ASSIGN_OR_RETURN(node, c.Node("node"));
          o.node = node;
        }
        o.text = c.String("text");
        AMEM_ASSIGN_OR_RETURN(vector, c.Floats("vector"));
        o.vector = std::move(vector);
        o.min_similarity = c.Number("min_similarity", o.min_similarity);
        return Ranked(c, std::move(o), query::Similar, query::SimilarJson);
      }};
}

QueryDef TextSearch() {
  const query::TextSearchOptions d;
  return QueryDef{
      .command = "text-search",
      .tool = "text_search",
      .cli_help = "Keyword recall: BM25 (k1 1.2, b 0.75) over node contents, using the "
                  "snapshot's term index (or a full scan, same results). Words are "
                  "lower-cased; stop words and one-letter words are ignored; a word counts "
                  "once. Output: score and the query terms each row matched.",
      .example = "amem text-search lmdb snapshot --limit 5\n"
                 "amem text-search --all \"rate limit\" --type decision",
      .title = "Keyword search over memories",
      .description =
          "Keyword recall: BM25 ranking of memory contents for the query words (lower-cased; "
          "stop words and 1-letter words ignored). Each row has its score and the words it "
          "matched. Use it to find memories about a topic when you know words they contain; "
          "match_all keeps only memories containing every word.",
      .brief = "Keyword search (BM25) over memory contents; match_all for every word.",
      .params = {{.name = "query", .role = ParamRole::kWords, .help = "The words to look for",
                  .cli = "QUERY", .required = true},
                 {.name = "match_all", .type = ParamType::kBoolean,
                  .help = "Only memories containing every query word (default: any word)", .brief = "Every word must match",
                  .cli = "--all"},
                 {.name = "scan", .type = ParamType::kBoolean,
                  .help = "Ignore the term index and scan every content (same results)", .brief = "Scan instead of the index",
                  .scope = ParamScope::kCliOnly},
                 TypeFilter(), RunFilter(), LimitParam(d.limit, 200)},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::TextSearchOptions o;
        o.query = c.String("query");
        o.match_all = c.Bool("match_all", o.match_all);
        if (c.Bool("scan")) o.path = query::TextSearchOptions::Path::kScan;
        return Ranked(c, std::move(o), query::TextSearch, query::TextSearchJson);
      }};
}

QueryDef HybridSearch() {
  const query::HybridSearchOptions d;
  return QueryDef{
      .command = "hybrid-search",
      .tool = "hybrid_search",
      .cli_help = "Keyword + semantic recall: Reciprocal Rank Fusion of the BM25 list and the "
                  "cosine list (each fetched to 3 x limit): score = w_bm25/(k + bm25 rank) + "
                  "w_vector/(k + vector rank); a node missing from a list counts as that "
                  "list's length + 1. Output: combined score, both ranks and both raw scores.",
      .example = "amem hybrid-search \"snapshot format\" --limit 5\n"
                 "amem hybrid-search lmdb --vector '[...]' --bm25-weight 0.7 --vector-weight 0.3",
      .title = "Keyword + semantic search",
      .description =
          "Keyword and semantic recall together: Reciprocal Rank Fusion of the BM25 ranking "
          "and the embedding-similarity ranking of the query (your vector against the stored "
          "vectors, else amem's built-in embedding of the text against that of every "
          "memory's content). Rows carry the fused score, both ranks and both raw scores. The "
          "best general-purpose search when wording may differ.",
      .brief = "Search by keywords and meaning at once (BM25 and embeddings, fused); the best general search.",
      .params = {{.name = "query", .role = ParamRole::kWords, .help = "The words to look for",
                  .cli = "QUERY", .required = true},
                 VectorParam("A query embedding (JSON array), compared with the stored "
                             "vectors; default: the built-in embedding of the query, compared "
                             "with the built-in embedding of every memory's content"),
                 {.name = "bm25_weight", .type = ParamType::kNumber,
                  .help = "Weight of the keyword ranking",
                  .brief = "Keyword weight",
                  .default_text = DefaultText(d.bm25_weight),
                  .min = 0, .max = 1000},
                 {.name = "vector_weight", .type = ParamType::kNumber,
                  .help = "Weight of the semantic ranking",
                  .brief = "Semantic weight",
                  .default_text = DefaultText(d.vector_weight),
                  .min = 0, .max = 1000},
                 {.name = "k", .type = ParamType::kNumber, .help = "RRF constant k",
                  .default_text = DefaultText(d.k), .min = 0, .max = 1e6},
                 TypeFilter(), RunFilter(), LimitParam(d.limit, 200)},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::HybridSearchOptions o;
        o.text = c.String("query");
        AMEM_ASSIGN_OR_RETURN(vector, c.Floats("vector"));
        o.vector = std::move(vector);
        o.bm25_weight = c.Number("bm25_weight", o.bm25_weight);
        o.vector_weight = c.Number("vector_weight", o.vector_weight);
        o.k = c.Number("k", o.k);
        return Ranked(c, std::move(o), query::HybridSearch, query::HybridSearchJson);
      }};
}

QueryDef Centrality() {
  const query::CentralityOptions d;
  return QueryDef{
      .command = "centrality",
      .tool = "centrality",
      .cli_help =
          "Which memories are central. pagerank: alpha 0.85 over directed edges, stops at an "
          "L1 change < 1e-6 or 100 iterations (reports iterations, converged). degree: (in + "
          "out) / (N - 1). betweenness: Brandes on the undirected graph, exact up to 1,000 "
          "nodes, else 200 fixed-seed sources scaled by N/200, normalised by (N-1)(N-2). "
          "--rel restricts the edges the metric sees; --type only filters the rows shown.",
      .example = "amem centrality --limit 10\n"
                 "amem centrality --metric betweenness --type decision\n"
                 "amem centrality --metric degree --rel supports,caused_by",
      .title = "The most central memories",
      .description =
          "Which memories are central to the project: pagerank (default; what much else "
          "points to), degree (most connected) or betweenness (bridges between areas; slow on "
          "large stores). relations restricts the graph the metric sees; types only filters "
          "the rows. Use it to find the key decisions, files or modules to read first.",
      .brief = "The most central memories (pagerank, degree or betweenness).",
      .params = {{.name = "metric", .help = "The centrality measure",
                  .default_text = query::CentralityMetricName(d.metric),
                  .choices = {"pagerank", "degree", "betweenness"}},
                 Brief(TypesParam("Only show memories of these types (scores are computed on the "
                            "whole graph)"), "Only these types"),
                 Brief(RelationsParam("Only these relations form the graph"), "Only these relations"),
                 {.name = "threads", .type = ParamType::kInteger,
                  .help = "Betweenness worker threads (default: all cores; results are "
                          "identical for any count)", .brief = "Betweenness threads",
                  .min = 0, .max = 1024, .scope = ParamScope::kCliOnly},
                 LimitParam(d.limit, 1000)},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        const snapshot::Reader& r = c.reader;
        query::CentralityOptions o;
        AMEM_ASSIGN_OR_RETURN(metric, query::ParseCentralityMetric(c.String(
                                          "metric", query::CentralityMetricName(o.metric))));
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(c.Strings("types")));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, c.Strings("relations")));
        o.metric = metric;
        o.types = types;
        o.rels = rels;
        o.limit = c.Int("limit", o.limit);
        o.threads = c.Int("threads", o.threads);
        AMEM_ASSIGN_OR_RETURN(res, query::Centrality(r, o));
        return QueryAnswer{query::CentralityJson(r, res)};
      }};
}

}  // namespace

std::vector<QueryDef> RankingQueries() {
  return {Similar(), TextSearch(), HybridSearch(), Centrality()};
}

}  // namespace amem::io
