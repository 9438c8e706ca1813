/**
 * A short ASCII reply and its frame header as one Latin-1 string, which the socket encodes
 * straight into its write: no buffer of ours to fill.
 *
 * Contract: the string's Latin-1 bytes are exactly the unmasked, unfragmented Text frame of
 * `message`; undefined (take the general path) for long or non-ASCII text, as the plain twin
 * (bench/plain/server/fastpath/smallTextFrame.ts) always answers.
 * spec/server/fastpath/smallTextFrame.spec.ts holds the bytes to the general framing; what it
 * earns: docs/performance.md, "Fast paths".
 */

/** Replies up to this many characters may go out as a Latin-1 string. */
const SMALL_TEXT_CHARS = 1024;
const FIN_TEXT = 0x81;

export function smallTextFrame(message: string): string | undefined {
  if (message.length > SMALL_TEXT_CHARS) return undefined;
  const length = Buffer.byteLength(message);
  if (length !== message.length) return undefined; // not ASCII: one byte per character fails
  const header =
    length < 126
      ? String.fromCharCode(FIN_TEXT, length)
      : String.fromCharCode(FIN_TEXT, 126, length >> 8, length & 0xff);
  return header + message;
}
