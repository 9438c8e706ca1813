/**
 * A JSON syntax check that words its errors like serde_json (`expected ident at line 1 column
 * 2`), so malformed-input replies match the Rust executor's text. It also refuses duplicate
 * object keys, which the executor's bounded decoder rejects and `JSON.parse` would silently
 * merge. Returns where the first JSON value ends, or the error text.
 */
import { TextDecoder } from 'node:util';
import { keysInText } from './fastpath/keysInText.js';

/** serde_json's default recursion limit. */
const MAX_NESTING = 128;
/** The executor's bound on JSON values per message (object keys not counted). */
const MAX_JSON_VALUES = 262_144;
const SPECIAL_IN_STRING = /["\\\u0000-\u001f]/g;

class SyntaxFailure extends Error {
  constructor(
    readonly reason: string,
    readonly position: number,
  ) {
    super(reason);
  }
}

/**
 * Scans the first JSON value of `text`. `invalidUnicodeAt` marks a character that stands for
 * bytes that were not UTF-8 (see `undecodableJsonError`): inside a string it is serde_json's
 * `invalid unicode code point`, reported at the string's closing quote.
 */
export function scanJson(text: string, invalidUnicodeAt = -1): { end: number } | { error: string } {
  let pos = 0;
  let depth = 0;
  let values = 0;
  const fail = (reason: string, at = pos): never => {
    throw new SyntaxFailure(reason, at);
  };
  const skipWhitespace = (): void => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos] as string)) pos += 1;
  };
  const literal = (word: string): void => {
    for (const char of word) {
      if (pos >= text.length) fail('EOF while parsing a value');
      if (text[pos] !== char) fail('expected ident');
      pos += 1;
    }
  };
  const digits = (): number => {
    const start = pos;
    while (pos < text.length && /[0-9]/.test(text[pos] as string)) pos += 1;
    return pos - start;
  };
  const number = (): void => {
    if (text[pos] === '-') pos += 1;
    if (pos >= text.length) fail('EOF while parsing a value');
    if (text[pos] === '0') pos += 1;
    else if (digits() === 0) fail('invalid number');
    if (text[pos] === '.') {
      pos += 1;
      if (digits() === 0) fail(pos >= text.length ? 'EOF while parsing a value' : 'invalid number');
    }
    if (text[pos] === 'e' || text[pos] === 'E') {
      pos += 1;
      if (text[pos] === '+' || text[pos] === '-') pos += 1;
      if (digits() === 0) fail(pos >= text.length ? 'EOF while parsing a value' : 'invalid number');
    }
  };
  /** Parses a string starting at the opening quote; returns its raw body. */
  const string = (): string => {
    const start = pos + 1;
    pos += 1;
    for (;;) {
      // Jump over plain characters in one step: base64 payloads can be many MiB long.
      SPECIAL_IN_STRING.lastIndex = pos;
      const special = SPECIAL_IN_STRING.exec(text);
      pos = special ? special.index : text.length;
      if (pos >= text.length) fail('EOF while parsing a string');
      const char = text[pos] as string;
      if (char === '"') {
        if (invalidUnicodeAt >= start && invalidUnicodeAt < pos) fail('invalid unicode code point');
        pos += 1;
        return text.slice(start, pos - 1);
      }
      if (char.charCodeAt(0) < 0x20)
        fail('control character (\\u0000-\\u001F) found while parsing a string');
      if (char === '\\') {
        pos += 1;
        if (pos >= text.length) fail('EOF while parsing a string');
        const escape = text[pos] as string;
        if (escape === 'u') {
          for (let index = 1; index <= 4; index += 1) {
            if (pos + index >= text.length) fail('EOF while parsing a string', text.length);
            if (!/[0-9a-fA-F]/.test(text[pos + index] as string))
              fail('invalid escape', pos + index);
          }
          pos += 4;
        } else if (!'"\\/bfnrt'.includes(escape)) {
          fail('invalid escape');
        }
      }
      pos += 1;
    }
  };
  const value = (): void => {
    skipWhitespace();
    if (pos >= text.length) fail('EOF while parsing a value');
    values += 1;
    if (values > MAX_JSON_VALUES) {
      fail(`JSON-RPC message exceeds the limit of ${MAX_JSON_VALUES} JSON values`, pos - 1);
    }
    const char = text[pos] as string;
    if (char === '{' || char === '[') {
      depth += 1;
      if (depth >= MAX_NESTING) fail('recursion limit exceeded');
      if (char === '{') object();
      else list();
      depth -= 1;
      return;
    }
    if (char === '"') {
      string();
      return;
    }
    if (char === 'n') return literal('null');
    if (char === 't') return literal('true');
    if (char === 'f') return literal('false');
    if (char === '-' || /[0-9]/.test(char)) return number();
    fail('expected value');
  };
  const object = (): void => {
    pos += 1;
    const keys = new Set<string>();
    skipWhitespace();
    if (text[pos] === '}') {
      pos += 1;
      return;
    }
    for (;;) {
      skipWhitespace();
      if (pos >= text.length) fail('EOF while parsing an object');
      if (text[pos] !== '"')
        fail(text[pos] === '}' && keys.size > 0 ? 'trailing comma' : 'key must be a string');
      const key = string();
      if (keys.has(key)) fail(`duplicate JSON object key \`${key}\``, pos - 1);
      keys.add(key);
      skipWhitespace();
      if (pos >= text.length) fail('EOF while parsing an object');
      if (text[pos] !== ':') fail('expected `:`');
      pos += 1;
      value();
      skipWhitespace();
      if (pos >= text.length) fail('EOF while parsing an object');
      if (text[pos] === '}') {
        pos += 1;
        return;
      }
      if (text[pos] !== ',') fail('expected `,` or `}`');
      pos += 1;
    }
  };
  const list = (): void => {
    pos += 1;
    skipWhitespace();
    if (text[pos] === ']') {
      pos += 1;
      return;
    }
    for (;;) {
      value();
      skipWhitespace();
      if (pos >= text.length) fail('EOF while parsing a list');
      if (text[pos] === ']') {
        pos += 1;
        return;
      }
      if (text[pos] !== ',') fail('expected `,` or `]`');
      pos += 1;
      skipWhitespace();
      if (text[pos] === ']') fail('trailing comma');
    }
  };
  try {
    value();
    // serde_json's `from_str` / `from_slice`: only whitespace may follow the value.
    skipWhitespace();
    if (pos < text.length) fail('trailing characters');
    return { end: pos };
  } catch (error) {
    if (!(error instanceof SyntaxFailure)) throw error;
    return { error: `${error.reason} at ${lineAndColumn(text, error.position)}` };
  }
}

/** serde_json's position: 1-based line, column of the offending character (0 at a line start EOF). */
function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n');
  const column = position < text.length ? position - lineStart : position - lineStart - 1;
  return `line ${line} column ${column}`;
}

/** The serde_json error text for `text`, or `undefined` when it starts with a valid JSON value. */
export function jsonSyntaxError(text: string): string | undefined {
  const scanned = scanJson(text);
  return 'error' in scanned ? scanned.error : undefined;
}

/** Whether the quote at `index` is escaped (preceded by an odd run of backslashes). */
/** Object keys and values (keys not counted) of a parsed value; -1 once nested too deep. */
function countTree(
  value: unknown,
  depth: number,
  counts: { keys: number; values: number },
): boolean {
  counts.values += 1;
  if (typeof value !== 'object' || value === null) return true;
  if (depth + 1 >= MAX_NESTING) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!countTree(item, depth + 1, counts)) return false;
    return true;
  }
  for (const key in value) {
    counts.keys += 1;
    if (!countTree((value as Record<string, unknown>)[key], depth + 1, counts)) return false;
  }
  return true;
}

/** A text shorter than this can neither nest `MAX_NESTING` deep nor hold `MAX_JSON_VALUES`. */
const SHORT_TEXT = 2 * MAX_NESTING;

/**
 * A backslash, or a key token (a string followed by `:`) written again later as a key token.
 * In a text without a backslash every `"` delimits a string, so this finds every duplicate
 * key, and also a key repeated in another object, which is allowed (the count below then
 * decides). Native regex code: cold, a fraction of the count.
 */
const BACKSLASH_OR_REPEATED_KEY = /\\|"([^"]*)"[ \t\n\r]*:[^]*"\1"[ \t\n\r]*:/;

/**
 * Whether a text JSON.parse accepted (so one valid value) stays within the limits and has no
 * duplicate object keys, given `value`, what JSON.parse made of it.
 */
function withinLimitsAndUnique(text: string, value: unknown): boolean {
  if (text.length < SHORT_TEXT && !BACKSLASH_OR_REPEATED_KEY.test(text)) return true;
  // The string tokens followed by `:` are exactly the object keys as written, duplicates
  // included; the parsed value holds each key of an object once.
  const counts = { keys: 0, values: 0 };
  return (
    countTree(value, 0, counts) &&
    counts.keys === keysInText(text) &&
    counts.values <= MAX_JSON_VALUES
  );
}

/**
 * Parses the first JSON value of `text` with exactly the acceptance of `scanJson` (duplicate
 * keys, nesting and value-count limits included). The common case — a well-formed message —
 * takes native `JSON.parse` plus a check of the result: the character-level scan, slow until
 * the JIT has warmed up, only runs to word an error or when something follows the value.
 */
export function parseJson(text: string): { value: unknown } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return slowParse(text);
  }
  return withinLimitsAndUnique(text, value) ? { value } : slowParse(text);
}

function slowParse(text: string): { value: unknown } | { error: string } {
  const scanned = scanJson(text);
  if ('error' in scanned) return scanned;
  return { value: JSON.parse(text.slice(0, scanned.end)) as unknown };
}

/** Index of the first byte of `bytes` that does not start a well-formed UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let index = 0;
  while (index < bytes.length) {
    const lead = bytes[index] as number;
    if (lead < 0x80) {
      index += 1;
      continue;
    }
    // Continuation bytes needed, and the range of the first one (RFC 3629 §4).
    let following: number;
    let low = 0x80;
    let high = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf) following = 1;
    else if (lead >= 0xe0 && lead <= 0xef) {
      following = 2;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      following = 3;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else return index;
    const second = bytes[index + 1];
    if (second === undefined || second < low || second > high) return index;
    for (let offset = 2; offset <= following; offset += 1) {
      const next = bytes[index + offset];
      if (next === undefined || (next & 0xc0) !== 0x80) return index;
    }
    index += following + 1;
  }
  return -1;
}

/**
 * The serde_json error for a message that is not UTF-8 (the binary parses a Binary WebSocket
 * message as bytes): bad bytes inside a string are an invalid code point, anywhere else they
 * are an unexpected character (after the value: `trailing characters`). Undefined only for
 * bytes that are UTF-8 JSON after all.
 */
export function undecodableJsonError(bytes: Uint8Array): string | undefined {
  const invalid = firstInvalidUtf8(bytes);
  const decoder = new TextDecoder(); // not fatal: bad bytes become U+FFFD
  const text = decoder.decode(bytes);
  const invalidAt = invalid === -1 ? -1 : decoder.decode(bytes.subarray(0, invalid)).length;
  const scanned = scanJson(text, invalidAt);
  return 'error' in scanned ? scanned.error : undefined;
}
