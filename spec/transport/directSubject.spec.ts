import { describe, expect, it } from '@jest/globals';
import { DirectSubject } from '../../src/transport/directSubject.js';

function watch<T>(subject: DirectSubject<T>) {
  const seen: { values: T[]; error?: unknown; completed: boolean } = {
    values: [],
    completed: false,
  };
  const subscription = subject.observable.subscribe({
    next: (value) => seen.values.push(value),
    error: (error: unknown) => (seen.error = error),
    complete: () => (seen.completed = true),
  });
  return { seen, subscription };
}

describe('DirectSubject', () => {
  it('delivers each value to every current subscriber, hot (no replay of values)', () => {
    const subject = new DirectSubject<number>();
    const first = watch(subject);
    subject.next(1);
    const second = watch(subject);
    subject.next(2);
    first.subscription.unsubscribe();
    subject.next(3);
    expect(first.seen.values).toEqual([1, 2]);
    expect(second.seen.values).toEqual([2, 3]);
  });

  it('lets a subscriber unsubscribe another during delivery without breaking the loop', () => {
    const subject = new DirectSubject<string>();
    const log: string[] = [];
    const later: { second?: { unsubscribe(): void } } = {};
    subject.observable.subscribe((value) => {
      log.push(`a ${value}`);
      later.second?.unsubscribe();
    });
    later.second = subject.observable.subscribe((value) => log.push(`b ${value}`));
    subject.observable.subscribe((value) => log.push(`c ${value}`));
    subject.next('x');
    expect(log).toEqual(['a x', 'c x']);
  });

  it('completes or errors everyone once, ignores later calls, and replays the end to latecomers', () => {
    const completed = new DirectSubject<number>();
    const early = watch(completed);
    completed.complete();
    completed.next(1);
    completed.error(new Error('late'));
    expect(early.seen).toEqual({ values: [], completed: true });
    expect(watch(completed).seen.completed).toBe(true);
    expect(completed.ended).toBe(true);

    const failed = new DirectSubject<number>();
    const reason = new Error('dropped');
    const before = watch(failed);
    failed.error(reason);
    failed.complete();
    expect(before.seen.error).toBe(reason);
    expect(before.seen.completed).toBe(false);
    expect(watch(failed).seen.error).toBe(reason);
  });
});
