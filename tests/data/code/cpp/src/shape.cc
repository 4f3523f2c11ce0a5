#include "geo/shape.h"

namespace geo {

std::string Shape::Label() const {
  return "shape";
}

}  // namespace geo
