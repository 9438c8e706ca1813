/** `execrx serve` and `execrx run --url` against it, both as child processes. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

describe('execrx serve', () => {
  it('prints its bound URL first and serves `execrx run --url` until interrupted', async () => {
    const server = startCli(['serve']);
    await server.waitForStdout('\n');
    const url = server.stdoutSoFar().split('\n')[0] as string;
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);

    const result = await runCli(
      [
        'run',
        '--url',
        url,
        '--env',
        'WHO=served',
        '--',
        'sh',
        '-c',
        'head -n 1; echo "$WHO" >&2; exit 3',
      ],
      { input: 'piped\n' },
    );
    expect(result).toMatchObject({ code: 3, stdout: 'piped\n', stderr: 'served\n' });

    server.child.kill('SIGINT');
    expect(await server.result).toMatchObject({ code: 0, stdout: `${url}\n` });
  });

  it('serves at once with --no-warm-up', async () => {
    const server = startCli(['serve', '--no-warm-up', '--listen', 'ws://127.0.0.1:0']);
    await server.waitForStdout('\n');
    const url = server.stdoutSoFar().split('\n')[0] as string;
    const result = await runCli(['run', '--url', url, '--', 'sh', '-c', 'echo cold']);
    expect(result).toMatchObject({ code: 0, stdout: 'cold\n' });
    server.child.kill('SIGTERM');
    expect(await server.result).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses a bad --listen address as a usage error', async () => {
    const result = await runCli(['serve', '--listen', 'http://127.0.0.1:1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^execrx: unsupported --listen URL `http:\/\/127\.0\.0\.1:1`/);
  });

  it('speaks newline-delimited JSON with --listen stdio and stops at end of input', async () => {
    const initialize = JSON.stringify({
      id: 1,
      method: 'initialize',
      params: { clientName: 'spec', resumeSessionId: null },
    });
    const result = await runCli(['serve', '--listen', 'stdio'], { input: `${initialize}\n` });
    expect(result.code).toBe(0);
    const reply = JSON.parse(result.stdout.split('\n')[0] as string) as {
      id: number;
      result: { sessionId: string };
    };
    expect(reply.id).toBe(1);
    expect(typeof reply.result.sessionId).toBe('string');
  });
});

describe('execrx run --url', () => {
  it('fails with one line and exit code 1 when nothing listens', async () => {
    const result = await runCli(['run', '--url', 'ws://127.0.0.1:9', '--', 'true']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^execrx: failed to connect to exec-server websocket `ws:\/\/127\.0\.0\.1:9`/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('fails with one line when the executor restarted and the session is gone', async () => {
    const first = startCli(['serve', '--no-warm-up']);
    await first.waitForStdout('\n');
    const url = first.stdoutSoFar().split('\n')[0] as string;
    const run = startCli(['run', '--url', url, '--', 'sh', '-c', 'echo started; sleep 20']);
    await run.waitForStdout('started\n');
    first.child.kill('SIGTERM'); // kills its processes and drops the connection
    await first.result;
    const second = startCli(['serve', '--no-warm-up', '--listen', url]);
    await second.waitForStdout('\n');
    const result = await run.result;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^execrx: could not reconnect to ws:\/\/127\.0\.0\.1:\d+: .*unknown session id/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('execrx serve --ws-auth with execrx run --token-file / --token-env', () => {
  it('serves a client that presents the token from a file or a variable, and only such', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'execrx-token-'));
    try {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, 'the-capability-token\n');
      const wrongFile = join(dir, 'wrong');
      writeFileSync(wrongFile, 'not-it');
      const server = startCli([
        'serve',
        '--no-warm-up',
        '--ws-auth',
        'capability-token',
        '--ws-token-file',
        tokenFile,
      ]);
      const [url] = (await server.stdoutLines(1)) as [string];
      const command = ['--', 'sh', '-c', 'echo in'];
      const [fromFile, fromVariable, without, wrong] = await Promise.all([
        runCli(['run', '--url', url, '--token-file', tokenFile, ...command]),
        runCli(['run', '--url', url, '--token-env', 'EXECRX_TOKEN', ...command], {
          env: { EXECRX_TOKEN: 'the-capability-token' },
        }),
        runCli(['run', '--url', url, ...command]),
        runCli(['run', '--url', url, '--token-file', wrongFile, ...command]),
      ]);
      expect(fromFile).toMatchObject({ code: 0, stdout: 'in\n' });
      expect(fromVariable).toMatchObject({ code: 0, stdout: 'in\n' });
      expect(without).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `execrx: failed to connect to exec-server websocket \`${url}\`: HTTP 401: missing websocket bearer token\n`,
      });
      expect(wrong).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `execrx: failed to connect to exec-server websocket \`${url}\`: HTTP 401: invalid websocket bearer token\n`,
      });
      server.child.kill('SIGTERM');
      expect(await server.result).toMatchObject({ code: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves loopback with --insecure-no-auth as without it', async () => {
    const server = startCli(['serve', '--no-warm-up', '--insecure-no-auth']);
    const [url] = (await server.stdoutLines(1)) as [string];
    expect(await runCli(['run', '--url', url, '--', 'true'])).toMatchObject({ code: 0 });
    server.child.kill('SIGTERM');
    expect(await server.result).toMatchObject({ code: 0 });
  });
});
