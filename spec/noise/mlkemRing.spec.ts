import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import {
  N,
  Q,
  compress1,
  compress10,
  compress4,
  decode12,
  encode12,
  innerProductNtt3,
  inverseNttFromMontgomery,
  ntt,
  samplePolyCbd2,
} from '../../src/noise/mlkemRing.js';

const mod = (x: number): number => ((x % Q) + Q) % Q;

/** Deterministic coefficients in [lo, hi] from SHAKE256(label). */
function testPolynomials(label: string, count: number, lo: number, hi: number): Int16Array {
  const bytes = createHash('shake256', { outputLength: 4 * count })
    .update(label)
    .digest();
  const out = new Int16Array(count);
  for (let i = 0; i < count; i++) out[i] = lo + (bytes.readUInt32LE(4 * i) % (hi - lo + 1));
  return out;
}

/** Schoolbook product in Z_q[X]/(X^256 + 1). */
function negacyclicProduct(
  a: Int16Array,
  aOffset: number,
  b: Int16Array,
  bOffset: number,
): number[] {
  const out = new Array<number>(N).fill(0);
  for (let i = 0; i < N; i++) {
    for (let j = 0; j < N; j++) {
      const product = mod((a[aOffset + i] ?? 0) * (b[bOffset + j] ?? 0));
      const k = i + j;
      if (k < N) out[k] = mod((out[k] ?? 0) + product);
      else out[k - N] = mod((out[k - N] ?? 0) - product);
    }
  }
  return out;
}

describe('ML-KEM ring arithmetic', () => {
  it('NTT, base-case products and inverse NTT compute Σ a_j·b_j in Z_q[X]/(X^256+1)', () => {
    // Inputs at the edges of what the functions accept: canonical matrix entries, small signed
    // noise (CBD) and full-range signed values.
    const cases: [Int16Array, Int16Array][] = [
      [testPolynomials('a', 3 * N, 0, Q - 1), testPolynomials('b', 3 * N, -2, 2)],
      [testPolynomials('c', 3 * N, 0, Q - 1), testPolynomials('d', 3 * N, -(Q - 1), Q - 1)],
      [new Int16Array(3 * N).fill(Q - 1), new Int16Array(3 * N).fill(-(Q - 1))],
    ];
    for (const [a, b] of cases) {
      const expected = new Array<number>(N).fill(0);
      for (let j = 0; j < 3; j++) {
        const product = negacyclicProduct(a, N * j, b, N * j);
        for (let i = 0; i < N; i++) expected[i] = mod((expected[i] ?? 0) + (product[i] ?? 0));
      }
      const aHat = a.slice();
      const bHat = b.slice();
      for (let j = 0; j < 3; j++) {
        ntt(aHat, N * j);
        ntt(bHat, N * j);
      }
      for (const value of [...aHat, ...bHat])
        expect(Math.abs(value)).toBeLessThanOrEqual((Q - 1) / 2);
      const out = new Int16Array(N);
      innerProductNtt3(out, 0, aHat, 0, N, 2 * N, bHat, 0, N, 2 * N);
      inverseNttFromMontgomery(out, 0);
      for (const value of out) expect(Math.abs(value)).toBeLessThan(Q);
      expect(Array.from(out, mod)).toEqual(expected);
    }
  });

  it('compresses exactly as FIPS 203 defines Compress_d, for every input it accepts', () => {
    for (let x = -65535; x <= 65535; x++) {
      const r = mod(x);
      const c10 = Math.floor((1024 * r + 1664) / Q) % 1024;
      const c4 = Math.floor((16 * r + 1664) / Q) % 16;
      const c1 = Math.floor((2 * r + 1664) / Q) % 2;
      if (compress10(x) !== c10 || compress4(x) !== c4 || compress1(x) !== c1) {
        throw new Error(`Compress mismatch at ${x}`);
      }
    }
  });

  it('samples CBD_2 with bits taken little-endian, four per coefficient', () => {
    const f = new Int16Array(N);
    const bytes = new Uint8Array(128);
    bytes[0] = 0b0111_0011; // low nibble: 1+1−0−0 = 2; high: 1+1−1−0 = 1
    bytes[1] = 0b1100_0100; // low: 0+0−1−0 = −1; high: 0+0−1−1 = −2
    samplePolyCbd2(bytes, f, 0);
    expect(Array.from(f.subarray(0, 5))).toEqual([2, 1, -1, -2, 0]);
  });

  it('round-trips ByteEncode_12 and flags fields that are not below q', () => {
    const f = testPolynomials('encode', N, 0, Q - 1);
    const bytes = new Uint8Array(384);
    encode12(f, 0, N, bytes, 0);
    const back = new Int16Array(N);
    expect(decode12(bytes, 0, N, back, 0)).toBe(0);
    expect(back).toEqual(f);
    bytes[383] = 0xff; // last coefficient becomes ≥ 0xff0 > q
    expect(decode12(bytes, 0, N, back, 0)).toBe(1);
    expect(back[N - 1]).toBe(mod(((bytes[382] ?? 0) >> 4) | (0xff << 4)));
  });
});
