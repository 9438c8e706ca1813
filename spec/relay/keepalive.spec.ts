import { describe, expect, it } from '@jest/globals';
import { TestScheduler } from 'rxjs/testing';
import { NEVER, type Observable, takeUntil, timer } from 'rxjs';
import {
  type KeepaliveOptions,
  PongTimeoutError,
  keepalive as unboundedKeepalive,
} from '../../src/relay/keepalive.js';
import { isTransportClosed } from '../../src/protocol/errors.js';

const pings = { a: { n: 0 }, b: { n: 1 }, c: { n: 2 }, d: { n: 3 } };

/**
 * Run mode flushes virtual time without a frame limit, so a keepalive that never errors would
 * spin forever; cutting it off after `limitMs` of virtual time makes such a bug a failed
 * assertion (with a short diff).
 */
function keepalive(pongs: Observable<unknown>, options?: KeepaliveOptions, limitMs = 200) {
  return unboundedKeepalive(pongs, options).pipe(takeUntil(timer(limitMs)));
}

function scheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('keepalive', () => {
  it('detects a dead peer: first ping after the interval, pong_timeout at the deadline', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const pongs = hot('-');
      expectObservable(keepalive(pongs, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 19ms #',
        pings,
        new PongTimeoutError(20),
      );
    });
  });

  it('uses 30 s / 60 s by default', () => {
    scheduler().run(({ hot, expectObservable }) => {
      expectObservable(keepalive(hot('-'), {}, 200_000)).toBe(
        '30s a 59999ms #',
        pings,
        new PongTimeoutError(60_000),
      );
    });
  });

  it('keeps a live peer alive while pongs come back, then times out when they stop', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // Pongs 2 ms after the pings at 10, 20 and 30; the ping at 40 is never answered.
      const pongs = hot('12ms p 9ms p 9ms p');
      expectObservable(keepalive(pongs, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 9ms b 9ms c 9ms d 19ms #',
        pings,
        new PongTimeoutError(20),
      );
    });
  });

  it('never sends a second ping while one is outstanding, so ticks do not extend the deadline', () => {
    scheduler().run(({ hot, expectObservable }) => {
      expectObservable(keepalive(hot('-'), { intervalMs: 10, pongTimeoutMs: 35 })).toBe(
        '10ms a 34ms #',
        pings,
        new PongTimeoutError(35),
      );
    });
  });

  it('a late pong just before the deadline still clears it', () => {
    scheduler().run(({ hot, expectObservable }) => {
      // Ping at 10, deadline 30, pong at 29; next ping at the tick at 30, deadline 50.
      const pongs = hot('29ms p');
      expectObservable(keepalive(pongs, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 19ms b 19ms #',
        pings,
        new PongTimeoutError(20),
      );
    });
  });

  it('pongs before any ping change nothing', () => {
    scheduler().run(({ hot, expectObservable }) => {
      const pongs = hot('1ms ppp');
      expectObservable(keepalive(pongs, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 19ms #',
        pings,
        new PongTimeoutError(20),
      );
    });
  });

  it('completes when the pong source completes and passes its errors through', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const closed = hot('15ms |');
      expectObservable(keepalive(closed, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 4ms |',
        pings,
      );
      const failed = hot('15ms #', undefined, new Error('read error'));
      expectObservable(keepalive(failed, { intervalMs: 10, pongTimeoutMs: 20 })).toBe(
        '10ms a 4ms #',
        pings,
        new Error('read error'),
      );
      expectSubscriptions(closed.subscriptions).toBe('^ 14ms !');
    });
  });

  it('stops its timers and unsubscribes from pongs when unsubscribed', () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const pongs = hot('-');
      expectObservable(keepalive(pongs, { intervalMs: 10, pongTimeoutMs: 20 }), '^ 24ms !').toBe(
        '10ms a',
        pings,
      );
      expectSubscriptions(pongs.subscriptions).toBe('^ 24ms !');
    });
  });

  it('reports pong_timeout as a transport disconnect', () => {
    const error = new PongTimeoutError(60_000);
    expect(error.reason).toBe('pong_timeout');
    expect(error.message).toBe('exec-server transport disconnected: pong_timeout');
    expect(isTransportClosed(error)).toBe(true);
  });

  it('rejects non-positive timings', () => {
    expect(() => unboundedKeepalive(NEVER, { intervalMs: 0 })).toThrow(RangeError);
    expect(() => unboundedKeepalive(NEVER, { pongTimeoutMs: -1 })).toThrow(RangeError);
  });
});
