/** SIGINT/SIGTERM as an AbortSignal, for the long-running commands (`serve`, `rendezvous`). */

export interface ShutdownSignal {
  /** Aborted by the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** Resolves when the signal aborts. */
  readonly aborted: Promise<void>;
  /** Removes the signal handlers (Node's defaults apply again). */
  dispose(): void;
}

export function shutdownOnSignals(): ShutdownSignal {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  process.on('SIGINT', abort);
  process.on('SIGTERM', abort);
  const aborted = new Promise<void>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  return {
    signal: controller.signal,
    aborted,
    dispose() {
      process.off('SIGINT', abort);
      process.off('SIGTERM', abort);
    },
  };
}
