/**
 * The CLI's registry endpoint asks for its first bundle before the client is loaded
 * (FirstBundleAhead): the first attempt for that key gets that bundle, or its error; every
 * other attempt asks the registry anew (a bundle is single-use). Against a scripted registry
 * on loopback, over the CLI's node:http exchange.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { firstValueFrom } from 'rxjs';
import { nodeHttpPost } from '../../src/cli/nodeHttpPost.js';
import { FirstBundleAhead } from '../../src/cli/registryEndpoint.js';
import {
  EnvironmentRegistryAuthError,
  EnvironmentRegistryClient,
  RegistryConnectProvider,
} from '../../src/registry/index.js';
import {
  type RegistryServer,
  json,
  noiseKeyJson,
  startRegistryServer,
} from '../registry/registryServer.js';

const key = noiseKeyJson;
const harnessKey = key(1);
const otherKey = key(3);

/** Answers the n-th /connect with authorization `authorization-n`. */
function numberedBundles(server: RegistryServer): void {
  server.setHandler((_request, response) =>
    json(response, 200, {
      environment_id: 'env-1',
      url: 'ws://127.0.0.1:9/ws/environment/env-1?role=harness',
      security_profile: 'noise_hybrid_ik_v1',
      executor_registration_id: 'registration-1',
      executor_public_key: key(2),
      harness_key_authorization: `authorization-${server.requests.length - 1}`,
    }),
  );
}

async function requestsReach(server: RegistryServer, count: number): Promise<void> {
  for (let i = 0; i < 400 && server.requests.length < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(server.requests).toHaveLength(count);
}

describe('FirstBundleAhead (execrx run --registry)', () => {
  let server: RegistryServer;
  beforeEach(async () => {
    server = await startRegistryServer();
  });
  afterEach(async () => {
    await server.stop();
  });

  const provider = () =>
    new RegistryConnectProvider(
      new EnvironmentRegistryClient({
        baseUrl: server.baseUrl,
        bearerToken: 'token',
        post: nodeHttpPost,
      }),
      'env-1',
    );

  it('sends the first lookup at construction and hands its bundle to the first attempt', async () => {
    numberedBundles(server);
    const ahead = new FirstBundleAhead(provider(), harnessKey);
    await requestsReach(server, 1);
    expect(JSON.parse(server.requests[0]!.body)).toEqual({ harness_public_key: harnessKey });

    const first = await firstValueFrom(ahead.connectBundle({ ...harnessKey }));
    expect(first.harnessKeyAuthorization).toBe('authorization-0');
    expect(server.requests).toHaveLength(1);

    const second = await firstValueFrom(ahead.connectBundle(harnessKey));
    expect(second.harnessKeyAuthorization).toBe('authorization-1');
    expect(server.requests).toHaveLength(2);
  });

  it('asks anew when the first attempt is for another key', async () => {
    numberedBundles(server);
    const ahead = new FirstBundleAhead(provider(), harnessKey);
    await requestsReach(server, 1);
    const bundle = await firstValueFrom(ahead.connectBundle(otherKey));
    expect(bundle.harnessKeyAuthorization).toBe('authorization-1');
    expect(JSON.parse(server.requests[1]!.body)).toEqual({ harness_public_key: otherKey });
    // The early bundle is gone: the next attempt asks again too.
    await firstValueFrom(ahead.connectBundle(harnessKey));
    expect(server.requests).toHaveLength(3);
  });

  it("gives the first lookup's error to the first attempt only", async () => {
    server.setHandler((_request, response) => json(response, 401, { error: 'bad token' }));
    const ahead = new FirstBundleAhead(provider(), harnessKey);
    await expect(firstValueFrom(ahead.connectBundle(harnessKey))).rejects.toBeInstanceOf(
      EnvironmentRegistryAuthError,
    );
    expect(server.requests).toHaveLength(1);
    numberedBundles(server);
    const bundle = await firstValueFrom(ahead.connectBundle(harnessKey));
    expect(bundle.harnessKeyAuthorization).toBe('authorization-1');
  });

  it('cancel() abandons a first lookup still on the wire', async () => {
    server.setHandler(() => undefined); // never answers
    const ahead = new FirstBundleAhead(provider(), harnessKey);
    await requestsReach(server, 1);
    ahead.cancel();
    await server.closed(0);
    numberedBundles(server);
    const bundle = await firstValueFrom(ahead.connectBundle(harnessKey));
    expect(bundle.harnessKeyAuthorization).toBe('authorization-1');
  });
});
