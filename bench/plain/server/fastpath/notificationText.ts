/**
 * Plain twin of src/server/fastpath/notificationText.ts: every notification is
 * `JSON.stringify({ method, params })`, handed over as one piece.
 */
import type { SplitText } from '../../../../src/server/splitText.js';

export class ProcessOutputParams {
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

  notificationText(method: string): string {
    return JSON.stringify({ method, params: this });
  }

  splitNotificationText(method: string): SplitText {
    return { head: this.notificationText(method), ascii: '', tail: '' };
  }
}

export function notificationText(method: string, params: unknown): string {
  return JSON.stringify({ method, params });
}
