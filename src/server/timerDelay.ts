/**
 * Node's timers hold delays up to 2^31-1 ms (~24.8 days); a longer one fires after 1 ms, with a
 * `TimeoutOverflowWarning` on stderr each time. Peers send delays up to 2^53 (`process/read`
 * `waitMs`, `http/request` `timeoutMs`), so every timer a peer sets goes through `timerDelay`
 * (guarded by timerOverflow.spec.ts).
 */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** `ms`, or the longest delay a Node timer holds. A caller that must wait longer waits again. */
export function timerDelay(ms: number): number {
  return Math.min(ms, MAX_TIMER_DELAY_MS);
}
