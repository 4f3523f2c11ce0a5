#include "geo/registry.h"

namespace geo {

void Registry::Register(const Shape* shape) {
  shapes_.push_back(shape);
}

double Registry::SumAreas() const {
  double sum = 0;
  for (const Shape* shape : shapes_) sum += shape->Area();
  return sum;
}

}  // namespace geo
