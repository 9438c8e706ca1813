import {
  MLKEM768_CIPHERTEXT_LENGTH,
  MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH,
  MLKEM768_PUBLIC_KEY_LENGTH,
  MLKEM768_SECRET_KEY_LENGTH,
  MLKEM768_SEED_LENGTH,
} from './constants.js';
import {
  N,
  addMessage,
  addPolynomial,
  compressEncode1,
  compressEncode10,
  compressEncode4,
  decode12,
  decodeDecompress10,
  decodeDecompress4,
  encode12,
  fromMontgomery,
  canonicalize,
  innerProductNtt3,
  inverseNttFromMontgomery,
  ntt,
  samplePolyCbd2,
  sampleNttFrom,
  subtractFromPolynomial,
} from './mlkemRing.js';
import { platform, platformCrypto } from '../platform/index.js';

/**
 * ML-KEM-768 (FIPS 203) with its hash functions from the platform seam (on Node OpenSSL's
 * SHA3-256, SHA3-512, SHAKE128 and SHAKE256; in browsers `@noble/hashes`) and the ring arithmetic of `mlkemRing.ts`. Byte-identical to
 * `@noble/post-quantum`'s `ml_kem768` (spec/noise/nodeMlKem768.spec.ts checks it), with Keccak
 * running natively (`bench/noise-handshake.ts` compares the providers).
 *
 * Expanded keys are cached, as the provider contract allows:
 *  - public keys (t̂ decoded, the matrix Â sampled, H(ek)) in a small LRU keyed by the key's
 *    bytes, so static keys that recur on every handshake skip the nine SHAKE128 expansions. A
 *    key is kept from its second encapsulation on: an ephemeral key, encapsulated to once,
 *    is expanded into scratch space and neither allocates nor pushes static keys out;
 *  - secret keys (ŝ, the embedded public key's expansion, H(ek), z) per secret-key array
 *    instance; key generation seeds that entry, so an ephemeral key's decapsulation reuses
 *    the Â its generation sampled. No secret-derived value is ever a map key.
 *
 * Secret intermediates (seeds, PRF output, the message, K and r) are zeroed after use, as far
 * as JavaScript allows; the scratch polynomials are cleared at the end of each operation.
 */

const K = 3;
const POLY_BYTES = 384; // ByteEncode_12 of one polynomial
const VECTOR_BYTES = K * POLY_BYTES; // 1152
const C1_BYTES = (K * N * 10) / 8; // 960
const ENCAPSULATION_CACHE_SIZE = 32;
const SEEN_ONCE_SIZE = 64;

// dk = dk_pke (1152) ‖ ek (1184) ‖ H(ek) (32) ‖ z (32)
const DK_EK_OFFSET = VECTOR_BYTES;
const DK_HASH_OFFSET = DK_EK_OFFSET + MLKEM768_PUBLIC_KEY_LENGTH;
const DK_Z_OFFSET = DK_HASH_OFFSET + 32;

/** A public key prepared for encryption: t̂ and Â (row-major, Â[i][j] at 256·(3i + j)). */
interface ExpandedPublicKey {
  readonly tHat: Int16Array;
  readonly aHat: Int16Array;
  readonly publicKeyHash: Uint8Array;
}

interface ExpandedSecretKey {
  readonly sHat: Int16Array;
  readonly publicKey: ExpandedPublicKey;
  readonly z: Uint8Array;
}

const expandedByPublicKey = new Map<string, ExpandedPublicKey>();
/** Public keys encapsulated to once (and not kept yet), oldest first. */
const seenOnce = new Set<string>();
const expandedBySecretKey = new WeakMap<Uint8Array, ExpandedSecretKey>();

// Scratch space, reused by every call (all of this is synchronous, so calls never interleave).
const scratchVector = new Int16Array(K * N);
const scratchNoise = new Int16Array(K * N);
const scratchPoly = new Int16Array(N);
const scratchMessage = new Uint8Array(32);
const scratchCipherText = new Uint8Array(MLKEM768_CIPHERTEXT_LENGTH);
const scratchTHat = new Int16Array(K * N);
const scratchAHat = new Int16Array(K * K * N);

function clearScratch(): void {
  scratchVector.fill(0);
  scratchNoise.fill(0);
  scratchPoly.fill(0);
  scratchMessage.fill(0);
}

/** H: SHA3-256. */
function sha3_256(bytes: Uint8Array): Uint8Array {
  return platformCrypto.sha3_256(bytes);
}

const gInput = new Uint8Array(64);

/** G: SHA3-512 of `a ‖ b` (32 bytes each, or `b` a single byte in key generation). */
function sha3_512(a: Uint8Array, b: Uint8Array): Uint8Array {
  gInput.set(a, 0);
  gInput.set(b, 32);
  const digest = platformCrypto.sha3_512(gInput.subarray(0, 32 + b.length));
  gInput.fill(0);
  return digest;
}

/** PRF_2(s, b) = SHAKE256(s ‖ b, 128 bytes), sampled straight into the polynomial at `offset`. */
function samplePrfCbd2(
  seedAndNonce: Uint8Array,
  nonce: number,
  f: Int16Array,
  offset: number,
): void {
  seedAndNonce[32] = nonce;
  const bytes = platformCrypto.shake256(128, seedAndNonce);
  samplePolyCbd2(bytes, f, offset);
  bytes.fill(0);
}

// 3 SHAKE128 blocks hold 336 candidates; 256 of them are below q with probability ≈ 99%.
const SAMPLE_NTT_FIRST_SQUEEZE = 3 * 168;

/** Â[i][j] = SampleNTT(ρ ‖ j ‖ i) for all i, j (FIPS 203 Algorithm 13, lines 3–7). */
function sampleMatrix(rho: Uint8Array, aHat: Int16Array): Int16Array {
  const input = new Uint8Array(34);
  input.set(rho.subarray(0, 32));
  for (let i = 0; i < K; i++) {
    for (let j = 0; j < K; j++) {
      input[32] = j;
      input[33] = i;
      const offset = N * (K * i + j);
      let length = SAMPLE_NTT_FIRST_SQUEEZE;
      let stream = platformCrypto.shake128(input, length);
      let filled = sampleNttFrom(stream, 0, aHat, offset, 0);
      // Rare shortfall: squeeze a longer stream (same prefix) and resume where we stopped.
      while (filled < N) {
        const consumed = length;
        length *= 2;
        stream = platformCrypto.shake128(input, length);
        filled = sampleNttFrom(stream, consumed, aHat, offset, filled);
      }
    }
  }
  return aHat;
}

/** Drops the oldest entry of a Map or Set kept in insertion (recency) order when it is full. */
function makeRoom(lru: Set<string> | Map<string, unknown>, limit: number): void {
  if (lru.size < limit) return;
  const oldest = lru.keys().next();
  if (oldest.done !== true) lru.delete(oldest.value);
}

/**
 * The expansion of an encapsulation key, validated as FIPS 203 §7.2 requires (length, and every
 * coefficient of t̂ below q: the "modulus check"). Cached by the key's bytes (as a latin1
 * string: cheaper to build and look up than hashing the key).
 */
function expandPublicKey(
  publicKey: Uint8Array,
  keep: 'always' | 'when-seen-before',
  what = 'ML-KEM-768 public key',
): ExpandedPublicKey {
  if (publicKey.length !== MLKEM768_PUBLIC_KEY_LENGTH) {
    throw new RangeError(
      `${what} must be ${MLKEM768_PUBLIC_KEY_LENGTH} bytes, got ${publicKey.length}`,
    );
  }
  const cacheKey = platform.base64Encode(publicKey);
  const cached = expandedByPublicKey.get(cacheKey);
  if (cached !== undefined) {
    // Refresh recency: Map iteration order is insertion order.
    expandedByPublicKey.delete(cacheKey);
    expandedByPublicKey.set(cacheKey, cached);
    return cached;
  }
  const kept = keep === 'always' || seenOnce.delete(cacheKey);
  const tHat = kept ? new Int16Array(K * N) : scratchTHat;
  if (decode12(publicKey, 0, K * N, tHat, 0) !== 0) {
    throw new RangeError(
      `invalid ${what}: a coefficient is not below q = 3329 (FIPS 203 modulus check)`,
    );
  }
  const rho = publicKey.subarray(VECTOR_BYTES);
  const expanded: ExpandedPublicKey = {
    tHat,
    aHat: sampleMatrix(rho, kept ? new Int16Array(K * K * N) : scratchAHat),
    publicKeyHash: sha3_256(publicKey),
  };
  if (kept) {
    makeRoom(expandedByPublicKey, ENCAPSULATION_CACHE_SIZE);
    expandedByPublicKey.set(cacheKey, expanded);
  } else {
    makeRoom(seenOnce, SEEN_ONCE_SIZE);
    seenOnce.add(cacheKey);
  }
  return expanded;
}

/**
 * K-PKE.Encrypt (FIPS 203 Algorithm 14) of the 32-byte message `m` with randomness `r`
 * into `out` (1088 bytes).
 */
function encrypt(key: ExpandedPublicKey, m: Uint8Array, r: Uint8Array, out: Uint8Array): void {
  const seed = new Uint8Array(33);
  seed.set(r.subarray(0, 32));
  const y = scratchVector;
  const noise = scratchNoise;
  for (let i = 0; i < K; i++) samplePrfCbd2(seed, i, y, N * i);
  for (let i = 0; i < K; i++) ntt(y, N * i);
  const { aHat, tHat } = key;
  // u = NTT^-1(Âᵀ ∘ ŷ) + e1
  for (let i = 0; i < K; i++) {
    innerProductNtt3(noise, N * i, aHat, N * i, N * (K + i), N * (2 * K + i), y, 0, N, 2 * N);
  }
  const e = scratchPoly;
  for (let i = 0; i < K; i++) {
    inverseNttFromMontgomery(noise, N * i);
    samplePrfCbd2(seed, K + i, e, 0);
    addPolynomial(noise, N * i, e, 0);
  }
  compressEncode10(noise, K * N, out, 0);
  // v = NTT^-1(t̂ᵀ ∘ ŷ) + e2 + Decompress_1(m)
  innerProductNtt3(noise, 0, tHat, 0, N, 2 * N, y, 0, N, 2 * N);
  inverseNttFromMontgomery(noise, 0);
  samplePrfCbd2(seed, 2 * K, e, 0);
  addPolynomial(noise, 0, e, 0);
  addMessage(m, noise, 0);
  compressEncode4(noise, 0, out, C1_BYTES);
  seed.fill(0);
}

/** K-PKE.Decrypt (FIPS 203 Algorithm 15) into `out` (32 bytes). */
function decrypt(sHat: Int16Array, cipherText: Uint8Array, out: Uint8Array): void {
  const u = scratchVector;
  decodeDecompress10(cipherText, 0, K * N, u);
  for (let i = 0; i < K; i++) ntt(u, N * i);
  const w = scratchPoly;
  innerProductNtt3(w, 0, sHat, 0, N, 2 * N, u, 0, N, 2 * N);
  inverseNttFromMontgomery(w, 0);
  const v = scratchNoise;
  decodeDecompress4(cipherText, C1_BYTES, v, 0);
  subtractFromPolynomial(w, 0, v, 0); // w = v − NTT^-1(ŝᵀ ∘ NTT(u))
  compressEncode1(w, 0, out);
}

/** ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithms 13 and 16) from the seed `d ‖ z`. */
export function nodeMlKem768KeyPair(seed: Uint8Array): {
  publicKey: Uint8Array;
  secretKey: Uint8Array;
} {
  if (seed.length !== MLKEM768_SEED_LENGTH) {
    throw new RangeError(
      `ML-KEM-768 seed must be ${MLKEM768_SEED_LENGTH} bytes, got ${seed.length}`,
    );
  }
  // (ρ, σ) = G(d ‖ k)
  const rhoSigma = sha3_512(seed.subarray(0, 32), Uint8Array.of(K));
  const rho = new Uint8Array(rhoSigma.subarray(0, 32));
  const sigma = new Uint8Array(33);
  sigma.set(rhoSigma.subarray(32, 64));
  rhoSigma.fill(0);
  const aHat = sampleMatrix(rho, new Int16Array(K * K * N));
  const sHat = new Int16Array(K * N);
  for (let i = 0; i < K; i++) samplePrfCbd2(sigma, i, sHat, N * i);
  const tHat = new Int16Array(K * N);
  for (let i = 0; i < K; i++) samplePrfCbd2(sigma, K + i, tHat, N * i); // e, NTT'd below
  sigma.fill(0);
  for (let i = 0; i < K; i++) {
    ntt(sHat, N * i);
    ntt(tHat, N * i);
  }
  const product = scratchPoly;
  for (let i = 0; i < K; i++) {
    // t̂_i = Σ_j Â[i][j] ∘ ŝ_j + ê_i
    innerProductNtt3(
      product,
      0,
      aHat,
      N * K * i,
      N * (K * i + 1),
      N * (K * i + 2),
      sHat,
      0,
      N,
      2 * N,
    );
    fromMontgomery(product, 0);
    addPolynomial(tHat, N * i, product, 0);
  }
  canonicalize(tHat, 0, K * N);
  canonicalize(sHat, 0, K * N);
  const secretKey = new Uint8Array(MLKEM768_SECRET_KEY_LENGTH);
  encode12(sHat, 0, K * N, secretKey, 0);
  encode12(tHat, 0, K * N, secretKey, DK_EK_OFFSET);
  secretKey.set(rho, DK_EK_OFFSET + VECTOR_BYTES);
  const publicKey = secretKey.slice(DK_EK_OFFSET, DK_HASH_OFFSET);
  const publicKeyHash = sha3_256(publicKey);
  secretKey.set(publicKeyHash, DK_HASH_OFFSET);
  const z = seed.slice(32, 64);
  secretKey.set(z, DK_Z_OFFSET);
  expandedBySecretKey.set(secretKey, {
    sHat,
    publicKey: { tHat, aHat, publicKeyHash },
    z,
  });
  clearScratch();
  return { publicKey, secretKey };
}

/** ML-KEM.Encaps_internal(ek, m) (FIPS 203 Algorithm 17) with the input check of §7.2. */
export function nodeMlKem768Encapsulate(
  publicKey: Uint8Array,
  randomness: Uint8Array,
): { cipherText: Uint8Array; sharedSecret: Uint8Array } {
  if (randomness.length !== MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH) {
    throw new RangeError(
      `ML-KEM-768 encapsulation randomness must be ${MLKEM768_ENCAPSULATION_RANDOMNESS_LENGTH} bytes, got ${randomness.length}`,
    );
  }
  const key = expandPublicKey(publicKey, 'when-seen-before');
  // (K, r) = G(m ‖ H(ek))
  const kr = sha3_512(randomness, key.publicKeyHash);
  const cipherText = new Uint8Array(MLKEM768_CIPHERTEXT_LENGTH);
  encrypt(key, randomness, kr.subarray(32, 64), cipherText);
  const sharedSecret = new Uint8Array(kr.subarray(0, 32));
  kr.fill(0);
  clearScratch();
  return { cipherText, sharedSecret };
}

function expandSecretKey(secretKey: Uint8Array): ExpandedSecretKey {
  let expanded = expandedBySecretKey.get(secretKey);
  if (expanded !== undefined) return expanded;
  // FIPS 203 §7.3 hash check: H(ek) stored in dk must match the embedded ek.
  const embedded = secretKey.subarray(DK_EK_OFFSET, DK_HASH_OFFSET);
  const publicKeyHash = sha3_256(embedded);
  let difference = 0;
  for (let i = 0; i < 32; i++) difference |= publicKeyHash[i]! ^ secretKey[DK_HASH_OFFSET + i]!;
  if (difference !== 0) {
    throw new RangeError(
      'invalid ML-KEM-768 secret key: the embedded public key does not match its hash (FIPS 203 hash check)',
    );
  }
  const sHat = new Int16Array(K * N);
  decode12(secretKey, 0, K * N, sHat, 0);
  expanded = {
    sHat,
    publicKey: expandPublicKey(embedded, 'always', "ML-KEM-768 secret key's embedded public key"),
    z: secretKey.slice(DK_Z_OFFSET, DK_Z_OFFSET + 32),
  };
  expandedBySecretKey.set(secretKey, expanded);
  return expanded;
}

/**
 * ML-KEM.Decaps_internal(dk, c) (FIPS 203 Algorithm 18) with the input checks of §7.3. A
 * ciphertext that does not re-encrypt identically yields the implicit-rejection secret
 * J(z ‖ c); the comparison and the choice run without data-dependent branches.
 */
export function nodeMlKem768Decapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array {
  if (cipherText.length !== MLKEM768_CIPHERTEXT_LENGTH) {
    throw new RangeError(
      `ML-KEM-768 ciphertext must be ${MLKEM768_CIPHERTEXT_LENGTH} bytes, got ${cipherText.length}`,
    );
  }
  if (secretKey.length !== MLKEM768_SECRET_KEY_LENGTH) {
    throw new RangeError(
      `ML-KEM-768 secret key must be ${MLKEM768_SECRET_KEY_LENGTH} bytes, got ${secretKey.length}`,
    );
  }
  const key = expandSecretKey(secretKey);
  const m = scratchMessage;
  decrypt(key.sHat, cipherText, m);
  // (K', r') = G(m' ‖ h)
  const kr = sha3_512(m, key.publicKey.publicKeyHash);
  const reencrypted = scratchCipherText;
  encrypt(key.publicKey, m, kr.subarray(32, 64), reencrypted);
  const rejection = platformCrypto.shake256(32, key.z, cipherText);
  let difference = 0;
  for (let i = 0; i < MLKEM768_CIPHERTEXT_LENGTH; i++) {
    difference |= cipherText[i]! ^ reencrypted[i]!;
  }
  const keep = (difference - 1) >> 31; // −1 when the ciphertexts match, else 0
  const sharedSecret = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    sharedSecret[i] = (kr[i]! & keep) | (rejection[i]! & ~keep);
  }
  kr.fill(0);
  rejection.fill(0);
  reencrypted.fill(0);
  clearScratch();
  return sharedSecret;
}
