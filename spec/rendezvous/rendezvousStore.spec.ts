/**
 * One suite, both stores: the in-memory store and the Redis store (a real redis-server
 * started by the test) keep the `RendezvousStore` contracts the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import {
  harnessKeyFingerprint,
  memoryRendezvousStore,
  redisRendezvousStore,
  type RendezvousStore,
} from '../../src/rendezvous/index.js';
import { type TestRedis, startTestRedis } from '../support/rendezvousRedis.js';

let redis: TestRedis;
beforeAll(async () => {
  redis = await startTestRedis();
}, 20_000);
afterAll(async () => {
  await redis?.stop();
});

const TTL = 60_000;
const keyA = NoiseChannelIdentity.generate().toJSON();
const keyB = NoiseChannelIdentity.generate().toJSON();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const suites: [string, () => Promise<RendezvousStore>][] = [
  ['memory', async () => memoryRendezvousStore()],
  // A fresh key prefix per test keeps tests apart on one server.
  ['redis', () => redisRendezvousStore({ url: redis.url, prefix: `t:${randomUUID()}:` })],
];

describe.each(suites)('%s rendezvous store', (_name, makeStore) => {
  const withStore = async (test: (store: RendezvousStore) => Promise<void>): Promise<void> => {
    const store = await makeStore();
    try {
      await test(store);
    } finally {
      await store.close();
    }
  };
  const register = (
    store: RendezvousStore,
    environmentId: string,
    key = keyA,
    overrides: { token?: string; ttlMs?: number; max?: number; registrationId?: string } = {},
  ) =>
    store.register({
      environmentId,
      executorPublicKey: key,
      keyFingerprint: harnessKeyFingerprint(key),
      registrationId: overrides.registrationId ?? randomUUID(),
      tokenId: overrides.token ?? 'token-1',
      nowMs: Date.now(),
      ttlMs: overrides.ttlMs ?? TTL,
      maxEnvironmentsPerToken: overrides.max ?? 100,
    });

  it('binds an id to its key and token; the same key registers again', () =>
    withStore(async (store) => {
      expect(await register(store, 'env', keyA, { registrationId: 'r1' })).toBe('ok');
      expect(await register(store, 'env', keyB)).toBe('bound');
      expect(await register(store, 'env', keyA, { token: 'token-2' })).toBe('bound');
      expect(await register(store, 'env', keyA, { registrationId: 'r2' })).toBe('ok');
      const record = await store.get('env', Date.now());
      expect(record).toMatchObject({
        environmentId: 'env',
        executorPublicKey: keyA,
        registrationId: 'r2',
        tokenId: 'token-1',
      });
      expect(record?.attachedNode).toBeUndefined();
    }));

  it('counts live environments per token', () =>
    withStore(async (store) => {
      expect(await register(store, 'a', keyA, { max: 2 })).toBe('ok');
      expect(await register(store, 'b', keyA, { max: 2 })).toBe('ok');
      expect(await register(store, 'c', keyA, { max: 2 })).toBe('token_limit');
      expect(await register(store, 'c', keyA, { max: 2, token: 'token-2' })).toBe('ok');
      expect(await register(store, 'a', keyA, { max: 2 })).toBe('ok');
    }));

  it('expires registrations; an expired one frees its id and its token slot', () =>
    withStore(async (store) => {
      expect(await register(store, 'short', keyA, { ttlMs: 150, max: 1 })).toBe('ok');
      expect(await register(store, 'other', keyA, { max: 1 })).toBe('token_limit');
      await sleep(400);
      expect(await store.get('short', Date.now())).toBeUndefined();
      expect(await register(store, 'short', keyB, { max: 1 })).toBe('ok');
    }));

  it('attaches by compare-and-set: current registration only, one live node at a time', () =>
    withStore(async (store) => {
      await register(store, 'env', keyA, { registrationId: 'r1' });
      const now = Date.now();
      await store.heartbeat({ id: 'n1', url: 'http://n1', draining: false }, now, 5_000);
      await store.heartbeat({ id: 'n2', url: 'http://n2', draining: false }, now, 5_000);
      expect(await store.attach('env', 'stale', 'n1', now, TTL)).toBe(false);
      expect(await store.attach('env', 'r1', 'n1', now, TTL)).toBe(true);
      expect(await store.attach('env', 'r1', 'n2', now, TTL)).toBe(false);
      expect((await store.get('env', now))?.attachedNode).toBe('n1');
      // Once n1 is gone from the store, n2 may take the registration over.
      await store.leave('n1');
      expect(await store.attach('env', 'r1', 'n2', now, TTL)).toBe(true);
      // A detach by a node that does not hold it changes nothing.
      await store.detach('env', 'r1', 'n1', now, TTL);
      expect((await store.get('env', now))?.attachedNode).toBe('n2');
      await store.detach('env', 'r1', 'n2', now, TTL);
      expect((await store.get('env', now))?.attachedNode).toBeUndefined();
    }));

  it('refresh extends what a node holds and names what it lost', () =>
    withStore(async (store) => {
      const now = Date.now();
      await store.heartbeat({ id: 'n1', url: 'http://n1', draining: false }, now, 5_000);
      await register(store, 'kept', keyA, { registrationId: 'k1', ttlMs: 300 });
      await register(store, 'replaced', keyA, { registrationId: 'p1' });
      expect(await store.attach('kept', 'k1', 'n1', now, 300)).toBe(true);
      expect(await store.attach('replaced', 'p1', 'n1', now, TTL)).toBe(true);
      await register(store, 'replaced', keyA, { registrationId: 'p2' });
      const held = new Map([
        ['kept', 'k1'],
        ['replaced', 'p1'],
        ['missing', 'm1'],
      ]);
      expect((await store.refresh(held, 'n1', Date.now(), TTL)).sort()).toEqual([
        'missing',
        'replaced',
      ]);
      await sleep(400);
      // Refreshed with the long TTL: still there after the short one passed.
      expect(await store.get('kept', Date.now())).toMatchObject({ attachedNode: 'n1' });
    }));

  it('deletes only the named registration', () =>
    withStore(async (store) => {
      await register(store, 'env', keyA, { registrationId: 'r1', max: 1 });
      expect(await store.delete('env', 'other', 5_000)).toBe(false);
      expect(await store.delete('env', 'r1', 5_000)).toBe(true);
      expect(await store.get('env', Date.now())).toBeUndefined();
      expect(await register(store, 'env', keyB, { max: 1 })).toBe('ok');
    }));

  it('restores a lost registration for its holder, never a deleted or a present one', () =>
    withStore(async (store) => {
      const now = Date.now();
      await register(store, 'env', keyA, { registrationId: 'r1' });
      await store.attach('env', 'r1', 'n1', now, TTL);
      const held = (await store.get('env', now))!;
      // Present: nothing to restore.
      expect(await store.restore(held, 'n1', now, TTL)).toBe(false);
      // Deleted by its owner: stays deleted.
      await store.delete('env', 'r1', 5_000);
      expect(await store.restore(held, 'n1', now, TTL)).toBe(false);
      // Lost (as after a restart): put back, held by the node, counted for its token.
      const lost = { ...held, registrationId: 'r2' };
      expect(await store.restore(lost, 'n1', now, TTL)).toBe(true);
      expect(await store.get('env', now)).toMatchObject({
        registrationId: 'r2',
        attachedNode: 'n1',
        executorPublicKey: keyA,
        tokenId: 'token-1',
      });
      expect(await register(store, 'other', keyA, { max: 1 })).toBe('token_limit');
    }));

  it('lists live nodes; a node expires with its heartbeat', () =>
    withStore(async (store) => {
      const now = Date.now();
      await store.heartbeat({ id: 'a', url: 'http://a', draining: false }, now, 5_000);
      await store.heartbeat({ id: 'b', url: 'http://b', draining: true }, now, 150);
      expect((await store.nodes(now)).map((node) => node.id).sort()).toEqual(['a', 'b']);
      expect(await store.node('b', now)).toEqual({ id: 'b', url: 'http://b', draining: true });
      await sleep(400);
      expect((await store.nodes(Date.now())).map((node) => node.id)).toEqual(['a']);
      expect(await store.node('b', Date.now())).toBeUndefined();
    }));

  it('keeps the first secret offered', () =>
    withStore(async (store) => {
      const first = await store.secret(new Uint8Array(32).fill(1));
      const second = await store.secret(new Uint8Array(32).fill(2));
      expect(Buffer.from(first).equals(Buffer.alloc(32, 1))).toBe(true);
      expect(Buffer.from(second).equals(Buffer.alloc(32, 1))).toBe(true);
    }));
});

describe('redis rendezvous store failures', () => {
  it('fails with a clear error when Redis cannot be reached', async () => {
    await expect(redisRendezvousStore({ url: 'redis://127.0.0.1:1' })).rejects.toThrow(
      /cannot reach the rendezvous store at redis:\/\/127\.0\.0\.1:1/,
    );
  });
});
