/**
 * The executor's filesystem (`fs/*`, spec/protocol.md §7) with native absolute paths.
 * Paths are converted to `file:` URIs on the way out and back on the way in. A missing path
 * (`-32004`) errors with NotFoundError naming the path; other executor errors are ServerError
 * with the executor's message verbatim. The block-wise streamed forms live in fileStreams.ts.
 */
import { decodeValidatedBase64, encodeBase64 } from '../protocol/base64.js';
import { Observable, map } from 'rxjs';
import type {
  FsGetMetadataResult,
  FsReadDirectoryEntry,
  FsWalkEntryKind,
  FsWalkOptions,
} from '../protocol/fs.js';
import type { ParamsOf, ResultOf } from '../protocol/methods.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import type { FileSystemSandboxContext } from '../protocol/sandbox.js';
import { fileUriToPath, pathToFileUri } from '../protocol/pathUri.js';
import { readFileBlocks, readFileStream, writeFileStream } from './fileStreams.js';
import { fsPathCall, type FsPathMethod } from './fsPathCall.js';
import type { SessionCore } from './sessionCore.js';

/** `fs/getMetadata`: `isSymlink` describes the link itself, the rest follow it. */
export type FileMetadata = FsGetMetadataResult;
/** One `fs/readDirectory` entry (broken symlinks are skipped by the executor). */
export type DirectoryEntry = FsReadDirectoryEntry;

/** Options every call accepts. */
export interface FsCallOptions {
  /** Run under this sandbox context (opaque, spec §7.11); default none. */
  readonly sandbox?: FileSystemSandboxContext;
}

/** One `fs/walk` result entry with a native path. */
export interface WalkEntry {
  readonly path: string;
  readonly kind: FsWalkEntryKind;
}

/** `fs/walk` outcome with native paths. */
export interface WalkOutcome {
  readonly entries: readonly WalkEntry[];
  readonly errors: readonly { readonly path: string; readonly message: string }[];
  readonly truncated: boolean;
}

/**
 * The executor's filesystem (`client.fs`) with native absolute paths. A missing path errors with
 * `NotFoundError`; other executor errors are `ServerError` with the executor's message.
 */
export class FileSystemClient {
  /** @internal Created by ExecServerClient. */
  constructor(
    private readonly core: SessionCore,
    private readonly environmentInfo: () => Observable<EnvironmentInfo>,
  ) {}

  /** Whole file contents (`fs/readFile`, up to 512 MiB; use `readFileStream` for big files). */
  readFile(path: string, options: FsCallOptions = {}): Observable<Uint8Array> {
    return this.fsCall('fs/readFile', path, (uri) => ({
      path: uri,
      sandbox: sandboxOf(options),
    })).pipe(map(({ dataBase64 }) => decodeValidatedBase64(dataBase64)));
  }

  /** Creates or truncates a file (`fs/writeFile`). A missing parent directory is NotFoundError. */
  writeFile(
    path: string,
    data: Uint8Array | string,
    options: FsCallOptions = {},
  ): Observable<void> {
    return this.fsCall('fs/writeFile', path, (uri) => ({
      path: uri,
      dataBase64: encodeBase64(data),
      sandbox: sandboxOf(options),
    })).pipe(map(() => undefined));
  }

  /** `mkdir` (`recursive` defaults to true on the executor: `mkdir -p`). */
  createDirectory(
    path: string,
    options: FsCallOptions & { readonly recursive?: boolean } = {},
  ): Observable<void> {
    return this.fsCall('fs/createDirectory', path, (uri) => ({
      path: uri,
      recursive: options.recursive ?? null,
      sandbox: sandboxOf(options),
    })).pipe(map(() => undefined));
  }

  /** Type, size and times (`fs/getMetadata`). */
  getMetadata(path: string, options: FsCallOptions = {}): Observable<FileMetadata> {
    return this.fsCall('fs/getMetadata', path, (uri) => ({
      path: uri,
      sandbox: sandboxOf(options),
    }));
  }

  /** `realpath` on the executor, as a native path. */
  canonicalize(path: string, options: FsCallOptions = {}): Observable<string> {
    return this.fsCall('fs/canonicalize', path, (uri) => ({
      path: uri,
      sandbox: sandboxOf(options),
    })).pipe(map((result) => fileUriToPath(result.path)));
  }

  /** Directory entries in OS order (`fs/readDirectory`). */
  readDirectory(path: string, options: FsCallOptions = {}): Observable<readonly DirectoryEntry[]> {
    return this.fsCall('fs/readDirectory', path, (uri) => ({
      path: uri,
      sandbox: sandboxOf(options),
    })).pipe(map((result) => result.entries));
  }

  /**
   * Removes a file, link or directory (`fs/remove`). `recursive` and `force` default to true
   * on the executor: a missing path is then not an error.
   */
  remove(
    path: string,
    options: FsCallOptions & { readonly recursive?: boolean; readonly force?: boolean } = {},
  ): Observable<void> {
    return this.fsCall('fs/remove', path, (uri) => ({
      path: uri,
      recursive: options.recursive ?? null,
      force: options.force ?? null,
      sandbox: sandboxOf(options),
    })).pipe(map(() => undefined));
  }

  /** Copies a file, link or (with `recursive: true`) directory tree (`fs/copy`). */
  copy(
    sourcePath: string,
    destinationPath: string,
    options: FsCallOptions & { readonly recursive?: boolean } = {},
  ): Observable<void> {
    return this.fsCall('fs/copy', sourcePath, (uri) => ({
      sourcePath: uri,
      destinationPath: pathToFileUri(destinationPath),
      recursive: options.recursive ?? false,
      sandbox: sandboxOf(options),
    })).pipe(map(() => undefined));
  }

  /** Breadth-first listing under `path` (`fs/walk`), limits as in spec §7.7. */
  walk(
    path: string,
    walkOptions: FsWalkOptions,
    options: FsCallOptions = {},
  ): Observable<WalkOutcome> {
    return this.fsCall('fs/walk', path, (uri) => ({
      path: uri,
      options: walkOptions,
      sandbox: sandboxOf(options),
    })).pipe(
      map((result) => ({
        entries: result.entries.map((entry) => ({
          path: fileUriToPath(entry.path),
          kind: entry.kind,
        })),
        errors: result.errors.map((error) => ({
          path: fileUriToPath(error.path),
          message: error.message,
        })),
        truncated: result.truncated,
      })),
    );
  }

  /**
   * Reads a file block by block as the consumer pulls (`for await`): each `fs/readBlock`
   * (1 MiB) is sent only when the previous block was taken, so a slow consumer holds at
   * most one block. The handle is closed at EOF, on error and when the loop stops early.
   * Same errors as `readFileStream`. Guarded by spec/client/fileStreams.spec.ts.
   */
  readFileBlocks(path: string, options: FsCallOptions = {}): AsyncGenerator<Uint8Array> {
    return readFileBlocks(this.core, path, sandboxOf(options));
  }

  /**
   * Streams a file in 1 MiB blocks (`fs/open` + `fs/readBlock` + `fs/close`), for files too
   * big for one message. Push-based: blocks are read as fast as the executor answers, however
   * slowly they are consumed — use `readFileBlocks` to be paced by the consumer. The handle is closed at EOF, on error and on unsubscribe. Handles
   * belong to one transport: a transport loss ends the stream with DisconnectedError.
   */
  readFileStream(path: string, options: FsCallOptions = {}): Observable<Uint8Array> {
    return readFileStream(this.core, path, sandboxOf(options));
  }

  /**
   * Writes a file from a stream of chunks (`fs/open` with `mode: "replace"`, then
   * `fs/writeBlock` at increasing offsets, then `fs/close`), for data too big for one
   * message. Emits once after the handle is closed. An AsyncIterable source is pulled: the
   * next chunk is asked for once the previous one was written (one chunk in memory). An
   * Observable source pushes: what it emits ahead of the executor is queued, up to
   * WRITE_STREAM_MAX_QUEUED_BYTES, past which the write fails with a ProtocolError naming
   * the bound (pace `data` or pass an AsyncIterable). Needs the executor capability
   * `fileWriteStreaming`; without it nothing is sent and the call fails with
   * "exec-server does not support writable file streams". The handle is closed on error and
   * on unsubscribe as well.
   */
  writeFileStream(
    path: string,
    data: Observable<Uint8Array> | AsyncIterable<Uint8Array>,
    options: FsCallOptions = {},
  ): Observable<void> {
    return writeFileStream(this.core, this.environmentInfo, path, data, sandboxOf(options));
  }

  /** One fs call: native path → URI when sent, typed not-found errors. */
  private fsCall<M extends FsPathMethod>(
    method: M,
    path: string,
    buildParams: (uri: string) => ParamsOf<M>,
  ): Observable<ResultOf<M>> {
    return fsPathCall(this.core, method, path, buildParams);
  }
}

function sandboxOf(options: FsCallOptions): FileSystemSandboxContext | null {
  return options.sandbox ?? null;
}
