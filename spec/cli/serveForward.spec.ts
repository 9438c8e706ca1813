/**
 * `serve forward`: an existing WebSocket exec-server (the codex binary, on a loopback port)
 * registered as a remote environment through `execrx rendezvous`, reached with `execrx run
 * --registry`. The same run goes through `codex exec-server forward` first, to show the
 * expectation holds for the binary's own forwarder.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { freshDir } from '../agent/support/codexAgent.js';
import {
  cleanEnv,
  codexCommand,
  startCodexExecServer,
  stopChild,
} from '../support/codexExecServer.js';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

const TOKEN = { CODEX_API_KEY: 'forward-token' };
/** What clients show the rendezvous: its harness token, distinct from the executors'. */
const HARNESS_TOKEN = { CODEX_API_KEY: 'forward-harness-token' };
const TIMEOUT_MS = 60_000;

async function runThrough(registry: string, environmentId: string) {
  // The forwarder may not have attached yet: retry the lookup a few times.
  for (let attempt = 0; ; attempt += 1) {
    const result = await runCli(
      [
        'run',
        '--registry',
        registry,
        '--environment-id',
        environmentId,
        '--',
        'sh',
        '-c',
        'echo "forwarded $((40+2))"; exit 4',
      ],
      { env: HARNESS_TOKEN, timeoutMs: 20_000 },
    );
    if (result.code === 4 || attempt === 20) return result;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('execrx serve forward', () => {
  it('refuses a command line without --connect', async () => {
    const result = await runCli(
      ['serve', 'forward', '--remote', 'http://127.0.0.1:1', '--environment-id', 'x'],
      {
        env: TOKEN,
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('forward needs --remote, --environment-id and --connect');
  });

  it(
    'forwards relayed connections to a WebSocket exec-server, like codex exec-server forward',
    async () => {
      const destination = await startCodexExecServer();
      const rendezvous = startCli(['rendezvous'], {
        env: {
          EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: TOKEN.CODEX_API_KEY,
          EXECRX_RENDEZVOUS_HARNESS_TOKEN: HARNESS_TOKEN.CODEX_API_KEY,
        },
        timeoutMs: TIMEOUT_MS,
      });
      const home = freshDir('execrx-forward-home-');
      const { command, prefixArgs } = codexCommand();
      try {
        const [registry] = (await rendezvous.stdoutLines(1)) as [string];
        const forwardArgs = (environmentId: string): string[] => [
          'forward',
          '--remote',
          registry,
          '--environment-id',
          environmentId,
          '--connect',
          destination.url,
        ];
        const theirs = spawn(command, [...prefixArgs, 'exec-server', ...forwardArgs('theirs')], {
          env: cleanEnv(TOKEN, home),
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        theirs.stderr?.resume();
        try {
          expect(await runThrough(registry, 'theirs')).toMatchObject({
            code: 4,
            stdout: 'forwarded 42\n',
          });
        } finally {
          await stopChild(theirs);
        }

        const ours = startCli(['serve', ...forwardArgs('ours')], {
          env: TOKEN,
          timeoutMs: TIMEOUT_MS,
        });
        const [status] = await ours.stdoutLines(1);
        expect(status).toMatch(/^registered environment ours \(registration .+\); serving$/);
        expect(await runThrough(registry, 'ours')).toMatchObject({
          code: 4,
          stdout: 'forwarded 42\n',
        });
        ours.child.kill('SIGTERM');
        expect((await ours.result).code).toBe(0);
      } finally {
        rendezvous.child.kill('SIGINT');
        await rendezvous.result;
        await destination.stop();
        rmSync(home, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
