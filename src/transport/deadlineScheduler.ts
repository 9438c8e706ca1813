/**
 * The default scheduler of the connect and `initialize` deadlines.
 *
 * A deadline is nearly always cancelled long before it is due: the socket opens in
 * milliseconds, the budget is seconds. Rather than a native timer per action, as
 * `asyncScheduler` arms and clears (the cost is in docs/performance.md), pending deadlines
 * share one timer, armed for the earliest due time and re-armed only when a
 * new deadline comes due sooner; cancelling is a set delete. While no deadline is pending the
 * timer does not hold the process open, as a cleared `asyncScheduler` timer would not.
 * Guarded by spec/transport/deadlineScheduler.spec.ts.
 */
import { platform } from '../platform/index.js';
import { asyncScheduler, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * Inside `TestScheduler.run`, RxJS swaps `asyncScheduler`'s clock and timers for virtual
 * ones, and its clock then reads frames (small numbers) instead of epoch milliseconds.
 * Deadlines follow `asyncScheduler` there, so marble tests keep controlling them without
 * passing a scheduler. The same single clock read also dates the deadline.
 */
const EPOCH_2001_MS = 1e12;

interface PendingDeadline {
  due: number;
  run(): void;
}

class DeadlineAction<T> extends Subscription implements SchedulerAction<T>, PendingDeadline {
  due = 0;

  constructor(
    private readonly scheduler: DeadlineScheduler,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
    private state: T | undefined,
  ) {
    super(() => scheduler.cancel(this));
  }

  schedule(state?: T, delay = 0): Subscription {
    if (!this.closed) {
      this.state = state;
      this.scheduler.enqueue(this, delay, this.scheduler.now());
    }
    return this;
  }

  run(): void {
    this.work.call(this, this.state);
  }
}

class DeadlineScheduler implements SchedulerLike {
  private readonly pending = new Set<PendingDeadline>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerDue = Number.POSITIVE_INFINITY;

  now(): number {
    return Date.now();
  }

  schedule<T>(
    work: (this: SchedulerAction<T>, state?: T) => void,
    delay = 0,
    state?: T,
  ): Subscription {
    const now = asyncScheduler.now();
    if (now < EPOCH_2001_MS) return asyncScheduler.schedule(work, delay, state);
    const action = new DeadlineAction(this, work, state);
    this.enqueue(action, delay, now);
    return action;
  }

  /** @internal */
  enqueue(action: PendingDeadline, delay: number, now: number): void {
    const due = now + Math.max(0, delay);
    action.due = due;
    this.pending.add(action);
    if (due < this.timerDue) this.arm(due, now);
    else if (this.pending.size === 1) platform.refTimer(this.timer); // armed for a cancelled deadline
  }

  /** @internal */
  cancel(action: PendingDeadline): void {
    if (this.pending.delete(action) && this.pending.size === 0) platform.unrefTimer(this.timer);
  }

  private arm(due: number, now: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.fire(), Math.max(0, due - now));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    const now = this.now();
    const due: PendingDeadline[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const action of this.pending) {
      if (action.due <= now) due.push(action);
      else if (action.due < next) next = action.due;
    }
    for (const action of due) this.pending.delete(action);
    if (next !== Number.POSITIVE_INFINITY) this.arm(next, now);
    due.sort((a, b) => a.due - b.due);
    for (const action of due) action.run();
  }
}

/** Shared by every connection of the process. */
export const deadlineScheduler: SchedulerLike = new DeadlineScheduler();
