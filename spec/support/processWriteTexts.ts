/**
 * fast-check arbitraries of inbound texts around the clients' `process/write` layout, for the
 * executor's process/write fast paths (spec/server/fastpath/processWriteText.spec.ts,
 * processWriteFrame.spec.ts): the layout itself, and texts that differ from it in one way.
 */
import fc from 'fast-check';

/** Strings heavy in what JSON escapes, what the matching looks for, and multi-byte characters. */
export const tricky = fc.oneof(
  fc.string(),
  fc.string({
    unit: fc.constantFrom(
      '"',
      '\\',
      '\n',
      '\u0000',
      '\u007f',
      'a',
      '=',
      ',',
      '}',
      'é',
      '€',
      '\ud800',
    ),
  }),
);

/** Chunks: canonical base64, url-safe, unpadded, stray characters, anything. */
export const chunks = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
  fc.string({
    unit: fc.constantFrom(
      'A',
      'Q',
      '+',
      '/',
      '=',
      '-',
      '_',
      ' ',
      '\n',
      '\\',
      '"',
      'Ł',
      'ÿ',
      '\u0000',
    ),
  }),
  fc.base64String(),
  tricky,
);

const ids = fc.oneof(
  fc.nat(),
  fc.integer(),
  fc.constantFrom(2 ** 53, 2 ** 53 + 2, 2 ** 63, 1.5, -0, 1e21, 123456789012345, 999999999999999),
  fc.string(),
  fc.constant(null),
);

/** The clients' layout with chunks from `chunkTexts`, and layouts that differ from it in one way. */
export function processWriteTexts(chunkTexts: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const params = fc.record({ processId: tricky, chunk: chunkTexts, writeId: tricky });
  return fc.oneof(
    fc
      .tuple(ids, params)
      .map(([id, p]) => JSON.stringify({ id, method: 'process/write', params: p })),
    fc
      .tuple(fc.nat(), params)
      .map(
        ([id, p]) =>
          `{"id":${id},"method":"process/write","params":{"processId":"${p.processId}","chunk":"${p.chunk}","writeId":"${p.writeId}"}}`,
      ),
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
    fc
      .tuple(ids, params)
      .map(([id, p]) => JSON.stringify({ id, method: 'process/read', params: p })),
    fc
      .tuple(ids, params)
      .map(([id, p]) => JSON.stringify({ id, method: 'process/write', params: p }) + ' '),
    fc
      .tuple(fc.nat(), params)
      .map(
        ([id, p]) =>
          `{"id":${id},"method":"process/write","params":{"processId":"${p.processId}","chunk":"${p.chunk}","writeId":"${p.writeId}","writeId":"w"}}`,
      ),
    fc.constantFrom(
      '{"id":007,"method":"process/write","params":{"processId":"p","chunk":"","writeId":"w"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ\\u003d=","writeId":"w"}}',
      '{"id":1,"method":"process/write","params":{"processId":"p","chunk":"QQ==","writeId":"w"}}}',
      '',
      '{',
    ),
  );
}

/** A text from `source` with one character replaced, inserted or removed, or cut short. */
export function alteredTexts(source: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc
    .tuple(
      source,
      fc.nat(),
      fc.constantFrom('"', '\\', ' ', '\n', 'A', '=', '}', ',', '', 'x', 'é'),
      fc.boolean(),
    )
    .map(([text, at, char, cut]) => {
      const index = at % (text.length + 1);
      return cut ? text.slice(0, index) : text.slice(0, index) + char + text.slice(index + 1);
    });
}
