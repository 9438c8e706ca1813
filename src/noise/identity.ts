import { copyBytes } from './bytes.js';
import { MLKEM768_SEED_LENGTH, X25519_KEY_LENGTH } from './constants.js';
import type { NoiseCryptoProvider, RandomSource } from './cryptoProvider.js';
import { NoiseKeyGenerationError } from './errors.js';
import type { LocalKeys } from './handshakeState.js';
import { platformCryptoProvider } from './platformCryptoProvider.js';
import { NoiseChannelPublicKey, type NoiseChannelPublicKeyJson } from './publicKey.js';

/** Node's `util.inspect.custom` (a registered symbol: no `node:util` import needed). */
const INSPECT_CUSTOM = Symbol.for('nodejs.util.inspect.custom');

/** How a Noise identity derives its keys. */
export interface NoiseIdentityOptions {
  /**
   * Primitives to derive the keys with (default `platformCryptoProvider`, the platform's
   * primitives).
   */
  readonly crypto?: NoiseCryptoProvider;
}

/** Options of `NoiseChannelIdentity.generate`: the provider and the randomness. */
export interface NoiseIdentityGenerateOptions extends NoiseIdentityOptions {
  /** Randomness (default: the provider's CSPRNG). Draws 32 bytes (X25519), then 64 (ML-KEM). */
  readonly random?: RandomSource;
}

/** Secret material of an identity, for deterministic tests or keys kept by the application. */
export interface NoiseIdentitySecrets {
  /** 32-byte X25519 private key. */
  readonly x25519PrivateKey: Uint8Array;
  /** 64-byte ML-KEM-768 seed `d ‖ z`. */
  readonly mlkem768Seed: Uint8Array;
}

// Assigned by the class's static block; keeps the private keys reachable only inside src/noise.
let readSecrets: (identity: NoiseChannelIdentity) => LocalKeys;

/**
 * A static Noise identity: one X25519 key pair and one ML-KEM-768 key pair. Generate one per
 * process (executor) or per environment (harness) and reuse it across reconnects. The private
 * halves live in private fields and are never serialized: `JSON.stringify` and `inspect` show
 * only the public key.
 */
export class NoiseChannelIdentity {
  readonly #secrets: LocalKeys;
  readonly #publicKey: NoiseChannelPublicKey;

  private constructor(secrets: LocalKeys, publicKey: NoiseChannelPublicKey) {
    this.#secrets = secrets;
    this.#publicKey = publicKey;
  }

  /** A fresh identity from the CSPRNG (or the injected `random`). */
  static generate(options: NoiseIdentityGenerateOptions = {}): NoiseChannelIdentity {
    const crypto = options.crypto ?? platformCryptoProvider;
    const random = options.random ?? ((length: number) => crypto.randomBytes(length));
    return NoiseChannelIdentity.fromSecrets(
      { x25519PrivateKey: random(X25519_KEY_LENGTH), mlkem768Seed: random(MLKEM768_SEED_LENGTH) },
      options,
    );
  }

  /** An identity from known secrets (copied). Throws {@link NoiseKeyGenerationError} on bad sizes. */
  static fromSecrets(
    secrets: NoiseIdentitySecrets,
    options: NoiseIdentityOptions = {},
  ): NoiseChannelIdentity {
    const crypto = options.crypto ?? platformCryptoProvider;
    if (secrets.x25519PrivateKey.length !== X25519_KEY_LENGTH) {
      throw new NoiseKeyGenerationError(
        `the X25519 private key must be ${X25519_KEY_LENGTH} bytes`,
      );
    }
    if (secrets.mlkem768Seed.length !== MLKEM768_SEED_LENGTH) {
      throw new NoiseKeyGenerationError(
        `the ML-KEM-768 seed must be ${MLKEM768_SEED_LENGTH} bytes`,
      );
    }
    let keys: LocalKeys;
    try {
      const dhPrivateKey = copyBytes(secrets.x25519PrivateKey);
      const kem = crypto.mlkem768KeyPair(secrets.mlkem768Seed);
      keys = {
        dhPrivateKey,
        dhPublicKey: crypto.x25519PublicKey(dhPrivateKey),
        kemPublicKey: kem.publicKey,
        kemSecretKey: kem.secretKey,
      };
    } catch (error) {
      throw new NoiseKeyGenerationError(error instanceof Error ? error.message : String(error), {
        cause: error,
      });
    }
    return new NoiseChannelIdentity(
      keys,
      NoiseChannelPublicKey.fromRaw(keys.dhPublicKey, keys.kemPublicKey as Uint8Array),
    );
  }

  /** The public half, safe to share (what the registry and the peer see). */
  publicKey(): NoiseChannelPublicKey {
    return this.#publicKey;
  }

  /** Serializes the public projection only. */
  toJSON(): NoiseChannelPublicKeyJson {
    return this.#publicKey.toJSON();
  }

  /** Names the public key only; the secret keys never appear in strings or logs. */
  toString(): string {
    return `NoiseChannelIdentity(${this.#publicKey.toString()})`;
  }

  /** What `console.log` and `util.inspect` show: `toString()`, never the secret keys. */
  [INSPECT_CUSTOM](): string {
    return this.toString();
  }

  static {
    readSecrets = (identity) => identity.#secrets;
  }
}

/** Internal to `src/noise`: the handshake needs the private keys. Not exported from the package. */
export function identityKeys(identity: NoiseChannelIdentity): LocalKeys {
  return readSecrets(identity);
}
