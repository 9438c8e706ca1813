/**
 * `execrx rendezvous --listen http://127.0.0.1:PORT`: runs one rendezvous node until the
 * signal aborts, then drains it (executors move to another node; see `Rendezvous.drain`).
 * Prints the registry URL as the first stdout line (like `codex exec-server` prints its ws://
 * URL) and one stderr line per registry/stream event, with network text escaped.
 */
import { randomBytes } from 'node:crypto';
import { redisRendezvousStore } from './redisStore.js';
import type { RendezvousEvent } from './rendezvousEvents.js';
import { startRendezvous } from './rendezvousServer.js';
import { escapeForLog, type TokenPair } from './trust.js';

/** Options of `execrx rendezvous`. */
export interface RendezvousCommandOptions {
  /** Default `http://127.0.0.1:0`. */
  readonly listen?: string;
  /** Executor bearer token; when absent a random one is generated and printed on stderr. */
  readonly executorToken?: string;
  /** Harness bearer token; when absent a random one is generated and printed on stderr. */
  readonly harnessToken?: string;
  /** Environments with their own token pair. */
  readonly environmentTokens?: ReadonlyMap<string, TokenPair>;
  /** Front address executors use (behind a TLS proxy, or a cluster's load balancer). */
  readonly publicUrl?: string;
  /** This node's own address for harnesses (in a cluster). */
  readonly advertiseUrl?: string;
  /** `redis://HOST:PORT`: run as a node of a cluster sharing that store. */
  readonly store?: string;
  /** Browser origins allowed on `/connect` and harness sockets. */
  readonly allowOrigins?: readonly string[];
  /** Harness sockets per environment on this node (`startRendezvous`'s option). Default 64. */
  readonly maxHarnessSocketsPerEnvironment?: number;
  /** How long a drain waits for sockets to go before closing them. Default 10 000 ms. */
  readonly drainTimeoutMs?: number;
  /** Stdout line writer (the URL). */
  readonly writeOut: (line: string) => void;
  /** Stderr line writer (events). */
  readonly writeErr: (line: string) => void;
  /** Stops the rendezvous (SIGINT/SIGTERM): it drains, then exits. */
  readonly signal: AbortSignal;
}

/**
 * `execrx rendezvous`: starts a rendezvous, prints its URL as the first stdout line and one stderr
 * line per event, and runs until SIGINT/SIGTERM.
 */
export async function runRendezvousCommand(options: RendezvousCommandOptions): Promise<void> {
  const executorToken = options.executorToken ?? randomBytes(24).toString('base64url');
  const harnessToken = options.harnessToken ?? randomBytes(24).toString('base64url');
  const store = options.store ? await redisRendezvousStore({ url: options.store }) : undefined;
  const rendezvous = await startRendezvous({
    ...(options.listen === undefined ? {} : { listen: options.listen }),
    executorToken,
    harnessToken,
    ...(options.environmentTokens ? { environmentTokens: options.environmentTokens } : {}),
    ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
    ...(options.advertiseUrl === undefined ? {} : { advertiseUrl: options.advertiseUrl }),
    ...(store ? { store } : {}),
    ...(options.allowOrigins ? { allowOrigins: options.allowOrigins } : {}),
    ...(options.maxHarnessSocketsPerEnvironment === undefined
      ? {}
      : { maxHarnessSocketsPerEnvironment: options.maxHarnessSocketsPerEnvironment }),
  }).catch(async (error: unknown) => {
    await store?.close();
    throw error;
  });
  const subscription = rendezvous.events.subscribe((event) => {
    const line = describeEvent(event);
    if (line) options.writeErr(`rendezvous: ${line}`);
  });
  try {
    options.writeOut(rendezvous.url);
    if (options.executorToken === undefined) {
      options.writeErr(`rendezvous: generated executor token (CODEX_API_KEY): ${executorToken}`);
    }
    if (options.harnessToken === undefined) {
      options.writeErr(`rendezvous: generated harness token: ${harnessToken}`);
    }
    if (!options.signal.aborted) {
      await new Promise<void>((resolve) =>
        options.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    options.writeErr('rendezvous: draining');
    await rendezvous.drain(options.drainTimeoutMs);
  } finally {
    subscription.unsubscribe();
    await rendezvous.close();
    await store?.close();
  }
}

/** One log line per event, none for forwarded frames (too many; see counters instead). */
function describeEvent(event: RendezvousEvent): string | undefined {
  if (event.type === 'frame-forwarded') return undefined; // one per frame: nothing to format
  const env = 'environmentId' in event ? escapeForLog(event.environmentId ?? '') : '';
  switch (event.type) {
    case 'registered':
      return `${env} registered (${event.registrationId})`;
    case 'registration-refused':
      return `${env} registration refused (${event.why})`;
    case 'registration-restored':
      return `${env} registration restored in the store (${event.registrationId})`;
    case 'deleted':
      return `${env} deleted by its owner (${event.registrationId})`;
    case 'executor-attached':
      return `${env} executor attached`;
    case 'executor-detached':
      return `${env} executor detached (${event.reason})`;
    case 'stream-claimed':
      return `${env} stream ${escapeForLog(event.streamId)} claimed`;
    case 'stream-reset':
      return `${env} stream ${escapeForLog(event.streamId)} reset to ${event.to} (${event.why})`;
    case 'frame-dropped':
      return `${env}: ${escapeForLog(event.error.message)}`;
    case 'validated':
      return `${env} harness key ${event.valid ? 'admitted' : `refused (${event.rejection ?? 'invalid'})`}`;
    case 'upgrade-refused':
      return `${env ? `${env} ` : ''}upgrade refused with ${event.status} (${event.detail})`;
    case 'executor-paused':
      return `${env} executor paused (harness of stream ${escapeForLog(event.streamId)} reads slowly)`;
    case 'executor-resumed':
      return `${env} executor resumed`;
    case 'harness-dropped':
      return `${env} harness dropped (${event.why})`;
    case 'store-failed':
      return `store failed: ${escapeForLog(event.detail)}`;
  }
}
