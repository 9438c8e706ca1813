import { EMPTY_BYTES } from './bytes.js';
import { CipherState } from './cipherState.js';
import { HASH_LENGTH } from './constants.js';
import type { NoiseCryptoProvider } from './cryptoProvider.js';

const ONE = Uint8Array.of(1);
const TWO = Uint8Array.of(2);
const THREE = Uint8Array.of(3);

/** Thrown inside the handshake engine when an AEAD check fails; mapped to a typed error there. */
export class HandshakeDecryptFailure extends Error {}

/**
 * Noise `SymmetricState` with SHA-256 and AES-256-GCM (Noise spec §5.2). Protocol-name
 * agnostic: the same code runs the classical `Noise_IK_25519_AESGCM_SHA256` vectors and the
 * hybrid codex suite. Secrets it replaces (chaining keys, handshake cipher keys, HKDF
 * intermediates) are overwritten with zeros, and `split` leaves none behind
 * (handshakeSecrets.spec.ts).
 */
export class SymmetricState {
  readonly #crypto: NoiseCryptoProvider;
  #chainingKey: Uint8Array;
  #hash: Uint8Array;
  #cipher: CipherState | undefined;

  constructor(crypto: NoiseCryptoProvider, protocolName: string) {
    this.#crypto = crypto;
    const name = new TextEncoder().encode(protocolName);
    let h: Uint8Array;
    if (name.length <= HASH_LENGTH) {
      h = new Uint8Array(HASH_LENGTH);
      h.set(name);
    } else {
      h = crypto.sha256(name);
    }
    this.#hash = h;
    this.#chainingKey = h;
  }

  /** The handshake hash `h` (a copy). */
  get handshakeHash(): Uint8Array {
    return this.#hash.slice();
  }

  get hasKey(): boolean {
    return this.#cipher !== undefined;
  }

  mixHash(data: Uint8Array): void {
    this.#hash = this.#crypto.sha256(this.#hash, data);
  }

  mixKey(inputKeyMaterial: Uint8Array): void {
    const [chainingKey, key] = this.#hkdf2(inputKeyMaterial);
    this.#replaceKeys(chainingKey, key);
  }

  mixKeyAndHash(inputKeyMaterial: Uint8Array): void {
    const temp = this.#crypto.hmacSha256(this.#chainingKey, inputKeyMaterial);
    const chainingKey = this.#crypto.hmacSha256(temp, ONE);
    const tempHash = this.#crypto.hmacSha256(temp, chainingKey, TWO);
    const key = this.#crypto.hmacSha256(temp, tempHash, THREE);
    temp.fill(0);
    this.mixHash(tempHash);
    this.#replaceKeys(chainingKey, key);
  }

  /** Takes a new chaining key and cipher key, zeroing the ones they replace. */
  #replaceKeys(chainingKey: Uint8Array, key: Uint8Array): void {
    // At first the chaining key is the initial hash; `h` itself is never zeroed.
    if (this.#chainingKey !== this.#hash) this.#chainingKey.fill(0);
    this.#chainingKey = chainingKey;
    this.#cipher?.clear();
    this.#cipher = new CipherState(this.#crypto, key);
  }

  encryptAndHash(plaintext: Uint8Array): Uint8Array {
    const out =
      this.#cipher === undefined ? plaintext : this.#cipher.encryptWithAd(this.#hash, plaintext);
    this.mixHash(out);
    return out;
  }

  /** Throws {@link HandshakeDecryptFailure} when the AEAD check fails. */
  decryptAndHash(ciphertext: Uint8Array): Uint8Array {
    let out: Uint8Array;
    if (this.#cipher === undefined) {
      out = ciphertext;
    } else {
      const opened = this.#cipher.decryptWithAd(this.#hash, ciphertext);
      if (opened === undefined) throw new HandshakeDecryptFailure('Cipher error: Decrypt error');
      out = opened;
    }
    this.mixHash(ciphertext);
    return out;
  }

  /**
   * `Split()`: the initiator→responder key, then the responder→initiator key. The chaining key
   * and the handshake's own cipher key are zeroed: nothing but `h` is left to derive.
   */
  split(): [initiatorToResponder: Uint8Array, responderToInitiator: Uint8Array] {
    const keys = this.#hkdf2(EMPTY_BYTES);
    if (this.#chainingKey !== this.#hash) this.#chainingKey.fill(0);
    this.#cipher?.clear();
    this.#cipher = undefined;
    return keys;
  }

  #hkdf2(inputKeyMaterial: Uint8Array): [Uint8Array, Uint8Array] {
    const temp = this.#crypto.hmacSha256(this.#chainingKey, inputKeyMaterial);
    const first = this.#crypto.hmacSha256(temp, ONE);
    const second = this.#crypto.hmacSha256(temp, first, TWO);
    temp.fill(0);
    return [first, second];
  }
}
