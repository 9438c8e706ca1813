/**
 * fastpath/getMetadataParams.ts against its plain twin (bench/plain/server/fastpath/
 * getMetadataParams.ts, a zod schema) and the executor's `FsGetMetadataParams`: whatever the
 * check accepts, it returns exactly what the schema returns; what it declines, the schema rejects
 * or it carries a sandbox context (left to the schema on purpose).
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { checkGetMetadataParams as plainCheck } from '../../../bench/plain/server/fastpath/getMetadataParams.js';
import { checkGetMetadataParams } from '../../../src/server/fastpath/getMetadataParams.js';
import { FsGetMetadataParams } from '../../../src/server/params.js';

const field = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.string(),
  fc.integer(),
  fc.constant({ kind: 'none' }),
  fc.constant([]),
);

const params = fc.oneof(
  fc.record(
    { path: field, followSymlinks: field, sandbox: field, extra: field },
    { requiredKeys: [] },
  ),
  field,
);

describe('checkGetMetadataParams', () => {
  it('returns what its plain twin and the schema return, or leaves the value to the schema', () => {
    fc.assert(
      fc.property(params, (value) => {
        const fast = checkGetMetadataParams(value);
        const plain = plainCheck(value);
        const schema = FsGetMetadataParams.safeParse(value);
        if (fast !== undefined) {
          expect(fast).toStrictEqual(plain);
          expect(schema.success && schema.data).toStrictEqual(fast);
          return;
        }
        expect(plain).toBeUndefined();
        const sandbox = (value as { sandbox?: unknown } | null | undefined)?.sandbox;
        if (sandbox === undefined || sandbox === null) expect(schema.success).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
