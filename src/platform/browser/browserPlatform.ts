/**
 * The browser platform: the global `WebSocket`, `TextEncoder`/`TextDecoder`, the CSPRNG of
 * WebCrypto and `@noble/*` for the synchronous primitives. Also runs on Node (the specs hold
 * it to the Node platform's results), except `openWebSocket` where there is no global one.
 */
import type { Platform } from '../platform.js';
import { BrowserWebSocket } from './browserWebSocket.js';

const encoder = new TextEncoder();
const lossyDecoder = new TextDecoder('utf-8');
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/** Native base64 where the engine has it (`Uint8Array.fromBase64`, Chromium 140+). */
interface Base64Native {
  fromBase64?: (text: string, options?: { alphabet?: string }) => Uint8Array;
}
interface Base64Instance {
  toBase64?: (options?: { alphabet?: string; omitPadding?: boolean }) => string;
}
const nativeFromBase64 = (Uint8Array as unknown as Base64Native).fromBase64;
const hasNativeToBase64 = typeof (new Uint8Array(0) as Base64Instance).toBase64 === 'function';

function encodeBase64(bytes: Uint8Array): string {
  if (hasNativeToBase64) return (bytes as Base64Instance).toBase64!();
  return btoa(latin1Decode(bytes));
}

/** One character per byte (TextDecoder's 'latin1' is windows-1252, which differs at 0x80-0x9F). */
function latin1Decode(bytes: Uint8Array): string {
  let binary = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return binary;
}

function decodeBase64(text: string): Uint8Array {
  if (nativeFromBase64 !== undefined) return nativeFromBase64(text);
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function utf8ByteLength(text: string): number {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) length += 1;
    else if (unit < 0x800) length += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        length += 4;
        i++;
      } else length += 3; // a lone surrogate becomes U+FFFD (3 bytes)
    } else length += 3;
  }
  return length;
}

export const browserPlatform: Platform = {
  name: 'browser',
  randomUUID: () => globalThis.crypto.randomUUID(),

  utf8Encode: (text) => encoder.encode(text),
  utf8Decode: (bytes) => lossyDecoder.decode(bytes),
  utf8DecodeStrict(bytes) {
    try {
      return strictDecoder.decode(bytes);
    } catch {
      return undefined;
    }
  },
  // A browser has no check that is cheaper than its decoder: the text itself.
  utf8Checked(bytes) {
    return this.utf8DecodeStrict(bytes);
  },
  utf8ByteLength,
  utf8EncodeInto: (text, target, offset) =>
    encoder.encodeInto(text, target.subarray(offset)).written,
  latin1Decode,

  base64Encode: encodeBase64,
  base64Decode: decodeBase64,
  base64UrlEncode: (bytes) =>
    encodeBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''),
  base64UrlDecode(text) {
    const standard = text.replace(/-/g, '+').replace(/_/g, '/');
    return decodeBase64(standard + '='.repeat((4 - (standard.length % 4)) % 4));
  },

  openWebSocket: (url, options) => new BrowserWebSocket(url, options),
  webSocketPings: false,
  unrefTimer: () => undefined,
  refTimer: () => undefined,
};
