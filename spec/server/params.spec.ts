/**
 * The executor's params decoder: serde's wording for what the schemas reject, as the binary
 * words it (-32602).
 */
import { describe, expect, it } from '@jest/globals';
import { FsGetMetadataParams, paramsDecoder, ProcessReadParams } from '../../src/server/params.js';

describe('paramsDecoder(FsGetMetadataParams)', () => {
  const decode = paramsDecoder(FsGetMetadataParams);

  it('decodes the common shapes', () => {
    expect(decode({ path: 'file:///a', sandbox: null, extra: 1 })).toStrictEqual({
      path: 'file:///a',
      sandbox: null,
    });
    expect(decode({ path: 'file:///a', followSymlinks: false })).toStrictEqual({
      path: 'file:///a',
      followSymlinks: false,
    });
  });

  it('words errors as serde does', () => {
    expect(() => decode({ followSymlinks: true })).toThrow('missing field `path`');
    expect(() => decode({ path: 'file:///a', followSymlinks: 1 })).toThrow(
      'invalid type: number, expected a boolean',
    );
  });
});

describe('paramsDecoder: unsigned fields', () => {
  // Probed on codex 0.169.0 (`process/read`, `fs/readBlock`): serde names the primitive type.
  const decode = paramsDecoder(ProcessReadParams);
  const failure = (params: unknown): string => {
    try {
      decode(params);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };

  it('words a string as `expected u64` and a fraction or a negative as `invalid number`', () => {
    expect(failure({ processId: 'p', afterSeq: 'a' })).toBe(
      'invalid type: string "a", expected u64',
    );
    expect(failure({ processId: 'p', waitMs: 1.5 })).toBe('invalid number');
    expect(failure({ processId: 'p', afterSeq: -1 })).toBe('invalid number');
    expect(failure({ processId: 'p', afterSeq: 3 })).toBe('accepted');
  });
});
