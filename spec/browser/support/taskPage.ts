/**
 * Bench helper: headless Chromium running tasks in a page with the browser bundle
 * (`window.execrx`), with no DevTools client attached.
 *
 * Why not playwright's `page.evaluate`: playwright enables the DevTools `Network` domain on
 * every page, so Chromium reports each WebSocket frame to it (base64 of the whole payload,
 * through the browser process to the driver). For a stream of binary frames that costs more
 * CPU than the client itself, a cost no user pays. Here the page fetches its tasks from this
 * server and posts the results back; Chromium is started on the page's URL and stopped by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BROWSER_BUNDLE, serveBundlePage } from './bundlePage.js';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.js';

export interface TaskPage<Task, Result> {
  /** Runs `task` in the page; rejects with the page's error, or after `timeoutMs`. */
  run(task: Task, timeoutMs?: number): Promise<Result>;
  close(): Promise<void>;
}

/**
 * `taskSource`: an async function `(task) => result` as plain JavaScript source (it runs in
 * the page, where `window.execrx` holds the bundle); tasks and results travel as JSON.
 */
export async function openTaskPage<Task, Result>(
  taskSource: string,
  bundlePath = BROWSER_BUNDLE,
): Promise<TaskPage<Task, Result>> {
  const html = `<!doctype html><meta charset="utf-8"><title>execrx tasks</title>
<script type="module">
import * as execrx from './execrx.js';
window.execrx = execrx;
const runTask = ${taskSource};
for (;;) {
  const next = await (await fetch('/task')).json();
  if (next.stop) break;
  let reply;
  try { reply = { result: await runTask(next.task) }; }
  catch (error) { reply = { error: String(error && error.stack || error) }; }
  await fetch('/result', { method: 'POST', body: JSON.stringify(reply) });
}
</script>`;

  /** The page's pending `GET /task`, answered when the next task is given. */
  let waitingPage: ServerResponse | undefined;
  let queued: string | undefined;
  let settle: ((reply: { result?: Result; error?: string }) => void) | undefined;

  const give = (body: string): void => {
    if (waitingPage === undefined) {
      queued = body;
      return;
    }
    waitingPage.writeHead(200, { 'content-type': 'application/json' });
    waitingPage.end(body);
    waitingPage = undefined;
  };

  const server = await serveBundlePage({
    bundlePath,
    html,
    otherRoutes(request, response) {
      if (request.url === '/task') {
        waitingPage = response;
        if (queued !== undefined) {
          const body = queued;
          queued = undefined;
          give(body);
        }
        return true;
      }
      if (request.url === '/result' && request.method === 'POST') {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (text: string) => (body += text));
        request.on('end', () => {
          response.end();
          settle?.(JSON.parse(body) as { result?: Result; error?: string });
        });
        return true;
      }
      return false;
    },
  });

  const profile = mkdtempSync(join(tmpdir(), 'execrx-chromium-'));
  const chromium: ChildProcess = spawn(
    CHROMIUM,
    [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, server.url],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => chromium.once('exit', () => resolve()));
  chromium.once('exit', (code, signal) =>
    settle?.({ error: `Chromium exited (${code ?? signal}) before giving a result` }),
  );

  return {
    run(task, timeoutMs = 120_000) {
      if (settle !== undefined) return Promise.reject(new Error('one task at a time'));
      return new Promise<Result>((resolve, reject) => {
        const timer = setTimeout(() => {
          settle = undefined;
          reject(new Error(`the Chromium page gave no result within ${timeoutMs} ms`));
        }, timeoutMs);
        settle = (reply) => {
          clearTimeout(timer);
          settle = undefined;
          if (reply.error !== undefined) reject(new Error(`in Chromium: ${reply.error}`));
          else resolve(reply.result as Result);
        };
        give(JSON.stringify({ task }));
      });
    },
    async close() {
      give(JSON.stringify({ stop: true }));
      chromium.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (chromium.exitCode === null && chromium.signalCode === null) {
        chromium.kill('SIGKILL');
        await exited;
      }
      await server.close();
      await removeProfile(profile);
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Chromium's helper processes may still write to the profile for a moment after it exits. */
async function removeProfile(profile: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      rmSync(profile, { recursive: true, force: true });
      return;
    } catch (error) {
      if (attempt === 20) {
        console.warn(`could not remove the Chromium profile ${profile}: ${String(error)}`);
        return;
      }
      await sleep(250);
    }
  }
}
