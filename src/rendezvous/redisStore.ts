/**
 * The rendezvous store in Redis (`execrx rendezvous --store redis://HOST:PORT`), keeping the
 * contracts of `RendezvousStore` with one Lua script per compare-and-set, so no two nodes
 * interleave inside one. Keys (all under `prefix`, default `execrx:rdv:`):
 * - `env:<id>`: hash `reg` `fp` `token` `key` (executor key JSON) `node` `exp`, expiring with
 *   the registration (PEXPIRE);
 * - `token:<tokenId>`: sorted set of that token's environment ids, scored by expiry;
 * - `node:<id>`: a node's JSON, expiring with its heartbeat; `nodes`: the node ids by expiry;
 * - `deleted:<id>:<registration>`: a deleted registration, for a while (`restore` skips it);
 * - `secret`: the signing secret (base64url), set once by the first node (SET NX).
 * Environment ids are limited to `ENVIRONMENT_ID_PATTERN`, so they cannot break a key apart.
 */
import { Redis } from 'ioredis';
import type { NoiseChannelPublicKeyJson } from '../noise/index.js';
import type { RendezvousNodeInfo, RendezvousStore, StoredRegistration } from './rendezvousStore.js';

const REGISTER = `
local fp = redis.call('HGET', KEYS[1], 'fp')
if fp then
  if fp ~= ARGV[3] or redis.call('HGET', KEYS[1], 'token') ~= ARGV[4] then return 'bound' end
else
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[6])
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[8]) then return 'token_limit' end
end
local exp = tonumber(ARGV[6]) + tonumber(ARGV[7])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'reg', ARGV[2], 'fp', ARGV[3], 'token', ARGV[4], 'key', ARGV[5], 'exp', exp)
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], exp, ARGV[1])
return 'ok'`;

// KEYS[1] env; ARGV: env id, registration, node, prefix, now, ttl
const ATTACH = `
if redis.call('HGET', KEYS[1], 'reg') ~= ARGV[2] then return 0 end
local holder = redis.call('HGET', KEYS[1], 'node')
if holder and holder ~= ARGV[3] and redis.call('EXISTS', ARGV[4] .. 'node:' .. holder) == 1 then return 0 end
local exp = tonumber(ARGV[5]) + tonumber(ARGV[6])
redis.call('HSET', KEYS[1], 'node', ARGV[3], 'exp', exp)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', ARGV[4] .. 'token:' .. redis.call('HGET', KEYS[1], 'token'), exp, ARGV[1])
return 1`;

// KEYS[1] env; ARGV: env id, registration, node, prefix, now, ttl
const DETACH = `
if redis.call('HGET', KEYS[1], 'reg') ~= ARGV[2] or redis.call('HGET', KEYS[1], 'node') ~= ARGV[3] then return 0 end
local exp = tonumber(ARGV[5]) + tonumber(ARGV[6])
redis.call('HDEL', KEYS[1], 'node')
redis.call('HSET', KEYS[1], 'exp', exp)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('ZADD', ARGV[4] .. 'token:' .. redis.call('HGET', KEYS[1], 'token'), exp, ARGV[1])
return 1`;

// ARGV: node, prefix, now, ttl, then (env id, registration) pairs; answers the lost env ids
const REFRESH = `
local lost = {}
local exp = tonumber(ARGV[3]) + tonumber(ARGV[4])
for i = 5, #ARGV, 2 do
  local key = ARGV[2] .. 'env:' .. ARGV[i]
  if redis.call('HGET', key, 'reg') ~= ARGV[i + 1] or redis.call('HGET', key, 'node') ~= ARGV[1] then
    table.insert(lost, ARGV[i])
  else
    redis.call('HSET', key, 'exp', exp)
    redis.call('PEXPIRE', key, ARGV[4])
    redis.call('ZADD', ARGV[2] .. 'token:' .. redis.call('HGET', key, 'token'), exp, ARGV[i])
  end
end
return lost`;

// KEYS[1] env, KEYS[2] tombstone; ARGV: env id, registration, prefix, tombstone ms
const DELETE = `
if redis.call('HGET', KEYS[1], 'reg') ~= ARGV[2] then return 0 end
redis.call('ZREM', ARGV[3] .. 'token:' .. redis.call('HGET', KEYS[1], 'token'), ARGV[1])
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return 1`;

// KEYS[1] env, KEYS[2] tombstone, KEYS[3] token set; ARGV: env id, reg, fp, token, key, node, now, ttl
const RESTORE = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local exp = tonumber(ARGV[7]) + tonumber(ARGV[8])
redis.call('HSET', KEYS[1], 'reg', ARGV[2], 'fp', ARGV[3], 'token', ARGV[4], 'key', ARGV[5], 'node', ARGV[6], 'exp', exp)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('ZADD', KEYS[3], exp, ARGV[1])
return 1`;

export interface RedisStoreOptions {
  /** `redis://HOST:PORT[/DB]`. */
  readonly url: string;
  /** Key prefix; default `execrx:rdv:`. */
  readonly prefix?: string;
}

/** Connects (failing with a clear error when Redis cannot be reached) and returns the store. */
export async function redisRendezvousStore(options: RedisStoreOptions): Promise<RendezvousStore> {
  const prefix = options.prefix ?? 'execrx:rdv:';
  const redis = new Redis(options.url, {
    lazyConnect: true,
    // A request fails soon while Redis is away (the caller answers 503) instead of queueing.
    maxRetriesPerRequest: 1,
    commandTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  });
  redis.on('error', () => undefined); // each failed command reports its own error
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(
      `cannot reach the rendezvous store at ${options.url}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const envKey = (id: string): string => `${prefix}env:${id}`;
  const nodeKey = (id: string): string => `${prefix}node:${id}`;

  return {
    async register(input) {
      const outcome = await redis.eval(
        REGISTER,
        2,
        envKey(input.environmentId),
        `${prefix}token:${input.tokenId}`,
        input.environmentId,
        input.registrationId,
        input.keyFingerprint,
        input.tokenId,
        JSON.stringify(input.executorPublicKey),
        input.nowMs,
        input.ttlMs,
        input.maxEnvironmentsPerToken,
      );
      return outcome as 'ok' | 'bound' | 'token_limit';
    },
    async get(environmentId) {
      const hash = await redis.hgetall(envKey(environmentId));
      if (!hash.reg || !hash.fp || !hash.token || !hash.key || !hash.exp) return undefined;
      const record: StoredRegistration = {
        environmentId,
        executorPublicKey: JSON.parse(hash.key) as NoiseChannelPublicKeyJson,
        keyFingerprint: hash.fp,
        registrationId: hash.reg,
        tokenId: hash.token,
        ...(hash.node ? { attachedNode: hash.node } : {}),
        expiresAtMs: Number(hash.exp),
      };
      return record;
    },
    async attach(environmentId, registrationId, nodeId, nowMs, ttlMs) {
      const args = [environmentId, registrationId, nodeId, prefix, nowMs, ttlMs];
      return (await redis.eval(ATTACH, 1, envKey(environmentId), ...args)) === 1;
    },
    async detach(environmentId, registrationId, nodeId, nowMs, ttlMs) {
      const args = [environmentId, registrationId, nodeId, prefix, nowMs, ttlMs];
      await redis.eval(DETACH, 1, envKey(environmentId), ...args);
    },
    async refresh(held, nodeId, nowMs, ttlMs) {
      if (held.size === 0) return [];
      const pairs = [...held].flat();
      return (await redis.eval(REFRESH, 0, nodeId, prefix, nowMs, ttlMs, ...pairs)) as string[];
    },
    async delete(environmentId, registrationId, tombstoneMs) {
      const keys = [envKey(environmentId), `${prefix}deleted:${environmentId}:${registrationId}`];
      const args = [environmentId, registrationId, prefix, tombstoneMs];
      return (await redis.eval(DELETE, 2, ...keys, ...args)) === 1;
    },
    async restore(registration, nodeId, nowMs, ttlMs) {
      const { environmentId, registrationId } = registration;
      const keys = [
        envKey(environmentId),
        `${prefix}deleted:${environmentId}:${registrationId}`,
        `${prefix}token:${registration.tokenId}`,
      ];
      const args = [
        environmentId,
        registrationId,
        registration.keyFingerprint,
        registration.tokenId,
        JSON.stringify(registration.executorPublicKey),
        nodeId,
        nowMs,
        ttlMs,
      ];
      return (await redis.eval(RESTORE, 3, ...keys, ...args)) === 1;
    },
    async heartbeat(node, nowMs, ttlMs) {
      await redis
        .multi()
        .set(nodeKey(node.id), JSON.stringify(node), 'PX', ttlMs)
        .zadd(`${prefix}nodes`, nowMs + ttlMs, node.id)
        .zremrangebyscore(`${prefix}nodes`, '-inf', nowMs)
        .exec();
    },
    async node(nodeId) {
      const text = await redis.get(nodeKey(nodeId));
      return text === null ? undefined : (JSON.parse(text) as RendezvousNodeInfo);
    },
    async nodes(nowMs) {
      const ids = await redis.zrangebyscore(`${prefix}nodes`, nowMs, '+inf');
      if (ids.length === 0) return [];
      const texts = await redis.mget(ids.map(nodeKey));
      return texts.flatMap((text) => (text ? [JSON.parse(text) as RendezvousNodeInfo] : []));
    },
    async leave(nodeId) {
      await redis.multi().del(nodeKey(nodeId)).zrem(`${prefix}nodes`, nodeId).exec();
    },
    async secret(candidate) {
      const key = `${prefix}secret`;
      await redis.set(key, Buffer.from(candidate).toString('base64url'), 'NX');
      const stored = await redis.get(key);
      if (stored === null) throw new Error('rendezvous store lost its secret while reading it');
      return new Uint8Array(Buffer.from(stored, 'base64url'));
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
