/**
 * Fuzzing JSON-RPC inbound parsing on both sides. The executor turns any text (or bytes) into
 * a message or the detail of a malformed-input error; the client takes any text as a message
 * or ends the connection with a typed error, failing pending calls with it.
 */
import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { ExecServerError } from '../../src/protocol/errors.js';
import { RpcConnection } from '../../src/rpc/rpcConnection.js';
import { parseInbound } from '../../src/server/inboundMessage.js';
import { undecodableJsonError } from '../../src/server/jsonSyntax.js';
import { createTransportPair } from '../support/transportPair.js';
import { bytes, fuzzParameters, fuzzTimeoutMs, mutated } from './fuzzRuns.js';

jest.setTimeout(fuzzTimeoutMs());

const requestId = fc.oneof(
  fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
  fc.string({ maxLength: 20 }),
);
const method = fc.oneof(
  fc.constantFrom('initialize', 'process/start', 'process/read', 'fs/readFile', 'process/output'),
  fc.string({ maxLength: 30 }),
);
/** JSON objects without duplicate keys, as `JSON.stringify` writes them. */
const params = fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 4 }));

/** Texts near the JSON-RPC shapes: valid messages, with fields dropped or retyped, or cut. */
const nearMessage = fc
  .record(
    {
      id: fc.oneof(requestId, fc.jsonValue({ maxDepth: 1 })),
      method: fc.oneof(method, fc.jsonValue({ maxDepth: 1 })),
      params,
      result: params,
      error: fc.oneof(
        fc.record({ code: fc.integer(), message: fc.string({ maxLength: 20 }) }),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      jsonrpc: fc.constant('2.0'),
    },
    { requiredKeys: [] },
  )
  .map((record) => JSON.stringify(record));

const anyText = fc.oneof(
  nearMessage,
  fc.json({ maxDepth: 4 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  nearMessage.chain((text) =>
    mutated(new TextEncoder().encode(text)).map((b) => new TextDecoder().decode(b)),
  ),
);

describe('fuzz: executor inbound JSON-RPC', () => {
  it('turns any text into a message or a malformed-input detail, never a throw', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const message = parseInbound(text);
        if (message.kind === 'malformed') {
          expect(message.detail).toMatch(/\S/);
          return;
        }
        // Whatever is accepted is JSON that JSON.parse accepts too.
        const value = JSON.parse(text) as Record<string, unknown>;
        if (message.kind === 'request' || message.kind === 'notification') {
          expect(message.method).toBe(value.method);
          expect(message.params).toEqual(value.params);
        }
        if (message.kind !== 'notification') expect(message.id).toBe(value.id);
      }),
      fuzzParameters(),
    );
  });

  it('reads a well-formed request exactly as sent', () => {
    fc.assert(
      fc.property(requestId, method, params, (id, name, value) => {
        const text = JSON.stringify({ id, method: name, params: value });
        // Compared with what the text holds (`-0` is written as `0`).
        const sent = JSON.parse(text) as { params: unknown };
        expect(parseInbound(text)).toEqual({
          kind: 'request',
          id,
          method: name,
          params: sent.params,
        });
      }),
      fuzzParameters(),
    );
  });

  it('refuses nesting beyond the limit without exhausting the stack', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 129, max: 200_000 }),
        fc.constantFrom('[', '{"a":'),
        (depth, open) => {
          const message = parseInbound(open.repeat(depth));
          expect(message.kind).toBe('malformed');
        },
      ),
      fuzzParameters(20),
    );
  });

  it('words an error for any bytes that are not UTF-8 JSON', () => {
    fc.assert(
      fc.property(bytes(200), (input) => {
        const detail = undecodableJsonError(input);
        if (detail === undefined) {
          // Only bytes that are UTF-8 JSON after all.
          expect(
            () => JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(input)) as unknown,
          ).not.toThrow();
        } else {
          expect(detail).toMatch(/\S/);
        }
      }),
      fuzzParameters(),
    );
  });
});

describe('fuzz: client inbound JSON-RPC', () => {
  it('takes any text as a message or ends with a typed error that pending calls see', () => {
    fc.assert(
      fc.property(fc.array(anyText, { maxLength: 5 }), (texts) => {
        const { client, server } = createTransportPair();
        server.incoming$.subscribe({ error: () => undefined });
        let closedWith: unknown;
        const rpc = new RpcConnection(client, { onClose: (reason) => (closedWith = reason) });
        let outcome: { value?: unknown; error?: unknown; done: boolean } = { done: false };
        rpc.request('environment/status', null).subscribe({
          next: (value) => (outcome = { value, done: true }),
          error: (error: unknown) => (outcome = { error, done: true }),
        });
        for (const text of texts) server.send(text);
        if (rpc.isClosed) {
          expect(closedWith).toBeInstanceOf(ExecServerError);
          expect(outcome.done).toBe(true);
          if (outcome.error !== undefined) expect(outcome.error).toBeInstanceOf(ExecServerError);
        } else if (outcome.error !== undefined) {
          // A server error answer for id 1.
          expect(outcome.error).toBeInstanceOf(ExecServerError);
        }
        rpc.close();
        expect(outcome.done).toBe(true);
        if (outcome.error !== undefined) expect(outcome.error).toBeInstanceOf(ExecServerError);
      }),
      fuzzParameters(),
    );
  });
});
