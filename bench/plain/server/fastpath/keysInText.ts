/** Plain twin of src/server/fastpath/keysInText.ts: one regex over the string tokens. */

/** A JSON string token, then (captured) a `:` after optional whitespace: an object key. */
const STRING_TOKEN = /"(?:[^"\\]|\\.)*"([ \t\n\r]*:)?/g;

export function keysInText(text: string): number {
  let keys = 0;
  for (const match of text.matchAll(STRING_TOKEN)) if (match[1] !== undefined) keys += 1;
  return keys;
}
