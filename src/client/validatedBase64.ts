/**
 * Decoding of base64 fields that a protocol schema (`Base64` in src/protocol/base64.ts) has
 * already validated, so the validating regex is not run a second time. Only for values that
 * came through such a schema; anything else goes through `decodeBase64`. The cost it saves on
 * streamed output: docs/performance.md (`bench/throughput.ts`).
 */
import { platform } from '../platform/index.js';
import type { Base64 } from '../protocol/base64.js';

/** Bytes of a schema-validated standard base64 string (a view, no copy). */
export function decodeValidatedBase64(text: Base64): Uint8Array {
  return platform.base64Decode(text);
}
