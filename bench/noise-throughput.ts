/**
 * Noise path throughput: process output delivered to a `stdout$` subscriber through our harness
 * transport and our direct-Noise executor, against the same executor code behind a plain
 * WebSocket. Also prints the single-core AES-256-GCM seal rate of node:crypto on 61440-byte
 * records (the ceiling for one direction of one stream) and the handshake p50 over a real
 * loopback socket (WebSocket open + resume/handshake + registry-less validation + msg 2).
 *
 *   npx tsx bench/noise-throughput.ts [MiB=256] [runs=2] [handshakes=40]
 *
 * Target: Noise ≥ 0.7× plain WebSocket.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir } from 'node:os';
import { firstValueFrom, type Observable } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import { startExecServer } from '../src/server/index.js';
import { startDirectNoiseExecServer } from '../src/server/relay/index.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../src/transport/transport.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';

const MIB = Number(process.argv[2] ?? 256);
const RUNS = Number(process.argv[3] ?? 2);
const HANDSHAKES = Number(process.argv[4] ?? 40);
const BYTES = MIB * 1024 * 1024;
const RECORD = 61440;

async function measuredOutput(transport$: () => Observable<Transport>): Promise<{
  mbps: number;
  bytes: number;
}> {
  const transport = await firstValueFrom(transport$());
  const client = await firstValueFrom(ExecServerClient.connect(transport, { clientName: 'bench' }));
  try {
    const process = await firstValueFrom(
      client.startProcess({ argv: ['head', '-c', String(BYTES), '/dev/zero'], cwd: tmpdir() }),
    );
    const started = performance.now();
    let bytes = 0;
    await new Promise<void>((resolve, reject) =>
      process.stdout$.subscribe({
        next: (chunk) => (bytes += chunk.length),
        error: reject,
        complete: resolve,
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    if (bytes !== BYTES) throw new Error(`received ${bytes} of ${BYTES} bytes`);
    return { mbps: bytes / 1e6 / seconds, bytes };
  } finally {
    client.close();
  }
}

function sealRateMBps(): number {
  const key = randomBytes(32);
  const record = randomBytes(RECORD);
  const nonce = Buffer.alloc(12);
  let n = 0;
  const started = performance.now();
  while (performance.now() - started < 1000) {
    nonce.writeUInt32BE(n, 8);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.update(record);
    cipher.final();
    cipher.getAuthTag();
    n++;
  }
  return (n * RECORD) / 1e6 / ((performance.now() - started) / 1000);
}

function percentile(sorted: number[], p: number): number {
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ]!;
}

async function main(): Promise<void> {
  console.log(
    `node ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const noise = await startDirectNoiseExecServer();
  const plain = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const harnessIdentity = NoiseChannelIdentity.generate();
  const bundle = () => ({
    websocketUrl: noise.url,
    environmentId: noise.environmentId,
    executorRegistrationId: noise.registrationId,
    executorPublicKey: noise.identity.toJSON(),
    harnessKeyAuthorization: 'bench-authorization',
  });
  try {
    const seal = sealRateMBps();
    console.log(
      `AES-256-GCM seal, node:crypto, ${RECORD}-byte records, one core: ${seal.toFixed(0)} MB/s`,
    );

    const latencies: number[] = [];
    for (let i = 0; i < HANDSHAKES + 5; i++) {
      const started = performance.now();
      const transport = await firstValueFrom(connectNoiseHarness(bundle(), harnessIdentity));
      const elapsed = performance.now() - started;
      transport.close();
      if (i >= 5) latencies.push(elapsed);
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `handshake over loopback (socket open → transport ready), n=${HANDSHAKES}: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms`,
    );

    let bestPlain = 0;
    let bestNoise = 0;
    for (let run = 0; run < RUNS; run++) {
      const p = await measuredOutput(() => connectWebSocket(plain.url));
      const n = await measuredOutput(() => connectNoiseHarness(bundle(), harnessIdentity));
      bestPlain = Math.max(bestPlain, p.mbps);
      bestNoise = Math.max(bestNoise, n.mbps);
      console.log(
        `run ${run + 1}: ${MIB} MiB stdout → stdout$: plain WebSocket ${p.mbps.toFixed(1)} MB/s, Noise ${n.mbps.toFixed(1)} MB/s`,
      );
    }
    const ratio = bestNoise / bestPlain;
    console.log(
      `best: plain ${bestPlain.toFixed(1)} MB/s, Noise ${bestNoise.toFixed(1)} MB/s, ratio ${ratio.toFixed(2)}× (target ≥ 0.70×) ${ratio >= 0.7 ? 'OK' : 'BELOW TARGET'}`,
    );
  } finally {
    await noise.close();
    await plain.close();
  }
}

await main();
