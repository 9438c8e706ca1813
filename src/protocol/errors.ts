/**
 * The error taxonomy shared by every layer (spec/protocol.md §17). Each class carries the
 * exact display text of its upstream counterpart so logs read the same on both stacks.
 */

/** Base class of every error execrx raises. `instanceof ExecServerError` catches them all. */
export class ExecServerError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Canonical `Disconnected` messages (spec §17.1). */
export const DisconnectReason = {
  transportDisconnected: 'exec-server transport disconnected',
  executorReplaced: 'exec-server executor was replaced',
  recovering: 'exec-server environment is recovering',
  notReady: 'exec-server environment is not ready',
  superseded: 'connection attempt was superseded',
} as const;

/**
 * The session behind a call is gone: its transport dropped, it was retired by a refresh, or it
 * failed. Retry on a fresh session (the lazy client does this for you).
 */
export class DisconnectedError extends ExecServerError {}

/** The peer broke the protocol, or a client-side invariant failed. */
export class ProtocolError extends ExecServerError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`exec-server protocol error: ${detail}`, options);
    this.detail = detail;
  }
  readonly detail: string;
}

/** The executor answered a request with a JSON-RPC error object. */
export class ServerError extends ExecServerError {
  constructor(
    readonly code: number,
    readonly serverMessage: string,
  ) {
    super(`exec-server rejected request (${code}): ${serverMessage}`);
  }
}

/** A deadline passed: connect, initialize, or one RPC. */
export class TimeoutError extends ExecServerError {}

/** The WebSocket (or other transport) could not be opened. */
export class ConnectError extends ExecServerError {}

/** A message or result did not decode into the expected shape. */
export class JsonError extends ExecServerError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`failed to serialize or deserialize exec-server JSON: ${detail}`, options);
  }
}

/**
 * A message too large for the transport to carry: sending it would make the peer drop the
 * connection (the executor's WebSocket accepts 64 MiB a message). Nothing was sent; the
 * connection is fine. Send large files in pieces (`writeFileStream`).
 */
export class MessageTooLargeError extends ExecServerError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `exec-server message of ${bytes} bytes is over the ${limit}-byte limit of the connection; ` +
        'send large data in pieces (for files: writeFileStream)',
    );
  }
}

/** Transport-closed class of errors (spec §17.2). */
export function isTransportClosed(error: unknown): boolean {
  return (
    error instanceof DisconnectedError ||
    (error instanceof ServerError &&
      error.code === -32000 &&
      error.serverMessage === 'JSON-RPC transport closed')
  );
}

/** JSON-RPC error codes of the Codex dialect (spec §2.4). */
export const ErrorCode = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  notFound: -32004,
  sessionAlreadyAttached: -32010,
  transportClosed: -32000,
} as const;

/**
 * The executor has no file or directory at `path` (JSON-RPC `-32004`). The server's OS message
 * is kept in `serverMessage`; `path` is the native path the call named.
 */
export class NotFoundError extends ServerError {
  constructor(
    serverMessage: string,
    readonly path: string,
  ) {
    super(-32004, serverMessage);
    this.message = `exec-server rejected request (-32004): ${serverMessage}: ${path}`;
  }
}

/**
 * One process's event stream failed on the client side (reorder-buffer overflow, lost
 * history during recovery, …). The process may still run on the executor; terminate it if
 * you no longer need it.
 */
export class ProcessFailedError extends ExecServerError {
  constructor(
    readonly processId: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** `process/write` was answered with a status other than `accepted` (stdin not writable). */
export class ProcessWriteRejectedError extends ExecServerError {
  constructor(
    readonly processId: string,
    readonly status: string,
  ) {
    super(
      status === 'stdinClosed'
        ? `cannot write to process ${processId}: its stdin is closed (start it with pipeStdin: true or tty: true)`
        : `cannot write to process ${processId}: executor answered ${status}`,
    );
  }
}
