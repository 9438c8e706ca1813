/**
 * Marble tests (virtual time) of what a user interface sees of a lazy client:
 * `connectionState$` ('Connected' | 'Disconnected', emitted only on change) and `status$`
 * (connecting, connected, recovering with the try number and the time of the next try,
 * refreshing, retired, closed, disconnected, and the last error). In-memory executors behind
 * a Noise harness connector, as in lifecycleTiming.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { Observable, map, of, throwError } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  LazyRemoteExecServerClient,
  noiseRendezvous,
  registryRecoveryRetryDelayMs,
  type ConnectionStatus,
  type NoiseHarnessConnector,
} from '../../src/environment/index.js';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { ConnectError } from '../../src/protocol/errors.js';
import type { NoiseRendezvousConnectBundle } from '../../src/registry/index.js';
import { FakeExecutors } from './support/fakeExecutors.js';
import { toBundle } from './support/testRegistry.js';

const harnessIdentity = NoiseChannelIdentity.generate();
const executorA = NoiseChannelIdentity.generate();
const executorB = NoiseChannelIdentity.generate();
const bundleOf = (identity: NoiseChannelIdentity, registration: string) =>
  toBundle({ url: 'ws://127.0.0.1:9', identity, registration });
const bundleA = bundleOf(executorA, 'registration-a');
const bundleB = bundleOf(executorB, 'registration-b');

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

const kinds = (status$: Observable<ConnectionStatus>) => status$.pipe(map((s) => s.kind));

/** A lazy client over in-memory executors; lookups come from `lookups`, then `fallback`. */
function lazyClient(
  lookups: Observable<NoiseRendezvousConnectBundle>[],
  fallback: () => Observable<NoiseRendezvousConnectBundle>,
  connectHarness: NoiseHarnessConnector,
  scheduler: TestScheduler,
): LazyRemoteExecServerClient {
  return new LazyRemoteExecServerClient(
    noiseRendezvous({ connectBundle: () => lookups.shift() ?? fallback() }, harnessIdentity, {
      connectHarness,
    }),
    { scheduler },
  );
}

describe('connectionState$ emits only on change', () => {
  it('a failed first attempt and close() leave one Disconnected, then complete', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const refused: NoiseHarnessConnector = () =>
        throwError(() => new ConnectError('connection refused'));
      const client = lazyClient([], () => cold('(b|)', { b: bundleA }), refused, scheduler);
      cold('-x').subscribe(() => client.get().subscribe({ error: () => undefined }));
      cold('---x').subscribe(() => client.close());
      expectObservable(client.connectionState$).toBe('a--|', { a: 'Disconnected' });
    });
  });
});

describe('status$', () => {
  it('disconnected → connecting → connected on first use; closed completes it', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const executors = new FakeExecutors();
      const client = lazyClient(
        [cold('---(b|)', { b: bundleA })],
        () => cold('(b|)', { b: bundleA }),
        executors.connect,
        scheduler,
      );
      cold('-x').subscribe(() => client.get().subscribe());
      cold('------x').subscribe(() => client.close());
      expectObservable(kinds(client.status$)).toBe('dc--o-(x|)', {
        d: 'disconnected',
        c: 'connecting',
        o: 'connected',
        x: 'closed',
      });
    });
  });

  it('a failed first attempt is disconnected again, with the error as lastError', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const refused = new ConnectError('connection refused');
      const client = lazyClient(
        [],
        () => cold('--(b|)', { b: bundleA }),
        () => throwError(() => refused),
        scheduler,
      );
      cold('-x').subscribe(() => client.get().subscribe({ error: () => undefined }));
      expectObservable(client.status$, '^----!').toBe('dc-e', {
        d: { kind: 'disconnected', lastError: undefined },
        c: { kind: 'connecting', lastError: undefined },
        e: {
          kind: 'disconnected',
          lastError: expect.objectContaining({ cause: refused }),
        },
      });
    });
  });

  it('recovering names the try and the time of the next one, then connected again', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      const executors = new FakeExecutors();
      let refuse = 0;
      const refused = new ConnectError('connection refused');
      // The first connect opens session-1; resume tries reach it again unless refused.
      const connect: NoiseHarnessConnector = () =>
        refuse-- > 0 ? throwError(() => refused) : of(executors.open('session-1').transport);
      const client = lazyClient([], () => cold('(b|)', { b: bundleA }), connect, scheduler);
      const seen: [number, ConnectionStatus][] = [];
      client.status$.subscribe((status) => seen.push([scheduler.now(), status]));
      client.get().subscribe();
      scheduler.flush();
      refuse = 2;
      const dropAt = scheduler.now();
      executors.executors[0]!.end.drop('gone');
      scheduler.flush();

      const sessionId = 'session-1';
      const first = registryRecoveryRetryDelayMs(sessionId, 0);
      const second = registryRecoveryRetryDelayMs(sessionId, 1);
      const lost = expect.objectContaining({
        message: 'exec-server transport disconnected: gone',
      });
      const refusedNow = expect.objectContaining({ message: refused.message });
      /** Try `attempt`, waiting `waitMs` (published at `now`) or in flight (undefined). */
      const recovering = (
        attempt: number,
        now: number,
        waitMs: number | undefined,
        lastError: unknown,
      ) => ({
        kind: 'recovering',
        attempt,
        nextRetryAt: waitMs === undefined ? undefined : now + waitMs,
        nextRetryInMs: waitMs,
        lastError,
      });
      expect(seen).toEqual([
        [0, { kind: 'disconnected', lastError: undefined }],
        [0, { kind: 'connecting', lastError: undefined }],
        [0, { kind: 'connected', lastError: undefined }],
        [dropAt, recovering(1, dropAt, undefined, lost)],
        [dropAt, recovering(2, dropAt, first, refusedNow)],
        [dropAt + first, recovering(2, dropAt + first, undefined, refusedNow)],
        [dropAt + first, recovering(3, dropAt + first, second, refusedNow)],
        [dropAt + first + second, recovering(3, dropAt + first + second, undefined, refusedNow)],
        [dropAt + first + second, { kind: 'connected', lastError: refusedNow }],
      ]);
    });
  });

  it('refreshing while a refresh runs, connected once its probe answered', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const executors = new FakeExecutors();
      const client = lazyClient(
        [cold('--(b|)', { b: bundleA })],
        () => cold('(b|)', { b: bundleA }),
        executors.connect,
        scheduler,
      );
      cold('-x').subscribe(() => client.refreshConnection().subscribe());
      expectObservable(kinds(client.status$), '^----!').toBe('dr-o', {
        d: 'disconnected',
        r: 'refreshing',
        o: 'connected',
      });
      expectObservable(client.connectionState$, '^----!').toBe('a--b', {
        a: 'Disconnected',
        b: 'Connected',
      });
    });
  });

  it('retired when a refresh replaced the session and the replacement failed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const executors = new FakeExecutors();
      const refused = new ConnectError('connection refused');
      const connect: NoiseHarnessConnector = (bundle, identity) =>
        bundle.executorRegistrationId === 'registration-b'
          ? throwError(() => refused)
          : executors.connect(bundle, identity);
      const client = lazyClient(
        [cold('(b|)', { b: bundleA }), cold('--(b|)', { b: bundleB })],
        () => cold('(b|)', { b: bundleB }),
        connect,
        scheduler,
      );
      client.get().subscribe();
      cold('-x').subscribe(() => client.refreshConnection().subscribe({ error: () => undefined }));
      // The replacement's failure is known (e) just before the refresh ends (t).
      const failed = expect.objectContaining({ cause: refused });
      expectObservable(client.status$, '^----!').toBe('or-(et)', {
        o: { kind: 'connected', lastError: undefined },
        r: { kind: 'refreshing', lastError: undefined },
        e: { kind: 'refreshing', lastError: failed },
        t: { kind: 'retired', lastError: failed },
      });
    });
  });
});
