/**
 * What `environmentInfo` (environmentInfo.ts) works out once per process instead of per
 * `initialize`. spec/server/fastpath/environmentCache.spec.ts holds it to the plain twin
 * (bench/plain/server/fastpath/environmentCache.ts), which works it out every time.
 */

/** The reported shell, detected once, as a program reads `$SHELL` when it starts: a `chsh`
 * while the executor runs shows after its restart. */
let shell: { name: string; path: string } | undefined;

export function cachedShell(detect: () => { name: string; path: string }): {
  name: string;
  path: string;
} {
  return (shell ??= detect());
}

/**
 * The `file:` URIs of the directories reported, kept once converted: every `initialize`
 * reports the same few (at most 16 are kept; the paths come from this process's own state, so
 * the map cannot grow with input).
 */
const directoryUris = new Map<string, string | null>();

export function cachedDirectoryUri(path: string, convert: () => string | null): string | null {
  let uri = directoryUris.get(path);
  if (uri === undefined) {
    uri = convert();
    if (directoryUris.size < 16) directoryUris.set(path, uri);
  }
  return uri;
}
