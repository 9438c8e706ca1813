import { describe, expect, it } from '@jest/globals';
import { timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { deadlineScheduler } from '../../src/transport/deadlineScheduler.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits until `done()` holds (bounded: fails after 5 s). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > 5_000) throw new Error('condition not reached within 5 s');
    await sleep(5);
  }
}

/** Timers that keep the event loop alive right now. */
const refedTimers = () =>
  process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describe('deadlineScheduler', () => {
  it('runs work with its state once its delay has passed', async () => {
    const start = deadlineScheduler.now();
    let ran: { state: string | undefined; at: number } | undefined;
    deadlineScheduler.schedule(
      (state) => (ran = { state, at: deadlineScheduler.now() }),
      40,
      'state-1',
    );
    await until(() => ran !== undefined);
    expect(ran?.state).toBe('state-1');
    expect(ran!.at - start).toBeGreaterThanOrEqual(39);
  });

  it('never runs a cancelled deadline', async () => {
    let ran = false;
    deadlineScheduler.schedule(() => (ran = true), 20).unsubscribe();
    let later = false;
    deadlineScheduler.schedule(() => (later = true), 60);
    await until(() => later);
    expect(ran).toBe(false);
  });

  it('runs a deadline due sooner than the armed one at its own time, each in due order', async () => {
    const start = deadlineScheduler.now();
    const ran: { name: string; at: number }[] = [];
    const record = (name: string) => () => ran.push({ name, at: deadlineScheduler.now() });
    deadlineScheduler.schedule(record('late'), 600);
    deadlineScheduler.schedule(record('soon'), 10);
    deadlineScheduler.schedule(record('middle'), 50);
    await until(() => ran.length === 3);
    expect(ran.map((entry) => entry.name)).toEqual(['soon', 'middle', 'late']);
    // Not held back until the timer armed for `late`.
    expect(ran[0]!.at - start).toBeLessThan(600);
  });

  it('lets an action reschedule itself (periodic work)', async () => {
    const ticks: number[] = [];
    const action = deadlineScheduler.schedule<number>(function (count = 0) {
      ticks.push(count);
      if (count < 2) this.schedule(count + 1, 10);
    }, 10);
    await until(() => ticks.length === 3);
    await sleep(30);
    expect(ticks).toEqual([0, 1, 2]);
    action.unsubscribe();
  });

  it('holds the process open only while a deadline is pending', async () => {
    await sleep(5);
    const before = refedTimers();
    const pending = deadlineScheduler.schedule(() => undefined, 10_000);
    expect(refedTimers()).toBe(before + 1);
    pending.unsubscribe();
    expect(refedTimers()).toBe(before);
    const again = deadlineScheduler.schedule(() => undefined, 20_000);
    expect(refedTimers()).toBe(before + 1);
    again.unsubscribe();
    expect(refedTimers()).toBe(before);
  });

  it('follows virtual time inside TestScheduler.run, like asyncScheduler', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(
      ({ expectObservable }) => {
        expectObservable(timer(250, deadlineScheduler)).toBe('250ms (0|)', { 0: 0 });
      },
    );
  });
});
