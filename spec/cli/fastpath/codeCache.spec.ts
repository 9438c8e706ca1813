/**
 * src/cli/fastpath/codeCache.ts against its plain path (bench/plain/cli/fastpath/codeCache.ts):
 * the built CLI prints and exits the same with and without a code cache, and with a cache it
 * must not trust (corrupted, another user's, in a directory others can write, behind a
 * symlink, in a directory it cannot create). Whether a cache was used shows in the file: a run
 * with a known option set keeps it (same inode), a cache it did not trust is replaced.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertBuilt,
  killRunningClis,
  runCli,
  startCli,
  type CliResult,
  type RunningCli,
} from '../support/runCli.js';

/** A uid that is not ours, for files and directories another user owns (needs root). */
const OTHER_UID = 65534;
const asRoot = process.getuid?.() === 0;

/** Commands run both ways: the embedded executor, an executor over WebSocket, help, failures. */
let serve: RunningCli;
let url: string;
let commands: string[][];
let plain: Map<string, CliResult>;
let scratch: string;

/** A fresh cache home (`XDG_CACHE_HOME`), mode 0700. */
async function cacheHome(): Promise<string> {
  const home = await mkdtemp(join(scratch, 'home-'));
  await chmod(home, 0o700);
  return home;
}

function withCache(home: string, args: readonly string[]): Promise<CliResult> {
  return runCli(args, { env: { XDG_CACHE_HOME: home }, timeoutMs: 60_000 });
}

function runFile(home: string): string {
  return join(home, 'execrx', 'run.v8cache');
}

const TRUE_RUN = ['run', '--no-stdin', '--', 'sh', '-c', 'echo out; echo err >&2'];

beforeAll(async () => {
  assertBuilt();
  scratch = await mkdtemp(join(tmpdir(), 'execrx-code-cache-'));
  // The executor and the reference runs take the plain path: their cache directory is
  // group-writable, which the fast path refuses (and the refusal is checked below).
  const refused = await mkdtemp(join(scratch, 'refused-'));
  await mkdir(join(refused, 'execrx'));
  await chmod(join(refused, 'execrx'), 0o777);
  serve = startCli(['serve', '--listen', 'ws://127.0.0.1:0'], {
    env: { XDG_CACHE_HOME: refused },
    timeoutMs: 300_000,
  });
  url = ((await serve.stdoutLines(1))[0] as string).trim();
  commands = [
    TRUE_RUN,
    ['run', '--url', url, '--no-stdin', '--', 'sh', '-c', 'printf "%s|" a "b c"; echo e >&2'],
    ['run', '--no-stdin', '--', 'sh', '-c', 'echo failing; exit 3'],
    ['help', 'run'],
    ['run', '--no-such-option'],
    ['ls', '--help'],
  ];
  plain = new Map();
  for (const argv of commands) plain.set(argv.join(' '), await withCache(refused, argv));
  expect(readdirSync(join(refused, 'execrx'))).toEqual([]);
}, 120_000);

afterEach(async () => {
  await killRunningClis();
});

afterAll(async () => {
  serve?.child.kill();
  await rm(scratch, { recursive: true, force: true });
});

describe('the CLI through its code cache', () => {
  it('prints and exits as the plain path does, without a cache and from it', async () => {
    const home = await cacheHome();
    for (const pass of ['without a cache', 'from the cache']) {
      for (const argv of commands) {
        const result = await withCache(home, argv);
        expect({ pass, argv, result }).toEqual({ pass, argv, result: plain.get(argv.join(' ')) });
      }
    }
    const dir = statSync(join(home, 'execrx'));
    expect(dir.mode & 0o777).toBe(0o700);
    expect(readdirSync(join(home, 'execrx')).sort()).toEqual([
      'help.v8cache',
      'ls.v8cache',
      'run.v8cache',
    ]);
    const file = statSync(runFile(home));
    expect(file.mode & 0o777).toBe(0o600);
    expect(file.uid).toBe(process.getuid?.());
  }, 240_000);

  it('serves `execrx console` (its one `import()` of a builtin) without a cache and from it', async () => {
    const home = await cacheHome();
    for (const pass of ['without a cache', 'from the cache']) {
      const console = startCli(['console', '--url', url, '--port', '0'], {
        env: { XDG_CACHE_HOME: home },
        timeoutMs: 60_000,
      });
      const [line] = await console.stdoutLines(1);
      console.child.kill('SIGTERM');
      const result = await console.result;
      expect({ pass, line, stderr: result.stderr }).toEqual({
        pass,
        line: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+$/),
        stderr: '',
      });
      expect(readdirSync(join(home, 'execrx'))).toEqual(['console.v8cache']);
    }
  }, 120_000);

  it('keeps a cache it used, and adds the functions of a run with new options', async () => {
    const home = await cacheHome();
    await withCache(home, ['run', '--', 'sh', '-c', 'exit 3']);
    const failed = statSync(runFile(home)); // a failed run leaves a cache, with no options recorded

    await withCache(home, TRUE_RUN);
    const first = statSync(runFile(home));
    expect(first.ino).not.toBe(failed.ino);
    expect(await withCache(home, TRUE_RUN)).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(statSync(runFile(home)).ino).toBe(first.ino); // used (V8 accepted it), not rewritten
    await withCache(home, ['run', '--no-stdin', '--', 'sh', '-c', 'exit 3']);
    expect(statSync(runFile(home)).ino).toBe(first.ino); // a failed run adds nothing

    const withCwd = ['run', '--no-stdin', '--cwd', '/', '--', 'sh', '-c', 'echo out; echo err >&2'];
    expect(await withCache(home, withCwd)).toEqual(plain.get(TRUE_RUN.join(' ')));
    const second = statSync(runFile(home));
    expect(second.ino).not.toBe(first.ino);
    await withCache(home, TRUE_RUN);
    await withCache(home, withCwd);
    expect(statSync(runFile(home)).ino).toBe(second.ino); // both option sets now known
  }, 120_000);

  it('never feeds V8 a corrupted cache: any flipped byte, cut or tail is replaced', async () => {
    const home = await cacheHome();
    await withCache(home, TRUE_RUN);
    const good = readFileSync(runFile(home));
    const expected = plain.get(TRUE_RUN.join(' '));
    // Positions: the magic, our key and digest, V8's own header (its flags hash 28 bytes in;
    // V8 itself crashed on that byte), the payload's middle and end.
    const examples: Array<[{ at: number; xor: number; cut: number; tail: number }]> = [
      0,
      20,
      60,
      100,
      212 + 28,
      Math.floor(good.length / 2),
      good.length - 1,
    ].map((at) => [{ at, xor: 0x55, cut: good.length, tail: 0 }]);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          at: fc.nat({ max: good.length - 1 }),
          xor: fc.integer({ min: 1, max: 255 }),
          cut: fc.integer({ min: 0, max: good.length }),
          tail: fc.nat({ max: 3 }),
        }),
        async ({ at, xor, cut, tail }) => {
          const bad = Buffer.concat([good, Buffer.alloc(tail, 1)]);
          bad[at] = (bad[at] as number) ^ xor;
          const written = bad.subarray(0, tail > 0 ? bad.length : cut);
          writeFileSync(runFile(home), written, { mode: 0o600 });
          expect(await withCache(home, TRUE_RUN)).toEqual(expected);
          expect(readFileSync(runFile(home)).equals(written)).toBe(false);
        },
      ),
      { numRuns: 8, examples },
    );
  }, 300_000);

  it('writes nothing and runs plainly where it cannot make its directory', async () => {
    const home = await cacheHome();
    await writeFile(join(home, 'not-a-directory'), '');
    const result = await withCache(join(home, 'not-a-directory'), TRUE_RUN);
    expect(result).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(readdirSync(home)).toEqual(['not-a-directory']);
  }, 60_000);

  it('makes a missing XDG_CACHE_HOME and its directory, mode 0700', async () => {
    const home = join(await cacheHome(), 'missing');
    expect(await withCache(home, TRUE_RUN)).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, 'execrx')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(home, 'execrx'))).toEqual(['run.v8cache']);
  }, 60_000);

  it('ignores a relative XDG_CACHE_HOME (the XDG rule)', async () => {
    const cwd = await cacheHome();
    const result = await runCli(TRUE_RUN, { cwd, env: { XDG_CACHE_HOME: 'relative' } });
    expect(result).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(existsSync(join(cwd, 'relative'))).toBe(false);
  }, 60_000);

  it('refuses a directory others can write', async () => {
    const home = await cacheHome();
    await mkdir(join(home, 'execrx'), { mode: 0o700 });
    await chmod(join(home, 'execrx'), 0o770);
    expect(await withCache(home, TRUE_RUN)).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(readdirSync(join(home, 'execrx'))).toEqual([]);
  }, 60_000);

  (asRoot ? it : it.skip)(
    'refuses a directory another user owns (as root)',
    async () => {
      const home = await cacheHome();
      await mkdir(join(home, 'execrx'), { mode: 0o700 });
      await chown(join(home, 'execrx'), OTHER_UID, OTHER_UID);
      expect(await withCache(home, TRUE_RUN)).toEqual(plain.get(TRUE_RUN.join(' ')));
      expect(readdirSync(join(home, 'execrx'))).toEqual([]);
    },
    60_000,
  );

  (asRoot ? it : it.skip)(
    'replaces a cache another user owns or could write, or one behind a symlink (as root)',
    async () => {
      const home = await cacheHome();
      await withCache(home, TRUE_RUN);
      const good = join(scratch, `good-${Date.now()}`);
      await copyFile(runFile(home), good);
      const setups: Array<[string, () => Promise<void>]> = [
        ['owned by another user', () => chown(runFile(home), OTHER_UID, OTHER_UID)],
        ['group-writable', () => chmod(runFile(home), 0o620)],
        [
          'a symlink to a good cache',
          async () => {
            await rm(runFile(home));
            await symlink(good, runFile(home));
          },
        ],
      ];
      for (const [what, setup] of setups) {
        await copyFile(good, runFile(home));
        await chmod(runFile(home), 0o600);
        await setup();
        const before = lstatSync(runFile(home));
        expect({ what, result: await withCache(home, TRUE_RUN) }).toEqual({
          what,
          result: plain.get(TRUE_RUN.join(' ')),
        });
        const after = lstatSync(runFile(home));
        expect({ what, replaced: after.ino !== before.ino, file: after.isFile() }).toEqual({
          what,
          replaced: true,
          file: true,
        });
        expect(after.uid).toBe(0);
      }
    },
    120_000,
  );

  it('lets concurrent runs share a directory: all succeed, one whole cache remains', async () => {
    const home = await cacheHome();
    const results = await Promise.all(Array.from({ length: 4 }, () => withCache(home, TRUE_RUN)));
    for (const result of results) expect(result).toEqual(plain.get(TRUE_RUN.join(' ')));
    expect(readdirSync(join(home, 'execrx'))).toEqual(['run.v8cache']); // no temporary left
    const inode = statSync(runFile(home)).ino;
    await withCache(home, TRUE_RUN);
    expect(statSync(runFile(home)).ino).toBe(inode);
  }, 120_000);
});
