/**
 * fastpath/processWriteText.ts against its plain twin (bench/plain/server/fastpath/
 * processWriteText.ts, `parseInbound` alone): the same message, or the same malformed-input
 * detail, for any text — process/write requests in the client's layout, and texts that must
 * fall back (escapes in processId or writeId, other key orders, extra keys, whitespace,
 * non-canonical or broken base64, odd ids, cut or altered texts).
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import {
  chunkBytes as twinChunkBytes,
  parseInboundText as twin,
} from '../../../bench/plain/server/fastpath/processWriteText.js';
import { processWriteParams, requestText } from '../../../src/rpc/fastpath/requestText.js';
import { chunkBytes, parseInboundText } from '../../../src/server/fastpath/processWriteText.js';

/** Strings heavy in what JSON escapes and what the slicing looks for. */
const tricky = fc.oneof(
  fc.string(),
  fc.string({
    unit: fc.constantFrom('"', '\\', '\n', '\u0000', 'a', '=', ',', '}', 'é', '\ud800'),
  }),
);
/** Chunks: canonical base64, base64 with stray characters, url-safe, unpadded, anything. */
const chunks = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
  fc.string({
    unit: fc.constantFrom('A', 'Q', '+', '/', '=', '-', '_', ' ', '\n', '\\', '"', 'Ł', '\u0000'),
  }),
  fc.base64String(),
  tricky,
);
const ids = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, 2 ** 63, 1.5, -0, 1e21, 123456789012345),
  fc.string(),
  fc.constant(null),
);
const params = fc.record({ processId: tricky, chunk: chunks, writeId: tricky });

/** The client's layout, and layouts that differ from it in one way. */
const texts = fc.oneof(
  fc
    .tuple(ids, params)
    .map(([id, p]) => JSON.stringify({ id, method: 'process/write', params: p })),
  fc
    .tuple(ids, params, fc.jsonValue(), fc.string())
    .map(([id, p, extra, key]) =>
      JSON.stringify({ id, method: 'process/write', params: { ...p, [key]: extra } }),
    ),
  fc.tuple(ids, params).map(([id, p]) =>
    JSON.stringify({
      method: 'process/write',
      id,
      params: { chunk: p.chunk, processId: p.processId, writeId: p.writeId },
    }),
  ),
  fc
    .tuple(ids, params)
    .map(([id, p]) => JSON.stringify({ id, method: 'process/write', params: p }, null, 1)),
  fc
    .tuple(ids, params)
    .map(([id, p]) => JSON.stringify({ jsonrpc: '2.0', id, method: 'process/write', params: p })),
  fc.tuple(ids, params).map(([id, p]) => JSON.stringify({ id, method: 'process/read', params: p })),
  fc
    .tuple(ids, params)
    .map(([id, p]) => JSON.stringify({ id, method: 'process/write', params: p }) + ' '),
  fc
    .tuple(fc.nat(), params)
    .map(
      ([id, p]) =>
        `{"id":${id},"method":"process/write","params":{"processId":"${p.processId}","chunk":"${p.chunk}","writeId":"${p.writeId}","writeId":"w"}}`,
    ),
  fc
    .tuple(fc.nat(), params)
    .map(
      ([id, p]) =>
        `{"id":${id},"method":"process/write","params":{"processId":"${p.processId}","chunk":"${p.chunk}","writeId":"${p.writeId}"}}`,
    ),
  fc.constantFrom(
    '{"id":007,"method":"process/write","params":{"processId":"p","chunk":"","writeId":"w"}}',
  ),
);

/** A text with one character replaced, inserted or removed, or cut short. */
const altered = fc
  .tuple(
    texts,
    fc.nat(),
    fc.constantFrom('"', '\\', ' ', '\n', 'A', '=', '}', ',', '', 'x'),
    fc.boolean(),
  )
  .map(([text, at, char, cut]) => {
    const index = at % (text.length + 1);
    return cut ? text.slice(0, index) : text.slice(0, index) + char + text.slice(index + 1);
  });

describe('parseInboundText (fast path) against parseInbound (plain twin)', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('reads every text as its plain twin does', () => {
    fc.assert(
      fc.property(fc.oneof(texts, altered), (text) => {
        expect(parseInboundText(text)).toEqual(twin(text));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the process/write our client writes without JSON.parse', () => {
    const parse = jest.spyOn(JSON, 'parse');
    fc.assert(
      fc.property(
        fc.nat(),
        fc.string({ unit: 'grapheme' }),
        fc.uint8Array({ maxLength: 3000 }),
        fc.string({ unit: 'grapheme' }),
        (id, processId, bytes, writeId) => {
          fc.pre(!/["\\\u0000-\u001f]/.test(processId + writeId));
          const text = requestText(
            id,
            'process/write',
            processWriteParams(processId, bytes, writeId),
          );
          parse.mockClear();
          const message = parseInboundText(text);
          expect(parse).not.toHaveBeenCalled();
          expect(message).toEqual({
            kind: 'request',
            id,
            method: 'process/write',
            params: { processId, chunk: Buffer.from(bytes).toString('base64'), writeId },
          });
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('leaves escapes, control characters and broken base64 to the plain path and its errors', () => {
    const cases = [
      '{"id":1,"method":"process/write","params":{"processId":"p\\"q","chunk":"","writeId":"w"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ\\u003d=","writeId":"w"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ\n=","writeId":"w"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ==","writeId":"w\t"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ==","writeId":"w"}}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ==","writeId":"w"},"id":2}',
      '{"id":1.0,"method":"process/write","params":{"processId":"p","chunk":"QQ==","writeId":"w"}}',
    ];
    for (const text of cases) expect(parseInboundText(text)).toEqual(twin(text));
    expect(parseInboundText(cases[2]!)).toMatchObject({ kind: 'malformed' });
  });

  it('hands out the bytes of any chunk as its twin decodes them, each buffer once', () => {
    fc.assert(
      fc.property(fc.oneof(texts, altered), chunks, fc.boolean(), (text, other, same) => {
        const message = parseInboundText(text);
        const read =
          message.kind === 'request' && typeof message.params === 'object' && message.params
            ? (message.params as { chunk?: unknown }).chunk
            : undefined;
        const chunk = same && typeof read === 'string' ? read : other;
        const first = chunkBytes(chunk);
        expect(first).toEqual(twinChunkBytes(chunk));
        const second = chunkBytes(chunk);
        expect(second).toEqual(first);
        if (first.length > 0) expect(second).not.toBe(first);
      }),
      { numRuns: 2000 },
    );
  });
});
