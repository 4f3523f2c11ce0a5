// cognitive_bench: the cognitive queries 12-16 (revise, gaps, analogy, consolidate,
// drift) on the generated workload (bench/workload.h), with the paper's Apple M4 Pro
// figures beside them (paper Tables 2 and 4; budgets: docs/DESIGN.md §8).
//
//   cognitive_bench [--benchmarks=LIST] [--num=10000,100000,1000000] [--runs=11]
//                   [--vectors=1]
//
// For each size the workload is compiled straight into a snapshot file (the store is
// not involved), which is then mapped with snapshot::Reader::Open and warmed up by
// one untimed call of each query. Benchmarks (default: all, in this order):
//   revise        Revise() of one node; the op rotates over 16 fixed facts that
//                 have dependents (median per op)
//   revise_hyp    ContradictedBy() + Revise() for the negation of a planted
//                 "... is enabled" fact
//   gaps          FindGaps() with the defaults
//   analogy       Analogy() of one node; rotates over 16 fixed decisions
//   consolidate   PlanConsolidation() (the dry run)
//   drift         Drift() by run
//   drift_topic   Drift() for a topic word
// Each line prints `name : X micros/op; ...` with the median of --runs runs, the
// paper's figure and a checksum of the answers (so no work is optimised away).
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/workload.h"
#include "common/hash.h"
#include "query/analogy.h"
#include "query/internal/cog_graph.h"
#include "query/consolidate.h"
#include "query/drift.h"
#include "query/gaps.h"
#include "query/revise.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"

using namespace amem;
using namespace amem::bench;

namespace {

constexpr const char* kProgram = "cognitive_bench";

// The paper's latencies (Table 4), in milliseconds, by size.
struct PaperFigure {
  const char* name;
  double at_10k, at_100k;
};
constexpr PaperFigure kPaper[] = {
    {"revise", 6.26, 53.4},     {"revise_hyp", 6.26, 53.4}, {"gaps", 1530, 297000},
    {"analogy", 2400, 229000},  {"consolidate", 352, 43600}, {"drift", 5.84, 68.4},
    {"drift_topic", 5.84, 68.4},
};
// Budgets at 100K (docs/DESIGN.md §8), milliseconds.
const std::map<std::string, double> kBudget100k = {
    {"revise", 5},     {"revise_hyp", 5},   {"gaps", 50}, {"analogy", 50},
    {"consolidate", 1000}, {"drift", 10}, {"drift_topic", 10}};

std::string PaperText(const std::string& name, uint64_t num) {
  for (const PaperFigure& p : kPaper) {
    if (name != p.name) continue;
    char buf[96];
    if (num == 10000) {
      std::snprintf(buf, sizeof(buf), "paper %.4g ms", p.at_10k);
    } else if (num == 100000) {
      std::snprintf(buf, sizeof(buf), "paper %.4g ms; budget %.4g ms", p.at_100k,
                    kBudget100k.at(name));
    } else {
      return "paper -";
    }
    return buf;
  }
  return "";
}

// Runs `op(k)` once untimed, then `runs` times; returns the median wall and CPU
// seconds (the CPU figure is the steadier one on a shared machine).
template <typename Op>
Sample MedianSeconds(int runs, Op&& op) {
  op(0);
  std::vector<double> wall, cpu;
  for (int k = 0; k < runs; ++k) {
    Stopwatch sw;
    op(k + 1);
    Sample s = sw.Elapsed();
    wall.push_back(s.wall);
    cpu.push_back(s.cpu);
  }
  return {Median(wall), Median(cpu)};
}

void Line(const std::string& name, uint64_t num, Sample t, uint64_t checksum) {
  char extra[200];
  std::snprintf(extra, sizeof(extra), "wall %.3f ms, cpu %.3f ms; %s; checksum %016llx",
                t.wall * 1e3, t.cpu * 1e3, PaperText(name, num).c_str(),
                static_cast<unsigned long long>(checksum));
  Report(name + "/" + std::to_string(num / 1000) + "K", t.wall, 1, 0, extra);
}

// How many planted near-duplicates and contradictions the plan holds. A duplicate
// pair is found when both nodes land in one cluster: the plan's rows are winner ->
// member edges, so two members of a cluster share a winner without a row of their own.
void PrintRecall(const snapshot::Reader& r, const Workload& w, const query::ConsolidatePlan& p) {
  std::map<uint32_t, uint32_t> winner;  // node -> its cluster's winner
  std::set<std::pair<uint32_t, uint32_t>> contras;
  for (const auto& d : p.duplicates) winner[d.keep] = winner[d.drop] = d.keep;
  for (const auto& c : p.contradictions) contras.insert(std::minmax(c.src, c.dst));
  auto index = [&](uint32_t workload_index) { return *r.FindKey(w.nodes[workload_index].key); };
  auto same_cluster = [&](uint32_t a, uint32_t b) {
    auto ia = winner.find(a), ib = winner.find(b);
    return ia != winner.end() && ib != winner.end() && ia->second == ib->second;
  };
  size_t dup_found = 0, contra_found = 0;
  for (auto [a, b] : w.near_duplicates) dup_found += same_cluster(index(a), index(b));
  for (auto [a, b] : w.contradictions) {
    contra_found += contras.count(std::minmax(index(a), index(b)));
  }
  std::printf("# consolidate: planted near-duplicates found %zu/%zu (%zu supersedes planned), "
              "contradictions found %zu/%zu (%zu reported), %zu promotions, %zu orphans\n",
              dup_found, w.near_duplicates.size(), p.duplicates.size(), contra_found,
              w.contradictions.size(), p.contradictions.size(), p.promotions.size(),
              p.orphans.size());
}

void RunSize(uint64_t num, int runs, bool vectors, const std::vector<std::string>& which) {
  WorkloadOptions wo;
  wo.num_nodes = num;
  wo.vectors = vectors;
  Stopwatch build;
  Workload w = GenerateWorkload(wo);
  Result<std::string> bytes = snapshot::BuildSnapshot(StateOfWorkload(w, wo.dimension));
  if (!bytes.ok()) Die(kProgram, bytes.status().ToString());
  ScratchDir dir("cognitive_bench");
  std::string path = dir.Sub("w.amem");
  if (Status s = snapshot::WriteFileAtomic(path, *bytes); !s.ok()) Die(kProgram, s.ToString());
  bytes = Status::NotFound("released");
  snapshot::ReadOptions ro;
  ro.populate = true;
  // A reader that answers many queries checks its records once at open, as amem
  // mcp does; a one-shot CLI process checks what it reads (docs/FORMAT.md §9).
  ro.check_records = true;
  auto reader = snapshot::Reader::Open(path, ro);
  if (!reader.ok()) Die(kProgram, reader.status().ToString());
  const snapshot::Reader& r = **reader;
  if (Status s = r.DecodeAllContent(); !s.ok()) Die(kProgram, s.ToString());
  std::printf("# %llu nodes, %u edges, %.1f MB snapshot, prepared in %.1f s\n",
              static_cast<unsigned long long>(num), r.edge_count(), r.file_size() / 1e6,
              build.Elapsed().wall);

  // Fixed operands: facts with dependents, decisions, a planted contradiction.
  std::vector<uint32_t> facts, decisions;
  for (uint32_t i = 0; i < r.node_count() && (facts.size() < 16 || decisions.size() < 16);
       i += 97) {
    if (r.type(i) == NodeType::kFact && facts.size() < 16) {
      bool has_dependent = false;
      query::ForEachDependent(r, i, [&](uint32_t, uint32_t) { has_dependent = true; });
      if (has_dependent) facts.push_back(i);
    }
    if (r.type(i) == NodeType::kDecision && decisions.size() < 16) decisions.push_back(i);
  }
  if (facts.empty()) facts.push_back(0);
  if (decisions.empty()) decisions.push_back(0);
  std::string hypothesis = "the cache is enabled";
  if (!w.contradictions.empty()) hypothesis = w.nodes[w.contradictions[0].second].content;

  for (const std::string& name : which) {
    uint64_t check = 0;
    Sample sec;
    if (name == "revise") {
      sec = MedianSeconds(runs, [&](int k) {
        auto res = query::Revise(r, {facts[k % facts.size()]});
        check += res.ok() ? res->affected_count : 0;
      });
    } else if (name == "revise_hyp") {
      sec = MedianSeconds(runs, [&](int) {
        auto hit = query::ContradictedBy(r, hypothesis);
        if (!hit.ok()) return;
        auto res = query::Revise(r, *hit);
        check += hit->size() * 1000 + (res.ok() ? res->affected_count : 0);
      });
    } else if (name == "gaps") {
      sec = MedianSeconds(runs, [&](int) {
        auto res = query::FindGaps(r);
        check += res.ok() ? res->total : 0;
      });
    } else if (name == "analogy") {
      sec = MedianSeconds(runs, [&](int k) {
        auto res = query::Analogy(r, decisions[k % decisions.size()]);
        check += res.ok() && !res->rows.empty() ? res->rows[0].node.index : 0;
      });
    } else if (name == "consolidate") {
      auto plan = query::PlanConsolidation(r);
      if (plan.ok()) PrintRecall(r, w, *plan);
      sec = MedianSeconds(runs, [&](int) {
        auto plan = query::PlanConsolidation(r);
        if (plan.ok()) {
          check += plan->duplicates.size() * 1000000 + plan->contradictions.size() * 1000 +
                   plan->promotions.size() + plan->orphans.size();
        }
      });
    } else if (name == "drift" || name == "drift_topic") {
      query::DriftOptions o;
      if (name == "drift_topic") o.topic = Vocabulary()[600];
      sec = MedianSeconds(runs, [&](int) {
        auto res = query::Drift(r, o);
        check += res.ok() ? res->cluster_count : 0;
      });
    } else {
      Die(kProgram, "unknown benchmark " + name, 2);
    }
    Line(name, num, sec, check);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags(argc, argv);
  std::vector<std::string> which = flags.List(
      "benchmarks", "revise,revise_hyp,gaps,analogy,consolidate,drift,drift_topic");
  std::vector<std::string> nums = flags.List("num", "10000,100000,1000000");
  int runs = static_cast<int>(flags.Uint("runs", 11));
  bool vectors = flags.Bool("vectors", true);
  if (!flags.Unknown().empty()) Die(kProgram, "unknown flag " + flags.Unknown()[0], 2);
  for (const std::string& n : nums) RunSize(std::stoull(n), std::max(runs, 1), vectors, which);
  return 0;
}
