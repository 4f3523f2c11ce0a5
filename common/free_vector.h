// FreeVector: gives a std::vector's buffer back. `v = {}` does not: it picks
// operator=(initializer_list), which empties the vector and keeps its capacity
// (166 MB of the exporter's postings at 1M nodes were held that way), and
// clear() keeps it too.
#ifndef AMEM_COMMON_FREE_VECTOR_H_
#define AMEM_COMMON_FREE_VECTOR_H_

#include <vector>

namespace amem {

template <typename T, typename A>
void FreeVector(std::vector<T, A>* v) {
  std::vector<T, A>().swap(*v);
}

}  // namespace amem

#endif  // AMEM_COMMON_FREE_VECTOR_H_
