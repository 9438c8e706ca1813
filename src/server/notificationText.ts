/**
 * The JSON text of an executor notification. `process/output` is by far the most frequent
 * (one per 8 KiB block of child output, each carrying ~11 KB of base64); on Node 20
 * `JSON.stringify` scans that string for characters to escape, which took more CPU than
 * anything else in the executor during the 64 MiB throughput benchmark. Base64 never needs
 * escaping, so `ProcessOutputParams` (which encodes the bytes itself, so its chunk is known
 * to be base64) has its text assembled directly: byte-identical to `JSON.stringify`.
 */
import type { SplitText } from './splitText.js';

/** The params of a `process/output` notification, from the raw output bytes. */
export class ProcessOutputParams {
  // Declared in wire order, so `JSON.stringify` of an instance gives the same text too.
  readonly processId: string;
  readonly seq: number;
  readonly stream: string;
  readonly chunk: string;

  constructor(processId: string, seq: number, stream: string, bytes: Buffer) {
    this.processId = processId;
    this.seq = seq;
    this.stream = stream;
    this.chunk = bytes.toString('base64');
  }

  /** `JSON.stringify({ method, params: this })`, without scanning the chunk. */
  notificationText(method: string): string {
    const { head, ascii, tail } = this.splitNotificationText(method);
    return head + ascii + tail;
  }

  /** The same text in pieces, the chunk (base64, so ASCII) on its own. */
  splitNotificationText(method: string): SplitText {
    return {
      head:
        `{"method":${JSON.stringify(method)},"params":{"processId":${JSON.stringify(this.processId)}` +
        `,"seq":${JSON.stringify(this.seq)},"stream":${JSON.stringify(this.stream)},"chunk":"`,
      ascii: this.chunk,
      tail: '"}}',
    };
  }
}

export function notificationText(method: string, params: unknown): string {
  if (params instanceof ProcessOutputParams) return params.notificationText(method);
  return JSON.stringify({ method, params });
}
