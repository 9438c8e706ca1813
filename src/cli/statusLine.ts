/**
 * A transient one-line status ("connecting…") on stderr, shown only when stderr is a
 * terminal so that redirected output and logs stay clean.
 */
import type { Writable } from 'node:stream';

const CLEAR_LINE = '\r\x1b[2K';

export interface StatusLine {
  show(text: string): void;
  clear(): void;
}

export function statusLine(stderr: Writable & { isTTY?: boolean }): StatusLine {
  if (stderr.isTTY !== true) return { show: () => undefined, clear: () => undefined };
  let visible = false;
  return {
    show(text) {
      stderr.write(`${CLEAR_LINE}execrx: ${text}`);
      visible = true;
    },
    clear() {
      if (visible) stderr.write(CLEAR_LINE);
      visible = false;
    },
  };
}
