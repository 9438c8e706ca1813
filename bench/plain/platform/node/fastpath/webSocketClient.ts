/**
 * Plain twin of src/platform/node/fastpath/webSocketClient.ts: the client WebSocket of the
 * `ws` package, without per-message deflate. spec/platform/node/fastpath/webSocketClient.spec.ts
 * holds the fast module to it; bench/fast-paths-client.ts measures the two side by side.
 */
import WebSocket from 'ws';
import type {
  PlatformWebSocket,
  WebSocketOpenOptions,
} from '../../../../../src/platform/platform.js';
import { proxiedConnection } from '../../../../../src/platform/node/webSocketProxy.js';

export function openWebSocket(url: string, options: WebSocketOpenOptions = {}): PlatformWebSocket {
  const socket = new WebSocket(url, {
    headers: options.headers,
    perMessageDeflate: false,
    ...(options.maxPayload === undefined ? {} : { maxPayload: options.maxPayload }),
    ...(options.tls as WebSocket.ClientOptions | undefined),
    ...(options.proxy === undefined
      ? {}
      : {
          createConnection: proxiedConnection(
            options.proxy,
            url.startsWith('wss:'),
            options.tls,
          ) as unknown as WebSocket.ClientOptions['createConnection'],
        }),
  });
  // `ws`'s overloaded listener signatures are a superset of the seam's event map.
  return socket as unknown as PlatformWebSocket;
}
