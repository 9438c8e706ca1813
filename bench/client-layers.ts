/**
 * Where the client's overhead over the hand-written client sits, layer by layer
 * (bench/client-overhead.ts gives the full client's ratio): four clients on one real
 * `codex exec-server`, one sample each per round in an order shuffled every round (a fixed
 * order favours whichever client runs right after another one):
 *   - `execrx`: the full client (`connectWebSocket` → `ExecServerClient.connect`);
 *   - `rpc`: `connectWebSocket` and an `RpcConnection`, the handshake as two plain steps;
 *   - `transport`: `connectWebSocket`'s Transport with hand-written JSON handling;
 *   - `hand-written`: the `ws` JSON client.
 * Prints p50 per client and its ratio to the hand-written client, for `connect` (open +
 * `initialize` + `initialized`) and one `fs/getMetadata` round trip. All four are the
 * latency drivers compiled by tsc (bench/support/compiledClients.ts).
 *
 * Run: `npx tsx bench/client-layers.ts [connectRounds=300] [callRounds=1000]`
 */
import { loadavg } from 'node:os';
import { startCodexExecServer } from '../spec/support/codexExecServer.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';

const WARMUPS = 50;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The indexes 0 … n-1 in a random order. */
function shuffled(n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** µs samples per client: `rounds` recorded rounds after the warm-up, shuffled per round. */
async function rotate(
  clients: number,
  rounds: number,
  run: (which: number) => Promise<(() => void) | void>,
): Promise<number[][]> {
  const samples = Array.from({ length: clients }, (): number[] => []);
  for (let round = 0; round < WARMUPS + rounds; round++) {
    for (const which of shuffled(clients)) {
      const start = process.hrtime.bigint();
      const cleanup = await run(which);
      const micros = Number(process.hrtime.bigint() - start) / 1000;
      cleanup?.(); // not timed, as in client-overhead
      if (round >= WARMUPS) samples[which]!.push(micros);
    }
  }
  return samples;
}

function report(title: string, labels: readonly string[], samples: number[][]): void {
  const hand = median(samples[samples.length - 1]!);
  console.log(`${title} (p50 µs, ratio to hand-written)`);
  labels.forEach((label, i) => {
    const p50 = median(samples[i]!);
    console.log(`  ${label.padEnd(13)} ${p50.toFixed(0).padStart(6)}  ${(p50 / hand).toFixed(3)}x`);
  });
}

async function main(): Promise<void> {
  const connectRounds = Number(process.argv[2] ?? 300);
  const callRounds = Number(process.argv[3] ?? 1000);
  const drivers = await compiledLatencyDrivers();
  const labels = ['execrx', 'rpc', 'transport', 'hand-written'] as const;
  const clients: LatencyClient[] = [
    drivers.execrxClient,
    drivers.rpcLayerClient,
    drivers.transportLayerClient,
    drivers.handwrittenClient,
  ];
  const server = await startCodexExecServer();
  try {
    const load = loadavg()[0]!;
    const connects = await rotate(clients.length, connectRounds, async (which) => {
      const session = await clients[which]!(server.url);
      return () => session.close();
    });
    const sessions: LatencySession[] = [];
    for (const client of clients) sessions.push(await client(server.url));
    const path = process.cwd();
    const calls = await rotate(clients.length, callRounds, (which) =>
      sessions[which]!.getMetadata(path),
    );
    for (const session of sessions) session.close();
    console.log(
      `client layers, codex exec-server 0.169.0, node ${process.version}, load ${load.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`,
    );
    report(`connect (${connectRounds} each)`, labels, connects);
    report(`fs/getMetadata (${callRounds} each)`, labels, calls);
  } finally {
    await server.stop();
  }
}

await main();
