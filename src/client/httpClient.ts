/**
 * HTTP requests sent from the executor's host (`http/request`, spec/protocol.md §8). Every
 * request is streamed: the response arrives as soon as the headers do, and the body follows
 * as `http/request/bodyDelta` notifications. HTTP error statuses are responses, not errors.
 */
import { Observable, defer, map, switchMap } from 'rxjs';
import { encodeBase64 } from '../protocol/base64.js';
import { HttpRequestResult, type HttpRedirectPolicy } from '../protocol/http.js';
import { decodeResult, type SessionCore } from './sessionCore.js';

/** One request header. */
export interface HttpRequestHeader {
  readonly name: string;
  readonly value: string;
  /** Take the value from this environment variable of the executor (capability `httpHeaderEnvVars`). */
  readonly valueEnvVar?: string;
}

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

export class HttpClient {
  /** @internal Created by ExecServerClient. */
  constructor(private readonly core: SessionCore) {}

  /** Sends one request through the executor; emits the response once the headers arrived. */
  request(request: HttpRequest): Observable<HttpResponse> {
    const core = this.core;
    return core.guard(
      core.awaitRpc().pipe(
        switchMap((rpc) =>
          defer(() => {
            // A fresh id per request keeps late deltas of an abandoned stream apart (§8.2).
            const requestId = `http-${core.nextHttpRequestId++}`;
            const stream = core.httpStreams.register(requestId);
            let delivered = false;
            const params = {
              method: request.method,
              url: request.url,
              headers: (request.headers ?? []).map((header) => ({ ...header })),
              bodyBase64: request.body === undefined ? null : encodeBase64(request.body),
              ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
              redirectPolicy: request.redirectPolicy ?? 'follow',
              requestId,
              streamResponse: true,
            };
            return new Observable<HttpResponse>((subscriber) => {
              const subscription = rpc
                .request('http/request', params)
                .pipe(map((raw) => decodeResult('http/request', HttpRequestResult, raw)))
                .subscribe({
                  next: (result) => {
                    delivered = true;
                    subscriber.next({
                      status: result.status,
                      headers: result.headers,
                      body$: core.guardStream(stream.body$),
                    });
                    subscriber.complete();
                  },
                  error: (error: unknown) => {
                    core.httpStreams.remove(stream);
                    subscriber.error(error);
                  },
                });
              return () => {
                subscription.unsubscribe();
                if (!delivered) core.httpStreams.remove(stream);
              };
            });
          }),
        ),
      ),
    );
  }
}
