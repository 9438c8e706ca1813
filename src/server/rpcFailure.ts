/**
 * The error a request handler throws to answer with a JSON-RPC error object. The connection
 * processor turns it into `{"error":{"code","message"},"id"}`; any other thrown value becomes
 * `-32603` with its message.
 */
import { ErrorCode } from '../protocol/errors.js';

export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcFailure';
  }

  static invalidRequest(message: string): RpcFailure {
    return new RpcFailure(ErrorCode.invalidRequest, message);
  }

  static invalidParams(message: string): RpcFailure {
    return new RpcFailure(ErrorCode.invalidParams, message);
  }

  static internal(message: string): RpcFailure {
    return new RpcFailure(ErrorCode.internalError, message);
  }

  static notFound(message: string): RpcFailure {
    return new RpcFailure(ErrorCode.notFound, message);
  }
}
