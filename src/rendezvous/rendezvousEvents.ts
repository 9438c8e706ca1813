/**
 * What the rendezvous reports about itself: an event stream (for logs and tests) and
 * counters (for a status page). Events carry routing metadata only, never payload bytes.
 */
import type { RelayFrameKind } from '../relay/index.js';
import type { ExecutorDetachReason } from './environmentRelay.js';
import type { HarnessAuthorizationRejection } from './harnessAuthorization.js';
import type { RendezvousFrameError } from './rendezvousErrors.js';

/**
 * One registry or routing event of a rendezvous (`Rendezvous.events`): registrations, attachments,
 * streams, forwarded and dropped frames, validations.
 */
export type RendezvousEvent =
  | { readonly type: 'registered'; readonly environmentId: string; readonly registrationId: string }
  | {
      readonly type: 'executor-attached';
      readonly environmentId: string;
      readonly registrationId: string;
    }
  | {
      readonly type: 'executor-detached';
      readonly environmentId: string;
      readonly registrationId: string;
      /**
       * `closed` (socket ended), `replaced` (a newer executor socket), `superseded`
       * (re-registered, deleted or expired), `pong_timeout`, `draining` (the node is leaving),
       * `shutdown`.
       */
      readonly reason: ExecutorDetachReason;
    }
  | { readonly type: 'stream-claimed'; readonly environmentId: string; readonly streamId: string }
  | {
      readonly type: 'stream-reset';
      readonly environmentId: string;
      readonly streamId: string;
      /** Which side the rendezvous sent the reset to. */
      readonly to: 'environment' | 'harness';
      readonly why: 'harness_gone' | 'executor_gone' | 'refused';
    }
  | {
      /** A harness read too slowly: the relay stopped reading the executor socket. */
      readonly type: 'executor-paused';
      readonly environmentId: string;
      /** The stream whose frame found its harness congested. */
      readonly streamId: string;
    }
  | { readonly type: 'executor-resumed'; readonly environmentId: string }
  | {
      /**
       * A harness was ended: `stalled` (congested with no progress for the stall timeout) or
       * `overflow` (its buffer passed the hard cap). Its streams are reset at the executor.
       */
      readonly type: 'harness-dropped';
      readonly environmentId: string;
      readonly streamId?: string;
      readonly why: 'stalled' | 'overflow';
    }
  | {
      readonly type: 'frame-forwarded';
      readonly environmentId: string;
      readonly streamId: string;
      readonly kind: RelayFrameKind;
      readonly to: 'environment' | 'harness';
      readonly bytes: number;
    }
  | {
      readonly type: 'frame-dropped';
      readonly environmentId: string;
      readonly streamId?: string;
      readonly error: RendezvousFrameError;
    }
  | {
      readonly type: 'validated';
      readonly environmentId: string;
      /** The `x-codex-noise-stream-id` header, when the executor sent one. */
      readonly streamId?: string;
      readonly valid: boolean;
      readonly rejection?: HarnessAuthorizationRejection | 'stale_registration';
    }
  | {
      /** `/register` refused: the id is bound to another key, or the token holds its maximum. */
      readonly type: 'registration-refused';
      readonly environmentId: string;
      readonly why: 'bound' | 'token_limit';
    }
  | {
      /** The owner deleted its registration with `DELETE /cloud/environment/{id}`. */
      readonly type: 'deleted';
      readonly environmentId: string;
      readonly registrationId: string;
    }
  | {
      /** The store had lost a registration this node holds (restarted empty): put back. */
      readonly type: 'registration-restored';
      readonly environmentId: string;
      readonly registrationId: string;
    }
  | {
      /** A store call failed (Redis away): the request was answered 503, or a heartbeat missed. */
      readonly type: 'store-failed';
      readonly detail: string;
    }
  | {
      readonly type: 'upgrade-refused';
      readonly environmentId?: string;
      readonly status: number;
      readonly detail: string;
    };

/** Running totals of a rendezvous's events (`Rendezvous.counters()`). */
export interface RendezvousCounters {
  framesToEnvironment: number;
  framesToHarness: number;
  framesDropped: number;
  streamsReset: number;
  validations: number;
  validationsRejected: number;
  upgradesRefused: number;
}

export function emptyCounters(): RendezvousCounters {
  return {
    framesToEnvironment: 0,
    framesToHarness: 0,
    framesDropped: 0,
    streamsReset: 0,
    validations: 0,
    validationsRejected: 0,
    upgradesRefused: 0,
  };
}

/** Keeps the counters in step with the events. */
export function countEvent(counters: RendezvousCounters, event: RendezvousEvent): void {
  switch (event.type) {
    case 'frame-forwarded':
      if (event.to === 'environment') counters.framesToEnvironment++;
      else counters.framesToHarness++;
      return;
    case 'frame-dropped':
      counters.framesDropped++;
      return;
    case 'stream-reset':
      counters.streamsReset++;
      return;
    case 'validated':
      counters.validations++;
      if (!event.valid) counters.validationsRejected++;
      return;
    case 'upgrade-refused':
      counters.upgradesRefused++;
      return;
    default:
      return;
  }
}
