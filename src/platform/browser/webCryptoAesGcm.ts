/**
 * WebCrypto's AES-256-GCM as an {@link AsyncAesGcmOpen}: the raw key is imported once, then
 * every record is one `subtle.decrypt` (iv = the 12-byte nonce, no associated data, tag
 * appended as Noise sends it). spec/relay/pipelinedDataReceiver.spec.ts holds it to the
 * synchronous open.
 */
import type { AsyncAesGcmOpen } from '../platform.js';

/** `undefined` where there is no `crypto.subtle` (e.g. a page served over plain http from a non-loopback host). */
export function webCryptoAes256GcmOpener(): ((key: Uint8Array) => AsyncAesGcmOpen) | undefined {
  const subtle = (globalThis.crypto as typeof globalThis.crypto | undefined)?.subtle;
  if (subtle === undefined) return undefined;
  return (key) => {
    const imported = subtle.importKey('raw', key.slice(), 'AES-GCM', false, ['decrypt']);
    return async (nonce, ciphertext) => {
      try {
        const plaintext = await subtle.decrypt(
          { name: 'AES-GCM', iv: nonce as Uint8Array<ArrayBuffer>, tagLength: 128 },
          await imported,
          ciphertext as Uint8Array<ArrayBuffer>,
        );
        return new Uint8Array(plaintext);
      } catch {
        return undefined; // OperationError: the tag does not match
      }
    };
  };
}
