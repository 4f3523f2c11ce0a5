#include "geo/circle.h"

#include "geo/math_util.h"

namespace geo {

namespace {
constexpr double kPi = 3.14159265358979;
}  // namespace

double Circle::Area() const {
  return kPi * detail::Squared(radius_);
}

std::string Circle::Label() const {
  // Area() here is the circle's own: "Area" in a comment is not a reference.
  return "circle";
}

double Square::Area() const {
  return detail::Squared(side_);
}

}  // namespace geo
