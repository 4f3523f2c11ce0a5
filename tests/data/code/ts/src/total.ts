import { Shape } from "./shape";

// Sums the areas of all shapes.
export function totalArea(shapes: Shape[]): number {
  let sum = 0;
  for (const shape of shapes) {
    sum += shape.area();
  }
  return sum;
}

export function largest(shapes: Shape[]): Shape | undefined {
  let best: Shape | undefined;
  for (const shape of shapes) {
    if (best === undefined || shape.area() > best.area()) {
      best = shape;
    }
  }
  return best;
}
