/**
 * Reaching a WebSocket server through an HTTP proxy: an HTTP `CONNECT host:port` tunnel
 * (credentials from the proxy URL's user info go in `Proxy-Authorization: Basic`), then TLS
 * inside the tunnel for `wss://`. Guarded by spec/transport/webSocketConnectOptions.spec.ts.
 */
import { request, type ClientRequestArgs } from 'node:http';
import type { Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { WebSocketTlsOptions } from '../platform.js';

type ConnectionCallback = (error: Error | null, socket?: Duplex) => void;

/**
 * A connection opener (the `createConnection` shape of `ws` and `http.request`, which the client
 * WebSocket and its `ws` twin both call) that opens each connection through the
 * HTTP proxy `proxyUrl` (`http://[user:password@]host:port`). Errors (a refused CONNECT, a
 * proxy that cannot be reached) go to the callback, so they fail the connect attempt.
 */
export function proxiedConnection(
  proxyUrl: string,
  secure: boolean,
  tls: WebSocketTlsOptions = {},
): (options: ClientRequestArgs, callback: ConnectionCallback) => undefined {
  const proxy = new URL(proxyUrl);
  if (proxy.protocol !== 'http:') {
    throw new TypeError(`proxy \`${proxyUrl}\` must be an http:// URL`);
  }
  const authorization =
    proxy.username === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`;
  return (options, callback) => {
    const host = String(options.host ?? options.hostname ?? 'localhost');
    const target = `${host.includes(':') ? `[${host}]` : host}:${options.port}`;
    const tunnel = request({
      host: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxy.port === '' ? 80 : Number(proxy.port),
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...(authorization ? { 'proxy-authorization': authorization } : {}) },
    });
    let settled = false;
    const settle = (error: Error | null, socket?: Duplex): void => {
      if (settled) return;
      settled = true;
      callback(error, socket);
    };
    tunnel.once('connect', (response, socket: Socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        settle(
          new Error(`proxy ${proxy.host} refused CONNECT ${target}: HTTP ${response.statusCode}`),
        );
        return;
      }
      if (!secure) {
        settle(null, socket);
        return;
      }
      settle(null, tlsConnect({ socket, ...tlsConnectOptions(host, tls) }));
    });
    tunnel.once('error', (error) =>
      settle(new Error(`cannot reach proxy ${proxy.host}: ${error.message}`)),
    );
    tunnel.end();
    return undefined;
  };
}

/** `tls.connect` options for a connection to `host` (SNI: its name, never an IP address). */
export function tlsConnectOptions(host: string, tls: WebSocketTlsOptions = {}): ConnectionOptions {
  return {
    servername: tls.servername ?? (/^[\d.:]+$/.test(host) ? undefined : host),
    ...(tls.ca === undefined
      ? {}
      : { ca: Array.isArray(tls.ca) ? tls.ca.map(pem) : pem(tls.ca as string | Uint8Array) }),
    ...(tls.cert === undefined ? {} : { cert: pem(tls.cert) }),
    ...(tls.key === undefined ? {} : { key: pem(tls.key) }),
    ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
  };
}

/** A PEM text or its bytes, as node:tls takes them. */
function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === 'string' ? value : Buffer.from(value);
}
