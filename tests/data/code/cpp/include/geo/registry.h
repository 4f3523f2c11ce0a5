// Keeps shapes and sums their areas.
#ifndef GEO_REGISTRY_H_
#define GEO_REGISTRY_H_

#include <vector>

#include "geo/shape.h"

namespace geo {

class Registry {
 public:
  void Register(const Shape* shape);
  double SumAreas() const;
  int Count() const { return static_cast<int>(shapes_.size()); }

 private:
  std::vector<const Shape*> shapes_;
};

}  // namespace geo

#endif  // GEO_REGISTRY_H_
