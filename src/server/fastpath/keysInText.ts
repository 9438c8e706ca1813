/**
 * The object keys of a valid JSON text as written, duplicates included: its string tokens
 * followed by `:` (jsonSyntax.ts compares it with the keys of the parsed value, to find
 * duplicates). Jumps from quote to quote with `indexOf`, so long base64 strings are crossed
 * natively. spec/server/fastpath/keysInText.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/keysInText.ts).
 */
export function keysInText(text: string): number {
  let keys = 0;
  let open = text.indexOf('"');
  while (open !== -1) {
    let close = text.indexOf('"', open + 1);
    while (close !== -1 && escapedQuote(text, close)) close = text.indexOf('"', close + 1);
    if (close === -1) break;
    let next = close + 1;
    for (;;) {
      const char = text.charCodeAt(next);
      if (char !== 0x20 && char !== 0x09 && char !== 0x0a && char !== 0x0d) break;
      next += 1;
    }
    if (text.charCodeAt(next) === 0x3a) keys += 1;
    open = text.indexOf('"', next);
  }
  return keys;
}

/** Whether the quote at `index` is escaped (an odd run of backslashes before it). */
function escapedQuote(text: string, index: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(index - 1 - backslashes) === 0x5c) backslashes += 1;
  return backslashes % 2 === 1;
}
