import { Shape, formatArea } from "./shape";

export class Circle implements Shape {
  constructor(private readonly radius: number) {}

  area(): number {
    return Math.PI * this.radius * this.radius;
  }

  describe(): string {
    return "circle of area " + formatArea(this.area());
  }
}
