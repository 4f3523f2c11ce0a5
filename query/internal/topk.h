// Bounded top-k selection with the rankings' tie rule (docs/QUERIES.md): score
// descending, then dense index ascending. O(n log k), no allocation after the
// first k pushes; used by similar, text-search, hybrid-search and centrality.
#ifndef AMEM_QUERY_INTERNAL_TOPK_H_
#define AMEM_QUERY_INTERNAL_TOPK_H_

#include <algorithm>
#include <cstdint>
#include <vector>

namespace amem::query {

struct Scored {
  double score = 0;
  uint32_t index = 0;
};

// True when a ranks before b.
inline bool RanksBefore(const Scored& a, const Scored& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

// The best `k` of a stream of items under `before`, a strict total order (so the
// kept set does not depend on the order of the pushes). O(n log k).
template <typename T, typename Before>
class BestOf {
 public:
  BestOf(size_t k, Before before) : k_(k), before_(before) {
    heap_.reserve(std::min<size_t>(k, 1 << 16));
  }

  bool full() const { return heap_.size() >= k_; }
  const T& worst() const { return heap_.front(); }  // REQUIRES: !empty

  void Push(const T& item) {
    if (k_ == 0) return;
    if (heap_.size() < k_) {
      heap_.push_back(item);
      std::push_heap(heap_.begin(), heap_.end(), before_);
    } else if (before_(item, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), before_);
      heap_.back() = item;
      std::push_heap(heap_.begin(), heap_.end(), before_);
    }
  }

  // The kept items, best first. Leaves the selector empty.
  std::vector<T> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), before_);
    return std::move(heap_);
  }

 private:
  size_t k_;
  Before before_;
  std::vector<T> heap_;  // max-heap under before_: front is the worst kept
};

class TopK {
 public:
  explicit TopK(size_t k) : best_(k, RanksBefore) {}

  // Lowest score a push must beat to enter once full (for pruning); -inf-like
  // answer while not full is the caller's business: check full().
  bool full() const { return best_.full(); }
  const Scored& worst() const { return best_.worst(); }
  void Push(double score, uint32_t index) { best_.Push(Scored{score, index}); }
  // The kept entries, best first. Leaves the selector empty.
  std::vector<Scored> Take() { return best_.Take(); }

 private:
  BestOf<Scored, bool (*)(const Scored&, const Scored&)> best_;
};

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_TOPK_H_
