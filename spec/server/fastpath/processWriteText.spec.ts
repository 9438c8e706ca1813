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
import { alteredTexts, chunks, processWriteTexts } from '../../support/processWriteTexts.js';

const texts = processWriteTexts(chunks);
const altered = alteredTexts(texts);

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
