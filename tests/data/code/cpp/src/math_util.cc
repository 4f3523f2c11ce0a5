#include "geo/math_util.h"

namespace geo {
namespace detail {

int Clamp(int value, int low, int high) {
  if (value < low) return low;
  return value > high ? high : value;
}

double Clamp(double value, double low, double high) {
  if (value < low) return low;
  return value > high ? high : value;
}

double Squared(double x) {
  return x * x;
}

}  // namespace detail
}  // namespace geo
