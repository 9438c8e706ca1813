/**
 * fastpath/processWriteFrame.ts against its plain twin (bench/plain/server/fastpath/
 * processWriteFrame.ts: the bytes decoded, then `parseInboundText`): the same message, or the
 * same malformed-input detail, for the UTF-8 bytes of any text — process/write requests in the
 * client's layout, with chunks small and over several of the 64 KiB pieces the chunk is decoded
 * in, and texts that must fall back (escapes, other key orders, extra keys, whitespace, odd ids,
 * non-canonical or broken base64 in any piece, non-ASCII characters, cut or altered texts); and
 * `chunkBytes` then gives what decoding the chunk gives.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { parseInboundUtf8 as twin } from '../../../bench/plain/server/fastpath/processWriteFrame.js';
import { processWriteParams, requestText } from '../../../src/rpc/fastpath/requestText.js';
import { parseInboundUtf8 } from '../../../src/server/fastpath/processWriteFrame.js';
import { chunkBytes } from '../../../src/server/fastpath/processWriteText.js';
import { parseInbound } from '../../../src/server/inboundMessage.js';
import { alteredTexts, chunks, processWriteTexts } from '../../support/processWriteTexts.js';

const PIECE = 64 * 1024;

/**
 * Chunks over one to three pieces: canonical, or with one character replaced, inserted or
 * removed anywhere (near a piece boundary more often), or cut short.
 */
const largeChunks = fc
  .tuple(
    fc.integer({ min: (PIECE / 4) * 3 - 6, max: (PIECE / 4) * 3 * 2 + 30 }),
    fc.integer({ min: 0, max: 255 }),
    fc.option(
      fc.tuple(
        fc.oneof(fc.nat(), fc.integer({ min: PIECE - 4, max: PIECE + 4 })),
        fc.constantFrom('=', '==', '-', '_', ' ', '\n', 'é', 'ÿ', '\u0080', '', 'A'),
        fc.boolean(),
      ),
    ),
  )
  .map(([length, seed, change]) => {
    const bytes = Buffer.alloc(length);
    for (let index = 0; index < length; index += 1) bytes[index] = (index * 131 + seed) & 0xff;
    const chunk = bytes.toString('base64');
    if (change === null) return chunk;
    const [at, char, insert] = change;
    const index = at % (chunk.length + 1);
    return chunk.slice(0, index) + char + chunk.slice(insert ? index : index + 1);
  });

/** The chunk of a process/write request that `message` is, if any. */
function chunkOf(message: ReturnType<typeof parseInboundUtf8>): string | undefined {
  if (message.kind !== 'request' || typeof message.params !== 'object' || !message.params)
    return undefined;
  const { chunk } = message.params as { chunk?: unknown };
  return typeof chunk === 'string' ? chunk : undefined;
}

/** Reads `text`'s UTF-8 both ways; the chunk's bytes are then what decoding it gives. */
function expectAsTwin(text: string): void {
  const utf8 = Buffer.from(text);
  const message = parseInboundUtf8(utf8);
  expect(message).toEqual(twin(utf8));
  expect(message).toEqual(parseInbound(utf8.toString()));
  const chunk = chunkOf(message);
  if (chunk !== undefined) expect(chunkBytes(chunk)).toEqual(Buffer.from(chunk, 'base64'));
}

describe('parseInboundUtf8 (fast path) against its plain twin', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('reads the bytes of every text as its twin reads them', () => {
    fc.assert(
      fc.property(
        fc.oneof(processWriteTexts(chunks), alteredTexts(processWriteTexts(chunks))),
        expectAsTwin,
      ),
      { numRuns: 5000 },
    );
  });

  it('reads texts whose chunk spans several pieces as its twin does, whatever piece is broken', () => {
    fc.assert(
      fc.property(
        fc.oneof(processWriteTexts(largeChunks), alteredTexts(processWriteTexts(largeChunks))),
        expectAsTwin,
      ),
      {
        numRuns: 80,
      },
    );
  });

  it('reads the process/write our client writes without JSON.parse, small or large', () => {
    const parse = jest.spyOn(JSON, 'parse');
    fc.assert(
      fc.property(
        fc.nat(),
        fc.string({ unit: 'grapheme' }),
        fc.oneof(
          { arbitrary: fc.uint8Array({ maxLength: 3000 }), weight: 9 },
          {
            arbitrary: fc
              .integer({ min: (PIECE / 4) * 3 - 3, max: (PIECE / 4) * 3 * 2 + 3 })
              .map((length) => new Uint8Array(length).fill(7)),
            weight: 1,
          },
        ),
        fc.string({ unit: 'grapheme' }),
        (id, processId, bytes, writeId) => {
          fc.pre(!/["\\\u0000-\u001f]/.test(processId + writeId));
          const utf8 = Buffer.from(
            requestText(id, 'process/write', processWriteParams(processId, bytes, writeId)),
          );
          parse.mockClear();
          const message = parseInboundUtf8(utf8);
          expect(parse).not.toHaveBeenCalled();
          const chunk = Buffer.from(bytes).toString('base64');
          expect(message).toEqual({
            kind: 'request',
            id,
            method: 'process/write',
            params: { processId, chunk, writeId },
          });
          expect(chunkBytes(chunk)).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('takes a Uint8Array that is not a Buffer, and any offset into its memory', () => {
    const text =
      '{"id":3,"method":"process/write","params":{"processId":"p","chunk":"QUJD","writeId":"w"}}';
    const backing = new Uint8Array(text.length + 10);
    backing.set(Buffer.from(text), 7);
    const view = backing.subarray(7, 7 + text.length);
    expect(parseInboundUtf8(view)).toEqual(parseInbound(text));
    expect(chunkBytes('QUJD')).toEqual(Buffer.from('ABC'));
  });
});
