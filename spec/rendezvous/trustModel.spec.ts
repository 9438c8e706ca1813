/**
 * The rendezvous trust model and its limits over real HTTP/WebSockets on 127.0.0.1: key
 * binding, owner deletion, expiry, distinct and per-environment tokens, the environment-id
 * charset, browser origins, and each limit pushed past.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Observable } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { resumeFrame, resetFrame } from '../../src/relay/index.js';
import {
  EnvironmentRegistryClient,
  NOISE_RELAY_SECURITY_PROFILE,
} from '../../src/registry/index.js';
import {
  escapeForLog,
  startRendezvous,
  tokenMatches,
  type Rendezvous,
  type RendezvousOptions,
} from '../../src/rendezvous/index.js';
import { failureOf, within } from '../support/rendezvousHarness.js';
import { openRelaySocket, type RawRelaySocket } from '../support/rendezvousSockets.js';

const EXECUTOR = 'trust-executor-token';
const HARNESS = 'trust-harness-token';
const failure = (source: Observable<unknown>): Promise<unknown> => failureOf(source, 5_000);
const key = (): ReturnType<NoiseChannelIdentity['toJSON']> =>
  NoiseChannelIdentity.generate().toJSON();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: Partial<RendezvousOptions> = {}) {
  const rendezvous: Rendezvous = await startRendezvous({
    executorToken: EXECUTOR,
    harnessToken: HARNESS,
    ...options,
  });
  cleanups.push(() => rendezvous.close());
  const client = (token: string) =>
    new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: token });
  const open = async (url: string, headers?: Record<string, string>): Promise<RawRelaySocket> => {
    const socket = await openRelaySocket(url, headers ? { headers } : {});
    cleanups.push(() => socket.close());
    return socket;
  };
  return { rendezvous, executors: client(EXECUTOR), harnesses: client(HARNESS), client, open };
}

describe('rendezvous trust model', () => {
  it('binds an environment to its first executor key: another key is refused, the same key re-registers', async () => {
    const { rendezvous, executors } = await start();
    const owner = key();
    const first = await within(executors.register('env-bound', owner));
    const refused = await failure(executors.register('env-bound', key()));
    expect(refused).toMatchObject({ status: 409, code: 'environment_bound' });
    const again = await within(executors.register('env-bound', owner));
    expect(again.executorRegistrationId).not.toBe(first.executorRegistrationId);
    expect((await rendezvous.environment('env-bound'))?.executorPublicKey).toEqual(owner);
  });

  it('lets the owner delete its registration with the URL only it holds; then any key may register', async () => {
    const { rendezvous, executors } = await start();
    const registration = await within(executors.register('env-owned', key()));
    const remove = (url: string, token = EXECUTOR) =>
      fetch(`${rendezvous.url}/cloud/environment/env-owned`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ url }),
      });
    // A harness URL, a forged URL or the harness token do not delete it.
    const harnessLike = registration.websocketUrl.replace('role=environment', 'role=harness');
    expect((await remove(harnessLike)).status).toBe(404);
    expect((await remove(`${registration.websocketUrl}x`)).status).toBe(404);
    expect((await remove(registration.websocketUrl, HARNESS)).status).toBe(401);
    const deleted = await remove(registration.websocketUrl);
    expect(deleted.status).toBe(200);
    expect(await rendezvous.environment('env-owned')).toBeUndefined();
    await within(executors.register('env-owned', key()));
  });

  it('expires a registration no executor holds after its TTL, freeing the id', async () => {
    const { executors, open } = await start({ registrationTtlMs: 300, heartbeatIntervalMs: 50 });
    const held = await within(executors.register('env-held', key()));
    await open(held.websocketUrl);
    await within(executors.register('env-idle', key()));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // The idle one expired; the attached one is kept alive by its node's heartbeat.
    await within(executors.register('env-idle', key()));
    expect(await failure(executors.register('env-held', key()))).toMatchObject({ status: 409 });
  });

  it('refuses equal executor and harness tokens, and blank ones', async () => {
    await expect(startRendezvous({ executorToken: 'same', harnessToken: 'same' })).rejects.toThrow(
      /harness token equals an executor token/,
    );
    await expect(startRendezvous({ executorToken: ' ' })).rejects.toThrow(/must not be blank/);
    await expect(
      startRendezvous({
        executorToken: EXECUTOR,
        harnessToken: HARNESS,
        environmentTokens: new Map([['env-a', { executor: 'a-exec', harness: EXECUTOR }]]),
      }),
    ).rejects.toThrow(/harness token equals an executor token/);
  });

  it('opens an environment with its own token pair only', async () => {
    const { executors, harnesses, client, open } = await start({
      environmentTokens: new Map([['env-own', { executor: 'own-exec', harness: 'own-harness' }]]),
    });
    expect(await failure(executors.register('env-own', key()))).toMatchObject({ status: 401 });
    const registration = await within(client('own-exec').register('env-own', key()));
    await open(registration.websocketUrl);
    expect(await failure(harnesses.connect('env-own', key()))).toMatchObject({ status: 401 });
    await within(client('own-harness').connect('env-own', key()));
    // The environment's own tokens open nothing else.
    expect(await failure(client('own-exec').register('env-other', key()))).toMatchObject({
      status: 401,
    });
  });

  it('accepts the documented environment-id charset only', async () => {
    const { rendezvous } = await start();
    const register = (id: string) =>
      fetch(`${rendezvous.url}/cloud/environment/${encodeURIComponent(id)}/register`, {
        method: 'POST',
        headers: { authorization: `Bearer ${EXECUTOR}` },
        body: JSON.stringify({
          security_profile: NOISE_RELAY_SECURITY_PROFILE,
          executor_public_key: key(),
        }),
      });
    for (const bad of ['evil\nid', '\u001b[31mred', '../x', '.hidden', 'a'.repeat(129), 'é']) {
      const response = await register(bad);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'invalid_environment_id',
      );
    }
    expect((await register('Team_1.env:dev-2')).status).toBe(200);
  });

  it('compares tokens in constant time whatever their lengths, and escapes log text', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abc', 'abcd')).toBe(false);
    expect(tokenMatches('', 'x')).toBe(false);
    expect(escapeForLog('env\n\u001b[2Jfake line\u2028\\')).toBe(
      'env\\u000a\\u001b[2Jfake line\\u2028\\u005c',
    );
    expect(escapeForLog('x'.repeat(300))).toHaveLength(201);
  });

  it('refuses an expired harness URL with 401 (the client fetches a fresh bundle)', async () => {
    const { executors, harnesses, open } = await start({ authorizationTtlMs: 200 });
    const registration = await within(executors.register('env-exp', key()));
    await open(registration.websocketUrl);
    const bundle = await within(harnesses.connect('env-exp', key()));
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expect(openRelaySocket(bundle.websocketUrl)).rejects.toThrow('HTTP 401');
  });
});

describe('rendezvous limits', () => {
  it('refuses environments past the per-token maximum with 429', async () => {
    const { executors } = await start({ maxEnvironmentsPerToken: 2 });
    const first = key();
    await within(executors.register('env-1', first));
    await within(executors.register('env-2', key()));
    const error = await failure(executors.register('env-3', key()));
    expect(error).toMatchObject({ status: 429, code: 'too_many_environments' });
    // Re-registering one it holds is not a new environment.
    await within(executors.register('env-1', first));
  });

  it('refuses a harness socket past the per-environment maximum with 429', async () => {
    const { executors, harnesses, open } = await start({ maxHarnessSocketsPerEnvironment: 2 });
    const registration = await within(executors.register('env-h', key()));
    await open(registration.websocketUrl);
    const bundle = await within(harnesses.connect('env-h', key()));
    await open(bundle.websocketUrl);
    await open(bundle.websocketUrl);
    await expect(openRelaySocket(bundle.websocketUrl)).rejects.toThrow('HTTP 429');
  });

  it('refuses streams past the per-harness-socket maximum; another socket still gets its own', async () => {
    const { executors, harnesses, open } = await start({ maxStreamsPerHarnessSocket: 2 });
    const registration = await within(executors.register('env-s', key()));
    const executor = await open(registration.websocketUrl);
    const bundle = await within(harnesses.connect('env-s', key()));
    const hog = await open(bundle.websocketUrl);
    for (const id of ['h1', 'h2', 'h3']) hog.send(resumeFrame(id));
    expect(await hog.next()).toEqual(resetFrame('h3'));
    const other = await open(bundle.websocketUrl);
    other.send(resumeFrame('o1'));
    await executor.next();
    await executor.next();
    expect(await executor.next()).toEqual(resumeFrame('o1'));
  });

  it('refuses request bodies over 64 KiB with 413', async () => {
    const { rendezvous } = await start();
    const response = await fetch(`${rendezvous.url}/cloud/environment/env-1/connect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HARNESS}` },
      body: 'x'.repeat(64 * 1024 + 1),
    });
    expect(response.status).toBe(413);
  });
});

describe('rendezvous browser origins', () => {
  const ORIGIN = 'https://app.example.com';

  it('refuses every request and upgrade with an Origin when none is allowed', async () => {
    const { rendezvous, executors, harnesses, open } = await start();
    const registration = await within(executors.register('env-o', key()));
    await open(registration.websocketUrl);
    const bundle = await within(harnesses.connect('env-o', key()));
    const connect = await fetch(`${rendezvous.url}/cloud/environment/env-o/connect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HARNESS}`, origin: ORIGIN },
      body: JSON.stringify({ harness_public_key: key() }),
    });
    expect(connect.status).toBe(403);
    await expect(openRelaySocket(bundle.websocketUrl, { origin: ORIGIN })).rejects.toThrow(
      'HTTP 403',
    );
  });

  it('answers CORS on /connect and admits harness sockets for an allowed origin only', async () => {
    const { rendezvous, executors, open } = await start({ allowOrigins: [ORIGIN] });
    const registration = await within(executors.register('env-o', key()));
    const preflight = await fetch(`${rendezvous.url}/cloud/environment/env-o/connect`, {
      method: 'OPTIONS',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    await open(registration.websocketUrl);
    const connect = await fetch(`${rendezvous.url}/cloud/environment/env-o/connect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HARNESS}`, origin: ORIGIN },
      body: JSON.stringify({ harness_public_key: key() }),
    });
    expect(connect.status).toBe(200);
    expect(connect.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const { url } = (await connect.json()) as { url: string };
    await open(url, { origin: ORIGIN });
    await expect(openRelaySocket(url, { origin: 'https://evil.example' })).rejects.toThrow(
      'HTTP 403',
    );
    // Executor endpoints never answer a browser, even from an allowed origin.
    const register = await fetch(`${rendezvous.url}/cloud/environment/env-o/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${EXECUTOR}`, origin: ORIGIN },
      body: '{}',
    });
    expect(register.status).toBe(403);
    await expect(openRelaySocket(registration.websocketUrl, { origin: ORIGIN })).rejects.toThrow(
      'HTTP 403',
    );
  });
});
