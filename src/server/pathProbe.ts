/** Yes/no questions about a path, answered `false` for any error (missing, no access, …). */
import { lstat, stat } from 'node:fs/promises';

/** The path resolves (symlinks followed) to something. */
export function pathExists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** An entry of that name exists, a dangling symlink included. */
export function entryExists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

/** The path resolves to a directory. */
export function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}
