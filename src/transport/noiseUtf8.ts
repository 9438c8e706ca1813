import { platform } from '../platform/index.js';

/**
 * Strict UTF-8 decoding of one decrypted JSON-RPC message: `undefined` when the bytes are not
 * valid UTF-8 (the caller fails the stream).
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  return platform.utf8DecodeStrict(bytes);
}
