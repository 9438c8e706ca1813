/**
 * Test helper: our TypeScript executor attached to one of our rendezvous servers the way
 * `--remote` mode does it (register → open the `role=environment` socket → serve it with the
 * registry validator), assembled from `src/registry` and `src/server/relay` pieces. One
 * attach, no reconnect loop: tests that need reconnects call `reattach()`.
 */
import { randomUUID } from 'node:crypto';
import { firstValueFrom, timeout } from 'rxjs';
import WebSocket from 'ws';
import { NoiseChannelIdentity } from '../../src/noise/index.js';
import { MAX_RELAY_WEBSOCKET_MESSAGE_SIZE } from '../../src/relay/index.js';
import { EnvironmentRegistryClient } from '../../src/registry/index.js';
import type { Rendezvous } from '../../src/rendezvous/index.js';
import { createExecutor, type Executor } from '../../src/server/index.js';
import {
  registryHarnessKeyValidator,
  serveMultiplexedEnvironment,
} from '../../src/server/relay/index.js';

export interface RendezvousTsExecutor {
  readonly environmentId: string;
  readonly identity: NoiseChannelIdentity;
  readonly executor: Executor;
  /** Registration id of the current socket. */
  registrationId(): string;
  /** Resolves with the relay's disconnect reason when the current socket ends. */
  served(): Promise<string>;
  stop(): Promise<void>;
}

export async function attachTsExecutor(
  rendezvous: Rendezvous,
  token: string,
  environmentId = `ts-${randomUUID()}`,
): Promise<RendezvousTsExecutor> {
  const identity = NoiseChannelIdentity.generate();
  const executor = createExecutor();
  const registry = new EnvironmentRegistryClient({ baseUrl: rendezvous.url, bearerToken: token });
  const registration = await firstValueFrom(
    registry.register(environmentId, identity.toJSON()).pipe(timeout(10_000)),
  );
  const socket = new WebSocket(registration.websocketUrl, {
    maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
    perMessageDeflate: false,
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`rendezvous refused the executor socket: HTTP ${response.statusCode}`)),
    );
  });
  const controller = new AbortController();
  const served = serveMultiplexedEnvironment(socket, {
    executor,
    environmentId,
    registrationId: registration.executorRegistrationId,
    identity,
    validator: registryHarnessKeyValidator(
      registry,
      registration.executorRegistrationId,
      environmentId,
    ),
    signal: controller.signal,
  });
  return {
    environmentId,
    identity,
    executor,
    registrationId: () => registration.executorRegistrationId,
    served: () => served,
    stop: async () => {
      controller.abort();
      await served;
      await executor.shutdown();
    },
  };
}
