import { describe, expect, it } from '@jest/globals';
import type { z } from 'zod';
import { fastCheckFor } from '../../src/protocol/fastChecks.js';
import { FsGetMetadataParams, FsGetMetadataResult } from '../../src/protocol/fs.js';

/**
 * Whatever the check returns is what the schema outputs. A check may leave rare shapes to the
 * schema (undefined); with `decidesAll` it must decide every value the schema accepts.
 */
function expectSameAsSchema(
  schema: z.ZodType,
  values: readonly unknown[],
  { decidesAll }: { decidesAll: boolean },
): void {
  const check = fastCheckFor(schema);
  if (check === undefined) throw new Error('no fast check registered');
  for (const value of values) {
    const parsed = schema.safeParse(value);
    const checked = check(value);
    if (checked !== undefined || decidesAll) {
      expect({ value, checked }).toEqual({
        value,
        checked: parsed.success ? parsed.data : undefined,
      });
    }
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
    expectSameAsSchema(FsGetMetadataResult, values, { decidesAll: true });
  });

  it('FsGetMetadataParams: URIs, followSymlinks and sandbox as the executor receives them', () => {
    const valid = { path: 'file:///tmp/a', sandbox: null };
    const paths: readonly unknown[] = [
      'file:///',
      'file:///tmp/a%20b',
      'file://localhost/tmp',
      'FILE:///tmp',
      'file:///C:/x',
      'file:///tmp?q',
      'file:///tmp#f',
      'file://user@host/tmp',
      'file://host:22/tmp',
      'http://x/',
      '/tmp',
      '',
      7,
      null,
    ];
    const values: unknown[] = [valid, { path: 'file:///tmp' }, { ...valid, extra: true }, null, []];
    for (const path of paths) values.push({ ...valid, path });
    for (const followSymlinks of [true, false, undefined, null, 'yes', 1])
      values.push({ ...valid, followSymlinks });
    for (const sandbox of [undefined, null, {}, 'none', { type: 'readOnly' }])
      values.push({ ...valid, sandbox });
    expectSameAsSchema(FsGetMetadataParams, values, { decidesAll: false });
    // The shapes clients send are decided by the check itself.
    const check = fastCheckFor(FsGetMetadataParams)!;
    expect(check(valid)).toEqual(valid);
    expect(check({ path: 'file:///tmp', followSymlinks: true, sandbox: null })).toEqual({
      path: 'file:///tmp',
      followSymlinks: true,
      sandbox: null,
    });
  });
});
