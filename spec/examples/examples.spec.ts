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

function runExample(name: string): Promise<Run> {
  // Jest's --experimental-vm-modules is not for the child, and each example starts its own executor.
  const { NODE_OPTIONS: _nodeOptions, EXECRX_URL: _url, ...inherited } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', `examples/${name}`],
      { cwd: ROOT, env: inherited, timeout: 60_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const lines = (text: string): string[] => text.split('\n').filter((line) => line !== '');

/** Each example, what it must print on stdout (line by line) and on stderr, and exit 0. */
const EXAMPLES: readonly { file: string; shows: string; stdout: string[]; stderr?: string }[] = [
  {
    file: 'piped-command.ts',
    shows: 'pipes stdout and stderr apart and prints the exit code',
    stdout: ['hello from the executor', 'exit code: 3'],
    stderr: 'oops\n',
  },
  {
    file: 'status-subscriber.ts',
    shows: 'sees Disconnected while the executor is down and Connected again',
    stdout: [
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
    ],
  },
  {
    file: 'file-walk.ts',
    shows: 'lists the tree it built, with sizes, and removes it',
    stdout: [
      'README.md (7 bytes)',
      'src/',
      'src/lib/',
      'src/lib/util.ts (11 bytes)',
      'src/main.ts (16 bytes)',
      '5 entries, 0 errors, truncated: false',
    ],
  },
  {
    file: 'refresh.ts',
    shows: 'moves to the newly registered executor and retires the old session',
    stdout: [
      'connected to executor A',
      'executor B registered under the same environment id',
      'after refresh: executor B, new session: true',
      'the retired session fails with DisconnectedError',
    ],
  },
];

describe('examples/', () => {
  for (const example of EXAMPLES) {
    it(`${example.file} ${example.shows}`, async () => {
      const run = await runExample(example.file);
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 0,
        stderr: example.stderr ?? '',
      });
      expect(lines(run.stdout)).toEqual(example.stdout);
    }, 90_000);
  }
});
