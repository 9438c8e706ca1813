/** Plain twin of src/server/fastpath/metadataStat.ts: the asynchronous calls. */
import { constants, type Stats } from 'node:fs';
import { lstat, stat } from 'node:fs/promises';

export interface MetadataStats {
  readonly link: Stats;
  readonly target: Stats;
}

export async function metadataStats(path: string, follow: boolean): Promise<MetadataStats> {
  const link = await lstat(path);
  const isSymlink = (link.mode & constants.S_IFMT) === constants.S_IFLNK;
  return { link, target: isSymlink && follow ? await stat(path) : link };
}
