/**
 * Rendezvous cluster figures, every node a real `execrx rendezvous` process (the CLI bundle:
 * `npm run build` first), executors and clients simulated in this process:
 *   1. `/connect` latency p50/p95, a node with the in-memory store vs a node with the Redis
 *      store, interleaved A/B (target: Redis adds at most 1 ms to p50 on loopback);
 *   2. N simulated executors (register, attach, echo every data frame) over 3 nodes and C
 *      concurrent clients: `/connect`s per second, and relay throughput of one cluster node
 *      vs a single in-memory node under the same load (target: at least 0.9x);
 *   3. `kill -9` of a node: time until all its executors are attached again elsewhere (the
 *      simulated executors reconnect through the front after 0.5/1/2 s and register again on
 *      a 4xx, as codex does).
 *
 * Run: `npx tsx bench/rendezvous-cluster.ts [--executors 1000] [--clients 100] [--seconds 5] [--connects 500]`
 */
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import WebSocket from 'ws';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import {
  MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
  dataFrame,
  decodeRelayFrame,
  encodeRelayFrame,
  resumeFrame,
} from '../src/relay/index.js';
import { NOISE_RELAY_SECURITY_PROFILE } from '../src/registry/index.js';
import {
  CLUSTER_EXECUTOR_TOKEN,
  CLUSTER_HARNESS_TOKEN,
  type ClusterNode,
  startFront,
  startNode,
} from '../spec/support/rendezvousCluster.js';
import { startTestRedis } from '../spec/support/rendezvousRedis.js';
import { summarize } from './support/stats.js';

const arg = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
};
const EXECUTORS = arg('executors', 1000);
const CLIENTS = arg('clients', 100);
const SECONDS = arg('seconds', 5);
const CONNECTS = arg('connects', 500);
const FRAME = new Uint8Array(64 * 1024).fill(7);
const KEY = NoiseChannelIdentity.generate().toJSON();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A simulated executor: registers, attaches (to `via` when given), echoes data frames. */
class SimulatedExecutor {
  readonly environmentId = `sim-${randomUUID()}`;
  attachedAt = 0;
  private url = '';
  private stopped = false;
  constructor(
    private readonly registryUrl: string,
    /** `ws://node` to attach to first; reconnects go to the URL's own host (the front). */
    private via?: string,
  ) {}

  async start(): Promise<void> {
    await this.register();
    await this.attach();
  }

  private async register(): Promise<void> {
    const response = await fetch(
      `${this.registryUrl}/cloud/environment/${this.environmentId}/register`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${CLUSTER_EXECUTOR_TOKEN}` },
        body: JSON.stringify({
          security_profile: NOISE_RELAY_SECURITY_PROFILE,
          executor_public_key: KEY,
        }),
      },
    );
    if (response.status !== 200) throw new Error(`register: HTTP ${response.status}`);
    this.url = ((await response.json()) as { url: string }).url;
  }

  /** Resolves once attached; keeps reattaching (registering again on a 4xx) until stopped. */
  private attach(): Promise<void> {
    return new Promise((resolve) => {
      const target = this.via ? this.url.replace(/^ws:\/\/[^/]+/, this.via) : this.url;
      const socket = new WebSocket(target, {
        maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
        perMessageDeflate: false,
      });
      let backoff = 500;
      let retried = false;
      const retry = (mustRegister: boolean): void => {
        if (this.stopped || retried) return;
        retried = true;
        this.via = undefined;
        setTimeout(() => {
          (mustRegister ? this.register() : Promise.resolve())
            .then(() => this.attach())
            .then(resolve, () => retry(true));
        }, backoff);
        backoff = Math.min(backoff * 2, 2_000);
      };
      socket.on('open', () => {
        this.attachedAt = performance.now();
        resolve();
      });
      socket.on('message', (data: Buffer) => {
        if (decodeRelayFrame(data).kind === 'data') socket.send(data);
      });
      socket.on('unexpected-response', (_request, response) => {
        socket.terminate();
        retry((response.statusCode ?? 500) < 500);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => retry(false));
    });
  }

  stop(): void {
    this.stopped = true;
  }
}

async function connect(base: string, environmentId: string): Promise<string> {
  const response = await fetch(`${base}/cloud/environment/${environmentId}/connect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLUSTER_HARNESS_TOKEN}` },
    body: JSON.stringify({ harness_public_key: KEY }),
  });
  if (response.status !== 200) throw new Error(`connect: HTTP ${response.status}`);
  return ((await response.json()) as { url: string }).url;
}

/** One client streaming 64 KiB frames (8 in flight) to an echoing executor for `ms`. */
async function stream(url: string, ms: number): Promise<number> {
  const socket = new WebSocket(url, { maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const streamId = randomUUID();
  socket.send(encodeRelayFrame(resumeFrame(streamId)));
  let echoed = 0;
  let seq = 0;
  const until = performance.now() + ms;
  await new Promise<void>((resolve) => {
    const send = (): void => {
      if (performance.now() >= until) return resolve();
      socket.send(encodeRelayFrame(dataFrame(streamId, seq++, FRAME)));
    };
    socket.on('message', () => {
      echoed += FRAME.length;
      send();
    });
    for (let i = 0; i < 8; i++) send();
  });
  socket.terminate();
  return echoed;
}

/** Bytes/s through the nodes, C clients spread over `executors`, each `/connect`ing on `bases`. */
async function relayThroughput(bases: string[], executors: SimulatedExecutor[]): Promise<number> {
  const urls = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) =>
      connect(bases[i % bases.length]!, executors[i % executors.length]!.environmentId),
    ),
  );
  const started = performance.now();
  const bytes = await Promise.all(urls.map((url) => stream(url, SECONDS * 1000)));
  return bytes.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const redis = await startTestRedis();
  const nodes: ClusterNode[] = [];
  const front = await startFront(() => nodes.map((node) => node.port));
  const single = await startNode(undefined, front.url);
  const stopAll = async (): Promise<void> => {
    for (const node of [single, ...nodes]) await node.kill();
    await front.close();
    await redis.stop();
  };
  try {
    for (let i = 0; i < 3; i++) nodes.push(await startNode(redis.url, front.url));
    const ws = (node: ClusterNode): string => node.url.replace('http', 'ws');
    console.log(
      `load average ${loadavg()[0]!.toFixed(2)}; ${EXECUTORS} executors, ${CLIENTS} clients`,
    );

    // 1. /connect latency, one executor on each kind of node, interleaved.
    const onMemory = new SimulatedExecutor(single.url, ws(single));
    const onRedis = new SimulatedExecutor(nodes[0]!.url, ws(nodes[0]!));
    await onMemory.start();
    await onRedis.start();
    const memory: number[] = [];
    const redisSamples: number[] = [];
    for (let i = 0; i < CONNECTS; i++) {
      for (const [base, env, samples] of (i % 2 === 0
        ? [
            [single.url, onMemory, memory],
            [nodes[0]!.url, onRedis, redisSamples],
          ]
        : [
            [nodes[0]!.url, onRedis, redisSamples],
            [single.url, onMemory, memory],
          ]) as [string, SimulatedExecutor, number[]][]) {
        const start = performance.now();
        await connect(base, env.environmentId);
        samples.push(performance.now() - start);
      }
    }
    const m = summarize(memory);
    const r = summarize(redisSamples);
    console.log('\n/connect latency (ms)      p50     p95');
    console.log(
      `  in-memory store      ${m.p50.toFixed(3).padStart(7)} ${m.p95.toFixed(3).padStart(7)}`,
    );
    console.log(
      `  Redis store          ${r.p50.toFixed(3).padStart(7)} ${r.p95.toFixed(3).padStart(7)}`,
    );
    console.log(
      `  Redis - memory p50   ${(r.p50 - m.p50).toFixed(3).padStart(7)}   (target <= 1 ms)`,
    );

    // 2. N executors over 3 nodes (round robin), C concurrent clients.
    // The latency phase's Redis-side executor counts as the first: the cluster keeps at most
    // 1,000 environments per executor token (the rendezvous's default limit).
    const executors: SimulatedExecutor[] = [onRedis];
    const registerStart = performance.now();
    for (let i = 1; i < EXECUTORS; i += 50) {
      const batch = Array.from(
        { length: Math.min(50, EXECUTORS - i) },
        (_, j) => new SimulatedExecutor(front.url, ws(nodes[(i + j) % 3]!)),
      );
      await Promise.all(batch.map((executor) => executor.start()));
      executors.push(...batch);
    }
    console.log(
      `\n${EXECUTORS} executors registered and attached in ${((performance.now() - registerStart) / 1000).toFixed(2)} s`,
    );
    let connects = 0;
    const until = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = c; performance.now() < until; i += CLIENTS) {
          await connect(nodes[i % 3]!.url, executors[i % executors.length]!.environmentId);
          connects++;
        }
      }),
    );
    console.log(
      `/connect over 3 nodes, ${CLIENTS} concurrent clients: ${(connects / SECONDS).toFixed(0)}/s`,
    );

    const singleExecutors = await Promise.all(
      Array.from({ length: Math.min(CLIENTS, 50) }, async () => {
        const executor = new SimulatedExecutor(single.url, ws(single));
        await executor.start();
        return executor;
      }),
    );
    const onNode0 = executors.filter((_, i) => i % 3 === 0).slice(0, singleExecutors.length);
    const singleRate = await relayThroughput([single.url], singleExecutors);
    const clusterNodeRate = await relayThroughput([nodes[1]!.url], onNode0);
    const spreadRate = await relayThroughput(
      nodes.map((node) => node.url),
      executors.slice(0, singleExecutors.length),
    );
    const mib = (rate: number): string => `${(rate / 1024 / 1024).toFixed(1)} MiB/s`;
    console.log('\nrelay throughput (echoed bytes, 64 KiB frames, 8 in flight per client)');
    console.log(`  single in-memory node          ${mib(singleRate)}`);
    console.log(
      `  one node of the Redis cluster  ${mib(clusterNodeRate)}  (${(clusterNodeRate / singleRate).toFixed(2)}x; target >= 0.9x)`,
    );
    console.log(
      `  spread over 3 nodes (total)    ${mib(spreadRate)}  (${mib(spreadRate / 3)} per node)`,
    );

    // 3. kill -9 of a node: time until every executor it held is attached again.
    const victim = nodes[2]!;
    const held = executors.filter((_, i) => i % 3 === 2);
    const killedAt = performance.now();
    await victim.kill();
    nodes.splice(2, 1);
    const deadline = killedAt + 60_000;
    while (
      held.some((executor) => executor.attachedAt < killedAt) &&
      performance.now() < deadline
    ) {
      await sleep(50);
    }
    const moved = held.filter((executor) => executor.attachedAt >= killedAt).length;
    const last = Math.max(...held.map((executor) => executor.attachedAt));
    console.log(
      `\nkill -9 of a node holding ${held.length} executors: ${moved} attached again elsewhere, the last ${((last - killedAt) / 1000).toFixed(2)} s after the kill`,
    );
    for (const executor of [...executors, ...singleExecutors, onMemory]) executor.stop();
  } finally {
    await stopAll();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
