/**
 * Readiness as the environment reports it (`LazyRemoteExecServerClient.readinessResult`, spec
 * §13.2): ready with a live session, unknown while connecting or recovering, else the error
 * that keeps the environment unavailable.
 */
import { type Observable, of, take, throwError } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import { DisconnectedError, DisconnectReason } from '../protocol/errors.js';
import type { AttemptOutcome } from './connectionAttempt.js';
import type { ManagedSession } from './managedSession.js';
import type { ExecServerTransportParams, ProvisioningReadiness } from './transportParams.js';

/** Outcome of the environment's readiness: ready, or the error that keeps it unavailable. */
export type ReadinessResult =
  { readonly ready: true } | { readonly ready: false; readonly error: Error };

/** Readiness from the installed session, else from the first attempt's outcome. */
export function readinessFrom(
  current: ManagedSession | undefined,
  startup: AttemptOutcome | undefined,
): ReadinessResult | undefined {
  if (current) return readinessOf(current.client);
  if (startup === undefined) return undefined;
  return 'session' in startup
    ? readinessOf(startup.session.client)
    : { ready: false, error: startup.error };
}

/**
 * The session client only if it is live right now (`getFailFast`). Errors: "exec-server
 * environment is not ready" before startup, "…is recovering", the session's failure, or the
 * startup ConnectionAttemptError.
 */
export function liveClientNow(
  current: ManagedSession | undefined,
  startup: AttemptOutcome | undefined,
): Observable<ExecServerClient> {
  let client = current?.client;
  if (client === undefined && startup !== undefined) {
    if ('error' in startup) return throwError(() => startup.error);
    client = startup.session.client;
  }
  if (client === undefined) {
    return throwError(() => new DisconnectedError(DisconnectReason.notReady));
  }
  const live = client;
  if (live.state === 'connected') return of(live);
  if (live.state === 'recovering') {
    return throwError(() => new DisconnectedError(DisconnectReason.recovering));
  }
  return throwError(
    () => live.failure ?? new DisconnectedError(DisconnectReason.transportDisconnected),
  );
}

/** The readiness a session's state says; undefined while it recovers. */
function readinessOf(client: ExecServerClient): ReadinessResult | undefined {
  switch (client.state) {
    case 'connected':
      return { ready: true };
    case 'recovering':
      return undefined;
    default:
      return {
        ready: false,
        error: client.failure ?? new DisconnectedError(DisconnectReason.transportDisconnected),
      };
  }
}

/** The provisioning readiness right now, when the params are deferred. */
export function peekReadiness(
  params: ExecServerTransportParams,
): ProvisioningReadiness | undefined {
  if (params.kind !== 'deferred') return undefined;
  let value: ProvisioningReadiness | undefined;
  params.readiness$.pipe(take(1)).subscribe((readiness) => (value = readiness));
  return value;
}
