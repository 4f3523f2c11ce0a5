// Bounded top-k selection with the rankings' tie rule (QUERIES.md): score
// descending, then dense index ascending. O(n log k), no allocation after the
// first k pushes; used by similar, text-search, hybrid-search and centrality.
#ifndef AMEM_QUERY_TOPK_H_
#define AMEM_QUERY_TOPK_H_

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

class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(std::min<size_t>(k, 1 << 16)); }

  // Lowest score a push must beat to enter once full (for pruning); -inf-like
  // answer while not full is the caller's business: check full().
  bool full() const { return heap_.size() >= k_; }
  const Scored& worst() const { return heap_.front(); }

  void Push(double score, uint32_t index) {
    if (k_ == 0) return;
    Scored s{score, index};
    if (heap_.size() < k_) {
      heap_.push_back(s);
      std::push_heap(heap_.begin(), heap_.end(), RanksBefore);
    } else if (RanksBefore(s, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), RanksBefore);
      heap_.back() = s;
      std::push_heap(heap_.begin(), heap_.end(), RanksBefore);
    }
  }

  // The kept entries, best first. Leaves the selector empty.
  std::vector<Scored> Take() {
    std::sort_heap(heap_.begin(), heap_.end(), RanksBefore);
    return std::move(heap_);
  }

 private:
  size_t k_;
  std::vector<Scored> heap_;  // max-heap under RanksBefore: front is the worst kept
};

}  // namespace amem::query

#endif  // AMEM_QUERY_TOPK_H_
