/**
 * The handshake on one transport (spec/protocol.md §4.1): `initialize{clientName,
 * resumeSessionId}`, then the `initialized` notification, under the initialize budget
 * ("timed out waiting for exec-server initialize handshake after 10s"). Only the first answer
 * is timed. Guarded by spec/client/execServerClient.spec.ts ("connect").
 */
import { map, throwError, timeout, type Observable, type SchedulerLike } from 'rxjs';
import { JsonError, TimeoutError } from '../protocol/errors.js';
import { METHODS } from '../protocol/methods.js';
import type { RpcConnection } from '../rpc/rpcConnection.js';
import { formatDuration } from '../transport/formatDuration.js';
import { decodeResult } from './wireDecode.js';

/**
 * What the handshake needs at once: the session id. The `environmentInfo` the executor sends
 * along stays raw until first asked for (SessionCore `decodedEnvironmentInfo`): many sessions
 * never look at it.
 */
export interface HandshakeResult {
  readonly sessionId: string;
  readonly environmentInfo: unknown;
}

export interface HandshakeOptions {
  readonly clientName: string;
  readonly initializeTimeoutMs: number;
  readonly scheduler: SchedulerLike | undefined;
}

/** Runs the handshake on `rpc`; emits once. Unsubscribing abandons it. */
export function handshake(
  rpc: RpcConnection,
  resumeSessionId: string | null,
  options: HandshakeOptions,
): Observable<HandshakeResult> {
  const budget = options.initializeTimeoutMs;
  return rpc.request('initialize', { clientName: options.clientName, resumeSessionId }).pipe(
    timeout({
      first: budget,
      ...(options.scheduler ? { scheduler: options.scheduler } : {}),
      with: () =>
        throwError(
          () =>
            new TimeoutError(
              `timed out waiting for exec-server initialize handshake after ${formatDuration(budget)}`,
            ),
        ),
    }),
    map((raw) => {
      const result = decodeHandshakeResult(raw);
      rpc.notify('initialized', {});
      return result;
    }),
  );
}

/**
 * The `initialize` result with only `sessionId` checked now (see HandshakeResult); anything
 * else that is off is reported by the full schema.
 */
function decodeHandshakeResult(raw: unknown): HandshakeResult {
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const record = raw as Record<string, unknown>;
    if (typeof record.sessionId === 'string') {
      return { sessionId: record.sessionId, environmentInfo: record.environmentInfo };
    }
  }
  decodeResult('initialize', METHODS.initialize.result, raw); // throws with the schema's message
  throw new JsonError('`initialize` result did not match the protocol: no sessionId');
}
