import { map, type Observable } from 'rxjs';
import type { ConnectionStatus, LazyRemoteExecServerClient } from '../../browser.js';

/** What the status region shows. */
export interface StatusView {
  readonly connected: boolean;
  /** Starts with `Connected` or `Disconnected`, then detail (spec/browser/console.spec.ts). */
  readonly text: string;
}

/** The one place the page reads the connection's state: `status$`, rendered as text. */
export function statusView(environment: LazyRemoteExecServerClient): Observable<StatusView> {
  return environment.status$.pipe(map(render));
}

function render(status: ConnectionStatus): StatusView {
  if (status.kind === 'connected') return { connected: true, text: 'Connected' };
  const detail = describe(status);
  const error = status.lastError === undefined ? '' : ` — ${status.lastError.message}`;
  return { connected: false, text: `Disconnected (${detail})${error}` };
}

function describe(status: Exclude<ConnectionStatus, { kind: 'connected' }>): string {
  switch (status.kind) {
    case 'disconnected':
      return 'not connected';
    case 'connecting':
      return 'connecting…';
    case 'recovering': {
      const next =
        status.nextRetryInMs === undefined
          ? ''
          : `, next try in ${(status.nextRetryInMs / 1000).toFixed(1)} s`;
      return `recovering: attempt ${status.attempt}${next}`;
    }
    case 'refreshing':
      return 'refreshing…';
    case 'retired':
      return 'session retired by a refresh';
    case 'closed':
      return 'closed';
  }
}
