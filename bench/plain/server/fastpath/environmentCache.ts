/** Plain twin of src/server/fastpath/environmentCache.ts: worked out on every call. */
export function cachedShell(detect: () => { name: string; path: string }): {
  name: string;
  path: string;
} {
  return detect();
}

export function cachedDirectoryUri(_path: string, convert: () => string | null): string | null {
  return convert();
}
