/**
 * The baseline for the latency benchmark: a minimal hand-written JSON-RPC client over `ws`,
 * with no RxJS and no validation — just an id counter, a map of promises and JSON.parse. The
 * benchmark prints our reactive client's figures next to this one's so the overhead of the
 * reactive layers shows as a ratio.
 *
 * Run directly (`npx tsx bench/handwritten-client.ts [rounds]`) it compares this baseline with
 * `RpcConnection` over `connectWebSocket` against a local `codex exec-server`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket from 'ws';

export interface HandwrittenNotification {
  method: string;
  params?: unknown;
}

export class HandwrittenClient {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private readonly listeners: Array<(notification: HandwrittenNotification) => void> = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as {
        id?: number;
        method?: string;
        params?: unknown;
        result?: unknown;
        error?: { code: number; message: string };
      };
      if (message.method !== undefined) {
        if (message.id === undefined)
          for (const listener of this.listeners) listener(message as HandwrittenNotification);
        return;
      }
      const entry = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!entry) return;
      this.pending.delete(message.id!);
      if (message.error)
        entry.reject(new Error(`(${message.error.code}) ${message.error.message}`));
      else entry.resolve(message.result);
    });
    socket.on('close', () => {
      for (const entry of this.pending.values()) entry.reject(new Error('disconnected'));
      this.pending.clear();
    });
  }

  static connect(url: string): Promise<HandwrittenClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { perMessageDeflate: false });
      socket.once('open', () => resolve(new HandwrittenClient(socket)));
      socket.once('error', reject);
    });
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params: params ?? null }));
    });
  }

  notify(method: string, params: unknown): void {
    this.socket.send(JSON.stringify({ method, params: params ?? null }));
  }

  onNotification(listener: (notification: HandwrittenNotification) => void): void {
    this.listeners.push(listener);
  }

  close(): void {
    this.socket.close();
  }
}

/** Starts `codex exec-server` on a loopback port; returns its URL and a stop function. */
export async function startCodexExecServer(): Promise<{ url: string; stop(): void }> {
  const codexHome = mkdtempSync(join(tmpdir(), 'execrx-bench-codex-'));
  const child = spawn('node_modules/.bin/codex', ['exec-server', '--listen', 'ws://127.0.0.1:0'], {
    env: { ...process.env, CODEX_HOME: codexHome },
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const stop = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(codexHome, { recursive: true, force: true });
  };
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = output.split('\n').find((l) => l.startsWith('ws://'));
      if (line) resolve(line.trim());
    });
    child.once('exit', () => reject(new Error(`codex exec-server exited early: ${output}`)));
  });
  return { url, stop };
}

function summarize(
  label: string,
  samplesMs: number[],
): { label: string; p50: number; p99: number; mean: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { label, p50: at(0.5), p99: at(0.99), mean };
}

async function measure(rounds: number, call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 50; i += 1) await call(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const start = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2000);
  const { firstValueFrom } = await import('rxjs');
  const { connectWebSocket } = await import('../src/transport/webSocketTransport.js');
  const { RpcConnection } = await import('../src/rpc/rpcConnection.js');
  const server = await startCodexExecServer();
  try {
    const baseline = await HandwrittenClient.connect(server.url);
    await baseline.request('initialize', { clientName: 'bench-baseline', resumeSessionId: null });
    baseline.notify('initialized', {});
    const baselineSamples = await measure(rounds, () => baseline.request('environment/info', null));
    baseline.close();

    const rpc = new RpcConnection(await firstValueFrom(connectWebSocket(server.url)));
    await firstValueFrom(
      rpc.request('initialize', { clientName: 'bench-rpc', resumeSessionId: null }),
    );
    rpc.notify('initialized', {});
    const rpcSamples = await measure(rounds, () =>
      firstValueFrom(rpc.request('environment/info', null)),
    );
    rpc.close();

    const rows = [
      summarize('handwritten ws client', baselineSamples),
      summarize('RpcConnection + ws transport', rpcSamples),
    ];
    console.log(
      `environment/info round trips against codex exec-server 0.169.0 (${rounds} sequential calls)`,
    );
    for (const row of rows) {
      console.log(
        `${row.label.padEnd(30)} p50 ${row.p50.toFixed(3)} ms  p99 ${row.p99.toFixed(3)} ms  mean ${row.mean.toFixed(3)} ms`,
      );
    }
    const [base, ours] = rows as [(typeof rows)[0], (typeof rows)[0]];
    console.log(
      `ratio (RpcConnection / handwritten): p50 ${(ours.p50 / base.p50).toFixed(2)}x  mean ${(ours.mean / base.mean).toFixed(2)}x`,
    );
  } finally {
    server.stop();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
