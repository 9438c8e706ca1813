/**
 * The primitives the Noise channel needs, behind one small interface so the same handshake
 * code runs on `node:crypto` (fast) or on the `@noble/*` libraries (portable). Every method
 * is synchronous and returns plain `Uint8Array`s. A provider may cache a derived form of a key
 * (an OpenSSL key object, an expanded ML-KEM key) only per key *array instance* (a `WeakMap`),
 * so it lives no longer than the caller's own copy of the key; callers therefore never mutate a
 * key array after handing it to a provider.
 */

/**
 * Source of random bytes, a fresh array per call (the handshake zeroes what it drew once used).
 * Tests inject a deterministic one (the vectors' DummyRng).
 */
export type RandomSource = (length: number) => Uint8Array;

export interface NoiseCryptoProvider {
  /** Short name for diagnostics and benchmarks, e.g. `node` or `noble`. */
  readonly name: string;

  /** Cryptographically secure random bytes. */
  randomBytes(length: number): Uint8Array;

  /** X25519 public key of a 32-byte private key (clamped as RFC 7748 says). */
  x25519PublicKey(privateKey: Uint8Array): Uint8Array;
  /** X25519 shared secret; throws when the peer key is unusable (e.g. an all-zero result). */
  x25519SharedSecret(privateKey: Uint8Array, publicKey: Uint8Array): Uint8Array;

  /** ML-KEM-768 key pair from a 64-byte seed `d ‖ z` (FIPS 203 `ML-KEM.KeyGen_internal`). */
  mlkem768KeyPair(seed: Uint8Array): { publicKey: Uint8Array; secretKey: Uint8Array };
  /** Encapsulates to `publicKey` with the 32-byte randomness `m`; throws on a malformed key. */
  mlkem768Encapsulate(
    publicKey: Uint8Array,
    randomness: Uint8Array,
  ): { cipherText: Uint8Array; sharedSecret: Uint8Array };
  /** Decapsulates with the 2400-byte secret key (implicit rejection: never throws on a bad ct). */
  mlkem768Decapsulate(cipherText: Uint8Array, secretKey: Uint8Array): Uint8Array;

  /** AES-256-GCM encryption; returns ciphertext ‖ 16-byte tag. */
  aes256GcmSeal(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    plaintext: Uint8Array,
  ): Uint8Array;
  /**
   * `aes256GcmSeal` written into `target` at `offset` (ciphertext, then the 16-byte tag), for
   * callers that frame the ciphertext in place; returns the bytes written. `target` must not
   * overlap `plaintext`.
   */
  aes256GcmSealInto(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    plaintext: Uint8Array,
    target: Uint8Array,
    offset: number,
  ): number;
  /** AES-256-GCM decryption of ciphertext ‖ tag; `undefined` when authentication fails. */
  aes256GcmOpen(
    key: Uint8Array,
    nonce: Uint8Array,
    associatedData: Uint8Array,
    ciphertext: Uint8Array,
  ): Uint8Array | undefined;

  /** SHA-256 of the concatenation of `parts`. */
  sha256(...parts: Uint8Array[]): Uint8Array;
  /** HMAC-SHA-256 of the concatenation of `parts` under `key`. */
  hmacSha256(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array;
}
