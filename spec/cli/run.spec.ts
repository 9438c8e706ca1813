/** `execrx run` end to end: the built CLI with its embedded executor, as a child process. */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, killRunningClis, runCli, startCli } from './support/runCli.js';

beforeAll(assertBuilt);
afterEach(killRunningClis);

describe('execrx run (embedded executor)', () => {
  it('streams stdout and stderr to their own streams and exits with the exit code', async () => {
    const result = await runCli(['run', '--', 'sh', '-c', 'echo hi; echo err >&2; exit 5']);
    expect(result).toMatchObject({ code: 5, stdout: 'hi\n', stderr: 'err\n' });
  });

  it('accepts the command without `--` and passes its options through untouched', async () => {
    const result = await runCli(['run', 'printf', '%s|', '--tty', '-x']);
    expect(result).toMatchObject({ code: 0, stdout: '--tty|-x|', stderr: '' });
  });

  it('forwards piped stdin to the command', async () => {
    const result = await runCli(['run', '--', 'head', '-n', '2'], {
      input: 'first\nsecond\nthird\n',
    });
    expect(result).toMatchObject({ code: 0, stdout: 'first\nsecond\n' });
  });

  it('sends the end of input as Ctrl-D on a terminal (--tty)', async () => {
    const result = await runCli(['run', '--tty', '--', 'sh', '-c', 'cat; echo done'], {
      input: 'typed',
    });
    expect(result.code).toBe(0);
    // The remote terminal echoes the input, then cat repeats it and sh says done.
    expect(result.stdout).toContain('typedtyped');
    expect(result.stdout).toContain('done\r\n');
  });

  it('runs in --cwd with --env variables on top of the executor environment', async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'execrx-cli-')));
    try {
      const result = await runCli([
        'run',
        '--cwd',
        dir,
        '--env',
        'GREETING=hello world',
        '--env',
        'EMPTY=',
        '--',
        'sh',
        '-c',
        'pwd; echo "$GREETING"; echo "[${EMPTY-unset}]"; command -v sh >/dev/null && echo path-ok',
      ]);
      expect(result).toMatchObject({
        code: 0,
        stdout: `${dir}\nhello world\n[]\npath-ok\n`,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails with one clear line when the command cannot be started', async () => {
    const result = await runCli(['run', '--', '/nonexistent/program']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^execrx: cannot start `\/nonexistent\/program`: .*No such file/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('forwards stdin to `cat`, which keeps waiting (no remote EOF) until Ctrl-C', async () => {
    const cli = startCli(['run', '--', 'cat'], { input: 'line one\nline two\n' });
    await cli.waitForStdout('line two\n');
    cli.child.kill('SIGINT');
    const result = await cli.result;
    expect(result).toMatchObject({ code: 130, stdout: 'line one\nline two\n' });
  });
});
