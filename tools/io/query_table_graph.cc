// The navigation queries of the query table: traverse, search (find_memories),
// temporal, impact, context, resolve, path (docs/QUERIES.md #1-4, 6, 7, 11).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "query/code_impact.h"
#include "query/context.h"
#include "query/impact.h"
#include "query/path.h"
#include "query/query.h"
#include "query/render.h"
#include "query/resolve.h"
#include "query/search.h"
#include "query/temporal.h"
#include "query/text_search.h"
#include "query/traverse.h"
#include "snapshot/reader.h"
#include "tools/index/diff.h"
#include "tools/io/internal/query_families.h"

namespace amem::io {

namespace {

QueryDef Traverse() {
  const query::TraverseOptions d;
  return QueryDef{
      .command = "traverse",
      .tool = "traverse",
      .cli_help = "What is reachable from NODE: level-order BFS, neighbours in (relation, "
                  "index) order; each row has its depth and the tree edge that reached it.",
      .example = "amem traverse file:src/store.cc --rel defines,calls --depth 2",
      .title = "What is reachable from a memory",
      .description =
          "What is reachable from one memory: a level-order walk over its edges (by default "
          "outgoing, all relations) up to depth hops. Each row is a memory with its depth and "
          "the edge that reached it. Use it to explore what a file defines, what a decision "
          "rests on, or what a module contains; restrict relations to follow one kind of "
          "link (e.g. [\"defines\",\"calls\"]).",
      .brief = "What is reachable from a memory: a breadth-first walk over its edges, up to depth hops.",
      .params = {NodeParam("node", "NODE", "Start memory", true),
                 DirectionParam(query::DirectionName(d.direction)),
                 Brief(RelationsParam("Only follow these relations"), "Only these relations"),
                 {.name = "depth", .type = ParamType::kInteger, .help = "Maximum hops",
                  .default_text = DefaultText(d.depth), .min = 0, .max = 100},
                 {.name = "min_confidence", .type = ParamType::kNumber,
                  .help = "Skip memories below this confidence", .brief = "Min confidence",
                  .default_text = DefaultText(d.min_confidence), .min = 0, .max = 1},
                 Brief(LimitParam(d.limit, 1000, "Maximum rows, the start included"), "Max rows")},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        const snapshot::Reader& r = c.reader;
        AMEM_ASSIGN_OR_RETURN(start, c.Node("node"));
        query::TraverseOptions o;
        AMEM_ASSIGN_OR_RETURN(
            dir, query::ParseDirection(c.String("direction", query::DirectionName(o.direction))));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, c.Strings("relations")));
        o.direction = dir;
        o.relations = rels;
        o.depth = c.Int("depth", o.depth);
        o.min_confidence = static_cast<float>(c.Number("min_confidence", o.min_confidence));
        o.limit = c.Int("limit", o.limit);
        return QueryAnswer{query::TraverseJson(r, query::Traverse(r, start, o), o)};
      }};
}

QueryDef Search() {
  const query::SearchOptions d;
  return QueryDef{
      .command = "search",
      .tool = "find_memories",
      .cli_help = "Which memories match these attributes: filter by type, run, scope, "
                  "confidence and creation time, newest (or most confident) first.",
      .example = "amem search --type decision --run run-7 --after 1700000000 --sort confidence",
      .title = "Find memories by attributes",
      .description =
          "Which memories match these attributes: filter by type (e.g. every decision), run "
          "(agent session), scope, confidence range and creation time, newest first (or most "
          "confident first). No words are matched: for keyword recall use text_search, for "
          "meaning use similar or hybrid_search.",
      .brief = "Memories matching attributes (type, run, scope, confidence, creation time); matches no words.",
      .params = {TypesParam("Only memories of these types"),
                 RunsParam("Only memories written by these runs (sessions)"),
                 {.name = "scope", .help = "Only memories with exactly this scope (\"\": none)", .brief = "Exact scope (\"\": none)",
                  .allow_empty = true},
                 {.name = "min_confidence", .type = ParamType::kNumber,
                  .help = "Inclusive lower bound of confidence", .brief = "Min confidence",
                  .default_text = DefaultText(d.min_confidence), .min = 0, .max = 1},
                 {.name = "max_confidence", .type = ParamType::kNumber,
                  .help = "Inclusive upper bound of confidence", .brief = "Max confidence",
                  .default_text = DefaultText(d.max_confidence), .min = 0, .max = 1},
                 {.name = "after", .type = ParamType::kInteger,
                  .help = "Created at or after this Unix time (seconds)", .brief = "Created at or after (Unix s)", .cli = "--after"},
                 {.name = "before", .type = ParamType::kInteger,
                  .help = "Created before this Unix time (seconds)", .brief = "Created before (Unix s)"},
                 {.name = "sort",
                  .help = "recent: newest created first; confidence: most confident first", .brief = "recent or confidence",
                  .default_text = "recent",
                  .choices = {"recent", "confidence"}},
                 LimitParam(d.limit, 1000)},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        const snapshot::Reader& r = c.reader;
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(c.Strings("types")));
        query::SearchOptions o;
        o.types = types;
        if (c.Has("sort")) {
          AMEM_ASSIGN_OR_RETURN(sort, query::ParseSearchSort(c.String("sort")));
          o.sort = sort;
        }
        o.runs = c.Strings("runs");
        if (c.Has("scope")) o.scope = c.String("scope");
        o.min_confidence = static_cast<float>(c.Number("min_confidence", o.min_confidence));
        o.max_confidence = static_cast<float>(c.Number("max_confidence", o.max_confidence));
        if (c.Has("after")) o.after = c.IntValue("after");
        if (c.Has("before")) o.before = c.IntValue("before");
        o.limit = c.Int("limit", o.limit);
        return QueryAnswer{query::SearchJson(r, query::Search(r, o), o)};
      }};
}

QueryDef Temporal() {
  const query::TemporalOptions d;
  return QueryDef{
      .command = "temporal",
      .tool = "temporal",
      .cli_help = "What changed between period A and period B: added (in B, not in A), "
                  "corrected (a B node supersedes an A node), updated (A nodes updated during "
                  "B), unchanged. A period is FROM..TO in Unix seconds on created_ts ([FROM, "
                  "TO), either end may be empty) or run:NAME[,NAME...].",
      .example = "amem temporal 1700000000..1700086400 1700086400..\n"
                 "amem temporal run:monday run:tuesday",
      .title = "What changed between two periods",
      .description =
          "What changed between an earlier and a later period: added (memories of the later "
          "period not in the earlier one), corrected (a later memory supersedes an earlier "
          "one), updated (earlier memories updated during the later period) and unchanged. "
          "Use it to review what a session or a day changed. A period is \"FROM..TO\" in Unix "
          "seconds on creation time ([FROM, TO); either end may be left out, e.g. "
          "\"1700000000..\") or \"run:NAME[,NAME...]\" (what those runs wrote).",
      .brief = "What changed between two periods (\"FROM..TO\" Unix seconds, or \"run:NAME\"): added, corrected, updated, unchanged.",
      .params = {{.name = "earlier",
                  .help = "The earlier period, e.g. run:monday or ..1700086400", .brief = "Earlier period: FROM..TO or run:NAME",
                  .cli = "A", .required = true},
                 {.name = "later",
                  .help = "The later period, e.g. run:tuesday or 1700086400..", .brief = "Later period",
                  .cli = "B", .required = true},
                 LimitParam(d.limit, 500, "Maximum rows per list")},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        AMEM_ASSIGN_OR_RETURN(a, query::ParsePeriod(c.String("earlier")));
        AMEM_ASSIGN_OR_RETURN(b, query::ParsePeriod(c.String("later")));
        query::TemporalOptions o;
        o.a = a;
        o.b = b;
        o.limit = c.Int("limit", o.limit);
        return QueryAnswer{query::TemporalJson(c.reader, query::Temporal(c.reader, o))};
      }};
}

// impact's --budget-tokens: rows cut from the end of `fields` (the last first) until
// the answer, as this front end shows it, fits.
Status CutImpact(const QueryCall& c, const std::vector<std::string>& fields, QueryAnswer* a) {
  const bool json = c.json_output || c.front_end == FrontEnd::kMcp;
  return query::CutToTokenBudget(&a->doc, fields,
                                 json ? query::Format::kJson : query::Format::kText,
                                 c.Int<size_t>("budget_tokens", 0));
}

// impact --diff: the code a patch changes and what reaches it (docs/CODE.md §5).
Result<QueryAnswer> RunCodeImpact(const QueryCall& c) {
  auto changes = index::ParseUnifiedDiff(c.String("diff"));
  if (!changes.ok()) {
    return Status::InvalidArgument(c.Spell("diff") + ": " + changes.status().message());
  }
  query::CodeImpactOptions o;
  o.depth = c.Int("depth", o.depth);
  o.limit = c.Int("limit", o.limit);
  QueryAnswer a{query::CodeImpactJson(c.reader, query::CodeImpact(c.reader, *changes, o), o)};
  AMEM_RETURN_IF_ERROR(CutImpact(c, {"changed", "memories", "tests", "affected"}, &a));
  return a;
}

QueryDef Impact() {
  const query::ImpactOptions d;
  const query::CodeImpactOptions code;
  return QueryDef{
      .command = "impact",
      .tool = "impact",
      .cli_help = "What depends on NODE: BFS over its dependents (D with `D caused_by NODE`, "
                  "C with `NODE supports C`, then theirs); counts affected decisions and "
                  "inferences. With --diff FILE instead (- for stdin): the code a unified "
                  "diff changes (old-side lines to the innermost symbols, else the file), the "
                  "code that "
                  "calls, references, implements, imports, contains or tests it (BFS back "
                  "over those edges), the tests among them and the memories linked to any "
                  "of it (docs/CODE.md).",
      .example = "amem impact fact:lmdb-is-fast --depth 3\n"
                 "git diff | amem impact --diff -",
      .title = "What depends on a memory, or on the code a diff changes",
      .description =
          "What depends on a memory, directly or through others: every D with D caused_by X "
          "and every C with X supports C, then theirs, up to depth hops, with counts of the "
          "decisions and inferences affected. Ask it before changing or deleting something a "
          "decision may rest on. Or give diff (a unified diff, e.g. the output of git diff) "
          "instead of node: the answer lists the changed symbols and files, the code that "
          "depends on them, the tests that reach them and the memories (decisions, "
          "constraints, facts) recorded about any of it. Ask it before committing a change.",
      .brief = "What depends on a memory, or on the code a diff (git diff) changes: dependents, tests that reach it, memories about it. Ask before committing.",
      .params = {Brief(NodeParam("node", "NODE", "The memory that might change or be wrong", false), "The memory"),
                 {.name = "diff", .role = ParamRole::kFileText,
                  .help = "A unified diff (git diff, any -U) to map onto the code graph "
                          "instead of a node",
                  .brief = "A unified diff (git diff), instead of node",
                  .allow_empty = true},
                 {.name = "depth", .type = ParamType::kInteger, .help = "Maximum hops",
                  .default_text = DefaultText(d.depth) + "; " + DefaultText(code.depth) +
                                  " with a diff",
                  .min = 1, .max = 100},
                 {.name = "budget_tokens", .type = ParamType::kInteger,
                  .help = "Token budget of the answer (bytes/4 of the text, or of the "
                          "JSON), never exceeded: rows go from the end of the list (with a "
                          "diff: affected, then tests, then memories); 0 for none",
                  .brief = "Token budget of the answer, 0 for none",
                  .default_text = "0", .min = 0, .mcp_max = 8000},
                 Brief(LimitParam(d.limit, 1000, "Maximum rows (per list with a diff); the counts "
                                           "cover all"), "Max rows (per list with a diff)")},
      .exactly_one = {"node", "diff"},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        if (c.Has("diff")) return RunCodeImpact(c);
        AMEM_ASSIGN_OR_RETURN(root, c.Node("node"));
        query::ImpactOptions o;
        o.depth = c.Int("depth", o.depth);
        o.limit = c.Int("limit", o.limit);
        QueryAnswer a{query::ImpactJson(c.reader, query::Impact(c.reader, root, o))};
        AMEM_RETURN_IF_ERROR(CutImpact(c, {"dependents"}, &a));
        return a;
      }};
}

// How many keyword matches of context's question become seeds, unless told.
constexpr uint32_t kQuestionSeeds = 3;

// context: seeds, the best keyword matches of a question, or both.
Result<QueryAnswer> RunContext(const QueryCall& c) {
  const snapshot::Reader& r = c.reader;
  std::vector<uint32_t> seeds;
  for (const std::string& s : c.Strings("seeds")) {
    AMEM_ASSIGN_OR_RETURN(i, query::ResolveNode(r, s));
    seeds.push_back(i);
  }
  query::ContextOptions o;
  const bool json = c.json_output || c.String("format") == "json";
  if (c.Has("question")) {
    query::TextSearchOptions ts;
    ts.query = c.String("question");
    ts.limit = c.Int("question_seeds", kQuestionSeeds);
    AMEM_ASSIGN_OR_RETURN(hits, query::TextSearch(r, ts));
    if (hits.hits.empty() && seeds.empty()) {
      // Not an error: the memory simply holds nothing about it (yet).
      QueryAnswer none{query::Json{{"query", "context"}, {"question", ts.query},
                                   {"seeds", query::Json::array()},
                                   {"nodes", query::Json::array()},
                                   {"edges", query::Json::array()}},
                       "# amem context: no memory contains the words of the question; "
                       "nothing is recorded about it yet (try other words, or seeds)\n"};
      if (json) none.text = query::RenderJson(none.doc);
      return none;
    }
    for (const auto& h : hits.hits) {
      if (std::find(seeds.begin(), seeds.end(), h.index) == seeds.end()) seeds.push_back(h.index);
    }
  }
  o.depth = c.Int("depth", o.depth);
  o.budget_tokens = c.Int("budget_tokens", o.budget_tokens);
  o.format = json ? query::Format::kJson : query::Format::kText;
  o.max_content_bytes =
      c.Int("max_content", o.max_content_bytes);
  o.limit = c.Int("limit", o.limit);
  AMEM_ASSIGN_OR_RETURN(res, query::BuildContextChecked(r, seeds, o));
  QueryAnswer a{query::ContextJson(r, res, o)};
  // The JSON answer is what the budget measured: the question, the caller's own
  // words, is echoed only beside the text (MCP's structuredContent).
  if (c.Has("question") && !json) a.doc["question"] = c.String("question");
  a.text = json ? query::RenderJson(a.doc) : query::ContextText(r, res, o);
  return a;
}

QueryDef Context() {
  const query::ContextOptions d;
  return QueryDef{
      .command = "context",
      .tool = "context",
      .cli_help = "The neighbourhood an agent should see, ready for a prompt: BFS both ways "
                  "over all relations from the seeds (and the best keyword matches of "
                  "--question), every edge among the nodes found, nearest first, cut to a "
                  "token budget (estimated as bytes/4). Text lines are "
                  "`- key (type, confidence): \"content\"` and `- A --rel--> B`; stored "
                  "strings are escaped so they cannot break that structure.",
      .example = "amem context file:src/store.cc decision:use-lmdb --depth 2 --budget-tokens 1500\n"
                 "amem context --question \"how are snapshots written\"",
      .title = "LLM-ready context for a file, symbol or question",
      .description =
          "The memory an agent should read before working on something, as prompt-ready text "
          "within a token budget: give seeds (keys such as file:src/a.cc or "
          "symbol:Store::Open) and/or a question (its best keyword matches become the seeds). "
          "Returns the seeds' neighbourhood, nearest first: one line per memory `key (type, "
          "confidence): \"content\"` and one per edge `A --rel--> B`. Call it at the start of "
          "a task.",
      .brief = "Prompt-ready memory about files, symbols (seeds) or a question, nearest first, within budget_tokens. Ask before editing.",
      .params = {{.name = "seeds", .type = ParamType::kStrings, .role = ParamRole::kNodes,
                  .help = "Memories to start from", .max_items = 50, .cli = "SEED"},
                 {.name = "question",
                  .help = "A question or task in words; its best keyword (BM25) matches are "
                          "used as seeds",
                  .brief = "A question or task; its best matches become seeds"},
                 {.name = "question_seeds", .type = ParamType::kInteger,
                  .help = "How many matches of the question become seeds",
                  .brief = "Matches of the question used",
                  .default_text = DefaultText(kQuestionSeeds), .min = 1, .max = 20},
                 {.name = "depth", .type = ParamType::kInteger,
                  .help = "Hops from the seeds, both directions", .brief = "Hops from the seeds",
                  .default_text = DefaultText(d.depth),
                  .min = 0, .max = 10},
                 {.name = "budget_tokens", .type = ParamType::kInteger,
                  .help = "Token budget of the whole text (bytes/4, rounded up), never "
                          "exceeded; 0 for none (command line only). A budget too small for "
                          "the header and section lines is an error naming the minimum",
                  .brief = "Token budget of the text",
                  .default_text = DefaultText(d.budget_tokens), .min = 0,
                  .mcp_min = 100, .mcp_max = 8000},
                 {.name = "format", .help = "text, or json (--json implies json)",
                  .default_text = "text", .choices = {"text", "json"},
                  .scope = ParamScope::kCliOnly},
                 {.name = "max_content", .type = ParamType::kInteger,
                  .help = "Bytes of content per memory, cut on a character",
                  .brief = "Content bytes per memory",
                  .default_text = DefaultText(d.max_content_bytes), .min = 0,
                  .mcp_min = 40, .mcp_max = 4000},
                 Brief(LimitParam(d.limit, 2000, "Memories collected before the budget cut"), "Memories collected")},
      .at_least_one = {"seeds", "question"},
      .run = RunContext};
}

QueryDef Resolve() {
  const query::ResolveOptions d;
  return QueryDef{
      .command = "resolve",
      .tool = "resolve",
      .cli_help = "The current version of NODE: follow `X supersedes NODE` edges to a node "
                  "nobody supersedes (competing versions: newest created_ts, then highest "
                  "index); cycle-safe; prints the chain.",
      .example = "amem resolve decision:cache-policy",
      .title = "The current version of a memory",
      .description =
          "What is the current version of this memory: follows the newer versions (X "
          "supersedes it) to the one nobody supersedes and returns the chain. Use it before "
          "relying on a decision or fact that may have been corrected since.",
      .brief = "The current version of a memory: follows supersedes links to the newest.",
      .params = {Brief(NodeParam("node", "NODE", "Any version of the memory", true), "Any version"),
                 Brief(LimitParam(d.limit, 10000, "Longest chain followed"), "Max chain")},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        AMEM_ASSIGN_OR_RETURN(node, c.Node("node"));
        query::ResolveOptions o;
        o.limit = c.Int("limit", o.limit);
        return QueryAnswer{query::ResolveJson(c.reader, query::Resolve(c.reader, node, o))};
      }};
}

// The rows a path answer shows when no limit is given.
constexpr size_t kPathLimit = 1000;

QueryDef Path() {
  const query::PathOptions d;
  return QueryDef{
      .command = "path",
      .tool = "path",
      .cli_help = "How FROM and TO are connected: the shortest path (bidirectional BFS), or "
                  "with --weighted the cheapest (bidirectional Dijkstra, cost = edge weight; "
                  "--cost neglog: cost = -ln(weight), the most reliable chain). found=false "
                  "when there is none within --max-depth hops.",
      .example = "amem path symbol:Store::Open decision:use-lmdb --rel calls,decided_for\n"
                 "amem path fact:a decision:b --cost neglog",
      .title = "How two memories are connected",
      .description =
          "How two memories are connected: the shortest chain of edges between them (any "
          "direction by default), or with weighted the cheapest by edge weight (cost "
          "\"neglog\": the most reliable chain, cost -ln(weight)). found is false when there "
          "is none within max_depth hops. Use it to explain why a symbol relates to a "
          "decision.",
      .brief = "How two memories are connected: the shortest (or, weighted, cheapest) chain of edges.",
      .params = {NodeParam("from", "FROM", "Source memory", true),
                 NodeParam("to", "TO", "Target memory", true),
                 DirectionParam(query::DirectionName(d.direction)),
                 Brief(RelationsParam("Only use these relations"), "Only these relations"),
                 {.name = "max_depth", .type = ParamType::kInteger,
                  .help = "Maximum hops of an unweighted search", .brief = "Max hops, unweighted",
                  .default_text = DefaultText(d.max_depth),
                  .min = 1, .max = 1000},
                 {.name = "weighted", .type = ParamType::kBoolean,
                  .help = "Cheapest path by edge cost instead of fewest hops", .brief = "Cheapest by edge cost"},
                 {.name = "cost",
                  .help = "Edge cost of a weighted search: weight, or neglog = -ln(weight) "
                          "(implies weighted)",
                  .brief = "Weighted edge cost: weight or neglog",
                  .default_text = "weight", .choices = {"weight", "neglog"}},
                 Brief(LimitParam(kPathLimit, 10000, "Show at most this many memories of the path"), "Max memories")},
      .chain = true,
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        const snapshot::Reader& r = c.reader;
        AMEM_ASSIGN_OR_RETURN(from, c.Node("from"));
        AMEM_ASSIGN_OR_RETURN(to, c.Node("to"));
        query::PathOptions o;
        AMEM_ASSIGN_OR_RETURN(
            dir, query::ParseDirection(c.String("direction", query::DirectionName(o.direction))));
        AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(r, c.Strings("relations")));
        const bool neglog = c.String("cost") == "neglog";
        o.direction = dir;
        o.relations = rels;
        o.max_depth = c.Int("max_depth", o.max_depth);
        o.weighted = c.Bool("weighted") || neglog;
        o.cost = neglog ? query::PathOptions::Cost::kNegLog : query::PathOptions::Cost::kWeight;
        size_t limit = c.Int("limit", kPathLimit);
        return QueryAnswer{query::PathAnswer(r, query::FindPath(r, from, to, o), o, limit)};
      }};
}

}  // namespace

std::vector<QueryDef> GraphQueries() {
  return {Traverse(), Search(), Temporal(), Impact(), Context(), Resolve(), Path()};
}

}  // namespace amem::io
