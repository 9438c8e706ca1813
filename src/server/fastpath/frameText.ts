/**
 * Text decoding of the WebSocket frame reader (webSocketFrameReader.ts).
 * spec/server/fastpath/frameText.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/frameText.ts).
 */

/**
 * Whether a single-frame ASCII text message is decoded straight from the socket chunk, without
 * a `subarray` view of its payload. Either way it decodes to the same text.
 */
export const ASCII_TEXT_FROM_CHUNK: boolean = true;

/**
 * UTF-8 text of `data[start..end)`, already checked. The default encoding (`undefined`) is
 * UTF-8; leaving it unnamed takes Buffer's shortest path to the decoder.
 */
export function decodeUtf8(data: Buffer, start: number, end: number): string {
  return data.toString(undefined, start, end);
}
