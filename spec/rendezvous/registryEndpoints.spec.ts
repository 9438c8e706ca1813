/**
 * The registry endpoints over real HTTP on 127.0.0.1, exercised with our registry client (so
 * statuses and error bodies are the ones it classifies) and with raw fetch for bad input.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type Observable, filter, firstValueFrom, timeout } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import {
  EnvironmentRegistryAuthError,
  EnvironmentRegistryClient,
  EnvironmentRegistryHttpError,
  isRetryableRegistryError,
} from '../../src/registry/index.js';
import {
  startRendezvous,
  type Rendezvous,
  type RendezvousEvent,
} from '../../src/rendezvous/index.js';
import { openRelaySocket, type RawRelaySocket } from '../support/rendezvousSockets.js';

const EXECUTOR_TOKEN = 'executor-token';
const HARNESS_TOKEN = 'harness-token';
const within = <T>(source: Observable<T>): Promise<T> =>
  firstValueFrom(source.pipe(timeout(5_000)));
const failure = <T>(source: Observable<T>): Promise<unknown> =>
  within(source).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );

/** Same length and alphabet, different signature. */
const flipLastCharacter = (text: string): string =>
  `${text.slice(0, -1)}${text.endsWith('A') ? 'B' : 'A'}`;

let rendezvous: Rendezvous;
let executorRegistry: EnvironmentRegistryClient;
let harnessRegistry: EnvironmentRegistryClient;
let events: RendezvousEvent[];
const sockets: RawRelaySocket[] = [];
const executorKey = NoiseChannelIdentity.generate().toJSON();
const harnessKey = NoiseChannelIdentity.generate().toJSON();

beforeEach(async () => {
  rendezvous = await startRendezvous({
    executorToken: EXECUTOR_TOKEN,
    harnessToken: HARNESS_TOKEN,
  });
  events = [];
  rendezvous.events.subscribe((event) => events.push(event));
  executorRegistry = new EnvironmentRegistryClient({
    baseUrl: rendezvous.url,
    bearerToken: EXECUTOR_TOKEN,
  });
  harnessRegistry = new EnvironmentRegistryClient({
    baseUrl: rendezvous.url,
    bearerToken: HARNESS_TOKEN,
  });
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) await socket.close();
  await rendezvous.close();
});

async function registerAndAttach(environmentId = 'env-1') {
  const registration = await within(executorRegistry.register(environmentId, executorKey));
  sockets.push(await openRelaySocket(registration.websocketUrl));
  return registration;
}

describe('POST /cloud/environment/{id}/register', () => {
  it('issues a registration with a signed role=environment URL', async () => {
    const registration = await within(executorRegistry.register('env-1', executorKey));
    expect(registration.environmentId).toBe('env-1');
    expect(registration.executorRegistrationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(registration.websocketUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/environment\/env-1\?/);
    const url = new URL(registration.websocketUrl);
    expect(url.searchParams.get('role')).toBe('environment');
    expect(url.searchParams.get('sig')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await rendezvous.environment('env-1')).toMatchObject({
      registrationId: registration.executorRegistrationId,
      executorPublicKey: executorKey,
      attachedRegistrationId: undefined,
    });
  });

  it('refuses the harness token, a missing token and a wrong one with 401', async () => {
    const wrong = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: 'nope' });
    for (const client of [harnessRegistry, wrong]) {
      const error = await failure(client.register('env-1', executorKey));
      expect(error).toBeInstanceOf(EnvironmentRegistryAuthError);
      expect((error as EnvironmentRegistryAuthError).status).toBe(401);
    }
    const response = await fetch(`${rendezvous.url}/cloud/environment/env-1/register`, {
      method: 'POST',
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { code: 'unauthorized', message: 'missing or wrong bearer token' },
    });
  });

  it('answers 400 with a typed code for bodies that do not fit', async () => {
    const post = async (body: string) => {
      const response = await fetch(`${rendezvous.url}/cloud/environment/env-1/register`, {
        method: 'POST',
        headers: { authorization: `Bearer ${EXECUTOR_TOKEN}` },
        body,
      });
      return {
        status: response.status,
        body: (await response.json()) as { error: { code: string; message: string } },
      };
    };
    const profile = '"security_profile":"noise_hybrid_ik_v1"';
    const cases: [string, string, RegExp][] = [
      ['not json', 'invalid_request', /not JSON/],
      [`{${profile}}`, 'invalid_request', /executor_public_key/],
      [
        `{"security_profile":"other","executor_public_key":${JSON.stringify(executorKey)}}`,
        'invalid_request',
        /security_profile/,
      ],
      [
        `{${profile},"executor_public_key":${JSON.stringify(executorKey)},"extra":1}`,
        'invalid_request',
        /extra|unrecognized/i,
      ],
      [
        `{${profile},"executor_public_key":${JSON.stringify({ ...executorKey, suite: 'Noise_XX' })}}`,
        'invalid_public_key',
        /suite/,
      ],
      [
        `{${profile},"executor_public_key":${JSON.stringify({ ...executorKey, x25519_public_key: 'AAAA' })}}`,
        'invalid_public_key',
        /X25519/,
      ],
    ];
    for (const [body, code, message] of cases) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.error.message).toMatch(message);
    }
  });

  it('answers 404 for unknown paths, 405 for GET, 413 for oversized bodies', async () => {
    const auth = { authorization: `Bearer ${EXECUTOR_TOKEN}` };
    const notFound = await fetch(`${rendezvous.url}/cloud/environment/env-1/delete`, {
      method: 'POST',
      headers: auth,
    });
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as { error: { code: string } }).error.code).toBe('not_found');
    const get = await fetch(`${rendezvous.url}/cloud/environment/env-1/register`, {
      headers: auth,
    });
    expect(get.status).toBe(405);
    const big = await fetch(`${rendezvous.url}/cloud/environment/env-1/register`, {
      method: 'POST',
      headers: auth,
      body: 'x'.repeat(100_000),
    });
    expect(big.status).toBe(413);
  });

  it('supersedes the previous registration: its URL then answers 404', async () => {
    const first = await registerAndAttach();
    const firstSocket = sockets[0]!;
    const second = await within(executorRegistry.register('env-1', executorKey));
    expect(second.executorRegistrationId).not.toBe(first.executorRegistrationId);
    expect(await firstSocket.closed()).toBe(4000);
    await expect(openRelaySocket(first.websocketUrl)).rejects.toThrow('HTTP 404');
    sockets.push(await openRelaySocket(second.websocketUrl));
    expect((await rendezvous.environment('env-1'))?.attachedRegistrationId).toBe(
      second.executorRegistrationId,
    );
  });
});

describe('POST /cloud/environment/{id}/connect', () => {
  it('answers 404 environment_not_found for an unknown environment (not retryable)', async () => {
    const error = await failure(harnessRegistry.connect('nowhere', harnessKey));
    expect(error).toBeInstanceOf(EnvironmentRegistryHttpError);
    expect(error).toMatchObject({ status: 404, code: 'environment_not_found' });
    expect(isRetryableRegistryError(error)).toBe(false);
  });

  it('answers 409 environment_offline (retryable) until the executor socket is attached', async () => {
    await within(executorRegistry.register('env-1', executorKey));
    const error = await failure(harnessRegistry.connect('env-1', harnessKey));
    expect(error).toMatchObject({ status: 409, code: 'environment_offline' });
    expect(isRetryableRegistryError(error)).toBe(true);
  });

  it('hands out a complete bundle once the executor is attached; executor token is refused', async () => {
    const registration = await registerAndAttach();
    const bundle = await within(harnessRegistry.connect('env-1', harnessKey));
    expect(bundle).toMatchObject({
      environmentId: 'env-1',
      executorRegistrationId: registration.executorRegistrationId,
      executorPublicKey: executorKey,
    });
    expect(bundle.harnessKeyAuthorization).toMatch(/^v1\.\d+\.[A-Za-z0-9_-]{43}$/);
    expect(new URL(bundle.websocketUrl).searchParams.get('role')).toBe('harness');
    expect(await failure(executorRegistry.connect('env-1', harnessKey))).toBeInstanceOf(
      EnvironmentRegistryAuthError,
    );
  });

  it('goes back to 409 when the executor socket closes', async () => {
    await registerAndAttach();
    const detached = firstValueFrom(
      rendezvous.events.pipe(
        filter((event) => event.type === 'executor-detached'),
        timeout(5_000),
      ),
    );
    await sockets[0]!.close();
    expect(await detached).toMatchObject({ reason: 'closed', environmentId: 'env-1' });
    expect(await failure(harnessRegistry.connect('env-1', harnessKey))).toMatchObject({
      status: 409,
      code: 'environment_offline',
    });
  });
});

describe('POST /cloud/environment/{id}/validate', () => {
  const validate = (
    registrationId: string,
    authorization: string,
    key = harnessKey,
    client = executorRegistry,
  ) =>
    client.validate('env-1', {
      executorRegistrationId: registrationId,
      harnessPublicKey: key,
      harnessKeyAuthorization: authorization,
      streamId: 'stream-9',
    });

  it('admits the key the authorization was issued for, on the current registration', async () => {
    const registration = await registerAndAttach();
    const bundle = await within(harnessRegistry.connect('env-1', harnessKey));
    await within(validate(registration.executorRegistrationId, bundle.harnessKeyAuthorization));
    expect(events).toContainEqual({
      type: 'validated',
      environmentId: 'env-1',
      streamId: 'stream-9',
      valid: true,
    });
  });

  it('says valid:false for another key, a stale registration, a forged or expired authorization', async () => {
    const registration = await registerAndAttach();
    const { harnessKeyAuthorization: authorization } = await within(
      harnessRegistry.connect('env-1', harnessKey),
    );
    const expired = await rendezvous.issueAuthorization('env-1', harnessKey, Date.now() - 1);
    const id = registration.executorRegistrationId;
    const refusals: [Observable<void>, string][] = [
      [validate(id, authorization, NoiseChannelIdentity.generate().toJSON()), 'bad_signature'],
      [validate('old-registration', authorization), 'stale_registration'],
      [validate(id, flipLastCharacter(authorization)), 'bad_signature'],
      [validate(id, 'opaque'), 'malformed'],
      [validate(id, expired), 'expired'],
    ];
    for (const [call, rejection] of refusals) {
      const error = await failure(call);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as Error).message).toContain('rejected Noise relay harness key');
      expect(events.at(-1)).toMatchObject({ type: 'validated', valid: false, rejection });
    }
  });

  it('answers 401 to the harness token and 404 for an unknown environment', async () => {
    await registerAndAttach();
    expect(await failure(validate('x', 'y', harnessKey, harnessRegistry))).toBeInstanceOf(
      EnvironmentRegistryAuthError,
    );
    const error = await failure(
      executorRegistry.validate('nowhere', {
        executorRegistrationId: 'x',
        harnessPublicKey: harnessKey,
        harnessKeyAuthorization: 'y',
        streamId: 's',
      }),
    );
    expect(error).toMatchObject({ status: 404 });
  });
});
