/**
 * The "chaos without loss" scenario, shared by spec/environment/chaosWithoutLoss.spec.ts (small)
 * and bench/chaos-soak.ts (long): a client (LazyRemoteExecServerClient) talks to our executor
 * through a chaos relay, on the plain WebSocket path or the Noise path through our rendezvous.
 *
 * One process turns stdin lines into output: line `k` asks for block `k` (a deterministic
 * 256 KiB AES-CTR keystream), so the sha256 of stdout proves that every stdin write landed
 * exactly once and in order and that every output byte arrived exactly once and in order.
 * Between lines, file writes and reads of fresh random content go out as interleaved requests;
 * they may fail with a typed `ExecServerError` while the session recovers, and are then retried
 * on the recovered session (only `process/read` and `process/write` are replayed by the
 * protocol), and every read must return exactly what was written.
 *
 * Unread output is kept below 1 MiB (a line goes out only when the output is at most two blocks
 * behind): both executors keep only the newest 1 MiB of a detached process's output. Until our
 * executor stops reading a process whose retained output is full (issue 14 item 6), larger
 * outages would lose output there, which this scenario would report as a digest mismatch.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, filter, firstValueFrom, timeout } from 'rxjs';
import type { ExecServerClient } from '../../src/client/index.js';
import {
  LazyRemoteExecServerClient,
  noiseRendezvous,
  webSocketUrl,
} from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { ExecServerError } from '../../src/protocol/errors.js';
import { EnvironmentRegistryClient, RegistryConnectProvider } from '../../src/registry/index.js';
import { startRendezvous } from '../../src/rendezvous/index.js';
import { startExecServer } from '../../src/server/index.js';
import { startRemoteExecServer } from '../../src/server/relay/index.js';
import { decodeRelayFrame } from '../../src/relay/index.js';
import { block, BLOCK_BYTES, BLOCK_GENERATOR } from './blockGenerator.js';
import {
  startChaosRelay,
  type ChaosFrame,
  type ChaosOptions,
  type ChaosStats,
} from './chaosRelay.js';
import { freePort } from './freePort.js';

export type ChaosPath = 'plain' | 'noise';

export interface ChaosScenarioOptions {
  readonly path: ChaosPath;
  /** Output bytes in all: a multiple of 256 KiB. */
  readonly bytes: number;
  readonly seed: number;
  /** Fault rates; the path's defaults otherwise (see `defaultFaults`). */
  readonly faults?: Omit<ChaosOptions, 'seed' | 'eligible'>;
  /**
   * How many blocks of output may be unread when the next stdin line goes out (default 2, so
   * less than 1 MiB piles up in an outage). More, with `faults.outageMs`, tests issue 14 item 6.
   */
  readonly aheadBlocks?: number;
  /** Deadline for the whole run. */
  readonly timeoutMs?: number;
}

export interface ChaosScenarioResult {
  readonly bytesVerified: number;
  readonly writes: number;
  readonly fileRoundTrips: number;
  /** Interleaved requests that failed with a typed error and were retried. */
  readonly retriedRequests: number;
  readonly chaos: ChaosStats;
  readonly sessionKept: boolean;
}

/**
 * Bytes between cuts. Recovery catches up in `process/read` pages of at most 128 KiB
 * (src/client/sessionResume.ts), each kept once it arrived, so links shorter-lived than the
 * whole replay still make progress; bench/chaos-soak.ts with CHAOS_CUT_KIB tries other ranges.
 */
const CUT_AFTER_BYTES: readonly [number, number] = [1536 * 1024, 3 * 1024 * 1024];

/** Faults each path can meet (see chaosRelay.ts for why they differ). */
export function defaultFaults(path: ChaosPath): Omit<ChaosOptions, 'seed' | 'eligible'> {
  return path === 'plain'
    ? {
        drop: 0.005,
        cutAfterDropMs: 0,
        duplicate: 0.01,
        delay: 0.05,
        maxDelayMs: 15,
        cutAfterBytes: CUT_AFTER_BYTES,
      }
    : {
        drop: 0.01,
        cutAfterDropMs: 50,
        duplicate: 0.03,
        reorder: 0.05,
        delay: 0.05,
        maxDelayMs: 15,
        cutAfterBytes: CUT_AFTER_BYTES,
      };
}

/** Plain: whole Text/Binary frames. Noise: relay data frames (handshakes and resets pass). */
function eligibleFor(path: ChaosPath): (frame: ChaosFrame) => boolean {
  if (path === 'plain') return (frame) => frame.fin && (frame.opcode === 1 || frame.opcode === 2);
  return (frame) => {
    if (!frame.fin || frame.opcode !== 2) return false;
    try {
      return decodeRelayFrame(frame.payload).kind === 'data';
    } catch {
      return false;
    }
  };
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

/** `work`, its failure naming the step it failed in. */
async function labelled<T>(step: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw new Error(`${step}: ${describe(error)}`, { cause: error });
  }
}

/** Runs `call` until it succeeds; a typed failure (session recovering) is retried. */
async function retried<T>(
  call: () => Promise<T>,
  onRetry: () => void,
  deadline: number,
): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof ExecServerError) || Date.now() > deadline) throw error;
      onRetry();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

export async function runChaosScenario(
  options: ChaosScenarioOptions,
): Promise<ChaosScenarioResult> {
  const blocks = Math.floor(options.bytes / BLOCK_BYTES);
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const stops: (() => Promise<unknown> | void)[] = [];
  const directory = mkdtempSync(join(tmpdir(), 'execrx-chaos-'));
  stops.push(() => rmSync(directory, { recursive: true, force: true }));
  try {
    const chaos = await startChaosRelay({
      seed: options.seed,
      ...(options.faults ?? defaultFaults(options.path)),
      eligible: eligibleFor(options.path),
    });
    stops.push(() => chaos.close());
    let client: LazyRemoteExecServerClient;
    if (options.path === 'plain') {
      const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
      stops.push(() => server.close());
      chaos.setUpstream(server.url);
      client = new LazyRemoteExecServerClient(webSocketUrl(chaos.url));
    } else {
      const token = randomBytes(16).toString('hex');
      const harnessToken = randomBytes(16).toString('hex');
      const environmentId = `chaos-${options.seed}`;
      // Listens on a known port: `rendezvous.url` names the public (chaos) address.
      const listen = `http://127.0.0.1:${await freePort()}`;
      const rendezvous = await startRendezvous({
        executorToken: token,
        harnessToken,
        listen,
        // Relay sockets go through the chaos relay; plain HTTP passes it untouched.
        publicUrl: chaos.url.replace(/^ws/, 'http'),
      });
      stops.push(() => rendezvous.close());
      chaos.setUpstream(listen.replace(/^http/, 'ws'));
      const remote = await startRemoteExecServer({
        registryUrl: listen,
        environmentId,
        apiKey: token,
        backoff: { initialMs: 50, maxMs: 400 },
        ...(process.env.CHAOS_DEBUG
          ? {
              onEvent: (event) =>
                console.error(
                  'executor',
                  Date.now() % 100_000,
                  JSON.stringify(event, (_key, value: unknown) =>
                    value instanceof Error ? value.message : value,
                  ),
                ),
            }
          : {}),
      });
      if (process.env.CHAOS_DEBUG)
        rendezvous.events.subscribe((event) =>
          console.error('rendezvous', Date.now() % 100_000, JSON.stringify(event).slice(0, 200)),
        );
      stops.push(() => remote.close());
      const registry = new EnvironmentRegistryClient({
        baseUrl: listen,
        bearerToken: harnessToken,
      });
      client = new LazyRemoteExecServerClient(
        noiseRendezvous(
          new RegistryConnectProvider(registry, environmentId),
          NoiseChannelIdentity.generate(),
        ),
      );
    }
    stops.push(() => client.close());

    let retriedRequests = 0;
    const onRetry = () => (retriedRequests += 1);
    // The first connection meets the chaos too; a failed attempt is a typed error, retried.
    const session: ExecServerClient = await retried(
      () => firstValueFrom(client.get().pipe(timeout(30_000))),
      onRetry,
      deadline,
    );
    const sessionId = session.sessionId;
    // `process/start` is not replayed: a start lost in a cut is retried under a new process
    // id (a start that did happen leaves an idle generator behind, waiting on its stdin).
    const generator = await retried(
      () =>
        firstValueFrom(
          session.startProcess({
            argv: [process.execPath, '-e', BLOCK_GENERATOR],
            cwd: directory,
            pipeStdin: true,
            env: { BLOCK_BYTES: String(BLOCK_BYTES), PATH: process.env.PATH ?? '/usr/bin:/bin' },
          }),
        ),
      onRetry,
      deadline,
    );

    const expected = createHash('sha256');
    for (let index = 0; index < blocks; index += 1) expected.update(block(index));
    const received = createHash('sha256');
    const receivedBytes = new BehaviorSubject(0);
    let streamError: unknown;
    generator.stdout$.subscribe({
      next: (chunk) => {
        received.update(chunk);
        receivedBytes.next(receivedBytes.value + chunk.length);
      },
      error: (error: unknown) => {
        streamError = new Error(`output stream: ${describe(error)}`, { cause: error });
        receivedBytes.error(streamError);
      },
    });

    let fileRoundTrips = 0;
    const waitFor = (bytes: number) =>
      firstValueFrom(
        receivedBytes.pipe(
          filter((value) => value >= bytes),
          timeout(Math.max(1, deadline - Date.now())),
        ),
      );
    for (let index = 0; index < blocks; index += 1) {
      await waitFor((index - (options.aheadBlocks ?? 2)) * BLOCK_BYTES);
      await labelled(`stdin write ${index}`, firstValueFrom(generator.write(`${index}\n`)));
      // An interleaved request pair: what is read must be what was written.
      const path = join(directory, `file-${index % 4}`);
      const content = randomBytes(1 + (index % 7) * 1000);
      await retried(() => firstValueFrom(session.fs.writeFile(path, content)), onRetry, deadline);
      const back = await retried(
        () => firstValueFrom(session.fs.readFile(path)),
        onRetry,
        deadline,
      );
      if (!Buffer.from(back).equals(content)) {
        throw new Error(`file round trip ${index} returned other bytes than were written`);
      }
      fileRoundTrips += 1;
    }
    await waitFor(blocks * BLOCK_BYTES);
    if (streamError !== undefined) throw streamError;
    const digestMatches = received.digest('hex') === expected.digest('hex');
    if (receivedBytes.value !== blocks * BLOCK_BYTES || !digestMatches) {
      throw new Error(
        `output corrupted: ${receivedBytes.value} bytes received of ${blocks * BLOCK_BYTES}, digest ${digestMatches ? 'matches' : 'differs'}`,
      );
    }
    chaos.calm();
    await retried(() => firstValueFrom(generator.terminate()), onRetry, deadline);
    return {
      bytesVerified: receivedBytes.value,
      writes: blocks,
      fileRoundTrips,
      retriedRequests,
      chaos: { ...chaos.stats },
      sessionKept:
        session.sessionId === sessionId && (await firstValueFrom(client.get())) === session,
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
