/**
 * Many at once (issue 17 item 3), against the built CLI's executor in its own process:
 * - MANY_PROCESSES (default 1000) processes on one plain WebSocket session, each printing
 *   MANY_PROCESS_KIB (default 64) KiB, started together but never more than 128 live at once
 *   (MAX_LIVE_PROCESSES_PER_SESSION: the executor answers -32600 past it; a process counts
 *   until it has closed); completion times run from each process's own start request;
 * - MANY_STREAMS (default 128, at most 128: codex's executor limit) Noise streams (each its
 *   own registry lookup, handshake and session, on its own harness socket, as codex and
 *   `execrx run --registry` connect) through `execrx rendezvous` to one `execrx serve
 *   --remote`, each running a process that prints MANY_STREAM_KIB (default 1024) KiB. The
 *   rendezvous admits 64 harness sockets per environment by default; this one is started with
 *   `--max-harness-sockets MANY_STREAMS`.
 * For each: whether every byte arrived, completion times (median and slowest; fairness target:
 * slowest ≤ 3x median, measured from when all were started) and the executor's and the
 * client's peak resident memory over their idle baseline, per process / stream.
 *
 * Run: `npx tsx bench/many-at-once.ts` (after `npm run build`).
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { firstValueFrom, switchMap } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import { EnvironmentRegistryClient } from '../src/registry/index.js';
import { MAX_LIVE_PROCESSES_PER_SESSION } from '../src/server/processManager.js';
import { DEFAULT_MULTIPLEXED_ENVIRONMENT_LIMITS } from '../src/server/relay/multiplexedEnvironment.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
import { cliMissing, rssOf, startCli, stopClis } from './support/cli.js';
import { summarize } from './support/stats.js';

const PROCESSES = Number(process.env.MANY_PROCESSES ?? 1000);
const PROCESS_BYTES = Number(process.env.MANY_PROCESS_KIB ?? 64) * 1024;
const STREAMS = Number(process.env.MANY_STREAMS ?? 128);
const STREAM_BYTES = Number(process.env.MANY_STREAM_KIB ?? 1024) * 1024;
const ENVIRONMENT_ID = 'many-at-once';
/** `MAX_PENDING_HANDSHAKE_VALIDATIONS` of the executor (src/server/relay). */
const MAX_PENDING_HANDSHAKES = DEFAULT_MULTIPLEXED_ENVIRONMENT_LIMITS.maxPendingValidations;

/** Runs `count` tasks, at most `window` at a time, in order; settles every one. */
async function withinWindow<T>(
  count: number,
  window: number,
  task: () => Promise<T>,
): Promise<PromiseSettledResult<T>[]> {
  const outcomes: PromiseSettledResult<T>[] = new Array(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      try {
        outcomes[index] = { status: 'fulfilled', value: await task() };
      } catch (reason) {
        outcomes[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
  return outcomes;
}

/** Samples the peak RSS of the executor (by pid) and of this process while `work` runs. */
async function peakMemory<T>(
  executorPid: number,
  work: () => Promise<T>,
): Promise<{ result: T; executor: number; client: number }> {
  const executorBase = await rssOf(executorPid);
  const clientBase = process.memoryUsage().rss;
  let executorPeak = executorBase;
  let clientPeak = clientBase;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      executorPeak = Math.max(executorPeak, await rssOf(executorPid));
      clientPeak = Math.max(clientPeak, process.memoryUsage().rss);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  try {
    const result = await work();
    return { result, executor: executorPeak - executorBase, client: clientPeak - clientBase };
  } finally {
    sampling = false;
    await sampler;
  }
}

/** Runs `head -c bytes /dev/zero`; resolves with the bytes received and when it completed. */
async function printBytes(
  client: ExecServerClient,
  bytes: number,
  startedAt: () => number,
): Promise<{ bytes: number; ms: number }> {
  const handle = await firstValueFrom(
    client.startProcess({
      argv: ['head', '-c', String(bytes), '/dev/zero'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
    }),
  );
  let received = 0;
  await new Promise<void>((resolve, reject) =>
    handle.stdout$.subscribe({
      next: (chunk) => (received += chunk.byteLength),
      error: reject,
      complete: resolve,
    }),
  );
  return { bytes: received, ms: performance.now() - startedAt() };
}

function report(
  title: string,
  count: number,
  each: number,
  outcomes: PromiseSettledResult<{ bytes: number; ms: number }>[],
  memory: { executor: number; client: number },
  unit: string,
  note?: string,
): void {
  const done = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
  const complete = done.filter((d) => d.bytes === each).length;
  console.log(title);
  if (note !== undefined) console.log(`  ${note}`);
  console.log(
    `  all bytes: ${complete === count ? 'yes' : 'NO'} (${complete} of ${count} complete, ${failures.length} failed` +
      `${failures.length > 0 ? `: ${String(failures[0] instanceof Error ? failures[0].message : failures[0])}` : ''})`,
  );
  if (done.length > 0) {
    const times = summarize(done.map((d) => d.ms));
    console.log(
      `  completion: median ${times.p50.toFixed(0)} ms, p95 ${times.p95.toFixed(0)} ms, slowest ${times.max.toFixed(0)} ms; ` +
        `slowest/median ${(times.max / times.p50).toFixed(2)}x (target ≤ 3x)`,
    );
  }
  console.log(
    `  peak memory over baseline: executor ${(memory.executor / 2 ** 20).toFixed(1)} MiB ` +
      `(${(memory.executor / count / 1024).toFixed(1)} KiB per ${unit}), client ${(memory.client / 2 ** 20).toFixed(1)} MiB ` +
      `(${(memory.client / count / 1024).toFixed(1)} KiB per ${unit})`,
  );
}

async function main(): Promise<void> {
  const noCli = cliMissing();
  if (noCli) {
    console.error(`bench/many-at-once.ts ${noCli}`);
    process.exit(2);
  }
  console.log(
    `many at once: node ${process.version}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  try {
    // 1. Many processes on one session.
    const plain = await startCli(['serve', '--listen', 'ws://127.0.0.1:0']);
    const client = await firstValueFrom(
      connectWebSocket(plain.line).pipe(
        switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
      ),
    );
    const processes = await peakMemory(plain.pid, () =>
      withinWindow(PROCESSES, MAX_LIVE_PROCESSES_PER_SESSION, () => {
        const startedAt = performance.now();
        return printBytes(client, PROCESS_BYTES, () => startedAt);
      }),
    );
    report(
      `${PROCESSES} processes at once on one session, ${PROCESS_BYTES / 1024} KiB of stdout each`,
      PROCESSES,
      PROCESS_BYTES,
      processes.result,
      processes,
      'process',
      `at most ${MAX_LIVE_PROCESSES_PER_SESSION} live at once (the executor's per-session cap); times from each start`,
    );
    client.close();

    // 2. Many Noise streams on one executor through the rendezvous.
    const executorToken = randomBytes(16).toString('hex');
    const token = randomBytes(16).toString('hex');
    const rendezvous = await startCli(
      [
        'rendezvous',
        '--listen',
        'http://127.0.0.1:0',
        '--max-harness-sockets',
        String(Math.min(128, Math.max(64, STREAMS))),
      ],
      {
        EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: executorToken,
        EXECRX_RENDEZVOUS_HARNESS_TOKEN: token,
      },
    );
    const remote = await startCli(
      ['serve', '--remote', rendezvous.line, '--environment-id', ENVIRONMENT_ID],
      { CODEX_API_KEY: executorToken },
    );
    const registry = new EnvironmentRegistryClient({
      baseUrl: rendezvous.line,
      bearerToken: token,
    });
    const streams = await peakMemory(remote.pid, async () => {
      // All streams are connected first, so the transfers start together. The executor refuses
      // a handshake past MAX_PENDING_HANDSHAKES awaiting validation (codex's limit), so at most
      // that many are in flight.
      const connected = await withinWindow(STREAMS, MAX_PENDING_HANDSHAKES, () => {
        const identity = NoiseChannelIdentity.generate();
        return firstValueFrom(
          registry.connect(ENVIRONMENT_ID, identity.toJSON()).pipe(
            switchMap((bundle) => connectNoiseHarness(bundle, identity)),
            switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
          ),
        );
      });
      const clients = connected.map((outcome) => {
        if (outcome.status === 'rejected') throw outcome.reason;
        return outcome.value;
      });
      const started = performance.now();
      const outcomes = await Promise.allSettled(
        clients.map((c) => printBytes(c, STREAM_BYTES, () => started)),
      );
      for (const c of clients) c.close();
      return outcomes;
    });
    report(
      `${STREAMS} Noise streams on one executor through the rendezvous, ${STREAM_BYTES / 1024} KiB of stdout each`,
      STREAMS,
      STREAM_BYTES,
      streams.result,
      streams,
      'stream',
    );
  } finally {
    stopClis();
  }
}

await main();
