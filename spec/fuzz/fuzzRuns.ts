/**
 * How many cases each property runs. `npm test` uses the small default; a longer run is
 * `FUZZ_RUNS=100000 NODE_OPTIONS=--experimental-vm-modules npx jest spec/fuzz` (a property
 * that is costly per case, such as a Noise handshake, scales the count down by `divisor`).
 * A failure prints fast-check's seed and path; `FUZZ_SEED=<seed>` replays it.
 */
import fc from 'fast-check';

const DEFAULT_RUNS = 200;

export function fuzzRuns(divisor = 1, fallback = DEFAULT_RUNS): number {
  const requested = Number(process.env.FUZZ_RUNS ?? '');
  const runs = Number.isFinite(requested) && requested > 0 ? requested : fallback;
  return Math.max(1, Math.floor(runs / divisor));
}

/** Parameters for `fc.assert`: the run count plus a replayable seed when one is given. */
export function fuzzParameters<T>(divisor = 1, fallback = DEFAULT_RUNS): fc.Parameters<T> {
  const seed = Number(process.env.FUZZ_SEED ?? '');
  return {
    numRuns: fuzzRuns(divisor, fallback),
    ...(Number.isInteger(seed) && process.env.FUZZ_SEED ? { seed } : {}),
  };
}

/** Cuts `bytes` at the given fractions (each in [0, 1)) into consecutive chunks. */
export function cutAt(bytes: Uint8Array, fractions: readonly number[]): Uint8Array[] {
  const cuts = [...new Set(fractions.map((f) => Math.floor(f * bytes.length)))].sort(
    (a, b) => a - b,
  );
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of cuts) {
    if (cut <= start) continue;
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** Arbitrary bytes as a Uint8Array, up to `maxLength`. */
export function bytes(maxLength = 512): fc.Arbitrary<Uint8Array> {
  return fc.uint8Array({ maxLength });
}

/** `source` with a few bytes changed, cut or added: near-valid input finds deeper paths. */
export function mutated(source: Uint8Array): fc.Arbitrary<Uint8Array> {
  const edit = fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
    fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), value: fc.nat(255) }),
    fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fc.nat(255) }),
  );
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    let out = Uint8Array.from(source);
    for (const change of edits) {
      const at = out.length === 0 ? 0 : change.at % out.length;
      switch (change.kind) {
        case 'flip':
          if (out.length > 0) out[at] = (out[at] as number) ^ (1 << change.bit);
          break;
        case 'cut':
          out = out.subarray(0, at);
          break;
        case 'insert':
          out = Uint8Array.from([...out.subarray(0, at), change.value, ...out.subarray(at)]);
          break;
        case 'set':
          if (out.length > 0) out[at] = change.value;
          break;
      }
    }
    return out;
  });
}

/** A per-test deadline that grows with the run count (`jest.setTimeout` at the top of a spec). */
export function fuzzTimeoutMs(msPerRun = 20): number {
  return Math.max(30_000, fuzzRuns() * msPerRun);
}
