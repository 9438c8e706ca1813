/**
 * The Noise path from a web page: in Chromium, the browser bundle runs the hybrid IK
 * handshake (@noble/* + WebCrypto's CSPRNG) and the encrypted relay framing against a real
 * direct-Noise executor (`execrx serve --noise`), whose bundle fields the spec hands to the page.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Observable } from 'rxjs';
import { assertBuilt, killRunningClis, startCli } from '../cli/support/runCli.js';
import { serveBundlePage, type BundlePage, type ExecrxModule } from './support/bundlePage.js';
import { openChromium, type OpenBrowser } from './support/chromium.js';

const TIMEOUT_MS = 60_000;

let browser: OpenBrowser;
let bundlePage: BundlePage;

beforeAll(async () => {
  assertBuilt();
  browser = await openChromium();
  bundlePage = await serveBundlePage();
}, TIMEOUT_MS);
afterAll(async () => {
  await browser?.close();
  await bundlePage?.close();
});
afterEach(killRunningClis);

describe('Noise from the page (Chromium)', () => {
  it(
    'handshakes with a direct-Noise executor and runs a command over the encrypted stream',
    async () => {
      const bundle = await startNoiseExecutor();
      const { page } = browser;
      await page.goto(bundlePage.url);
      await page.waitForFunction(() => 'execrx' in window);
      const result = await page.evaluate(async (connectBundle) => {
        const execrx = (window as unknown as { execrx: ExecrxModule }).execrx;
        const first = <T>(observable: Observable<T>): Promise<T> =>
          new Promise((resolve, reject) => observable.subscribe({ next: resolve, error: reject }));
        const identity = execrx.NoiseChannelIdentity.generate();
        const transport = await first(
          execrx.connectNoiseHarness(
            connectBundle as unknown as Parameters<ExecrxModule['connectNoiseHarness']>[0],
            identity,
          ),
        );
        const client = await first(
          execrx.ExecServerClient.connect(transport, { clientName: 'noise-from-page' }),
        );
        const handle = await first(
          client.startProcess({
            argv: ['sh', '-c', 'printf "%s" "$0"', 'encrypted hello'],
            cwd: '/',
            env: { PATH: '/usr/bin:/bin' },
          }),
        );
        const chunks: number[] = [];
        await new Promise<void>((resolve, reject) =>
          handle.stdout$.subscribe({
            next: (chunk) => chunks.push(...chunk),
            error: reject,
            complete: resolve,
          }),
        );
        const exitCode = await first(handle.exit$);
        client.close();
        return { text: new TextDecoder().decode(new Uint8Array(chunks)), exitCode };
      }, bundle);
      expect(result).toEqual({ text: 'encrypted hello', exitCode: 0 });
    },
    TIMEOUT_MS,
  );

  it(
    'refreshes to a new executor from the page: the old output stream errors, the new one works',
    async () => {
      const [first, second] = await Promise.all([startNoiseExecutor(), startNoiseExecutor()]);
      const { page } = browser;
      await page.goto(bundlePage.url);
      await page.waitForFunction(() => 'execrx' in window);
      const result = await page.evaluate(
        async ({ bundles }) => {
          const execrx = (window as unknown as { execrx: ExecrxModule }).execrx;
          const firstValue = <T>(observable: Observable<T>): Promise<T> =>
            new Promise((resolve, reject) =>
              observable.subscribe({ next: resolve, error: reject }),
            );
          const ended = (observable: Observable<unknown>): Promise<string> =>
            new Promise((resolve) =>
              observable.subscribe({
                error: (error: Error) => resolve(`error ${error.name}`),
                complete: () => resolve('complete'),
              }),
            );
          // What a registry does: hand out the bundle of the executor registered now.
          let current = bundles[0];
          const provider = {
            connectBundle: () => Promise.resolve(current),
          } as unknown as Parameters<ExecrxModule['noiseRendezvous']>[0];
          const environment = new execrx.LazyRemoteExecServerClient(
            execrx.noiseRendezvous(provider, execrx.NoiseChannelIdentity.generate()),
          );
          const start = async (script: string) =>
            firstValue(
              (await firstValue(environment.get())).startProcess({
                argv: ['sh', '-c', script],
                cwd: '/',
                env: { PATH: '/usr/bin:/bin' },
              }),
            );
          const old = await start('echo before; sleep 600');
          await firstValue(old.stdout$);
          const oldEnd = ended(old.events$);
          current = bundles[1];
          const refresh = await ended(environment.refreshConnection());
          const fresh = await start('printf after');
          const bytes: number[] = [];
          await new Promise<void>((resolve, reject) =>
            fresh.stdout$.subscribe({
              next: (chunk) => bytes.push(...chunk),
              error: reject,
              complete: resolve,
            }),
          );
          const state = await firstValue(environment.connectionState$);
          environment.close();
          return {
            refresh,
            old: await oldEnd,
            fresh: new TextDecoder().decode(new Uint8Array(bytes)),
            state,
          };
        },
        { bundles: [first, second] },
      );
      expect(result).toEqual({
        refresh: 'complete',
        old: expect.stringMatching(/^error /),
        fresh: 'after',
        state: 'Connected',
      });
    },
    TIMEOUT_MS,
  );
});

/** `execrx serve --noise`, and the connect bundle a registry would hand out for it. */
async function startNoiseExecutor(): Promise<Record<string, unknown>> {
  const executor = startCli(['serve', '--noise', '--listen', 'ws://127.0.0.1:0'], {
    timeoutMs: TIMEOUT_MS,
  });
  const [url, announcement] = await executor.stdoutLines(2);
  return {
    websocketUrl: url as string,
    ...(JSON.parse(announcement as string) as object),
    harnessKeyAuthorization: 'browser-spec',
  };
}
