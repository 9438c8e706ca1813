/**
 * Per-process network policy requests as Observables (spec/protocol.md §9.5 step 5): each
 * process route owns a `PolicyPrompts`; while someone watches `ProcessHandle.networkPolicyRequests$`
 * every admitted `network/policyRequest` for that process is emitted there as a
 * `NetworkPolicyPrompt` the watcher answers. Without a watcher the session's default policy
 * decides (the `handleNetworkPolicyRequest` option, else deny `not_allowed`) — unless the
 * process was started with `networkPolicy: 'prompt'`: then requests wait (within their
 * deadline) for a watcher, and the first one receives those still pending.
 *
 * Timing rules (guarded by spec/client/networkPolicyPrompts.spec.ts, marble tests):
 * - every request, prompt or default policy, has a deadline (the process's
 *   `networkProxy.policyDecisionTimeoutMs`, else the client's `networkPolicyTimeoutMs`);
 *   at the deadline the answer is deny `not_allowed`;
 * - when the process ends (closed, failed, unregistered) a pending request is answered deny
 *   `not_allowed` at once;
 * - when the transport is lost or the session retired/failed, no answer is sent (the executor
 *   that asked is gone) and the prompt settles `cancelled`.
 * The first answer wins; later ones return false.
 */
import { Observable, Subject, type SchedulerLike, asyncScheduler, timer } from 'rxjs';
import type {
  NetworkPolicyDecision,
  NetworkPolicyRequestParams,
  NetworkPolicyRequestResult,
} from '../protocol/network.js';

/** How a prompt ended. */
export type NetworkPolicyOutcome =
  | { readonly type: 'answered'; readonly decision: NetworkPolicyDecision }
  | { readonly type: 'timedOut' }
  | { readonly type: 'cancelled'; readonly reason: string };

/** One pending `network/policyRequest` for a process, waiting for a decision. */
export interface NetworkPolicyPrompt {
  readonly processId: string;
  /** What the process wants to reach. */
  readonly request: NetworkPolicyRequestParams['request'];
  /** Time (the client's scheduler clock, ms) at which deny `not_allowed` is sent for you. */
  readonly deadline: number;
  /** Emits how the prompt ended, once, then completes (replays to late subscribers). */
  readonly outcome$: Observable<NetworkPolicyOutcome>;
  /** Sends `decision`; false when the prompt already ended (answered, timed out, cancelled). */
  answer(decision: NetworkPolicyDecision): boolean;
  allow(): boolean;
  deny(reason?: string): boolean;
  /** Asks the executor's user (`ask`), with the reason shown to them. */
  ask(reason: string): boolean;
}

/** The reason of every deny the client makes up itself. */
export const NOT_ALLOWED: NetworkPolicyDecision = { type: 'deny', reason: 'not_allowed' };

/** Deadline when neither the process nor the client names one. */
export const NETWORK_POLICY_TIMEOUT_MS = 30_000;

type Settle = (outcome: NetworkPolicyOutcome, send: boolean) => void;

class Prompt implements NetworkPolicyPrompt {
  private ended: NetworkPolicyOutcome | undefined;
  private readonly watchers: Array<(outcome: NetworkPolicyOutcome) => void> = [];

  constructor(
    readonly processId: string,
    readonly request: NetworkPolicyRequestParams['request'],
    readonly deadline: number,
    private readonly onSettle: Settle,
  ) {}

  readonly outcome$ = new Observable<NetworkPolicyOutcome>((subscriber) => {
    const deliver = (outcome: NetworkPolicyOutcome) => {
      subscriber.next(outcome);
      subscriber.complete();
    };
    if (this.ended !== undefined) deliver(this.ended);
    else this.watchers.push(deliver);
    return () => {
      const at = this.watchers.indexOf(deliver);
      if (at >= 0) this.watchers.splice(at, 1);
    };
  });

  settle(outcome: NetworkPolicyOutcome, send: boolean): boolean {
    if (this.ended !== undefined) return false;
    this.ended = outcome;
    this.onSettle(outcome, send);
    for (const watcher of this.watchers.splice(0)) watcher(outcome);
    return true;
  }

  answer(decision: NetworkPolicyDecision): boolean {
    return this.settle({ type: 'answered', decision }, true);
  }

  allow(): boolean {
    return this.answer({ type: 'allow' });
  }

  deny(reason = 'not_allowed'): boolean {
    return this.answer({ type: 'deny', reason });
  }

  ask(reason: string): boolean {
    return this.answer({ type: 'ask', reason });
  }
}

export interface PolicyPromptsOptions {
  readonly processId: string;
  readonly timeoutMs: number;
  readonly scheduler: SchedulerLike | undefined;
  /** Why a request was dropped without an answer (its transport or session ended). */
  readonly dropReason: () => string;
  /** Requests wait for a watcher instead of going to the default policy. */
  readonly hold: boolean;
}

/** The pending policy requests of one process. */
export class PolicyPrompts {
  private readonly prompts = new Subject<NetworkPolicyPrompt>();
  private watchers = 0;
  private readonly open = new Set<Prompt>();
  /** Held prompts no watcher has seen yet (`hold` only). */
  private unseen: Prompt[] = [];
  private endedWith: string | undefined;

  constructor(private readonly options: PolicyPromptsOptions) {}

  /** Hot: prompts admitted while subscribed. Completes when the process ends. */
  readonly requests$ = new Observable<NetworkPolicyPrompt>((subscriber) => {
    if (this.endedWith !== undefined) {
      subscriber.complete();
      return undefined;
    }
    this.watchers++;
    const inner = this.prompts.subscribe(subscriber);
    for (const prompt of this.unseen.splice(0)) {
      if (this.open.has(prompt)) subscriber.next(prompt);
    }
    return () => {
      this.watchers--;
      inner.unsubscribe();
    };
  });

  /**
   * The answer to one validated request: a prompt when watched, else `fallback` (the default
   * policy), both bounded by the deadline. Emits one result, or nothing when the request was
   * dropped (transport lost, session ended); unsubscribing cancels it.
   */
  decide(
    request: NetworkPolicyRequestParams,
    fallback: () => Observable<NetworkPolicyDecision>,
  ): Observable<NetworkPolicyRequestResult> {
    return new Observable<NetworkPolicyRequestResult>((subscriber) => {
      if (this.endedWith !== undefined) {
        subscriber.next({ decision: NOT_ALLOWED });
        subscriber.complete();
        return undefined;
      }
      const scheduler = this.options.scheduler ?? asyncScheduler;
      const prompt = new Prompt(
        this.options.processId,
        request.request,
        scheduler.now() + this.options.timeoutMs,
        (outcome, send) => {
          this.open.delete(prompt);
          const unseenAt = this.unseen.indexOf(prompt);
          if (unseenAt >= 0) this.unseen.splice(unseenAt, 1);
          deadline.unsubscribe();
          defaultAnswer?.unsubscribe();
          if (!send) {
            subscriber.complete();
            return;
          }
          const decision = outcome.type === 'answered' ? outcome.decision : NOT_ALLOWED;
          subscriber.next({ decision });
          subscriber.complete();
        },
      );
      this.open.add(prompt);
      const deadline = timer(this.options.timeoutMs, scheduler).subscribe(() =>
        prompt.settle({ type: 'timedOut' }, true),
      );
      let defaultAnswer: { unsubscribe(): void } | undefined;
      if (this.watchers > 0) {
        this.prompts.next(prompt);
      } else if (this.options.hold) {
        this.unseen.push(prompt);
      } else {
        defaultAnswer = fallback().subscribe({
          next: (decision) => prompt.answer(decision),
          error: () => prompt.answer(NOT_ALLOWED),
          complete: () => prompt.answer(NOT_ALLOWED),
        });
      }
      return () => {
        prompt.settle({ type: 'cancelled', reason: this.options.dropReason() }, false);
      };
    });
  }

  /**
   * The process ended (`reason`): pending requests are denied, or (with `answer` false, when
   * the session itself ended) dropped; watchers complete.
   */
  end(reason: string, answer: boolean): void {
    if (this.endedWith !== undefined) return;
    this.endedWith = reason;
    this.unseen = [];
    for (const prompt of [...this.open]) prompt.settle({ type: 'cancelled', reason }, answer);
    this.prompts.complete();
  }
}
