export function mean(xs: number[]): number {
  let total: string = 0;
  for (const x of xs) {
    total += x;
  }
  return total / xs.length;
}

export function at(xs: number[], i: number): number {
  return xs[i].toFixed(2);
}
