/**
 * notificationText: a `process/output` notification assembled around its base64 chunk is the
 * same text `JSON.stringify` gives, whole and in pieces, for any bytes and awkward ids.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ProcessOutputParams, notificationText } from '../../src/server/notificationText.js';

const plain = (method: string, params: ProcessOutputParams): string =>
  JSON.stringify({
    method,
    params: {
      processId: params.processId,
      seq: params.seq,
      stream: params.stream,
      chunk: params.chunk,
    },
  });

describe('notificationText', () => {
  it('assembles process/output exactly as JSON.stringify does', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.nat(),
        fc.constantFrom('stdout', 'stderr', 'pty'),
        fc.uint8Array({ maxLength: 256 }),
        (processId, seq, stream, bytes) => {
          const params = new ProcessOutputParams(processId, seq, stream, Buffer.from(bytes));
          const expected = plain('process/output', params);
          expect(notificationText('process/output', params)).toBe(expected);
          expect(JSON.stringify({ method: 'process/output', params })).toBe(expected);
          const { head, ascii, tail } = params.splitNotificationText('process/output');
          expect(head + ascii + tail).toBe(expected);
          expect(Buffer.from(params.chunk, 'base64')).toEqual(Buffer.from(bytes));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('gives JSON.stringify for every other notification', () => {
    const params = { processId: 'p"\\\n', exitCode: 3 };
    expect(notificationText('process/exited', params)).toBe(
      JSON.stringify({ method: 'process/exited', params }),
    );
  });
});
