import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { z } from 'zod';
import { fastCheckFor as plainCheckFor } from '../../../bench/plain/protocol/fastpath/fastChecks.js';
import { fastCheckFor } from '../../../src/protocol/fastpath/fastChecks.js';
import { FsGetMetadataResult } from '../../../src/protocol/fs.js';
import {
  ProcessClosedNotification,
  ProcessExitedNotification,
  ProcessOutputNotification,
  ProcessStartResult,
} from '../../../src/protocol/process.js';

/** `valid`, without each key, with extra keys, and with each key set to each of `wrongs`. */
function variantsOf(valid: Record<string, unknown>, wrongs: readonly unknown[]): unknown[] {
  const values: unknown[] = [valid, { ...valid, extra: 1 }, null, [], 'x', 42, [valid]];
  for (const key of Object.keys(valid)) {
    const { [key]: _omitted, ...missing } = valid;
    values.push(missing);
    for (const wrong of wrongs) values.push({ ...valid, [key]: wrong });
  }
  return values;
}

const WRONGS: readonly unknown[] = [
  undefined,
  null,
  '',
  'true',
  'none',
  'stdout',
  'aGk=',
  'aGk',
  true,
  0,
  1,
  -1,
  1.5,
  2 ** 53,
  [],
  {},
];

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

  it('process/start result and process notifications', () => {
    const decides = { decidesAll: true };
    expectSameAsSchema(
      ProcessStartResult,
      [
        ...variantsOf({ processId: 'p1', sandboxType: 'none' }, WRONGS),
        ...['macosSeatbelt', 'linuxSeccomp', 'windowsRestrictedToken', 'other'].map(
          (sandboxType) => ({ processId: 'p1', sandboxType }),
        ),
      ],
      decides,
    );
    for (const stream of ['stdout', 'stderr', 'pty']) {
      expectSameAsSchema(
        ProcessOutputNotification,
        variantsOf({ processId: 'p1', seq: 3, stream, chunk: 'aGk=' }, WRONGS),
        decides,
      );
    }
    expectSameAsSchema(
      ProcessOutputNotification,
      ['', 'aGk', 'aGk==', 'a+/=', 'YQ==', '====', 'aGk=\n'].map((chunk) => ({
        processId: 'p',
        seq: 1,
        stream: 'stdout',
        chunk,
      })),
      decides,
    );
    expectSameAsSchema(
      ProcessExitedNotification,
      [
        ...variantsOf({ processId: 'p1', seq: 2, exitCode: 0, sandboxDenied: false }, WRONGS),
        ...variantsOf({ processId: 'p1', seq: 2, exitCode: -9 }, WRONGS),
      ],
      decides,
    );
    expectSameAsSchema(
      ProcessClosedNotification,
      variantsOf({ processId: 'p1', seq: 4 }, WRONGS),
      decides,
    );
  });
});

/** A value of any of the kinds the fields of these shapes take, valid or not. */
const fieldValue = fc.oneof(
  fc.constantFrom(undefined, null, true, false, 0, -1, 1.5, 2 ** 53, -0, '', 'aGk=', 'aGk'),
  fc.constantFrom('stdout', 'stderr', 'pty', 'none', 'linuxSeccomp', 'other', 'p1'),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.base64String({ maxLength: 12 }),
  fc.jsonValue({ maxDepth: 1 }),
);

describe('fast checks against their plain twin (the schema, bench/plain/protocol/fastpath)', () => {
  const shapes: readonly [string, z.ZodType, readonly string[]][] = [
    [
      'FsGetMetadataResult',
      FsGetMetadataResult,
      ['isDirectory', 'isFile', 'isSymlink', 'size', 'createdAtMs', 'modifiedAtMs'],
    ],
    ['ProcessStartResult', ProcessStartResult, ['processId', 'sandboxType']],
    [
      'ProcessOutputNotification',
      ProcessOutputNotification,
      ['processId', 'seq', 'stream', 'chunk'],
    ],
    [
      'ProcessExitedNotification',
      ProcessExitedNotification,
      ['processId', 'seq', 'exitCode', 'sandboxDenied'],
    ],
    ['ProcessClosedNotification', ProcessClosedNotification, ['processId', 'seq']],
  ];
  it.each(shapes)(
    '%s: the same output as the twin for any record of its keys',
    (_, schema, keys) => {
      const fast = fastCheckFor(schema)!;
      const plain = plainCheckFor(schema)!;
      const record = fc.dictionary(fc.constantFrom(...keys, 'extra'), fieldValue);
      fc.assert(
        fc.property(fc.oneof(record, fieldValue), (value) => {
          expect(fast(value)).toEqual(plain(value));
        }),
        { numRuns: 3000 },
      );
    },
  );
});
