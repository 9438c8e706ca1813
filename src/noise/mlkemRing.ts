/**
 * Arithmetic in R_q = Z_q[X]/(X^256 + 1), q = 3329, as FIPS 203 §4.3 defines it for ML-KEM:
 * the number-theoretic transform (Algorithms 9–10), products in the NTT domain
 * (Algorithms 11–12), the centered binomial sampler (Algorithm 8), rejection sampling
 * (Algorithm 7's loop) and the compress / byte-encode helpers (§4.2.1).
 *
 * Representation: a polynomial is 256 signed coefficients inside an `Int16Array` at an offset,
 * so a vector of k polynomials is one array (polynomial i at offset 256·i). Coefficients are
 * any representative of their class mod q within the bounds each function states; the byte
 * encoders and compressors reduce to [0, q) themselves. No stored value ever reaches 8q =
 * 26632 < 2^15 (wider intermediates live in local variables), so 16 bits per coefficient
 * suffice, as in the CRYSTALS-Kyber reference code: half the memory of Int32 key expansions.
 *
 * Reduction uses Montgomery multiplication (R = 2^16) and Barrett reduction with `Math.imul`,
 * which V8 compiles to plain 32-bit multiplies (the `%` operator compiles to a division). The transforms follow FIPS 203's loop structure with twiddle
 * factors kept in Montgomery form; values are the FIPS ones mod q, so the encodings are
 * byte-identical. Indexing is in bounds by construction (fixed sizes), hence the `!` on reads.
 *
 * Over 400 lines for one reason: it is one algorithm, whose constants and loops read together.
 */

export const Q = 3329;
export const N = 256;

// Bound once: some embeddings (Jest's vm contexts) look `imul` up on `Math` at every call, and
// V8 inlines the bound builtin just the same.
const imul = Math.imul;

/** q^-1 mod 2^16, as a signed 16-bit value. */
const Q_INVERSE = -3327;
/** 2^32 mod q: Montgomery-multiplying by it multiplies by R. */
const R_SQUARED = 1353;
/** R^2 / 128 mod q: the inverse NTT's scaling by 128^-1, also cancelling one factor R^-1. */
const INVERSE_NTT_SCALE = 1441;
/** ⌊2^26 / q⌉, the Barrett constant. */
const BARRETT_MULTIPLIER = 20159;

/** a·2^-16 mod q, in (−q, q), for |a| < q·2^15. */
function montgomeryReduce(a: number): number {
  const t = (imul(a, Q_INVERSE) << 16) >> 16;
  return (a - imul(t, Q)) >> 16;
}

/** The representative of a mod q in [−(q−1)/2, (q−1)/2], for |a| < 2^16. */
function barrettReduce(a: number): number {
  const t = (imul(BARRETT_MULTIPLIER, a) + (1 << 25)) >> 26;
  return a - imul(t, Q);
}

/** The representative of a mod q in [0, q), for |a| < 2^16. */
function canonical(a: number): number {
  const r = barrettReduce(a);
  return r + ((r >> 31) & Q);
}

function powMod(base: number, exponent: number): number {
  let result = 1;
  for (let i = 0; i < exponent; i++) result = (result * base) % Q;
  return result;
}

function bitReverse7(value: number): number {
  let out = 0;
  for (let bit = 0; bit < 7; bit++) out |= ((value >> bit) & 1) << (6 - bit);
  return out;
}

/** ζ^BitRev7(i)·R mod q, ζ = 17 the primitive 256th root of unity of FIPS 203 §4.3. */
const ZETAS = new Int16Array(128);
/** γ_i·R mod q, γ_i = ζ^(2·BitRev7(i)+1): the moduli X^2 − γ_i of the base-case products. */
const GAMMAS = new Int16Array(128);
for (let i = 0; i < 128; i++) {
  ZETAS[i] = (powMod(17, bitReverse7(i)) * 65536) % Q;
  GAMMAS[i] = (powMod(17, 2 * bitReverse7(i) + 1) * 65536) % Q;
}

/**
 * In-place NTT of the polynomial at `offset` (FIPS 203 Algorithm 9). Input |f| < q; output
 * Barrett-reduced, |f| ≤ (q−1)/2.
 *
 * Layers run two at a time (lengths 128 and 64, 32 and 16, 8 and 4; then 2 alone): each
 * group of four coefficients is loaded once for two butterflies, which halves the typed-array
 * traffic. The twiddle of block b in the layer of length `len` is ZETAS[128/len + b], FIPS
 * 203's running index k. Each layer grows |f| by less than q, so the inputs of the last
 * layer's products stay below 7q and the products below 7q^2 < q·2^15.
 */
export function ntt(f: Int16Array, offset: number): void {
  for (let length = 128; length >= 4; length >>= 2) {
    const half = length >> 1;
    const blocks = 128 / length;
    for (let block = 0; block < blocks; block++) {
      const zeta = ZETAS[blocks + block]!;
      const zetaLow = ZETAS[2 * blocks + 2 * block]!;
      const zetaHigh = ZETAS[2 * blocks + 2 * block + 1]!;
      const start = offset + 2 * length * block;
      for (let j = start; j < start + half; j++) {
        const a0 = f[j]!;
        const a1 = f[j + half]!;
        const a2 = f[j + length]!;
        const a3 = f[j + length + half]!;
        // Layer `length`: (a0, a2) and (a1, a3).
        const t2 = montgomeryReduce(imul(zeta, a2));
        const t3 = montgomeryReduce(imul(zeta, a3));
        const b0 = a0 + t2;
        const b1 = a1 + t3;
        const b2 = a0 - t2;
        const b3 = a1 - t3;
        // Layer `half`: (b0, b1) in the low block, (b2, b3) in the high one.
        const u1 = montgomeryReduce(imul(zetaLow, b1));
        const u3 = montgomeryReduce(imul(zetaHigh, b3));
        f[j] = b0 + u1;
        f[j + half] = b0 - u1;
        f[j + length] = b2 + u3;
        f[j + length + half] = b2 - u3;
      }
    }
  }
  // Last layer (length 2, k = 64..127) with the final Barrett reduction folded in.
  for (let start = offset, k = 64; start < offset + N; start += 4, k++) {
    const zeta = ZETAS[k]!;
    const t0 = montgomeryReduce(imul(zeta, f[start + 2]!));
    const t1 = montgomeryReduce(imul(zeta, f[start + 3]!));
    const a0 = f[start]!;
    const a1 = f[start + 1]!;
    f[start] = barrettReduce(a0 + t0);
    f[start + 1] = barrettReduce(a1 + t1);
    f[start + 2] = barrettReduce(a0 - t0);
    f[start + 3] = barrettReduce(a1 - t1);
  }
}

/**
 * Two layers of the inverse NTT (lengths `length` and 2·`length`) over the polynomial at
 * `offset`, optionally Barrett-reducing the sums of either layer. The twiddle of block c in the
 * layer of length `len` is ZETAS[2·(128/len) − 1 − c], FIPS 203's index k counting down.
 */
function inverseTwoLayers(
  f: Int16Array,
  offset: number,
  length: number,
  reduceFirstSums: boolean,
  reduceSecondSums: boolean,
): void {
  const outerBlocks = 64 / length;
  const innerBlocks = 2 * outerBlocks;
  for (let block = 0; block < outerBlocks; block++) {
    const zetaLow = ZETAS[2 * innerBlocks - 1 - 2 * block]!;
    const zetaHigh = ZETAS[2 * innerBlocks - 2 - 2 * block]!;
    const zeta = ZETAS[2 * outerBlocks - 1 - block]!;
    const start = offset + 4 * length * block;
    for (let j = start; j < start + length; j++) {
      const a0 = f[j]!;
      const a1 = f[j + length]!;
      const a2 = f[j + 2 * length]!;
      const a3 = f[j + 3 * length]!;
      // Layer `length`: (a0, a1) in the low block, (a2, a3) in the high one.
      let s0 = a0 + a1;
      let s2 = a2 + a3;
      if (reduceFirstSums) {
        s0 = barrettReduce(s0);
        s2 = barrettReduce(s2);
      }
      const d1 = montgomeryReduce(imul(zetaLow, a1 - a0));
      const d3 = montgomeryReduce(imul(zetaHigh, a3 - a2));
      // Layer 2·`length`: (s0, s2) and (d1, d3).
      let u0 = s0 + s2;
      let u1 = d1 + d3;
      if (reduceSecondSums) {
        u0 = barrettReduce(u0);
        u1 = barrettReduce(u1);
      }
      f[j] = u0;
      f[j + length] = u1;
      f[j + 2 * length] = montgomeryReduce(imul(zeta, s2 - s0));
      f[j + 3 * length] = montgomeryReduce(imul(zeta, d3 - d1));
    }
  }
}

/**
 * In-place inverse NTT (FIPS 203 Algorithm 10) of a polynomial that carries an extra factor
 * R^-1 (the output of {@link innerProductNtt3}); the result is the exact NTT^-1 mod q, in
 * (−q, q). Input |f| < q.
 *
 * Sums grow by a factor two per layer and are Barrett-reduced only in the layers of length 8
 * and 64: every layer's input then stays below 4q, so each difference stays below 8q and each
 * Montgomery product below 8q^2 < q·2^15.
 */
export function inverseNttFromMontgomery(f: Int16Array, offset: number): void {
  inverseTwoLayers(f, offset, 2, false, false);
  inverseTwoLayers(f, offset, 8, true, false);
  inverseTwoLayers(f, offset, 32, false, true);
  const zeta = ZETAS[1]!; // length 128, the last layer
  for (let j = offset; j < offset + 128; j++) {
    const a = f[j]!;
    const b = f[j + 128]!;
    f[j] = a + b;
    f[j + 128] = montgomeryReduce(imul(zeta, b - a));
  }
  // Inputs below 4q here: the products stay below 4q·q.
  for (let j = offset; j < offset + N; j++) {
    f[j] = montgomeryReduce(imul(f[j]!, INVERSE_NTT_SCALE));
  }
}

/**
 * `out[outOffset..] = R^-1 · Σ_j a_j ∘ b_j` for three pairs of NTT-domain polynomials (the k = 3
 * inner product of a matrix row or column with a vector) with the base-case products of
 * FIPS 203 Algorithm 12. `a0..a2` and `b0..b2` are the offsets of each side's polynomials.
 * Inputs |a|, |b| < q; output in (−q, q).
 */
export function innerProductNtt3(
  out: Int16Array,
  outOffset: number,
  a: Int16Array,
  a0: number,
  a1: number,
  a2: number,
  b: Int16Array,
  b0: number,
  b1: number,
  b2: number,
): void {
  for (let even = 0; even < N; even += 2) {
    const gamma = GAMMAS[even >> 1]!;
    const odd = even + 1;
    const x0 = a[a0 + even]!;
    const x1 = a[a0 + odd]!;
    const y0 = b[b0 + even]!;
    const y1 = b[b0 + odd]!;
    const u0 = a[a1 + even]!;
    const u1 = a[a1 + odd]!;
    const v0 = b[b1 + even]!;
    const v1 = b[b1 + odd]!;
    const p0 = a[a2 + even]!;
    const p1 = a[a2 + odd]!;
    const r0 = b[b2 + even]!;
    const r1 = b[b2 + odd]!;
    // Every term is below 2q^2, so each sum of six stays below 6q^2 < q·2^15: one reduction.
    const low =
      imul(x0, y0) +
      imul(montgomeryReduce(imul(x1, y1)), gamma) +
      imul(u0, v0) +
      imul(montgomeryReduce(imul(u1, v1)), gamma) +
      imul(p0, r0) +
      imul(montgomeryReduce(imul(p1, r1)), gamma);
    const high =
      imul(x0, y1) + imul(x1, y0) + imul(u0, v1) + imul(u1, v0) + imul(p0, r1) + imul(p1, r0);
    out[outOffset + even] = montgomeryReduce(low);
    out[outOffset + odd] = montgomeryReduce(high);
  }
}

/** Multiplies the polynomial at `offset` by R (undoing {@link innerProductNtt3}'s R^-1). |f| < q. */
export function fromMontgomery(f: Int16Array, offset: number): void {
  for (let j = offset; j < offset + N; j++) f[j] = montgomeryReduce(imul(f[j]!, R_SQUARED));
}

/** `f[fOffset..] += g[gOffset..]`, unreduced. */
export function addPolynomial(
  f: Int16Array,
  fOffset: number,
  g: Int16Array,
  gOffset: number,
): void {
  for (let j = 0; j < N; j++) f[fOffset + j] = f[fOffset + j]! + g[gOffset + j]!;
}

/** `f[fOffset..] = g[gOffset..] − f[fOffset..]`, unreduced. */
export function subtractFromPolynomial(
  f: Int16Array,
  fOffset: number,
  g: Int16Array,
  gOffset: number,
): void {
  for (let j = 0; j < N; j++) f[fOffset + j] = g[gOffset + j]! - f[fOffset + j]!;
}

/** Reduces `count` coefficients from `offset` on into [0, q). |f| < 2^16. */
export function canonicalize(f: Int16Array, offset: number, count: number): void {
  for (let j = offset; j < offset + count; j++) f[j] = canonical(f[j]!);
}

/**
 * SamplePolyCBD_2 (FIPS 203 Algorithm 8, η = 2) of 128 PRF bytes into the polynomial at
 * `offset`, as values in [−2, 2]. Bits are taken little-endian, four per coefficient (two
 * added, two subtracted), so each byte yields two coefficients. Branch- and table-free: the
 * bytes are secret.
 */
export function samplePolyCbd2(bytes: Uint8Array, f: Int16Array, offset: number): void {
  for (let i = 0; i < 128; i++) {
    const byte = bytes[i]!;
    // Each 2-bit field of `pairs` holds the popcount of the same two bits of `byte`.
    const pairs = (byte & 0x55) + ((byte >> 1) & 0x55);
    f[offset + 2 * i] = (pairs & 3) - ((pairs >> 2) & 3);
    f[offset + 2 * i + 1] = ((pairs >> 4) & 3) - ((pairs >> 6) & 3);
  }
}

/**
 * Rejection-samples NTT coefficients (FIPS 203 Algorithm 7's loop) from an XOF stream: each
 * 3 bytes give two 12-bit candidates, kept when below q. Fills the polynomial at `offset`
 * from coefficient `filled` on, reading bytes from `from` on, and returns how many
 * coefficients are now filled (256 when done).
 */
export function sampleNttFrom(
  bytes: Uint8Array,
  from: number,
  f: Int16Array,
  offset: number,
  filled: number,
): number {
  let count = filled;
  for (let i = from; i + 3 <= bytes.length && count < N; i += 3) {
    const b0 = bytes[i]!;
    const b1 = bytes[i + 1]!;
    const b2 = bytes[i + 2]!;
    const d1 = b0 | ((b1 & 15) << 8);
    const d2 = (b1 >> 4) | (b2 << 4);
    if (d1 < Q) f[offset + count++] = d1;
    if (d2 < Q && count < N) f[offset + count++] = d2;
  }
  return count;
}

/** ByteEncode_12 of `count` coefficients in [0, q) from `f[offset..]` into `out[outOffset..]`. */
export function encode12(
  f: Int16Array,
  offset: number,
  count: number,
  out: Uint8Array,
  outOffset: number,
): void {
  for (let i = 0, o = outOffset; i < count; i += 2, o += 3) {
    const a = f[offset + i]!;
    const b = f[offset + i + 1]!;
    out[o] = a;
    out[o + 1] = (a >> 8) | (b << 4);
    out[o + 2] = b >> 4;
  }
}

/**
 * ByteDecode_12 of `count` coefficients into [0, q) (fields ≥ q are reduced, as ByteDecode_12
 * specifies). Returns 1 when some 12-bit field was not below q, else 0: the FIPS 203 modulus
 * check of an encapsulation key is that this returns 0.
 */
export function decode12(
  bytes: Uint8Array,
  byteOffset: number,
  count: number,
  f: Int16Array,
  offset: number,
): number {
  let outOfRange = 0;
  for (let i = 0, o = byteOffset; i < count; i += 2, o += 3) {
    const b1 = bytes[o + 1]!;
    const a = bytes[o]! | ((b1 & 15) << 8);
    const b = (b1 >> 4) | (bytes[o + 2]! << 4);
    // (q − 1 − x) >> 31 is −1 exactly when x ≥ q.
    const aHigh = (Q - 1 - a) >> 31;
    const bHigh = (Q - 1 - b) >> 31;
    outOfRange |= aHigh | bHigh;
    f[offset + i] = a - (aHigh & Q);
    f[offset + i + 1] = b - (bHigh & Q);
  }
  return outOfRange & 1;
}

// Compress_d(x) = ⌈2^d·x / q⌋ mod 2^d = ⌊(2^d·x + ⌊q/2⌋) / q⌋ mod 2^d (q is odd: no ties). The
// quotient is a multiplication by 1/q rounded up to 40 bits, then truncation: exact for
// numerators below 2^28 (error < 2^-12 < 1/q), and with no division or secret-indexed table.
const ONE_OVER_Q = Math.ceil(2 ** 40 / Q) / 2 ** 40;

/** Compress_10 of any |x| < 2^16. */
export function compress10(x: number): number {
  return ((1024 * canonical(x) + 1664) * ONE_OVER_Q) & 1023;
}

/** Compress_4 of any |x| < 2^16. */
export function compress4(x: number): number {
  return ((16 * canonical(x) + 1664) * ONE_OVER_Q) & 15;
}

/** Compress_1 of any |x| < 2^16: 1 exactly when x mod q is in [833, 2496] (closer to q/2 than 0). */
export function compress1(x: number): number {
  const r = canonical(x);
  return 1 + (((r - 833) | (2496 - r)) >> 31);
}

/** ByteEncode_10(Compress_10(u)) of `count` coefficients (|u| < 2^16): ciphertext part c1. */
export function compressEncode10(
  u: Int16Array,
  count: number,
  out: Uint8Array,
  outOffset: number,
): void {
  for (let i = 0, o = outOffset; i < count; i += 4, o += 5) {
    const c0 = compress10(u[i]!);
    const c1 = compress10(u[i + 1]!);
    const c2 = compress10(u[i + 2]!);
    const c3 = compress10(u[i + 3]!);
    out[o] = c0;
    out[o + 1] = (c0 >> 8) | (c1 << 2);
    out[o + 2] = (c1 >> 6) | (c2 << 4);
    out[o + 3] = (c2 >> 4) | (c3 << 6);
    out[o + 4] = c3 >> 2;
  }
}

/** Decompress_10(ByteDecode_10(c1)) into `u[0..count)`, in [0, q). */
export function decodeDecompress10(
  bytes: Uint8Array,
  byteOffset: number,
  count: number,
  u: Int16Array,
): void {
  for (let i = 0, o = byteOffset; i < count; i += 4, o += 5) {
    const b1 = bytes[o + 1]!;
    const b2 = bytes[o + 2]!;
    const b3 = bytes[o + 3]!;
    const c0 = bytes[o]! | ((b1 & 3) << 8);
    const c1 = (b1 >> 2) | ((b2 & 15) << 6);
    const c2 = (b2 >> 4) | ((b3 & 63) << 4);
    const c3 = (b3 >> 6) | (bytes[o + 4]! << 2);
    // Decompress_10(y) = ⌈q·y / 2^10⌋.
    u[i] = (c0 * Q + 512) >> 10;
    u[i + 1] = (c1 * Q + 512) >> 10;
    u[i + 2] = (c2 * Q + 512) >> 10;
    u[i + 3] = (c3 * Q + 512) >> 10;
  }
}

/** ByteEncode_4(Compress_4(v)) of one polynomial (|v| < 2^16): ciphertext part c2. */
export function compressEncode4(
  v: Int16Array,
  offset: number,
  out: Uint8Array,
  outOffset: number,
): void {
  for (let i = 0; i < 128; i++) {
    const c0 = compress4(v[offset + 2 * i]!);
    const c1 = compress4(v[offset + 2 * i + 1]!);
    out[outOffset + i] = c0 | (c1 << 4);
  }
}

/** Decompress_4(ByteDecode_4(c2)) into one polynomial, in [0, q). */
export function decodeDecompress4(
  bytes: Uint8Array,
  byteOffset: number,
  v: Int16Array,
  offset: number,
): void {
  for (let i = 0; i < 128; i++) {
    const byte = bytes[byteOffset + i]!;
    v[offset + 2 * i] = ((byte & 15) * Q + 8) >> 4;
    v[offset + 2 * i + 1] = ((byte >> 4) * Q + 8) >> 4;
  }
}

/** `f[offset..] += Decompress_1(ByteDecode_1(m))`: each message bit adds 0 or ⌈q/2⌋ = 1665. */
export function addMessage(m: Uint8Array, f: Int16Array, offset: number): void {
  for (let i = 0; i < N; i++) {
    const bit = (m[i >> 3]! >> (i & 7)) & 1;
    f[offset + i] = f[offset + i]! + (-bit & 1665);
  }
}

/** ByteEncode_1(Compress_1(w)) of one polynomial (|w| < 2^16) into 32 bytes. */
export function compressEncode1(w: Int16Array, offset: number, out: Uint8Array): void {
  for (let byte = 0; byte < 32; byte++) {
    let bits = 0;
    for (let bit = 0; bit < 8; bit++) {
      bits |= compress1(w[offset + 8 * byte + bit]!) << bit;
    }
    out[byte] = bits;
  }
}
