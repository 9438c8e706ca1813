/**
 * `execrx rendezvous` + `execrx serve --remote` + `execrx run --registry`, end to end as child
 * processes on 127.0.0.1: registration, registry lookup, Noise handshake through the relay.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

/** Executor side (`serve --remote`) and harness side (`run --registry`) hold distinct tokens. */
const TOKEN = { CODEX_API_KEY: 'cli-spec-token' };
const HARNESS = { CODEX_API_KEY: 'cli-spec-harness-token' };
const RENDEZVOUS_ENV = {
  EXECRX_RENDEZVOUS_EXECUTOR_TOKEN: TOKEN.CODEX_API_KEY,
  EXECRX_RENDEZVOUS_HARNESS_TOKEN: HARNESS.CODEX_API_KEY,
};

/** Three CLI processes start one after the other; a loaded 2-core machine needs the margin. */
const E2E_TIMEOUT_MS = 45_000;

describe('execrx rendezvous', () => {
  it(
    'relays `run --registry` to `serve --remote`, and every part stops on SIGINT',
    async () => {
      const rendezvous = startCli(['rendezvous'], {
        env: RENDEZVOUS_ENV,
        timeoutMs: E2E_TIMEOUT_MS,
      });
      const [registry] = await rendezvous.stdoutLines(1);
      expect(registry).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const executor = startCli(
        ['serve', '--no-warm-up', '--remote', registry as string, '--environment-id', 'cli-env'],
        { env: TOKEN, timeoutMs: E2E_TIMEOUT_MS },
      );
      const [status] = await executor.stdoutLines(1);
      expect(status).toMatch(/^registered environment cli-env \(registration .+\); serving$/);

      const result = await runCli(
        ['run', '--registry', registry as string, '--environment-id', 'cli-env'].concat([
          '--',
          'sh',
          '-c',
          'echo hi; exit 5',
        ]),
        { env: HARNESS, timeoutMs: E2E_TIMEOUT_MS },
      );
      expect(result).toMatchObject({ code: 5, stdout: 'hi\n', stderr: '' });

      executor.child.kill('SIGINT');
      expect(await executor.result).toMatchObject({ code: 0 });
      rendezvous.child.kill('SIGINT');
      const stopped = await rendezvous.result;
      expect(stopped.code).toBe(0);
      expect(stopped.stderr).toContain('rendezvous: cli-env registered');
      expect(stopped.stderr).toContain('rendezvous: cli-env executor attached');
      expect(stopped.stderr).toContain('harness key admitted');
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'answers a wrong token or an unknown environment with one line and exit code 1',
    async () => {
      const rendezvous = startCli(['rendezvous'], {
        env: RENDEZVOUS_ENV,
        timeoutMs: E2E_TIMEOUT_MS,
      });
      const [registry] = await rendezvous.stdoutLines(1);
      const lookup = ['--registry', registry as string, '--environment-id'];
      const [wrongToken, unknownEnvironment, refusedExecutor] = await Promise.all([
        runCli(['run', ...lookup, 'cli-env', '--token-env', 'WRONG', '--', 'true'], {
          env: { WRONG: 'not-the-token' },
        }),
        runCli(['run', ...lookup, 'nowhere', '--', 'true'], { env: HARNESS }),
        runCli(
          ['serve', '--no-warm-up', '--remote', registry as string, '--environment-id', 'cli-env'],
          {
            env: { CODEX_API_KEY: 'not-the-token' },
          },
        ),
      ]);
      for (const result of [wrongToken, unknownEnvironment, refusedExecutor]) {
        expect(result).toMatchObject({ code: 1, stdout: '' });
        expect(result.stderr).toMatch(/^execrx: \S/);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(wrongToken.stderr).toContain('401');
      expect(refusedExecutor.stderr).toContain('401');

      rendezvous.child.kill('SIGTERM');
      expect((await rendezvous.result).code).toBe(0);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    '--max-harness-sockets bounds the client sockets of one environment, and takes 1 to 128 only',
    async () => {
      const rendezvous = startCli(['rendezvous', '--max-harness-sockets', '1'], {
        env: RENDEZVOUS_ENV,
        timeoutMs: E2E_TIMEOUT_MS,
      });
      const [registry] = await rendezvous.stdoutLines(1);
      const executor = startCli(
        ['serve', '--no-warm-up', '--remote', registry as string, '--environment-id', 'cli-env'],
        { env: TOKEN, timeoutMs: E2E_TIMEOUT_MS },
      );
      await executor.stdoutLines(1);
      const lookup = ['run', '--registry', registry as string, '--environment-id', 'cli-env'];
      // The first run holds the one socket until it is killed.
      const holder = startCli([...lookup, '--no-stdin', '--', 'sh', '-c', 'echo up; sleep 60'], {
        env: HARNESS,
        timeoutMs: E2E_TIMEOUT_MS,
      });
      expect(await holder.stdoutLines(1)).toEqual(['up']);
      const refused = await runCli([...lookup, '--no-stdin', '--', 'true'], {
        env: HARNESS,
        timeoutMs: E2E_TIMEOUT_MS,
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('HTTP 429');
      holder.child.kill('SIGKILL');
      await holder.result;
      rendezvous.child.kill('SIGTERM');
      expect(await rendezvous.result).toMatchObject({ code: 0 });

      const usage = await Promise.all(
        ['0', '129', 'many'].map((value) => runCli(['rendezvous', '--max-harness-sockets', value])),
      );
      for (const result of usage) {
        expect(result.code).toBe(2);
        expect(result.stderr).toContain('--max-harness-sockets expects a number from 1 to 128');
      }
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'reads its tokens from files and refuses bad options with a usage error',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'execrx-rendezvous-cli-'));
      writeFileSync(join(dir, 'executor'), `${TOKEN.CODEX_API_KEY}\n`);
      writeFileSync(join(dir, 'harness'), HARNESS.CODEX_API_KEY);
      writeFileSync(join(dir, 'same'), TOKEN.CODEX_API_KEY);
      const files = (harness: string) => [
        '--executor-token-file',
        join(dir, 'executor'),
        '--harness-token-file',
        join(dir, harness),
      ];
      const rendezvous = startCli(['rendezvous', ...files('harness')], {
        timeoutMs: E2E_TIMEOUT_MS,
      });
      const [registry] = await rendezvous.stdoutLines(1);
      const lookup = ['run', '--registry', registry as string, '--environment-id', 'nowhere'];
      const unknown = await runCli([...lookup, '--', 'true'], { env: HARNESS });
      expect(unknown.stderr).toContain('environment_not_found');
      const wrong = await runCli([...lookup, '--', 'true'], { env: TOKEN });
      expect(wrong.stderr).toContain('401');
      rendezvous.child.kill('SIGTERM');
      const stopped = await rendezvous.result;
      expect(stopped.code).toBe(0);
      expect(stopped.stderr).not.toContain('generated');

      const usage = await Promise.all([
        runCli(['rendezvous', '--allow-origin', 'https://app.example.com/path']),
        runCli(['rendezvous', '--store', 'redis://127.0.0.1:1']),
        runCli(['rendezvous', '--executor-token-file', join(dir, 'missing')]),
        runCli(['rendezvous', '--executor-token', 'on-argv']),
      ]);
      for (const result of usage) expect(result.code).toBe(2);
      expect(usage[0]!.stderr).toContain('--allow-origin expects an origin');
      expect(usage[1]!.stderr).toContain('needs the tokens every node shares');
      expect(usage[2]!.stderr).toContain('cannot read');
      expect(usage[3]!.stderr).toContain('unknown option `--executor-token`');
      const same = await runCli(['rendezvous', ...files('same')]);
      expect(same.code).toBe(1);
      expect(same.stderr).toContain('harness token equals an executor token');
      const noRedis = await runCli([
        'rendezvous',
        ...files('harness'),
        '--store',
        'redis://127.0.0.1:1',
      ]);
      expect(noRedis.code).toBe(1);
      expect(noRedis.stderr).toContain('cannot reach the rendezvous store at redis://127.0.0.1:1');
    },
    E2E_TIMEOUT_MS,
  );
});
