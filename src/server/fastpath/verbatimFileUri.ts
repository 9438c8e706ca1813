/**
 * The common `file:` URI without the URL parser (hostPath.ts). Invariant: a path returned here
 * is the one `pathFromUriParsed` gives for the same URI; undefined sends the URI to the parser.
 * spec/server/fastpath/verbatimFileUri.spec.ts holds it to the parser and to the plain twin
 * (bench/plain/server/fastpath/verbatimFileUri.ts).
 */

/**
 * `file:///…` URIs whose path the URL parser would leave exactly as written: only characters
 * it neither escapes nor decodes, no `%`, `\\`, `:`, `|`, `?`, `#`, whitespace or non-ASCII,
 * and no dot segment (`/./`, `/..` at the end, …).
 */
const VERBATIM_FILE_URI = /^file:\/\/(?!.*\/\.\.?(?:\/|$))\/[A-Za-z0-9\-._~!$&'()*+,;=@/]*$/;

/** The native path of a verbatim `file:///…` URI, else undefined. */
export function verbatimFilePath(uri: string): string | undefined {
  return VERBATIM_FILE_URI.test(uri) ? uri.slice('file://'.length) : undefined;
}
