/**
 * The programs in examples/ run as a user runs them (`node --import tsx examples/x.ts`, each
 * importing the built package as `execrx`), and their real output is checked. Each example
 * starts its own executor (and rendezvous) on a free loopback port and stops it before exiting,
 * so a child that hangs fails here on the deadline rather than leaking.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runExample(name: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  // Jest's --experimental-vm-modules is not for the child; EXECRX_URL only when a test sets it.
  const { NODE_OPTIONS: _nodeOptions, EXECRX_URL: _url, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `examples/${name}`],
      { cwd: ROOT, env: { ...inherited, ...env }, timeout: 60_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '');

describe('examples/', () => {
  it('piped-command.ts pipes stdout and stderr apart and prints the exit code', async () => {
    const run = await runExample('piped-command.ts');
    expect(run).toEqual({
      code: 0,
      stdout: 'hello from the executor\nexit code: 3\n',
      stderr: 'oops\n',
    });
  }, 90_000);

  it('status-subscriber.ts sees Disconnected while the executor is down and Connected again', async () => {
    const run = await runExample('status-subscriber.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([
      '[status] executor Disconnected',
      '[status] executor Connected',
      '/ is a directory',
      'stopping the executor',
      '[status] executor Disconnected',
      'starting it again on the same port',
      '[status] executor Connected',
      '/ is a directory',
      'new session: true',
      '[status] executor Disconnected',
    ]);
  }, 90_000);

  it('file-walk.ts lists the tree it built, with sizes, and removes it', async () => {
    const run = await runExample('file-walk.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([
      'README.md (7 bytes)',
      'src/',
      'src/lib/',
      'src/lib/util.ts (11 bytes)',
      'src/main.ts (16 bytes)',
      '5 entries, 0 errors, truncated: false',
    ]);
  }, 90_000);

  it('refresh.ts moves to the newly registered executor and retires the old session', async () => {
    const run = await runExample('refresh.ts');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lines(run.stdout)).toEqual([
      'connected to executor A',
      'executor B registered under the same environment id',
      'after refresh: executor B, new session: true',
      'the retired session fails with DisconnectedError',
    ]);
  }, 90_000);
});
