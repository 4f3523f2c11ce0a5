// amem traverse | search | temporal | impact | context | resolve | path
// (docs/QUERIES.md #1-4, 6, 7, 11). Each runs on --snapshot FILE, or on the store's
// live view (snapshot/live.h: the base snapshot plus a delta of the changes since
// it; with --as-of / --at, the state of that revision).
#include "tools/cli/cmd_query_graph.h"

#include <memory>
#include <string>
#include <vector>

#include "query/context.h"
#include "snapshot/live.h"
#include "query/impact.h"
#include "query/path.h"
#include "query/query.h"
#include "query/render.h"
#include "query/resolve.h"
#include "query/search.h"
#include "query/temporal.h"
#include "query/traverse.h"
#include "snapshot/reader.h"
#include "tools/cli/query_args.h"

namespace amem::cli {

namespace {

using query::Json;

// Adds `name` as a node argument (key, 16-hex-digit id or dense index).
CLI::Option* AddNodeArg(CLI::App* cmd, const std::string& name, std::string* out,
                        const std::string& what) {
  return cmd
      ->add_option(name, *out, what + ": a key, a 16-hex-digit id or a dense index (#N)")
      ->required();
}

Result<uint32_t> Node(const snapshot::Reader& reader, const std::string& arg) {
  return query::ResolveNode(reader, arg);
}

// ---- traverse ----
struct TraverseArgs {
  SnapshotArgs snap;
  std::string node, direction = "out";
  std::vector<std::string> rels;
  uint32_t depth = 5;
  float min_confidence = 0;
  size_t limit = 50;
};

Status RunTraverse(Context& ctx, const TraverseArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  AMEM_ASSIGN_OR_RETURN(start, Node(*reader, a.node));
  query::TraverseOptions o;
  AMEM_ASSIGN_OR_RETURN(dir, query::ParseDirection(a.direction));
  AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(*reader, a.rels));
  o.direction = dir;
  o.relations = rels;
  o.depth = a.depth;
  o.min_confidence = a.min_confidence;
  o.limit = a.limit;
  return EmitQuery(ctx, *reader, query::TraverseJson(*reader, query::Traverse(*reader, start, o), o));
}

// ---- search ----
struct SearchArgs {
  SnapshotArgs snap;
  std::vector<std::string> types, runs;
  std::string scope;
  CLI::Option* scope_opt = nullptr;
  float min_confidence = 0, max_confidence = 1;
  int64_t after = 0, before = 0;
  CLI::Option* after_opt = nullptr;
  CLI::Option* before_opt = nullptr;
  std::string sort = "recent";
  size_t limit = 20;
};

Status RunSearch(Context& ctx, const SearchArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  query::SearchOptions o;
  AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(a.types));
  AMEM_ASSIGN_OR_RETURN(sort, query::ParseSearchSort(a.sort));
  o.types = types;
  o.sort = sort;
  o.runs = a.runs;
  if (a.scope_opt->count() > 0) o.scope = a.scope;
  o.min_confidence = a.min_confidence;
  o.max_confidence = a.max_confidence;
  if (a.after_opt->count() > 0) o.after = a.after;
  if (a.before_opt->count() > 0) o.before = a.before;
  o.limit = a.limit;
  return EmitQuery(ctx, *reader, query::SearchJson(*reader, query::Search(*reader, o), o));
}

// ---- temporal ----
struct TemporalArgs {
  SnapshotArgs snap;
  std::string a, b;
  size_t limit = 50;
};

Status RunTemporal(Context& ctx, const TemporalArgs& args) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, args.snap));
  query::TemporalOptions o;
  AMEM_ASSIGN_OR_RETURN(a, query::ParsePeriod(args.a));
  AMEM_ASSIGN_OR_RETURN(b, query::ParsePeriod(args.b));
  o.a = a;
  o.b = b;
  o.limit = args.limit;
  return EmitQuery(ctx, *reader, query::TemporalJson(*reader, query::Temporal(*reader, o)));
}

// ---- impact ----
struct ImpactArgs {
  SnapshotArgs snap;
  std::string node;
  uint32_t depth = 10;
  size_t limit = 100;
};

Status RunImpact(Context& ctx, const ImpactArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  AMEM_ASSIGN_OR_RETURN(root, Node(*reader, a.node));
  query::ImpactOptions o;
  o.depth = a.depth;
  o.limit = a.limit;
  return EmitQuery(ctx, *reader, query::ImpactJson(*reader, query::Impact(*reader, root, o)));
}

// ---- context ----
struct ContextArgs {
  SnapshotArgs snap;
  std::vector<std::string> seeds;
  uint32_t depth = 2;
  size_t budget = 2000;
  std::string format = "text";
  size_t max_content = 400;
  size_t limit = 200;
};

Status RunContext(Context& ctx, const ContextArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  if (a.format != "text" && a.format != "json") {
    return ctx.UsageError("--format must be text or json");
  }
  std::vector<uint32_t> seeds;
  for (const std::string& s : a.seeds) {
    AMEM_ASSIGN_OR_RETURN(i, Node(*reader, s));
    seeds.push_back(i);
  }
  query::ContextOptions o;
  o.depth = a.depth;
  o.budget_tokens = a.budget;
  o.format = ctx.json() || a.format == "json" ? query::Format::kJson : query::Format::kText;
  o.max_content_bytes = a.max_content;
  o.limit = a.limit;
  AMEM_ASSIGN_OR_RETURN(r, query::BuildContextChecked(*reader, seeds, o));
  const Json doc = query::ContextJson(*reader, r, o);
  ctx.RecordQuery(doc);
  if (ctx.json()) {
    ctx.SetJsonOutput(doc);
  } else if (o.format == query::Format::kJson) {
    ctx.Out() += query::RenderJson(doc);
  } else {
    ctx.Out() += query::ContextText(*reader, r, o);
  }
  // Output is dropped on failure: empty text from undecodable content never shows.
  return reader->ContentStatus();
}

// ---- resolve ----
struct ResolveArgs {
  SnapshotArgs snap;
  std::string node;
  size_t limit = 1000;
};

Status RunResolve(Context& ctx, const ResolveArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  AMEM_ASSIGN_OR_RETURN(node, Node(*reader, a.node));
  query::ResolveOptions o;
  o.limit = a.limit;
  return EmitQuery(ctx, *reader, query::ResolveJson(*reader, query::Resolve(*reader, node, o)));
}

// ---- path ----
struct PathArgs {
  SnapshotArgs snap;
  std::string from, to, direction = "both", cost = "weight";
  std::vector<std::string> rels;
  uint32_t max_depth = 20;
  bool weighted = false;
  size_t limit = 1000;
};

Status RunPath(Context& ctx, const PathArgs& a) {
  AMEM_ASSIGN_OR_RETURN(reader, OpenSnapshot(ctx, a.snap));
  AMEM_ASSIGN_OR_RETURN(from, Node(*reader, a.from));
  AMEM_ASSIGN_OR_RETURN(to, Node(*reader, a.to));
  query::PathOptions o;
  AMEM_ASSIGN_OR_RETURN(dir, query::ParseDirection(a.direction));
  AMEM_ASSIGN_OR_RETURN(rels, query::ParseRelations(*reader, a.rels));
  if (a.cost != "weight" && a.cost != "neglog") {
    return ctx.UsageError("--cost must be weight or neglog");
  }
  o.direction = dir;
  o.relations = rels;
  o.max_depth = a.max_depth;
  o.weighted = a.weighted || a.cost == "neglog";
  o.cost = a.cost == "neglog" ? query::PathOptions::Cost::kNegLog
                              : query::PathOptions::Cost::kWeight;
  return EmitQuery(ctx, *reader, query::PathAnswer(*reader, query::FindPath(*reader, from, to, o), o, a.limit));
}


}  // namespace

void AddGraphQueryCommands(CLI::App& app, Context& ctx) {
  const char* kRelHelp =
      "Only these relations (names or ids; repeat or comma-separate; default all)";
  {
    auto a = std::make_shared<TraverseArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "traverse",
        "What is reachable from NODE: level-order BFS, neighbours in (relation, index) "
        "order; each row has its depth and the tree edge that reached it.",
        "amem traverse file:src/store.cc --rel defines,calls --depth 2");
    AddNodeArg(cmd, "NODE", &a->node, "Start node");
    cmd->add_option("--rel", a->rels, kRelHelp)->type_name("REL");
    cmd->add_option("--direction", a->direction,
                    "out: follow edges src->dst; in: dst->src; both (default out)")
        ->type_name("out|in|both");
    cmd->add_option("--depth", a->depth, "Maximum hops (default 5)");
    cmd->add_option("--min-confidence", a->min_confidence,
                    "Skip nodes below this confidence (default 0)");
    cmd->add_option("--limit", a->limit, "Maximum rows, the start included (default 50)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunTraverse(ctx, *a); });
  }
  {
    auto a = std::make_shared<SearchArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "search",
        "Which memories match these attributes: filter by type, run, scope, confidence "
        "and creation time, newest (or most confident) first.",
        "amem search --type decision --run run-7 --after 1700000000 --sort confidence");
    cmd->add_option("--type", a->types, "Node types (repeat or comma-separate)")
        ->type_name("TYPE");
    cmd->add_option("--run", a->runs, "Runs/sessions (repeat or comma-separate)")
        ->type_name("RUN");
    a->scope_opt = cmd->add_option("--scope", a->scope, "Exact scope");
    cmd->add_option("--min-confidence", a->min_confidence, "Inclusive (default 0)");
    cmd->add_option("--max-confidence", a->max_confidence, "Inclusive (default 1)");
    a->after_opt = cmd->add_option("--after", a->after, "created_ts >= TS")->type_name("TS");
    a->before_opt = cmd->add_option("--before", a->before, "created_ts < TS")->type_name("TS");
    cmd->add_option("--sort", a->sort, "recent (created_ts) or confidence (default recent)")
        ->type_name("recent|confidence");
    cmd->add_option("--limit", a->limit, "Maximum rows (default 20)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunSearch(ctx, *a); });
  }
  {
    auto a = std::make_shared<TemporalArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "temporal",
        "What changed between period A and period B: added (in B, not in A), corrected "
        "(a B node supersedes an A node), updated (A nodes updated during B), unchanged. "
        "A period is FROM..TO in Unix seconds on created_ts ([FROM, TO), either end may "
        "be empty) or run:NAME[,NAME...].",
        "amem temporal 1700000000..1700086400 1700086400..\n"
        "amem temporal run:monday run:tuesday");
    cmd->add_option("A", a->a, "The earlier period")->required();
    cmd->add_option("B", a->b, "The later period")->required();
    cmd->add_option("--limit", a->limit, "Maximum rows per list (default 50)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunTemporal(ctx, *a); });
  }
  {
    auto a = std::make_shared<ImpactArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "impact",
        "What depends on NODE: BFS over its dependents (D with `D caused_by NODE`, C "
        "with `NODE supports C`, then theirs); counts affected decisions and inferences.",
        "amem impact fact:lmdb-is-fast --depth 3");
    AddNodeArg(cmd, "NODE", &a->node, "The node that might be wrong");
    cmd->add_option("--depth", a->depth, "Maximum hops (default 10)");
    cmd->add_option("--limit", a->limit, "Maximum rows; counts cover all (default 100)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunImpact(ctx, *a); });
  }
  {
    auto a = std::make_shared<ContextArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "context",
        "The neighbourhood an agent should see, ready for a prompt: BFS both ways over "
        "all relations from the seeds, every edge among the nodes found, nearest first, "
        "cut to a token budget (estimated as bytes/4). Text lines are "
        "`- key (type, confidence): \"content\"` and `- A --rel--> B`; stored strings "
        "are escaped so they cannot break that structure.",
        "amem context file:src/store.cc decision:use-lmdb --depth 2 --budget-tokens 1500");
    cmd->add_option("SEED", a->seeds, "Seed nodes (one or more)")->required();
    cmd->add_option("--depth", a->depth, "Maximum hops from any seed (default 2)");
    cmd->add_option("--budget-tokens", a->budget,
                    "Token budget of the whole output (bytes/4, rounded up), never exceeded; "
                    "0 for none (default 2000). A budget too small for the header and section "
                    "lines is an error naming the minimum");
    cmd->add_option("--format", a->format, "text or json (default text; --json implies json)")
        ->type_name("text|json");
    cmd->add_option("--max-content", a->max_content,
                    "Bytes of content per node, cut on a character (default 400)");
    cmd->add_option("--limit", a->limit, "Nodes collected before the budget cut (default 200)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunContext(ctx, *a); });
  }
  {
    auto a = std::make_shared<ResolveArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "resolve",
        "The current version of NODE: follow `X supersedes NODE` edges to a node nobody "
        "supersedes (competing versions: newest created_ts, then highest index); "
        "cycle-safe; prints the chain.",
        "amem resolve decision:cache-policy");
    AddNodeArg(cmd, "NODE", &a->node, "Any version");
    cmd->add_option("--limit", a->limit, "Longest chain followed (default 1000)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunResolve(ctx, *a); });
  }
  {
    auto a = std::make_shared<PathArgs>();
    CLI::App* cmd = ctx.AddCommand(
        app, "path",
        "How FROM and TO are connected: the shortest path (bidirectional BFS), or with "
        "--weighted the cheapest (bidirectional Dijkstra, cost = edge weight; "
        "--cost neglog: cost = -ln(weight), the most reliable chain). found=false when "
        "there is none within --max-depth hops.",
        "amem path symbol:Store::Open decision:use-lmdb --rel calls,decided_for\n"
        "amem path fact:a decision:b --cost neglog");
    AddNodeArg(cmd, "FROM", &a->from, "Source");
    AddNodeArg(cmd, "TO", &a->to, "Target");
    cmd->add_option("--direction", a->direction,
                    "out: edges src->dst only; in: dst->src only; both (default both)")
        ->type_name("out|in|both");
    cmd->add_option("--rel", a->rels, kRelHelp)->type_name("REL");
    cmd->add_option("--max-depth", a->max_depth, "Maximum hops, unweighted (default 20)");
    cmd->add_flag("--weighted", a->weighted, "Cheapest path by edge cost instead of hops");
    cmd->add_option("--cost", a->cost, "weight or neglog (implies --weighted; default weight)")
        ->type_name("weight|neglog");
    cmd->add_option("--limit", a->limit,
                    "Show at most this many nodes of the path (default 1000)");
    AddSnapshotFlags(cmd, &a->snap);
    ctx.SetAction(cmd, [&ctx, a] { return RunPath(ctx, *a); });
  }
}

}  // namespace amem::cli
