import { AEAD_TAG_LENGTH, NOISE_MAX_MESSAGE_LENGTH } from './constants.js';
import type { CipherState } from './cipherState.js';
import { EMPTY_BYTES } from './bytes.js';
import { NoiseDecryptError, NoiseReplayError, NoiseTransportError } from './errors.js';

/**
 * One direction of the transport phase: AES-256-GCM, empty associated data, implicit nonce
 * = record counter from 0 (4 zero bytes ‖ u64 big-endian). Records must be decrypted exactly
 * once and in send order; there is no rekey. On the relay the counter equals the data
 * frame's `seq`, so pass it as `expectedCounter` to get a precise error for a replay or gap.
 */
export class TransportCipher {
  readonly #state: CipherState;

  constructor(state: CipherState) {
    this.#state = state;
  }

  /** Counter (nonce) of the next record this cipher will encrypt or decrypt. */
  get counter(): number {
    return this.#state.nonce;
  }

  /** Encrypts one record; plaintext + 16 must fit in 65535 bytes. */
  encrypt(plaintext: Uint8Array): Uint8Array {
    if (plaintext.length + AEAD_TAG_LENGTH > NOISE_MAX_MESSAGE_LENGTH) {
      throw new NoiseTransportError('transport plaintext is too large');
    }
    this.#checkNotExhausted();
    return this.#state.encryptWithAd(EMPTY_BYTES, plaintext);
  }

  /**
   * Encrypts one record straight into `target` at `offset` (ciphertext ‖ tag, that is
   * `plaintext.length + 16` bytes), e.g. behind the header of the frame that carries it;
   * returns the bytes written. Same limits and nonce as `encrypt`.
   */
  encryptInto(plaintext: Uint8Array, target: Uint8Array, offset: number): number {
    if (plaintext.length + AEAD_TAG_LENGTH > NOISE_MAX_MESSAGE_LENGTH) {
      throw new NoiseTransportError('transport plaintext is too large');
    }
    this.#checkNotExhausted();
    return this.#state.encryptWithAdInto(EMPTY_BYTES, plaintext, target, offset);
  }

  /**
   * Decrypts the next record. A failure leaves the counter unchanged, but the stream should
   * be dropped anyway: the peer is broken or an attacker is active.
   */
  decrypt(ciphertext: Uint8Array, expectedCounter?: number): Uint8Array {
    this.#checkRecord(ciphertext, expectedCounter);
    const plaintext = this.#state.decryptWithAd(EMPTY_BYTES, ciphertext);
    if (plaintext === undefined) throw new NoiseDecryptError();
    return plaintext;
  }

  /** Whether `decryptAsync` is available (the platform has an asynchronous AES-GCM). */
  get decryptsAsync(): boolean {
    return this.#state.decryptsAsync;
  }

  /**
   * `decrypt` through the platform's asynchronous AES-GCM: same checks and errors (as a
   * rejection). The counter advances at the call, so several records can be in flight; call
   * it once per record in send order, and drop the stream at the first rejection.
   */
  async decryptAsync(ciphertext: Uint8Array): Promise<Uint8Array> {
    this.#checkRecord(ciphertext, undefined);
    const plaintext = await this.#state.decryptAsync(ciphertext);
    if (plaintext === undefined) throw new NoiseDecryptError();
    return plaintext;
  }

  #checkRecord(ciphertext: Uint8Array, expectedCounter: number | undefined): void {
    if (ciphertext.length < AEAD_TAG_LENGTH) {
      throw new NoiseTransportError('transport ciphertext is too short');
    }
    if (ciphertext.length > NOISE_MAX_MESSAGE_LENGTH) {
      throw new NoiseTransportError('transport ciphertext is too large');
    }
    if (expectedCounter !== undefined && expectedCounter !== this.counter) {
      if (expectedCounter < this.counter) throw new NoiseReplayError(expectedCounter, this.counter);
      throw new NoiseTransportError(
        `record ${expectedCounter} arrived before record ${this.counter}; records must be decrypted in order`,
      );
    }
    this.#checkNotExhausted();
  }

  #checkNotExhausted(): void {
    if (this.#state.exhausted) throw new NoiseTransportError('transport nonce exhausted');
  }
}
