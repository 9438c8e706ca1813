/**
 * Byte payloads on the wire (`chunk`, `dataBase64`, `bodyBase64`, `deltaBase64`) are one JSON
 * string in standard base64 with padding (RFC 4648 alphabet `+/`, spec/protocol.md §2.5).
 */
import { platform } from '../platform/index.js';
import * as z from 'zod';

/**
 * Alphabet and trailing padding only; together with a length that is a multiple of 4 this is
 * exactly padded base64 (at most two `=`, only at the end). spec/protocol/base64.spec.ts checks
 * the accepted and refused forms; the regex's cost is in docs/performance.md ("Fast paths").
 */
const BASE64_CHARACTERS = /^[A-Za-z0-9+/]*={0,2}$/;

/** True for standard padded base64 (RFC 4648 alphabet `+/`, length a multiple of 4). */
export function isStandardBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARACTERS.test(text);
}

/** A standard, padded base64 string. Rejects url-safe, unpadded or whitespace-laden input. */
export const Base64 = z
  .string()
  .refine(isStandardBase64, { message: 'expected standard padded base64' });
export type Base64 = z.infer<typeof Base64>;

/** Encodes bytes (or a UTF-8 string) as standard padded base64. */
export function encodeBase64(data: Uint8Array | string): Base64 {
  return platform.base64Encode(typeof data === 'string' ? platform.utf8Encode(data) : data);
}

/** Decodes standard padded base64; throws a TypeError naming the problem on anything else. */
export function decodeBase64(text: string): Uint8Array {
  if (!isStandardBase64(text)) {
    throw new TypeError('invalid base64: expected the standard alphabet (+/) with padding');
  }
  return decodeValidatedBase64(text);
}

/**
 * Bytes of a string the `Base64` schema already validated (a view, no copy). Validating again
 * would run the same regex a second time on every streamed output chunk.
 */
export function decodeValidatedBase64(text: Base64): Uint8Array {
  return platform.base64Decode(text);
}

const ALPHABET = /[A-Za-z0-9+/]/;

/**
 * The executor's decoding: the same strict standard base64 as `isStandardBase64`, failing
 * with the Rust `base64` crate's error texts (`Invalid symbol 32, offset 3.`) that the binary
 * puts in its -32602 answers. Node's own decoder silently skips bad characters, which would
 * corrupt files.
 */
export function decodeBase64Strict(text: string): Uint8Array {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const body = text.length - padding;
  for (let offset = 0; offset < body; offset += 1) {
    const char = text[offset] as string;
    if (!ALPHABET.test(char))
      throw new Error(`Invalid symbol ${char.charCodeAt(0)}, offset ${offset}.`);
  }
  if (text.length % 4 !== 0) {
    if (padding > 0) throw new Error('Invalid padding');
    throw new Error(`Invalid input length.`);
  }
  return platform.base64Decode(text);
}

/** Exact decoded length of a valid padded base64 string, without decoding it. */
export function decodedBase64Length(text: string): number {
  if (text.length === 0) return 0;
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - padding;
}

/**
 * The bytes of `text` when it is canonical standard base64 (what `base64Encode` writes), else
 * undefined: decoding and encoding again gives the same text back only then, so no alphabet
 * pass is needed (spec/protocol/base64.spec.ts: accepted exactly when `isStandardBase64`
 * accepts and the padding bits are zero).
 */
export function decodeCanonicalBase64(text: string): Uint8Array | undefined {
  try {
    const bytes = platform.base64Decode(text);
    return platform.base64Encode(bytes) === text ? bytes : undefined;
  } catch {
    return undefined; // a decoder that throws on bad input (browsers)
  }
}
