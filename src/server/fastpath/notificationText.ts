/**
 * The JSON text of an executor notification. Invariant: the text is byte-identical to
 * `JSON.stringify({ method, params })`, the plain twin's text
 * (bench/plain/server/fastpath/notificationText.ts). `ProcessOutputParams` encodes its bytes
 * itself, so its chunk is known to be base64, which never needs escaping: its text is
 * assembled around the chunk instead of scanned, and handed to a transport in pieces
 * (splitText.ts) so the chunk is copied once, byte for byte. What it earns:
 * docs/performance.md, "Fast paths" (`bench/fast-paths-output.ts`).
 * spec/server/fastpath/notificationText.spec.ts holds it to the twin.
 */
import type { SplitText } from '../splitText.js';

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
