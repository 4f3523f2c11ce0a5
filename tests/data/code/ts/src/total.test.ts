import { Circle } from "./circle";
import { Square } from "./square";
import { totalArea } from "./total";

export function testTotalArea(): boolean {
  const shapes = [new Square(2), new Square(3)];
  return totalArea(shapes) === 13;
}

export function testCircleDescribe(): boolean {
  return new Circle(1).describe() === "circle of area 3.14";
}
