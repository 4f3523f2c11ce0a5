// A circle, and a square, both shapes.
#ifndef GEO_CIRCLE_H_
#define GEO_CIRCLE_H_

#include "geo/shape.h"

namespace geo {

class Circle : public Shape {
 public:
  explicit Circle(double radius) : radius_(radius) {}
  double Area() const override;
  std::string Label() const override;

 private:
  double radius_;
};

class Square : public Shape {
 public:
  explicit Square(double side) : side_(side) {}
  double Area() const override;

 private:
  double side_;
};

}  // namespace geo

#endif  // GEO_CIRCLE_H_
