/**
 * What rendezvous nodes share: environment registrations (executor key, registration id,
 * owning token, attached node, expiry), the live nodes, and the signing secret. One
 * interface, two implementations held to the same suite (spec/rendezvous/rendezvousStore.spec.ts):
 * `memoryRendezvousStore` (one process, the default) and `redisRendezvousStore` (a cluster).
 *
 * Contracts every implementation keeps:
 * - A registration binds its environment id to its executor key and token until it expires;
 *   `register` with another key or token answers `bound` (no takeover).
 * - A registration expires `ttlMs` after it was last registered, attached or refreshed; the
 *   node holding its executor socket refreshes it on every heartbeat.
 * - A token holds at most `maxEnvironmentsPerToken` live registrations.
 * - `attach` succeeds only for the current registration id, and only when no other live node
 *   holds it (compare-and-set: two nodes never both hold one executor).
 */
import { createHash } from 'node:crypto';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';

export interface StoredRegistration {
  readonly environmentId: string;
  readonly executorPublicKey: NoiseChannelPublicKeyJson;
  /** `harnessKeyFingerprint` of the executor key: what the binding compares. */
  readonly keyFingerprint: string;
  readonly registrationId: string;
  /** `tokenId` of the executor token that registered it. */
  readonly tokenId: string;
  /** Id of the node whose relay holds the executor socket, while one does. */
  readonly attachedNode?: string;
  readonly expiresAtMs: number;
}

export interface RendezvousNodeInfo {
  readonly id: string;
  /** Base URL (`http://host:port`) harnesses reach this node at. */
  readonly url: string;
  readonly draining: boolean;
}

export interface RegisterInput {
  readonly environmentId: string;
  readonly executorPublicKey: NoiseChannelPublicKeyJson;
  readonly keyFingerprint: string;
  readonly registrationId: string;
  readonly tokenId: string;
  readonly nowMs: number;
  readonly ttlMs: number;
  readonly maxEnvironmentsPerToken: number;
}

export type RegisterOutcome = 'ok' | 'bound' | 'token_limit';

export interface RendezvousStore {
  register(input: RegisterInput): Promise<RegisterOutcome>;
  get(environmentId: string, nowMs: number): Promise<StoredRegistration | undefined>;
  /** Marks `nodeId` as holding the registration (see the compare-and-set contract). */
  attach(
    environmentId: string,
    registrationId: string,
    nodeId: string,
    nowMs: number,
    ttlMs: number,
  ): Promise<boolean>;
  /** Clears the holder if it is `nodeId`; the registration then expires in `ttlMs`. */
  detach(
    environmentId: string,
    registrationId: string,
    nodeId: string,
    nowMs: number,
    ttlMs: number,
  ): Promise<void>;
  /**
   * Extends the registrations `nodeId` holds; answers the environment ids whose registration
   * is gone, replaced or held elsewhere (the node must let go of their sockets).
   */
  refresh(
    held: ReadonlyMap<string, string>,
    nodeId: string,
    nowMs: number,
    ttlMs: number,
  ): Promise<string[]>;
  /**
   * Removes the registration if it is still `registrationId`, and remembers for `tombstoneMs`
   * that it was deleted, so `restore` cannot bring it back.
   */
  delete(environmentId: string, registrationId: string, tombstoneMs: number): Promise<boolean>;
  /**
   * Puts back a registration the store lost (a Redis restart) as held by `nodeId`: only when
   * the id has no registration and `registration` was not deleted. The node holding the
   * executor socket calls it, so neither the executor nor its clients notice the restart.
   */
  restore(
    registration: StoredRegistration,
    nodeId: string,
    nowMs: number,
    ttlMs: number,
  ): Promise<boolean>;
  heartbeat(node: RendezvousNodeInfo, nowMs: number, ttlMs: number): Promise<void>;
  node(nodeId: string, nowMs: number): Promise<RendezvousNodeInfo | undefined>;
  nodes(nowMs: number): Promise<RendezvousNodeInfo[]>;
  leave(nodeId: string): Promise<void>;
  /** The cluster's signing secret: the stored one, else `candidate` becomes it. */
  secret(candidate: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Stores and logs name a token by this, never by the token itself. */
export function tokenId(token: string): string {
  return createHash('sha256').update(token).digest('base64url').slice(0, 22);
}

interface Expiring<T> {
  value: T;
  expiresAtMs: number;
}

/** One process's store: plain maps, expired entries dropped when met. */
export function memoryRendezvousStore(): RendezvousStore {
  const registrations = new Map<string, StoredRegistration>();
  /** `environmentId registrationId` of deleted registrations, until their expiry. */
  const tombstones = new Map<string, number>();
  const nodes = new Map<string, Expiring<RendezvousNodeInfo>>();
  let sharedSecret: Uint8Array | undefined;

  const live = (environmentId: string, nowMs: number): StoredRegistration | undefined => {
    const record = registrations.get(environmentId);
    if (record && record.expiresAtMs <= nowMs) {
      registrations.delete(environmentId);
      return undefined;
    }
    return record;
  };
  const liveNode = (nodeId: string, nowMs: number): RendezvousNodeInfo | undefined => {
    const entry = nodes.get(nodeId);
    if (entry && entry.expiresAtMs <= nowMs) nodes.delete(nodeId);
    return entry && entry.expiresAtMs > nowMs ? entry.value : undefined;
  };
  const countFor = (token: string, nowMs: number): number => {
    let count = 0;
    for (const id of [...registrations.keys()]) {
      if (live(id, nowMs)?.tokenId === token) count++;
    }
    return count;
  };

  return {
    async register(input) {
      const current = live(input.environmentId, input.nowMs);
      if (
        current &&
        (current.keyFingerprint !== input.keyFingerprint || current.tokenId !== input.tokenId)
      ) {
        return 'bound';
      }
      if (!current && countFor(input.tokenId, input.nowMs) >= input.maxEnvironmentsPerToken) {
        return 'token_limit';
      }
      registrations.set(input.environmentId, {
        environmentId: input.environmentId,
        executorPublicKey: input.executorPublicKey,
        keyFingerprint: input.keyFingerprint,
        registrationId: input.registrationId,
        tokenId: input.tokenId,
        expiresAtMs: input.nowMs + input.ttlMs,
      });
      return 'ok';
    },
    async get(environmentId, nowMs) {
      return live(environmentId, nowMs);
    },
    async attach(environmentId, registrationId, nodeId, nowMs, ttlMs) {
      const record = live(environmentId, nowMs);
      if (record?.registrationId !== registrationId) return false;
      const holder = record.attachedNode;
      if (holder !== undefined && holder !== nodeId && liveNode(holder, nowMs)) return false;
      registrations.set(environmentId, {
        ...record,
        attachedNode: nodeId,
        expiresAtMs: nowMs + ttlMs,
      });
      return true;
    },
    async detach(environmentId, registrationId, nodeId, nowMs, ttlMs) {
      const record = live(environmentId, nowMs);
      if (record?.registrationId !== registrationId || record.attachedNode !== nodeId) return;
      const { attachedNode: _dropped, ...rest } = record;
      registrations.set(environmentId, { ...rest, expiresAtMs: nowMs + ttlMs });
    },
    async refresh(held, nodeId, nowMs, ttlMs) {
      const lost: string[] = [];
      for (const [environmentId, registrationId] of held) {
        const record = live(environmentId, nowMs);
        if (record?.registrationId !== registrationId || record.attachedNode !== nodeId) {
          lost.push(environmentId);
        } else {
          registrations.set(environmentId, { ...record, expiresAtMs: nowMs + ttlMs });
        }
      }
      return lost;
    },
    async delete(environmentId, registrationId, tombstoneMs) {
      if (registrations.get(environmentId)?.registrationId !== registrationId) return false;
      for (const [name, until] of tombstones) if (until <= Date.now()) tombstones.delete(name);
      tombstones.set(`${environmentId} ${registrationId}`, Date.now() + tombstoneMs);
      return registrations.delete(environmentId);
    },
    async restore(registration, nodeId, nowMs, ttlMs) {
      const tombstone = `${registration.environmentId} ${registration.registrationId}`;
      if ((tombstones.get(tombstone) ?? 0) > Date.now()) return false;
      tombstones.delete(tombstone);
      if (live(registration.environmentId, nowMs)) return false;
      registrations.set(registration.environmentId, {
        ...registration,
        attachedNode: nodeId,
        expiresAtMs: nowMs + ttlMs,
      });
      return true;
    },
    async heartbeat(node, nowMs, ttlMs) {
      nodes.set(node.id, { value: node, expiresAtMs: nowMs + ttlMs });
    },
    async node(nodeId, nowMs) {
      return liveNode(nodeId, nowMs);
    },
    async nodes(nowMs) {
      return [...nodes.keys()].flatMap((id) => liveNode(id, nowMs) ?? []);
    },
    async leave(nodeId) {
      nodes.delete(nodeId);
    },
    async secret(candidate) {
      sharedSecret ??= candidate;
      return sharedSecret;
    },
    async close() {
      registrations.clear();
      nodes.clear();
    },
  };
}
