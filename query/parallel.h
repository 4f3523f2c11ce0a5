// Splitting a loop over [0, count) across threads, for the whole-graph queries
// (centrality, analogy). Results must not depend on the split: callers either
// write disjoint outputs or combine per-range results in range order.
#ifndef AMEM_QUERY_PARALLEL_H_
#define AMEM_QUERY_PARALLEL_H_

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

#endif  // AMEM_QUERY_PARALLEL_H_
