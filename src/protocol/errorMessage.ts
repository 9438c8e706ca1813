/**
 * The message of anything thrown, on either side. Uses duck typing rather than
 * `instanceof Error`, because errors raised by Node internals may come from another realm
 * (e.g. under Jest's VM modules).
 */
export function errorMessage(error: unknown): string {
  if (
    typeof error === 'object' &&
    error !== null &&
    'message' in error &&
    typeof error.message === 'string'
  ) {
    return error.message;
  }
  return String(error);
}
