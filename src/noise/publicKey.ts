import * as z from 'zod';
import { bytesEqual, copyBytes, decodeCanonicalBase64, encodeBase64 } from './bytes.js';
import { MLKEM768_PUBLIC_KEY_LENGTH, NOISE_CHANNEL_SUITE, X25519_KEY_LENGTH } from './constants.js';
import { NoisePublicKeyError } from './errors.js';

/**
 * Wire shape of a `NoiseChannelPublicKey` (registry JSON, snake_case, exactly three strings;
 * unknown fields rejected like serde's `deny_unknown_fields`). Any suite string parses here;
 * {@link NoiseChannelPublicKey.fromJSON} checks the suite and the key encodings.
 */
export const noiseChannelPublicKeyJsonSchema = z.strictObject({
  suite: z.string(),
  x25519_public_key: z.string(),
  mlkem768_public_key: z.string(),
});

/**
 * A Noise public key as the registry carries it: base64 X25519 and ML-KEM-768 public keys
 * (`NoiseChannelPublicKey.fromJSON` validates it).
 */
export type NoiseChannelPublicKeyJson = z.infer<typeof noiseChannelPublicKeyJsonSchema>;

// Assigned by the class's static block (see publicKeyRawKeys below).
let readRawKeys: (key: NoiseChannelPublicKey) => {
  dhPublicKey: Uint8Array;
  kemPublicKey: Uint8Array;
};

/**
 * A party's static public key: X25519 (32 bytes) plus ML-KEM-768 encapsulation key (1184
 * bytes). Immutable; compare with {@link equals}. Serializes to the registry JSON with
 * canonical padded base64, so two equal keys always produce identical strings.
 */
export class NoiseChannelPublicKey {
  readonly #x25519: Uint8Array;
  readonly #mlkem768: Uint8Array;

  private constructor(x25519: Uint8Array, mlkem768: Uint8Array) {
    this.#x25519 = x25519;
    this.#mlkem768 = mlkem768;
  }

  /** Builds a key from raw bytes (copied); throws {@link NoisePublicKeyError} on a wrong length. */
  static fromRaw(
    x25519PublicKey: Uint8Array,
    mlkem768PublicKey: Uint8Array,
  ): NoiseChannelPublicKey {
    if (x25519PublicKey.length !== X25519_KEY_LENGTH) {
      throw new NoisePublicKeyError('invalid X25519 public key length');
    }
    if (mlkem768PublicKey.length !== MLKEM768_PUBLIC_KEY_LENGTH) {
      throw new NoisePublicKeyError('invalid ML-KEM-768 public key length');
    }
    return new NoiseChannelPublicKey(copyBytes(x25519PublicKey), copyBytes(mlkem768PublicKey));
  }

  /**
   * Parses and validates registry JSON (an object, not a string). Throws
   * {@link NoisePublicKeyError} for unknown/missing fields, another suite label, bad base64
   * or a wrong key length — the same checks codex runs before a handshake.
   */
  static fromJSON(value: unknown): NoiseChannelPublicKey {
    if (value instanceof NoiseChannelPublicKey) return value;
    const parsed = noiseChannelPublicKeyJsonSchema.safeParse(value);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new NoisePublicKeyError(
        `expected an object with exactly suite, x25519_public_key and mlkem768_public_key (${issues})`,
      );
    }
    const json = parsed.data;
    if (json.suite !== NOISE_CHANNEL_SUITE) {
      throw new NoisePublicKeyError('unsupported Noise channel suite');
    }
    const x25519 = decodeCanonicalBase64(json.x25519_public_key);
    if (x25519 === undefined) throw new NoisePublicKeyError('invalid X25519 public key');
    const mlkem768 = decodeCanonicalBase64(json.mlkem768_public_key);
    if (mlkem768 === undefined) throw new NoisePublicKeyError('invalid ML-KEM-768 public key');
    return NoiseChannelPublicKey.fromRaw(x25519, mlkem768);
  }

  /** The 32-byte X25519 public key (a copy). */
  get x25519PublicKey(): Uint8Array {
    return this.#x25519.slice();
  }

  /** The 1184-byte ML-KEM-768 encapsulation key (a copy). */
  get mlkem768PublicKey(): Uint8Array {
    return this.#mlkem768.slice();
  }

  /** True when both the X25519 and the ML-KEM-768 keys are equal. */
  equals(other: NoiseChannelPublicKey): boolean {
    return bytesEqual(this.#x25519, other.#x25519) && bytesEqual(this.#mlkem768, other.#mlkem768);
  }

  /** The registry's JSON form: the suite name and both keys in base64. */
  toJSON(): NoiseChannelPublicKeyJson {
    return {
      suite: NOISE_CHANNEL_SUITE,
      x25519_public_key: encodeBase64(this.#x25519),
      mlkem768_public_key: encodeBase64(this.#mlkem768),
    };
  }

  /** A short form for logs: the suite's X25519 key in base64. */
  toString(): string {
    return `NoiseChannelPublicKey(x25519=${encodeBase64(this.#x25519)})`;
  }

  static {
    readRawKeys = (key) => ({ dhPublicKey: key.#x25519, kemPublicKey: key.#mlkem768 });
  }
}

/**
 * Internal to `src/noise`: the stored arrays without copying (their stable identity lets the
 * ML-KEM layer cache the expanded key). Not exported from the package.
 */
export function publicKeyRawKeys(key: NoiseChannelPublicKey): {
  dhPublicKey: Uint8Array;
  kemPublicKey: Uint8Array;
} {
  return readRawKeys(key);
}
