import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { ProtocolError } from '../../src/protocol/errors.js';
import {
  EnvironmentRegistryAuthError,
  EnvironmentRegistryClient,
  type EnvironmentRegistryClientOptions,
  EnvironmentRegistryConfigError,
  EnvironmentRegistryDecodeError,
  EnvironmentRegistryHttpError,
  EnvironmentRegistryRequestError,
  RegistryConnectProvider,
  isRetryableRegistryError,
} from '../../src/registry/index.js';
import { nodeHttpPost } from '../../src/cli/nodeHttpPost.js';
import type { HttpPost } from '../../src/registry/index.js';
import { type RegistryServer, json, noiseKeyJson, startRegistryServer } from './registryServer.js';

const key = noiseKeyJson;
const harnessKey = key(1);
const executorKey = key(2);

const connectResponse = {
  environment_id: 'env-1',
  url: 'ws://127.0.0.1:9/cloud-agent/default/ws/environment/env-1?role=harness&sig=abc',
  security_profile: 'noise_hybrid_ik_v1',
  executor_registration_id: 'registration-1',
  executor_public_key: executorKey,
  harness_key_authorization: 'harness-key-authorization',
};

// Every case runs over both exchanges: `fetch` (the default) and the CLI's `node:http` one.
const EXCHANGES: [string, HttpPost | undefined][] = [
  ['fetch', undefined],
  ['node:http (the CLI)', nodeHttpPost],
];

describe.each(EXCHANGES)('registry client over %s', (_exchange, post) => {
  let server: RegistryServer;
  beforeEach(async () => {
    server = await startRegistryServer();
  });
  afterEach(async () => {
    await server.stop();
  });

  function client(options: Partial<EnvironmentRegistryClientOptions> = {}) {
    return new EnvironmentRegistryClient({
      baseUrl: server.baseUrl,
      bearerToken: 'registry-token',
      ...(post === undefined ? {} : { post }),
      ...options,
    });
  }

  async function failure(promise: Promise<unknown>): Promise<Error> {
    try {
      await promise;
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected the call to fail');
  }

  describe('connect (harness)', () => {
    it('POSTs the harness key and returns the bundle', async () => {
      server.setHandler((_request, response) => json(response, 200, connectResponse));
      const registry = client({
        baseUrl: ` ${server.baseUrl}// `,
        chatgptAccountId: 'workspace-123',
        traceContext: () => ({
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        }),
      });
      const bundle = await lastValueFrom(registry.connect('env-1', harnessKey));
      expect(bundle).toEqual({
        websocketUrl: connectResponse.url,
        environmentId: 'env-1',
        executorRegistrationId: 'registration-1',
        executorPublicKey: executorKey,
        harnessKeyAuthorization: 'harness-key-authorization',
      });
      const [request] = server.requests;
      expect(request!.method).toBe('POST');
      expect(request!.url).toBe('/cloud/environment/env-1/connect');
      expect(request!.headers.authorization).toBe('Bearer registry-token');
      expect(request!.headers['chatgpt-account-id']).toBe('workspace-123');
      expect(request!.headers['content-type']).toBe('application/json');
      expect(request!.headers.traceparent).toBe(
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      );
      expect(request!.headers.tracestate).toBeUndefined();
      expect(JSON.parse(request!.body)).toEqual({ harness_public_key: harnessKey });
    });

    it('the registry-backed provider asks /connect for every bundle', async () => {
      server.setHandler((_request, response) => json(response, 200, connectResponse));
      const provider = new RegistryConnectProvider(client(), 'env-1');
      const bundles = [
        await firstValueFrom(provider.connectBundle(harnessKey)),
        await firstValueFrom(provider.connectBundle(harnessKey)),
      ];
      expect(bundles.map((b) => b.executorRegistrationId)).toEqual([
        'registration-1',
        'registration-1',
      ]);
      expect(server.requests.map((r) => r.url)).toEqual([
        '/cloud/environment/env-1/connect',
        '/cloud/environment/env-1/connect',
      ]);
    });

    it.each([
      [{ environment_id: 'env-2' }, 'environment registry returned a different environment id'],
      [
        { security_profile: 'plaintext' },
        'environment registry returned unsupported security profile `plaintext`',
      ],
      [{ url: ' ' }, 'environment registry returned incomplete Noise connection data'],
      [
        { executor_registration_id: '' },
        'environment registry returned incomplete Noise connection data',
      ],
      [
        { harness_key_authorization: '  ' },
        'environment registry returned incomplete Noise connection data',
      ],
      [
        { url: 'https://rendezvous.test/x' },
        'environment registry returned an invalid rendezvous URL',
      ],
      [{ url: 'not a url' }, 'environment registry returned an invalid rendezvous URL'],
    ])('rejects a bundle with %j (fatal)', async (override, detail) => {
      server.setHandler((_request, response) =>
        json(response, 200, { ...connectResponse, ...override }),
      );
      const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).detail).toBe(detail);
      expect(isRetryableRegistryError(error)).toBe(false);
    });

    it.each([
      ['not json', 'error decoding environment registry response body'],
      [
        JSON.stringify({ ...connectResponse, harness_key_authorization: undefined }),
        'harness_key_authorization',
      ],
      [
        JSON.stringify({ ...connectResponse, executor_public_key: { ...executorKey, extra: 'x' } }),
        'executor_public_key',
      ],
    ])(
      'reports an undecodable 2xx body as a retryable decode error (%#)',
      async (body, mention) => {
        server.setHandler((_request, response) => json(response, 200, body));
        const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
        expect(error).toBeInstanceOf(EnvironmentRegistryDecodeError);
        expect(error.message).toMatch(/^failed to serialize or deserialize exec-server JSON: /);
        expect(error.message).toContain(mention);
        expect(isRetryableRegistryError(error)).toBe(true);
      },
    );

    it('tolerates response fields it does not know', async () => {
      server.setHandler((_request, response) =>
        json(response, 200, { ...connectResponse, transport_policy: { version: 1 } }),
      );
      const bundle = await lastValueFrom(client().connect('env-1', harnessKey));
      expect(bundle.environmentId).toBe('env-1');
    });
  });

  describe('register (executor)', () => {
    const registration = {
      environment_id: 'env-1',
      url: 'ws://127.0.0.1:9/ws/environment/env-1?role=environment&sig=x',
      security_profile: 'noise_hybrid_ik_v1',
      executor_registration_id: 'registration-7',
    };

    it('POSTs the profile and executor key and returns the registration', async () => {
      server.setHandler((_request, response) => json(response, 200, registration));
      const result = await lastValueFrom(client().register('env-1', executorKey));
      expect(result).toEqual({
        environmentId: 'env-1',
        websocketUrl: registration.url,
        executorRegistrationId: 'registration-7',
      });
      const [request] = server.requests;
      expect(request!.url).toBe('/cloud/environment/env-1/register');
      expect(JSON.parse(request!.body)).toEqual({
        security_profile: 'noise_hybrid_ik_v1',
        executor_public_key: executorKey,
      });
    });

    it('rejects a blank registration id, another environment or profile', async () => {
      for (const [override, detail] of [
        [
          { executor_registration_id: ' ' },
          'environment registry returned an empty executor registration id',
        ],
        [{ environment_id: 'other' }, 'environment registry returned a different environment id'],
        [
          { security_profile: 'x' },
          'environment registry returned unsupported security profile `x`',
        ],
      ] as const) {
        server.setHandler((_request, response) =>
          json(response, 200, { ...registration, ...override }),
        );
        const error = await failure(lastValueFrom(client().register('env-1', executorKey)));
        expect((error as ProtocolError).detail).toBe(detail);
      }
    });
  });

  describe('validate (executor)', () => {
    const request = {
      executorRegistrationId: 'registration-1',
      harnessPublicKey: harnessKey,
      harnessKeyAuthorization: 'secret-authorization',
      streamId: '0b8f4f2e-8d53-4f0e-9a51-6d0f3c1f2a77',
    };

    it('sends the stream id header and body, and completes on valid: true', async () => {
      server.setHandler((_request, response) => json(response, 200, { valid: true }));
      const emitted = await lastValueFrom(client().validate('env-1', request).pipe(toArray()));
      expect(emitted).toEqual([undefined]);
      const [recorded] = server.requests;
      expect(recorded!.url).toBe('/cloud/environment/env-1/validate');
      expect(recorded!.headers['x-codex-noise-stream-id']).toBe(request.streamId);
      expect(recorded!.headers.authorization).toBe('Bearer registry-token');
      expect(JSON.parse(recorded!.body)).toEqual({
        executor_registration_id: 'registration-1',
        harness_public_key: harnessKey,
        harness_key_authorization: 'secret-authorization',
      });
    });

    it('fails on valid: false', async () => {
      server.setHandler((_request, response) => json(response, 200, { valid: false }));
      const error = await failure(lastValueFrom(client().validate('env-1', request)));
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error.message).toBe(
        'exec-server protocol error: environment registry rejected Noise relay harness key',
      );
    });

    it('never surfaces an error body that might echo the authorization', async () => {
      server.setHandler((_request, response) =>
        json(response, 500, { error: { code: 'boom', message: 'bad secret-authorization' } }),
      );
      const http = await failure(lastValueFrom(client().validate('env-1', request)));
      expect(http).toBeInstanceOf(EnvironmentRegistryHttpError);
      expect(http.message).toBe(
        'environment registry request failed (500 Internal Server Error): environment registry harness key validation failed',
      );
      server.setHandler((_request, response) => json(response, 403, 'secret-authorization'));
      const auth = await failure(lastValueFrom(client().validate('env-1', request)));
      expect(auth).toBeInstanceOf(EnvironmentRegistryAuthError);
      expect(auth.message).not.toContain('secret-authorization');
      expect(auth.message).toContain('403 Forbidden');
    });
  });

  describe('HTTP errors and their classification', () => {
    it('maps 401/403 to auth errors with the registry message', async () => {
      server.setHandler((_request, response) =>
        json(response, 401, { error: { code: 'unauthorized', message: 'bad token' } }),
      );
      const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
      expect(error).toBeInstanceOf(EnvironmentRegistryAuthError);
      expect(error.message).toBe(
        'environment registry authentication error: environment registry authentication failed (401 Unauthorized): bad token',
      );
      expect(isRetryableRegistryError(error)).toBe(false);
    });

    it.each([
      [
        409,
        { error: { code: 'environment_offline', message: 'offline' } },
        true,
        '409 Conflict, environment_offline): offline',
      ],
      [
        409,
        { error: { code: 'registration_conflict', message: 'taken' } },
        false,
        '409 Conflict, registration_conflict): taken',
      ],
      [503, 'upstream down', true, '503 Service Unavailable): upstream down'],
      [500, '', true, '500 Internal Server Error): empty or malformed error body'],
      [502, { error: { code: 'x' } }, true, '502 Bad Gateway, x): {"error":{"code":"x"}}'],
      [408, '', true, '408 Request Timeout)'],
      [429, '', true, '429 Too Many Requests)'],
      [
        404,
        { error: { message: 'no such environment' } },
        false,
        '404 Not Found): no such environment',
      ],
    ])('status %i with %j → retryable %s', async (status, body, retryable, text) => {
      server.setHandler((_request, response) => json(response, status, body));
      const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
      expect(error).toBeInstanceOf(EnvironmentRegistryHttpError);
      expect(error.message).toContain(text);
      expect(isRetryableRegistryError(error)).toBe(retryable);
    });

    it('cuts long error bodies to a 4096-byte preview', async () => {
      server.setHandler((_request, response) => json(response, 500, 'x'.repeat(10_000)));
      const error = (await failure(
        lastValueFrom(client().connect('env-1', harnessKey)),
      )) as EnvironmentRegistryHttpError;
      expect(Buffer.byteLength(error.registryMessage)).toBe(4096);
      expect(error.registryMessage.endsWith(' [truncated]')).toBe(true);
    });

    it('does not follow redirects', async () => {
      server.setHandler((request, response) => {
        if (request.url.endsWith('/connect')) {
          response.writeHead(302, { location: '/elsewhere' }).end();
        } else {
          json(response, 200, connectResponse);
        }
      });
      const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
      expect((error as EnvironmentRegistryHttpError).status).toBe(302);
      expect(server.requests.map((r) => r.url)).toEqual(['/cloud/environment/env-1/connect']);
    });

    it('rejects an oversize 2xx body', async () => {
      server.setHandler((_request, response) => json(response, 200, 'x'.repeat(1024 * 1024 + 1)));
      const error = await failure(lastValueFrom(client().connect('env-1', harnessKey)));
      expect((error as EnvironmentRegistryRequestError).failure).toBe('body');
    });

    it('classifies anything that is not a registry error as not retryable', () => {
      expect(isRetryableRegistryError(new Error('x'))).toBe(false);
      expect(isRetryableRegistryError(new ProtocolError('x'))).toBe(false);
      expect(isRetryableRegistryError(new EnvironmentRegistryConfigError('x'))).toBe(false);
      expect(isRetryableRegistryError(new EnvironmentRegistryHttpError(400, undefined, 'x'))).toBe(
        false,
      );
      expect(isRetryableRegistryError(new EnvironmentRegistryHttpError(599, undefined, 'x'))).toBe(
        true,
      );
    });
  });

  describe('connection failures, timeouts and cancellation', () => {
    it('reports a refused connection as a retryable connect error', async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const { port } = probe.address() as AddressInfo;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      const registry = client({ baseUrl: `http://127.0.0.1:${port}` });
      const error = await failure(lastValueFrom(registry.connect('env-1', harnessKey)));
      expect((error as EnvironmentRegistryRequestError).failure).toBe('connect');
      expect(isRetryableRegistryError(error)).toBe(true);
    });

    it('times out when the registry never answers, and aborts the request', async () => {
      server.setHandler(() => undefined);
      const error = await failure(
        lastValueFrom(client({ requestTimeoutMs: 150 }).connect('env-1', harnessKey)),
      );
      expect((error as EnvironmentRegistryRequestError).failure).toBe('timeout');
      expect(error.message).toContain('timed out after 150 ms');
      expect(isRetryableRegistryError(error)).toBe(true);
      await server.closed(0);
    });

    it('times out when the body stalls after the headers', async () => {
      server.setHandler((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"environment_id":');
      });
      const error = await failure(
        lastValueFrom(client({ requestTimeoutMs: 150 }).connect('env-1', harnessKey)),
      );
      expect((error as EnvironmentRegistryRequestError).failure).toBe('timeout');
      await server.closed(0);
    });

    it('aborts the HTTP request when the subscriber unsubscribes', async () => {
      server.setHandler(() => undefined);
      const subscription = client()
        .connect('env-1', harnessKey)
        .subscribe({ error: () => undefined });
      for (let i = 0; i < 200 && server.requests.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(server.requests.length).toBe(1);
      subscription.unsubscribe();
      await server.closed(0);
    });
  });

  describe('configuration', () => {
    it('rejects a blank base URL, a non-http URL and a blank token at construction', () => {
      expect(() => client({ baseUrl: ' / ' })).toThrow(
        new EnvironmentRegistryConfigError('environment registry base URL is required'),
      );
      expect(() => client({ baseUrl: 'ftp://x' })).toThrow(EnvironmentRegistryConfigError);
      expect(() => client({ bearerToken: '  ' })).toThrow(
        'environment registry configuration error: environment registry bearer token is required',
      );
    });

    it('reports a bad environment id on subscription without sending anything', async () => {
      const registry = client();
      const blank = registry.connect(' ', harnessKey);
      expect((await failure(lastValueFrom(blank))).message).toBe(
        'environment registry configuration error: environment id is required for remote exec-server registration',
      );
      const dots = await failure(lastValueFrom(registry.register('..', executorKey)));
      expect(dots).toBeInstanceOf(EnvironmentRegistryConfigError);
      expect(server.requests).toEqual([]);
    });

    it('escapes the environment id as one path segment', async () => {
      server.setHandler((_request, response) =>
        json(response, 200, { ...connectResponse, environment_id: 'a/b?c' }),
      );
      await lastValueFrom(client().connect('a/b?c', harnessKey));
      expect(server.requests[0]!.url).toBe('/cloud/environment/a%2Fb%3Fc/connect');
    });
  });
});
