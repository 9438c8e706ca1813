/**
 * `file:` URI ⇄ native path conversion on this (POSIX) executor, with the binary's error texts.
 * Syntax errors (not a URI, wrong scheme, query, …) are params errors (-32602); a well-formed
 * URI that names a foreign host path (`file://server/share`, `file:///C:/x`) is an
 * InvalidInput I/O error, which fs methods answer with -32600 (spec §7.1).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PathUriError } from '../protocol/pathUri.js';
import { verbatimFilePath } from './fastpath/verbatimFileUri.js';
import { RpcFailure } from './rpcFailure.js';

const HOST_OS =
  process.platform === 'darwin'
    ? 'macos'
    : process.platform === 'win32'
      ? 'windows'
      : process.platform;

/** Converts a `file:` URI to a native absolute path, or throws a `PathUriError`. */
export function pathFromUri(uri: string): string {
  return verbatimFilePath(uri) ?? pathFromUriParsed(uri);
}

/** `pathFromUri` through the WHATWG URL parser: every URI, with the binary's error texts. */
export function pathFromUriParsed(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // Same wording as Rust's `url::ParseError` for the two common cases.
    const detail = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)
      ? 'invalid URL'
      : 'relative URL without a base';
    throw new PathUriError(`invalid URI: ${detail}`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'file') throw new PathUriError(`unsupported path URI scheme \`${scheme}\``);
  if (url.username !== '' || url.password !== '')
    throw new PathUriError('credentials are not allowed in path URIs');
  if (url.port !== '') throw new PathUriError('ports are not allowed in path URIs');
  if (url.search !== '') throw new PathUriError('query parameters are not allowed in path URIs');
  if (url.hash !== '') throw new PathUriError('fragments are not allowed in path URIs');
  const foreign = url.hostname !== '' || /^\/[A-Za-z](:|%3A)/i.test(url.pathname);
  if (foreign) throw new PathUriError(`'${uri}' is invalid on '${HOST_OS}'`, { foreignHost: true });
  try {
    return fileURLToPath(url);
  } catch {
    throw new PathUriError(`'${uri}' is invalid on '${HOST_OS}'`, { foreignHost: true });
  }
}

/** Converts a native absolute path to its `file:` URI. */
export function uriFromPath(path: string): string {
  return pathToFileURL(path).href;
}

/** For fs methods: syntax errors → -32602, foreign host paths → -32600. */
export function fsPath(uri: string): string {
  try {
    return pathFromUri(uri);
  } catch (error) {
    if (error instanceof PathUriError) {
      throw error.foreignHost
        ? RpcFailure.invalidRequest(error.message)
        : RpcFailure.invalidParams(error.message);
    }
    throw error;
  }
}

/** For `process/start` `cwd`: every failure is -32602; foreign paths get the `cwd URI` prefix. */
export function cwdPath(uri: string): string {
  try {
    return pathFromUri(uri);
  } catch (error) {
    if (error instanceof PathUriError) {
      throw RpcFailure.invalidParams(
        error.foreignHost
          ? `cwd URI \`${uri}\` is not valid on this exec-server host: ${error.message}`
          : error.message,
      );
    }
    throw error;
  }
}
