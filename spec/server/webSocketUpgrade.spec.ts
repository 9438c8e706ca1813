/**
 * The opening handshake pieces of the `--listen` server: the accept key (RFC 6455 §4.2.2),
 * axum's checks in axum's order with the binary's texts, and the raw HTTP responses written
 * on a socket taken over for an upgrade.
 */
import { describe, expect, it } from '@jest/globals';
import type { IncomingHttpHeaders } from 'node:http';
import {
  acceptKey,
  closingResponse,
  firstHeader,
  switchingProtocols,
  upgradeRefusal,
  type UpgradeRequest,
} from '../../src/server/webSocketUpgrade.js';

const METHOD_TEXT = 'Request method must be `GET`';
const CONNECTION_TEXT = "Connection header did not include 'upgrade'";
const UPGRADE_TEXT = "`Upgrade` header did not include 'websocket'";
const VERSION_TEXT = "`Sec-WebSocket-Version` header did not include '13'";
const KEY_TEXT = '`Sec-WebSocket-Key` header missing';
const HTTP10_TEXT = "WebSocket request couldn't be upgraded since no upgrade state was present";

const validHeaders: IncomingHttpHeaders = {
  host: '127.0.0.1',
  connection: 'Upgrade',
  upgrade: 'websocket',
  'sec-websocket-version': '13',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
};

function request(
  changes: { method?: string; httpVersion?: string; headers?: IncomingHttpHeaders } = {},
  without: ReadonlyArray<keyof IncomingHttpHeaders> = [],
): UpgradeRequest {
  const headers: IncomingHttpHeaders = { ...validHeaders, ...changes.headers };
  for (const name of without) delete headers[name];
  return {
    method: changes.method ?? 'GET',
    httpVersion: changes.httpVersion ?? '1.1',
    headers,
  };
}

/** Splits a raw HTTP response into its status line, header lines and body. */
function parseResponse(raw: string): { statusLine: string; headers: string[]; body: string } {
  const headEnd = raw.indexOf('\r\n\r\n');
  expect(headEnd).toBeGreaterThan(0);
  const [statusLine = '', ...headers] = raw.slice(0, headEnd).split('\r\n');
  return { statusLine, headers, body: raw.slice(headEnd + 4) };
}

describe('acceptKey', () => {
  it('computes the RFC 6455 example', () => {
    expect(acceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('takes any key as it is, even one that is not 16 bytes of base64 (as the binary)', () => {
    // SHA-1 of "abc" + GUID, base64, as the binary answered it.
    expect(acceptKey('abc')).toBe('zwKd5BnoWxQ6GxTxxSmBSHGHX9M=');
    expect(acceptKey('')).toBe('Kfh9QIsMVZcl6xEPYxPHzW8SZ8w=');
  });
});

describe('switchingProtocols', () => {
  it('writes the binary’s 101 head: upgrade headers, the accept key and a date, nothing agreed', () => {
    const { statusLine, headers, body } = parseResponse(
      switchingProtocols('dGhlIHNhbXBsZSBub25jZQ=='),
    );
    expect(statusLine).toBe('HTTP/1.1 101 Switching Protocols');
    expect(headers.slice(0, 3)).toEqual([
      'connection: upgrade',
      'upgrade: websocket',
      'sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=',
    ]);
    expect(headers[3]).toMatch(/^date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(headers).toHaveLength(4);
    expect(body).toBe('');
  });
});

describe('upgradeRefusal', () => {
  it('accepts a valid upgrade request', () => {
    expect(upgradeRefusal(request())).toBeUndefined();
  });

  it('accepts header values in any case, and Connection as a list', () => {
    expect(
      upgradeRefusal(
        request({ headers: { connection: 'keep-alive, UPGRADE', upgrade: 'WebSocket' } }),
      ),
    ).toBeUndefined();
  });

  it('accepts an empty Sec-WebSocket-Key: only its presence is checked', () => {
    expect(upgradeRefusal(request({ headers: { 'sec-websocket-key': '' } }))).toBeUndefined();
  });

  it('refuses a method other than GET with 405', () => {
    for (const method of ['POST', 'HEAD', 'PUT', 'OPTIONS']) {
      expect(upgradeRefusal(request({ method }))).toEqual({ status: 405, body: METHOD_TEXT });
    }
  });

  it('refuses a Connection header without `upgrade` with 400', () => {
    expect(upgradeRefusal(request({ headers: { connection: 'keep-alive' } }))).toEqual({
      status: 400,
      body: CONNECTION_TEXT,
    });
    expect(upgradeRefusal(request({ headers: { connection: 'upgraded' } }))).toEqual({
      status: 400,
      body: CONNECTION_TEXT,
    });
    expect(upgradeRefusal(request({}, ['connection']))).toEqual({
      status: 400,
      body: CONNECTION_TEXT,
    });
  });

  it('refuses an Upgrade header other than `websocket` with 400', () => {
    for (const upgrade of ['foo', 'websocket, h2c', 'websockets']) {
      expect(upgradeRefusal(request({ headers: { upgrade } }))).toEqual({
        status: 400,
        body: UPGRADE_TEXT,
      });
    }
    expect(upgradeRefusal(request({}, ['upgrade']))).toEqual({ status: 400, body: UPGRADE_TEXT });
  });

  it('refuses a Sec-WebSocket-Version other than exactly 13 with 400', () => {
    for (const version of ['8', '8, 13', '13, 8', '']) {
      expect(upgradeRefusal(request({ headers: { 'sec-websocket-version': version } }))).toEqual({
        status: 400,
        body: VERSION_TEXT,
      });
    }
    expect(upgradeRefusal(request({}, ['sec-websocket-version']))).toEqual({
      status: 400,
      body: VERSION_TEXT,
    });
  });

  it('refuses a missing Sec-WebSocket-Key with 400', () => {
    expect(upgradeRefusal(request({}, ['sec-websocket-key']))).toEqual({
      status: 400,
      body: KEY_TEXT,
    });
  });

  it('refuses an HTTP/1.0 request with 426, once every header check passed', () => {
    expect(upgradeRefusal(request({ httpVersion: '1.0' }))).toEqual({
      status: 426,
      body: HTTP10_TEXT,
    });
  });

  it('reads only the first of repeated headers, as axum does (Node would join them)', () => {
    const repeated = (headersDistinct: NodeJS.Dict<string[]>): UpgradeRequest => {
      const headers: IncomingHttpHeaders = { ...validHeaders };
      for (const [name, values] of Object.entries(headersDistinct))
        headers[name] = values?.join(', ');
      return { method: 'GET', httpVersion: '1.1', headers, headersDistinct };
    };
    const distinct = (changes: NodeJS.Dict<string[]>): NodeJS.Dict<string[]> => ({
      ...Object.fromEntries(
        Object.entries(validHeaders).map(([name, value]) => [name, [String(value)]]),
      ),
      ...changes,
    });
    expect(upgradeRefusal(repeated(distinct({ 'sec-websocket-version': ['13', '8'] })))).toBe(
      undefined,
    );
    expect(upgradeRefusal(repeated(distinct({ 'sec-websocket-version': ['8', '13'] })))).toEqual({
      status: 400,
      body: VERSION_TEXT,
    });
    expect(upgradeRefusal(repeated(distinct({ connection: ['keep-alive', 'Upgrade'] })))).toEqual({
      status: 400,
      body: CONNECTION_TEXT,
    });
    expect(upgradeRefusal(repeated(distinct({ upgrade: ['websocket', 'h2c'] })))).toBe(undefined);
    const twoKeys = repeated(distinct({ 'sec-websocket-key': ['first', 'second'] }));
    expect(firstHeader(twoKeys, 'sec-websocket-key')).toBe('first');
    expect(twoKeys.headers['sec-websocket-key']).toBe('first, second');
  });

  it('answers a request failing several checks with the first check it fails, in axum’s order', () => {
    const everythingWrong = request(
      {
        method: 'POST',
        httpVersion: '1.0',
        headers: { connection: 'close', upgrade: 'foo', 'sec-websocket-version': '8' },
      },
      ['sec-websocket-key'],
    );
    expect(upgradeRefusal(everythingWrong)?.body).toBe(METHOD_TEXT);
    // Fix the checks one at a time, in order: each time the next one answers.
    const fixes: Array<{ method?: string; headers?: IncomingHttpHeaders; expected: string }> = [
      { method: 'GET', expected: CONNECTION_TEXT },
      { headers: { connection: 'Upgrade' }, expected: UPGRADE_TEXT },
      { headers: { upgrade: 'websocket' }, expected: VERSION_TEXT },
      { headers: { 'sec-websocket-version': '13' }, expected: KEY_TEXT },
      { headers: { 'sec-websocket-key': 'x' }, expected: HTTP10_TEXT },
    ];
    let current = everythingWrong;
    for (const { method, headers, expected } of fixes) {
      current = {
        ...current,
        method: method ?? current.method,
        headers: { ...current.headers, ...headers },
      };
      expect(upgradeRefusal(current)?.body).toBe(expected);
    }
    expect(upgradeRefusal({ ...current, httpVersion: '1.1' })).toBeUndefined();
  });
});

describe('closingResponse', () => {
  it('writes an HTTP/1.1 refusal with a plain-text body, its length, a date, and closes', () => {
    const raw = closingResponse('1.1', { status: 400, body: KEY_TEXT }, 'GET');
    const { statusLine, headers, body } = parseResponse(raw);
    expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(headers[0]).toBe('content-type: text/plain; charset=utf-8');
    expect(headers[1]).toBe(`content-length: ${KEY_TEXT.length}`);
    expect(headers[2]).toMatch(/^date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(headers[3]).toBe('connection: close');
    expect(headers).toHaveLength(4);
    expect(body).toBe(KEY_TEXT);
  });

  it('answers HEAD with the headers of the body, without the body', () => {
    const raw = closingResponse('1.1', { status: 405, body: METHOD_TEXT }, 'HEAD');
    const { statusLine, headers, body } = parseResponse(raw);
    expect(statusLine).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(headers).toContain(`content-length: ${METHOD_TEXT.length}`);
    expect(body).toBe('');
    expect(raw.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers HTTP/1.0 with an HTTP/1.0 status line', () => {
    const { statusLine, body } = parseResponse(
      closingResponse('1.0', { status: 426, body: HTTP10_TEXT }, 'GET'),
    );
    expect(statusLine).toBe('HTTP/1.0 426 Upgrade Required');
    expect(body).toBe(HTTP10_TEXT);
  });

  it('sends no content-type for an empty body (403, 404, 200)', () => {
    for (const [status, reason] of [
      [403, 'Forbidden'],
      [404, 'Not Found'],
      [200, 'OK'],
    ] as const) {
      const { statusLine, headers, body } = parseResponse(
        closingResponse('1.1', { status, body: '' }),
      );
      expect(statusLine).toBe(`HTTP/1.1 ${status} ${reason}`);
      expect(headers[0]).toBe('content-length: 0');
      expect(headers.some((line) => line.startsWith('content-type'))).toBe(false);
      expect(body).toBe('');
    }
  });

  it('counts content-length in bytes', () => {
    const { headers, body } = parseResponse(closingResponse('1.1', { status: 400, body: 'é✓' }));
    expect(headers).toContain('content-length: 5');
    expect(body).toBe('é✓');
  });
});
