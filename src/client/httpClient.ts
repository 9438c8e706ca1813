/**
 * HTTP requests sent from the executor's host (`http/request`, spec/protocol.md §8): streamed
 * (`request`: the response arrives as soon as the headers do, and the body follows as
 * `http/request/bodyDelta` notifications) or buffered (`fetch`: the whole body in the answer).
 * HTTP error statuses are responses, not errors.
 */
import { type Observable, defer, finalize, map } from 'rxjs';
import { encodeBase64 } from '../protocol/base64.js';
import type { HttpRedirectPolicy } from '../protocol/http.js';
import type { ParamsOf } from '../protocol/methods.js';
import type { HttpBodyStream } from './httpBodyStreams.js';
import type { SessionCore } from './sessionCore.js';
import { decodeValidatedBase64 } from '../protocol/base64.js';

/** One request header. */
export interface HttpRequestHeader {
  readonly name: string;
  readonly value: string;
  /** Take the value from this environment variable of the executor (capability `httpHeaderEnvVars`). */
  readonly valueEnvVar?: string;
}

/** One request for `HttpClient.request`. */
export interface HttpRequest {
  /** `GET`, `POST`, … */
  readonly method: string;
  /** Absolute `http://` or `https://` URL. */
  readonly url: string;
  /** Order and repeats are preserved. */
  readonly headers?: readonly HttpRequestHeader[];
  readonly body?: Uint8Array | string;
  /** Bounds the whole exchange, body included. Default: no timeout. */
  readonly timeoutMs?: number;
  /** Default `follow`. */
  readonly redirectPolicy?: HttpRedirectPolicy;
}

/** The response once its headers arrived; the body follows as `body$`. */
export interface HttpResponse {
  readonly status: number;
  /** Lower-case names, repeats kept, non-visible-ASCII values dropped by the executor. */
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  /**
   * The body, delta by delta (each at most 1 MiB). Subscribe once. Frames that arrive before
   * you subscribe are queued (256 per stream, 16 MiB per session; beyond that the stream
   * fails). Errors with ProtocolError when the executor reports a failure or skips a
   * sequence number, and with DisconnectedError when the transport is lost: body streams
   * never survive a reconnect.
   */
  readonly body$: Observable<Uint8Array>;
}

/** A buffered response: the whole body at once. */
export interface BufferedHttpResponse {
  readonly status: number;
  readonly headers: readonly { readonly name: string; readonly value: string }[];
  readonly body: Uint8Array;
}

/**
 * HTTP requests sent from the executor's host (`client.http`). HTTP error statuses are responses,
 * not errors.
 */
export class HttpClient {
  /** @internal Created by ExecServerClient. */
  constructor(private readonly core: SessionCore) {}

  /**
   * Sends one request through the executor and emits the response with its whole body
   * (`streamResponse: false`). The executor holds the body in one JSON answer, so keep this
   * for small bodies; the answer is bounded by the client's message limit like any other.
   */
  fetch(request: HttpRequest): Observable<BufferedHttpResponse> {
    const core = this.core;
    return core.calls
      .call('http/request', () => ({
        ...wireRequest(request),
        requestId: core.notifications.httpRequestId(),
        streamResponse: false,
      }))
      .pipe(
        map((result) => ({
          status: result.status,
          headers: result.headers,
          body: decodeValidatedBase64(result.bodyBase64),
        })),
      );
  }

  /** Sends one request through the executor; emits the response once the headers arrived. */
  request(request: HttpRequest): Observable<HttpResponse> {
    const core = this.core;
    return defer(() => {
      let stream: HttpBodyStream | undefined;
      let delivered = false;
      // The route is opened when the request is sent, with a fresh id per request, which keeps
      // late deltas of an abandoned stream apart (§8.2).
      const params = (): ParamsOf<'http/request'> => {
        stream = core.notifications.openHttpStream();
        return { ...wireRequest(request), requestId: stream.requestId, streamResponse: true };
      };
      return core.calls.call('http/request', params).pipe(
        map((result): HttpResponse => {
          delivered = true;
          return {
            status: result.status,
            headers: result.headers,
            body$: core.calls.guardStream(stream!.body$),
          };
        }),
        finalize(() => {
          if (!delivered && stream) core.notifications.closeHttpStream(stream);
        }),
      );
    });
  }
}

function wireRequest(
  request: HttpRequest,
): Omit<ParamsOf<'http/request'>, 'requestId' | 'streamResponse'> {
  return {
    method: request.method,
    url: request.url,
    headers: (request.headers ?? []).map((header) => ({ ...header })),
    bodyBase64: request.body === undefined ? null : encodeBase64(request.body),
    ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
    redirectPolicy: request.redirectPolicy ?? 'follow',
  };
}
