/** The Node platform: our own client WebSocket (`fastpath/webSocketClient.ts`), `Buffer` and `node:crypto`. */
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { Platform } from '../platform.js';
import { openWebSocket } from './fastpath/webSocketClient.js';

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

  openWebSocket,
  webSocketPings: true,
  unrefTimer: (timer) => void (timer as Unrefable | undefined)?.unref?.(),
  refTimer: (timer) => void (timer as Unrefable | undefined)?.ref?.(),
};
