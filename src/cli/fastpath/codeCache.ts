/**
 * Fast path: the CLI started from a V8 code cache, so that a fresh `execrx run` does not compile
 * the CLI's script again (issue #17). Plain twin: bench/plain/cli/fastpath/codeCache.ts (imports
 * the ES module bundle and calls its `main`). Held to it by spec/cli/fastpath/codeCache.spec.ts;
 * what it earns: docs/performance.md, "Fresh-run code cache (session 10)".
 *
 * `scripts/bundle-cli.mjs` also builds the CLI as one CommonJS script, `dist/cli/main.cjs`.
 * When the user's cache directory is usable, `runCli` compiles that script with `vm.Script`
 * and the cached data left by earlier runs of the same command, and when there was none
 * writes `script.createCachedData()` after the command (it holds the functions compiled
 * lazily during the run, not only the top level). Otherwise it takes the plain path.
 *
 * Contracts:
 * - Behaviour: the script is the CLI built from the same modules (strict code, as the ES
 *   modules are; no `import()`, which a `vm.Script` lacks: the build turns those of builtins
 *   into `require()` and fails on any left); `main(argv)` runs once. A failure before the script runs (no directory, no
 *   script, unreadable cache) falls back to the plain path; a failure writing the cache after
 *   the command is ignored; a cache V8 rejects (other V8 version or flags) is compiled past
 *   and rewritten.
 * - Security: cached bytecode is code, so only a cache only we can have written is used. The
 *   directory (`$XDG_CACHE_HOME/execrx` if that is absolute, else `~/.cache/execrx`, created
 *   with mode 0700) must be a real directory owned by our uid and not group- or
 *   world-writable, else no cache at all. A cache file is opened without following symlinks
 *   and used only if the opened file is a regular file owned by our uid, not group- or
 *   world-writable (another user can replace a file only with one they own), at most
 *   `MAX_FILE_BYTES`, and its header holds our key (format, Node version, V8 version, arch and
 *   a SHA-256 of the script's text) and the SHA-256 of the rest: V8 checks its data's version,
 *   flags and source length but, in release builds, not its payload (a flipped byte was
 *   accepted, or crashed the process).
 * - Concurrency and bounds: a cache is written to a fresh temporary file (`O_EXCL`, mode 0600)
 *   and renamed over the old one, so a reader sees a whole file, old or new; concurrent
 *   writers: the last rename wins. One file per command (`<command>.v8cache`), rewritten when
 *   the key differs; it records the option sets (`shapes`, at most `MAX_SHAPES`) of the
 *   successful runs it was made from, and a successful run with a new one rewrites it (it
 *   then holds the functions of both). A failed run records none, so the cache it made is
 *   completed by the next successful one.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

type Main = (argv: string[]) => Promise<number>;

const SCRIPT_FILE = fileURLToPath(new URL('../main.cjs', import.meta.url));
const PLAIN_BUNDLE = new URL('../main.bundle.js', import.meta.url).href;

/** The CommonJS wrapper the script runs in; part of the key (the cache is of this text). */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) {"use strict";';
const WRAPPER_TAIL = '\n})';

const MAGIC = Buffer.from('execrx-v8cache-1', 'latin1');
const KEY_AT = MAGIC.length;
const DIGEST_AT = KEY_AT + 32;
const COUNT_AT = DIGEST_AT + 32;
const SHAPES_AT = COUNT_AT + 4;
const SHAPE_BYTES = 8;
const MAX_SHAPES = 16;
const HEADER_BYTES = SHAPES_AT + MAX_SHAPES * SHAPE_BYTES;
/** Larger files are not read (the CLI's cache is about 1 MB). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
const COMMAND_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const NOT_OURS = 0o022;

interface Prepared {
  readonly script: Script;
  /** Writes the cache if it was missing, rejected, or lacks this run's (successful) options. */
  readonly save: (succeeded: boolean) => void;
}

/** Runs `execrx <argv>` and resolves with its exit code, through the code cache when usable. */
export async function runCli(argv: string[]): Promise<number> {
  const prepared = prepare(argv);
  if (prepared === undefined) {
    const { main } = (await import(PLAIN_BUNDLE)) as { main: Main };
    return main(argv);
  }
  const module = { exports: {} as { main?: Main } };
  const wrapper = prepared.script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(SCRIPT_FILE), module, SCRIPT_FILE, dirname(SCRIPT_FILE));
  const { main } = module.exports;
  if (typeof main !== 'function') throw new Error(`${SCRIPT_FILE} does not export main`);
  const code = await main(argv);
  try {
    prepared.save(code === 0);
  } catch {
    // the command's result stands; the next run compiles afresh
  }
  return code;
}

/** The compiled script and how to save its cache, or undefined for the plain path. */
function prepare(argv: readonly string[]): Prepared | undefined {
  const [command, ...args] = argv;
  const uid = process.getuid?.();
  if (command === undefined || !COMMAND_NAME.test(command) || uid === undefined) return undefined;
  try {
    const dir = cacheDirectory(uid);
    if (dir === undefined) return undefined;
    const source = readFileSync(SCRIPT_FILE);
    const key = sha256(
      Buffer.from(
        `${MAGIC.toString('latin1')}\0${process.version}\0${process.versions.v8}\0${process.arch}\0${WRAPPER_HEAD}\0`,
      ),
      source,
    );
    const file = join(dir, `${command}.v8cache`);
    const cached = readCache(file, uid, key);
    const script = new Script(`${WRAPPER_HEAD}${source.toString('utf8')}${WRAPPER_TAIL}`, {
      filename: SCRIPT_FILE,
      cachedData: cached?.payload,
    });
    const shape = shapeOf(args);
    const shapes = cached?.shapes ?? [];
    const known = shapes.some((seen) => seen.equals(shape));
    const save = (succeeded: boolean): void => {
      const recorded = succeeded ? [shape] : [];
      if (cached === undefined || script.cachedDataRejected)
        writeCache(dir, file, key, recorded, script.createCachedData());
      else if (succeeded && !known && shapes.length < MAX_SHAPES)
        writeCache(dir, file, key, [...shapes, shape], script.createCachedData());
    };
    return { script, save };
  } catch {
    return undefined;
  }
}

/** The cache directory, created if missing, or undefined when it is not ours alone. */
function cacheDirectory(uid: number): string | undefined {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache');
  const dir = join(base, 'execrx');
  let stat = lstatOrUndefined(dir);
  if (stat === undefined) {
    if (lstatOrUndefined(base) === undefined) makeDirectory(base);
    makeDirectory(dir);
    stat = lstatSync(dir);
  }
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & NOT_OURS) !== 0) return undefined;
  return dir;
}

/** `mkdir` with mode 0700; one another process made meanwhile is checked like any other. */
function makeDirectory(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

interface CacheFile {
  readonly shapes: readonly Buffer[];
  readonly payload: Buffer;
}

/** The cache in `file` if it is ours, whole and made for `key`; else undefined. */
function readCache(file: string, uid: number, key: Buffer): CacheFile | undefined {
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.uid !== uid || (stat.mode & NOT_OURS) !== 0) return undefined;
    if (stat.size < HEADER_BYTES || stat.size > MAX_FILE_BYTES) return undefined;
    const bytes = Buffer.allocUnsafe(stat.size);
    let filled = 0;
    while (filled < bytes.length) {
      const read = readSync(fd, bytes, filled, bytes.length - filled, filled);
      if (read === 0) return undefined;
      filled += read;
    }
    return decodeCache(bytes, key);
  } finally {
    closeSync(fd);
  }
}

function decodeCache(bytes: Buffer, key: Buffer): CacheFile | undefined {
  if (!bytes.subarray(0, KEY_AT).equals(MAGIC)) return undefined;
  if (!bytes.subarray(KEY_AT, DIGEST_AT).equals(key)) return undefined;
  if (!bytes.subarray(DIGEST_AT, COUNT_AT).equals(sha256(bytes.subarray(COUNT_AT))))
    return undefined;
  const count = bytes.readUInt32LE(COUNT_AT);
  if (count > MAX_SHAPES) return undefined;
  const shapes = Array.from({ length: count }, (_, index) =>
    bytes.subarray(SHAPES_AT + index * SHAPE_BYTES, SHAPES_AT + (index + 1) * SHAPE_BYTES),
  );
  return { shapes, payload: bytes.subarray(HEADER_BYTES) };
}

/** Writes the cache through a temporary file and a rename; any failure leaves the old one. */
function writeCache(
  dir: string,
  file: string,
  key: Buffer,
  shapes: readonly Buffer[],
  payload: Buffer,
): void {
  const bytes = Buffer.alloc(HEADER_BYTES + payload.length);
  MAGIC.copy(bytes, 0);
  key.copy(bytes, KEY_AT);
  bytes.writeUInt32LE(shapes.length, COUNT_AT);
  shapes.forEach((shape, index) => shape.copy(bytes, SHAPES_AT + index * SHAPE_BYTES));
  payload.copy(bytes, HEADER_BYTES);
  sha256(bytes.subarray(COUNT_AT)).copy(bytes, DIGEST_AT);
  const temporary = join(dir, `.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, bytes, { flag: 'wx', mode: 0o600 });
    renameSync(temporary, file);
  } catch {
    try {
      unlinkSync(temporary);
    } catch {
      // not created
    }
  }
}

/** The option names before `--` (values and operands left out), as a short digest. */
function shapeOf(args: readonly string[]): Buffer {
  const options = new Set<string>();
  for (const arg of args) {
    if (arg === '--') break;
    if (arg.startsWith('-')) options.add(arg.split('=', 1)[0] as string);
  }
  return sha256(Buffer.from(JSON.stringify([...options].sort()))).subarray(0, SHAPE_BYTES);
}

function sha256(...parts: Buffer[]): Buffer {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
}
