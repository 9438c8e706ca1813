/** Plain twin of src/server/fastpath/frameText.ts: every message through the general path. */

export const ASCII_TEXT_FROM_CHUNK: boolean = false;

export function decodeUtf8(data: Buffer, start: number, end: number): string {
  return data.toString('utf8', start, end);
}
