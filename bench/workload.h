// The deterministic benchmark workload (the paper's synthetic agent memory, §5).
//
// GenerateWorkload(options) returns the same nodes and edges, byte for byte, on every
// machine and with every standard library: it uses its own PRNG (Random, splitmix64
// seeding xoshiro256**), integer-only sampling, and vectors whose elements are exact
// multiples of 2^-12 (no libm, no rounding that FMA contraction could change).
//
// Shape, for N = options.num_nodes (any N; the benchmarks use 10K, 100K, 1M):
//   nodes    N, in creation order. Sessions (runs "run-00000", ...) of
//            session_size (100) consecutive nodes; tasks of 20 nodes
//            ("task-00000-0".."-4"); 4 scopes ("project:p0".."p3") by session.
//            ts strictly increasing: session s starts at start_ts + s * 21600,
//            nodes 30 s apart within it. Every node carries ts, run, task, scope.
//   keys     unique, <i> = the node index in 7 digits: file:src/<module>/<word>-<i>.cc,
//            symbol:<module>::<word>_<i>, module:<module>-<i>, fact:n<i>,
//            decision:n<i>, ... (32 module names, made-up words).
//   types    per 100 ordinary nodes: 32 fact, 8 decision, 12 inference, 4 skill,
//            8 episode, 6 constraint, 12 file, 12 symbol, 3 module, 3 entity
//            (entity meta {"kind":"tool"}; file meta {"lang":"cpp"}); plus the
//            planted corrections (type correction) below.
//   content  ~200 bytes (a target uniform in 150..250, plus part of a word) of sentences
//            whose words are Zipf-distributed (exponent 1) over a fixed vocabulary
//            of kVocabularySize words: common English words first (the most
//            frequent), then made-up three-syllable words, a few with non-ASCII
//            letters (valid UTF-8).
//   confidence  a multiple of 0.01 in [0.30, 1.00] (facts and decisions >= 0.50).
//   vector   (options.vectors) dimension floats: a topic centroid (64 topics; one
//            per node, correlated with its session) plus noise; planted copies stay
//            close to their source.
//   edges    exactly 3 per node when N >= 2 (3N in all), each (src, rel, dst)
//            unique. A node that is not first in its session is the dst of a
//            temporal_next edge from its predecessor; its other edges leave it,
//            half towards a uniformly drawn node, half by preferential attachment
//            (a node drawn with probability proportional to its degree so far),
//            towards earlier nodes (the first 8 nodes get theirs last, towards
//            the first 8 or by degree).
//            Relations depend on the source type (facts: supports/related_to,
//            inferences: caused_by/derived_from/supports, decisions: caused_by/
//            decided_for, files: defines/imports/part_of, symbols: calls/references/
//            part_of, ...). Weights are multiples of 1/64 in [0.125, 1].
// Planted, each drawn at a fixed rate; a draw whose target is not eligible (no
// candidate yet, or the fact picked is already superseded) gives an ordinary node,
// so the realised rates are slightly lower:
//   corrections     3%: a correction whose first edge `supersedes` an earlier fact
//                   or, 40% of the time, the newest member of an existing chain,
//                   giving supersedes chains of length 3 and more. Its content is
//                   the old text with a few words replaced; `chains` lists them.
//   near-duplicates 2%: a fact whose content is an earlier fact's content with one
//                   word added before its final period; `near_duplicates` lists
//                   (earlier, copy).
//   contradictions  1%: 5% of ordinary facts read "The <w> <w> is enabled ...";
//                   a contradiction is a fact that repeats one of them with
//                   "is not enabled" and no contradicts edge; `contradictions`
//                   lists (statement, negation).
#ifndef AMEM_BENCH_WORKLOAD_H_
#define AMEM_BENCH_WORKLOAD_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "common/model.h"
#include "store/store.h"

namespace amem::bench {

// xoshiro256** seeded by splitmix64: identical output on every platform.
class Random {
 public:
  explicit Random(uint64_t seed);
  uint64_t Next();
  // Uniform in [0, n). REQUIRES: n > 0.
  uint64_t Uniform(uint64_t n);
  // True with probability num/den.
  bool OneIn(uint64_t num, uint64_t den) { return Uniform(den) < num; }

 private:
  uint64_t s_[4];
};

struct WorkloadOptions {
  uint64_t num_nodes = 10000;
  uint64_t seed = 0x616d656d;  // "amem"
  bool vectors = true;
  uint32_t dimension = kDefaultDimension;
  uint32_t session_size = 100;
  int64_t start_ts = 1700000000;  // 2023-11-14
};

struct Workload {
  std::vector<NodeInput> nodes;
  std::vector<EdgeInput> edges;
  // Ground truth for query benchmarks, as node indices into `nodes`.
  std::vector<std::vector<uint32_t>> chains;  // supersedes chains, oldest first
  std::vector<std::pair<uint32_t, uint32_t>> near_duplicates;
  std::vector<std::pair<uint32_t, uint32_t>> contradictions;
};

inline constexpr uint32_t kVocabularySize = 4096;
// The vocabulary in Zipf rank order (most frequent first).
const std::vector<std::string>& Vocabulary();

// A start_ts such that the workload's newest timestamp falls before today (UTC):
// large workloads otherwise reach years ahead, which amem ingest refuses. The same
// all day, so programs run a few seconds apart generate the same workload.
int64_t WorkloadStartEndingNow(const WorkloadOptions& options);

Workload GenerateWorkload(const WorkloadOptions& options);

// XXH3-64 over every field of every node and edge (floats by their bits), in order.
uint64_t WorkloadChecksum(const Workload& workload);

// One `amem ingest` line (docs/DESIGN.md §6) per node, then one per edge.
std::string NodeToJsonLine(const NodeInput& node);
std::string EdgeToJsonLine(const EdgeInput& edge);
// Appends all lines (each ending in '\n') to *out. Returns false on a write error.
bool WriteJsonLines(const Workload& workload, std::FILE* out);

// Adds every node, then every edge, to *batch (copies).
inline void AddToBatch(const Workload& workload, Batch* batch) {
  for (const NodeInput& n : workload.nodes) batch->PutNode(n);
  for (const EdgeInput& e : workload.edges) batch->PutEdge(e);
}

// The store state holding the workload at revision 1 (every record at rev 1, the
// revision's time the newest node's), as the benchmarks compile it without a
// store. Dies when an edge's relation is not built in.
StoreState StateOfWorkload(const Workload& workload, uint32_t dimension);

}  // namespace amem::bench

#endif  // AMEM_BENCH_WORKLOAD_H_
