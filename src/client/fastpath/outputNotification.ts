/**
 * Decoding of `process/output` notifications, the one message a streaming client receives by
 * the thousand (one per 8 KiB of output from the binary, per 64 KiB from `execrx serve`).
 *
 * Contract: `decodeOutputNotification` returns exactly what the plain twin
 * (bench/plain/client/fastpath/outputNotification.ts: the table's schema check, then the
 * base64 decode) returns, and throws the same error where it throws;
 * spec/client/fastpath/outputNotification.spec.ts holds the two together. The trick: a chunk
 * is accepted when decoding and re-encoding it gives the same text back, which only canonical
 * standard base64 does (`decodeCanonicalBase64`); the alphabet regex of `isStandardBase64` runs
 * only for chunks that fail that round trip. A notification read by the RPC layer's own fast
 * path (src/rpc/fastpath/outputNotification.ts) arrives with its chunk already decoded that
 * way, and is not decoded again. Native encode and decode cost far less than the regex's pass
 * over a long string (the figure: docs/performance.md, "Fast paths";
 * `bench/fast-paths-output.ts`).
 */
import type { JsonRpcNotification } from '../../protocol/jsonrpc.js';
import { decodeCanonicalBase64, decodeValidatedBase64 } from '../../protocol/base64.js';
import { decodedChunkOf } from '../../rpc/fastpath/outputNotification.js';
import type { ProcessOutputEvent } from '../processEvents.js';
import { decodeNotification } from '../wireDecode.js';

/** A decoded `process/output`: the event for the process it names. */
export interface DecodedOutput {
  readonly processId: string;
  readonly event: ProcessOutputEvent;
}

/** The params of a `process/output` notification; throws a JsonError when they do not match. */
export function decodeOutputNotification(notification: JsonRpcNotification): DecodedOutput {
  const params = notification.params as { chunk?: unknown } | null | undefined;
  if (typeof params === 'object' && params !== null && typeof params.chunk === 'string') {
    const bytes = decodedChunkOf(params) ?? decodeCanonicalBase64(params.chunk);
    if (bytes !== undefined) {
      try {
        // The other fields go through the table's own decoder, with an empty (valid) chunk.
        const { processId, seq, stream } = decodeNotification('process/output', {
          ...notification,
          params: { ...params, chunk: '' },
        });
        return { processId, event: { type: 'output', seq, stream, chunk: bytes } };
      } catch {
        // Not the protocol's shape: the plain path below throws the error for the real params.
      }
    }
  }
  const { processId, seq, stream, chunk } = decodeNotification('process/output', notification);
  return {
    processId,
    event: { type: 'output', seq, stream, chunk: decodeValidatedBase64(chunk) },
  };
}
