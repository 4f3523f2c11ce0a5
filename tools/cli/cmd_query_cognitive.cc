// amem revise | gaps | analogy | consolidate | drift: the cognitive queries 12-16
// (docs/QUERIES.md, query/revise.h ... query/drift.h). Each runs on --snapshot FILE or on
// the store's current snapshot (snapshot/live.h), prints text or one JSON document
// (--json), and takes --limit. Only `consolidate --execute` writes (to the store).
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "query/analogy.h"
#include "query/consolidate.h"
#include "snapshot/live.h"
#include "query/drift.h"
#include "query/gaps.h"
#include "query/query.h"
#include "query/render.h"
#include "query/revise.h"
#include "snapshot/reader.h"
#include "tools/cli/cmd_query_cognitive.h"
#include "tools/cli/query_args.h"

namespace amem::cli {

namespace {

// ---- revise ----
struct ReviseArgs {
  SnapshotArgs snap;
  std::string node, hypothesis;
  size_t limit = 50;
};

Status RunRevise(Context& ctx, ReviseArgs& a) {
  if (a.node.empty() == a.hypothesis.empty()) {
    return ctx.UsageError("give either NODE or --hypothesis TEXT");
  }
  auto reader = OpenSnapshot(ctx, a.snap);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  auto retract = query::RetractedNodes(r, a.node, a.hypothesis);
  if (!retract.ok()) return retract.status();
  query::ReviseOptions o;
  o.limit = a.limit;
  auto res = query::Revise(r, std::move(*retract), o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::ReviseJson(*res, a.hypothesis));
}

// ---- gaps ----
struct GapsArgs {
  SnapshotArgs snap;
  query::GapsOptions options;
  int64_t now = 0;
  CLI::Option* now_opt = nullptr;
};

Status RunGaps(Context& ctx, GapsArgs& a) {
  auto reader = OpenSnapshot(ctx, a.snap);
  if (!reader.ok()) return reader.status();
  if (a.now_opt->count() > 0) a.options.now = a.now;
  auto res = query::FindGaps(**reader, a.options);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, **reader, query::GapsJson(*res));
}

// ---- analogy ----
struct AnalogyArgs {
  SnapshotArgs snap;
  std::string node, text;
  std::vector<std::string> types;
  size_t limit = 5;
};

Status RunAnalogy(Context& ctx, AnalogyArgs& a) {
  if (a.node.empty() == a.text.empty()) return ctx.UsageError("give either NODE or --text TEXT");
  auto reader = OpenSnapshot(ctx, a.snap);
  if (!reader.ok()) return reader.status();
  const snapshot::Reader& r = **reader;
  query::AnalogyOptions o;
  o.limit = a.limit;
  auto types = query::ParseTypes(a.types);
  if (!types.ok()) return types.status();
  o.types = *types;
  auto res = query::AnalogyFor(r, a.node, a.text, o);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, r, query::AnalogyJson(*res));
}

// ---- consolidate ----
struct ConsolidateArgs {
  SnapshotArgs snap;
  query::ConsolidateOptions options;
  bool execute = false;
  WriteFlags write;
};

Status RunConsolidate(Context& ctx, ConsolidateArgs& a) {
  if (a.execute && (!a.snap.snapshot.empty() || a.snap.view.as_of_opt->count() > 0 ||
                    a.snap.view.at_opt->count() > 0)) {
    return ctx.UsageError(
        "--execute plans on the store's latest state: not with --snapshot, --as-of or --at");
  }
  auto reader = OpenSnapshot(ctx, a.snap);
  if (!reader.ok()) return reader.status();
  auto plan = query::PlanConsolidation(**reader, a.options);
  if (!plan.ok()) return plan.status();
  std::optional<query::ApplyReport> applied;
  if (a.execute) {
    // The plan compared contents: never apply one built from undecodable content.
    AMEM_RETURN_IF_ERROR((*reader)->ContentStatus());
    Result<Store*> store = ctx.OpenStore();
    if (!store.ok()) return store.status();
    auto report = query::ApplyConsolidation(**store, **reader, *plan, a.write.options());
    if (!report.ok()) return report.status();
    applied = std::move(*report);
  }
  AMEM_RETURN_IF_ERROR(EmitQuery(ctx, **reader, query::ConsolidateJson(
                                                    **reader, *plan, a.options,
                                                    applied ? &*applied : nullptr)));
  if (applied) ctx.ForgetQuery();  // it wrote: the query log keeps questions only
  return Status::OK();
}

// ---- drift ----
struct DriftArgs {
  SnapshotArgs snap;
  query::DriftOptions options;
};

Status RunDrift(Context& ctx, DriftArgs& a) {
  auto reader = OpenSnapshot(ctx, a.snap);
  if (!reader.ok()) return reader.status();
  auto res = query::Drift(**reader, a.options);
  if (!res.ok()) return res.status();
  return EmitQuery(ctx, **reader, query::DriftJson(*res, a.options));
}

constexpr const char* kNodeHelp = "Node: key, 16-hex-digit id, or dense index (#N)";

// Registers one query command with the flags every one of them takes; returns the
// command and its arguments (which live as long as the action).
template <typename Args>
std::pair<CLI::App*, std::shared_ptr<Args>> NewQueryCommand(
    CLI::App& app, Context& ctx, const char* name, const char* description,
    const char* example, Status (*run)(Context&, Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = ctx.AddCommand(app, name, description, example);
  AddSnapshotFlags(cmd, &args->snap);
  ctx.SetAction(cmd, [&ctx, args, run] { return run(ctx, *args); });
  return {cmd, args};
}

}  // namespace

void AddCognitiveQueryCommands(CLI::App& app, Context& ctx) {
  {
    auto [cmd, a] = NewQueryCommand<ReviseArgs>(
        app, ctx, "revise",
        "What if this belief is wrong: retract NODE (or what --hypothesis contradicts) and "
        "follow the cascade over its dependents (D caused_by X, X supports C). A dependent "
        "falls only when none of its support remains; reports confidence losses, "
        "unsupported inferences and decisions, and the total impact. Read-only.",
        "amem revise fact:cache-enabled\namem revise --hypothesis \"the cache is not enabled\"",
        RunRevise);
    cmd->add_option("NODE", a->node, kNodeHelp);
    cmd->add_option("--hypothesis", a->hypothesis,
                    "Retract the nodes this text contradicts (same words, one negation "
                    "more or less: no/not/never/isn't...; whole words only)");
    cmd->add_option("--limit", a->limit, "Rows per list (default 50)");
  }
  {
    auto [cmd, a] = NewQueryCommand<GapsArgs>(
        app, ctx, "gaps",
        "Where is my reasoning weak: unjustified decisions (no support), single-source "
        "inferences, low-confidence foundations (confidence < --threshold under a stronger "
        "dependent), unstable knowledge (supersedes chains of 3+ versions) and stale "
        "evidence (not updated for --stale-days, supporting an active decision). Sorted by "
        "severity; downstream = dependents within 3 hops.",
        "amem gaps --limit 10\namem gaps --stale-days 7 --json",
        RunGaps);
    cmd->add_option("--threshold", a->options.threshold,
                    "Low-confidence threshold, 0..1 (default 0.5)");
    cmd->add_option("--stale-days", a->options.stale_days, "Staleness in days (default 30)");
    a->now_opt = cmd->add_option("--now", a->now,
                                 "Unix seconds for 'now' (default: the snapshot's newest "
                                 "timestamp, never the clock)");
    cmd->add_option("--limit", a->options.limit, "Rows (default 20)");
  }
  {
    auto [cmd, a] = NewQueryCommand<AnalogyArgs>(
        app, ctx, "analogy",
        "Have I seen this pattern before: nodes whose structural fingerprint (in/out "
        "degree, incident edges per relation) and content resemble NODE's (or the best "
        "BM25 match of --text). score = 0.6 structural + 0.4 content (vector cosine, else "
        "word overlap); the anchor and its neighbours are excluded.",
        "amem analogy decision:use-lmdb\namem analogy --text \"retry on timeout\" --type decision",
        RunAnalogy);
    cmd->add_option("NODE", a->node, kNodeHelp);
    cmd->add_option("--text", a->text, "Anchor on the node that best matches this text");
    cmd->add_option("--type", a->types, "Only candidates of these types (comma-separated)");
    cmd->add_option("--limit", a->limit, "Rows (default 5)");
  }
  {
    auto [cmd, a] = NewQueryCommand<ConsolidateArgs>(
        app, ctx, "consolidate",
        "What should be cleaned up: near-duplicates (same type, word overlap >= "
        "--dedup-threshold), contradictions (same words, opposite negation, no contradicts "
        "edge yet), promotable inferences (confidence > 0.9, 3+ supporters) and orphans. "
        "Dry run unless --execute, which writes `winner supersedes loser` (higher "
        "confidence wins), `newer contradicts older` and inference -> fact promotions to "
        "the store in one transaction; a second run then finds nothing to change.",
        "amem consolidate\namem consolidate --execute --ts 1700000000",
        RunConsolidate);
    cmd->add_option("--dedup-threshold", a->options.dedup_threshold,
                    "Duplicate word-overlap (Jaccard) threshold, (0, 1] (default 0.9)");
    cmd->add_flag("--execute", a->execute, "Apply the changes to the store");
    cmd->add_option("--limit", a->options.limit,
                    "Rows shown per finding (default 50; --execute applies all)");
    AddWriteFlags(cmd, &a->write, false);
  }
  {
    auto [cmd, a] = NewQueryCommand<DriftArgs>(
        app, ctx, "drift",
        "How is my understanding changing: per run (or, with TOPIC, per belief about it "
        "with all its versions) the stability (share never superseded), direction "
        "(confidence trend along supersessions), revisions per day and the trajectory of "
        "supersession events. Least stable first.",
        "amem drift\namem drift \"cache size\" --json",
        RunDrift);
    cmd->add_option("TOPIC", a->options.topic, "Topic words (default: cluster by run)");
    cmd->add_option("--limit", a->options.limit, "Clusters (default 10)");
    cmd->add_option("--trajectory", a->options.trajectory_limit,
                    "Events shown per cluster (default 20)");
  }
}

}  // namespace amem::cli
