/**
 * The executor's hand-written params checks (params.ts `executorFastCheck`) against their zod
 * schemas: whatever a check accepts, it returns exactly what the schema's parse returns; what
 * it declines, the schema either rejects or it is a case left to the schema on purpose.
 */
import { describe, expect, it } from '@jest/globals';
import {
  executorFastCheck,
  FsGetMetadataParams,
  paramsDecoder,
  ProcessReadParams,
} from '../../src/server/params.js';

const PATHS = ['file:///tmp', 'relative', '', 7, null, undefined, ['file:///x'], { p: 1 }];
const FOLLOW = [true, false, null, undefined, 'yes', 0, {}];
const SANDBOX = [undefined, null, { kind: 'none' }, 'x'];

function candidates(): unknown[] {
  const values: unknown[] = [null, undefined, 'file:///tmp', 3, [], [{ path: 'file:///tmp' }]];
  for (const path of PATHS) {
    for (const followSymlinks of FOLLOW) {
      for (const sandbox of SANDBOX) {
        const value: Record<string, unknown> = { extra: 1 };
        if (path !== undefined) value.path = path;
        if (followSymlinks !== undefined) value.followSymlinks = followSymlinks;
        if (sandbox !== undefined) value.sandbox = sandbox;
        values.push(value);
      }
    }
  }
  return values;
}

describe('executorFastCheck(FsGetMetadataParams)', () => {
  const check = executorFastCheck(FsGetMetadataParams)!;

  it('returns what the schema returns whenever it accepts, and accepts the common shapes', () => {
    let accepted = 0;
    for (const value of candidates()) {
      const fast = check(value);
      const parsed = FsGetMetadataParams.safeParse(value);
      if (fast === undefined) {
        const record = value as Record<string, unknown> | null;
        const leftToSchema =
          typeof record === 'object' &&
          record !== null &&
          record.sandbox !== undefined &&
          record.sandbox !== null;
        if (!leftToSchema)
          expect({ value, schemaAccepts: parsed.success }).toEqual({ value, schemaAccepts: false });
        continue;
      }
      accepted += 1;
      expect(parsed.success).toBe(true);
      expect(fast).toStrictEqual(parsed.data);
    }
    // Three string paths × followSymlinks true, false, null or absent × sandbox null or absent.
    expect(accepted).toBe(24);
  });

  it('leaves the error wording to the schema', () => {
    const decode = paramsDecoder(FsGetMetadataParams);
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
