/**
 * What every client call does with its params, its result and its failure, whichever path
 * (src/client/callRouter.ts, src/client/fastpath/directCall.ts) carries it.
 */
import { DisconnectedError, DisconnectReason, isTransportClosed } from '../protocol/errors.js';
import { METHODS, type ClientMethod, type ParamsOf, type ResultOf } from '../protocol/methods.js';
import { decodeResult } from './wireDecode.js';

/** Params of a call, or a function building them when the request is sent. */
export type CallParams<M extends ClientMethod> = ParamsOf<M> | (() => ParamsOf<M>);

/** The params to send now. */
export function buildParams<M extends ClientMethod>(params: CallParams<M>): ParamsOf<M> {
  return typeof params === 'function' ? (params as () => ParamsOf<M>)() : params;
}

/** A result decoded with the method table's schema for `method`. */
export function decodeResultOf<M extends ClientMethod>(method: M, raw: unknown): ResultOf<M> {
  return decodeResult(method, METHODS[method].result, raw) as ResultOf<M>;
}

/** Every transport-closed error becomes `exec-server transport disconnected` (spec §11.3). */
export function mapCallError(error: unknown): unknown {
  if (
    isTransportClosed(error) &&
    !(error instanceof DisconnectedError && error.message === DisconnectReason.recovering)
  ) {
    return new DisconnectedError(DisconnectReason.transportDisconnected, { cause: error });
  }
  return error;
}
