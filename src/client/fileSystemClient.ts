/**
 * The executor's filesystem (`fs/*`, spec/protocol.md §7) with native absolute paths.
 * Paths are converted to `file:` URIs on the way out and back on the way in. A missing path
 * (`-32004`) errors with NotFoundError naming the path; other executor errors are ServerError
 * with the executor's message verbatim.
 *
 * Over 400 lines for one reason: every call here, the streamed forms included, goes through
 * `fsCall` and its not-found mapping, which stays private to this class.
 */
import { decodeValidatedBase64, encodeBase64 } from '../protocol/base64.js';
import { randomUUID } from '../platform/index.js';
import {
  EMPTY,
  Observable,
  catchError,
  concat,
  concatMap,
  defer,
  expand,
  filter,
  finalize,
  ignoreElements,
  isObservable,
  lastValueFrom,
  map,
  switchMap,
  takeWhile,
  tap,
} from 'rxjs';
import { ErrorCode, NotFoundError, ProtocolError, ServerError } from '../protocol/errors.js';
import type {
  FsGetMetadataResult,
  FsReadDirectoryEntry,
  FsWalkEntryKind,
  FsWalkOptions,
} from '../protocol/fs.js';
import type { ClientMethod, ParamsOf, ResultOf } from '../protocol/methods.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import type { FileSystemSandboxContext } from '../protocol/sandbox.js';
import { fileUriToPath, pathToFileUri } from '../protocol/pathUri.js';
import { pullEach } from './pullEach.js';
import {
  FILE_READ_CHUNK_SIZE,
  FILE_WRITE_CHUNK_SIZE,
  WRITE_STREAM_MAX_QUEUED_BYTES,
} from './limits.js';
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
  async *readFileBlocks(path: string, options: FsCallOptions = {}): AsyncGenerator<Uint8Array> {
    const handleId = randomUUID().replaceAll('-', '');
    await lastValueFrom(
      this.fsCall('fs/open', path, (uri) => ({
        handleId,
        path: uri,
        mode: 'read',
        sandbox: sandboxOf(options),
      })),
    );
    let closed = false;
    try {
      for (let offset = 0; ;) {
        const block = await lastValueFrom(
          this.core.calls.call('fs/readBlock', { handleId, offset, len: FILE_READ_CHUNK_SIZE }),
        );
        const bytes = decodeValidatedBase64(block.chunk);
        if (bytes.byteLength === 0 && !block.eof) {
          throw new ProtocolError(`fs/readBlock returned an empty block before EOF for ${path}`);
        }
        offset += bytes.byteLength;
        if (bytes.byteLength > 0) yield bytes;
        if (block.eof) break;
      }
      closed = true;
      await lastValueFrom(this.core.calls.call('fs/close', { handleId }));
    } finally {
      if (!closed && this.core.lifecycle.terminalError === undefined) {
        this.core.calls
          .call('fs/close', { handleId })
          .pipe(catchError(() => EMPTY))
          .subscribe();
      }
    }
  }

  /**
   * Streams a file in 1 MiB blocks (`fs/open` + `fs/readBlock` + `fs/close`), for files too
   * big for one message. Push-based: blocks are read as fast as the executor answers, however
   * slowly they are consumed — use `readFileBlocks` to be paced by the consumer. The handle is closed at EOF, on error and on unsubscribe. Handles
   * belong to one transport: a transport loss ends the stream with DisconnectedError.
   */
  readFileStream(path: string, options: FsCallOptions = {}): Observable<Uint8Array> {
    return defer(() => {
      const handleId = randomUUID().replaceAll('-', '');
      let opened = false;
      const readFrom = (
        offset: number,
      ): Observable<{ bytes: Uint8Array; eof: boolean; offset: number }> =>
        this.core.calls.call('fs/readBlock', { handleId, offset, len: FILE_READ_CHUNK_SIZE }).pipe(
          map((block) => {
            const bytes = decodeValidatedBase64(block.chunk);
            if (bytes.byteLength === 0 && !block.eof) {
              throw new ProtocolError(
                `fs/readBlock returned an empty block before EOF for ${path}`,
              );
            }
            return { bytes, eof: block.eof, offset: offset + bytes.byteLength };
          }),
        );
      const open = this.fsCall('fs/open', path, (uri) => ({
        handleId,
        path: uri,
        mode: 'read',
        sandbox: sandboxOf(options),
      }));
      return concat(
        open.pipe(
          tap(() => {
            opened = true;
          }),
          ignoreElements(),
        ),
        readFrom(0).pipe(
          expand((block) => (block.eof ? EMPTY : readFrom(block.offset))),
          takeWhile((block) => !block.eof, true),
          filter((block) => block.bytes.byteLength > 0),
          map((block) => block.bytes),
        ),
      ).pipe(
        finalize(() => {
          if (opened && this.core.lifecycle.terminalError === undefined) {
            this.core.calls
              .call('fs/close', { handleId })
              .pipe(catchError(() => EMPTY))
              .subscribe();
          }
        }),
      );
    });
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
    return defer(() => {
      const handleId = randomUUID().replaceAll('-', '');
      let state: 'idle' | 'open' | 'closed' = 'idle';
      let offset = 0;
      let queued = 0;
      const writeBlock = (chunk: Uint8Array): Observable<never> => {
        const pieces: Uint8Array[] = [];
        for (let start = 0; start < chunk.byteLength; start += FILE_WRITE_CHUNK_SIZE) {
          pieces.push(chunk.subarray(start, start + FILE_WRITE_CHUNK_SIZE));
        }
        return concat(
          ...pieces.map((piece) =>
            defer(() => {
              const at = offset;
              offset += piece.byteLength;
              return this.core.calls.call('fs/writeBlock', {
                handleId,
                offset: at,
                chunk: encodeBase64(piece),
              });
            }),
          ),
        ).pipe(ignoreElements());
      };
      return this.environmentInfo().pipe(
        switchMap((info) => {
          if (!info.capabilities.fileWriteStreaming) {
            throw new ProtocolError('exec-server does not support writable file streams');
          }
          return this.fsCall('fs/open', path, (uri) => ({
            handleId,
            path: uri,
            mode: 'replace',
            sandbox: sandboxOf(options),
          }));
        }),
        switchMap(() => {
          state = 'open';
          const written = isObservable(data)
            ? data.pipe(
                tap((chunk) => {
                  queued += chunk.byteLength;
                  if (queued > WRITE_STREAM_MAX_QUEUED_BYTES) {
                    throw new ProtocolError(
                      `writeFileStream: the data ran more than ${WRITE_STREAM_MAX_QUEUED_BYTES} bytes ahead of the executor; pace it or pass an AsyncIterable`,
                    );
                  }
                }),
                concatMap((chunk) =>
                  concat(
                    writeBlock(chunk),
                    defer(() => {
                      queued -= chunk.byteLength;
                      return EMPTY;
                    }),
                  ),
                ),
              )
            : pullEach(data, writeBlock);
          return concat(
            written,
            defer(() => {
              state = 'closed';
              return this.core.calls.call('fs/close', { handleId });
            }),
          );
        }),
        map(() => undefined),
        finalize(() => {
          if (state === 'open' && this.core.lifecycle.terminalError === undefined) {
            this.core.calls
              .call('fs/close', { handleId })
              .pipe(catchError(() => EMPTY))
              .subscribe();
          }
        }),
      );
    });
  }

  /** One fs call: native path → URI when sent, typed not-found errors. */
  private fsCall<M extends FsPathMethod>(
    method: M,
    path: string,
    buildParams: (uri: string) => ParamsOf<M>,
  ): Observable<ResultOf<M>> {
    return this.core.calls.call(method, () => buildParams(pathToFileUri(path)), {
      mapError: (error) =>
        error instanceof ServerError &&
        error.code === ErrorCode.notFound &&
        !(error instanceof NotFoundError)
          ? new NotFoundError(error.serverMessage, path)
          : error,
    });
  }
}

/** The fs methods that name a path. */
type FsPathMethod = Extract<
  ClientMethod,
  | 'fs/readFile'
  | 'fs/writeFile'
  | 'fs/createDirectory'
  | 'fs/getMetadata'
  | 'fs/canonicalize'
  | 'fs/readDirectory'
  | 'fs/walk'
  | 'fs/remove'
  | 'fs/copy'
  | 'fs/open'
>;

function sandboxOf(options: FsCallOptions): FileSystemSandboxContext | null {
  return options.sandbox ?? null;
}
