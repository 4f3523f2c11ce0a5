// Per-thread scratch arrays over dense node numbers, reused across queries so that a
// query touching a few hundred nodes of a 1M-node snapshot neither allocates nor
// clears V-sized arrays (first-touch page faults cost more than the search itself).
//
// NodeMap<T> is a map from dense node number to T with O(1) Reset(): each slot
// carries the epoch that wrote it, and Reset() starts a new epoch.
//
//   NodeMap<uint32_t>& parent = ThreadScratch<uint32_t, kSlot>();
//   parent.Reset(reader.node_count());
//
// A query owns the slots it uses for the duration of one call; two queries that can
// run nested on one thread must use different slot numbers (see kScratch* below).
#ifndef AMEM_QUERY_INTERNAL_SCRATCH_H_
#define AMEM_QUERY_INTERNAL_SCRATCH_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

#include "common/huge_pages.h"

namespace amem::query {

template <typename T>
class NodeMap {
 public:
  NodeMap() = default;
  NodeMap(const NodeMap&) = delete;
  NodeMap& operator=(const NodeMap&) = delete;
  ~NodeMap() { FreeZeroedTable(slots_, size_t{size_} * sizeof(Slot)); }

  // Forgets every entry; the map then covers nodes [0, n).
  // Growing takes fresh zeroed pages (AllocZeroedTable), so a query that touches
  // a few nodes of a million-node graph faults in only their pages: a process
  // asking one traverse does not zero 8 MB.
  // A map that grows takes an eighth more than asked: a live view gains a node or
  // a few with each write, and a server that took exactly n slots calloc'd (and
  // glibc zeroed, from its heap) 8 MB at 1M nodes again for every query after a write.
  // The second query that uses a map (a server's, a benchmark's, a replay's) maps
  // all its pages at once (PopulateForWrite): from then on no query faults on it.
  // Before, a query of a long-lived process that reached nodes on pages no query
  // had touched yet faulted them in, one by one.
  void Reset(uint32_t n) {
    if (size_ < n) {
      const uint64_t grown = size_ == 0 ? n : uint64_t{size_} + size_ / 8;
      const uint32_t take = static_cast<uint32_t>(
          std::min<uint64_t>(UINT32_MAX, std::max<uint64_t>(n, grown)));
      Slot* fresh = static_cast<Slot*>(AllocZeroedTable(size_t{take} * sizeof(Slot)));
      if (!fresh) throw std::bad_alloc();
      FreeZeroedTable(slots_, size_t{size_} * sizeof(Slot));
      slots_ = fresh;
      size_ = take;
      populated_ = false;
      huge_ = false;
      uses_ = 0;
    }
    if (uses_ < 2 && ++uses_ == 2) Populate();
    if (++epoch_ == 0) {  // wrapped: old stamps could collide with new epochs
      for (uint32_t i = 0; i < size_; ++i) slots_[i].stamp = 0;
      epoch_ = 1;
    }
  }
  // Says that about `touches` slots at random are about to be read and written.
  // Each is then likely on a page of its own until most pages are touched, and a
  // page faults twice (read, then written: ~2.8 us on these VMs); past about 1/16
  // of the pages, mapping them all at once costs less (PopulateForWrite, ~0.15 us
  // a page). Once per allocation: a reused map's pages are mapped already.
  void ExpectTouches(uint64_t touches) {
    const uint64_t pages = RoundUpToPage(uint64_t{size_} * sizeof(Slot), kSmallPage) / kSmallPage;
    if (touches * 16 >= pages) Populate();
  }
  // Says that the query may read and write much of the map at random (a weighted
  // path search): huge pages for it from now on (AdviseHugePages), once per
  // allocation.
  // At 1M nodes a weighted path search's two maps are 64 MB: 32 huge pages
  // against 16,000 small ones, each faulted twice.
  void ExpectWide() {
    if (huge_) return;
    huge_ = true;
    AdviseHugePages(slots_, size_t{size_} * sizeof(Slot));
  }
  // Slots held: at least the largest n given to Reset.
  uint32_t capacity() const { return size_; }
  bool Has(uint32_t i) const {
    assert(i < size_);
    return slots_[i].stamp == epoch_;
  }
  // REQUIRES: Has(i).
  const T& Get(uint32_t i) const {
    assert(Has(i));
    return slots_[i].value;
  }
  T& Mutable(uint32_t i) {
    assert(Has(i));
    return slots_[i].value;
  }
  void Set(uint32_t i, const T& v) {
    assert(i < size_);
    slots_[i].stamp = epoch_;
    slots_[i].value = v;
  }
  // Sets i to v and returns true when i had no entry; returns false otherwise.
  bool Insert(uint32_t i, const T& v) {
    if (Has(i)) return false;
    Set(i, v);
    return true;
  }

 private:
  // Maps every page now, once per allocation.
  void Populate() {
    if (populated_) return;
    populated_ = true;
    PopulateForWrite(slots_, size_t{size_} * sizeof(Slot));
  }

  // Stamp and value side by side: one cache line per lookup.
  // All zero bytes is the empty slot (stamp 0 is never an epoch).
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>);
  struct Slot {
    uint32_t stamp;
    T value;
  };
  Slot* slots_ = nullptr;
  uint32_t size_ = 0;
  uint32_t epoch_ = 0;
  bool populated_ = false;
  bool huge_ = false;
  uint8_t uses_ = 0;  // Resets since the allocation, counted up to 2
};

// Slot numbers used by the graph queries (traverse, search, temporal, impact,
// context, resolve, path).
inline constexpr int kScratchA = 0;
inline constexpr int kScratchB = 1;

template <typename T, int kSlot>
NodeMap<T>& ThreadScratch() {
  thread_local NodeMap<T> map;
  return map;
}

}  // namespace amem::query

#endif  // AMEM_QUERY_INTERNAL_SCRATCH_H_
