import { isUtf8 } from 'node:buffer';

/**
 * Strict UTF-8 decoding of one decrypted JSON-RPC message: `undefined` when the bytes are not
 * valid UTF-8 (the caller fails the stream). Validating first and then decoding natively is
 * faster than a fatal `TextDecoder` on large messages.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  if (!isUtf8(bytes)) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}
