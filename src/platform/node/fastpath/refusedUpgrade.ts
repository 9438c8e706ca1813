/**
 * The body of an HTTP answer that refused our upgrade request (e.g. 401 from an executor
 * started with `--ws-auth`), as the client WebSocket hands it on with 'unexpected-response':
 * a readable stream carrying `statusCode`, decoded from its Content-Length, chunked framing
 * (RFC 9112 §7.1) or the connection's end, and cut at `limit` bytes. Guarded by
 * spec/platform/node/fastpath/webSocketClient.spec.ts ("reports an HTTP 401 …").
 */
import { PassThrough } from 'node:stream';

/** A size line longer than this is not chunked framing: the body ends there. */
const MAX_CHUNK_SIZE_LINE = 1024;

export type RefusedUpgradeBody = PassThrough & { readonly statusCode: number };

export interface RefusedUpgradeReader {
  readonly body: RefusedUpgradeBody;
  /** Bytes of the answer after its head, as they arrive. */
  push(bytes: Buffer): void;
  /** The connection ended: so does the body. */
  end(): void;
}

export function refusedUpgradeReader(
  statusCode: number,
  fields: ReadonlyMap<string, string>,
  limit: number,
): RefusedUpgradeReader {
  const body = Object.assign(new PassThrough(), { statusCode });
  let delivered = 0;
  const end = (): void => {
    if (!body.writableEnded) body.end();
  };
  const deliver = (bytes: Buffer): void => {
    if (body.writableEnded || bytes.length === 0) return;
    const part = bytes.subarray(0, limit - delivered);
    delivered += part.length;
    body.write(part);
    if (delivered >= limit) end();
  };
  if (fields.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    return { body, push: dechunked(deliver, end), end };
  }
  const declared = Number(fields.get('content-length') ?? NaN);
  if (Number.isSafeInteger(declared) && declared >= 0) limit = Math.min(limit, declared);
  if (limit === 0) end();
  return { body, push: deliver, end };
}

/** Decodes chunked framing as it arrives; `end` after the last chunk or on a framing error. */
function dechunked(deliver: (bytes: Buffer) => void, end: () => void): (bytes: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  let step: 'size' | 'data' | 'crlf' | 'done' = 'size';
  let remaining = 0;
  return (bytes) => {
    pending = pending.length === 0 ? bytes : Buffer.concat([pending, bytes]);
    for (;;) {
      if (step === 'done') return;
      if (step === 'size') {
        const lineEnd = pending.indexOf('\r\n');
        if (lineEnd < 0) {
          if (pending.length > MAX_CHUNK_SIZE_LINE) step = 'done';
          if (step === 'done') end();
          return;
        }
        const sizeText = pending.subarray(0, lineEnd).toString('latin1').split(';')[0]!.trim();
        remaining = /^[0-9a-fA-F]{1,8}$/.test(sizeText) ? parseInt(sizeText, 16) : 0;
        pending = pending.subarray(lineEnd + 2);
        if (remaining === 0) {
          step = 'done';
          end();
          return;
        }
        step = 'data';
      } else if (step === 'data') {
        const used = Math.min(remaining, pending.length);
        deliver(pending.subarray(0, used));
        pending = pending.subarray(used);
        remaining -= used;
        if (remaining > 0) return;
        step = 'crlf';
      } else {
        if (pending.length < 2) return;
        pending = pending.subarray(2);
        step = 'size';
      }
    }
  };
}
