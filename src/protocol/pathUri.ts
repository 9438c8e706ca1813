/**
 * Paths on the wire are `file:` URIs (spec/protocol.md §7.1). This module converts native
 * POSIX absolute paths to and from that form the way the 0.169.0 executor does, and rejects
 * anything the executor would reject (native paths, other schemes, user info, ports,
 * queries, fragments, Windows-style URIs on a POSIX host).
 */
import { z } from 'zod';
import { ExecServerError } from './errors.js';

/** A path URI could not be built or understood. The message says which part was wrong. */
export class PathUriError extends ExecServerError {}

/**
 * Bytes kept literal in a path segment: RFC 3986 unreserved characters plus the sub-delims
 * and `:`/`@` that the WHATWG path percent-encode set leaves alone. Everything else (space,
 * `"`, `#`, `%`, `<`, `>`, `?`, `\`, `` ` ``, `{`, `}`, controls, non-ASCII) is %XX-encoded.
 */
const LITERAL_PATH_BYTE = /^[A-Za-z0-9\-._~!$&'()*+,;=:@[\]^|]$/;

/** The executor's fallback for host paths that have no valid URI form (§7.1). */
const OPAQUE_PREFIX = 'file:///%00/bad/path/';

function encodeSegment(segment: string): string {
  let out = '';
  for (const byte of Buffer.from(segment, 'utf8')) {
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

function percentDecodeToBytes(text: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '%' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes);
}

/**
 * `file:///home/u/a%20b.txt` → raw path bytes. Handles the executor's opaque fallback form
 * (`file:///%00/bad/path/<base64url>`) for non-UTF-8 paths.
 */
export function fileUriToPathBytes(uri: string): Buffer {
  const { host, path } = splitFileUri(uri);
  if (host !== '' && host !== 'localhost') {
    throw new PathUriError(
      `file URI \`${uri}\` names host \`${host}\`; a UNC path is not valid on a POSIX exec-server host`,
    );
  }
  const normalized = `file://${path}`;
  if (normalized.startsWith(OPAQUE_PREFIX)) {
    return Buffer.from(normalized.slice(OPAQUE_PREFIX.length), 'base64url');
  }
  if (/^\/[A-Za-z](:|%3A)(\/|$)/i.test(path)) {
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
  const bytes = fileUriToPathBytes(uri);
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) {
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
  const bytes = Buffer.from(path.buffer, path.byteOffset, path.byteLength);
  const text = bytes.toString('utf8');
  if (Buffer.from(text, 'utf8').equals(bytes)) return pathToFileUri(text);
  return `${OPAQUE_PREFIX}${bytes.toString('base64url')}`;
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
export const PathUri = z.string().refine(
  (value) => {
    try {
      splitFileUri(value);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'expected a file: URI (file:///absolute/path)' },
);
export type PathUri = z.infer<typeof PathUri>;
