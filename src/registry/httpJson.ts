/**
 * One JSON POST as a cold Observable: subscribing sends it, unsubscribing aborts it, and the
 * deadline runs on an rxjs scheduler. Emits the status and body text once; mapping statuses to
 * errors is the caller's business. The exchange itself is an `HttpPost`: `fetch` by default
 * (browsers, Node), or one over `node:http` (src/cli/nodeHttpPost.ts: the CLI's registry
 * lookups, where loading Node's `fetch` would cost more than the lookup).
 */
import { concatBytes } from '../platform/bytes.js';
import { platform } from '../platform/index.js';
import { Observable, type SchedulerLike, asyncScheduler, throwError, timeout } from 'rxjs';
import { EnvironmentRegistryRequestError } from './errors.js';

export interface HttpTextResponse {
  readonly status: number;
  readonly body: string;
}

/** What an `HttpPost` sends: always a POST of JSON text, never following redirects. */
export interface HttpPostRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly signal: AbortSignal;
}

/** The answer's status and its body as it arrives; `cancel` stops reading it. */
export interface HttpPostResponse {
  readonly status: number;
  readonly body: AsyncIterable<Uint8Array>;
  cancel(): Promise<void>;
}

/** One POST exchange; rejects when the request cannot be sent (connection, abort). */
export type HttpPost = (url: string, request: HttpPostRequest) => Promise<HttpPostResponse>;

/** `HttpPost` over a `fetch` (the global one by default). */
export function fetchPost(fetchImpl: typeof fetch = fetch): HttpPost {
  return async (url, request) => {
    const response = await fetchImpl(url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual', // codex never follows registry redirects
      signal: request.signal,
    });
    const reader = response.body?.getReader();
    return {
      status: response.status,
      body: {
        async *[Symbol.asyncIterator]() {
          if (reader === undefined) return;
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            yield value;
          }
        },
      },
      cancel: async () => reader?.cancel(),
    };
  };
}

export interface PostJsonOptions {
  readonly headers: Readonly<Record<string, string>>;
  /** Deadline for the whole exchange: connect, headers and body. */
  readonly timeoutMs: number;
  readonly scheduler?: SchedulerLike;
  /** How the exchange is made; default `fetchPost()`. */
  readonly post?: HttpPost;
  /** 2xx bodies larger than this fail with a `body` error. */
  readonly maxBodyBytes?: number;
  /**
   * Non-2xx bodies are cut to this many bytes (they only feed error messages); one byte past
   * the preview size, so a cut body is recognisable as incomplete.
   */
  readonly maxErrorBodyBytes?: number;
}

export const MAX_REGISTRY_RESPONSE_BYTES = 1024 * 1024;
/** `ERROR_BODY_PREVIEW_BYTES`. */
export const ERROR_BODY_PREVIEW_BYTES = 4096;

export function postJson(
  url: string,
  body: unknown,
  options: PostJsonOptions,
): Observable<HttpTextResponse> {
  const post = options.post ?? fetchPost();
  const exchange = new Observable<HttpTextResponse>((subscriber) => {
    const controller = new AbortController();
    const run = async (): Promise<HttpTextResponse> => {
      let response: HttpPostResponse;
      try {
        response = await post(url, {
          headers: { 'content-type': 'application/json', ...options.headers },
          body: JSON.stringify(body),
          signal: controller.signal,
        });
      } catch (error) {
        throw new EnvironmentRegistryRequestError(
          'connect',
          `error sending request for url (${url}): ${causeText(error)}`,
          { cause: error },
        );
      }
      const ok = response.status >= 200 && response.status < 300;
      const limit = ok
        ? (options.maxBodyBytes ?? MAX_REGISTRY_RESPONSE_BYTES)
        : (options.maxErrorBodyBytes ?? ERROR_BODY_PREVIEW_BYTES + 1);
      const text = await readBody(response, limit, ok);
      return { status: response.status, body: text };
    };
    run().then(
      (result) => {
        subscriber.next(result);
        subscriber.complete();
      },
      (error: unknown) => subscriber.error(error),
    );
    return () => controller.abort();
  });
  return exchange.pipe(
    timeout({
      first: options.timeoutMs,
      scheduler: options.scheduler ?? asyncScheduler,
      with: () =>
        throwError(
          () =>
            new EnvironmentRegistryRequestError(
              'timeout',
              `request to ${url} timed out after ${options.timeoutMs} ms`,
            ),
        ),
    }),
  );
}

/**
 * Reads at most `limit` bytes. Past the limit, a success body is an error (it cannot be a
 * complete registry answer) and an error body is simply cut off.
 */
async function readBody(
  response: HttpPostResponse,
  limit: number,
  failOverLimit: boolean,
): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const value of response.body) {
      size += value.length;
      chunks.push(value);
      if (size > limit) {
        await response.cancel().catch(() => undefined);
        if (failOverLimit) {
          throw new EnvironmentRegistryRequestError(
            'body',
            `environment registry response exceeds ${limit} bytes`,
          );
        }
        break;
      }
    }
  } catch (error) {
    if (error instanceof EnvironmentRegistryRequestError) throw error;
    throw new EnvironmentRegistryRequestError(
      'body',
      `error reading environment registry response body: ${causeText(error)}`,
      { cause: error },
    );
  }
  const bytes = concatBytes(...chunks);
  return platform.utf8Decode(bytes.subarray(0, Math.min(bytes.length, limit)));
}

function causeText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
