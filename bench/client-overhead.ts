/**
 * Client overhead in isolation: our client (connectWebSocket → ExecServerClient) against the
 * hand-written `ws` JSON client (bench/handwritten-client.ts), both on the same real
 * `codex exec-server` binary, measured interleaved A/B (the order alternates every round, so
 * load spikes hit both alike):
 *   - `connect`: WebSocket open + `initialize` + `initialized`
 *   - `fs/getMetadata`: one sequential round trip on an open session
 * Prints p50/p95/mean per client and the ratio ours / hand-written (target p50 ≤ 1.05x, issue #17; #12 asks ≤ 1.10x).
 * Both clients are the remote-latency drivers, compiled by tsc (bench/support/compiledClients.ts).
 *
 * Run: `npx tsx bench/client-overhead.ts [connectRounds=300] [callRounds=3000]`
 */
import { loadavg } from 'node:os';
import { startCodexExecServer } from '../spec/support/codexExecServer.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';

interface Stats {
  p50: number;
  p95: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p95: at(0.95), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/** Wall-clock samples (ms) and our process's CPU time (µs, user + system) per client. */
interface Phase {
  readonly samples: [number[], number[]];
  readonly cpuMicros: [number, number];
  readonly userMicros: [number, number];
}

function newPhase(): Phase {
  return { samples: [[], []], cpuMicros: [0, 0], userMicros: [0, 0] };
}

/** Runs one sample for client `which` (0 ours, 1 hand-written); records it unless warming up. */
async function sample(
  phase: Phase,
  which: 0 | 1,
  record: boolean,
  run: () => Promise<unknown>,
): Promise<void> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!record) return;
  const used = process.cpuUsage(cpu);
  phase.samples[which].push(ms);
  phase.cpuMicros[which] += used.user + used.system;
  phase.userMicros[which] += used.user;
}

function report(metric: string, phase: Phase): void {
  const [a, b] = phase.samples;
  const o = stats(a);
  const h = stats(b);
  const row = (label: string, s: Stats, which: 0 | 1): string =>
    `  ${label.padEnd(12)} p50 ${s.p50.toFixed(3)}  p95 ${s.p95.toFixed(3)}  mean ${s.mean.toFixed(3)} ms  client CPU ${(phase.cpuMicros[which] / phase.samples[which].length).toFixed(1)} µs (user ${(phase.userMicros[which] / phase.samples[which].length).toFixed(1)})`;
  console.log(`${metric} (${a.length} samples each)`);
  console.log(row('execrx', o, 0));
  console.log(row('handwritten', h, 1));
  console.log(
    `  ratio        p50 ${(o.p50 / h.p50).toFixed(2)}x  p95 ${(o.p95 / h.p95).toFixed(2)}x  mean ${(o.mean / h.mean).toFixed(2)}x`,
  );
}

async function main(): Promise<void> {
  const connectRounds = Number(process.argv[2] ?? 300);
  const callRounds = Number(process.argv[3] ?? 3000);
  const warmups = 50;
  const { execrxClient, handwrittenClient } = await compiledLatencyDrivers();
  const server = await startCodexExecServer();
  try {
    const connects = newPhase();
    const clients: [LatencyClient, LatencyClient] = [execrxClient, handwrittenClient];
    for (let round = 0; round < warmups + connectRounds; round++) {
      for (let k = 0; k < 2; k++) {
        const which = ((round + k) % 2) as 0 | 1;
        let session: LatencySession | undefined;
        await sample(connects, which, round >= warmups, async () => {
          session = await clients[which](server.url);
        });
        session?.close();
      }
    }

    const sessions = [await execrxClient(server.url), await handwrittenClient(server.url)];
    const path = process.cwd();
    const calls = newPhase();
    for (let round = 0; round < warmups + callRounds; round++) {
      for (let k = 0; k < 2; k++) {
        const which = ((round + k) % 2) as 0 | 1;
        await sample(calls, which, round >= warmups, () => sessions[which]!.getMetadata(path));
      }
    }
    for (const session of sessions) session.close();

    console.log(
      `client overhead vs hand-written ws client, codex exec-server 0.169.0, node ${process.version}, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    report('connect (open + initialize + initialized)', connects);
    report('fs/getMetadata round trip', calls);
  } finally {
    await server.stop();
  }
}

await main();
