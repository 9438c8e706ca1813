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
      const executor = startCli(['serve', '--noise', '--listen', 'ws://127.0.0.1:0'], {
        timeoutMs: TIMEOUT_MS,
      });
      const [url, announcement] = await executor.stdoutLines(2);
      const bundle = {
        websocketUrl: url as string,
        ...(JSON.parse(announcement as string) as object),
        harnessKeyAuthorization: 'browser-spec',
      };
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
            connectBundle as Parameters<ExecrxModule['connectNoiseHarness']>[0],
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
});
