// Numeric helpers, overloaded by type.
#ifndef GEO_MATH_UTIL_H_
#define GEO_MATH_UTIL_H_

namespace geo {
namespace detail {

int Clamp(int value, int low, int high);
double Clamp(double value, double low, double high);
double Squared(double x);

}  // namespace detail
}  // namespace geo

#endif  // GEO_MATH_UTIL_H_
