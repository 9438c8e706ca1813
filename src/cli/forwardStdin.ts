/**
 * Pipes our stdin into a remote process, one `process/write` at a time: what stdin gives
 * while a write is in flight is gathered and leaves as the next write, up to
 * MAX_WRITE_BYTES (stdin is paused once that much waits, so a fast producer cannot pile up
 * unbounded data). One write in flight keeps the bytes in order whatever the executor's
 * request dispatch (`--concurrent-requests`); gathering amortises its round trip.
 *
 * The protocol has no way to close a remote process's stdin (see spec/fixtures/FINDINGS.md),
 * so at end of input a pipe-mode process keeps an open, silent stdin. On a terminal (`tty`)
 * the end of input is sent as Ctrl-D, which the remote line discipline turns into EOF.
 * Guarded by spec/cli/runStdin.spec.ts and spec/cli/run.spec.ts.
 */
import type { Readable } from 'node:stream';
import { firstValueFrom } from 'rxjs';
import type { ProcessHandle } from '../client/index.js';

const CTRL_D = 0x04;
const NEWLINE = 0x0a;

export interface StdinForwarding {
  /** Stops reading our stdin (idempotent). */
  stop(): void;
}

/** The most one `process/write` carries (and waits in our memory). */
export const MAX_WRITE_BYTES = 1024 * 1024;

export function forwardStdin(
  stdin: Readable,
  handle: ProcessHandle,
  options: { readonly tty: boolean },
): StdinForwarding {
  let stopped = false;
  let lastByte = NEWLINE;
  let queued: Buffer[] = [];
  let queuedBytes = 0;
  let writing = false;
  let ended = false;
  let eofSent = false;

  const write = async (bytes: Uint8Array): Promise<boolean> => {
    try {
      await firstValueFrom(handle.write(bytes), { defaultValue: undefined });
      return true;
    } catch {
      // The process no longer takes input (exited, or its stdin broke): stop forwarding,
      // as a local pipe would after EPIPE.
      stop();
      return false;
    }
  };
  /** Sends what is queued as one write, unless a write is in flight; at the end, Ctrl-D. */
  const pump = (): void => {
    if (writing || stopped) return;
    let bytes: Uint8Array;
    if (queued.length > 0) {
      bytes = queued.length === 1 ? queued[0]! : Buffer.concat(queued, queuedBytes);
      queued = [];
      queuedBytes = 0;
      if (!ended) stdin.resume(); // room again
    } else if (ended && options.tty && !eofSent) {
      // Canonical mode: a Ctrl-D after a partial line only flushes it; a second one is EOF.
      bytes = Uint8Array.from(lastByte === NEWLINE ? [CTRL_D] : [CTRL_D, CTRL_D]);
      eofSent = true;
    } else {
      return;
    }
    writing = true;
    void write(bytes).then((ok) => {
      writing = false;
      if (ok) pump();
    });
  };
  const onData = (chunk: Buffer): void => {
    if (chunk.byteLength === 0) return;
    lastByte = chunk[chunk.byteLength - 1] as number;
    queued.push(chunk);
    queuedBytes += chunk.byteLength;
    if (queuedBytes >= MAX_WRITE_BYTES) stdin.pause();
    pump();
  };
  const onEnd = (): void => {
    ended = true;
    pump();
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    queued = [];
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    stdin.off('error', stop);
    stdin.pause();
  };

  stdin.on('data', onData);
  stdin.once('end', onEnd);
  stdin.once('error', stop);
  stdin.resume();
  return { stop };
}
