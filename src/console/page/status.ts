import { map, type Observable } from 'rxjs';
import type { LazyRemoteExecServerClient } from '../../browser.js';

/** What the status region shows. */
export interface StatusView {
  readonly connected: boolean;
  /** Starts with `Connected` or `Disconnected`, then detail. */
  readonly text: string;
}

/**
 * The one place the page reads the connection's state from. It renders `connectionState$`
 * ('Connected' | 'Disconnected'); when the client publishes a richer `status$` (connecting,
 * recovering with attempt and next try, refreshing, retired, closed, last error), only this
 * function changes.
 */
export function statusView(environment: LazyRemoteExecServerClient): Observable<StatusView> {
  let everConnected = false;
  return environment.connectionState$.pipe(
    map((state): StatusView => {
      if (state === 'Connected') {
        everConnected = true;
        return { connected: true, text: 'Connected' };
      }
      return {
        connected: false,
        text: everConnected ? 'Disconnected (recovering…)' : 'Disconnected (connecting…)',
      };
    }),
  );
}
