/** TEMPORARY STUB: replaced by our own RFC 6455 client. */
import WebSocket from 'ws';
import type { PlatformWebSocket, WebSocketOpenOptions } from '../../platform.js';
import { proxiedConnection } from '../webSocketProxy.js';

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
