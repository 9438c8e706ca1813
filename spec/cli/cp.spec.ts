/**
 * `execrx cp` and `execrx ls` end to end, against the executor embedded in the CLI and the
 * real `codex exec-server`: a large file byte-exact both ways, a directory tree, missing paths
 * and permission denials (executors run as `nobody` through setpriv). Both executors run on
 * this machine, so a remote path is checked by reading it here.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';
import { assertBuilt, killRunningClis, runCli, type CliResult } from './support/runCli.js';

const EXECRX = fileURLToPath(new URL('../../bin/execrx.js', import.meta.url));
const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
const LARGE_BYTES = 24 * 1024 * 1024 + 12_345;

let root: string;
let large: Buffer;
let codex: RunningExecServer;
let codexAsNobody: RunningExecServer;

beforeAll(async () => {
  assertBuilt();
  root = await mkdtemp(join(tmpdir(), 'execrx-cp-'));
  await chmod(root, 0o755);
  large = randomBytes(LARGE_BYTES);
  const tree = join(root, 'tree');
  await mkdir(join(tree, 'sub', 'deeper'), { recursive: true });
  await mkdir(join(tree, 'empty'));
  await writeFile(join(tree, 'large.bin'), large);
  await writeFile(join(tree, 'sub', 'a.txt'), 'alpha\n');
  await writeFile(join(tree, 'sub', 'deeper', 'b.txt'), '');
  // Root-only: unreadable and unwritable for an executor running as nobody.
  await mkdir(join(root, 'locked'), { mode: 0o755 });
  await writeFile(join(root, 'locked', 'secret.txt'), 'secret', { mode: 0o600 });
  [codex, codexAsNobody] = await Promise.all([
    startCodexExecServer(),
    startCodexExecServer({ launcher: AS_NOBODY }),
  ]);
}, 60_000);
afterEach(killRunningClis);
afterAll(async () => {
  await Promise.all([codex?.stop(), codexAsNobody?.stop()]);
  await rm(root, { recursive: true, force: true });
});

/** The executors: embedded in the CLI (no option) and the real binary (`--url`). */
const EXECUTORS: ReadonlyArray<[string, () => string[]]> = [
  ['embedded executor', () => []],
  ['codex exec-server', () => ['--url', codex.url]],
];

async function fresh(name: string): Promise<string> {
  const dir = join(root, `${name}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir);
  return dir;
}

const cp = (options: string[], source: string, destination: string): Promise<CliResult> =>
  runCli(['cp', ...options, source, destination], { timeoutMs: 60_000 });

describe.each(EXECUTORS)('execrx cp with the %s', (_name, options) => {
  it('uploads a directory tree with a large file byte-exact, silently when piped', async () => {
    const destination = await fresh('up');
    const result = await cp(options(), join(root, 'tree'), `remote:${destination}`);
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const copied = join(destination, 'tree');
    expect((await readFile(join(copied, 'large.bin'))).equals(large)).toBe(true);
    expect(await readFile(join(copied, 'sub', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(copied, 'sub', 'deeper', 'b.txt'), 'utf8')).toBe('');
    await expect(readFile(join(copied, 'empty'))).rejects.toMatchObject({ code: 'EISDIR' });
  }, 60_000);

  it('downloads a large file byte-exact to a new name, and a tree into an existing directory', async () => {
    const destination = await fresh('down');
    const file = await cp(
      options(),
      `remote:${join(root, 'tree', 'large.bin')}`,
      join(destination, 'copy.bin'),
    );
    expect(file).toMatchObject({ code: 0, stderr: '' });
    expect((await readFile(join(destination, 'copy.bin'))).equals(large)).toBe(true);
    const tree = await cp(options(), `remote:${join(root, 'tree', 'sub')}`, destination);
    expect(tree).toMatchObject({ code: 0, stderr: '' });
    expect(await readFile(join(destination, 'sub', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(destination, 'sub', 'deeper', 'b.txt'), 'utf8')).toBe('');
  }, 60_000);

  it('names a missing source or destination directory in one line, exit 1', async () => {
    const missing = join(root, 'no-such-file');
    const download = await cp(options(), `remote:${missing}`, root);
    expect(download.code).toBe(1);
    expect(download.stderr).toBe(`execrx: remote:${missing}: no such file or directory\n`);
    const upload = await cp(options(), missing, `remote:${root}`);
    expect(upload.stderr).toBe(`execrx: ${missing}: no such file or directory\n`);
    const target = join(root, 'no-such-dir', 'a.txt');
    const intoMissing = await cp(options(), join(root, 'tree', 'sub', 'a.txt'), `remote:${target}`);
    expect(intoMissing.code).toBe(1);
    expect(intoMissing.stderr).toBe(
      `execrx: cannot write remote:${target}: no such file or directory\n`,
    );
  }, 60_000);

  it('ls lists a directory in name order, directories with a slash, and refuses a missing path', async () => {
    const listed = await runCli(['ls', ...options(), `remote:${join(root, 'tree')}`]);
    expect(listed).toMatchObject({ code: 0, stdout: 'empty/\nlarge.bin\nsub/\n', stderr: '' });
    const long = await runCli(['ls', '--long', ...options(), `remote:${join(root, 'tree')}`]);
    expect(long.stdout).toMatch(
      /^d\t.*\tempty\/\n-\t24\.0 MiB\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\tlarge\.bin\n/,
    );
    const missing = await runCli(['ls', ...options(), `remote:${join(root, 'nope')}`]);
    expect(missing).toMatchObject({
      code: 1,
      stderr: `execrx: remote:${join(root, 'nope')}: no such file or directory\n`,
    });
  }, 30_000);
});

describe('execrx cp: permission denied', () => {
  it('on the real codex exec-server (running as nobody), both directions', async () => {
    const destination = await fresh('denied');
    const read = await cp(
      ['--url', codexAsNobody.url],
      `remote:${join(root, 'locked', 'secret.txt')}`,
      destination,
    );
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/^execrx: cannot read remote:.*secret\.txt: permission denied/);
    const write = await cp(
      ['--url', codexAsNobody.url],
      join(root, 'tree', 'sub', 'a.txt'),
      `remote:${join(root, 'locked')}`,
    );
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(
      /^execrx: cannot write remote:.*locked\/a\.txt: permission denied/,
    );
  }, 30_000);

  it('with the embedded executor (the CLI running as nobody), both sides', async () => {
    const asNobody = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(
          AS_NOBODY[0] as string,
          [...AS_NOBODY.slice(1), process.execPath, EXECRX, ...args],
          {
            cwd: root,
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
        child.once('close', (code) => resolve({ code, stderr }));
      });
    const remoteRead = await asNobody([
      'cp',
      `remote:${join(root, 'locked', 'secret.txt')}`,
      tmpdir(),
    ]);
    expect(remoteRead.code).toBe(1);
    expect(remoteRead.stderr).toMatch(
      /^execrx: cannot read remote:.*secret\.txt: permission denied/,
    );
    const localRead = await asNobody([
      'cp',
      join(root, 'locked', 'secret.txt'),
      `remote:${tmpdir()}`,
    ]);
    expect(localRead).toEqual({
      code: 1,
      stderr: `execrx: cannot read ${join(root, 'locked', 'secret.txt')}: permission denied\n`,
    });
    const localWrite = await asNobody([
      'cp',
      `remote:${join(root, 'tree', 'sub', 'a.txt')}`,
      join(root, 'locked'),
    ]);
    expect(localWrite).toEqual({
      code: 1,
      stderr: `execrx: cannot write ${join(root, 'locked', 'a.txt')}: permission denied\n`,
    });
  }, 30_000);
});

describe('execrx cp: usage', () => {
  it.each([
    [['cp', 'a', 'b'], 'one of SOURCE and DESTINATION must be on the executor (remote:PATH)'],
    [['cp', 'remote:/a', 'remote:/b'], 'copying between two executor paths is not supported'],
    [['cp', 'a'], 'expects SOURCE and DESTINATION'],
    [['ls', '/tmp'], 'expects a path on the executor, remote:PATH, got `/tmp`'],
  ])('%j is a usage error', async (args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
