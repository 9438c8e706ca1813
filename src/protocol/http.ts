/** `http/request` and its streamed body notifications (spec/protocol.md §8). */
import * as z from 'zod';
import { Base64 } from './base64.js';

/** One request header of `http/request`; names may repeat. */
export const HttpHeader = z.object({
  name: z.string(),
  value: z.string(),
  /**
   * Request headers only (capability `httpHeaderEnvVars`): the header is sent as `value`
   * followed by this environment variable of the executor, which must be set and non-empty;
   * omitted when absent.
   */
  valueEnvVar: z.string().optional(),
});
export type HttpHeader = z.infer<typeof HttpHeader>;

/** Whether the executor follows redirects of an `http/request` or returns the 3xx response. */
export const HttpRedirectPolicy = z.enum(['follow', 'stop']);
export type HttpRedirectPolicy = z.infer<typeof HttpRedirectPolicy>;

/**
 * Params of the `http/request` request (client → executor); its entry in `METHODS` ties it to the
 * method.
 */
export const HttpRequestParams = z.object({
  method: z.string(),
  /** Absolute http:// or https:// URL. */
  url: z.string(),
  headers: z.array(HttpHeader).default([]),
  bodyBase64: Base64.nullable().default(null),
  /** Omitted (or null) means no timeout. Bounds the whole exchange including the body. */
  timeoutMs: z.number().int().min(0).nullish(),
  redirectPolicy: HttpRedirectPolicy.default('follow'),
  /** Required even when buffered; unique per connection while a stream is active. */
  requestId: z.string(),
  streamResponse: z.boolean().default(false),
});
export type HttpRequestParams = z.infer<typeof HttpRequestParams>;

/** One header of an `http/request` response. */
export const HttpResponseHeader = z.object({ name: z.string(), value: z.string() });
export type HttpResponseHeader = z.infer<typeof HttpResponseHeader>;

/** Result of the `http/request` request; its entry in `METHODS` ties it to the method. */
export const HttpRequestResult = z.object({
  status: z.number().int().min(0).max(65535),
  headers: z.array(HttpResponseHeader),
  /** `""` when `streamResponse` was true. */
  bodyBase64: Base64,
});
export type HttpRequestResult = z.infer<typeof HttpRequestResult>;

/** Largest decoded delta the client accepts (§8.1). */
export const MAX_HTTP_BODY_DELTA_BYTES = 1024 * 1024;
/** Longest `deltaBase64` string the client accepts: ceil(1 MiB / 3) * 4. */
export const MAX_HTTP_BODY_DELTA_BASE64_CHARS = Math.ceil(MAX_HTTP_BODY_DELTA_BYTES / 3) * 4;

/** `http/request/bodyDelta`: seq is 1-based and contiguous including the terminal frame. */
export const HttpRequestBodyDeltaNotification = z.object({
  requestId: z.string(),
  seq: z.number().int().min(1),
  deltaBase64: Base64,
  done: z.boolean().default(false),
  /** Terminal failure text, only on the last frame. */
  error: z.string().nullable().default(null),
});
export type HttpRequestBodyDeltaNotification = z.infer<typeof HttpRequestBodyDeltaNotification>;
