/**
 * `execrx console`'s HTTP side, without a browser: the token guards the page and the
 * pass-through, and the pass-through accepts only the console's own Origin (executors refuse
 * every Origin; the pass-through must not reopen that to other pages).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { MAX_PASS_THROUGHS } from '../../src/cli/consoleServer.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';
import { upgradeStatus } from './support/upgradeStatus.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

const TIMEOUT_MS = 30_000;

describe('execrx console server', () => {
  it(
    'opens the page and the pass-through only with the token and its own Origin',
    async () => {
      const cli = startCli(['console'], { timeoutMs: TIMEOUT_MS });
      const [printed] = await cli.stdoutLines(1);
      const url = new URL(printed as string);
      const token = url.searchParams.get('token') as string;
      const origin = url.origin;

      expect((await fetch(url)).status).toBe(200);
      const page = await (await fetch(url)).text();
      expect(page).toContain('"kind":"executor"');
      expect((await fetch(origin)).status).toBe(403);
      expect((await fetch(`${origin}/?token=${token.slice(1)}x`)).status).toBe(403);
      expect((await fetch(`${origin}/console.js`)).status).toBe(403);
      expect((await fetch(`${origin}/console.js?token=${token}`)).status).toBe(200);

      const executor = `ws://${url.host}/executor?token=${token}`;
      expect(await upgradeStatus(executor, 'http://evil.example')).toBe(403);
      expect(await upgradeStatus(executor, `http://localhost:${url.port}`)).toBe(403);
      expect(await upgradeStatus(executor, undefined)).toBe(403);
      expect(await upgradeStatus(`ws://${url.host}/executor`, origin)).toBe(403);
      expect(await upgradeStatus(`ws://${url.host}/executor?token=nope`, origin)).toBe(403);
      expect(await upgradeStatus(executor, origin)).toBe(101);

      cli.child.kill('SIGINT');
      expect(await cli.result).toMatchObject({ code: 0 });
    },
    TIMEOUT_MS,
  );

  it(
    'passes frames through unchanged to the executor',
    async () => {
      const cli = startCli(['console'], { timeoutMs: TIMEOUT_MS });
      const url = new URL((await cli.stdoutLines(1))[0] as string);
      const socket = new WebSocket(
        `ws://${url.host}/executor?token=${url.searchParams.get('token')}`,
        { origin: url.origin },
      );
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const reply = new Promise<string>((resolve) =>
        socket.once('message', (data) => resolve(String(data))),
      );
      socket.send(
        JSON.stringify({ id: 1, method: 'initialize', params: { clientName: 'console-spec' } }),
      );
      const answer = JSON.parse(await reply) as { id: number; result?: { sessionId?: string } };
      expect(answer.id).toBe(1);
      expect(typeof answer.result?.sessionId).toBe('string');
      socket.close();
    },
    TIMEOUT_MS,
  );

  it(
    `answers 503 past ${MAX_PASS_THROUGHS} pass-through connections, and 101 again after one closes`,
    async () => {
      const cli = startCli(['console'], { timeoutMs: TIMEOUT_MS });
      const url = new URL((await cli.stdoutLines(1))[0] as string);
      const executor = `ws://${url.host}/executor?token=${url.searchParams.get('token')}`;
      const open = await Promise.all(
        Array.from({ length: MAX_PASS_THROUGHS }, async () => {
          const socket = new WebSocket(executor, { origin: url.origin });
          await new Promise((resolve, reject) =>
            socket.once('open', resolve).once('error', reject),
          );
          return socket;
        }),
      );
      expect(await upgradeStatus(executor, url.origin)).toBe(503);
      const closing = open.pop() as WebSocket;
      await new Promise((resolve) => {
        closing.once('close', resolve);
        closing.close();
      });
      // The server sees the TCP close a moment after the client's close handshake ends.
      let status = 503;
      for (let attempt = 0; attempt < 50 && status === 503; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await upgradeStatus(executor, url.origin);
      }
      expect(status).toBe(101);
      for (const socket of open) socket.terminate();
    },
    TIMEOUT_MS,
  );

  it('refuses a bad --port with a usage error', async () => {
    const result = await runCli(['console', '--port', 'x']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--port expects 0-65535');
  });
});
