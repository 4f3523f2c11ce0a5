#include "tools/mcp/query_tools.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/model.h"
#include "query/analogy.h"
#include "query/centrality.h"
#include "query/consolidate.h"
#include "query/context.h"
#include "snapshot/live.h"
#include "query/drift.h"
#include "query/gaps.h"
#include "query/hybrid_search.h"
#include "query/impact.h"
#include "query/path.h"
#include "query/query.h"
#include "query/resolve.h"
#include "query/revise.h"
#include "query/search.h"
#include "query/similar.h"
#include "query/temporal.h"
#include "query/text_search.h"
#include "query/traverse.h"
#include "snapshot/export.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"
#include "tools/io/query_log.h"
#include "tools/io/json_input.h"
#include "tools/io/json_records.h"

namespace amem::mcp {

void FitToBudget(Json* doc, size_t budget) {
  // Fields that are arrays with rows, smallest first: a small list keeps all of its
  // rows and leaves its unused share to the larger ones.
  std::vector<std::pair<size_t, std::string>> arrays;
  Json frame = Json::object();    // the document with every list emptied
  Json omitted = Json::object();  // the largest "omitted" it could get
  for (const auto& [field, value] : doc->items()) {
    if (value.is_array() && !value.empty()) {
      arrays.emplace_back(ResultCost(value), field);
      frame[field] = Json::array();
      omitted[field] = value.size();
    } else {
      frame[field] = value;
    }
  }
  if (arrays.empty()) return;
  std::sort(arrays.begin(), arrays.end());
  size_t used = ResultCost(frame) + ResultCost(Json{{"omitted", omitted}});
  size_t left = budget > used ? budget - used : 0;
  omitted = Json::object();
  size_t remaining = arrays.size();
  for (const auto& [cost, field] : arrays) {
    size_t share = left / remaining--;
    Json& rows = (*doc)[field];
    BoundedList list(rows.size(), share);
    size_t taken = 0;
    for (auto& row : rows) {
      if (!list.Add(std::move(row))) break;
      ++taken;
    }
    if (taken < rows.size()) omitted[field] = rows.size() - taken;
    left -= std::min(left, list.bytes());
    rows = list.Take();
  }
  if (!omitted.empty()) (*doc)["omitted"] = std::move(omitted);
}

namespace {

// A query's answer: the JSON document (structuredContent) and, when the text content
// is something other than that JSON (context's prompt text), the text.
struct Answer {
  Json doc;
  std::string text;
};
using QueryFn = std::function<Result<Answer>(const snapshot::Reader&, const Json& args)>;

// ---- schema fragments ----

Json StringProp(std::string_view description) {
  return Json{{"type", "string"}, {"minLength", 1}, {"description", description}};
}

Json NodeProp(std::string_view what) {
  return StringProp(std::string(what) +
                    ": a key (e.g. file:src/a.cc, decision:use-lmdb), a 16-hex-digit id, or a "
                    "dense index as #N (the index field of a result row).");
}

Json IntProp(std::string_view description, int64_t min, int64_t max) {
  return Json{{"type", "integer"}, {"minimum", min}, {"maximum", max}, {"description", description}};
}

Json NumberProp(std::string_view description, double min, double max) {
  return Json{{"type", "number"}, {"minimum", min}, {"maximum", max}, {"description", description}};
}

Json BoolProp(std::string_view description) {
  return Json{{"type", "boolean"}, {"description", description}};
}

Json EnumProp(std::vector<std::string> values, std::string_view description) {
  return Json{{"enum", values}, {"description", description}};
}

Json StringsProp(Json item, std::string_view description, int max_items = 100) {
  return Merge(ArrayOf(std::move(item), description), Json{{"maxItems", max_items}});
}

// `limit` as PageProperties words it; query answers are not paged (no cursor):
// rows beyond the budget are counted under `omitted` instead.
Json LimitProp(int default_limit, int max_limit) {
  Json p = PageProperties(default_limit, max_limit);
  return Json{{"limit", p["limit"]}};
}

Json TypesProp(std::string_view description) {
  Json names = Json::array();
  for (int i = 0; i < kNodeTypeCount; ++i) names.push_back(NodeTypeName(static_cast<NodeType>(i)));
  return StringsProp(Json{{"enum", names}}, description, kNodeTypeCount);
}

Json FilterProps() {
  return Json{
      {"types", TypesProp("Only return memories of these types (default: all).")},
      {"runs", StringsProp(Json{{"type", "string"}},
                           "Only return memories written by these runs (agent sessions).")}};
}

Json RelationsProp(std::string_view description) {
  return StringsProp(Json{{"type", "string"}, {"minLength", 1}},
                     std::string(description) +
                         " Built-in: caused_by, supports, contradicts, supersedes, "
                         "related_to, part_of, temporal_next, defines, references, calls, "
                         "imports, tests, implements, constrains, decided_for, derived_from; "
                         "custom ones by name. Default: all.");
}

Json VectorProp() {
  return Merge(ArrayOf(Json{{"type", "number"}},
                       "A query embedding of the store's dimension, compared with the stored "
                       "vectors."),
               Json{{"minItems", 1}, {"maxItems", 65536}});
}

Json DirectionProp(std::string_view default_direction) {
  return EnumProp({"out", "in", "both"},
                  "out: follow edges src -> dst; in: dst -> src; both: either way (default " +
                      std::string(default_direction) + ").");
}

// ---- argument readers (the schema has checked the types) ----

std::vector<std::string> Strings(const Json& args, const char* name) {
  std::vector<std::string> out;
  if (HasArg(args, name)) {
    for (const auto& s : args[name]) out.push_back(s.get<std::string>());
  }
  return out;
}

// The vector argument `name` (empty when absent), read as the CLI reads --vector.
Result<std::vector<float>> Floats(const Json& args, const char* name) {
  if (!HasArg(args, name)) return std::vector<float>{};
  return io::VectorFromJson(args[name], name);
}

size_t Limit(const Json& args, int default_limit) {
  return static_cast<size_t>(ArgInt(args, "limit", default_limit));
}

Result<uint32_t> NodeArg(const snapshot::Reader& reader, const Json& args, const char* name) {
  return query::ResolveNode(reader, ArgString(args, name));
}

Status Filters(const snapshot::Reader& reader, const Json& args, query::TypeFilter* types,
               query::RunFilter* runs) {
  AMEM_ASSIGN_OR_RETURN(t, query::ParseTypes(Strings(args, "types")));
  *types = t;
  *runs = query::ParseRuns(reader, Strings(args, "runs"));
  return Status::OK();
}

// The last steps of the ranked retrievals (text_search, hybrid_search, similar):
// limit and filters from the arguments, run, render.
template <typename Options, typename Run, typename Render>
Result<Answer> Ranked(const snapshot::Reader& r, const Json& args, Options o, int default_limit,
                      Run run, Render render) {
  o.limit = static_cast<uint32_t>(Limit(args, default_limit));
  AMEM_RETURN_IF_ERROR(Filters(r, args, &o.types, &o.runs));
  AMEM_ASSIGN_OR_RETURN(res, run(r, o));
  return Answer{render(r, res), {}};
}

// Exactly one of two alternative arguments, e.g. node or text.
Status OneOf(const Json& args, const char* a, const char* b) {
  if (HasArg(args, a) == HasArg(args, b)) {
    return Status::InvalidArgument(std::string("give either \"") + a + "\" or \"" + b +
                                   "\" (exactly one)");
  }
  return Status::OK();
}

// Runs `fn` on the store's snapshot as of the call's as_of/at (or on ctx->reader)
// and bounds the answer; records the call in the query log.
ToolResult RunOnSnapshot(const ToolContext* ctx, const std::string& name, const Json& args,
                         const QueryFn& fn) {
  std::shared_ptr<const snapshot::Reader> opened;
  const snapshot::Reader* reader = ctx->reader;
  std::optional<uint64_t> revision;
  if (reader == nullptr) {
    auto view = ViewFromArgs(args);
    if (!view.ok()) return ToolErrorFromStatus(name, view.status());
    auto live = snapshot::OpenLive(*ctx->store, *view, ctx->live_options, ctx->live.get());
    if (!live.ok()) return ToolErrorFromStatus(name, live.status());
    opened = std::move(live->reader);
    reader = opened.get();
    revision = live->revision;
  }
  auto answer = fn(*reader, args);
  if (!answer.ok()) return ToolErrorFromStatus(name, answer.status());
  // Undecodable content reads as "": an error, never an answer of empty texts.
  if (Status s = reader->ContentStatus(); !s.ok()) return ToolErrorFromStatus(name, s);
  ToolResult r;
  r.structured = std::move(answer->doc);
  if (revision) r.structured["revision"] = *revision;
  r.text = std::move(answer->text);
  size_t budget = kMaxResultBytes;
  if (!r.text.empty()) {
    // A text of its own (context's prompt) takes its part first; structuredContent
    // is then sent once, while ResultCost counts it twice.
    size_t text = JsonStringBytes(r.text);
    budget = text < kMaxResultBytes ? 2 * (kMaxResultBytes - text) : 0;
  }
  FitToBudget(&r.structured, budget);
  // A consolidation that wrote is a write: it leaves nothing in the query log.
  if (!ctx->query_log.empty() && !ArgBool(args, "execute", false)) {
    io::QueryRecord record{"mcp", name, args, revision, io::AnswerDigest(r.structured)};
    Status s = io::AppendQueryLog(ctx->query_log, record);
    if (!s.ok()) std::fprintf(stderr, "amem mcp: warning: %s\n", s.ToString().c_str());
  }
  return r;
}

struct QuerySpec {
  std::string name, title, description;
  Json properties;
  std::vector<std::string> required;
  QueryFn run;
};

// A read-only query tool: the spec's properties plus as_of/at.
Tool QueryTool(const ToolContext* ctx, QuerySpec spec) {
  Tool t;
  t.name = spec.name;
  t.title = std::move(spec.title);
  t.description = std::move(spec.description);
  t.input_schema = ObjectSchema(Merge(std::move(spec.properties), AsOfProperties()),
                                std::move(spec.required));
  t.read_only = true;
  t.idempotent = true;
  t.handler = [ctx, name = spec.name, run = std::move(spec.run)](const Json& args) {
    return RunOnSnapshot(ctx, name, args, run);
  };
  return t;
}

// ---- navigation: traverse, find_memories, temporal, impact, resolve, path ----

void AddNavigationTools(ToolRegistry* registry, const ToolContext* ctx) {
  registry->Add(QueryTool(ctx, {
      "traverse", "What is reachable from a memory",
      "What is reachable from one memory: a level-order walk over its edges (by default "
      "outgoing, all relations) up to depth hops. Each row is a memory with its depth and "
      "the edge that reached it. Use it to explore what a file defines, what a decision "
      "rests on, or what a module contains; restrict relations to follow one kind of "
      "link (e.g. [\"defines\",\"calls\"]).",
      Merge(Json{{"node", NodeProp("Start memory")},
                 {"direction", DirectionProp("out")},
                 {"relations", RelationsProp("Only follow these relations.")},
                 {"depth", IntProp("Maximum hops (default 5).", 0, 100)},
                 {"min_confidence", NumberProp("Skip memories below this confidence (default 0).", 0, 1)}},
            LimitProp(50, 1000)),
      {"node"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(start, NodeArg(r, args, "node"));
        AMEM_ASSIGN_OR_RETURN(dir, query::ParseDirection(ArgString(args, "direction", "out")));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, Strings(args, "relations")));
        query::TraverseOptions o;
        o.direction = dir;
        o.relations = rels;
        o.depth = static_cast<uint32_t>(ArgInt(args, "depth", 5));
        o.min_confidence = static_cast<float>(ArgNumber(args, "min_confidence", 0));
        o.limit = Limit(args, 50);
        return Answer{query::TraverseJson(r, query::Traverse(r, start, o), o), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "find_memories", "Find memories by attributes",
      "Which memories match these attributes: filter by type (e.g. every decision), run "
      "(agent session), scope, confidence range and creation time, newest first (or most "
      "confident first). No words are matched: for keyword recall use text_search, for "
      "meaning use similar or hybrid_search.",
      Merge(Json{{"types", TypesProp("Only memories of these types (default: all).")},
                       {"runs", StringsProp(Json{{"type", "string"}},
                                            "Only memories written by these runs (sessions).")},
                       {"scope", StringProp("Only memories with exactly this scope.")},
                       {"min_confidence", NumberProp("Inclusive lower bound (default 0).", 0, 1)},
                       {"max_confidence", NumberProp("Inclusive upper bound (default 1).", 0, 1)},
                       {"after", Json{{"type", "integer"},
                                      {"description", "Created at or after this Unix time (seconds)."}}},
                       {"before", Json{{"type", "integer"},
                                       {"description", "Created before this Unix time (seconds)."}}},
                       {"sort", EnumProp({"recent", "confidence"},
                                         "recent: newest created first; confidence: most "
                                         "confident first (default recent).")}},
            LimitProp(20, 1000)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(Strings(args, "types")));
        AMEM_ASSIGN_OR_RETURN(sort, query::ParseSearchSort(ArgString(args, "sort", "recent")));
        query::SearchOptions o;
        o.types = types;
        o.sort = sort;
        o.runs = Strings(args, "runs");
        if (HasArg(args, "scope")) o.scope = ArgString(args, "scope");
        o.min_confidence = static_cast<float>(ArgNumber(args, "min_confidence", 0));
        o.max_confidence = static_cast<float>(ArgNumber(args, "max_confidence", 1));
        if (HasArg(args, "after")) o.after = ArgInt(args, "after", 0);
        if (HasArg(args, "before")) o.before = ArgInt(args, "before", 0);
        o.limit = Limit(args, 20);
        return Answer{query::SearchJson(r, query::Search(r, o), o), {}};
      }}));

  const char* kPeriodHelp =
      " A period is \"FROM..TO\" in Unix seconds on creation time ([FROM, TO); either end "
      "may be left out, e.g. \"1700000000..\") or \"run:NAME[,NAME...]\" (what those runs "
      "wrote).";
  registry->Add(QueryTool(ctx, {
      "temporal", "What changed between two periods",
      std::string("What changed between an earlier and a later period: added (memories of "
                  "the later period not in the earlier one), corrected (a later memory "
                  "supersedes an earlier one), updated (earlier memories updated during the "
                  "later period) and unchanged. Use it to review what a session or a day "
                  "changed.") + kPeriodHelp,
      Merge(Json{{"earlier", StringProp("The earlier period, e.g. \"run:monday\" or \"..1700086400\".")},
                 {"later", StringProp("The later period, e.g. \"run:tuesday\" or \"1700086400..\".")}},
            LimitProp(50, 500)),
      {"earlier", "later"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(a, query::ParsePeriod(ArgString(args, "earlier")));
        AMEM_ASSIGN_OR_RETURN(b, query::ParsePeriod(ArgString(args, "later")));
        query::TemporalOptions o;
        o.a = a;
        o.b = b;
        o.limit = Limit(args, 50);
        return Answer{query::TemporalJson(r, query::Temporal(r, o)), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "impact", "What depends on a memory",
      "What depends on a memory, directly or through others: every D with D caused_by X "
      "and every C with X supports C, then theirs, up to depth hops, with counts of the "
      "decisions and inferences affected. Ask it before changing or deleting something a "
      "decision may rest on.",
      Merge(Json{{"node", NodeProp("The memory that might change or be wrong")},
                 {"depth", IntProp("Maximum hops (default 10).", 1, 100)}},
            LimitProp(100, 1000)),
      {"node"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(root, NodeArg(r, args, "node"));
        query::ImpactOptions o;
        o.depth = static_cast<uint32_t>(ArgInt(args, "depth", 10));
        o.limit = Limit(args, 100);
        return Answer{query::ImpactJson(r, query::Impact(r, root, o)), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "resolve", "The current version of a memory",
      "What is the current version of this memory: follows the newer versions (X "
      "supersedes it) to the one nobody supersedes and returns the chain. Use it before "
      "relying on a decision or fact that may have been corrected since.",
      Merge(Json{{"node", NodeProp("Any version of the memory")}}, LimitProp(1000, 10000)),
      {"node"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(node, NodeArg(r, args, "node"));
        query::ResolveOptions o;
        o.limit = Limit(args, 1000);
        return Answer{query::ResolveJson(r, query::Resolve(r, node, o)), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "path", "How two memories are connected",
      "How two memories are connected: the shortest chain of edges between them (any "
      "direction by default), or with weighted the cheapest by edge weight (cost "
      "\"neglog\": the most reliable chain, cost -ln(weight)). found is false when there is "
      "none within max_depth hops. Use it to explain why a symbol relates to a decision.",
      Merge(Json{{"from", NodeProp("Source memory")},
                 {"to", NodeProp("Target memory")},
                 {"direction", DirectionProp("both")},
                 {"relations", RelationsProp("Only use these relations.")},
                 {"max_depth", IntProp("Maximum hops of an unweighted search (default 20).", 1, 1000)},
                 {"weighted", BoolProp("Cheapest path by edge cost instead of fewest hops.")},
                 {"cost", EnumProp({"weight", "neglog"},
                                   "Edge cost of a weighted search: weight, or neglog = "
                                   "-ln(weight) (implies weighted; default weight).")}},
            LimitProp(1000, 10000)),
      {"from", "to"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(from, NodeArg(r, args, "from"));
        AMEM_ASSIGN_OR_RETURN(to, NodeArg(r, args, "to"));
        AMEM_ASSIGN_OR_RETURN(dir, query::ParseDirection(ArgString(args, "direction", "both")));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, Strings(args, "relations")));
        bool neglog = ArgString(args, "cost", "weight") == "neglog";
        query::PathOptions o;
        o.direction = dir;
        o.relations = rels;
        o.max_depth = static_cast<uint32_t>(ArgInt(args, "max_depth", 20));
        o.weighted = ArgBool(args, "weighted", false) || neglog;
        o.cost = neglog ? query::PathOptions::Cost::kNegLog : query::PathOptions::Cost::kWeight;
        query::PathResult path = query::FindPath(r, from, to, o);
        Json doc = query::PathAnswer(r, path, o, Limit(args, 1000));
        // Cut by length, so that nodes and edges stay aligned (FitToBudget would cut
        // each list on its own): as many (node, edge) steps as the budget holds.
        BoundedList fit(SIZE_MAX, kMaxResultBytes - 2048);
        const Json& nodes = doc["nodes"];
        const Json& edges = doc["edges"];
        size_t n = 0;
        while (n < nodes.size() &&
               fit.Add(Json::array({nodes[n], n < edges.size() ? edges[n] : Json()}))) {
          ++n;
        }
        if (n < nodes.size()) doc = query::PathAnswer(r, path, o, n);
        return Answer{std::move(doc), {}};
      }}));
}

// ---- recall: similar, context, text_search, hybrid_search, centrality ----

void AddRecallTools(ToolRegistry* registry, const ToolContext* ctx) {
  registry->Add(QueryTool(ctx, {
      "context", "LLM-ready context for a file, symbol or question",
      "The memory an agent should read before working on something, as prompt-ready text "
      "within a token budget: give seeds (keys such as file:src/a.cc or symbol:Store::Open) "
      "and/or a question (its best keyword matches become the seeds). Returns the seeds' "
      "neighbourhood, nearest first: one line per memory `key (type, confidence): "
      "\"content\"` and one per edge `A --rel--> B`. Call it at the start of a task.",
      Merge(Json{{"seeds", Merge(ArrayOf(NodeProp("A seed memory"), "Memories to start from."),
                                 Json{{"minItems", 1}, {"maxItems", 50}})},
                 {"question", StringProp("A question or task in words; its best keyword "
                                         "(BM25) matches are used as seeds.")},
                 {"question_seeds", IntProp("How many matches of the question become seeds "
                                            "(default 3).", 1, 20)},
                 {"depth", IntProp("Hops from the seeds, both directions (default 2).", 0, 10)},
                 {"budget_tokens", IntProp("Token budget of the text (estimated as bytes/4; "
                                           "default 2000).", 100, 8000)},
                 {"max_content", IntProp("Bytes of content per memory (default 400).", 40, 4000)}},
            LimitProp(200, 2000)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        if (!HasArg(args, "seeds") && !HasArg(args, "question")) {
          return Status::InvalidArgument("give seeds (memory keys), a question, or both");
        }
        std::vector<uint32_t> seeds;
        for (const std::string& s : Strings(args, "seeds")) {
          AMEM_ASSIGN_OR_RETURN(i, query::ResolveNode(r, s));
          seeds.push_back(i);
        }
        if (HasArg(args, "question")) {
          query::TextSearchOptions ts;
          ts.query = ArgString(args, "question");
          ts.limit = static_cast<uint32_t>(ArgInt(args, "question_seeds", 3));
          AMEM_ASSIGN_OR_RETURN(hits, query::TextSearch(r, ts));
          if (hits.hits.empty() && seeds.empty()) {
            // Not an error: the memory simply holds nothing about it (yet).
            return Answer{Json{{"query", "context"}, {"question", ts.query},
                               {"seeds", Json::array()}, {"nodes", Json::array()},
                               {"edges", Json::array()}},
                          "# amem context: no memory contains the words of the question; "
                          "nothing is recorded about it yet (try other words, or seeds)\n"};
          }
          for (const auto& h : hits.hits) {
            if (std::find(seeds.begin(), seeds.end(), h.index) == seeds.end()) {
              seeds.push_back(h.index);
            }
          }
        }
        query::ContextOptions o;
        o.depth = static_cast<uint32_t>(ArgInt(args, "depth", 2));
        o.budget_tokens = static_cast<size_t>(ArgInt(args, "budget_tokens", 2000));
        o.format = query::Format::kText;
        o.max_content_bytes = static_cast<size_t>(ArgInt(args, "max_content", 400));
        o.limit = Limit(args, 200);
        AMEM_ASSIGN_OR_RETURN(res, query::BuildContextChecked(r, seeds, o));
        Answer a{query::ContextJson(r, res, o), query::ContextText(r, res, o)};
        if (HasArg(args, "question")) a.doc["question"] = ArgString(args, "question");
        return a;
      }}));

  registry->Add(QueryTool(ctx, {
      "text_search", "Keyword search over memories",
      "Keyword recall: BM25 ranking of memory contents for the query words (lower-cased; "
      "stop words and 1-letter words ignored). Each row has its score and the words it "
      "matched. Use it to find memories about a topic when you know words they contain; "
      "match_all keeps only memories containing every word.",
      Merge(Merge(Json{{"query", StringProp("The words to look for.")},
                       {"match_all", BoolProp("Only memories containing every query word "
                                              "(default: any word).")}},
                  FilterProps()),
            LimitProp(10, 200)),
      {"query"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        query::TextSearchOptions o;
        o.query = ArgString(args, "query");
        o.match_all = ArgBool(args, "match_all", false);
        return Ranked(r, args, std::move(o), 10, query::TextSearch, query::TextSearchJson);
      }}));

  registry->Add(QueryTool(ctx, {
      "hybrid_search", "Keyword + semantic search",
      "Keyword and semantic recall together: Reciprocal Rank Fusion of the BM25 ranking "
      "and the embedding-similarity ranking of the query (your vector against the stored "
      "vectors, else amem's built-in embedding of the text against that of every "
      "memory's content). Rows carry the fused score, both ranks and both "
      "raw scores. The best general-purpose search when wording may differ.",
      Merge(Merge(Json{{"query", StringProp("The words to look for.")},
                       {"vector", VectorProp()},
                       {"bm25_weight", NumberProp("Weight of the keyword ranking (default 0.5).", 0, 1000)},
                       {"vector_weight", NumberProp("Weight of the semantic ranking (default 0.5).", 0, 1000)},
                       {"k", NumberProp("RRF constant k (default 60).", 0, 1e6)}},
                  FilterProps()),
            LimitProp(10, 200)),
      {"query"},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        query::HybridSearchOptions o;
        o.text = ArgString(args, "query");
        AMEM_ASSIGN_OR_RETURN(vector, Floats(args, "vector"));
        o.vector = std::move(vector);
        o.bm25_weight = ArgNumber(args, "bm25_weight", 0.5);
        o.vector_weight = ArgNumber(args, "vector_weight", 0.5);
        o.k = ArgNumber(args, "k", 60);
        return Ranked(r, args, std::move(o), 10, query::HybridSearch, query::HybridSearchJson);
      }}));

  registry->Add(QueryTool(ctx, {
      "similar", "Semantically similar memories",
      "Which memories are semantically close to a memory (node), a text or an embedding "
      "(vector): exact cosine ranking. A vector, or a node with a stored vector, is "
      "compared with the stored vectors; a text, or a node without one, with amem's "
      "built-in text embedding of every memory's content (basis says which). Give exactly "
      "one of node, text or vector; a node is never returned itself. Use it to find "
      "related or duplicate knowledge.",
      Merge(Merge(Json{{"node", NodeProp("Memory to compare with")},
                       {"text", StringProp("Text to compare with.")},
                       {"vector", VectorProp()},
                       {"min_similarity", NumberProp("Drop rows with a cosine below this "
                                                     "(default 0).", -1, 1)}},
                  FilterProps()),
            LimitProp(10, 200)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        int given = HasArg(args, "node") + HasArg(args, "text") + HasArg(args, "vector");
        if (given != 1) {
          return Status::InvalidArgument("give exactly one of \"node\", \"text\" or \"vector\"");
        }
        query::SimilarOptions o;
        if (HasArg(args, "node")) {
          AMEM_ASSIGN_OR_RETURN(node, NodeArg(r, args, "node"));
          o.node = node;
        }
        o.text = ArgString(args, "text");
        AMEM_ASSIGN_OR_RETURN(vector, Floats(args, "vector"));
        o.vector = std::move(vector);
        o.min_similarity = ArgNumber(args, "min_similarity", 0);
        return Ranked(r, args, std::move(o), 10, query::Similar, query::SimilarJson);
      }}));

  registry->Add(QueryTool(ctx, {
      "centrality", "The most central memories",
      "Which memories are central to the project: pagerank (default; what much else "
      "points to), degree (most connected) or betweenness (bridges between areas; slow on "
      "large stores). relations restricts the graph the metric sees; types only filters "
      "the rows. Use it to find the key decisions, files or modules to read first.",
      Merge(Json{{"metric", EnumProp({"pagerank", "degree", "betweenness"},
                                     "The centrality measure (default pagerank).")},
                 {"types", TypesProp("Only show memories of these types (scores are "
                                     "computed on the whole graph).")},
                 {"relations", RelationsProp("Only these relations form the graph.")}},
            LimitProp(20, 1000)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_ASSIGN_OR_RETURN(metric, query::ParseCentralityMetric(ArgString(args, "metric", "pagerank")));
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(Strings(args, "types")));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, Strings(args, "relations")));
        query::CentralityOptions o;
        o.metric = metric;
        o.types = types;
        o.rels = rels;
        o.limit = static_cast<uint32_t>(Limit(args, 20));
        AMEM_ASSIGN_OR_RETURN(res, query::Centrality(r, o));
        return Answer{query::CentralityJson(r, res), {}};
      }}));
}

// ---- reasoning: revise, gaps, analogy, consolidate, drift ----

void AddReasoningTools(ToolRegistry* registry, const ToolContext* ctx) {
  Store* store = ctx->store;
  registry->Add(QueryTool(ctx, {
      "revise", "What if a belief is wrong",
      "What if this belief is wrong: retracts a memory (node), or every memory a "
      "hypothesis contradicts (same words, opposite negation), and follows the cascade "
      "over what depends on it. A dependent falls only when none of its support remains. "
      "Returns confidence losses, inferences and decisions left unsupported and the "
      "total impact. Read-only: nothing is changed.",
      Merge(Json{{"node", NodeProp("The memory to retract")},
                 {"hypothesis", StringProp("A statement; the memories it contradicts are "
                                           "retracted, e.g. \"the cache is not enabled\".")}},
            LimitProp(50, 1000)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_RETURN_IF_ERROR(OneOf(args, "node", "hypothesis"));
        std::string hypothesis = ArgString(args, "hypothesis");
        AMEM_ASSIGN_OR_RETURN(retract, query::RetractedNodes(r, ArgString(args, "node"), hypothesis));
        query::ReviseOptions o;
        o.limit = Limit(args, 50);
        AMEM_ASSIGN_OR_RETURN(res, query::Revise(r, retract, o));
        return Answer{query::ReviseJson(res, hypothesis), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "gaps", "Where reasoning is weak",
      "Where is the project's reasoning weak: unjustified decisions (nothing supports "
      "them), single-source inferences, low-confidence foundations under more confident "
      "conclusions, unstable knowledge (corrected twice or more) and stale evidence behind "
      "active decisions, most severe first. Use it to decide what to verify or document.",
      Merge(Json{{"threshold", NumberProp("Confidence below which a foundation is weak "
                                          "(default 0.5).", 0, 1)},
                 {"stale_days", IntProp("Evidence not updated for this many days is stale "
                                        "(default 30).", 0, 36500)},
                 {"now", Json{{"type", "integer"},
                              {"description", "Unix seconds taken as now (default: the "
                                              "newest timestamp in the memory)."}}}},
            LimitProp(20, 1000)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        query::GapsOptions o;
        o.threshold = ArgNumber(args, "threshold", 0.5);
        o.stale_days = ArgInt(args, "stale_days", 30);
        if (HasArg(args, "now")) o.now = ArgInt(args, "now", 0);
        o.limit = Limit(args, 20);
        AMEM_ASSIGN_OR_RETURN(res, query::FindGaps(r, o));
        return Answer{query::GapsJson(res), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "analogy", "Have I seen this pattern before",
      "Have I seen this pattern before: memories whose shape in the graph (how many edges "
      "of each relation they have) and content resemble a memory's (node) or the best "
      "keyword match of a text. The anchor and its direct neighbours are excluded. Use it "
      "to find a past decision or fix similar to the current one.",
      Merge(Json{{"node", NodeProp("The anchor memory")},
                 {"text", StringProp("Anchor on the memory that best matches these words.")},
                 {"types", TypesProp("Only return memories of these types (default: all).")}},
            LimitProp(5, 200)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        AMEM_RETURN_IF_ERROR(OneOf(args, "node", "text"));
        query::AnalogyOptions o;
        o.limit = Limit(args, 5);
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(Strings(args, "types")));
        o.types = types;
        AMEM_ASSIGN_OR_RETURN(res, query::AnalogyFor(r, ArgString(args, "node"), ArgString(args, "text"), o));
        return Answer{query::AnalogyJson(res), {}};
      }}));

  registry->Add(QueryTool(ctx, {
      "drift", "How understanding is changing",
      "How is the project's understanding changing: per run (or, with a topic, per "
      "belief about it with all its versions) the stability (share never superseded), "
      "the direction of confidence along corrections, revisions per day and the "
      "trajectory of corrections, least stable first.",
      Merge(Json{{"topic", StringProp("Topic words (default: one cluster per run).")},
                 {"trajectory_limit", IntProp("Correction events shown per cluster (default 20).",
                                              0, 500)}},
            LimitProp(10, 100)),
      {},
      [](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        query::DriftOptions o;
        o.topic = ArgString(args, "topic");
        o.limit = Limit(args, 10);
        o.trajectory_limit = static_cast<size_t>(ArgInt(args, "trajectory_limit", 20));
        AMEM_ASSIGN_OR_RETURN(res, query::Drift(r, o));
        return Answer{query::DriftJson(res, o), {}};
      }}));

  // consolidate plans read-only; with execute: true it writes the plan.
  Tool t = QueryTool(ctx, {
      "consolidate", "What should be cleaned up",
      "What should be cleaned up: near-duplicate memories, contradictions not yet marked, "
      "inferences strong enough to become facts, and orphans (no edges). A dry run by "
      "default (changes nothing). With execute: true it writes, in one transaction, "
      "`winner supersedes loser` for duplicates (higher confidence wins), `newer "
      "contradicts older` for contradictions and the inference -> fact promotions; "
      "nothing is deleted, and running it again finds nothing more to do. Review a dry "
      "run first.",
      Merge(Merge(Json{{"dedup_threshold", NumberProp("Word-overlap (Jaccard) above which two "
                                                      "memories are duplicates (default 0.9).",
                                                      0.01, 1)},
                       {"execute", BoolProp("Write the plan to the store (default false: "
                                            "dry run). Not with as_of/at.")}},
                  WriteProperties()),
            LimitProp(50, 1000)),
      {},
      [store](const snapshot::Reader& r, const Json& args) -> Result<Answer> {
        bool execute = ArgBool(args, "execute", false);
        if (execute && store == nullptr) {
          return Status::InvalidArgument("execute writes to the store; this reads a snapshot");
        }
        if (execute && (HasArg(args, "as_of") || HasArg(args, "at"))) {
          return Status::InvalidArgument(
              "execute plans on the latest state: leave out as_of/at, or set execute: false");
        }
        query::ConsolidateOptions o;
        o.dedup_threshold = ArgNumber(args, "dedup_threshold", 0.9);
        o.limit = Limit(args, 50);
        AMEM_ASSIGN_OR_RETURN(plan, query::PlanConsolidation(r, o));
        if (!execute) return Answer{query::ConsolidateJson(r, plan, o, nullptr), {}};
        AMEM_ASSIGN_OR_RETURN(applied,
                        query::ApplyConsolidation(*store, r, plan, WriteOptionsFromArgs(args)));
        return Answer{query::ConsolidateJson(r, plan, o, &applied), {}};
      }});
  t.read_only = false;
  t.destructive = false;
  t.idempotent = true;
  registry->Add(std::move(t));
}

// Where export_snapshot may write `requested` (relative to `root`, an absolute,
// canonical directory), or why not: the path stays inside root's tree through
// every symbolic link, names a .amem file outside the store directory, and
// replaces only an existing snapshot file, only with overwrite (docs/MCP.md).
Result<std::filesystem::path> ExportTarget(const std::string& root, const std::string& store_dir,
                                           const std::string& requested, bool overwrite) {
  namespace fs = std::filesystem;
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(requested + ": " + why);
  };
  if (root.empty()) return refuse("exports are disabled (no export directory)");
  fs::path rel(requested);
  if (requested.empty() || rel.is_absolute() || rel.has_root_name() || rel.has_root_directory()) {
    return refuse("give a path relative to the export directory " + root);
  }
  for (const fs::path& part : rel) {
    if (part == "..") return refuse("'..' is not allowed; paths stay inside " + root);
  }
  if (rel.extension() != ".amem") return refuse("the file name must end in .amem");
  std::error_code ec;
  fs::path parent = fs::canonical(fs::path(root) / rel.parent_path(), ec);
  if (ec || !fs::is_directory(parent, ec)) {
    return refuse("directory " + (fs::path(root) / rel.parent_path()).string() +
                  " does not exist; create it or choose another path");
  }
  auto inside = [](const fs::path& p, const fs::path& dir) {
    fs::path r = p.lexically_relative(dir);
    return !r.empty() && *r.begin() != "..";
  };
  if (parent != fs::path(root) && !inside(parent, fs::path(root))) {
    return refuse("leads outside the export directory " + root + " (through a symbolic link)");
  }
  fs::path path = parent / rel.filename();
  fs::path store = fs::weakly_canonical(fs::absolute(store_dir, ec), ec);
  if (path == store || inside(path, store)) {
    return refuse("is inside the store directory " + store.string() +
                  "; choose a path outside it");
  }
  fs::file_status st = fs::symlink_status(path, ec);
  if (fs::is_symlink(st)) return refuse("is a symbolic link; exports never follow one");
  if (fs::is_directory(st)) return refuse("is a directory; give a file name");
  if (fs::exists(st)) {
    if (!overwrite) return refuse("exists; pass overwrite: true to replace it, or choose "
                                  "another path");
    char magic[sizeof(snapshot::kMagic)] = {};
    std::ifstream in(path, std::ios::binary);
    if (!fs::is_regular_file(st) || !in.read(magic, sizeof(magic)) ||
        std::memcmp(magic, snapshot::kMagic, sizeof(magic)) != 0) {
      return refuse("exists and is not an .amem snapshot; only a snapshot is ever replaced");
    }
  }
  return path;
}

void AddExportTool(ToolRegistry* registry, ToolContext* ctx) {
  Tool t;
  t.name = "export_snapshot";
  t.title = "Export a snapshot file";
  t.description =
      "Write the memory (as of now, or as_of/at) to a .amem snapshot file at path: one "
      "self-contained, checksummed, memory-mappable file that `amem verify`, `amem info` "
      "and every query (`--snapshot FILE`) read, e.g. to archive the state at a release "
      "or share it. Returns the revision written and the counts. The path is relative to "
      "the server's export directory (its working directory unless started with "
      "--export-dir) and must stay inside it and end in .amem. An existing snapshot file "
      "is only replaced with overwrite: true; the store itself is never changed.";
  t.input_schema = ObjectSchema(
      Merge(Json{{"path", StringProp("Where to write, e.g. snapshots/v1.amem (relative to "
                                     "the export directory, the workspace root).")},
                 {"overwrite", BoolProp("Replace the snapshot file if it exists (default "
                                        "false).")}},
            AsOfProperties()),
      {"path"});
  t.read_only = false;
  t.destructive = true;  // with overwrite: true it replaces a file
  t.idempotent = false;
  t.handler = [ctx](const Json& args) {
    Store* store = ctx->store;
    auto view = ViewFromArgs(args);
    if (!view.ok()) return ToolErrorFromStatus("export_snapshot", view.status());
    auto path = ExportTarget(ctx->export_dir, store->path(), ArgString(args, "path"),
                             ArgBool(args, "overwrite", false));
    if (!path.ok()) return ToolErrorFromStatus("export_snapshot", path.status());
    snapshot::ExportOptions options;
    options.view = *view;
    auto res = snapshot::ExportSnapshot(*store, path->string(), options);
    if (!res.ok()) return ToolErrorFromStatus("export_snapshot", res.status());
    ToolResult r;
    r.structured = io::ExportResultToJson(path->string(), *res);
    return r;
  };
  registry->Add(std::move(t));
}

}  // namespace

void AddQueryTools(ToolRegistry* registry, ToolContext* ctx) {
  AddRecallTools(registry, ctx);
  AddNavigationTools(registry, ctx);
  AddReasoningTools(registry, ctx);
  AddExportTool(registry, ctx);
}

}  // namespace amem::mcp
