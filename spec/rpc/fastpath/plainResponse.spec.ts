/**
 * plainResponse (src/rpc/fastpath/plainResponse.ts) against its plain twin, `classifyMessage`
 * (bench/plain/rpc/fastpath/plainResponse.ts): whatever the fast path recognises, the twin reads
 * the same way, and every response with a safe integer id is recognised.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { plainResponse as twin } from '../../../bench/plain/rpc/fastpath/plainResponse.js';
import { plainResponse } from '../../../src/rpc/fastpath/plainResponse.js';

const ids = fc.oneof(
  fc.integer(),
  fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 60, 1.5, -0, Number.NaN, Infinity),
  fc.string(),
  fc.constant(null),
);

/** Messages built from the keys that decide a message's kind, with any values. */
const messages = fc.record(
  {
    id: ids,
    result: fc.jsonValue(),
    method: fc.oneof(fc.string(), fc.integer()),
    params: fc.jsonValue(),
    error: fc.oneof(fc.jsonValue(), fc.record({ code: fc.integer(), message: fc.string() })),
  },
  { requiredKeys: [] },
);

describe('plainResponse (fast path) against classifyMessage (plain twin)', () => {
  it('recognises only what the twin reads as a response, with the same id and result', () => {
    fc.assert(
      fc.property(fc.oneof(messages, fc.jsonValue(), fc.anything()), (value) => {
        const fast = plainResponse(value);
        if (fast === undefined) return;
        expect({ id: fast.id, result: fast.result }).toEqual(twin(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('recognises every response with a safe integer id', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.jsonValue(), (id, result) => {
        const fast = plainResponse({ id, result });
        expect(fast).toBeDefined();
        expect({ id: fast!.id, result: fast!.result }).toEqual(twin({ id, result }));
      }),
    );
  });
});
