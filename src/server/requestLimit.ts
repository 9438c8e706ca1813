/**
 * `--concurrent-requests N` (the binary's flag): at most N requests of one connection are
 * being handled at a time; the next inbound message waits until a response goes out, and
 * everything after it waits behind it, so arrival order is kept. The binary's default is 1
 * (a long `process/read` holds back a later `fs/getMetadata`); this executor's default is no
 * limit (spec/conformance/DIVERGENCES.md). Guarded by spec/conformance/concurrentRequests.spec.ts.
 *
 * A wrapper of the connection's transport, so the connection processor stays unaware of it;
 * the transport's optional abilities (backpressure, split text, undecodable input) pass
 * through unchanged.
 */
import { Observable } from 'rxjs';
import type { Transport } from '../transport/transport.js';

/** The request id of an inbound text (as a JSON text), or undefined for anything else. */
function requestKey(text: string): string | undefined {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null) return undefined;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (typeof method !== 'string' || (typeof id !== 'number' && typeof id !== 'string')) {
    return undefined;
  }
  return JSON.stringify(id);
}

const RESULT_ID = /^\{"id":(-?\d+|"(?:[^"\\]|\\.)*")[,}]/;

/** The id of an outbound response (as a JSON text); undefined for a notification. */
function responseKey(text: string): string | undefined {
  if (text.startsWith('{"method"')) return undefined;
  const match = RESULT_ID.exec(text);
  if (match) return match[1];
  try {
    const { id, method } = JSON.parse(text) as { id?: unknown; method?: unknown };
    return method === undefined && id !== undefined ? JSON.stringify(id) : undefined;
  } catch {
    return undefined;
  }
}

export function limitConcurrentRequests(inner: Transport, limit: number): Transport {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrent request limit must be a positive integer, got ${limit}`);
  }
  const inFlight = new Map<string, number>();
  let inFlightCount = 0;
  const held: string[] = [];
  let deliver: ((text: string) => void) | undefined;

  const admit = (text: string): boolean => {
    const key = requestKey(text);
    if (key === undefined) return true;
    if (inFlightCount >= limit) return false;
    inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
    inFlightCount += 1;
    return true;
  };
  let releaseScheduled = false;
  // After a response, held messages are delivered in a microtask: never re-entrantly from
  // inside the connection's own `send`.
  const release = (): void => {
    if (releaseScheduled || held.length === 0) return;
    releaseScheduled = true;
    queueMicrotask(() => {
      releaseScheduled = false;
      while (held.length > 0 && deliver && admit(held[0] as string)) {
        deliver(held.shift() as string);
      }
    });
  };

  const incoming$ = new Observable<string>((subscriber) => {
    deliver = (text) => subscriber.next(text);
    const subscription = inner.incoming$.subscribe({
      next: (text) => {
        if (held.length === 0 && admit(text)) subscriber.next(text);
        else held.push(text);
      },
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
    return () => {
      deliver = undefined;
      subscription.unsubscribe();
    };
  });

  const wrapper: Transport & Record<string, unknown> = {
    incoming$,
    send(text: string): void {
      inner.send(text);
      const key = responseKey(text);
      const count = key === undefined ? undefined : inFlight.get(key);
      if (key === undefined || count === undefined) return;
      if (count === 1) inFlight.delete(key);
      else inFlight.set(key, count - 1);
      inFlightCount -= 1;
      release();
    },
    close: () => inner.close(),
  };
  const optional = inner as unknown as Record<string, unknown>;
  for (const method of ['sendSplit', 'onUndecodable', 'onceDrained'] as const) {
    const member = optional[method];
    if (typeof member === 'function') wrapper[method] = member.bind(inner);
  }
  if ('backedUp' in inner) {
    Object.defineProperty(wrapper, 'backedUp', { get: () => optional.backedUp });
  }
  return wrapper;
}
