import type { AsyncAesGcmOpen } from '../platform/index.js';
import type { NoiseCryptoProvider } from './cryptoProvider.js';

/** Largest counter we use; Noise reserves 2^64−1, JavaScript numbers stay exact below 2^53. */
export const MAX_NONCE = Number.MAX_SAFE_INTEGER;

/** AESGCM nonce per the Noise spec: 4 zero bytes ‖ 64-bit big-endian counter. */
export function aesGcmNonce(counter: number): Uint8Array {
  const nonce = new Uint8Array(12);
  // Byte by byte rather than through a DataView: this runs once per transport record.
  const high = Math.floor(counter / 0x1_0000_0000);
  const low = counter >>> 0;
  nonce[4] = high >>> 24;
  nonce[5] = (high >>> 16) & 0xff;
  nonce[6] = (high >>> 8) & 0xff;
  nonce[7] = high & 0xff;
  nonce[8] = low >>> 24;
  nonce[9] = (low >>> 16) & 0xff;
  nonce[10] = (low >>> 8) & 0xff;
  nonce[11] = low & 0xff;
  return nonce;
}

/**
 * Noise `CipherState`: one AES-256-GCM key and its implicit counter. The counter only
 * advances on success, so a failed decryption leaves the state untouched.
 */
export class CipherState {
  readonly #crypto: NoiseCryptoProvider;
  readonly #key: Uint8Array;
  #nonce = 0;
  #asyncOpen: AsyncAesGcmOpen | undefined;

  constructor(crypto: NoiseCryptoProvider, key: Uint8Array) {
    this.#crypto = crypto;
    this.#key = key;
  }

  /**
   * Overwrites the key with zeros (as far as JavaScript allows: copies a provider made, e.g.
   * an OpenSSL key object, go when the array is collected). The state is unusable after.
   */
  clear(): void {
    this.#key.fill(0);
  }

  /** The counter the next encryption or decryption will use. */
  get nonce(): number {
    return this.#nonce;
  }

  get exhausted(): boolean {
    return this.#nonce >= MAX_NONCE;
  }

  encryptWithAd(associatedData: Uint8Array, plaintext: Uint8Array): Uint8Array {
    const out = this.#crypto.aes256GcmSeal(
      this.#key,
      aesGcmNonce(this.#nonce),
      associatedData,
      plaintext,
    );
    this.#nonce += 1;
    return out;
  }

  /** `encryptWithAd` written into `target` at `offset`; returns the bytes written. */
  encryptWithAdInto(
    associatedData: Uint8Array,
    plaintext: Uint8Array,
    target: Uint8Array,
    offset: number,
  ): number {
    const written = this.#crypto.aes256GcmSealInto(
      this.#key,
      aesGcmNonce(this.#nonce),
      associatedData,
      plaintext,
      target,
      offset,
    );
    this.#nonce += 1;
    return written;
  }

  /** `undefined` when authentication fails. */
  decryptWithAd(associatedData: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
    const out = this.#crypto.aes256GcmOpen(
      this.#key,
      aesGcmNonce(this.#nonce),
      associatedData,
      ciphertext,
    );
    if (out !== undefined) this.#nonce += 1;
    return out;
  }

  /** Whether the provider has an asynchronous open (`decryptAsync` may be used). */
  get decryptsAsync(): boolean {
    return this.#crypto.aes256GcmOpener !== undefined;
  }

  /**
   * `decryptWithAd` with empty associated data through the provider's asynchronous open. The
   * counter advances when the call is made, so records may be in flight together; a failure
   * (`undefined`) therefore leaves the state unusable, and the stream must be dropped.
   */
  decryptAsync(ciphertext: Uint8Array): Promise<Uint8Array | undefined> {
    const opener = this.#crypto.aes256GcmOpener;
    if (opener === undefined) throw new Error('this crypto provider has no asynchronous open');
    this.#asyncOpen ??= opener(this.#key);
    const result = this.#asyncOpen(aesGcmNonce(this.#nonce), ciphertext);
    this.#nonce += 1;
    return result;
  }
}
