/**
 * The fast notificationText against its plain twin: a `process/output` notification assembled
 * around its base64 chunk is the twin's `JSON.stringify` text, whole and in pieces, for any
 * bytes and awkward ids; every other notification is `JSON.stringify`'s.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ProcessOutputParams,
  notificationText,
} from '../../../src/server/fastpath/notificationText.js';
import * as plain from '../../../bench/plain/server/fastpath/notificationText.js';

describe('notificationText (fast path) against its plain twin', () => {
  it('assembles process/output exactly as JSON.stringify does', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }),
        fc.nat(),
        fc.constantFrom('stdout', 'stderr', 'pty'),
        fc.uint8Array({ maxLength: 256 }),
        fc.constantFrom('process/output', 'x"\\\u2028'),
        (processId, seq, stream, bytes, method) => {
          const fast = new ProcessOutputParams(processId, seq, stream, Buffer.from(bytes));
          const twin = new plain.ProcessOutputParams(processId, seq, stream, Buffer.from(bytes));
          const expected = twin.notificationText(method);
          expect(fast.notificationText(method)).toBe(expected);
          expect(notificationText(method, fast)).toBe(plain.notificationText(method, twin));
          expect(JSON.stringify({ method, params: fast })).toBe(expected);
          const { head, ascii, tail } = fast.splitNotificationText(method);
          expect(head + ascii + tail).toBe(expected);
          expect(ascii).toMatch(/^[\x20-\x7e]*$/);
          expect(Buffer.from(fast.chunk, 'base64')).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives JSON.stringify for every other notification', () => {
    const params = { processId: 'p"\\\n', exitCode: 3 };
    expect(notificationText('process/exited', params)).toBe(
      plain.notificationText('process/exited', params),
    );
  });
});
