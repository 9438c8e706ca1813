/**
 * Twins of the seed's retirement-ordering tests (`client_refresh_tests.rs`): retiring a
 * session rejects pending mutations and process starts before process streams are cleaned
 * up, whether the executor's answer arrives after retirement began or the RPC layer had
 * already routed it (out of its pending table, handed to the session) when retirement began —
 * the seed's `response_queued`, which it checks with `pending_request_count() == 0`. Over an
 * in-memory transport, like the seed's controlled RPC; the routed case reaches into the
 * connection's pending table as the seed reaches into `inner`.
 */
import { describe, expect, it } from '@jest/globals';
import { BehaviorSubject, EMPTY } from 'rxjs';
import { ExecServerClient, type ProcessHandle } from '../../src/client/index.js';
import {
  ManagedSession,
  type EnvironmentConnectionState,
} from '../../src/environment/managedSession.js';
import type { ReconnectStrategy } from '../../src/environment/sessionConnector.js';
import { DisconnectedError } from '../../src/protocol/errors.js';
import type { RpcConnection, RpcResponseObserver } from '../../src/rpc/rpcConnection.js';
import { fakeConnection, type FakeExecutor } from '../client/support/fakeExecutor.js';

/** Never used: these sessions are retired, not recovered. */
const noReconnect: ReconnectStrategy = {
  kind: 'websocket',
  reopen: () => EMPTY,
  retryDelayMs: () => 100,
};

/** The seed's `controlled_rpc`: a session on a scripted executor. */
function controlledSession() {
  const { transport, executor } = fakeConnection('controlled-session');
  let client: ExecServerClient | undefined;
  ExecServerClient.connect(transport, {
    clientName: 'codex-environment',
    recovery: true,
  }).subscribe((c) => (client = c));
  if (client === undefined) throw new Error('initialize did not complete');
  expect(executor.notifications.map((n) => n.method)).toEqual(['initialized']);
  const session = new ManagedSession({ client, strategy: noReconnect });
  const published = new BehaviorSubject<EnvironmentConnectionState>('Disconnected');
  const states: EnvironmentConnectionState[] = [];
  published.subscribe((state) => states.push(state));
  session.attach(published);
  return { client, executor, session, states };
}

/** The live connection's table of requests awaiting an answer (private to RpcConnection). */
function pendingTable(client: ExecServerClient): Map<number, RpcResponseObserver> {
  const core = (client as unknown as { core: { lifecycle: { liveRpc: RpcConnection } } }).core;
  return (core.lifecycle.liveRpc as unknown as { pending: Map<number, RpcResponseObserver> })
    .pending;
}

/**
 * Runs `hook` once the RPC layer has routed the answer to request `id`: taken out of the
 * pending table and handed on, before the session has passed it to the caller.
 */
function whenRouted(client: ExecServerClient, id: number, hook: () => void): void {
  const table = pendingTable(client);
  const routed = table.get(id);
  if (routed === undefined) throw new Error(`request ${id} is not pending`);
  table.set(id, {
    next: (value) => {
      expect(table.has(id)).toBe(false); // the seed's pending_request_count() == 0
      hook();
      routed.next(value);
    },
    error: (error) => routed.error(error),
    complete: () => routed.complete(),
  });
}

/** A running process whose event stream is what retirement cleans up last. */
function runningProcess(client: ExecServerClient, executor: FakeExecutor): ProcessHandle {
  let handle: ProcessHandle | undefined;
  client
    .startProcess({ processId: 'streaming', argv: ['cat'], cwd: '/' })
    .subscribe((h) => (handle = h));
  executor.respond(executor.take('process/start'), { processId: 'streaming' });
  if (handle === undefined) throw new Error('process did not start');
  return handle;
}

describe('retirement ordering (seed: client_refresh_tests.rs)', () => {
  it('retirement_rejects_pending_mutation_before_stream_cleanup', () => {
    for (const responseQueued of [false, true]) {
      const { client, executor, session, states } = controlledSession();
      const order: string[] = [];
      runningProcess(client, executor).events$.subscribe({
        error: () => order.push('stream cleanup'),
      });
      const outcome: { values: unknown[]; error?: unknown } = { values: [] };
      client.fs.remove('/retired-file').subscribe({
        next: (value) => outcome.values.push(value),
        error: (error: unknown) => {
          outcome.error = error;
          order.push('pending mutation');
        },
      });
      const request = executor.take('fs/remove');
      if (responseQueued) {
        // The RPC layer has already routed the answer when retirement begins.
        whenRouted(client, request.id, () => session.retire());
        executor.respond(request, {});
      } else {
        session.retire();
        executor.respond(request, {});
      }
      expect(outcome.values).toEqual([]);
      expect(outcome.error).toBeInstanceOf(DisconnectedError);
      expect((outcome.error as Error).message).toBe('exec-server executor was replaced');
      expect(order).toEqual(['pending mutation', 'stream cleanup']);
      expect(client.state).toBe('retired');
      // The publisher was detached first: the retired session never published its end.
      expect(states).toEqual(['Disconnected', 'Connected']);
    }
  });

  it('retirement_rejects_pending_process_start_before_stream_cleanup', () => {
    for (const responseQueued of [false, true]) {
      const { client, executor, session, states } = controlledSession();
      const order: string[] = [];
      runningProcess(client, executor).events$.subscribe({
        error: () => order.push('stream cleanup'),
      });
      const outcome: { values: unknown[]; error?: unknown } = { values: [] };
      client.startProcess({ processId: 'retired-process', argv: ['unused'], cwd: '/' }).subscribe({
        next: (value) => outcome.values.push(value),
        error: (error: unknown) => {
          outcome.error = error;
          order.push('pending start');
        },
      });
      const request = executor.take('process/start');
      if (responseQueued) {
        whenRouted(client, request.id, () => session.retire());
        executor.respond(request, { processId: 'retired-process' });
      } else {
        session.retire();
        executor.respond(request, { processId: 'retired-process' });
      }
      expect(outcome.values).toEqual([]);
      expect(outcome.error).toBeInstanceOf(DisconnectedError);
      expect(order).toEqual(['pending start', 'stream cleanup']);
      expect(states).toEqual(['Disconnected', 'Connected']);
      // A retired session accepts no new starts either.
      let late: unknown;
      client
        .startProcess({ processId: 'late', argv: ['x'], cwd: '/' })
        .subscribe({ error: (error: unknown) => (late = error) });
      expect(late).toBeInstanceOf(DisconnectedError);
    }
  });
});
