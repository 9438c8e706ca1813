/**
 * Resume (spec/protocol.md §14.3): on a new transport, initialize with the saved session id
 * (the same id must come back), send `initialized`, catch up every recoverable process with
 * `process/read` from its last published seq — in pages of at most RECOVERY_READ_PAGE_BYTES,
 * each published before the next is asked, so a link cut mid-catch-up keeps what passed and
 * the next resume continues from there — then install the transport so waiting calls
 * continue on it. A process that cannot be caught up is terminated and its handle fails; a
 * transport loss during the catch-up fails the resume (retry with another transport).
 * Guarded by spec/client/execServerClient.spec.ts ("resume") and spec/environment/
 * recoveryFaults.spec.ts.
 */
import {
  EMPTY,
  type Observable,
  catchError,
  concat,
  defer,
  finalize,
  ignoreElements,
  map,
  switchMap,
  throwError,
  toArray,
} from 'rxjs';
import { ProcessFailedError, ProtocolError, isTransportClosed } from '../protocol/errors.js';
import type { ProcessReadResult } from '../protocol/process.js';
import type { RpcConnection } from '../rpc/rpcConnection.js';
import type { Transport } from '../transport/transport.js';
import { requestOn } from './callRouter.js';
import { RECOVERY_READ_PAGE_BYTES } from './limits.js';
import type { NotificationRouter, ProcessRecord } from './notificationRouter.js';
import type { ProcessReadResponse } from './processEvents.js';
import { handshake, type HandshakeOptions } from './sessionHandshake.js';
import type { SessionLifecycle } from './sessionLifecycle.js';
import { decodeValidatedBase64 } from '../protocol/base64.js';

export interface ResumeContext {
  readonly lifecycle: SessionLifecycle;
  readonly notifications: NotificationRouter;
  readonly handshake: HandshakeOptions;
  readonly sessionId: string;
  /** An RpcConnection on `transport` whose traffic the session routes. */
  openRpc(transport: Transport): RpcConnection;
}

/** Cold: resumes the session on `transport`; completes once the transport is installed. */
export function resumeSession(context: ResumeContext, transport: Transport): Observable<void> {
  return defer(() => {
    const { lifecycle } = context;
    const state = lifecycle.state;
    if (lifecycle.current.kind !== 'recovering') {
      return throwError(
        () =>
          new ProtocolError(
            `cannot resume a session that is ${state}; resume only applies while recovering`,
          ),
      );
    }
    const rpc = context.openRpc(transport);
    let installed = false;
    return handshake(rpc, context.sessionId, context.handshake).pipe(
      switchMap((result) => {
        if (result.sessionId !== context.sessionId) {
          throw new ProtocolError(
            `exec-server initialized an unexpected session ${result.sessionId}`,
          );
        }
        return recoverProcesses(context.notifications, rpc);
      }),
      map(() => {
        if (lifecycle.current.kind !== 'recovering') {
          throw new ProtocolError('session stopped recovering while it was being resumed');
        }
        lifecycle.install(rpc);
        installed = true;
      }),
      finalize(() => {
        if (!installed) rpc.close();
      }),
    );
  });
}

function recoverProcesses(
  notifications: NotificationRouter,
  rpc: RpcConnection,
): Observable<unknown> {
  const records = notifications.recoverableProcesses();
  return concat(
    ...records.map((record) => defer(() => recoverProcess(notifications, rpc, record))),
  ).pipe(toArray());
}

function recoverProcess(
  notifications: NotificationRouter,
  rpc: RpcConnection,
  record: ProcessRecord,
): Observable<never> {
  const { processId, log } = record;
  // One page; the last one (no chunks left) carries the close. A page with chunks covers
  // up to its last chunk only (§6.6 step 3), so it never closes the log.
  const page = (): Observable<never> =>
    requestOn(rpc, 'process/read', {
      processId,
      afterSeq: log.lastPublishedSeq,
      maxBytes: RECOVERY_READ_PAGE_BYTES,
      waitMs: 0,
    }).pipe(
      switchMap((result) => {
        const last = result.chunks.length === 0;
        log.recover(toSnapshot(last ? result : { ...result, closed: false }));
        if (log.isFinished) notifications.unregister(record);
        return last || log.isFinished ? EMPTY : defer(page);
      }),
    );
  return page().pipe(
    catchError((error: unknown) => {
      if (isTransportClosed(error)) return throwError(() => error);
      const detail = error instanceof Error ? error.message : String(error);
      const terminate = requestOn(rpc, 'process/terminate', { processId }).pipe(
        catchError((failure: unknown) =>
          isTransportClosed(failure) ? throwError(() => failure) : EMPTY,
        ),
        ignoreElements(),
      );
      return concat(
        terminate,
        defer(() => {
          notifications.unregister(record);
          log.fail(
            new ProcessFailedError(processId, `failed to recover process ${processId}: ${detail}`),
          );
          return EMPTY;
        }),
      );
    }),
  );
}

function toSnapshot(result: ProcessReadResult): ProcessReadResponse {
  return {
    chunks: result.chunks.map((chunk) => ({
      type: 'output' as const,
      seq: chunk.seq,
      stream: chunk.stream,
      chunk: decodeValidatedBase64(chunk.chunk),
    })),
    nextSeq: result.nextSeq,
    exited: result.exited,
    exitCode: result.exitCode,
    closed: result.closed,
    failure: result.failure,
    sandboxDenied: result.sandboxDenied,
  };
}
