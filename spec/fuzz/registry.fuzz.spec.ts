/**
 * Fuzzing the registry's HTTP bodies on both ends, over real loopback HTTP: the registry
 * client takes any status and body as a valid answer or a typed `ExecServerError`; the
 * rendezvous answers any request body with a 2xx or a 4xx carrying `{"error":{code,message}}`,
 * never a 500, and keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { ExecServerError } from '../../src/protocol/errors.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import { startRendezvous, type Rendezvous } from '../../src/rendezvous/index.js';
import { fuzzParameters, fuzzTimeoutMs } from './fuzzRuns.js';

jest.setTimeout(fuzzTimeoutMs());

const key = NoiseChannelIdentity.generate().publicKey().toJSON();
const otherKey = NoiseChannelIdentity.generate().publicKey().toJSON();

/** JSON near the registry's shapes: the right fields with values dropped, retyped or odd. */
const field = fc.oneof(
  fc.constantFrom(
    'env-1',
    '',
    ' ',
    'ws://127.0.0.1:1/relay',
    'http://x',
    'reg-1',
    'noise_hybrid_ik_v1',
  ),
  fc.string({ maxLength: 30 }),
  fc.jsonValue({ maxDepth: 2 }),
);
const keyField = fc.oneof(
  fc.constant(key as unknown),
  fc.record({ suite: field, dh_public_key: field, kem_public_key: field }, { requiredKeys: [] }),
  field,
);
const registryBody = fc
  .record(
    {
      environment_id: field,
      url: field,
      security_profile: field,
      executor_registration_id: field,
      executor_public_key: keyField,
      harness_public_key: keyField,
      harness_key_authorization: field,
      valid: fc.oneof(fc.boolean(), field),
      error: fc.oneof(fc.record({ code: field, message: field }), field),
    },
    { requiredKeys: [] },
  )
  .map((body) => JSON.stringify(body));
const anyBody = fc.oneof(
  registryBody,
  fc.json({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  registryBody.map((text) => text.slice(0, Math.floor(text.length / 2))),
);

describe('fuzz: registry client bodies', () => {
  let server: Server;
  let answer = { status: 200, body: '' };
  let baseUrl = '';

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers any status and body with a value or a typed error', async () => {
    const client = new EnvironmentRegistryClient({
      baseUrl,
      bearerToken: 'token',
      requestTimeoutMs: 10_000,
    });
    const calls = {
      register: () => firstValueFrom(client.register('env-1', key)),
      connect: () => firstValueFrom(client.connect('env-1', key)),
      validate: () =>
        lastValueFrom(
          client.validate('env-1', {
            executorRegistrationId: 'reg-1',
            harnessPublicKey: key,
            harnessKeyAuthorization: 'auth',
            streamId: 'stream-1',
          }),
          { defaultValue: undefined },
        ),
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(200, 201, 204, 302, 400, 401, 403, 404, 409, 413, 429, 500, 503),
        anyBody,
        fc.constantFrom('register' as const, 'connect' as const, 'validate' as const),
        async (status, body, operation) => {
          answer = { status, body: status === 204 ? '' : body };
          try {
            await calls[operation]();
            expect(status).toBeGreaterThanOrEqual(200);
            expect(status).toBeLessThan(300);
          } catch (error) {
            expect(error).toBeInstanceOf(ExecServerError);
            expect((error as Error).message).toMatch(/\S/);
          }
        },
      ),
      fuzzParameters(2),
    );
  });
});

describe('fuzz: rendezvous registry request bodies', () => {
  let rendezvous: Rendezvous;

  beforeAll(async () => {
    rendezvous = await startRendezvous({
      executorToken: 'executor-token',
      harnessToken: 'harness-token',
    });
    // One registered environment, so connect and validate reach their body checks.
    const response = await fetch(`${rendezvous.url}/cloud/environment/env-1/register`, {
      method: 'POST',
      headers: { authorization: 'Bearer executor-token', 'content-type': 'application/json' },
      body: JSON.stringify({ security_profile: 'noise_hybrid_ik_v1', executor_public_key: key }),
    });
    expect(response.status).toBe(200);
  });
  afterAll(() => rendezvous.close());

  it('answers any body with a 2xx or a typed 4xx, never a 500, and keeps serving', async () => {
    const environment = fc.oneof(
      fc.constantFrom('env-1', 'env-2', '%ff', '%2e%2e', 'a%20b'),
      fc.string({ maxLength: 12 }).map((id) => encodeURIComponent(id)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('register', 'connect', 'validate'),
        environment,
        anyBody,
        fc.boolean(),
        async (operation, id, body, useHarnessKey) => {
          const token = operation === 'connect' ? 'harness-token' : 'executor-token';
          const sent = useHarnessKey
            ? body.replace(JSON.stringify(key), JSON.stringify(otherKey))
            : body;
          const response = await fetch(`${rendezvous.url}/cloud/environment/${id}/${operation}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: sent,
          });
          const text = await response.text();
          expect(response.status).toBeLessThan(500);
          if (response.status >= 400) {
            const parsed = JSON.parse(text) as { error: { code: string; message: string } };
            expect(typeof parsed.error.code).toBe('string');
            expect(typeof parsed.error.message).toBe('string');
          }
        },
      ),
      fuzzParameters(2),
    );
    // Still there for a well-formed request.
    const check = await fetch(`${rendezvous.url}/cloud/environment/env-1/connect`, {
      method: 'POST',
      headers: { authorization: 'Bearer harness-token', 'content-type': 'application/json' },
      body: JSON.stringify({ harness_public_key: otherKey }),
    });
    expect([200, 409]).toContain(check.status);
  });
});
