/**
 * The default scheduler of the connect and `initialize` deadlines.
 *
 * A deadline is nearly always cancelled long before it is due: the socket opens in
 * milliseconds, the budget is seconds. `asyncScheduler` arms a native interval timer for each
 * action and clears it again, about a tenth of the client's CPU time in a cold connect. Here
 * pending deadlines share one timer, armed for the earliest due time and re-armed only when a
 * new deadline comes due sooner; cancelling is a set delete. While no deadline is pending the
 * timer does not hold the process open, as a cleared `asyncScheduler` timer would not.
 */
import { asyncScheduler, Subscription, type SchedulerAction, type SchedulerLike } from 'rxjs';

/**
 * True inside `TestScheduler.run`, which swaps `asyncScheduler`'s clock and timers for virtual
 * ones (its clock then reads frames, not the epoch). Deadlines follow `asyncScheduler` there,
 * so marble tests keep controlling them without passing a scheduler.
 */
function inVirtualTime(): boolean {
  return Math.abs(asyncScheduler.now() - Date.now()) > 60_000;
}

interface PendingDeadline {
  due: number;
  run(): void;
}

class DeadlineAction<T> extends Subscription implements SchedulerAction<T>, PendingDeadline {
  due = 0;
  private state: T | undefined;

  constructor(
    private readonly scheduler: DeadlineScheduler,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => scheduler.cancel(this));
  }

  schedule(state?: T, delay = 0): Subscription {
    if (!this.closed) {
      this.state = state;
      this.scheduler.enqueue(this, delay);
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
    if (inVirtualTime()) return asyncScheduler.schedule(work, delay, state);
    return new DeadlineAction(this, work).schedule(state, delay);
  }

  /** @internal */
  enqueue(action: PendingDeadline, delay: number): void {
    const due = this.now() + Math.max(0, delay);
    action.due = due;
    this.pending.add(action);
    if (due < this.timerDue) this.arm(due);
    else if (this.pending.size === 1) this.timer?.ref(); // armed for a cancelled deadline
  }

  /** @internal */
  cancel(action: PendingDeadline): void {
    if (this.pending.delete(action) && this.pending.size === 0) this.timer?.unref();
  }

  private arm(due: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => this.fire(), Math.max(0, due - this.now()));
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
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
    due.sort((a, b) => a.due - b.due);
    for (const action of due) action.run();
  }
}

/** Shared by every connection of the process. */
export const deadlineScheduler: SchedulerLike = new DeadlineScheduler();
