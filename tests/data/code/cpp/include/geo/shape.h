// The base of every figure.
#ifndef GEO_SHAPE_H_
#define GEO_SHAPE_H_

#include <string>

namespace geo {

class Shape {
 public:
  virtual ~Shape() = default;
  virtual double Area() const = 0;
  virtual std::string Label() const;
};

}  // namespace geo

#endif  // GEO_SHAPE_H_
