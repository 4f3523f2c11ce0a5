import { Shape, formatArea } from "./shape";

export class Square implements Shape {
  constructor(private readonly side: number) {}

  area(): number {
    return this.side * this.side;
  }

  describe(): string {
    return "square of area " + formatArea(this.area());
  }
}
