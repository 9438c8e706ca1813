/**
 * Paths on the wire are `file:` URIs (spec/protocol.md §7.1). This module converts native
 * POSIX absolute paths to and from that form the way the 0.169.0 executor does, and rejects
 * anything the executor would reject (native paths, other schemes, user info, ports,
 * queries, fragments, Windows-style URIs on a POSIX host).
 */
import { concatBytes } from '../platform/bytes.js';
import { platform } from '../platform/index.js';
import * as z from 'zod';
import { ExecServerError } from './errors.js';

/**
 * A path URI could not be built or understood. The message says which part was wrong.
 * `foreignHost`: the URI is well formed but names a path of another OS (the executor answers
 * that as an I/O error, not a params error, spec §7.1).
 */
export class PathUriError extends ExecServerError {
  readonly foreignHost: boolean;

  constructor(message: string, options: { foreignHost?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.foreignHost = options.foreignHost ?? false;
  }
}

/**
 * Bytes kept literal in a path segment: RFC 3986 unreserved characters plus the sub-delims
 * and `:`/`@` that the WHATWG path percent-encode set leaves alone. Everything else (space,
 * `"`, `#`, `%`, `<`, `>`, `?`, `\`, `` ` ``, `{`, `}`, controls, non-ASCII) is %XX-encoded.
 */
const LITERAL_PATH_BYTE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@[\]^|]$/;

/** An absolute path made only of literal bytes: its URI is `file://` + the path itself. */
const LITERAL_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@[\]^|/]*$/;

/**
 * The path part of a `file:///` URI that decodes to itself: printable ASCII without `%`,
 * `?`, `#` or `\`. (`\` is literal on POSIX hosts, but keep it on the general path.)
 */
const VERBATIM_URI_PATH = /^\/[\x21-\x22\x24\x26-\x3e\x40-\x5b\x5d-\x7e]*$/;

/** `/C:/...` or `/c%3A/...`: a Windows drive, which a POSIX host rejects. */
const WINDOWS_DRIVE_PATH = /^\/[A-Za-z](:|%3A)(\/|$)/i;

/** The executor's fallback for host paths that have no valid URI form (§7.1). */
const OPAQUE_PREFIX = 'file:///%00/bad/path/';

function encodeSegment(segment: string): string {
  let out = '';
  for (const byte of platform.utf8Encode(segment)) {
    const char = String.fromCharCode(byte);
    out +=
      byte < 0x80 && LITERAL_PATH_BYTE.test(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `/home/u/a b.txt` → `file:///home/u/a%20b.txt`. Throws PathUriError for relative paths. */
export function pathToFileUri(path: string): string {
  if (!path.startsWith('/')) {
    throw new PathUriError(
      `path \`${path}\` is not absolute; exec-server paths must be absolute POSIX paths`,
    );
  }
  if (LITERAL_PATH.test(path)) return `file://${path}`; // the usual case, no encoding to do
  if (path.includes('\0')) {
    throw new PathUriError(`path \`${path}\` contains a NUL byte`);
  }
  return `file://${path.split('/').map(encodeSegment).join('/')}`;
}

/** Parsed pieces of a `file:` URI before host-specific interpretation. */
interface FileUriParts {
  host: string;
  /** Still percent-encoded. */
  path: string;
}

function splitFileUri(uri: string): FileUriParts {
  if (!/^file:/i.test(uri)) {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1];
    throw new PathUriError(
      scheme === undefined
        ? `\`${uri}\` is not a file: URI; convert native paths with pathToFileUri()`
        : `\`${uri}\` uses scheme \`${scheme}\`; only file: URIs are paths`,
    );
  }
  if (uri.includes('?')) throw new PathUriError(`file URI \`${uri}\` must not have a query`);
  if (uri.includes('#')) throw new PathUriError(`file URI \`${uri}\` must not have a fragment`);
  const rest = uri.slice('file:'.length);
  if (!rest.startsWith('//')) {
    throw new PathUriError(`file URI \`${uri}\` must start with file:///`);
  }
  const afterSlashes = rest.slice(2);
  const slash = afterSlashes.indexOf('/');
  const authority = slash === -1 ? afterSlashes : afterSlashes.slice(0, slash);
  const path = slash === -1 ? '/' : afterSlashes.slice(slash);
  if (authority.includes('@'))
    throw new PathUriError(`file URI \`${uri}\` must not carry a user name or password`);
  if (authority.includes(':')) throw new PathUriError(`file URI \`${uri}\` must not carry a port`);
  return { host: authority.toLowerCase(), path };
}

const PERCENT_ESCAPE = /%[0-9A-Fa-f]{2}/g;

/** `%XX` escapes become their bytes; everything else is kept as UTF-8. */
function percentDecodeToBytes(text: string): Uint8Array {
  const parts: Uint8Array[] = [];
  let literalStart = 0;
  for (const match of text.matchAll(PERCENT_ESCAPE)) {
    parts.push(platform.utf8Encode(text.slice(literalStart, match.index)));
    parts.push(Uint8Array.of(parseInt(match[0].slice(1), 16)));
    literalStart = match.index + 3;
  }
  parts.push(platform.utf8Encode(text.slice(literalStart)));
  return concatBytes(...parts);
}

/** The native path of a plain `file:///...` URI that needs no decoding, else undefined. */
function verbatimPath(uri: string): string | undefined {
  if (!uri.startsWith('file:///')) return undefined;
  const path = uri.slice('file://'.length);
  if (!VERBATIM_URI_PATH.test(path) || WINDOWS_DRIVE_PATH.test(path)) return undefined;
  return path;
}

/**
 * `file:///home/u/a%20b.txt` → raw path bytes. Handles the executor's opaque fallback form
 * (`file:///%00/bad/path/<base64url>`) for non-UTF-8 paths.
 */
export function fileUriToPathBytes(uri: string): Uint8Array {
  const verbatim = verbatimPath(uri);
  if (verbatim !== undefined) return platform.utf8Encode(verbatim); // ASCII only
  const { host, path } = splitFileUri(uri);
  if (host !== '' && host !== 'localhost') {
    throw new PathUriError(
      `file URI \`${uri}\` names host \`${host}\`; a UNC path is not valid on a POSIX exec-server host`,
    );
  }
  const normalized = `file://${path}`;
  if (normalized.startsWith(OPAQUE_PREFIX)) {
    return platform.base64UrlDecode(normalized.slice(OPAQUE_PREFIX.length));
  }
  if (WINDOWS_DRIVE_PATH.test(path)) {
    throw new PathUriError(
      `file URI \`${uri}\` is a Windows drive path; it is not valid on a POSIX exec-server host`,
    );
  }
  const bytes = percentDecodeToBytes(path);
  if (bytes.includes(0))
    throw new PathUriError(`file URI \`${uri}\` decodes to a path with a NUL byte`);
  return bytes;
}

/** `file:///home/u/a%20b.txt` → `/home/u/a b.txt`. Throws PathUriError for non-file URIs. */
export function fileUriToPath(uri: string): string {
  const verbatim = verbatimPath(uri);
  if (verbatim !== undefined) return verbatim;
  const bytes = fileUriToPathBytes(uri);
  const text = platform.utf8DecodeStrict(bytes);
  if (text === undefined) {
    throw new PathUriError(
      `file URI \`${uri}\` names a path that is not valid UTF-8; use fileUriToPathBytes()`,
    );
  }
  return text;
}

/**
 * Raw path bytes → URI. Valid UTF-8 uses the normal form; other byte strings use the
 * executor's opaque fallback.
 */
export function pathBytesToFileUri(path: Uint8Array): string {
  const text = platform.utf8DecodeStrict(path);
  if (text !== undefined) return pathToFileUri(text);
  return `${OPAQUE_PREFIX}${platform.base64UrlEncode(path)}`;
}

/** True when `value` is a file: URI this host can interpret. */
export function isFileUri(value: string): boolean {
  try {
    fileUriToPathBytes(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A `file:` URI on the wire. Validation is syntactic (scheme and no user info, port, query
 * or fragment); host conventions are checked when the path is used.
 */
export const PathUri = z.string().refine(isPathUri, {
  message: 'expected a file: URI (file:///absolute/path)',
});

/** What `PathUri` accepts: a syntactically valid `file:` URI. */
export function isPathUri(value: string): boolean {
  if (verbatimPath(value) !== undefined) return true;
  try {
    splitFileUri(value);
    return true;
  } catch {
    return false;
  }
}
export type PathUri = z.infer<typeof PathUri>;
