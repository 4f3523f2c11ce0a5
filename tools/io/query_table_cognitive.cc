// The cognitive queries of the query table: revise, gaps, analogy, consolidate,
// drift (docs/QUERIES.md #12-16). Only consolidate with execute writes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "query/analogy.h"
#include "query/consolidate.h"
#include "query/drift.h"
#include "query/gaps.h"
#include "query/query.h"
#include "query/revise.h"
#include "snapshot/reader.h"
#include "tools/io/internal/query_families.h"

namespace amem::io {

namespace {

QueryDef Revise() {
  const query::ReviseOptions d;
  return QueryDef{
      .command = "revise",
      .tool = "revise",
      .cli_help = "What if this belief is wrong: retract NODE (or what --hypothesis "
                  "contradicts) and follow the cascade over its dependents (D caused_by X, X "
                  "supports C). A dependent falls only when none of its support remains; "
                  "reports confidence losses, unsupported inferences and decisions, and the "
                  "total impact. Read-only.",
      .example = "amem revise fact:cache-enabled\n"
                 "amem revise --hypothesis \"the cache is not enabled\"",
      .title = "What if a belief is wrong",
      .description =
          "What if this belief is wrong: retracts a memory (node), or every memory a "
          "hypothesis contradicts (same words, opposite negation), and follows the cascade "
          "over what depends on it. A dependent falls only when none of its support remains. "
          "Returns confidence losses, inferences and decisions left unsupported and the total "
          "impact. Read-only: nothing is changed.",
      .brief = "What if a memory (node) or a claim (hypothesis) were wrong: the beliefs that would fall.",
      .params = {Brief(NodeParam("node", "NODE", "The memory to retract", false), "Memory to retract"),
                 {.name = "hypothesis",
                  .help = "A statement; the memories it contradicts are retracted (same "
                          "words, one negation more or less: no/not/never/isn't...; whole "
                          "words only), e.g. \"the cache is not enabled\"",
                  .brief = "A claim in words, e.g. \"the cache is not enabled\""},
                 LimitParam(d.limit, 1000, "Rows per list")},
      .exactly_one = {"node", "hypothesis"},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        std::string hypothesis = c.String("hypothesis");
        AMEM_ASSIGN_OR_RETURN(retract,
                              query::RetractedNodes(c.reader, c.String("node"), hypothesis));
        query::ReviseOptions o;
        o.limit = c.Int("limit", o.limit);
        AMEM_ASSIGN_OR_RETURN(res, query::Revise(c.reader, std::move(retract), o));
        return QueryAnswer{query::ReviseJson(res, hypothesis)};
      }};
}

QueryDef Gaps() {
  const query::GapsOptions d;
  return QueryDef{
      .command = "gaps",
      .tool = "gaps",
      .cli_help = "Where is my reasoning weak: unjustified decisions (no support), "
                  "single-source inferences, low-confidence foundations (confidence < "
                  "--threshold under a stronger dependent), unstable knowledge (supersedes "
                  "chains of 3+ versions), stale evidence (not updated for --stale-days, "
                  "supporting an active decision) and orphaned memories (linked to a file: "
                  "or symbol: key with no live node). Sorted by severity; downstream = "
                  "dependents within 3 hops.",
      .example = "amem gaps --limit 10\namem gaps --stale-days 7 --json\n"
                 "amem gaps --category orphaned",
      .title = "Where reasoning is weak",
      .description =
          "Where is the project's reasoning weak: unjustified decisions (nothing supports "
          "them), single-source inferences, low-confidence foundations under more confident "
          "conclusions, unstable knowledge (corrected twice or more), stale evidence behind "
          "active decisions and orphaned memories (about code that was deleted), most severe "
          "first. Use it to decide what to verify or document.",
      .brief = "Where reasoning is weak: unsupported decisions and inferences, stale or unstable knowledge, orphans.",
      .params = {{.name = "threshold", .type = ParamType::kNumber,
                  .help = "Confidence below which a foundation is weak", .brief = "Weak confidence",
                  .default_text = DefaultText(d.threshold), .min = 0, .max = 1},
                 {.name = "stale_days", .type = ParamType::kInteger,
                  .help = "Evidence not updated for this many days is stale", .brief = "Days until evidence is stale",
                  .default_text = DefaultText(d.stale_days), .min = 0,
                  .max = 36500},
                 {.name = "now", .type = ParamType::kInteger,
                  .help = "Unix seconds taken as now (default: the newest timestamp in the "
                          "memory, never the clock)",
                  .brief = "Unix time taken as now"},
                 {.name = "categories", .type = ParamType::kStrings,
                  .help = "Only these kinds of gap: unjustified_decision, "
                          "single_source_inference, low_confidence_foundation, "
                          "unstable_knowledge, stale_evidence, orphaned (memories linked to "
                          "code the code graph no longer has)",
                  .brief = "Only these kinds of gap",
                  .default_text = "all", .max_items = query::kGapKindCount,
                  .cli = "--category"},
                 LimitParam(d.limit, 1000)},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::GapsOptions o;
        AMEM_ASSIGN_OR_RETURN(kinds, query::ParseGapKinds(c.Strings("categories")));
        o.kinds = kinds;
        o.threshold = c.Number("threshold", o.threshold);
        o.stale_days = c.Int("stale_days", o.stale_days);
        if (c.Has("now")) o.now = c.IntValue("now");
        o.limit = c.Int("limit", o.limit);
        AMEM_ASSIGN_OR_RETURN(res, query::FindGaps(c.reader, o));
        return QueryAnswer{query::GapsJson(res)};
      }};
}

QueryDef Analogy() {
  const query::AnalogyOptions d;
  return QueryDef{
      .command = "analogy",
      .tool = "analogy",
      .cli_help = "Have I seen this pattern before: nodes whose structural fingerprint (in/out "
                  "degree, incident edges per relation) and content resemble NODE's (or the "
                  "best BM25 match of --text). score = 0.6 structural + 0.4 content (vector "
                  "cosine, else word overlap); the anchor and its neighbours are excluded.",
      .example = "amem analogy decision:use-lmdb\n"
                 "amem analogy --text \"retry on timeout\" --type decision",
      .title = "Have I seen this pattern before",
      .description =
          "Have I seen this pattern before: memories whose shape in the graph (how many edges "
          "of each relation they have) and content resemble a memory's (node) or the best "
          "keyword match of a text. The anchor and its direct neighbours are excluded. Use it "
          "to find a past decision or fix similar to the current one.",
      .brief = "Have I seen this before: memories whose links and content resemble a node's, or a text's best match.",
      .params = {Brief(NodeParam("node", "NODE", "The anchor memory", false), "Anchor memory"),
                 {.name = "text", .help = "Anchor on the memory that best matches these words", .brief = "Anchor on its best match"},
                 TypesParam("Only these types"),
                 LimitParam(d.limit, 200)},
      .exactly_one = {"node", "text"},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::AnalogyOptions o;
        o.limit = c.Int("limit", o.limit);
        AMEM_ASSIGN_OR_RETURN(types, query::ParseTypes(c.Strings("types")));
        o.types = types;
        AMEM_ASSIGN_OR_RETURN(
            res, query::AnalogyFor(c.reader, c.String("node"), c.String("text"), o));
        return QueryAnswer{query::AnalogyJson(res)};
      }};
}

Result<QueryAnswer> RunConsolidate(const QueryCall& c) {
  const snapshot::Reader& r = c.reader;
  const bool execute = c.Bool("execute");
  if (execute && (c.store == nullptr || !c.latest)) {
    // The front ends check latest_only first; this guards a caller that did not.
    return c.UsageError(c.Spell("execute") + " writes to the store's latest state");
  }
  query::ConsolidateOptions o;
  o.dedup_threshold = c.Number("dedup_threshold", o.dedup_threshold);
  o.limit = c.Int("limit", o.limit);
  AMEM_ASSIGN_OR_RETURN(plan, query::PlanConsolidation(r, o));
  if (!execute) return QueryAnswer{query::ConsolidateJson(r, plan, o, nullptr)};
  // The plan compared contents: never apply one built from undecodable content.
  AMEM_RETURN_IF_ERROR(r.ContentStatus());
  AMEM_ASSIGN_OR_RETURN(applied, query::ApplyConsolidation(*c.store, r, plan, c.write));
  return QueryAnswer{query::ConsolidateJson(r, plan, o, &applied), {}, true};
}

QueryDef Consolidate() {
  const query::ConsolidateOptions d;
  return QueryDef{
      .command = "consolidate",
      .tool = "consolidate",
      .cli_help = "What should be cleaned up: near-duplicates (same type, word overlap >= "
                  "--dedup-threshold), contradictions (same words, opposite negation, no "
                  "contradicts edge yet), promotable inferences (confidence > 0.9, 3+ "
                  "supporters) and orphans. Dry run unless --execute, which writes `winner "
                  "supersedes loser` (higher confidence wins), `newer contradicts older` and "
                  "inference -> fact promotions to the store in one transaction; a second run "
                  "then finds nothing to change.",
      .example = "amem consolidate\namem consolidate --execute --ts 1700000000",
      .title = "What should be cleaned up",
      .description =
          "What should be cleaned up: near-duplicate memories, contradictions not yet marked, "
          "inferences strong enough to become facts, and orphans (no edges). A dry run by "
          "default (changes nothing). With execute: true it writes, in one transaction, "
          "`winner supersedes loser` for duplicates (higher confidence wins), `newer "
          "contradicts older` for contradictions and the inference -> fact promotions; "
          "nothing is deleted, and running it again finds nothing more to do. Review a dry "
          "run first.",
      .brief = "What to clean up: duplicates, contradictions, inferences to promote; execute: true applies it.",
      .params = {{.name = "dedup_threshold", .type = ParamType::kNumber,
                  .help = "Word-overlap (Jaccard) above which two memories are duplicates",
                  .brief = "Jaccard word overlap of duplicates",
                  .default_text = DefaultText(d.dedup_threshold), .min = 0.01, .max = 1},
                 {.name = "execute", .type = ParamType::kBoolean,
                  .help = "Write the plan to the store (default: a dry run); only on the "
                          "latest state",
                  .brief = "Write the plan (latest state only)",
                  .latest_only = true},
                 Brief(LimitParam(d.limit, 1000, "Rows shown per finding (execute applies all)"), "Rows per finding")},
      .writes = true,
      .run = RunConsolidate};
}

QueryDef Drift() {
  const query::DriftOptions d;
  return QueryDef{
      .command = "drift",
      .tool = "drift",
      .cli_help = "How is my understanding changing: per run (or, with TOPIC, per belief about "
                  "it with all its versions) the stability (share never superseded), "
                  "direction (confidence trend along supersessions), revisions per day and the "
                  "trajectory of supersession events. Least stable first.",
      .example = "amem drift\namem drift \"cache size\" --json",
      .title = "How understanding is changing",
      .description =
          "How is the project's understanding changing: per run (or, with a topic, per belief "
          "about it with all its versions) the stability (share never superseded), the "
          "direction of confidence along corrections, revisions per day and the trajectory of "
          "corrections, least stable first.",
      .brief = "How understanding is changing, per run or on a topic: stability and corrections.",
      .params = {{.name = "topic", .help = "Topic words (default: one cluster per run)", .brief = "Topic words",
                  .cli = "TOPIC"},
                 {.name = "trajectory_limit", .type = ParamType::kInteger,
                  .help = "Correction events shown per cluster", .brief = "Corrections per cluster",
                  .default_text = DefaultText(d.trajectory_limit), .min = 0,
                  .max = 500, .cli = "--trajectory"},
                 LimitParam(d.limit, 100, "Clusters")},
      .run = [](const QueryCall& c) -> Result<QueryAnswer> {
        query::DriftOptions o;
        o.topic = c.String("topic");
        o.limit = c.Int("limit", o.limit);
        o.trajectory_limit = c.Int("trajectory_limit", o.trajectory_limit);
        AMEM_ASSIGN_OR_RETURN(res, query::Drift(c.reader, o));
        return QueryAnswer{query::DriftJson(res, o)};
      }};
}

}  // namespace

std::vector<QueryDef> CognitiveQueries() {
  return {Revise(), Gaps(), Analogy(), Consolidate(), Drift()};
}

}  // namespace amem::io
