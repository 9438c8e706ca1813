/**
 * One executor-side figure of remote-latency, `fs_get_metadata_ms`, with enough samples to
 * tell a few percent apart: `fs/getMetadata` round trips to the codex 0.169.0 binary and to
 * our executor (`execrx serve`, compiled, as in remote-latency), interleaved, each request
 * after an idle gap — so every request is served cold, as in remote-latency, where each
 * executor idles while the other columns run. Both executors get the same client (the
 * compiled hand-written one: the least client time in the figure) and the same gaps.
 *
 * Prints p25/p50/p90 per executor and the p50 ratio ours / binary (the #4 target is ≤ 1.0x).
 * `--bare-node` adds a third column for scale: a Node.js process that answers with only
 * JSON.parse, lstatSync and a template (bench/support/bareNodeServer.mjs, no checks at all,
 * no warm-up): the least any Node executor does per request, run in baseline code.
 *
 * `--before=<checkout>/bin/execrx.js` (repeatable) adds a column for another checkout's built
 * executor (`npm run build` there first): a before/after figure of a change, side by side.
 *
 * Run: `npx tsx bench/executor-cold-latency.ts [samples=300] [gapMs=20] [--bare-node] [--before=…]`
 */
import { loadavg } from 'node:os';
import { compiledLatencyDrivers } from './support/compiledClients.js';
import {
  startBareNodeServer,
  startCodexExecServer,
  startExecutorFromBin,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import type { LatencySession } from './support/latencyDrivers.js';
import { elapsedMs, p50RatioInterval } from './support/stats.js';

const WARMUPS = 10;

interface Column {
  readonly label: string;
  readonly session: LatencySession;
  readonly cwd: string;
  readonly samples: number[];
}

const BARE_NODE_FLAG = '--bare-node';
const BEFORE_FLAG = '--before=';
const positional = process.argv
  .slice(2)
  .filter((arg) => arg !== BARE_NODE_FLAG && !arg.startsWith(BEFORE_FLAG));
const beforeBins = process.argv
  .filter((arg) => arg.startsWith(BEFORE_FLAG))
  .map((arg) => arg.slice(BEFORE_FLAG.length));

function positiveArg(index: number, fallback: number): number {
  const raw = positional[index];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`argument ${index + 1} must be a positive integer`);
  return value;
}

function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function main(): Promise<void> {
  const samples = positiveArg(0, 300);
  const gapMs = positiveArg(1, 20);
  const withBareNode = process.argv.includes(BARE_NODE_FLAG);
  const { handwrittenClient } = await compiledLatencyDrivers();
  const servers: RunningExecServer[] = [];
  try {
    const [binary, ours, bare, ...befores] = await Promise.all([
      startCodexExecServer(),
      startTsExecutorProcess(),
      withBareNode ? startBareNodeServer() : undefined,
      ...beforeBins.map((bin) => startExecutorFromBin(bin)),
    ]);
    servers.push(binary, ours);
    const labelled: Array<readonly [string, RunningExecServer]> = [
      ['codex binary', binary],
      ['ts-executor', ours],
    ];
    if (bare) {
      servers.push(bare);
      labelled.push(['bare node', bare]);
    }
    befores.forEach((before, index) => {
      if (!before) return;
      servers.push(before);
      labelled.push([`before ${index + 1}`, before]);
    });
    const columns: Column[] = [];
    for (const [label, server] of labelled) {
      const session = await handwrittenClient(server.url);
      columns.push({ label, session, cwd: await session.environmentCwd(), samples: [] });
    }
    for (let round = 0; round < WARMUPS + samples; round += 1) {
      // Rotate which executor goes first, so drift and load spikes hit all alike.
      const shift = round % columns.length;
      const order = [...columns.slice(shift), ...columns.slice(0, shift)];
      for (const column of order) {
        await new Promise((resolve) => setTimeout(resolve, gapMs));
        const start = process.hrtime.bigint();
        await column.session.getMetadata(column.cwd);
        if (round >= WARMUPS) column.samples.push(elapsedMs(start));
      }
    }
    for (const column of columns) column.session.close();
    console.log(
      `fs/getMetadata after ${gapMs} ms idle: ${samples} samples per executor, hand-written client, plain WebSocket on 127.0.0.1`,
    );
    console.log(
      `node ${process.version}, load average ${loadavg()
        .map((load) => load.toFixed(2))
        .join(' ')}`,
    );
    for (const { label, samples: taken } of columns) {
      const [p25, p50, p90] = [0.25, 0.5, 0.9].map((q) => quantile(taken, q).toFixed(3));
      console.log(`  ${label.padEnd(14)} p25 ${p25} ms  p50 ${p50} ms  p90 ${p90} ms`);
    }
    // Each ratio with a 95% bootstrap interval: how far noise alone may have moved it.
    const [binaryColumn, ...others] = columns as [Column, ...Column[]];
    for (const column of others) {
      const value = quantile(column.samples, 0.5) / quantile(binaryColumn.samples, 0.5);
      const [low, high] = p50RatioInterval(column.samples, binaryColumn.samples);
      const note =
        column.label === 'bare node'
          ? 'bare Node, no checks, no warm-up'
          : column.label.startsWith('before ')
            ? beforeBins[Number(column.label.slice('before '.length)) - 1]!
            : 'target ≤ 1.0x';
      console.log(
        `ratio ${column.label}/binary p50: ${value.toFixed(3)}x  [${low.toFixed(3)}, ${high.toFixed(3)}]  (${note})`,
      );
    }
    const oursColumn = columns.find((column) => column.label === 'ts-executor')!;
    for (const beforeColumn of columns.filter((column) => column.label.startsWith('before '))) {
      const value = quantile(oursColumn.samples, 0.5) / quantile(beforeColumn.samples, 0.5);
      const [low, high] = p50RatioInterval(oursColumn.samples, beforeColumn.samples);
      console.log(
        `ratio ts-executor/${beforeColumn.label} p50: ${value.toFixed(3)}x  [${low.toFixed(3)}, ${high.toFixed(3)}]`,
      );
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

await main();
