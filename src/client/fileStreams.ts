/**
 * The block-wise file calls behind `FileSystemClient.readFileBlocks`, `readFileStream` and
 * `writeFileStream` (`fs/open`, `fs/readBlock`, `fs/writeBlock`, `fs/close`); their contracts are
 * documented on those methods and guarded by spec/client/fileStreams.spec.ts.
 */
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
import { decodeValidatedBase64, encodeBase64 } from '../protocol/base64.js';
import type { EnvironmentInfo } from '../protocol/environment.js';
import { ProtocolError } from '../protocol/errors.js';
import type { FileSystemSandboxContext } from '../protocol/sandbox.js';
import { randomUUID } from '../platform/index.js';
import { fsPathCall } from './fsPathCall.js';
import {
  FILE_READ_CHUNK_SIZE,
  FILE_WRITE_CHUNK_SIZE,
  WRITE_STREAM_MAX_QUEUED_BYTES,
} from './limits.js';
import { pullEach } from './pullEach.js';
import type { SessionCore } from './sessionCore.js';

export async function* readFileBlocks(
  core: SessionCore,
  path: string,
  sandbox: FileSystemSandboxContext | null,
): AsyncGenerator<Uint8Array> {
  const handleId = newHandleId();
  await lastValueFrom(
    fsPathCall(core, 'fs/open', path, (uri) => ({
      handleId,
      path: uri,
      mode: 'read',
      sandbox,
    })),
  );
  let closed = false;
  try {
    for (let offset = 0; ;) {
      const block = await lastValueFrom(
        core.calls.call('fs/readBlock', { handleId, offset, len: FILE_READ_CHUNK_SIZE }),
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
    await lastValueFrom(core.calls.call('fs/close', { handleId }));
  } finally {
    if (!closed && core.lifecycle.terminalError === undefined) {
      closeQuietly(core, handleId);
    }
  }
}

export function readFileStream(
  core: SessionCore,
  path: string,
  sandbox: FileSystemSandboxContext | null,
): Observable<Uint8Array> {
  return defer(() => {
    const handleId = newHandleId();
    let opened = false;
    const readFrom = (
      offset: number,
    ): Observable<{ bytes: Uint8Array; eof: boolean; offset: number }> =>
      core.calls.call('fs/readBlock', { handleId, offset, len: FILE_READ_CHUNK_SIZE }).pipe(
        map((block) => {
          const bytes = decodeValidatedBase64(block.chunk);
          if (bytes.byteLength === 0 && !block.eof) {
            throw new ProtocolError(`fs/readBlock returned an empty block before EOF for ${path}`);
          }
          return { bytes, eof: block.eof, offset: offset + bytes.byteLength };
        }),
      );
    const open = fsPathCall(core, 'fs/open', path, (uri) => ({
      handleId,
      path: uri,
      mode: 'read',
      sandbox,
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
        if (opened && core.lifecycle.terminalError === undefined) {
          closeQuietly(core, handleId);
        }
      }),
    );
  });
}

export function writeFileStream(
  core: SessionCore,
  environmentInfo: () => Observable<EnvironmentInfo>,
  path: string,
  data: Observable<Uint8Array> | AsyncIterable<Uint8Array>,
  sandbox: FileSystemSandboxContext | null,
): Observable<void> {
  return defer(() => {
    const handleId = newHandleId();
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
            return core.calls.call('fs/writeBlock', {
              handleId,
              offset: at,
              chunk: encodeBase64(piece),
            });
          }),
        ),
      ).pipe(ignoreElements());
    };
    return environmentInfo().pipe(
      switchMap((info) => {
        if (!info.capabilities.fileWriteStreaming) {
          throw new ProtocolError('exec-server does not support writable file streams');
        }
        return fsPathCall(core, 'fs/open', path, (uri) => ({
          handleId,
          path: uri,
          mode: 'replace',
          sandbox,
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
            return core.calls.call('fs/close', { handleId });
          }),
        );
      }),
      map(() => undefined),
      finalize(() => {
        if (state === 'open' && core.lifecycle.terminalError === undefined) {
          closeQuietly(core, handleId);
        }
      }),
    );
  });
}

function newHandleId(): string {
  return randomUUID().replaceAll('-', '');
}

/** Closes a handle a stream gave up on; its outcome no longer matters to anyone. */
function closeQuietly(core: SessionCore, handleId: string): void {
  core.calls
    .call('fs/close', { handleId })
    .pipe(catchError(() => EMPTY))
    .subscribe();
}
