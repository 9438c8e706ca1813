/**
 * Where the client's overhead over the hand-written client falls (bench/client-overhead.ts
 * gives the ratio; this says in which step). Both latency drivers, compiled by tsc, against
 * one real `codex exec-server`, interleaved as in client-overhead.
 *
 * Default mode: per-phase p50 (µs) of each client, from timestamps the shared `ws` module
 * records (its `http.request`, the WebSocket's `open` and first `message` events, its first
 * `send`):
 *   connect: start → upgrade request → open → `initialize` sent → answer arrives → resolved
 *   `fs/getMetadata`: start → request sent → answer arrives → resolved
 *
 * `--counts`: how many JavaScript functions each client runs per connect and per call, and
 * how often, grouped by where they live (V8's precise coverage with call counts, over 50
 * operations after 20 warm-up ones).
 *
 * Run: `npx tsx bench/client-phases.ts [connects=400] [calls=2000]`,
 *      `npx tsx bench/client-phases.ts --counts`
 */
import { createRequire } from 'node:module';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { startCodexExecServer } from '../spec/support/codexExecServer.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';

const require = createRequire(import.meta.url);

type Stamp = 'request' | 'open' | 'send' | 'message';
let stamps: Partial<Record<Stamp, bigint>> = {};

/** Records the first of each event after `stamps` was reset, for both clients alike. */
function instrumentWs(): void {
  const http = require('node:http') as typeof import('node:http');
  const { WebSocket } = require('ws') as typeof import('ws');
  const request = http.request;
  http.request = function (this: unknown, ...args: unknown[]) {
    stamps.request ??= process.hrtime.bigint();
    return (request as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof http.request;
  const emit = WebSocket.prototype.emit;
  WebSocket.prototype.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    if (event === 'open' || event === 'message') stamps[event] ??= process.hrtime.bigint();
    return emit.call(this, event, ...args);
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: unknown, ...args: unknown[]) {
    stamps.send ??= process.hrtime.bigint();
    return (send as (...a: unknown[]) => void).apply(this, args);
  };
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Runs `rounds` samples per client, alternating the order every round; returns phase µs. The
 * cleanup a sample returns runs after its end is taken.
 */
async function phases(
  rounds: number,
  steps: readonly Stamp[],
  run: (which: 0 | 1) => Promise<(() => void) | void>,
): Promise<number[][][]> {
  const result = [0, 1].map(() => Array.from({ length: steps.length + 1 }, (): number[] => []));
  for (let round = 0; round < 50 + rounds; round++) {
    for (let k = 0; k < 2; k++) {
      const which = ((round + k) % 2) as 0 | 1;
      stamps = {};
      const start = process.hrtime.bigint();
      const cleanup = await run(which);
      const end = process.hrtime.bigint();
      cleanup?.(); // not timed, as in client-overhead
      if (round < 50) continue;
      const times = [start, ...steps.map((step) => stamps[step] ?? start), end];
      for (let i = 0; i + 1 < times.length; i++) {
        result[which]![i]!.push(Number(times[i + 1]! - times[i]!) / 1000);
      }
    }
  }
  return result;
}

function printPhases(title: string, steps: readonly Stamp[], result: number[][][]): void {
  console.log(`${title} (p50 µs: execrx / hand-written, difference)`);
  const labels = [...steps.map((step) => `→ ${step}`), '→ resolved'];
  labels.forEach((label, i) => {
    const ours = median(result[0]![i]!);
    const theirs = median(result[1]![i]!);
    console.log(
      `  ${label.padEnd(12)} ${ours.toFixed(1).padStart(8)} ${theirs.toFixed(1).padStart(8)} ${(ours - theirs).toFixed(1).padStart(8)}`,
    );
  });
}

/** Functions run per operation, grouped: distinct functions and calls. */
async function counts(name: string, operation: () => Promise<void>): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  for (let i = 0; i < 20; i++) await operation();
  await session.post('Profiler.takePreciseCoverage'); // resets the counts
  const operations = 50;
  for (let i = 0; i < operations; i++) await operation();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  session.disconnect();
  const groups = new Map<string, { functions: number; calls: number }>();
  for (const script of result) {
    const url = script.url;
    const group = url.includes('/node_modules/rxjs/')
      ? 'rxjs'
      : url.includes('/node_modules/ws/')
        ? 'ws'
        : url.startsWith('node:')
          ? 'node internals'
          : /\/src\//.test(url)
            ? 'execrx src/'
            : /handwritten-client|latencyDrivers/.test(url)
              ? 'bench drivers'
              : undefined;
    if (group === undefined) continue;
    for (const fn of script.functions) {
      const calls = fn.ranges[0]?.count ?? 0;
      if (calls === 0) continue;
      const entry = groups.get(group) ?? { functions: 0, calls: 0 };
      entry.functions += 1;
      entry.calls += calls / operations;
      groups.set(group, entry);
    }
  }
  console.log(`${name}: functions run per operation (distinct, calls)`);
  for (const [group, { functions, calls }] of groups) {
    console.log(
      `  ${group.padEnd(16)} ${String(functions).padStart(5)} ${calls.toFixed(1).padStart(8)}`,
    );
  }
}

async function main(): Promise<void> {
  const countsMode = process.argv.includes('--counts');
  const [connectRounds = 400, callRounds = 2000] = process.argv
    .slice(2)
    .filter((arg) => !arg.startsWith('--'))
    .map(Number);
  if (!countsMode) instrumentWs();
  const { execrxClient, handwrittenClient } = await compiledLatencyDrivers();
  const clients: [LatencyClient, LatencyClient] = [execrxClient, handwrittenClient];
  const server = await startCodexExecServer();
  const path = process.cwd();
  try {
    if (countsMode) {
      for (const [name, client] of [
        ['execrx', execrxClient],
        ['hand-written', handwrittenClient],
      ] as const) {
        await counts(`${name} connect`, async () => {
          const session = await client(server.url);
          session.close();
          await new Promise((resolve) => setTimeout(resolve, 5)); // let the close finish
        });
        const session = await client(server.url);
        await counts(`${name} fs/getMetadata`, () => session.getMetadata(path));
        session.close();
      }
      return;
    }
    const connectSteps = ['request', 'open', 'send', 'message'] as const;
    const connects = await phases(connectRounds, connectSteps, async (which) => {
      const session = await clients[which](server.url);
      return () => session.close();
    });
    const sessions: LatencySession[] = [
      await execrxClient(server.url),
      await handwrittenClient(server.url),
    ];
    const callSteps = ['send', 'message'] as const;
    const calls = await phases(callRounds, callSteps, (which) =>
      sessions[which]!.getMetadata(path),
    );
    for (const session of sessions) session.close();
    console.log(
      `client phases, codex exec-server 0.169.0, node ${process.version}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    printPhases(`connect (${connectRounds} each)`, connectSteps, connects);
    printPhases(`fs/getMetadata (${callRounds} each)`, callSteps, calls);
  } finally {
    await server.stop();
  }
}

await main();
