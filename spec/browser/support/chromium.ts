/**
 * Spec helper: Debian's headless Chromium (/usr/bin/chromium, no browser download) driven by
 * playwright-core, in a fresh profile directory that is removed afterwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Flags that keep a headless Chromium quiet and off the network on a shared CI machine. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface OpenBrowser {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

export async function openChromium(): Promise<OpenBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'execrx-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 1000 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where screenshots go (git-ignored). */
export const SCREENSHOT_DIR = new URL('../screenshots/', import.meta.url);
