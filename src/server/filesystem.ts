/**
 * The `fs/*` methods (spec §7) on the local disk, with the binary's error codes and texts.
 * Paths arrive as `file:` URIs. A request's `sandbox` is enforced first (sandbox/fileSystemAccess.ts).
 *
 * Over 400 lines for one reason: one function per method, each read on its own, sharing the
 * path, sandbox and error helpers kept here.
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, relative, isAbsolute, dirname, basename } from 'node:path';
import { decodeBase64Strict } from '../protocol/base64.js';
import { fsPath, uriFromPath } from './hostPath.js';
import { copyRegularFile, openWritable, writeAllAndClose } from './nonBlockingWrite.js';
import { fsFailure } from './osError.js';
import { metadataStats, type MetadataStats } from './fastpath/metadataStat.js';
import { PreformattedJson } from './preformattedJson.js';
import {
  enforceFileSandbox,
  enforceTreeReadable,
  fileReadDenial,
} from './sandbox/fileSystemAccess.js';
import { RpcFailure } from './rpcFailure.js';

const { S_IFMT, S_IFLNK, S_IFDIR, S_IFREG } = constants;

const MAX_READ_FILE_BYTES = 512 * 1024 * 1024;
const MAX_DIRECTORY_ENTRIES = 50_000;
const WALK_MAXIMA = { depth: 64, directories: 10_000, entries: 50_000 };
const WALK_RESPONSE_BUDGET = 4 * 1024 * 1024;

type Empty = Record<string, never>;

/** Runs an fs operation and maps its I/O errors (spec §7.3). */
async function io<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw fsFailure(error);
  }
}

export async function ensureRegularFile(file: FileHandle, path: string): Promise<number> {
  const stat = await file.stat();
  if (!stat.isFile()) throw RpcFailure.invalidRequest(`path \`${path}\` is not a file`);
  return stat.size;
}

const noFollow = (followSymlinks: boolean | null | undefined): number =>
  followSymlinks === false ? constants.O_NOFOLLOW : 0;

export async function readFile(params: {
  path: string;
  followSymlinks?: boolean | null;
  sandbox?: unknown;
}): Promise<{
  dataBase64: string;
}> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'read', params.followSymlinks !== false);
  return io(async () => {
    const file = await fs.open(
      path,
      constants.O_RDONLY | constants.O_NONBLOCK | noFollow(params.followSymlinks),
    );
    try {
      const size = await ensureRegularFile(file, path);
      if (size > MAX_READ_FILE_BYTES) {
        throw RpcFailure.invalidRequest(
          `file is too large to read: limit is ${MAX_READ_FILE_BYTES} bytes`,
        );
      }
      return { dataBase64: (await file.readFile()).toString('base64') };
    } finally {
      await file.close();
    }
  });
}

export async function writeFile(params: {
  path: string;
  dataBase64: string;
  followSymlinks?: boolean | null;
  sandbox?: unknown;
}): Promise<Empty> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'write', params.followSymlinks !== false);
  let data: Uint8Array;
  try {
    data = decodeBase64Strict(params.dataBase64);
  } catch (error) {
    throw RpcFailure.invalidRequest(
      `fs/writeFile requires valid base64 dataBase64: ${(error as Error).message}`,
    );
  }
  const flags = constants.O_CREAT | constants.O_TRUNC | noFollow(params.followSymlinks);
  await io(async () => writeAllAndClose(await openWritable(path, flags), data));
  return {};
}

export async function createDirectory(params: {
  path: string;
  recursive?: boolean | null;
  sandbox?: unknown;
}): Promise<Empty> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'write');
  await io(() => fs.mkdir(path, { recursive: params.recursive ?? true }));
  return {};
}

const millis = (value: number): number =>
  Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/**
 * The `fs/getMetadata` result, with its JSON text built by hand (it answers a hot request).
 * Its numbers come from lstat, so are finite: a template writes them as JSON.stringify does.
 */
export class FileMetadata extends PreformattedJson {
  constructor(
    readonly isDirectory: boolean,
    readonly isFile: boolean,
    readonly isSymlink: boolean,
    readonly size: number,
    readonly createdAtMs: number,
    readonly modifiedAtMs: number,
  ) {
    super();
  }

  jsonText(): string {
    return (
      `{"isDirectory":${this.isDirectory},"isFile":${this.isFile},"isSymlink":${this.isSymlink}` +
      `,"size":${this.size},"createdAtMs":${this.createdAtMs},"modifiedAtMs":${this.modifiedAtMs}}`
    );
  }

  toJSON(): {
    isDirectory: boolean;
    isFile: boolean;
    isSymlink: boolean;
    size: number;
    createdAtMs: number;
    modifiedAtMs: number;
  } {
    const { isDirectory, isFile, isSymlink, size, createdAtMs, modifiedAtMs } = this;
    return { isDirectory, isFile, isSymlink, size, createdAtMs, modifiedAtMs };
  }
}

export function getMetadata(params: {
  path: string;
  followSymlinks?: boolean | null;
  sandbox?: unknown;
}): FileMetadata | Promise<FileMetadata> {
  const path = fsPath(params.path);
  const follow = params.followSymlinks !== false;
  enforceFileSandbox(params.sandbox, path, 'read', follow);
  // Answered in the same turn when the lookup is synchronous (fastpath/metadataStat.ts).
  let stats: MetadataStats | Promise<MetadataStats>;
  try {
    stats = metadataStats(path, follow);
  } catch (error) {
    throw fsFailure(error);
  }
  if (stats instanceof Promise) {
    return stats.then(fileMetadata, (error: unknown) => {
      throw fsFailure(error);
    });
  }
  return fileMetadata(stats);
}

function fileMetadata({ link, target }: MetadataStats): FileMetadata {
  const isSymlink = (link.mode & S_IFMT) === S_IFLNK;
  const type = target.mode & S_IFMT;
  return new FileMetadata(
    type === S_IFDIR,
    type === S_IFREG,
    isSymlink,
    target.size,
    // Observed on 0.169.0: a followed symlink reports createdAtMs 0.
    target === link ? millis(link.birthtimeMs) : 0,
    millis(target.mtimeMs),
  );
}

export async function canonicalize(params: {
  path: string;
  sandbox?: unknown;
}): Promise<{ path: string }> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'read');
  return { path: uriFromPath(await io(() => fs.realpath(path))) };
}

export async function readDirectory(params: { path: string; sandbox?: unknown }): Promise<{
  entries: { fileName: string; isDirectory: boolean; isFile: boolean }[];
}> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'read');
  const dirents = await io(() => fs.readdir(path, { withFileTypes: true }));
  if (dirents.length > MAX_DIRECTORY_ENTRIES) {
    throw RpcFailure.internal(
      `fs/readDirectory returned ${dirents.length} entries; limit is ${MAX_DIRECTORY_ENTRIES}`,
    );
  }
  const entries: { fileName: string; isDirectory: boolean; isFile: boolean }[] = [];
  for (const dirent of dirents) {
    let isDirectory = dirent.isDirectory();
    let isFile = dirent.isFile();
    if (dirent.isSymbolicLink()) {
      try {
        const target = await fs.stat(join(path, dirent.name));
        isDirectory = target.isDirectory();
        isFile = target.isFile();
      } catch {
        continue; // broken symlinks are skipped (observed on 0.169.0)
      }
    }
    entries.push({ fileName: dirent.name, isDirectory, isFile });
  }
  return { entries };
}

export async function remove(params: {
  path: string;
  recursive?: boolean | null;
  force?: boolean | null;
  sandbox?: unknown;
}): Promise<Empty> {
  const path = fsPath(params.path);
  enforceFileSandbox(params.sandbox, path, 'write', false);
  const recursive = params.recursive ?? true;
  const force = params.force ?? true;
  await io(async () => {
    let stat;
    try {
      stat = await fs.lstat(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && force) return;
      throw error;
    }
    if (stat.isDirectory()) {
      if (recursive) await fs.rm(path, { recursive: true, force: false });
      else await fs.rmdir(path);
    } else {
      await fs.unlink(path);
    }
  });
  return {};
}

/** The canonical form of a path that may not exist yet: resolve the longest existing prefix. */
async function canonicalProspective(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(await fs.realpath(current), ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(basename(current));
      current = parent;
    }
  }
}

async function copyTree(source: string, destination: string): Promise<void> {
  await fs.mkdir(destination, { recursive: true });
  for (const dirent of await fs.readdir(source, { withFileTypes: true })) {
    const from = join(source, dirent.name);
    const to = join(destination, dirent.name);
    if (dirent.isDirectory()) await copyTree(from, to);
    else if (dirent.isFile()) await copyRegularFile(from, to);
    else if (dirent.isSymbolicLink()) await recreateSymlink(from, to);
    // other types (sockets, FIFOs, devices) are skipped
  }
}

async function recreateSymlink(from: string, to: string): Promise<void> {
  const target = await fs.readlink(from);
  await fs.rm(to, { force: true });
  await fs.symlink(target, to);
}

export async function copy(params: {
  sourcePath: string;
  destinationPath: string;
  recursive: boolean;
  sandbox?: unknown;
}): Promise<Empty> {
  const source = fsPath(params.sourcePath);
  const destination = fsPath(params.destinationPath);
  enforceFileSandbox(params.sandbox, source, 'read', false);
  enforceFileSandbox(params.sandbox, destination, 'write');
  await io(async () => {
    const stat = await fs.lstat(source);
    if (stat.isDirectory()) {
      if (!params.recursive) {
        throw RpcFailure.invalidRequest(
          'fs/copy requires recursive: true when sourcePath is a directory',
        );
      }
      const canonicalSource = await fs.realpath(source);
      const canonicalDestination = await canonicalProspective(destination);
      const inside = relative(canonicalSource, canonicalDestination);
      if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
        throw RpcFailure.invalidRequest(
          'fs/copy cannot copy a directory to itself or one of its descendants',
        );
      }
      enforceTreeReadable(params.sandbox, source);
      await copyTree(source, destination);
    } else if (stat.isSymbolicLink()) {
      await recreateSymlink(source, destination);
    } else if (stat.isFile()) {
      await copyRegularFile(source, destination);
    } else {
      throw RpcFailure.invalidRequest(
        'fs/copy only supports regular files, directories, and symlinks',
      );
    }
  });
  return {};
}

export interface WalkOptions {
  maxDepth: number;
  maxDirectories: number;
  maxEntries: number;
  followDirectorySymlinks: boolean;
  pruneHiddenDirectories?: boolean | null;
}

interface WalkOutcome {
  entries: { path: string; kind: 'directory' | 'file' }[];
  errors: { path: string; message: string }[];
  truncated: boolean;
}

export async function walk(params: {
  path: string;
  options: WalkOptions;
  sandbox?: unknown;
}): Promise<WalkOutcome> {
  const root = fsPath(params.path);
  enforceFileSandbox(params.sandbox, root, 'read');
  const { options } = params;
  if (options.maxDirectories === 0 || options.maxEntries === 0) {
    throw RpcFailure.invalidRequest('filesystem walk limits must be greater than zero');
  }
  if (
    options.maxDepth > WALK_MAXIMA.depth ||
    options.maxDirectories > WALK_MAXIMA.directories ||
    options.maxEntries > WALK_MAXIMA.entries
  ) {
    throw RpcFailure.invalidRequest(
      `filesystem walk limits exceed maximums: depth=${WALK_MAXIMA.depth}, directories=${WALK_MAXIMA.directories}, entries=${WALK_MAXIMA.entries}`,
    );
  }
  const outcome: WalkOutcome = { entries: [], errors: [], truncated: false };
  const readDenied = fileReadDenial(params.sandbox);
  const rootLink = await io(() => fs.lstat(root));
  const rootIsLink = rootLink.isSymbolicLink();
  if (rootIsLink && !options.followDirectorySymlinks) return outcome;
  const rootStat = rootIsLink ? await io(() => fs.stat(root)) : rootLink;
  if (!rootStat.isDirectory()) return outcome;

  const visitKey = async (path: string): Promise<string> =>
    options.followDirectorySymlinks ? fs.realpath(path).catch(() => path) : path;
  const visited = new Set<string>([await visitKey(root)]);
  const queue: { path: string; depth: number }[] = [{ path: root, depth: 0 }];
  let directories = 1;
  let budget = 0;
  let counted = 0;
  while (queue.length > 0) {
    const { path, depth } = queue.shift() as { path: string; depth: number };
    if (readDenied?.(path)) {
      outcome.errors.push({ path: uriFromPath(path), message: 'Permission denied (os error 13)' });
      continue;
    }
    let names: string[];
    try {
      names = (await fs.readdir(path)).sort((a, b) =>
        Buffer.compare(Buffer.from(a), Buffer.from(b)),
      );
    } catch (error) {
      outcome.errors.push({ path: uriFromPath(path), message: fsFailure(error).message });
      continue;
    }
    for (const name of names) {
      if (counted >= options.maxEntries) {
        outcome.truncated = true;
        return outcome;
      }
      counted += 1;
      const child = join(path, name);
      let link;
      let stat;
      try {
        link = await fs.lstat(child);
        stat = link.isSymbolicLink() ? await fs.stat(child) : link;
      } catch (error) {
        if (link?.isSymbolicLink()) continue; // broken links are skipped silently (observed)
        outcome.errors.push({ path: uriFromPath(child), message: fsFailure(error).message });
        continue;
      }
      if (link.isSymbolicLink() && !(stat.isDirectory() && options.followDirectorySymlinks))
        continue;
      const kind = stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : undefined;
      if (!kind) continue;
      const uri = uriFromPath(child);
      budget += uri.length + 64;
      if (budget > WALK_RESPONSE_BUDGET) {
        outcome.truncated = true;
        return outcome;
      }
      outcome.entries.push({ path: uri, kind });
      if (kind !== 'directory' || depth >= options.maxDepth) continue;
      if (options.pruneHiddenDirectories && name.startsWith('.')) continue;
      const key = await visitKey(child);
      if (visited.has(key)) continue;
      if (directories >= options.maxDirectories) {
        outcome.truncated = true;
        continue;
      }
      visited.add(key);
      directories += 1;
      queue.push({ path: child, depth: depth + 1 });
    }
  }
  return outcome;
}
