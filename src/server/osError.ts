/**
 * Node system errors rendered the way the Rust executor renders `std::io::Error`
 * (`<strerror text> (os error <errno>)`), and mapped to JSON-RPC codes per spec §7.3:
 * NotFound → -32004, InvalidInput/PermissionDenied → -32600, anything else → -32603.
 */
import { errorMessage } from '../protocol/errorMessage.js';
import { constants } from 'node:os';
import { ErrorCode } from '../protocol/errors.js';
import { RpcFailure } from './rpcFailure.js';

/** Linux `strerror` texts for the errno values the executor can plausibly meet. */
const STRERROR: Record<string, string> = {
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  ESRCH: 'No such process',
  EINTR: 'Interrupted system call',
  EIO: 'Input/output error',
  ENXIO: 'No such device or address',
  E2BIG: 'Argument list too long',
  ENOEXEC: 'Exec format error',
  EBADF: 'Bad file descriptor',
  ECHILD: 'No child processes',
  EAGAIN: 'Resource temporarily unavailable',
  ENOMEM: 'Cannot allocate memory',
  EACCES: 'Permission denied',
  EFAULT: 'Bad address',
  EBUSY: 'Device or resource busy',
  EEXIST: 'File exists',
  EXDEV: 'Invalid cross-device link',
  ENODEV: 'No such device',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EINVAL: 'Invalid argument',
  ENFILE: 'Too many open files in system',
  EMFILE: 'Too many open files',
  ENOTTY: 'Inappropriate ioctl for device',
  ETXTBSY: 'Text file busy',
  EFBIG: 'File too large',
  ENOSPC: 'No space left on device',
  ESPIPE: 'Illegal seek',
  EROFS: 'Read-only file system',
  EMLINK: 'Too many links',
  EPIPE: 'Broken pipe',
  ENAMETOOLONG: 'File name too long',
  ENOTEMPTY: 'Directory not empty',
  ELOOP: 'Too many levels of symbolic links',
  ENOTSUP: 'Operation not supported',
  EOPNOTSUPP: 'Operation not supported',
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  ETIMEDOUT: 'Connection timed out',
};

interface SystemError {
  code: string;
  message: string;
}

// Duck-typed: errors from Node core may come from another realm (e.g. under Jest's VM).
function isSystemError(error: unknown): error is SystemError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as Partial<SystemError>).code === 'string' &&
    typeof (error as Partial<SystemError>).message === 'string'
  );
}

/** `No such file or directory (os error 2)` for a Node system error; its message otherwise. */
export function describeOsError(error: unknown): string {
  if (!isSystemError(error)) return errorMessage(error);
  const errno = (constants.errno as Record<string, number>)[error.code];
  const text = STRERROR[error.code];
  if (text === undefined || errno === undefined) return error.message;
  return `${text} (os error ${errno})`;
}

/** The JSON-RPC code the executor uses for an I/O error of this kind (spec §7.3). */
function osErrorCode(error: unknown): number {
  if (!isSystemError(error)) return ErrorCode.internalError;
  switch (error.code) {
    case 'ENOENT':
      return ErrorCode.notFound;
    case 'EACCES':
    case 'EPERM':
    case 'EINVAL':
      return ErrorCode.invalidRequest;
    default:
      return ErrorCode.internalError;
  }
}

/** Wraps an I/O error as the `RpcFailure` the fs handlers answer with. */
export function fsFailure(error: unknown): RpcFailure {
  if (error instanceof RpcFailure) return error;
  return new RpcFailure(osErrorCode(error), describeOsError(error));
}
