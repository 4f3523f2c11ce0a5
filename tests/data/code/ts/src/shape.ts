// The shape interface every figure implements.
export interface Shape {
  area(): number;
  describe(): string;
}

export function formatArea(value: number): string {
  return value.toFixed(2);
}
