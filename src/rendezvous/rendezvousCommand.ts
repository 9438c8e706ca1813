/**
 * `execrx rendezvous --listen http://127.0.0.1:PORT`: runs the registry + relay until the
 * signal aborts. Prints the registry URL as the first stdout line (like `codex exec-server`
 * prints its ws:// URL) and one stderr line per registry/stream event.
 */
import { randomBytes } from 'node:crypto';
import { startRendezvous } from './rendezvousServer.js';
import type { RendezvousEvent } from './rendezvousEvents.js';

/** Options of `execrx rendezvous`. */
export interface RendezvousCommandOptions {
  /** Default `http://127.0.0.1:0`. */
  readonly listen?: string;
  /** Executor bearer token; when absent a random one is generated and printed on stderr. */
  readonly executorToken?: string;
  /** Harness bearer token; default the executor token. */
  readonly harnessToken?: string;
  /** Externally visible base URL (behind a TLS proxy). */
  readonly publicUrl?: string;
  /** Stdout line writer (the URL). */
  readonly writeOut: (line: string) => void;
  /** Stderr line writer (events). */
  readonly writeErr: (line: string) => void;
  /** Stops the rendezvous (Ctrl-C). */
  readonly signal: AbortSignal;
}

/**
 * `execrx rendezvous`: starts a rendezvous, prints its URL as the first stdout line and one stderr
 * line per event, and runs until SIGINT/SIGTERM.
 */
export async function runRendezvousCommand(options: RendezvousCommandOptions): Promise<void> {
  const executorToken = options.executorToken ?? randomBytes(24).toString('base64url');
  const rendezvous = await startRendezvous({
    ...(options.listen === undefined ? {} : { listen: options.listen }),
    executorToken,
    ...(options.harnessToken === undefined ? {} : { harnessToken: options.harnessToken }),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
  });
  const subscription = rendezvous.events.subscribe((event) => {
    const line = describeEvent(event);
    if (line) options.writeErr(line);
  });
  try {
    options.writeOut(rendezvous.url);
    if (options.executorToken === undefined) {
      options.writeErr(`rendezvous: generated bearer token (CODEX_API_KEY): ${executorToken}`);
    }
    if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
  } finally {
    subscription.unsubscribe();
    await rendezvous.close();
  }
}

/** One log line per event, none for forwarded frames (too many; see counters instead). */
function describeEvent(event: RendezvousEvent): string | undefined {
  switch (event.type) {
    case 'registered':
      return `rendezvous: ${event.environmentId} registered (${event.registrationId})`;
    case 'executor-attached':
      return `rendezvous: ${event.environmentId} executor attached`;
    case 'executor-detached':
      return `rendezvous: ${event.environmentId} executor detached (${event.reason})`;
    case 'stream-claimed':
      return `rendezvous: ${event.environmentId} stream ${event.streamId} claimed`;
    case 'stream-reset':
      return `rendezvous: ${event.environmentId} stream ${event.streamId} reset to ${event.to} (${event.why})`;
    case 'frame-dropped':
      return `rendezvous: ${event.environmentId}: ${event.error.message}`;
    case 'validated':
      return `rendezvous: ${event.environmentId} harness key ${event.valid ? 'admitted' : `refused (${event.rejection ?? 'invalid'})`}`;
    case 'upgrade-refused':
      return `rendezvous: upgrade refused with ${event.status} (${event.detail})`;
    case 'executor-paused':
      return `rendezvous: ${event.environmentId} executor paused (harness of stream ${event.streamId} reads slowly)`;
    case 'executor-resumed':
      return `rendezvous: ${event.environmentId} executor resumed`;
    case 'harness-dropped':
      return `rendezvous: ${event.environmentId} harness dropped (${event.why})`;
    case 'frame-forwarded':
      return undefined;
  }
}
