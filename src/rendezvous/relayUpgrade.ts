/**
 * WebSocket upgrades on `/ws/environment/{id}` (noise-relay.md §6.2). Answers, in order:
 * - 403 for a request with an `Origin` that is not allowed (executor sockets never have one);
 * - 404 while the node drains, for an unknown path, for a registration that is not current,
 *   and for an executor socket whose registration another live node holds: codex and our
 *   executor register again on a 4xx, which is how executors move between nodes;
 * - 401 for a bad signature or an expired URL (a harness then fetches a fresh bundle);
 * - 409 `environment_offline` for a harness while this node holds no executor for it;
 * - 429 past the harness sockets allowed per environment.
 */
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { MAX_RELAY_WEBSOCKET_MESSAGE_SIZE } from '../relay/index.js';
import { EnvironmentRelay } from './environmentRelay.js';
import type { RendezvousNodeContext } from './nodeContext.js';
import { verifyRendezvousUrl } from './rendezvousUrl.js';

export interface RelayUpgradeHandler {
  readonly handle: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  close(): void;
}

export function relayUpgradeHandler(node: RendezvousNodeContext): RelayUpgradeHandler {
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_RELAY_WEBSOCKET_MESSAGE_SIZE,
    perMessageDeflate: false,
  });
  const refuse = (
    socket: Duplex,
    status: number,
    code: string,
    message: string,
    environmentId?: string,
  ): void => {
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
        'Connection: close\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    node.emit({
      type: 'upgrade-refused',
      ...(environmentId === undefined ? {} : { environmentId }),
      status,
      detail: code,
    });
  };
  const relayFor = (environmentId: string): EnvironmentRelay => {
    let relay = node.relays.get(environmentId);
    if (!relay) {
      relay = new EnvironmentRelay(environmentId, node.relayOptions);
      node.relays.set(environmentId, relay);
    }
    return relay;
  };

  const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const now = node.scheduler.now();
    const parsed = verifyRendezvousUrl(request.url ?? '', node.secret, now);
    const origin = request.headers.origin;
    if (
      origin !== undefined &&
      (!node.allowedOrigins.has(origin) || (parsed.ok && parsed.claims.role === 'environment'))
    ) {
      refuse(socket, 403, 'origin_not_allowed', 'browser origin is not allowed here');
      return;
    }
    if (node.state.draining) {
      refuse(socket, 404, 'node_draining', 'this rendezvous node is leaving; register again');
      return;
    }
    if (!parsed.ok) {
      if (parsed.problem === 'not_found') {
        refuse(socket, 404, 'not_found', 'no rendezvous endpoint here');
      } else {
        refuse(socket, 401, parsed.problem, 'rendezvous URL is not signed or has expired');
      }
      return;
    }
    const { role, environmentId, registrationId } = parsed.claims;
    if (role === 'environment') {
      const attached = await node.store.attach(
        environmentId,
        registrationId,
        node.nodeId,
        now,
        node.limits.registrationTtlMs,
      );
      if (!attached) {
        refuse(
          socket,
          404,
          'registration_not_found',
          'registration is not current here; register again',
          environmentId,
        );
        return;
      }
      const record = await node.store.get(environmentId, now);
      wss.handleUpgrade(request, socket, head, (ws) => {
        if (node.state.draining) {
          ws.close(1001, 'rendezvous: node draining');
          return;
        }
        relayFor(environmentId).attachExecutor(ws, registrationId);
        if (record?.registrationId === registrationId) node.holdings.set(environmentId, record);
      });
      return;
    }
    const relay = node.relays.get(environmentId);
    if (relay?.attachedRegistrationId !== registrationId) {
      const record = await node.store.get(environmentId, now);
      if (record?.registrationId !== registrationId) {
        refuse(socket, 404, 'registration_not_found', 'registration is not current', environmentId);
      } else {
        refuse(
          socket,
          409,
          'environment_offline',
          'no executor connected to this node; ask /connect again',
          environmentId,
        );
      }
      return;
    }
    if (relay.harnessCount >= node.limits.maxHarnessSocketsPerEnvironment) {
      refuse(
        socket,
        429,
        'too_many_harness_sockets',
        `environment already has ${node.limits.maxHarnessSocketsPerEnvironment} harness sockets on this node`,
        environmentId,
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      if (relay.attachedRegistrationId !== registrationId) {
        ws.close(4000, 'rendezvous: registration superseded');
        return;
      }
      relay.attachHarness(ws);
    });
  };

  return {
    handle: (request, socket, head) => {
      socket.on('error', () => undefined);
      upgrade(request, socket, head).catch((error: unknown) => {
        node.emit({ type: 'store-failed', detail: (error as Error).message });
        if (socket.writable) {
          refuse(socket, 503, 'store_unavailable', 'rendezvous store unavailable; retry shortly');
        }
      });
    },
    close() {
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
