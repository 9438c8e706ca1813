/**
 * TOML parsing and printing for `environmentConfig/read`, printed the way the 0.169.0 binary
 * prints a layer (Rust `toml::to_string`; probed, spec/fixtures/FINDINGS.md "environmentConfig/read"):
 * plain keys first, then each sub-table as a `[a.b]` section in insertion order (a table that
 * holds only sub-tables gets no header of its own, an empty one does), arrays of tables as
 * `[[a.b]]`, inline arrays as `[1, "x"]`, a blank line before every section, and each string in
 * the first form that needs no escapes: `'…'` / `'''…'''` when the basic form would need them,
 * `"""` when it holds a newline. Guarded by spec/server/tomlText.spec.ts.
 */
import { parse, TomlDate, TomlError } from 'smol-toml';

export type TomlValue =
  string | number | bigint | boolean | TomlDate | TomlValue[] | { [key: string]: TomlValue };
export type TomlTable = { [key: string]: TomlValue };

/** Parses a TOML document; integers keep their 64-bit value. Throws `TomlSyntaxError`. */
export function parseToml(text: string): TomlTable {
  try {
    return parse(text, { integersAsBigInt: true }) as TomlTable;
  } catch (error) {
    if (error instanceof TomlError)
      throw new TomlSyntaxError(error.line, error.column, firstLine(error.message));
    throw error;
  }
}

export class TomlSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly detail: string,
  ) {
    super(`${line}:${column}: ${detail}`);
    this.name = 'TomlSyntaxError';
  }
}

function firstLine(message: string): string {
  const text = message.split('\n')[0] ?? message;
  return text.replace(/^Invalid TOML document: /, '');
}

export function isTable(value: TomlValue | undefined): value is TomlTable {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof TomlDate)
  );
}

function isArrayOfTables(value: TomlValue): value is TomlTable[] {
  return Array.isArray(value) && value.length > 0 && value.every(isTable);
}

/** Prints a TOML document as the binary does. */
export function printToml(root: TomlTable): string {
  const out: string[] = [];
  writeTable(root, [], out, true);
  return out.join('');
}

function writeTable(table: TomlTable, path: string[], out: string[], isRoot: boolean): void {
  const entries = Object.entries(table);
  const plain = entries.filter(([, value]) => !isTable(value) && !isArrayOfTables(value));
  if (!isRoot && (plain.length > 0 || entries.length === 0)) {
    section(out, `[${path.map(printKey).join('.')}]`);
  }
  for (const [key, value] of plain) out.push(`${printKey(key)} = ${printValue(value)}\n`);
  for (const [key, value] of entries) {
    if (isTable(value)) writeTable(value, [...path, key], out, false);
    else if (isArrayOfTables(value)) {
      const header = `[[${[...path, key].map(printKey).join('.')}]]`;
      for (const item of value) {
        section(out, header);
        for (const [itemKey, itemValue] of Object.entries(item)) {
          if (!isTable(itemValue) && !isArrayOfTables(itemValue))
            out.push(`${printKey(itemKey)} = ${printValue(itemValue)}\n`);
        }
        for (const [itemKey, itemValue] of Object.entries(item)) {
          if (isTable(itemValue) || isArrayOfTables(itemValue))
            writeTable({ [itemKey]: itemValue }, [...path, key], out, true);
        }
      }
    }
  }
}

function section(out: string[], header: string): void {
  if (out.length > 0) out.push('\n');
  out.push(`${header}\n`);
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function printKey(key: string): string {
  return BARE_KEY.test(key) ? key : basicString(key);
}

function printValue(value: TomlValue): string {
  if (typeof value === 'string') return printString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return printFloat(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value instanceof TomlDate) return printDate(value);
  if (Array.isArray(value)) return `[${value.map(printValue).join(', ')}]`;
  const inner = Object.entries(value).map(([k, v]) => `${printKey(k)} = ${printValue(v)}`);
  return inner.length === 0 ? '{}' : `{ ${inner.join(', ')} }`;
}

/** Rust's `f64` Display: shortest round-trip digits, never an exponent, `.0` when integral. */
export function printFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  if (Object.is(value, -0)) return '-0.0';
  const negative = value < 0;
  const [mantissa, exponentText] = String(Math.abs(value)).split('e');
  const exponent = Number(exponentText ?? 0);
  const [whole, fraction = ''] = (mantissa as string).split('.');
  const digits = `${whole}${fraction}`;
  const point = (whole as string).length + exponent;
  let text: string;
  if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) text = `${digits}${'0'.repeat(point - digits.length)}.0`;
  else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  text = text.replace(/^0+(?=\d)/, '');
  return negative ? `-${text}` : text;
}

/** toml_datetime's Display: fractional seconds without trailing zeros, `Z` kept. */
function printDate(date: TomlDate): string {
  return date
    .toISOString()
    .replace(/\.(\d*?)0*(?=$|Z|[+-]\d\d:\d\d$)/, (_m, digits: string) =>
      digits === '' ? '' : `.${digits}`,
    );
}

/** A control character no literal string may hold (tab allowed; newline only in `'''`). */
function hasControl(text: string): boolean {
  return /[\u0000-\u0008\u000a-\u001f\u007f]/.test(text.replace(/\n/g, ''));
}

function printString(text: string): string {
  const multiline = text.includes('\n');
  const needsEscapes =
    text.includes('\\') || (multiline ? text.includes('"""') : text.includes('"'));
  if (needsEscapes && !hasControl(text) && !text.endsWith("'")) {
    if (multiline) {
      if (!text.includes("'''")) return `'''\n${text}'''`;
    } else if (!text.includes("'")) {
      return `'${text}'`;
    } else if (!text.includes("'''")) {
      return `'''${text}'''`;
    }
  }
  return multiline ? multilineBasicString(text) : basicString(text);
}

const ESCAPES: Record<string, string> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
  '"': '\\"',
  '\\': '\\\\',
};

function escapeChar(char: string): string {
  const known = ESCAPES[char];
  if (known) return known;
  const code = char.charCodeAt(0);
  if (code < 0x20 || code === 0x7f) return `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return char;
}

function basicString(text: string): string {
  return `"${text.replace(/[\u0000-\u001f\u007f"\\]/g, escapeChar)}"`;
}

function multilineBasicString(text: string): string {
  let body = text.replace(/[\u0000-\u0009\u000b-\u001f\u007f\\]/g, escapeChar);
  body = body.replace(/"""/g, '""\\"');
  return `"""\n${body}"""`;
}
