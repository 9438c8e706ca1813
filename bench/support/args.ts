/** The `index`-th positional argument of a benchmark as a positive integer, else `fallback`. */
export function positiveArg(index: number, fallback: number): number {
  const raw = process.argv[2 + index];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`argument ${index + 1} must be a positive integer`);
  return value;
}
