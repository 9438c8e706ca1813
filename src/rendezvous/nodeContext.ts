/**
 * What one rendezvous node's parts share: its id, the store, the signing secret, the tokens,
 * its relays (one per environment whose sockets it holds) and its limits. Built once by
 * `startRendezvous`; the registry endpoints and the upgrade handler read it.
 */
import type { SchedulerLike } from 'rxjs';
import type { EnvironmentRelay, EnvironmentRelayOptions } from './environmentRelay.js';
import type { RendezvousEvent } from './rendezvousEvents.js';
import type { RendezvousStore, StoredRegistration } from './rendezvousStore.js';
import type { RendezvousTokens } from './trust.js';

export interface RendezvousNodeContext {
  readonly nodeId: string;
  readonly store: RendezvousStore;
  readonly secret: Uint8Array;
  readonly tokens: RendezvousTokens;
  readonly scheduler: SchedulerLike;
  readonly emit: (event: RendezvousEvent) => void;
  /** Environments with a socket on this node. */
  readonly relays: Map<string, EnvironmentRelay>;
  /** The registrations whose executor sockets this node holds, as the store had them. */
  readonly holdings: Map<string, StoredRegistration>;
  readonly state: {
    /** Set by `drain()`: no new sockets are accepted. */
    draining: boolean;
    /** `ws://…` base of executor URLs (the front address). */
    publicWsBase: string;
    /** `http://…` base harnesses reach this node at. */
    advertisedUrl: string;
  };
  readonly limits: {
    readonly authorizationTtlMs: number;
    readonly environmentUrlTtlMs: number;
    readonly registrationTtlMs: number;
    readonly nodeTtlMs: number;
    /** How long a deleted registration cannot be restored. */
    readonly tombstoneMs: number;
    readonly maxHarnessSocketsPerEnvironment: number;
    readonly maxEnvironmentsPerToken: number;
  };
  readonly allowedOrigins: ReadonlySet<string>;
  readonly relayOptions: EnvironmentRelayOptions;
}
