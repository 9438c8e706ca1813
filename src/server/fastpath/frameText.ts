/**
 * Text decoding of the WebSocket frame reader (webSocketFrameReader.ts).
 * spec/server/fastpath/frameText.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/frameText.ts).
 */
import { isAscii } from 'node:buffer';

/**
 * Whether a single-frame ASCII text message is decoded straight from the socket chunk, without
 * a `subarray` view of its payload. Either way it decodes to the same text.
 */
export const ASCII_TEXT_FROM_CHUNK: boolean = true;

/** From this many bytes on, a text is first checked for ASCII (a native pass, ~1/50 of the decode). */
const LARGE_TEXT_BYTES = 4096;

/**
 * UTF-8 text of `data[start..end)`, already checked. A large ASCII text (a `process/write` of
 * up to 1 MiB of stdin is ~1.4 MB of base64) is read as Latin-1, which copies bytes: the same
 * text, several times faster than the UTF-8 decoder. Otherwise the default encoding
 * (`undefined`) is UTF-8; leaving it unnamed takes Buffer's shortest path to the decoder.
 */
export function decodeUtf8(data: Buffer, start: number, end: number): string {
  if (end - start >= LARGE_TEXT_BYTES && isAscii(data.subarray(start, end)))
    return data.toString('latin1', start, end);
  return data.toString(undefined, start, end);
}
