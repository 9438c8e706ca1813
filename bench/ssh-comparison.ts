/**
 * execrx against OpenSSH (issue 17 item 1), side by side in one run, interleaved, at two
 * levels:
 * - CLI: whole commands as a user runs them, stdout piped into this process's byte counter:
 *   `ssh` (fresh connection, and warm through a ControlMaster), `execrx run --url` (plain
 *   WebSocket to `execrx serve`) and `execrx run --registry` (Noise through `execrx rendezvous`
 *   to `execrx serve --remote`), each a fresh process.
 * - library: our client in this process against the `ssh2` npm client, on a warm connection
 *   and a fresh one (execrx's fresh Noise connection includes the registry lookup and the
 *   handshake).
 * Figures: exec `/usr/bin/true` p50/p95, BENCH_MIB (default 64) MiB of stdout in MB/s, the
 * same amount of stdin into `head -c N >/dev/null` (the protocol cannot close a remote stdin,
 * so `cat >/dev/null` would never end; `head -c N` reads exactly as much) and the client's CPU
 * seconds per 64 MiB (library level; the servers run in their own processes). Ratios are
 * printed against issue 17's targets.
 *
 * Needs root and Debian's openssh-server (see bench/support/sshd.ts; it prints how to install
 * what is missing) and a built CLI (`npm run build`). Not part of `npm test`.
 *
 * Run: `sudo npx tsx bench/ssh-comparison.ts` (BENCH_MIB=64, BENCH_SAMPLES=30 latency samples,
 * BENCH_RUNS=5 throughput runs per contender).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { firstValueFrom, switchMap } from 'rxjs';
import { Client as SshClient, type ClientChannel } from 'ssh2';
import { ExecServerClient } from '../src/client/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import { EnvironmentRegistryClient } from '../src/registry/index.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import { connectWebSocket } from '../src/transport/webSocketTransport.js';
import { cliMissing, EXECRX_BIN, startBenchServers, stopClis } from './support/cli.js';
import { startSshd, sshdMissing, type RunningSshd } from './support/sshd.js';
import { summarize } from './support/stats.js';

const MIB = Number(process.env.BENCH_MIB ?? 64);
const BYTES = MIB * 1024 * 1024;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BIN = EXECRX_BIN;
const ENVIRONMENT_ID = 'ssh-comparison';
const PATH_ENV = { PATH: '/usr/bin:/bin' };

interface CommandRun {
  readonly ms: number;
  readonly bytes: number;
}

/** Runs a whole command with stdout into a byte counter and optional stdin bytes. */
function runCommand(
  command: string,
  args: readonly string[],
  stdinBytes = 0,
  env: NodeJS.ProcessEnv = {},
): Promise<CommandRun> {
  const start = performance.now();
  const child = spawn(command, args, {
    stdio: [stdinBytes > 0 ? 'pipe' : 'ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  let bytes = 0;
  child.stdout!.on('data', (chunk: Buffer) => (bytes += chunk.length));
  if (stdinBytes > 0) feed(child.stdin!, stdinBytes);
  return new Promise((resolve, reject) =>
    child.once('close', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - start, bytes })
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    ),
  );
}

const CHUNK = Buffer.alloc(256 * 1024, 0x61);

/** Writes `total` bytes to `sink` with back-pressure, then ends it. */
function feed(sink: NodeJS.WritableStream, total: number): void {
  let left = total;
  const pump = (): void => {
    while (left > 0) {
      const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= piece.length;
      if (!sink.write(piece)) {
        sink.once('drain', pump);
        return;
      }
    }
    sink.end();
  };
  sink.on('error', () => undefined);
  pump();
}

// ---------------------------------------------------------------- library level: execrx

async function connectPlain(url: string): Promise<ExecServerClient> {
  return firstValueFrom(
    connectWebSocket(url).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
}

async function connectNoise(registryUrl: string, token: string): Promise<ExecServerClient> {
  const identity = NoiseChannelIdentity.generate();
  const registry = new EnvironmentRegistryClient({ baseUrl: registryUrl, bearerToken: token });
  return firstValueFrom(
    registry.connect(ENVIRONMENT_ID, identity.toJSON()).pipe(
      switchMap((bundle) => connectNoiseHarness(bundle, identity)),
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
}

/** Runs argv; counts stdout bytes, optionally writes `stdinBytes` to stdin; resolves at close. */
async function execrxRun(
  client: ExecServerClient,
  argv: string[],
  stdinBytes = 0,
): Promise<number> {
  const handle = await firstValueFrom(
    client.startProcess({ argv, cwd: '/', env: PATH_ENV, pipeStdin: stdinBytes > 0 }),
  );
  let bytes = 0;
  const done = new Promise<void>((resolve, reject) =>
    handle.stdout$.subscribe({
      next: (chunk) => (bytes += chunk.byteLength),
      error: reject,
      complete: resolve,
    }),
  );
  // A window of writes in flight, each 1 MiB.
  const piece = Buffer.alloc(1024 * 1024, 0x61);
  const inFlight: Promise<void>[] = [];
  for (let left = stdinBytes; left > 0; left -= piece.length) {
    inFlight.push(
      firstValueFrom(handle.write(left >= piece.length ? piece : piece.subarray(0, left))),
    );
    if (inFlight.length >= 4) await inFlight.shift();
  }
  await Promise.all(inFlight);
  await done;
  return bytes;
}

// ---------------------------------------------------------------- library level: ssh2

function sshConnect(sshd: RunningSshd): Promise<SshClient> {
  return new Promise((resolve, reject) => {
    const client = new SshClient();
    client
      .once('ready', () => resolve(client))
      .once('error', reject)
      .connect({
        host: '127.0.0.1',
        port: sshd.port,
        username: sshd.user,
        privateKey: sshd.privateKey,
      });
  });
}

function sshRun(client: SshClient, command: string, stdinBytes = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    client.exec(command, (error: Error | undefined, stream: ClientChannel) => {
      if (error) return reject(error);
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
      stream.stderr.resume();
      stream.once('close', () => resolve(bytes));
      if (stdinBytes > 0) feed(stream, stdinBytes);
      else stream.end();
    });
  });
}

// ---------------------------------------------------------------- measuring

interface Contender {
  readonly label: string;
  readonly run: () => Promise<{ bytes: number }>;
  readonly samples: number[];
  readonly cpu: number[];
}

function contender(label: string, run: () => Promise<{ bytes: number } | number>): Contender {
  return {
    label,
    run: async () => {
      const result = await run();
      return typeof result === 'number' ? { bytes: result } : result;
    },
    samples: [],
    cpu: [],
  };
}

/** Interleaved rounds: each round runs every contender once, in a rotating order. */
async function rounds(contenders: Contender[], count: number, expectBytes?: number): Promise<void> {
  for (let round = 0; round < count; round += 1) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
    for (const c of order) {
      const cpuBefore = process.cpuUsage();
      const start = performance.now();
      const { bytes } = await c.run();
      const ms = performance.now() - start;
      const cpu = process.cpuUsage(cpuBefore);
      if (expectBytes !== undefined && bytes !== expectBytes)
        throw new Error(`${c.label}: ${bytes} bytes instead of ${expectBytes}`);
      c.samples.push(ms);
      c.cpu.push((cpu.user + cpu.system) / 1e6);
    }
  }
}

const median = (values: readonly number[]): number => summarize(values).p50;
const mbps = (c: Contender): number => BYTES / 1e6 / (median(c.samples) / 1000);

function printLatency(title: string, contenders: readonly Contender[]): void {
  console.log(title);
  for (const c of contenders) {
    const s = summarize(c.samples);
    console.log(
      `  ${c.label.padEnd(34)} p50 ${s.p50.toFixed(2).padStart(8)} ms  p95 ${s.p95.toFixed(2).padStart(8)} ms`,
    );
  }
}

function printThroughput(title: string, contenders: readonly Contender[], cpu: boolean): void {
  console.log(title);
  for (const c of contenders) {
    const perMib = cpu
      ? `  client CPU ${((median(c.cpu) * 64) / MIB).toFixed(2)} s per 64 MiB`
      : '';
    console.log(
      `  ${c.label.padEnd(34)} ${mbps(c).toFixed(1).padStart(8)} MB/s (median of ${c.samples.length})${perMib}`,
    );
  }
}

function ratio(label: string, value: number, target: string): void {
  console.log(`  ${label.padEnd(62)} ${value.toFixed(2)}x  (target ${target})`);
}

async function main(): Promise<void> {
  const missing = sshdMissing();
  if (missing) {
    console.error(`bench/ssh-comparison.ts ${missing}`);
    process.exit(2);
  }
  const noCli = cliMissing();
  if (noCli) {
    console.error(`bench/ssh-comparison.ts ${noCli}`);
    process.exit(2);
  }
  const sshd = await startSshd();
  try {
    const {
      url: plainUrl,
      registry: registryUrl,
      harnessToken: token,
    } = await startBenchServers(ENVIRONMENT_ID);
    const cliEnv = { CODEX_API_KEY: token };
    const execrxUrl = (argv: string[]) => [
      BIN,
      'run',
      '--url',
      plainUrl,
      '--no-stdin',
      '--',
      ...argv,
    ];
    const execrxRegistry = (argv: string[], stdin = false) => [
      BIN,
      'run',
      '--registry',
      registryUrl,
      '--environment-id',
      ENVIRONMENT_ID,
      ...(stdin ? [] : ['--no-stdin']),
      '--',
      ...argv,
    ];
    const withStdin = (args: string[]) => args.filter((arg) => arg !== '--no-stdin');
    const node = process.execPath;
    const head = ['head', '-c', String(BYTES), '/dev/zero'];
    const sink = ['sh', '-c', `head -c ${BYTES} >/dev/null`];

    console.log(
      `ssh comparison: ${MIB} MiB transfers, ${SAMPLES} latency samples, ${RUNS} throughput runs; node ${process.version}, ` +
        `load ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );

    // --- CLI level
    const cliTrue = [
      contender('ssh, fresh connection', () =>
        runCommand('ssh', [...sshd.sshArgs(false), '/usr/bin/true']),
      ),
      contender('ssh, warm (ControlMaster)', () =>
        runCommand('ssh', [...sshd.sshArgs(true), '/usr/bin/true']),
      ),
      contender('execrx run --url', () => runCommand(node, execrxUrl(['/usr/bin/true']))),
      contender('execrx run --registry (Noise)', () =>
        runCommand(node, execrxRegistry(['/usr/bin/true']), 0, cliEnv),
      ),
    ];
    await rounds(cliTrue, Math.max(1, Math.floor(SAMPLES / 3)));
    printLatency('CLI: one `/usr/bin/true`, a fresh process each time', cliTrue);
    const cliOut = [
      contender('ssh, warm', () => runCommand('ssh', [...sshd.sshArgs(true), head.join(' ')])),
      contender('execrx run --url', () => runCommand(node, execrxUrl(head))),
      contender('execrx run --registry (Noise)', () =>
        runCommand(node, execrxRegistry(head), 0, cliEnv),
      ),
    ];
    await rounds(cliOut, RUNS, BYTES);
    printThroughput(`CLI: ${MIB} MiB of stdout into a pipe`, cliOut, false);
    const cliIn = [
      contender('ssh, warm', () =>
        runCommand('ssh', [...sshd.sshArgs(true), sink.slice(2).join(' ')], BYTES),
      ),
      contender('execrx run --url', () => runCommand(node, withStdin(execrxUrl(sink)), BYTES)),
      contender('execrx run --registry (Noise)', () =>
        runCommand(node, execrxRegistry(sink, true), BYTES, cliEnv),
      ),
    ];
    await rounds(cliIn, RUNS, 0);
    printThroughput(`CLI: ${MIB} MiB of stdin into \`head -c N >/dev/null\``, cliIn, false);

    // --- library level
    const plain = await connectPlain(plainUrl);
    const noise = await connectNoise(registryUrl, token);
    const ssh = await sshConnect(sshd);
    const libTrue = [
      contender('execrx plain, warm session', () => execrxRun(plain, ['/usr/bin/true'])),
      contender('execrx Noise, warm session', () => execrxRun(noise, ['/usr/bin/true'])),
      contender('ssh2, warm connection', () => sshRun(ssh, '/usr/bin/true')),
      contender('execrx plain, fresh connection', async () => {
        const client = await connectPlain(plainUrl);
        const bytes = await execrxRun(client, ['/usr/bin/true']);
        client.close();
        return bytes;
      }),
      contender('execrx Noise, fresh (lookup+handshake)', async () => {
        const client = await connectNoise(registryUrl, token);
        const bytes = await execrxRun(client, ['/usr/bin/true']);
        client.close();
        return bytes;
      }),
      contender('ssh2, fresh connection', async () => {
        const client = await sshConnect(sshd);
        const bytes = await sshRun(client, '/usr/bin/true');
        client.end();
        return bytes;
      }),
    ];
    await rounds(libTrue, SAMPLES);
    printLatency('library: exec `/usr/bin/true`', libTrue);
    const libOut = [
      contender('execrx plain', () => execrxRun(plain, head)),
      contender('execrx Noise', () => execrxRun(noise, head)),
      contender('ssh2', () => sshRun(ssh, head.join(' '))),
    ];
    await rounds(libOut, RUNS, BYTES);
    printThroughput(`library: ${MIB} MiB of stdout`, libOut, true);
    const libIn = [
      contender('execrx plain', () => execrxRun(plain, sink, BYTES)),
      contender('execrx Noise', () => execrxRun(noise, sink, BYTES)),
      contender('ssh2', () => sshRun(ssh, sink.slice(2).join(' '), BYTES)),
    ];
    await rounds(libIn, RUNS, 0);
    printThroughput(`library: ${MIB} MiB of stdin into \`head -c N >/dev/null\``, libIn, true);
    plain.close();
    noise.close();
    ssh.end();

    const [sshFresh, , cliUrlTrue, cliRegistryTrue] = cliTrue.map((c) =>
      median(c.samples),
    ) as number[];
    const [sshOut, urlOut, registryOut] = cliOut.map(mbps) as number[];
    const [plainWarm, , ssh2Warm] = libTrue.map((c) => median(c.samples)) as number[];
    console.log('ratios (medians of this run) against issue 17 targets:');
    ratio('CLI stdout: execrx run --url / ssh warm (MB/s)', urlOut! / sshOut!, '≥ 1.0x');
    ratio(
      'CLI stdout: execrx run --registry / execrx run --url (MB/s)',
      registryOut! / urlOut!,
      '≥ 0.85x',
    );
    ratio(
      'CLI true: execrx run --registry / ssh fresh (ms)',
      cliRegistryTrue! / sshFresh!,
      '≤ 1.0x',
    );
    ratio('CLI true: execrx run --url / ssh fresh (ms)', cliUrlTrue! / sshFresh!, '≤ 0.8x');
    ratio('library warm exec p50: execrx plain / ssh2 warm (ms)', plainWarm! / ssh2Warm!, '≤ 0.5x');
  } finally {
    stopClis();
    await sshd.stop();
  }
}

await main();
