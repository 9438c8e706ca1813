/**
 * Strict standard base64 (RFC 4648, `+/`, padded) decoding with the Rust `base64` crate's
 * error texts; Node's decoder silently skips bad characters, which would corrupt files.
 */
const ALPHABET = /[A-Za-z0-9+/]/;

export function decodeBase64Strict(text: string): Buffer {
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
  return Buffer.from(text, 'base64');
}
