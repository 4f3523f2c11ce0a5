// The JSON document of the consolidate answer (query/render.h).
#include "query/consolidate.h"

#include <nlohmann/json.hpp>

#include "query/internal/cog_graph.h"
#include "snapshot/reader.h"

namespace amem::query {

namespace {
template <typename T, typename Fn>
Json Limited(const std::vector<T>& items, size_t limit, Fn&& fn) {
  Json a = Json::array();
  for (size_t k = 0; k < items.size() && k < limit; ++k) a.push_back(fn(items[k]));
  return a;
}
}  // namespace

Json ConsolidateJson(const snapshot::Reader& r, const ConsolidatePlan& plan,
                     const ConsolidateOptions& options, const ApplyReport* applied) {
  auto row = [&](uint32_t i) { return NodeRowJson(MakeNodeRow(r, i)); };
  Json doc;
  doc["query"] = "consolidate";
  doc["dry_run"] = applied == nullptr;
  doc["dedup_threshold"] = options.dedup_threshold;
  doc["duplicate_count"] = plan.duplicates.size();
  size_t clusters = 0;  // rows are sorted by keep: one run per cluster
  for (size_t k = 0; k < plan.duplicates.size(); ++k) {
    clusters += k == 0 || plan.duplicates[k].keep != plan.duplicates[k - 1].keep;
  }
  doc["duplicate_cluster_count"] = clusters;
  doc["contradiction_count"] = plan.contradictions.size();
  doc["promotion_count"] = plan.promotions.size();
  doc["orphan_count"] = plan.orphans.size();
  doc["duplicates"] = Limited(plan.duplicates, options.limit, [&](const DuplicatePair& p) {
    Json j;
    j["similarity"] = p.similarity;
    j["keep"] = row(p.keep);
    j["drop"] = row(p.drop);
    return j;
  });
  doc["contradictions"] =
      Limited(plan.contradictions, options.limit, [&](const ContradictionPair& p) {
        Json j;
        j["src"] = row(p.src);
        j["dst"] = row(p.dst);
        return j;
      });
  doc["promotions"] = Limited(plan.promotions, options.limit, [&](uint32_t i) {
    Json j = row(i);
    j["confidence"] = r.confidence(i);
    j["supporters"] = DistinctSupporters(r, i, UINT32_MAX);
    return j;
  });
  doc["orphans"] = Limited(plan.orphans, options.limit, row);
  if (applied) {
    Json a;
    a["revision"] = applied->revision;
    a["supersedes_written"] = applied->supersedes_written;
    a["contradicts_written"] = applied->contradicts_written;
    a["promoted"] = applied->promoted;
    a["skipped"] = applied->skipped;
    doc["applied"] = std::move(a);
  } else {
    doc["applied"] = nullptr;
  }
  return doc;
}

}  // namespace amem::query
