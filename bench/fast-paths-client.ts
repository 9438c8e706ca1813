/**
 * The fast-path rule (DEVELOPERS.md) for the client's tricks: each one side by side with its
 * plain twin (bench/plain/…, swapped into a compiled copy by bench/support/plainTwins.ts), on
 * the figures of bench/client-overhead.ts — `connect` (open + `initialize` + `initialized`)
 * and one `fs/getMetadata` round trip — against the same real `codex exec-server`.
 *
 * Every client (the shipped build, one build per trick with that trick's twin, and the
 * hand-written client for reference) is sampled in turn, the order rotating each round, so
 * load spikes hit all alike. Prints the p50 of each and the ratio plain / fast: a trick keeps
 * its place only at >= 1.05x on a figure.
 *
 * Run: `npx tsx bench/fast-paths-client.ts [connectRounds=200] [callRounds=1500]`
 */
import { loadavg } from 'node:os';
import { startCodexExecServer } from '../spec/support/codexExecServer.js';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import type { LatencyClient, LatencySession } from './support/latencyDrivers.js';
import { variantLabel, type PlainVariant } from './support/plainTwins.js';
import { elapsedMs, summarize } from './support/stats.js';

/** Each client trick and the module(s) its plain twin replaces. */
const TRICKS: readonly { readonly trick: string; readonly variant: PlainVariant }[] = [
  { trick: 'hand-written JSON checks (zod parse)', variant: ['protocol/fastpath/fastChecks'] },
  { trick: 'plain-response path (classify)', variant: ['rpc/fastpath/plainResponse'] },
  { trick: 'callRouter direct call (operators)', variant: ['client/fastpath/directCall'] },
  { trick: 'own client WebSocket (ws)', variant: ['platform/node/fastpath/webSocketClient'] },
];

interface Contender {
  readonly label: string;
  readonly client: LatencyClient;
  readonly connects: number[];
  readonly calls: number[];
}

/** Samples every contender once per round, in an order rotating by one each round. */
async function rounds(
  contenders: readonly Contender[],
  count: number,
  warmups: number,
  sample: (contender: Contender, record: boolean) => Promise<void>,
): Promise<void> {
  for (let round = 0; round < warmups + count; round += 1) {
    for (let k = 0; k < contenders.length; k += 1) {
      await sample(contenders[(round + k) % contenders.length]!, round >= warmups);
    }
  }
}

async function main(): Promise<void> {
  const connectRounds = Number(process.argv[2] ?? 200);
  const callRounds = Number(process.argv[3] ?? 1500);
  const warmups = 30;
  const fast = await compiledLatencyDrivers();
  const contenders: Contender[] = [
    { label: 'fast', client: fast.execrxClient, connects: [], calls: [] },
    { label: 'handwritten', client: fast.handwrittenClient, connects: [], calls: [] },
  ];
  for (const { variant } of TRICKS) {
    const drivers = await compiledLatencyDrivers(variant);
    contenders.push({
      label: variantLabel(variant),
      client: drivers.execrxClient,
      connects: [],
      calls: [],
    });
  }
  const server = await startCodexExecServer();
  try {
    await rounds(contenders, connectRounds, warmups, async (contender, record) => {
      const start = process.hrtime.bigint();
      const session = await contender.client(server.url);
      const ms = elapsedMs(start);
      session.close();
      if (record) contender.connects.push(ms);
    });
    const sessions = new Map<Contender, LatencySession>();
    for (const contender of contenders) sessions.set(contender, await contender.client(server.url));
    const path = process.cwd();
    await rounds(contenders, callRounds, warmups, async (contender, record) => {
      const start = process.hrtime.bigint();
      await sessions.get(contender)!.getMetadata(path);
      if (record) contender.calls.push(elapsedMs(start));
    });
    for (const session of sessions.values()) session.close();
  } finally {
    await server.stop();
  }

  const p50 = (samples: number[]): number => summarize(samples).p50;
  const [shipped, handwritten] = contenders as [Contender, Contender];
  console.log(
    `client fast paths vs plain twins, codex exec-server 0.169.0, node ${process.version}, ` +
      `${connectRounds} connects and ${callRounds} fs/getMetadata per client, load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  const figures = (c: Contender): string =>
    `connect p50 ${p50(c.connects).toFixed(3)} ms  fs p50 ${p50(c.calls).toFixed(3)} ms`;
  console.log(`  ${'fast (shipped)'.padEnd(40)} ${figures(shipped)}`);
  console.log(
    `  ${'hand-written client'.padEnd(40)} ${figures(handwritten)}  ` +
      `(fast / hand-written: connect ${(p50(shipped.connects) / p50(handwritten.connects)).toFixed(2)}x, ` +
      `fs ${(p50(shipped.calls) / p50(handwritten.calls)).toFixed(2)}x)`,
  );
  TRICKS.forEach(({ trick }, index) => {
    const plain = contenders[index + 2]!;
    const connect = p50(plain.connects) / p50(shipped.connects);
    const fs = p50(plain.calls) / p50(shipped.calls);
    const verdict = connect >= 1.05 || fs >= 1.05 ? 'earns its place' : 'below 5%';
    console.log(
      `  ${trick.padEnd(40)} ${figures(plain)}  plain / fast: connect ${connect.toFixed(2)}x, ` +
        `fs ${fs.toFixed(2)}x  ${verdict}`,
    );
  });
}

await main();
