/**
 * The most frequent inbound message, a plain response `{id, result}` without `method`,
 * recognised without the schema pass of `classifyMessage`.
 *
 * Contract: returns undefined, or the same `id` and `result` as the plain twin
 * (bench/plain/rpc/fastpath/plainResponse.ts, through `classifyMessage`); every response with
 * a safe integer id is recognised (spec/rpc/fastpath/plainResponse.spec.ts). The caller
 * classifies whatever it does not recognise. What it earns is in
 * docs/performance.md ("Fast paths", `npx tsx bench/fast-paths-client.ts`).
 */
export function plainResponse(value: unknown): { id: number; result: unknown } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if ('method' in record || !('result' in record) || !Number.isSafeInteger(record.id)) {
    return undefined;
  }
  return record as { id: number; result: unknown };
}
