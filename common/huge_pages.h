// ReserveHuge: reserve a large buffer and ask for transparent huge pages for it.
//
// Why: on these VMs a first-touched 4 KiB page costs ~13 us (docs/DESIGN.md §8), so
// the snapshot writer's ~100 MB of scratch at 100K nodes would spend a third of
// a second in page faults; a 2 MiB huge page costs about as much as eight small ones.
// Only a hint (madvise): the kernel may ignore it, the contents are the same.
#ifndef AMEM_COMMON_HUGE_PAGES_H_
#define AMEM_COMMON_HUGE_PAGES_H_

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace amem {

// Reserves room for `n` elements of the std::vector or std::string `*c`; when
// that is at least one huge page, advises huge pages for it. Call it before the
// buffer is filled: pages already touched stay small.
template <typename Container>
void ReserveHuge(Container* c, size_t n) {
  c->reserve(n);
  constexpr uintptr_t kPage = 4096, kHugePage = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(c->data()) & ~(kPage - 1);
  const auto end = reinterpret_cast<uintptr_t>(c->data() + c->capacity());
  if (end - begin >= kHugePage) {
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
}

}  // namespace amem

#endif  // AMEM_COMMON_HUGE_PAGES_H_
