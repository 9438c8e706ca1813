/**
 * Pipes our stdin into a remote process, one `process/write` at a time (our stdin is paused
 * while a write is in flight, so a fast producer cannot pile up unbounded requests).
 *
 * The protocol has no way to close a remote process's stdin (see spec/fixtures/FINDINGS.md),
 * so at end of input a pipe-mode process keeps an open, silent stdin. On a terminal (`tty`)
 * the end of input is sent as Ctrl-D, which the remote line discipline turns into EOF.
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

export function forwardStdin(
  stdin: Readable,
  handle: ProcessHandle,
  options: { readonly tty: boolean },
): StdinForwarding {
  let stopped = false;
  let lastByte = NEWLINE;

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
  const onData = (chunk: Buffer): void => {
    if (chunk.byteLength === 0) return;
    lastByte = chunk[chunk.byteLength - 1] as number;
    stdin.pause();
    void write(chunk).then((ok) => {
      if (ok && !stopped) stdin.resume();
    });
  };
  const onEnd = (): void => {
    if (stopped || !options.tty) return;
    // Canonical mode: a Ctrl-D after a partial line only flushes it; a second one is EOF.
    const eof = lastByte === NEWLINE ? [CTRL_D] : [CTRL_D, CTRL_D];
    void write(Uint8Array.from(eof));
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
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
