/**
 * The `lstat` (and `stat` of a followed symlink) behind `fs/getMetadata` (filesystem.ts),
 * synchronous: a metadata lookup takes microseconds, a trip through the libuv thread pool two
 * thread hand-offs. Throws the OS error. spec/server/fastpath/metadataStat.spec.ts holds it to
 * the plain twin (bench/plain/server/fastpath/metadataStat.ts), the asynchronous calls.
 */
import { constants, lstatSync, statSync, type Stats } from 'node:fs';

/** `link` from lstat; `target` is `link` unless a symlink was followed. */
export interface MetadataStats {
  readonly link: Stats;
  readonly target: Stats;
}

export function metadataStats(
  path: string,
  follow: boolean,
): MetadataStats | Promise<MetadataStats> {
  const link = lstatSync(path);
  const isSymlink = (link.mode & constants.S_IFMT) === constants.S_IFLNK;
  return { link, target: isSymlink && follow ? statSync(path) : link };
}
