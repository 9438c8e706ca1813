/**
 * One `fs/*` call that names a path: the native path becomes a `file:` URI when the request is
 * sent, and the executor's not-found (`-32004`) becomes a NotFoundError naming the path.
 */
import type { Observable } from 'rxjs';
import { ErrorCode, NotFoundError, ServerError } from '../protocol/errors.js';
import type { ClientMethod, ParamsOf, ResultOf } from '../protocol/methods.js';
import { pathToFileUri } from '../protocol/pathUri.js';
import type { SessionCore } from './sessionCore.js';

/** The fs methods that name a path. */
export type FsPathMethod = Extract<
  ClientMethod,
  | 'fs/readFile'
  | 'fs/writeFile'
  | 'fs/createDirectory'
  | 'fs/getMetadata'
  | 'fs/canonicalize'
  | 'fs/readDirectory'
  | 'fs/walk'
  | 'fs/remove'
  | 'fs/copy'
  | 'fs/open'
>;

export function fsPathCall<M extends FsPathMethod>(
  core: SessionCore,
  method: M,
  path: string,
  buildParams: (uri: string) => ParamsOf<M>,
): Observable<ResultOf<M>> {
  return core.calls.call(method, () => buildParams(pathToFileUri(path)), {
    mapError: (error) =>
      error instanceof ServerError &&
      error.code === ErrorCode.notFound &&
      !(error instanceof NotFoundError)
        ? new NotFoundError(error.serverMessage, path)
        : error,
  });
}
