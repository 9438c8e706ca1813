/**
 * A sandboxed `process/start` of /usr/bin/true, timed from the request to `process/closed`:
 * the codex 0.169.0 binary against our executor (`execrx serve`, compiled), both given the
 * managed permission profile `codex exec -s workspace-write` sends, interleaved round by
 * round. Also our unsandboxed start (the same request with `sandbox: null`), and with
 * `--before DIR` the unsandboxed start of another checkout's built `execrx serve` (e.g. main),
 * so the sandbox code's cost on the unsandboxed path shows as an after/before ratio.
 *
 * Prints p25/p50/p90 per column and the p50 ratios with a 95% bootstrap interval
 * (issue #15 target: sandboxed ours/binary ≤ 1.0x; unsandboxed after/before ≈ 1.0x).
 *
 * Run: `npx tsx bench/sandboxed-start.ts [samples=200] [--before /work/main]`
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { RawClient, startParams } from '../spec/server/rawClient.js';
import { workspaceWrite } from '../spec/support/sandboxProfiles.js';
import {
  startCodexExecServer,
  startExecutorFromBin,
  startTsExecutorProcess,
  type RunningExecServer,
} from './support/executors.js';
import { elapsedMs, p50RatioInterval } from './support/stats.js';

const WARMUPS = 5;
const WAIT_MS = 30_000;

interface Column {
  readonly label: string;
  readonly client: RawClient;
  readonly sandboxed: boolean;
  readonly samples: number[];
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? undefined : process.argv[index + 1];
}

function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function main(): Promise<void> {
  const samplesArg = process.argv[2];
  const samples = samplesArg !== undefined && /^\d+$/.test(samplesArg) ? Number(samplesArg) : 200;
  const before = option('--before');
  // Outside /tmp: /tmp is a writable root of the profile, and codex keeps its helpers out of it.
  const cache = join(homedir(), '.cache');
  mkdirSync(cache, { recursive: true });
  const workspace = mkdtempSync(join(cache, 'execrx-bench-sandbox-'));
  const sandbox = workspaceWrite(workspace);
  const servers: RunningExecServer[] = [];
  const clients: RawClient[] = [];
  try {
    // The unsandboxed column has an executor of its own, as the before column has: sandboxed
    // starts on the same process would leave it less ready (e.g. its FIFO stock drawn down).
    const [binary, ours, plainServer, old] = await Promise.all([
      startCodexExecServer({ codexHomeParent: cache }),
      startTsExecutorProcess(),
      startTsExecutorProcess(),
      before === undefined ? undefined : startExecutorFromBin(join(before, 'bin', 'execrx.js')),
    ]);
    servers.push(binary, ours, plainServer, ...(old ? [old] : []));
    const connect = async (server: RunningExecServer): Promise<RawClient> => {
      const client = await RawClient.connect(server.url);
      await client.handshake();
      clients.push(client);
      return client;
    };
    const columns: Column[] = [
      { label: 'binary, sandboxed', client: await connect(binary), sandboxed: true, samples: [] },
      { label: 'ours, sandboxed', client: await connect(ours), sandboxed: true, samples: [] },
      {
        label: 'ours, unsandboxed',
        client: await connect(plainServer),
        sandboxed: false,
        samples: [],
      },
    ];
    if (old) {
      columns.push({
        label: 'before, unsandboxed',
        client: await connect(old),
        sandboxed: false,
        samples: [],
      });
    }
    let id = 0;
    for (let round = 0; round < WARMUPS + samples; round += 1) {
      // Rotate who goes first, so drift and load spikes hit every column alike.
      for (let turn = 0; turn < columns.length; turn += 1) {
        const column = columns[(round + turn) % columns.length] as Column;
        id += 1;
        const processId = `bench-${id}`;
        const params = startParams(processId, ['/usr/bin/true'], {
          cwd: `file://${workspace}`,
          sandbox: column.sandboxed ? sandbox : null,
        });
        const start = process.hrtime.bigint();
        const reply = await column.client.request('process/start', params, WAIT_MS);
        if (reply.error) throw new Error(`${column.label}: ${JSON.stringify(reply.error)}`);
        await column.client.waitClosedNotification(processId, WAIT_MS);
        const ms = elapsedMs(start);
        column.client.messages.length = 0;
        if (round >= WARMUPS) column.samples.push(ms);
      }
    }
    console.log(`sandboxed process/start of /usr/bin/true to process/closed, ${samples} samples`);
    for (const column of columns) {
      const [p25, p50, p90] = [0.25, 0.5, 0.9].map((q) => quantile(column.samples, q));
      console.log(
        `${column.label.padEnd(22)} p25 ${p25?.toFixed(2)} ms  p50 ${p50?.toFixed(2)} ms  p90 ${p90?.toFixed(2)} ms`,
      );
    }
    const ratio = (ours: Column, theirs: Column): string => {
      const value = quantile(ours.samples, 0.5) / quantile(theirs.samples, 0.5);
      const [low, high] = p50RatioInterval(ours.samples, theirs.samples);
      return `${value.toFixed(2)}x (95% ${low.toFixed(2)}–${high.toFixed(2)})`;
    };
    const [binaryColumn, oursSandboxed, oursPlain, beforePlain] = columns as [
      Column,
      Column,
      Column,
      Column | undefined,
    ];
    console.log(`p50 ratio sandboxed, ours / binary: ${ratio(oursSandboxed, binaryColumn)}`);
    if (beforePlain) {
      console.log(`p50 ratio unsandboxed, ours / before: ${ratio(oursPlain, beforePlain)}`);
    }
  } finally {
    for (const client of clients) await client.close();
    for (const server of servers) await server.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

await main();
