/**
 * The browser bundle: its size, and how the client performs in Chromium beside Node.
 *
 * - Sizes: minified and gzipped (level 9) esbuild bundles for the browser platform
 *   (scripts/bundle-browser.mjs's options): the client core without Noise (`ExecServerClient`
 *   + `connectWebSocket`) and the whole `execrx/browser` entry (Noise, registry, environment).
 *   Targets: ≤ 60 KiB and ≤ 150 KiB gzipped.
 * - Speed, in one run, against one direct-Noise executor (`execrx serve --noise`, own
 *   process): the Noise handshake (WebSocket open + hybrid IK, p50 of HANDSHAKES) and a
 *   16 MiB stdout stream (`head -c 16777216 /dev/zero`, best of RUNS) through the encrypted
 *   channel, from Node (node:crypto) and from headless Chromium (@noble/*, records opened by
 *   WebCrypto), alternating. Chromium runs with no DevTools client attached
 *   (spec/browser/support/taskPage.ts says why), as a user's browser does.
 *   Target: Chromium's throughput ≥ 0.5x Node's.
 *
 * Run: `npm run build && npx tsx bench/browser-bundle.ts` (`--sizes-only` skips Chromium).
 */
import { loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { firstValueFrom, type Observable } from 'rxjs';
import { fileURLToPath } from 'node:url';
import { ExecServerClient } from '../src/client/index.js';
import { NoiseChannelIdentity } from '../src/noise/index.js';
import type { NoiseRendezvousConnectBundle } from '../src/registry/index.js';
import { connectNoiseHarness } from '../src/transport/noiseHarnessTransport.js';
import { killRunningClis, startCli } from '../spec/cli/support/runCli.js';
import { openTaskPage } from '../spec/browser/support/taskPage.js';
import { summarize } from './support/stats.js';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const STREAM_BYTES = 16 * 1024 * 1024;
const HANDSHAKES = Number(process.env.BROWSER_BENCH_HANDSHAKES ?? 10);
const RUNS = Number(process.env.BROWSER_BENCH_RUNS ?? 3);
const KIB = 1024;

interface BrowserBuild {
  browserBuildOptions(entry: string, outfile: string, extra?: object): Parameters<typeof build>[0];
}

async function bundleSize(
  entry: { contents: string } | string,
): Promise<{ min: number; gz: number }> {
  const { browserBuildOptions } = (await import(
    `${REPO}scripts/bundle-browser.mjs` as string
  )) as BrowserBuild;
  const options = browserBuildOptions(typeof entry === 'string' ? entry : '', 'out.js', {
    minify: true,
    write: false,
    ...(typeof entry === 'string'
      ? {}
      : {
          entryPoints: undefined,
          stdin: { contents: entry.contents, resolveDir: REPO, loader: 'ts' },
        }),
  });
  const result = await build(options);
  const code = result.outputFiles?.[0]?.contents ?? new Uint8Array();
  return { min: code.length, gz: gzipSync(code, { level: 9 }).length };
}

/** Node's side: the same steps as BROWSER_MEASURE below, with the Node platform. */
async function measureNode(
  bundle: NoiseRendezvousConnectBundle,
): Promise<{ handshakes: number[]; mbPerSecond: number }> {
  const identity = NoiseChannelIdentity.generate();
  const handshakes: number[] = [];
  // One untimed handshake first on each side: the first one pays for compiling the code.
  for (let i = -1; i < HANDSHAKES; i++) {
    const start = performance.now();
    const transport = await firstValueFrom(connectNoiseHarness(bundle, identity));
    if (i >= 0) handshakes.push(performance.now() - start);
    transport.close();
  }
  const transport = await firstValueFrom(connectNoiseHarness(bundle, identity));
  const client = await firstValueFrom(
    ExecServerClient.connect(transport, { clientName: 'bench-node' }),
  );
  const mbPerSecond = await streamOnce(client);
  client.close();
  return { handshakes, mbPerSecond };
}

async function streamOnce(client: ExecServerClient): Promise<number> {
  const start = performance.now();
  const handle = await firstValueFrom(
    client.startProcess({
      argv: ['head', '-c', String(STREAM_BYTES), '/dev/zero'],
      cwd: '/',
      env: { PATH: '/usr/bin:/bin' },
    }),
  );
  let received = 0;
  await new Promise<void>((resolve, reject) =>
    (handle.stdout$ as Observable<Uint8Array>).subscribe({
      next: (chunk) => (received += chunk.byteLength),
      error: reject,
      complete: resolve,
    }),
  );
  if (received !== STREAM_BYTES) throw new Error(`received ${received} of ${STREAM_BYTES} bytes`);
  return STREAM_BYTES / 1e6 / ((performance.now() - start) / 1000);
}

/**
 * Chromium's side, as plain JavaScript (the page has `window.execrx`, the browser bundle;
 * a function compiled by tsx would carry helpers the page does not have).
 */
const BROWSER_MEASURE = `async ({ bundle, handshakeCount, streamBytes }) => {
  const x = window.execrx;
  const first = (o) => new Promise((resolve, reject) => o.subscribe({ next: resolve, error: reject }));
  const identity = x.NoiseChannelIdentity.generate();
  const handshakes = [];
  for (let i = -1; i < handshakeCount; i++) {
    const start = performance.now();
    const transport = await first(x.connectNoiseHarness(bundle, identity));
    if (i >= 0) handshakes.push(performance.now() - start);
    transport.close();
  }
  const transport = await first(x.connectNoiseHarness(bundle, identity));
  const client = await first(x.ExecServerClient.connect(transport, { clientName: 'bench-chromium' }));
  const start = performance.now();
  const handle = await first(client.startProcess({ argv: ['head', '-c', String(streamBytes), '/dev/zero'], cwd: '/', env: { PATH: '/usr/bin:/bin' } }));
  let received = 0;
  await new Promise((resolve, reject) => handle.stdout$.subscribe({ next: (c) => (received += c.byteLength), error: reject, complete: resolve }));
  if (received !== streamBytes) throw new Error('received ' + received + ' bytes');
  const mbPerSecond = streamBytes / 1e6 / ((performance.now() - start) / 1000);
  client.close();
  return { handshakes, mbPerSecond };
}`;

const kib = (bytes: number): string => `${(bytes / KIB).toFixed(1)} KiB`;

async function main(): Promise<void> {
  const core = await bundleSize({
    contents: `export { ExecServerClient } from './src/client/index.js';
export { connectWebSocket } from './src/transport/webSocketTransport.js';`,
  });
  const full = await bundleSize(`${REPO}src/browser.ts`);
  console.log('browser bundle                 minified     gzipped   target (gzipped)');
  console.log(
    `client without Noise       ${kib(core.min).padStart(12)} ${kib(core.gz).padStart(11)}   <= 60 KiB ${core.gz <= 60 * KIB ? 'ok' : 'MISSED'}`,
  );
  console.log(
    `execrx/browser (Noise)     ${kib(full.min).padStart(12)} ${kib(full.gz).padStart(11)}   <= 150 KiB ${full.gz <= 150 * KIB ? 'ok' : 'MISSED'}`,
  );
  if (process.argv.includes('--sizes-only')) return;

  const executor = startCli(['serve', '--noise', '--listen', 'ws://127.0.0.1:0'], {
    timeoutMs: 600_000,
  });
  const [url, announcement] = await executor.stdoutLines(2);
  const bundle = {
    websocketUrl: url as string,
    ...(JSON.parse(announcement as string) as Omit<
      NoiseRendezvousConnectBundle,
      'websocketUrl' | 'harnessKeyAuthorization'
    >),
    harnessKeyAuthorization: 'bench',
  } as NoiseRendezvousConnectBundle;
  const loadBefore = loadavg()[0]!.toFixed(2);
  const browser = await openTaskPage<
    { bundle: NoiseRendezvousConnectBundle; handshakeCount: number; streamBytes: number },
    { handshakes: number[]; mbPerSecond: number }
  >(BROWSER_MEASURE);
  try {
    const node = { handshakes: [] as number[], mb: [] as number[] };
    const chromium = { handshakes: [] as number[], mb: [] as number[] };
    for (let run = 0; run < RUNS; run++) {
      const n = await measureNode(bundle);
      node.handshakes.push(...n.handshakes);
      node.mb.push(n.mbPerSecond);
      const c = await browser.run({
        bundle,
        handshakeCount: HANDSHAKES,
        streamBytes: STREAM_BYTES,
      });
      chromium.handshakes.push(...c.handshakes);
      chromium.mb.push(c.mbPerSecond);
    }
    const nodeHandshake = summarize(node.handshakes).p50;
    const chromiumHandshake = summarize(chromium.handshakes).p50;
    const nodeMb = Math.max(...node.mb);
    const chromiumMb = Math.max(...chromium.mb);
    console.log('');
    console.log(`load average (1 min) ${loadBefore} before, ${loadavg()[0]!.toFixed(2)} after`);
    console.log(
      `direct Noise executor, ${RUNS} alternating runs      Node   Chromium   Chromium/Node`,
    );
    console.log(
      `handshake p50 (ms, ${HANDSHAKES * RUNS} each)          ${nodeHandshake.toFixed(1).padStart(10)} ${chromiumHandshake.toFixed(1).padStart(10)}   ${(chromiumHandshake / nodeHandshake).toFixed(2)}x`,
    );
    const ratio = chromiumMb / nodeMb;
    console.log(
      `16 MiB stdout, best (MB/s)              ${nodeMb.toFixed(1).padStart(10)} ${chromiumMb.toFixed(1).padStart(10)}   ${ratio.toFixed(2)}x (target >= 0.5x ${ratio >= 0.5 ? 'ok' : 'MISSED'})`,
    );
  } finally {
    await browser.close();
    await killRunningClis();
  }
}

await main();
