// Checks of the geo library, one function per behaviour.
#include <cstdio>

#include "geo/circle.h"
#include "geo/math_util.h"
#include "geo/registry.h"

namespace {

bool TestClampLimits() {
  return geo::detail::Clamp(7, 0, 5) == 5 && geo::detail::Clamp(-1.5, 0.0, 1.0) == 0.0;
}

bool TestRegistrySum() {
  geo::Circle circle(1.0);
  geo::Square square(2.0);
  geo::Registry registry;
  registry.Register(&circle);
  registry.Register(&square);
  return registry.Count() == 2 && registry.SumAreas() > 7.0;
}

}  // namespace

int main() {
  const bool ok = TestClampLimits() && TestRegistrySum();
  std::puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
