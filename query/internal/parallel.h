// Splitting a loop over [0, count) across threads, for the whole-graph queries
// (centrality, analogy). Results must not depend on the split: callers either
// write disjoint outputs or combine per-range results in range order.
#ifndef AMEM_QUERY_INTERNAL_PARALLEL_H_
#define AMEM_QUERY_INTERNAL_PARALLEL_H_

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace amem::query {

// `requested` workers, or one per hardware thread when it is 0; at least 1.
inline int WorkerCount(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// For a scan over `nodes` nodes: `requested` workers, or when it is 0 one per
// hardware thread and per kNodesPerWorker nodes, at least 1. Below that a scan
// takes a few milliseconds, and on a busy machine waiting for a second thread to
// be scheduled (at every barrier) costs more than it saves.
inline constexpr uint32_t kNodesPerWorker = 1 << 17;
inline int WorkerCountFor(uint32_t nodes, int requested) {
  if (requested > 0) return requested;
  return static_cast<int>(
      std::clamp<uint32_t>(nodes / kNodesPerWorker, 1, static_cast<uint32_t>(WorkerCount(0))));
}

// Calls fn(w, begin, end) for w < workers, over [0, count) cut into `workers`
// ranges of equal size, each on its own thread (range 0 on the caller's), and
// returns when all are done.
template <typename Fn>
void SplitAcross(int workers, uint32_t count, Fn&& fn) {
  auto cut = [count, workers](int w) {
    return static_cast<uint32_t>(static_cast<uint64_t>(count) * w / workers);
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) {
    pool.emplace_back([&fn, &cut, w] { fn(w, cut(w), cut(w + 1)); });
  }
  fn(0, 0, cut(1));
  for (std::thread& t : pool) t.join();
}

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_PARALLEL_H_
