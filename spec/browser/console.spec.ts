/**
 * `execrx console` in real headless Chromium: the page runs the execrx client (browser
 * bundle) against executors started here on 127.0.0.1, and is driven by role and name as a
 * user would (the names issue #13 fixes).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locator, Page } from 'playwright-core';
import { assertBuilt, killRunningClis, startCli, type RunningCli } from '../cli/support/runCli.js';
import { threeExecutorsToml } from '../environment/support/codexSetupToml.js';
import { freePort } from '../support/freePort.js';
import { openChromium, SCREENSHOT_DIR, type OpenBrowser } from './support/chromium.js';

/** Chromium, a console and executors share 2 loaded cores with other test workers. */
const TIMEOUT_MS = 90_000;
const UI_WAIT_MS = 30_000;

let browser: OpenBrowser;

beforeAll(async () => {
  assertBuilt();
  browser = await openChromium();
}, TIMEOUT_MS);
afterAll(async () => browser?.close());
afterEach(killRunningClis);

async function startConsole(
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<{ cli: RunningCli; url: string }> {
  const cli = startCli(['console', ...args], { env, timeoutMs: TIMEOUT_MS });
  const [url] = await cli.stdoutLines(1);
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{48}$/);
  return { cli, url: url as string };
}

async function startServe(listen = 'ws://127.0.0.1:0'): Promise<{ cli: RunningCli; url: string }> {
  const cli = startCli(['serve', '--no-warm-up', '--listen', listen], { timeoutMs: TIMEOUT_MS });
  const [url] = await cli.stdoutLines(1);
  return { cli, url: url as string };
}

async function run(page: Page, command: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Command' }).fill(command);
  await page.getByRole('button', { name: 'Run' }).click();
}

const connection = (page: Page): Locator => page.getByRole('status', { name: 'Connection' });
const outputLog = (page: Page): Locator => page.getByRole('log', { name: 'Output' });

/** Waits until `locator` is visible with text matching `text` (a substring or a pattern). */
async function waitForText(locator: Locator, text: string | RegExp): Promise<void> {
  await locator.filter({ hasText: text }).waitFor({ timeout: UI_WAIT_MS });
}

/** `execrx console` with `args`, its page open in Chromium and connected. */
async function openConnectedConsole(args: readonly string[] = []): Promise<Page> {
  const { url } = await startConsole(args);
  const { page } = browser;
  await page.goto(url);
  await waitForText(connection(page), /^Connected/);
  return page;
}

describe('execrx console (Chromium)', () => {
  it(
    'connects to the embedded executor, runs echo and shows its output and `exit 0`',
    async () => {
      const page = await openConnectedConsole();
      await run(page, 'echo hello from the browser');
      await waitForText(page.getByText('exit 0', { exact: true }), 'exit 0');
      expect(await outputLog(page).textContent()).toBe('hello from the browser\n');
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: fileURLToPath(new URL('console-echo.png', SCREENSHOT_DIR)) });
    },
    TIMEOUT_MS,
  );

  it(
    'interrupts a process that keeps printing (exit 130), and keeps earlier processes beside it',
    async () => {
      const page = await openConnectedConsole();
      await run(page, 'echo first');
      await waitForText(page.getByText('exit 0', { exact: true }), 'exit 0');
      await run(page, 'i=0; while true; do echo "line $i"; i=$((i+1)); sleep 0.05; done');
      await waitForText(outputLog(page), 'line 5');
      await page.getByRole('button', { name: 'Interrupt' }).click();
      await waitForText(page.getByText('exit 130', { exact: true }), 'exit 130');
      expect(await outputLog(page).textContent()).toMatch(/^line 0\nline 1\n/);
      // Both processes are on the page, side by side.
      expect(await page.getByRole('article').count()).toBe(2);
    },
    TIMEOUT_MS,
  );

  it(
    'runs an interactive 80x24 terminal that takes keyboard input',
    async () => {
      const page = await openConnectedConsole();
      await page.getByRole('checkbox', { name: /Terminal/ }).check();
      await run(page, 'stty size; read line; echo "got:$line"');
      await waitForText(outputLog(page), '24 80');
      await page.locator('.xterm-helper-textarea').first().focus();
      await page.keyboard.type('typed-in-chromium');
      await page.keyboard.press('Enter');
      await waitForText(outputLog(page), 'got:typed-in-chromium');
      await waitForText(page.getByText('exit 0', { exact: true }), 'exit 0');
    },
    TIMEOUT_MS,
  );

  it(
    'lists a directory and shows a file through client.fs',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'execrx-console-files-'));
      try {
        mkdirSync(join(dir, 'sub'));
        writeFileSync(join(dir, 'notes.txt'), 'seen through the console\n');
        writeFileSync(join(dir, 'big.bin'), Buffer.alloc(256 * 1024 + 1));
        const page = await openConnectedConsole();
        await page.getByRole('textbox', { name: 'Path' }).fill(dir);
        await page.getByRole('button', { name: 'List' }).click();
        const directory = page.getByRole('list', { name: 'Directory' });
        await waitForText(directory, 'notes.txt');
        expect(await directory.getByRole('listitem').allTextContents()).toEqual([
          '../',
          'sub/',
          'big.bin',
          'notes.txt',
        ]);
        await directory.getByRole('button', { name: 'notes.txt' }).click();
        await waitForText(page.getByLabel('File contents'), 'seen through the console');
        // The viewer shows at most 256 KiB.
        await directory.getByRole('button', { name: 'big.bin' }).click();
        await waitForText(page.getByLabel('File contents'), '262145 bytes, too large to show here');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );

  it(
    'shows Disconnected while the executor is gone and Connected once it is back',
    async () => {
      const first = await startServe();
      const { url } = await startConsole(['--url', first.url]);
      const { page } = browser;
      await page.goto(url);
      await waitForText(connection(page), /^Connected/);
      first.cli.child.kill('SIGKILL');
      await first.cli.result;
      await waitForText(connection(page), /^Disconnected/);
      // The same address again: the client's recovery finds it.
      const second = await startServe(first.url);
      expect(second.url).toBe(first.url);
      await waitForText(connection(page), /^Connected/);
      await run(page, 'echo after recovery');
      await waitForText(outputLog(page), 'after recovery');
    },
    TIMEOUT_MS,
  );

  it(
    'runs a command end to end encrypted through `execrx rendezvous` (CORS and Origin allowed for the console)',
    async () => {
      const tokens = {
        EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: 'browser-spec-executor',
        EXECRX_RENDEZVOUS_HARNESS_TOKEN: 'browser-spec-harness',
      };
      // The rendezvous must name the console's origin before the console knows its registry.
      const consolePort = await freePort();
      const rendezvous = startCli(
        ['rendezvous', '--allow-origin', `http://127.0.0.1:${consolePort}`],
        { env: tokens, timeoutMs: TIMEOUT_MS },
      );
      const [registry] = await rendezvous.stdoutLines(1);
      const executor = startCli(
        ['serve', '--no-warm-up', '--remote', registry as string, '--environment-id', 'web'],
        { env: { CODEX_API_KEY: tokens.EXECRX_RENDEZVOUS_EXECUTOR_TOKEN }, timeoutMs: TIMEOUT_MS },
      );
      await executor.stdoutLines(1);
      const consoleCli = startCli(
        [
          'console',
          '--port',
          String(consolePort),
          '--registry',
          registry as string,
          '--environment-id',
          'web',
        ],
        { env: { CODEX_API_KEY: tokens.EXECRX_RENDEZVOUS_HARNESS_TOKEN }, timeoutMs: TIMEOUT_MS },
      );
      const [url] = await consoleCli.stdoutLines(1);
      const { page } = browser;
      await page.goto(url as string);
      await waitForText(connection(page), /^Connected/);
      await run(page, 'echo over noise');
      await waitForText(outputLog(page), 'over noise');
      await waitForText(page.getByText('exit 0', { exact: true }), 'exit 0');
    },
    TIMEOUT_MS,
  );

  it(
    'runs echo on a stdio environment of the Codex setup (`--environment`), spawned by the console',
    async () => {
      const codexHome = mkdtempSync(join(tmpdir(), 'execrx-console-codex-home-'));
      try {
        writeFileSync(
          join(codexHome, 'environments.toml'),
          threeExecutorsToml(codexHome, 'ws://127.0.0.1:1'),
        );
        const { url } = await startConsole(['--environment', 'execrx-stdio'], {
          CODEX_HOME: codexHome,
          CODEX_EXEC_SERVER_NOISE_REGISTRY_URL: '',
          CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID: '',
          CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN: '',
        });
        const { page } = browser;
        await page.goto(url);
        await waitForText(connection(page), /^Connected/);
        await run(page, 'echo from a stdio environment');
        await waitForText(page.getByText('exit 0', { exact: true }), 'exit 0');
        expect(await outputLog(page).textContent()).toBe('from a stdio environment\n');
      } finally {
        rmSync(codexHome, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
