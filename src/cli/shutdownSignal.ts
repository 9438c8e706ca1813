/** SIGINT/SIGTERM as an AbortSignal, for the long-running commands (`serve`, `rendezvous`). */
import type { Readable } from 'node:stream';

export interface ShutdownSignal {
  /** Aborted by the first SIGINT or SIGTERM (or the end of `stdin`, when one was given). */
  readonly signal: AbortSignal;
  /** Resolves when the signal aborts. */
  readonly aborted: Promise<void>;
  /** Removes the signal handlers (Node's defaults apply again). */
  dispose(): void;
}

/**
 * `stdin`: also shut down when this stream ends (`serve --exit-on-stdin-close`, for a parent
 * that owns the executor through a pipe). Its data is read and dropped.
 */
export function shutdownOnSignals(stdin?: Readable): ShutdownSignal {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  process.on('SIGINT', abort);
  process.on('SIGTERM', abort);
  if (stdin) {
    stdin.once('end', abort);
    stdin.once('close', abort);
    stdin.once('error', abort);
    stdin.resume();
  }
  const aborted = new Promise<void>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  return {
    signal: controller.signal,
    aborted,
    dispose() {
      process.off('SIGINT', abort);
      process.off('SIGTERM', abort);
      if (stdin) {
        stdin.off('end', abort);
        stdin.off('close', abort);
        stdin.off('error', abort);
      }
    },
  };
}
