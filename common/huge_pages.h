// ReserveHuge: reserve a large buffer and ask for transparent huge pages for it.
//
// Why: on these VMs a first-touched 4 KiB page costs ~13 us (docs/DESIGN.md §8), so
// the snapshot writer's ~100 MB of scratch at 100K nodes would spend a third of
// a second in page faults; a 2 MiB huge page costs about as much as eight small ones.
// Only a hint (madvise): the kernel may ignore it, the contents are the same.
#ifndef AMEM_COMMON_HUGE_PAGES_H_
#define AMEM_COMMON_HUGE_PAGES_H_

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace amem {

// The page sizes these helpers assume (x86-64 and most arm64 kernels): a small page
// and a transparent huge page.
inline constexpr uintptr_t kSmallPage = 4096;
inline constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// `x` rounded down / up to a multiple of `page` (a power of two).
constexpr uintptr_t RoundDownToPage(uintptr_t x, uintptr_t page) { return x & ~(page - 1); }
constexpr uintptr_t RoundUpToPage(uintptr_t x, uintptr_t page) {
  return RoundDownToPage(x + page - 1, page);
}

// Reserves room for `n` elements of the std::vector or std::string `*c`; when
// that is at least one huge page, advises huge pages for it. Call it before the
// buffer is filled: pages already touched stay small.
template <typename Container>
void ReserveHuge(Container* c, size_t n) {
  c->reserve(n);
  const uintptr_t begin = RoundDownToPage(reinterpret_cast<uintptr_t>(c->data()), kSmallPage);
  const auto end = reinterpret_cast<uintptr_t>(c->data() + c->capacity());
  if (end - begin >= kHugePage) {
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
}

// For a process about to make millions of small allocations (amem index of a
// large code index: a million edges' key strings): grows the heap by about
// `bytes` at once and advises huge pages for that range before anything touches
// it, so those allocations fault in 2 MiB pages rather than 4 KiB ones (at 1M
// occurrences, 14.4 -> about 10 s, most of it page faults). From then on malloc
// keeps up to `bytes` at the top of the heap instead of returning it, so only a
// short-lived process should call it. Only a hint, as ReserveHuge.
inline void AdviseHugeHeap(size_t bytes) {
  const auto before = reinterpret_cast<uintptr_t>(::sbrk(0));
  ::mallopt(M_TOP_PAD, static_cast<int>(bytes));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes));
  ::free(::malloc(1));  // the next heap growth takes M_TOP_PAD more
  const auto after = reinterpret_cast<uintptr_t>(::sbrk(0));
  const uintptr_t begin = RoundUpToPage(before, kHugePage);
  if (after > begin + kHugePage) {
    ::madvise(reinterpret_cast<void*>(begin), after - begin, MADV_HUGEPAGE);
  }
}

// For a long-lived process whose every request allocates and frees the same few
// MiB (amem mcp: the delta and tables of the view after each write): malloc serves
// blocks below `mmap_below` from the heap and keeps up to `keep` bytes free at its
// top, so a request reuses pages an earlier one touched instead of faulting fresh
// ones (~13 us each on these VMs). The process holds up to `keep` more than it uses.
inline void KeepHeapWarm(size_t mmap_below, size_t keep) {
  ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap_below));
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(keep));
}

// Maps the pages of [p, p + bytes) for writing now, in one call, for memory about to
// be written: a fresh page costs a fault when first touched (~1.4 us on these VMs,
// twice when it is read before it is written: the shared zero page, then its copy),
// against ~0.15 us a page here. The range is widened to whole pages (populating
// changes no byte, so what else shares those pages is left as it is). Only a hint,
// as ReserveHuge: a kernel without MADV_POPULATE_WRITE (before Linux 5.14) leaves
// the pages to their faults.
inline void PopulateForWrite(void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  if (bytes == 0) return;
  const auto at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t begin = RoundDownToPage(at, kSmallPage);
  const uintptr_t end = RoundUpToPage(at + bytes, kSmallPage);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Zeroed memory for a table read and written at random (a query's scratch map over
// every node): from `bytes` of one huge page up, fresh pages mapped at a 2 MiB
// boundary, so that AdviseHugePages can give it huge pages (a walk over a million
// nodes' entries then takes one TLB entry per 2 MiB rather than per 4 KiB); below
// that, calloc. Either way a page is zeroed on its first touch only. nullptr when
// out of memory. Free with FreeZeroedTable.
inline void* AllocZeroedTable(size_t bytes) {
  if (bytes < kHugePage) return std::calloc(bytes, 1);
  const size_t len = RoundUpToPage(bytes, kHugePage);
  void* m = ::mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  const auto at = reinterpret_cast<uintptr_t>(m);
  const uintptr_t begin = RoundUpToPage(at, kHugePage);
  if (begin > at) ::munmap(m, begin - at);
  ::munmap(reinterpret_cast<void*>(begin + len), at + kHugePage - begin);  // never empty
  return reinterpret_cast<void*>(begin);
}
// Asks for huge pages for a table from AllocZeroedTable of `bytes` (nothing below
// one huge page). Pages it already touched stay small. The kernel zeroes a huge page
// whole on its first touch: worth it for a search that may read much of the table,
// not for a walk that touches a few hundred entries (each would hold 2 MiB).
inline void AdviseHugePages(void* p, size_t bytes) {
  if (p == nullptr || bytes < kHugePage) return;
  ::madvise(p, RoundUpToPage(bytes, kHugePage), MADV_HUGEPAGE);
}
inline void FreeZeroedTable(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kHugePage) return std::free(p);
  ::munmap(p, RoundUpToPage(bytes, kHugePage));
}

}  // namespace amem

#endif  // AMEM_COMMON_HUGE_PAGES_H_
