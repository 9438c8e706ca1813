/**
 * Marble tests (virtual time) for the lifecycle's timing logic: the refresh switchMap, the
 * registry backoff and its jitter, the recovery deadline and retry cadence, and recovery
 * after a keepalive (Pong deadline) loss. Executors are in-memory fakes here; the real-socket
 * behaviour is covered by clientRefresh.spec.ts and recoveryFaults.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { Observable, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { ExecServerClient } from '../../src/client/index.js';
import {
  ConnectionAttemptError,
  LazyRemoteExecServerClient,
  noiseRendezvous,
  registryRecoveryRetryDelayMs,
  registryRetryBaseDelayMs,
  type NoiseHarnessConnector,
} from '../../src/environment/index.js';
import { ManagedSession } from '../../src/environment/managedSession.js';
import type {
  ReconnectStrategy,
  ReopenedTransport,
} from '../../src/environment/sessionConnector.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { ConnectError, ProtocolError } from '../../src/protocol/errors.js';
import {
  EnvironmentRegistryHttpError,
  type NoiseRendezvousConnectBundle,
} from '../../src/registry/index.js';
import { FakeExecutors } from './support/fakeExecutors.js';
import { toBundle } from './support/testRegistry.js';

const executorIdentity = NoiseChannelIdentity.generate();
const harnessIdentity = NoiseChannelIdentity.generate();
const bundle: NoiseRendezvousConnectBundle = toBundle({
  url: 'ws://127.0.0.1:9',
  identity: executorIdentity,
  registration: 'registration-1',
});

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A recovering-capable session over an in-memory transport that the test can drop. */
function sessionOver(executors: FakeExecutors, strategy: ReconnectStrategy) {
  const { transport, executor } = executors.open('session-1');
  let client: ExecServerClient | undefined;
  ExecServerClient.connect(transport, {
    clientName: 'codex-environment',
    recovery: true,
  }).subscribe((c) => (client = c));
  if (client === undefined) throw new Error('initialize did not complete');
  const session = new ManagedSession({ client, strategy });
  // Dropping the executor's end makes the client's transport fail with the reason.
  return { client, session, transport: executor.end };
}

describe('refresh is a switchMap over refresh requests', () => {
  it('a newer refresh unsubscribes the stale lookup, and both callers complete with it', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const slow = cold('-----(b|)', { b: bundle });
      const fast = cold('--(b|)', { b: bundle });
      const lookups = [slow, fast];
      const provider = { connectBundle: () => lookups.shift() ?? throwError(() => 'no lookup') };
      const executors = new FakeExecutors();
      const client = new LazyRemoteExecServerClient(
        noiseRendezvous(provider, harnessIdentity, { connectHarness: executors.connect }),
      );
      expectObservable(client.refreshConnection()).toBe('----|');
      expectObservable(client.refreshConnection(), '--^').toBe('----|');
      expectSubscriptions(slow.subscriptions).toBe('^-!');
      expectSubscriptions(fast.subscriptions).toBe('--^-!');
      // Starting the replacement connection keeps Disconnected (published once: only
      // changes are), its install publishes Connected.
      expectObservable(client.connectionState$, '^----!').toBe('a---b', {
        a: 'Disconnected',
        b: 'Connected',
      });
    });
  });

  it('a lookup that exceeds the 10 s bound fails the refresh and changes nothing', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const stuck = cold<NoiseRendezvousConnectBundle>('-');
      const provider = { connectBundle: () => stuck };
      const client = new LazyRemoteExecServerClient(
        noiseRendezvous(provider, harnessIdentity, { connectHarness: new FakeExecutors().connect }),
      );
      expectObservable(client.refreshConnection()).toBe(
        '10s #',
        undefined,
        expect.objectContaining({
          message: 'environment registry request failed: registry lookup timed out after 10s',
        }),
      );
      expectSubscriptions(stuck.subscriptions).toBe('^ 9999ms !');
      expectObservable(client.connectionState$, '^ 10s !').toBe('a', { a: 'Disconnected' });
    });
  });
});

describe('registry backoff', () => {
  it('doubles from 0.5 s and caps at 5 s', () => {
    expect([0, 1, 2, 3, 4, 5, 9].map(registryRetryBaseDelayMs)).toEqual([
      500, 1000, 2000, 4000, 5000, 5000, 5000,
    ]);
  });

  it('adds a jitter within [0, base/2], stable per key and spread across keys', () => {
    for (let key = 0; key < 50; key += 1) {
      for (let attempt = 0; attempt < 8; attempt += 1) {
        const base = registryRetryBaseDelayMs(attempt);
        const delay = registryRecoveryRetryDelayMs(`session-${key}`, attempt);
        expect(delay).toBeGreaterThanOrEqual(base);
        expect(delay).toBeLessThanOrEqual(base + base / 2);
        expect(registryRecoveryRetryDelayMs(`session-${key}`, attempt)).toBe(delay);
      }
    }
    const firstDelays = new Set(
      Array.from({ length: 50 }, (_, key) => registryRecoveryRetryDelayMs(`session-${key}`, 0)),
    );
    expect(firstDelays.size).toBeGreaterThan(10);
  });
});

describe('recovery timing', () => {
  it('retries a Noise recovery with registry backoff and gives up at the 25 s deadline', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const attempts: number[] = [];
      const strategy: ReconnectStrategy = {
        kind: 'noise',
        reopen: () =>
          new Observable<ReopenedTransport>((subscriber) => {
            attempts.push(scheduler.now());
            subscriber.error(new ConnectError('connection refused'));
          }),
        retryDelayMs: registryRecoveryRetryDelayMs,
      };
      const { client, transport } = sessionOver(new FakeExecutors(), strategy);
      const states: [number, string][] = [];
      client.state$.subscribe((state) => states.push([scheduler.now(), state]));
      transport.drop('gone');
      scheduler.flush();

      const expected = [0];
      while (true) {
        const next =
          expected.at(-1)! + registryRecoveryRetryDelayMs(client.sessionId, expected.length - 1);
        if (next >= 25_000) break;
        expected.push(next);
      }
      expect(attempts).toEqual(expected);
      expect(states).toEqual([
        [0, 'connected'],
        [0, 'recovering'],
        [25_000, 'failed'],
      ]);
      expect(client.failure?.message).toBe(
        'exec-server transport disconnected: gone; failed to resume exec-server session: recovery timed out after 25s',
      );
    });
  });

  it('retries a WebSocket recovery every 100 ms', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const attempts: number[] = [];
      const strategy: ReconnectStrategy = {
        kind: 'websocket',
        reopen: () =>
          new Observable<ReopenedTransport>((subscriber) => {
            attempts.push(scheduler.now());
            subscriber.error(new ConnectError('connection refused'));
          }),
        retryDelayMs: () => 100,
      };
      const { client, transport } = sessionOver(new FakeExecutors(), strategy);
      transport.drop('gone');
      scheduler.flush();
      expect(attempts).toHaveLength(250);
      expect(attempts.slice(0, 3)).toEqual([0, 100, 200]);
      expect(attempts.at(-1)).toBe(24_900);
      expect(client.state).toBe('failed');
    });
  });

  it('stops at once on a non-retryable error (another executor key)', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      let attempts = 0;
      const strategy: ReconnectStrategy = {
        kind: 'noise',
        reopen: () => {
          attempts += 1;
          return throwError(
            () => new ProtocolError('executor key changed during session recovery'),
          );
        },
        retryDelayMs: registryRecoveryRetryDelayMs,
      };
      const { client, transport } = sessionOver(new FakeExecutors(), strategy);
      transport.drop('gone');
      expect(attempts).toBe(1);
      expect(client.state).toBe('failed');
      expect(client.failure?.message).toBe(
        'exec-server transport disconnected: gone; failed to resume exec-server session: exec-server protocol error: executor key changed during session recovery',
      );
    });
  });

  it('resumes the same session once the executor is reachable again', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      const executors = new FakeExecutors();
      let attempt = 0;
      const strategy: ReconnectStrategy = {
        kind: 'noise',
        reopen: () => {
          attempt += 1;
          if (attempt < 3) return cold('-#', undefined, new ConnectError('connection refused'));
          return cold('20ms (t|)', {
            t: { transport: executors.open('session-1').transport, registrationId: 'renewed' },
          });
        },
        retryDelayMs: registryRecoveryRetryDelayMs,
      };
      const { client, session, transport } = sessionOver(executors, strategy);
      const states: [number, string][] = [];
      client.state$.subscribe((state) => states.push([scheduler.now(), state]));
      transport.drop('gone');
      scheduler.flush();
      const resumedAt =
        1 +
        registryRecoveryRetryDelayMs('session-1', 0) +
        1 +
        registryRecoveryRetryDelayMs('session-1', 1) +
        20;
      expect(states).toEqual([
        [0, 'connected'],
        [0, 'recovering'],
        [resumedAt, 'connected'],
      ]);
      expect(session.registrationId).toBe('renewed');
      expect(executors.executors.at(-1)!.requests[0]?.params).toEqual({
        clientName: 'codex-environment',
        resumeSessionId: 'session-1',
      });
    });
  });

  it('a keepalive loss (Pong deadline) starts recovery like any other transport loss', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      const executors = new FakeExecutors();
      const reopened: number[] = [];
      const strategy: ReconnectStrategy = {
        kind: 'noise',
        reopen: () => {
          reopened.push(scheduler.now());
          return cold('(t|)', { t: { transport: executors.open('session-1').transport } });
        },
        retryDelayMs: registryRecoveryRetryDelayMs,
      };
      const { client, transport } = sessionOver(executors, strategy);
      const disconnects: string[] = [];
      client.disconnected$.subscribe((error) => disconnects.push(error.message));
      // The harness's watchdog: no Pong within 100 ms of the Ping drops the transport.
      cold('100ms x').subscribe(() => transport.drop('pong_timeout'));
      scheduler.flush();
      expect(disconnects).toEqual(['exec-server transport disconnected: pong_timeout']);
      expect(reopened).toEqual([100]);
      expect(client.state).toBe('connected');
    });
  });
});

describe('initial Noise lookup', () => {
  const offline = new EnvironmentRegistryHttpError(409, 'environment_offline', 'offline');

  /** A provider failing the first `failures` lookups with `error`, recording lookup times. */
  function flakyProvider(scheduler: TestScheduler, failures: number, error: Error) {
    const times: number[] = [];
    return {
      times,
      connectBundle: () =>
        new Observable<NoiseRendezvousConnectBundle>((subscriber) => {
          times.push(scheduler.now());
          if (times.length <= failures) subscriber.error(error);
          else {
            subscriber.next(bundle);
            subscriber.complete();
          }
        }),
    };
  }

  it('retries a retryable registry error at most 4 times with registry backoff', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const provider = flakyProvider(scheduler, 10, offline);
      const client = new LazyRemoteExecServerClient(
        noiseRendezvous(provider, harnessIdentity, { connectHarness: new FakeExecutors().connect }),
      );
      let failure: unknown;
      client.get().subscribe({ error: (error: unknown) => (failure = error) });
      scheduler.flush();
      expect(provider.times).toHaveLength(5);
      const gaps = provider.times.slice(1).map((time, index) => time - provider.times[index]!);
      gaps.forEach((gap, attempt) => {
        const base = registryRetryBaseDelayMs(attempt);
        expect(gap).toBeGreaterThanOrEqual(base);
        expect(gap).toBeLessThanOrEqual(base * 1.5);
      });
      expect(failure).toBeInstanceOf(ConnectionAttemptError);
      expect((failure as ConnectionAttemptError).cause).toBe(offline);
    });
  });

  it('an HTTP 401 on the rendezvous upgrade fetches a fresh bundle once', () => {
    for (const refusals of [1, 2]) {
      const executors = new FakeExecutors();
      let opens = 0;
      const connectHarness: NoiseHarnessConnector = (bundle, identity) => {
        opens += 1;
        if (opens <= refusals) {
          return throwError(
            () =>
              new ConnectError(
                `failed to connect to Noise relay websocket \`${bundle.websocketUrl}\`: HTTP 401`,
              ),
          );
        }
        return executors.connect(bundle, identity);
      };
      let lookups = 0;
      const provider = {
        connectBundle: () => {
          lookups += 1;
          return of(bundle);
        },
      };
      const client = new LazyRemoteExecServerClient(
        noiseRendezvous(provider, harnessIdentity, { connectHarness }),
      );
      let outcome: unknown;
      client.get().subscribe({
        next: (session) => (outcome = session.sessionId),
        error: (error: unknown) => (outcome = error),
      });
      expect(lookups).toBe(2);
      if (refusals === 1) expect(outcome).toBe('session-1');
      else expect((outcome as ConnectionAttemptError).cause).toBeInstanceOf(ConnectError);
      client.close();
    }
  });

  it('a provisioned environment keeps retrying environment_offline past 4 retries', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const provider = flakyProvider(scheduler, 8, offline);
      const client = new LazyRemoteExecServerClient({
        kind: 'deferred',
        readiness$: of({ ok: true }),
        transport: noiseRendezvous(provider, harnessIdentity, {
          connectHarness: new FakeExecutors().connect,
        }),
      });
      let connectedAt: number | undefined;
      client.get().subscribe(() => (connectedAt = scheduler.now()));
      scheduler.flush();
      expect(provider.times).toHaveLength(9);
      expect(connectedAt).toBe(provider.times.at(-1));
      expect(connectedAt).toBeLessThan(5 * 60_000);
      expect(client.connectionState).toBe('Connected');
    });
  });

  it('a provisioned environment gives up on environment_offline after 5 minutes', () => {
    const scheduler = testScheduler();
    scheduler.run(() => {
      const provider = flakyProvider(scheduler, Number.POSITIVE_INFINITY, offline);
      const client = new LazyRemoteExecServerClient({
        kind: 'deferred',
        readiness$: of({ ok: true }),
        transport: noiseRendezvous(provider, harnessIdentity, {
          connectHarness: new FakeExecutors().connect,
        }),
      });
      let failedAt: number | undefined;
      client.get().subscribe({ error: () => (failedAt = scheduler.now()) });
      scheduler.flush();
      expect(failedAt).toBeDefined();
      expect(failedAt).toBeLessThanOrEqual(5 * 60_000);
      expect(failedAt).toBeGreaterThanOrEqual(5 * 60_000 - 7_500);
      expect(provider.times.length).toBeGreaterThan(40);
    });
  });
});

describe('connection attempts', () => {
  it('concurrent get() callers share one lookup and one session', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const firstLookup = cold('---(b|)', { b: bundle });
      const lookups = [firstLookup];
      const executors = new FakeExecutors();
      const client = new LazyRemoteExecServerClient(
        noiseRendezvous(
          { connectBundle: () => lookups.shift() ?? cold('(b|)', { b: bundle }) },
          harnessIdentity,
          { connectHarness: executors.connect },
        ),
      );
      const sessionIds = { s: 'session-1' };
      const ids = (source: Observable<ExecServerClient>) =>
        new Observable<string>((subscriber) =>
          source.subscribe({
            next: (c) => subscriber.next(c.sessionId),
            error: (e: unknown) => subscriber.error(e),
            complete: () => subscriber.complete(),
          }),
        );
      expectObservable(ids(client.get())).toBe('---(s|)', sessionIds);
      expectObservable(ids(client.get()), '-^').toBe('---(s|)', sessionIds);
      expectSubscriptions(firstLookup.subscriptions).toBe('^--!');
    });
  });
});
