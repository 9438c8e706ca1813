import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decodeOutputNotification } from '../../../src/client/fastpath/outputNotification.js';
import { decodeOutputNotification as plainDecode } from '../../../bench/plain/client/fastpath/outputNotification.js';
import type { JsonRpcNotification } from '../../../src/protocol/jsonrpc.js';
import { parseOutputNotification } from '../../../src/rpc/fastpath/outputNotification.js';

/** What a decoder returns, or the message it throws, in a form `toEqual` compares. */
function outcome(decode: typeof plainDecode, params: unknown): unknown {
  try {
    const { processId, event } = decode({
      method: 'process/output',
      params,
    } as JsonRpcNotification);
    return { processId, event: { ...event, chunk: Buffer.from(event.chunk).toString('hex') } };
  } catch (error) {
    return { error: (error as Error).constructor.name, message: (error as Error).message };
  }
}

function expectSame(params: unknown): void {
  expect({ params, fast: outcome(decodeOutputNotification, params) }).toEqual({
    params,
    fast: outcome(plainDecode, params),
  });
}

/** Base64 of random bytes, then perhaps spoiled at one place. */
const chunk = fc.oneof(
  fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString('base64')),
  fc
    .tuple(
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.constantFrom('-', '_', '=', ' ', '\n', '!', '\u0000', 'é', '\u0141', '\uff21', '==', ''),
      fc.boolean(),
    )
    .map(([bytes, at, spoiler, replace]) => {
      const text = Buffer.from(bytes).toString('base64');
      const index = at % text.length;
      return text.slice(0, index) + spoiler + text.slice(index + (replace ? 1 : 0));
    }),
  fc.string({ unit: fc.constantFrom(...'AQgw+/=-_ é\u0141'), maxLength: 16 }),
);

const field = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.string(),
  fc.boolean(),
);

describe('decodeOutputNotification (fast path) against its plain twin', () => {
  it('returns the same event, or throws the same error, for valid and spoiled chunks', () => {
    fc.assert(
      fc.property(
        chunk,
        fc.constantFrom('stdout', 'stderr', 'pty', 'stdin', 1),
        fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }), field),
        fc.oneof(fc.string({ maxLength: 8 }), field),
        (text, stream, seq, processId) => expectSame({ processId, seq, stream, chunk: text }),
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees on the known edge cases of base64 and of the shape', () => {
    for (const text of [
      '',
      'QQ==',
      'QR==',
      'QUI=',
      'QUJD',
      'QQ=A',
      'Q===',
      'QUJDQQ==QUJD',
      'QUŁD',
      'QU-D',
      'QU JD',
      'QUJ\u0000',
    ])
      expectSame({ processId: 'p', seq: 1, stream: 'stdout', chunk: text });
    for (const params of [
      null,
      undefined,
      [],
      'x',
      { chunk: 'QUJD' },
      ['QUJD'],
      { processId: 'p', seq: 1, stream: 'stdout', chunk: 'QUJD', extra: 1 },
    ])
      expectSame(params);
  });

  it('decodes the bytes the executor encoded', () => {
    const bytes = Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 31) & 255));
    const { event } = decodeOutputNotification({
      method: 'process/output',
      params: { processId: 'p', seq: 3, stream: 'stderr', chunk: bytes.toString('base64') },
    } as JsonRpcNotification);
    expect(Buffer.from(event.chunk).equals(bytes)).toBe(true);
    expect(event).toMatchObject({ type: 'output', seq: 3, stream: 'stderr' });
  });

  it('takes the bytes the RPC fast path decoded, with the same result as decoding the text', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 8 }),
        fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer()),
        fc.constantFrom('stdout', 'stderr', 'pty'),
        fc.uint8Array({ maxLength: 64 }),
        (processId, seq, stream, bytes) => {
          const text = JSON.stringify({
            method: 'process/output',
            params: { processId, seq, stream, chunk: Buffer.from(bytes).toString('base64') },
          });
          const parsed = parseOutputNotification(text);
          if (parsed === undefined) return;
          expect(outcome(decodeOutputNotification, parsed.params)).toEqual(
            outcome(plainDecode, JSON.parse(text).params),
          );
        },
      ),
    );
  });
});
