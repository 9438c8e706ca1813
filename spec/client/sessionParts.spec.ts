/**
 * The parts of a session, each on its own (src/client/): the lifecycle union and its
 * transitions, the call router's options (wait, failFast, resend, timeout, params built when
 * sent, abort on the session's end), and the notification router (process events, malformed
 * notifications, network policy answers). ExecServerClient's own spec covers them together.
 */
import { describe, expect, it } from '@jest/globals';
import { EMPTY, firstValueFrom, of, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { CallRouter, type CallOptions } from '../../src/client/callRouter.js';
import { NotificationRouter } from '../../src/client/notificationRouter.js';
import type { NetworkPolicyHandler } from '../../src/client/networkPolicy.js';
import { SessionLifecycle, type SessionState } from '../../src/client/sessionLifecycle.js';
import { DisconnectedError, ExecServerError, TimeoutError } from '../../src/protocol/errors.js';
import type { ClientMethod, ParamsOf, ResultOf } from '../../src/protocol/methods.js';
import { RpcConnection } from '../../src/rpc/rpcConnection.js';
import { base64, fakeConnection, type FakeExecutor } from './support/fakeExecutor.js';

function connection(): { rpc: RpcConnection; executor: FakeExecutor } {
  const { transport, executor } = fakeConnection();
  return { rpc: new RpcConnection(transport), executor };
}

describe('SessionLifecycle', () => {
  it('publishes connected, recovering and the end; lost is not published', () => {
    const lifecycle = new SessionLifecycle();
    const states: SessionState[] = [];
    lifecycle.state$.subscribe((state) => states.push(state));
    const first = connection().rpc;
    lifecycle.install(first);
    expect(lifecycle.liveRpc).toBe(first);
    const loss = new DisconnectedError('exec-server transport disconnected: gone');
    expect(lifecycle.lose(connection().rpc, loss)).toBe(false); // not the live transport
    expect(lifecycle.lose(first, loss)).toBe(true);
    expect(lifecycle.current).toEqual({ kind: 'lost', error: loss });
    expect(lifecycle.liveRpc).toBeUndefined();
    expect(lifecycle.state).toBe('connected');
    lifecycle.recover();
    lifecycle.install(connection().rpc);
    const replaced = new DisconnectedError('exec-server executor was replaced');
    expect(lifecycle.end('retired', replaced)).toEqual({ rpc: expect.any(RpcConnection) });
    expect(lifecycle.end('failed', new DisconnectedError('later'))).toBeNull();
    expect(lifecycle.terminalError).toBe(replaced);
    expect(states).toEqual(['connected', 'recovering', 'connected', 'retired']);
  });

  it('refuses to install after the end, or a transport that is already closed', () => {
    const lifecycle = new SessionLifecycle();
    const closed = connection().rpc;
    closed.close();
    expect(() => lifecycle.install(closed)).toThrow('exec-server transport disconnected');
    const ended = new DisconnectedError('exec-server client was closed');
    lifecycle.end('failed', ended);
    expect(() => lifecycle.install(connection().rpc)).toThrow(ended);
  });
});

/** A router over a lifecycle, recording the losses it reports. */
function router(options: { recovery?: boolean; scheduler?: TestScheduler } = {}) {
  const lifecycle = new SessionLifecycle();
  const losses: ExecServerError[] = [];
  const calls = new CallRouter({
    lifecycle,
    scheduler: options.scheduler,
    recovery: options.recovery ?? true,
    transportLost: (rpc, reason) => {
      losses.push(reason);
      if (lifecycle.lose(rpc, new DisconnectedError(reason.message))) lifecycle.recover();
    },
  });
  return { lifecycle, calls, losses };
}

/** Subscribes and records what arrives. */
function observe<T>(source: Observable<T>) {
  const seen: { values: T[]; error?: unknown; complete: boolean } = { values: [], complete: false };
  source.subscribe({
    next: (value) => seen.values.push(value),
    error: (error: unknown) => (seen.error = error),
    complete: () => (seen.complete = true),
  });
  return seen;
}

function call<M extends ClientMethod>(
  calls: CallRouter,
  method: M,
  params: ParamsOf<M> | (() => ParamsOf<M>),
  options?: CallOptions,
): { values: ResultOf<M>[]; error?: unknown; complete: boolean } {
  return observe(calls.call(method, params, options));
}

describe('CallRouter', () => {
  it('decodes results with the method table; a result that does not match is a JsonError', () => {
    const { lifecycle, calls } = router();
    const { rpc, executor } = connection();
    lifecycle.install(rpc);
    const ok = call(calls, 'process/terminate', { processId: 'p' });
    executor.respond(executor.take('process/terminate'), { running: true });
    expect(ok).toEqual({ values: [{ running: true }], complete: true });
    const bad = call(calls, 'process/terminate', { processId: 'p' });
    executor.respond(executor.take('process/terminate'), { running: 'yes' });
    expect((bad.error as Error).message).toMatch(
      /: `process\/terminate` result did not match the protocol/,
    );
  });

  it('wait (default) sends once the session is connected again; params are built then', () => {
    const { lifecycle, calls } = router();
    const first = connection();
    lifecycle.install(first.rpc);
    lifecycle.lose(first.rpc, new DisconnectedError('gone'));
    lifecycle.recover();
    let built = 0;
    const waiting = call(calls, 'process/terminate', () => {
      built += 1;
      return { processId: 'p' };
    });
    expect(built).toBe(0);
    const second = connection();
    lifecycle.install(second.rpc);
    expect(built).toBe(1);
    second.executor.respond(second.executor.take('process/terminate'), { running: false });
    expect(waiting.values).toEqual([{ running: false }]);
  });

  it('failFast errors at once while recovering', () => {
    const { lifecycle, calls } = router();
    const first = connection();
    lifecycle.install(first.rpc);
    lifecycle.lose(first.rpc, new DisconnectedError('gone'));
    lifecycle.recover();
    const probe = call(calls, 'environment/status', null, { recovery: 'failFast' });
    expect((probe.error as Error).message).toBe('exec-server environment is recovering');
  });

  it('resend sends the same params again on the resumed transport', () => {
    const { lifecycle, calls, losses } = router();
    const first = connection();
    lifecycle.install(first.rpc);
    const params = { processId: 'p', chunk: base64('x'), writeId: '7' };
    const write = call(calls, 'process/write', params, { recovery: 'resend' });
    first.executor.take('process/write');
    first.executor.end.drop('gone');
    expect(losses.map((loss) => loss.message)).toEqual([
      'exec-server transport disconnected: gone',
    ]);
    expect(write.values).toEqual([]);
    const second = connection();
    lifecycle.install(second.rpc);
    const resent = second.executor.take('process/write');
    expect(resent.params).toEqual(params);
    second.executor.respond(resent, { status: 'accepted' });
    expect(write.values).toEqual([{ status: 'accepted' }]);
  });

  it('timeoutMs fails with RpcTimedOut and, when asked, closes the silent transport', () => {
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(() => {
      const { lifecycle, calls } = router({ scheduler });
      const { rpc } = connection();
      lifecycle.install(rpc);
      const info = call(calls, 'environment/info', null, {
        timeoutMs: 30_000,
        replaceTransportOnTimeout: true,
      });
      scheduler.flush();
      expect(info.error).toBeInstanceOf(TimeoutError);
      expect((info.error as Error).message).toBe(
        'exec-server protocol error: timed out waiting for exec-server `environment/info` response after 30s',
      );
      expect(rpc.isClosed).toBe(true);
    });
  });

  it("abortAll fails pending calls with the session's end; later calls fail at once", () => {
    const { lifecycle, calls } = router();
    const { rpc } = connection();
    lifecycle.install(rpc);
    const pending = call(calls, 'process/terminate', { processId: 'p' });
    const replaced = new DisconnectedError('exec-server executor was replaced');
    lifecycle.end('retired', replaced);
    calls.abortAll(replaced);
    expect(pending.error).toBe(replaced);
    expect(call(calls, 'process/terminate', { processId: 'p' }).error).toBe(replaced);
    // Event streams are not aborted with the calls, but end with the session as well.
    expect(observe(calls.guardStream(of(1))).error).toBe(replaced);
    expect(observe(calls.guardStream(EMPTY)).error).toBe(replaced);
  });
});

/** A router as a session builds it, with `policy` deciding for processes nobody watches. */
function notificationRouter(policy?: NetworkPolicyHandler): NotificationRouter {
  return new NotificationRouter({
    policy,
    policyTimeoutMs: 60_000,
    scheduler: undefined,
    dropReason: () => 'session ended',
  });
}

describe('NotificationRouter', () => {
  it('routes process events by id and forgets a finished process', () => {
    const notifications = notificationRouter();
    const record = notifications.register('p');
    expect(() => notifications.register('p')).toThrow('session already registered for process p');
    const output = { processId: 'p', seq: 1, stream: 'stdout', chunk: base64('hi') };
    notifications.dispatch({ method: 'process/output', params: output });
    notifications.dispatch({
      method: 'process/exited',
      params: { processId: 'p', seq: 2, exitCode: 0 },
    });
    notifications.dispatch({ method: 'process/closed', params: { processId: 'p', seq: 3 } });
    notifications.dispatch({ method: 'fs/missingChanged', params: { watchId: 1 } }); // ignored
    expect(record.log.isFinished).toBe(true);
    expect(notifications.recoverableProcesses()).toEqual([]);
    expect(() => notifications.register('p')).not.toThrow();
  });

  it('throws on a notification that does not match the protocol', () => {
    const notifications = notificationRouter();
    expect(() =>
      notifications.dispatch({ method: 'process/output', params: { processId: 'p' } }),
    ).toThrow(/: `process\/output` params did not match the protocol/);
  });

  it('answers network policy requests: deny unless a handler decides for a known process', async () => {
    const request = (processId: string) => ({
      processId,
      request: { host: 'example.com', protocol: 'https_connect', port: 443 },
    });
    const denied = { decision: { type: 'deny', reason: 'not_allowed' } };
    const withoutHandler = notificationRouter();
    withoutHandler.register('p');
    expect(
      await firstValueFrom(withoutHandler.answer('network/policyRequest', request('p'))!),
    ).toEqual(denied);
    const allowing = notificationRouter(() => of({ type: 'allow' as const }));
    allowing.register('p');
    expect(await firstValueFrom(allowing.answer('network/policyRequest', request('p'))!)).toEqual({
      decision: { type: 'allow' },
    });
    expect(
      await firstValueFrom(allowing.answer('network/policyRequest', request('other'))!),
    ).toEqual(denied);
    expect(allowing.answer('unknown/method', {})).toBeUndefined();
  });
});
