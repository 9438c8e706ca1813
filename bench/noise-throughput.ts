/**
 * Noise path throughput: process output delivered to a `stdout$` subscriber through our harness
 * transport and our direct-Noise executor, against the same executor code behind a plain
 * WebSocket. Also prints the single-core AES-256-GCM seal rate on 61440-byte records (raw
 * node:crypto, the ceiling for one direction of one stream, and our node provider) and the
 * handshake p50 over a real
 * loopback socket (WebSocket open + resume/handshake + registry-less validation + msg 2).
 *
 *   npx tsx bench/noise-throughput.ts [MiB=256] [runs=2] [handshakes=40] [--in-process]
 *
 * By default both executors (direct Noise and plain WebSocket, one `createExecutor()` each) run
 * in a child process, as they do in production, and the harness + client run here; with
 * `--in-process` everything shares one thread, so the figures add both sides' CPU.
 *
 * Target: Noise ≥ 0.7× plain WebSocket.
 */
import { spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { firstValueFrom, type Observable } from 'rxjs';
import { ExecServerClient } from '../src/client/index.js';
import {
  NoiseChannelIdentity,
  platformCryptoProvider,
  type NoiseChannelPublicKeyJson,
} from '../src/noise/index.js';
import { startExecServer } from '../src/server/index.js';
import { startDirectNoiseExecServer } from '../src/server/relay/index.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import type { Transport } from '../src/transport/transport.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';

const args = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const IN_PROCESS = process.argv.includes('--in-process');
const SERVE = process.argv.includes('--serve');
const MIB = Number(args[0] ?? 256);
const RUNS = Number(args[1] ?? 2);
const HANDSHAKES = Number(args[2] ?? 40);
const BYTES = MIB * 1024 * 1024;
const RECORD = 61440;

/**
 * Wall-clock MB/s, MB per CPU-second of this process (client and transport; with
 * `--in-process` the executor too; the `head` child never counts), and in child mode the
 * executor's CPU seconds: the CPU figures are what each side of the path costs, stay
 * meaningful on a loaded machine where wall-clock rates swing, and show which side limits.
 */
async function measuredOutput(
  transport$: () => Observable<Transport>,
  executorCpuSeconds: () => number | undefined,
): Promise<{
  mbps: number;
  cpuMbps: number;
  bytes: number;
  /** CPU seconds the executor child spent meanwhile (Linux, child mode only). */
  executorCpu: number | undefined;
}> {
  const transport = await firstValueFrom(transport$());
  const client = await firstValueFrom(ExecServerClient.connect(transport, { clientName: 'bench' }));
  try {
    const child = await firstValueFrom(
      client.startProcess({ argv: ['head', '-c', String(BYTES), '/dev/zero'], cwd: tmpdir() }),
    );
    const started = performance.now();
    const cpuStart = process.cpuUsage();
    const executorStart = executorCpuSeconds();
    let bytes = 0;
    await new Promise<void>((resolve, reject) =>
      child.stdout$.subscribe({
        next: (chunk) => (bytes += chunk.length),
        error: reject,
        complete: resolve,
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStart);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const executorEnd = executorCpuSeconds();
    const executorCpu =
      executorStart === undefined || executorEnd === undefined
        ? undefined
        : executorEnd - executorStart;
    if (bytes !== BYTES) throw new Error(`received ${bytes} of ${BYTES} bytes`);
    return {
      mbps: bytes / 1e6 / seconds,
      cpuMbps: bytes / 1e6 / cpuSeconds,
      bytes,
      executorCpu,
    };
  } finally {
    client.close();
  }
}

/**
 * Single-core seal rate on RECORD-byte records, best of 3 interleaved 300 ms rounds: raw
 * `createCipheriv` (ceiling; the tag is not even joined to the body), our node provider's
 * `aes256GcmSeal` (a new record per call) and `aes256GcmSealInto` (into a reused frame buffer,
 * what the executor's output path does).
 */
function sealRatesMBps(): { raw: number; provider: number; into: number } {
  const key = new Uint8Array(randomBytes(32));
  const record = new Uint8Array(randomBytes(RECORD));
  const nonce = new Uint8Array(12);
  const noAd = new Uint8Array(0);
  const rawSeal = (): void => {
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.update(record);
    cipher.final();
    cipher.getAuthTag();
  };
  const providerSeal = (): void => {
    platformCryptoProvider.aes256GcmSeal(key, nonce, noAd, record);
  };
  const frame = new Uint8Array(RECORD + 16 + 64);
  const providerSealInto = (): void => {
    platformCryptoProvider.aes256GcmSealInto(key, nonce, noAd, record, frame, 64);
  };
  const rate = (seal: () => void): number => {
    let n = 0;
    const started = performance.now();
    while (performance.now() - started < 300) {
      nonce[11] = n & 0xff;
      seal();
      n++;
    }
    return (n * RECORD) / 1e6 / ((performance.now() - started) / 1000);
  };
  let raw = 0;
  let provider = 0;
  let into = 0;
  for (let round = 0; round < 3; round++) {
    raw = Math.max(raw, rate(rawSeal));
    provider = Math.max(provider, rate(providerSeal));
    into = Math.max(into, rate(providerSealInto));
  }
  return { raw, provider, into };
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
  const executors = IN_PROCESS ? await startExecutors() : await spawnExecutors();
  console.log(`executors: ${IN_PROCESS ? 'in this process' : 'in a child process'}`);
  const harnessIdentity = NoiseChannelIdentity.generate();
  const bundle = () => ({
    websocketUrl: executors.noiseUrl,
    environmentId: executors.environmentId,
    executorRegistrationId: executors.registrationId,
    executorPublicKey: executors.publicKey,
    harnessKeyAuthorization: 'bench-authorization',
  });
  const plain = { url: executors.plainUrl };
  try {
    const seal = sealRatesMBps();
    console.log(
      `AES-256-GCM seal, ${RECORD}-byte records, one core: raw createCipheriv ${seal.raw.toFixed(0)} MB/s, node provider ${seal.provider.toFixed(0)} MB/s (${(seal.provider / seal.raw).toFixed(2)}×), in place ${seal.into.toFixed(0)} MB/s (${(seal.into / seal.raw).toFixed(2)}×)`,
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
    let bestPlainCpu = 0;
    let bestNoiseCpu = 0;
    for (let run = 0; run < RUNS; run++) {
      const p = await measuredOutput(() => connectWebSocket(plain.url), executors.cpuSeconds);
      const n = await measuredOutput(
        () => connectNoiseHarness(bundle(), harnessIdentity),
        executors.cpuSeconds,
      );
      bestPlain = Math.max(bestPlain, p.mbps);
      bestNoise = Math.max(bestNoise, n.mbps);
      bestPlainCpu = Math.max(bestPlainCpu, p.cpuMbps);
      bestNoiseCpu = Math.max(bestNoiseCpu, n.cpuMbps);
      console.log(
        `run ${run + 1}: ${MIB} MiB stdout → stdout$: plain WebSocket ${p.mbps.toFixed(1)} MB/s (${p.cpuMbps.toFixed(1)} MB/CPU-s${executorCpuNote(p.executorCpu)}), Noise ${n.mbps.toFixed(1)} MB/s (${n.cpuMbps.toFixed(1)} MB/CPU-s${executorCpuNote(n.executorCpu)})`,
      );
    }
    const ratio = bestNoise / bestPlain;
    const cpuRatio = bestNoiseCpu / bestPlainCpu;
    console.log(
      `best wall-clock: plain ${bestPlain.toFixed(1)} MB/s, Noise ${bestNoise.toFixed(1)} MB/s, ratio ${ratio.toFixed(2)}× (target ≥ 0.70×) ${ratio >= 0.7 ? 'OK' : 'BELOW TARGET'}`,
    );
    console.log(
      `best per CPU-second: plain ${bestPlainCpu.toFixed(1)}, Noise ${bestNoiseCpu.toFixed(1)}, ratio ${cpuRatio.toFixed(2)}×`,
    );
  } finally {
    await executors.stop();
  }
}

function executorCpuNote(seconds: number | undefined): string {
  return seconds === undefined ? '' : `; executor ${seconds.toFixed(2)} CPU-s`;
}

/** User + system CPU seconds of process `pid` from /proc (Linux); undefined elsewhere. */
function procCpuSeconds(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ');
    const ticks = Number(fields?.[11]) + Number(fields?.[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

interface Executors {
  noiseUrl: string;
  plainUrl: string;
  environmentId: string;
  registrationId: string;
  publicKey: NoiseChannelPublicKeyJson;
  /** CPU seconds the executors' process has used, when it is a child we can measure. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

async function startExecutors(): Promise<Executors> {
  const noise = await startDirectNoiseExecServer();
  const plain = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  return {
    noiseUrl: noise.url,
    plainUrl: plain.url,
    environmentId: noise.environmentId,
    registrationId: noise.registrationId,
    publicKey: noise.identity.toJSON(),
    cpuSeconds: () => undefined, // shared with the client: see the MB/CPU-s figures
    stop: async () => {
      await noise.close();
      await plain.close();
    },
  };
}

/** Runs `startExecutors` in a child (this script with `--serve`), which prints one JSON line. */
async function spawnExecutors(): Promise<Executors> {
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end !== -1) resolve(buffered.slice(0, end));
    });
    child.once('exit', (code) => reject(new Error(`executor child exited with ${code}`)));
  });
  const info = JSON.parse(line) as Omit<Executors, 'stop' | 'cpuSeconds'>;
  return {
    ...info,
    cpuSeconds: () => (child.pid === undefined ? undefined : procCpuSeconds(child.pid)),
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await exited;
    },
  };
}

async function serve(): Promise<void> {
  const { stop, cpuSeconds: _cpuSeconds, ...info } = await startExecutors();
  process.stdout.write(`${JSON.stringify(info)}\n`);
  process.stdin.resume();
  process.stdin.once('end', () => void stop().then(() => process.exit(0)));
}

await (SERVE ? serve() : main());
