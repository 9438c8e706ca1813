/** The Node platform: `ws`, `Buffer` and `node:crypto` (the fast paths the benchmarks measure). */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import type { Platform, PlatformWebSocket } from '../platform.js';
import { proxiedConnection } from './webSocketProxy.js';

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A plain `Uint8Array` view (no copy) of a Buffer, so results compare equal everywhere. */
function plain(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

interface Unrefable {
  unref?(): unknown;
  ref?(): unknown;
}

export const nodePlatform: Platform = {
  name: 'node',
  randomUUID: () => randomUUID(),

  utf8Encode: (text) => plain(Buffer.from(text, 'utf8')),
  // `toString()` without arguments decodes UTF-8 (every inbound message passes here).
  utf8Decode: (bytes) => asBuffer(bytes).toString(),
  // Validates natively, then decodes natively: the result of a fatal TextDecoder, or undefined.
  utf8DecodeStrict: (bytes) => (isUtf8(bytes) ? asBuffer(bytes).toString() : undefined),
  utf8Checked: (bytes) => (isUtf8(bytes) ? bytes : undefined),
  utf8ByteLength: (text) => Buffer.byteLength(text, 'utf8'),
  utf8EncodeInto: (text, target, offset) => asBuffer(target).write(text, offset, 'utf8'),
  latin1Decode: (bytes) => asBuffer(bytes).toString('latin1'),

  base64Encode: (bytes) => asBuffer(bytes).toString('base64'),
  base64Decode: (text) => plain(Buffer.from(text, 'base64')),
  base64UrlEncode: (bytes) => asBuffer(bytes).toString('base64url'),
  base64UrlDecode: (text) => plain(Buffer.from(text, 'base64url')),

  openWebSocket(url, options = {}) {
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
  },
  webSocketPings: true,
  unrefTimer: (timer) => void (timer as Unrefable | undefined)?.unref?.(),
  refTimer: (timer) => void (timer as Unrefable | undefined)?.ref?.(),
};
