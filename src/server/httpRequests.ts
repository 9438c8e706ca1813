/**
 * `http/request` (spec §8): the executor performs an HTTP request for the client, either
 * buffered (body in the result) or streamed (result at headers, then `http/request/bodyDelta`
 * notifications with a contiguous `seq`, terminal frame included). Streams belong to one
 * connection and stop silently when it closes.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { MAX_HTTP_BODY_DELTA_BYTES } from '../protocol/http.js';
import type { HttpRequestParams } from './params.js';
import { RpcFailure } from './rpcFailure.js';
import { timerDelay } from './timerDelay.js';

const MAX_REDIRECTS = 10;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const VISIBLE_HEADER_VALUE = /^[\t\x20-\x7e]*$/;

export interface HttpResult {
  status: number;
  headers: { name: string; value: string }[];
  bodyBase64: string;
}

type Notify = (method: string, params: unknown) => void;

/**
 * The value a request header is sent with (capability `httpHeaderEnvVars`, probed on 0.169.0):
 * `value` followed by the executor's own `$valueEnvVar` when one is named; an unset or empty
 * variable is refused (-32602). Returned as the UTF-8 bytes the binary sends, one char a byte.
 */
function headerValue(header: { name: string; value: string; valueEnvVar?: string | null }): string {
  let value = header.value;
  const variable = header.valueEnvVar;
  if (variable !== undefined && variable !== null) {
    const fromEnv = process.env[variable];
    if (fromEnv === undefined || variable === '' || variable.includes('=')) {
      throw RpcFailure.invalidParams(
        `http/request header ${header.name} requires executor environment variable ${variable}`,
      );
    }
    if (fromEnv === '') {
      throw RpcFailure.invalidParams(
        `http/request header ${header.name} requires a non-empty executor environment variable ${variable}`,
      );
    }
    value += fromEnv;
  }
  if (/[\0-\x08\x0a-\x1f\x7f]/.test(value)) {
    throw RpcFailure.invalidParams(
      `http/request header value is invalid for ${header.name}: failed to parse header value`,
    );
  }
  return Buffer.from(value, 'utf8').toString('latin1');
}

function validate(params: HttpRequestParams): { url: URL; headers: [string, string][] } {
  if (!TOKEN.test(params.method))
    throw RpcFailure.invalidParams('http/request method is invalid: invalid HTTP method');
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    const detail = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(params.url)
      ? 'invalid URL'
      : 'relative URL without a base';
    throw RpcFailure.invalidParams(`http/request url is invalid: ${detail}`);
  }
  const scheme = url.protocol.replace(/:$/, '');
  if (scheme !== 'http' && scheme !== 'https') {
    throw RpcFailure.invalidParams(`http/request only supports http and https URLs, got ${scheme}`);
  }
  const headers: [string, string][] = [];
  for (const header of params.headers ?? []) {
    if (!TOKEN.test(header.name)) {
      throw RpcFailure.invalidParams(
        'http/request header name is invalid: invalid HTTP header name',
      );
    }
    headers.push([header.name, headerValue(header)]);
  }
  return { url, headers };
}

function responseHeaders(response: http.IncomingMessage): { name: string; value: string }[] {
  const headers: { name: string; value: string }[] = [];
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const value = raw[index + 1] as string;
    // Values that are not visible ASCII cannot become strings in the Rust executor: dropped.
    if (!VISIBLE_HEADER_VALUE.test(value)) continue;
    headers.push({ name: (raw[index] as string).toLowerCase(), value });
  }
  return headers;
}

interface Exchange {
  method: string;
  url: URL;
  headers: [string, string][];
  body: Buffer | undefined;
}

interface Agents {
  http: http.Agent;
  https: https.Agent;
}

function send(
  exchange: Exchange,
  signal: AbortSignal,
  agents: Agents,
): Promise<http.IncomingMessage> {
  const secure = exchange.url.protocol === 'https:';
  const transport = secure ? https : http;
  return new Promise((resolve, reject) => {
    const headers: [string, string][] = [...exchange.headers];
    const has = (wanted: string): boolean =>
      headers.some(([name]) => name.toLowerCase() === wanted);
    if (!has('accept')) headers.push(['accept', '*/*']);
    // Raw header arrays get no automatic Host header from Node.
    if (!has('host')) headers.push(['host', exchange.url.host]);
    const request = transport.request(exchange.url, {
      method: exchange.method,
      headers: headers.flat(),
      signal,
      agent: secure ? agents.https : agents.http,
    });
    request.once('response', resolve);
    request.once('error', reject);
    request.end(exchange.body);
  });
}

function isRedirect(status: number): boolean {
  return [301, 302, 303, 307, 308].includes(status);
}

/** Sends the request, following redirects like reqwest's default policy when asked to. */
async function sendFollowing(
  exchange: Exchange,
  follow: boolean,
  signal: AbortSignal,
  agents: Agents,
): Promise<http.IncomingMessage> {
  let current = exchange;
  for (let hop = 0; ; hop += 1) {
    const response = await send(current, signal, agents);
    const location = response.headers.location;
    if (
      !follow ||
      !isRedirect(response.statusCode ?? 0) ||
      location === undefined ||
      hop >= MAX_REDIRECTS
    ) {
      return response;
    }
    response.resume();
    const switchToGet =
      response.statusCode === 303 ||
      (response.statusCode !== 307 && response.statusCode !== 308 && current.method === 'POST');
    current = {
      method: switchToGet ? 'GET' : current.method,
      url: new URL(location, current.url),
      headers: switchToGet
        ? current.headers.filter(
            ([name]) => !['content-length', 'content-type'].includes(name.toLowerCase()),
          )
        : current.headers,
      body: switchToGet ? undefined : current.body,
    };
  }
}

export class HttpRequests {
  private readonly activeStreams = new Set<string>();
  private readonly inFlight = new Set<AbortController>();
  private closed = false;
  /** Keep-alive pools like reqwest's; idle sockets do not keep the process alive. */
  private readonly agents: Agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true }),
  };

  constructor(private readonly notify: Notify) {}

  async request(params: HttpRequestParams): Promise<HttpResult> {
    const { url, headers } = validate(params);
    const streaming = params.streamResponse ?? false;
    if (streaming && this.activeStreams.has(params.requestId)) {
      throw RpcFailure.invalidParams(
        `http/request streamResponse requestId \`${params.requestId}\` is already active`,
      );
    }
    if (streaming) this.activeStreams.add(params.requestId);
    const controller = new AbortController();
    this.inFlight.add(controller);
    const timer =
      params.timeoutMs !== null && params.timeoutMs !== undefined
        ? setTimeout(
            () => controller.abort(new Error('operation timed out')),
            timerDelay(params.timeoutMs),
          )
        : undefined;
    const finish = (): void => {
      if (timer) clearTimeout(timer);
      this.inFlight.delete(controller);
      if (streaming) this.activeStreams.delete(params.requestId);
    };
    let response: http.IncomingMessage;
    try {
      response = await sendFollowing(
        {
          method: params.method,
          url,
          headers,
          body: params.bodyBase64 ? Buffer.from(params.bodyBase64, 'base64') : undefined,
        },
        (params.redirectPolicy ?? 'follow') === 'follow',
        controller.signal,
        this.agents,
      );
    } catch {
      finish();
      throw RpcFailure.internal(`http/request failed: error sending request for url (${url.href})`);
    }
    const head = { status: response.statusCode ?? 0, headers: responseHeaders(response) };
    if (!streaming) {
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        return { ...head, bodyBase64: Buffer.concat(chunks).toString('base64') };
      } catch {
        throw RpcFailure.internal(
          'failed to read http/request response body: error decoding response body',
        );
      } finally {
        finish();
      }
    }
    // The result must reach the client before the first delta: start reading only after the
    // reply has been queued (the processor sends it in the microtask after we return).
    response.pause();
    setImmediate(() => void this.pump(params.requestId, response, controller).finally(finish));
    return { ...head, bodyBase64: '' };
  }

  private async pump(
    requestId: string,
    response: http.IncomingMessage,
    controller: AbortController,
  ): Promise<void> {
    let seq = 1;
    const delta = (bytes: Buffer, done: boolean, error: string | null): void => {
      if (this.closed || (controller.signal.aborted && !done)) return;
      this.notify('http/request/bodyDelta', {
        requestId,
        seq,
        deltaBase64: bytes.toString('base64'),
        done,
        error,
      });
      seq += 1;
    };
    try {
      for await (const chunk of response) {
        if (this.closed) return;
        const bytes = chunk as Buffer;
        for (let offset = 0; offset < bytes.length; offset += MAX_HTTP_BODY_DELTA_BYTES) {
          delta(bytes.subarray(offset, offset + MAX_HTTP_BODY_DELTA_BYTES), false, null);
        }
      }
      delta(Buffer.alloc(0), true, null);
    } catch {
      if (this.closed) return;
      delta(Buffer.alloc(0), true, 'error decoding response body');
    }
  }

  /** The connection ended: abort every exchange, stop every stream without a word. */
  close(): void {
    this.closed = true;
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
    this.activeStreams.clear();
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
