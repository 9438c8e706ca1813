/**
 * The work behind `execrx cp`: copy a file or a directory tree between this machine and an
 * executor, in either direction, streamed in 1 MiB blocks through `client.fs`
 * (`readFileStream` / `writeFileStream`), never a whole file at once.
 *
 * Rules, as `cp -r` / `scp -r`: a destination that is an existing directory receives the
 * source under its own name; otherwise the destination is the new name. Symbolic links are
 * followed to files; links to directories and special files are skipped with a warning.
 * Guarded by spec/cli/cp.spec.ts.
 */
import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { basename, join, posix, resolve } from 'node:path';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import type { ExecServerClient } from '../client/index.js';
import { NotFoundError, ServerError } from '../protocol/errors.js';
import { fileUriToPath } from '../protocol/pathUri.js';
import { errorMessage } from '../transport/errorMessage.js';
import type { ProgressBar } from './progressBar.js';
import { remoteDisplay, type Location } from './remotePath.js';

/** Blocks of an upload in memory at once: the one being written (blocksOf is pulled). */
export const UPLOAD_READ_AHEAD = 1;
const BLOCK_BYTES = 1024 * 1024;
/** Deepest directory nesting copied. */
const MAX_COPY_DEPTH = 64;

/** A copy failure with a one-line message naming the path. */
export class CopyError extends Error {}

/** What the copy will do, computed before any byte moves (the total drives the progress). */
export interface CopyPlan {
  readonly directories: readonly string[];
  readonly files: readonly { readonly from: string; readonly to: string; readonly size: number }[];
  readonly totalBytes: number;
  readonly skipped: readonly string[];
}

type Side = 'local' | 'remote';

interface Entry {
  readonly kind: 'file' | 'directory' | 'other';
  readonly size: number;
}

/** Absolute path of `location` (a relative remote path is taken from the executor's cwd). */
export async function absolutePath(client: ExecServerClient, location: Location): Promise<string> {
  if (location.side === 'local') return resolve(location.path);
  if (location.path.startsWith('/')) return posix.normalize(location.path);
  const info = await firstValueFrom(client.environmentInfo());
  if (info.cwd == null) {
    throw new CopyError(
      `${remoteDisplay(location.path)}: relative, and the executor did not report its working directory`,
    );
  }
  return posix.resolve(fileUriToPath(info.cwd), location.path);
}

/** Plans copying `source` (absolute, on side `fromSide`) to `destination` (on the other side). */
export async function planCopy(
  client: ExecServerClient,
  fromSide: Side,
  source: string,
  destination: string,
): Promise<CopyPlan> {
  const toSide: Side = fromSide === 'local' ? 'remote' : 'local';
  const sourceEntry = await entryOf(client, fromSide, source);
  if (sourceEntry === undefined)
    throw new CopyError(`${display(fromSide, source)}: no such file or directory`);
  const destinationEntry = await entryOf(client, toSide, destination);
  const pathOn = toSide === 'local' ? join : posix.join;
  const target =
    destinationEntry?.kind === 'directory'
      ? pathOn(destination, baseName(fromSide, source))
      : destination;
  const directories: string[] = [];
  const files: { from: string; to: string; size: number }[] = [];
  const skipped: string[] = [];
  const visit = async (from: string, to: string, entry: Entry, depth: number): Promise<void> => {
    if (entry.kind === 'file') {
      files.push({ from, to, size: entry.size });
      return;
    }
    if (entry.kind === 'other') {
      skipped.push(display(fromSide, from));
      return;
    }
    if (depth > MAX_COPY_DEPTH) {
      throw new CopyError(
        `${display(fromSide, from)}: nested deeper than ${MAX_COPY_DEPTH} directories`,
      );
    }
    const existing = await entryOf(client, toSide, to);
    if (existing !== undefined && existing.kind !== 'directory') {
      throw new CopyError(
        `cannot overwrite non-directory ${display(toSide, to)} with directory ${display(fromSide, from)}`,
      );
    }
    directories.push(to);
    for (const [name, child] of await listDirectory(client, fromSide, from)) {
      await visit(joinOn(fromSide, from, name), pathOn(to, name), child, depth + 1);
    }
  };
  await visit(source, target, sourceEntry, 0);
  const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
  return { directories, files, totalBytes, skipped };
}

/** Carries out `plan`: directories first (in order), then each file. */
export async function runCopy(
  client: ExecServerClient,
  fromSide: Side,
  plan: CopyPlan,
  progress: ProgressBar,
): Promise<void> {
  for (const directory of plan.directories) {
    if (fromSide === 'local') {
      await firstValueFrom(client.fs.createDirectory(directory, { recursive: true })).catch(
        (error: unknown) => {
          throw new CopyError(`cannot create ${remoteDisplay(directory)}: ${remoteReason(error)}`);
        },
      );
    } else {
      await mkdir(directory, { recursive: true }).catch((error: unknown) => {
        throw new CopyError(`cannot create ${directory}: ${localReason(error)}`);
      });
    }
  }
  for (const file of plan.files) {
    progress.file(basename(file.from));
    if (fromSide === 'local') await upload(client, file.from, file.to, progress);
    else await download(client, file.from, file.to, progress);
  }
}

async function upload(
  client: ExecServerClient,
  from: string,
  to: string,
  progress: ProgressBar,
): Promise<void> {
  const handle = await open(from, 'r').catch((error: unknown) => {
    throw new CopyError(`cannot read ${from}: ${localReason(error)}`);
  });
  try {
    await lastValueFrom(
      client.fs.writeFileStream(
        to,
        blocksOf(handle, from, (bytes) => progress.advance(bytes)),
      ),
      { defaultValue: undefined },
    );
  } catch (error) {
    if (error instanceof CopyError) throw error;
    throw new CopyError(`cannot write ${remoteDisplay(to)}: ${remoteReason(error)}`);
  } finally {
    await handle.close();
  }
}

async function download(
  client: ExecServerClient,
  source: string,
  target: string,
  progress: ProgressBar,
): Promise<void> {
  const handle = await open(target, 'w').catch((error: unknown) => {
    throw new CopyError(`cannot write ${target}: ${localReason(error)}`);
  });
  try {
    // Pulled: the next block is asked for once this one is on disk.
    const blocks = client.fs.readFileBlocks(source);
    try {
      for (;;) {
        const next = await blocks.next().catch((error: unknown) => {
          throw new CopyError(`cannot read ${remoteDisplay(source)}: ${remoteReason(error)}`);
        });
        if (next.done) break;
        await handle.write(next.value).catch((error: unknown) => {
          throw new CopyError(`cannot write ${target}: ${localReason(error)}`);
        });
        progress.advance(next.value.byteLength);
      }
    } finally {
      // Closes the executor's handle when the copy stopped early.
      await blocks.return(undefined).catch(() => undefined);
    }
  } finally {
    await handle.close();
  }
}

/**
 * The blocks of an open local file, read as the writer pulls them (`writeFileStream` takes an
 * AsyncIterable and asks for the next block once the previous one was written): at most
 * UPLOAD_READ_AHEAD block is in memory. `onTaken` counts a block once the writer came back
 * for the next one (or the file ended), i.e. once it was written.
 */
export async function* blocksOf(
  handle: FileHandle,
  path: string,
  onTaken: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  for (let position = 0; ;) {
    const block = new Uint8Array(BLOCK_BYTES);
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(block, 0, BLOCK_BYTES, position));
    } catch (error) {
      throw new CopyError(`cannot read ${path}: ${localReason(error)}`);
    }
    if (bytesRead === 0) return;
    position += bytesRead;
    yield block.subarray(0, bytesRead);
    onTaken(bytesRead);
  }
}

async function entryOf(
  client: ExecServerClient,
  side: Side,
  path: string,
): Promise<Entry | undefined> {
  if (side === 'local') {
    try {
      const stats = await stat(path);
      return {
        kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other',
        size: stats.size,
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new CopyError(`${path}: ${localReason(error)}`);
    }
  }
  try {
    const metadata = await firstValueFrom(client.fs.getMetadata(path));
    return {
      kind: metadata.isFile ? 'file' : metadata.isDirectory ? 'directory' : 'other',
      size: metadata.size,
    };
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw new CopyError(`${remoteDisplay(path)}: ${remoteReason(error)}`);
  }
}

/** Entries of a directory, by name in code-point order; links to directories are `other`. */
async function listDirectory(
  client: ExecServerClient,
  side: Side,
  path: string,
): Promise<Array<[string, Entry]>> {
  const entries: Array<[string, Entry]> = [];
  if (side === 'local') {
    let names: Dirent[];
    try {
      names = await readdir(path, { withFileTypes: true });
    } catch (error) {
      throw new CopyError(`cannot list ${path}: ${localReason(error)}`);
    }
    for (const dirent of names) {
      const child = join(path, dirent.name);
      if (dirent.isDirectory()) entries.push([dirent.name, { kind: 'directory', size: 0 }]);
      else if (dirent.isFile() || dirent.isSymbolicLink()) {
        const entry = await entryOf(client, side, child);
        // A link to a directory is not followed (it could loop); a dangling link is skipped.
        const kind = entry?.kind === 'file' ? 'file' : 'other';
        entries.push([dirent.name, { kind, size: entry?.size ?? 0 }]);
      } else entries.push([dirent.name, { kind: 'other', size: 0 }]);
    }
  } else {
    const listed = await firstValueFrom(client.fs.readDirectory(path)).catch((error: unknown) => {
      throw new CopyError(`cannot list ${remoteDisplay(path)}: ${remoteReason(error)}`);
    });
    for (const entry of listed) {
      const child = posix.join(path, entry.fileName);
      if (entry.isDirectory) {
        const metadata = await firstValueFrom(client.fs.getMetadata(child));
        entries.push([
          entry.fileName,
          { kind: metadata.isSymlink ? 'other' : 'directory', size: 0 },
        ]);
      } else if (entry.isFile) {
        entries.push([
          entry.fileName,
          (await entryOf(client, side, child)) ?? { kind: 'other', size: 0 },
        ]);
      } else entries.push([entry.fileName, { kind: 'other', size: 0 }]);
    }
  }
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function display(side: Side, path: string): string {
  return side === 'local' ? path : remoteDisplay(path);
}

function baseName(side: Side, path: string): string {
  return side === 'local' ? basename(path) : posix.basename(path);
}

function joinOn(side: Side, path: string, name: string): string {
  return side === 'local' ? join(path, name) : posix.join(path, name);
}

/** `permission denied`, `no such file or directory`, … for a local failure. */
function localReason(error: unknown): string {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'not a directory';
    default:
      return errorMessage(error);
  }
}

/** The executor's reason for a failed call, as plain as it allows. */
export function remoteReason(error: unknown): string {
  if (error instanceof NotFoundError) return 'no such file or directory';
  if (error instanceof ServerError) {
    // Both executors say `Permission denied (os error 13)`.
    return /permission denied/i.test(error.serverMessage)
      ? 'permission denied'
      : error.serverMessage;
  }
  return errorMessage(error);
}
