import { describe, expect, it } from '@jest/globals';
import { fastCheckFor } from '../../src/protocol/fastChecks.js';
import { FsGetMetadataResult } from '../../src/protocol/fs.js';

/** Every value the schema accepts, the check accepts with the same output; and vice versa. */
function expectSameAsSchema(schema: typeof FsGetMetadataResult, values: readonly unknown[]): void {
  const check = fastCheckFor(schema);
  if (check === undefined) throw new Error('no fast check registered');
  for (const value of values) {
    const parsed = schema.safeParse(value);
    const checked = check(value);
    if (parsed.success) expect({ value, checked }).toEqual({ value, checked: parsed.data });
    else expect({ value, checked }).toEqual({ value, checked: undefined });
  }
}

describe('fast checks agree with their schemas', () => {
  it('FsGetMetadataResult: valid results, every field wrong, missing or extra', () => {
    const valid = {
      isDirectory: true,
      isFile: false,
      isSymlink: false,
      size: 4096,
      createdAtMs: 1764500000000,
      modifiedAtMs: 0,
    };
    const wrongValues: readonly unknown[] = [
      undefined,
      null,
      'true',
      1,
      -1,
      1.5,
      2 ** 53,
      -(2 ** 53),
      Number.MAX_SAFE_INTEGER,
      -0,
      [],
      {},
    ];
    const values: unknown[] = [valid, { ...valid, extra: 1 }, null, [], 'x', 42, [valid]];
    for (const key of Object.keys(valid)) {
      const { [key]: _omitted, ...missing } = valid as Record<string, unknown>;
      values.push(missing);
      for (const wrong of wrongValues) values.push({ ...valid, [key]: wrong });
    }
    expectSameAsSchema(FsGetMetadataResult, values);
  });
});
