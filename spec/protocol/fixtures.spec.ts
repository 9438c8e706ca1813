/**
 * Every message captured from the real 0.169.0 executor must parse with our schemas, and
 * re-serialize to the same JSON (no field unknown to us, no null/omitted mismatch).
 */
import { describe, expect, it } from '@jest/globals';
import {
  classifyMessage,
  clientMethods,
  clientNotifications,
  isClientMethod,
  isServerNotification,
  JsonRpcErrorObject,
  methodFamily,
  serverMethods,
  serverNotifications,
  type ClientMethod,
} from '../../src/protocol/index.js';
import { asRecord, exchanges, loadWireFixtures, wire } from './wireFixtures.js';

const fixtures = loadWireFixtures();
const allExchanges = fixtures.flatMap(exchanges);

/** Executor messages for params that failed to decode (serde or PathUri), as opposed to semantic checks. */
const DECODE_FAILURE =
  /^(missing field|invalid type|unknown variant|invalid URI|unsupported path URI scheme|query parameters are not allowed|fragments are not allowed|Invalid symbol)/;

describe('wire fixtures', () => {
  it('were captured without errors and cover a meaningful set of scenarios', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(25);
    for (const fixture of fixtures)
      expect({ file: fixture.file, captureError: fixture.captureError }).toEqual({
        file: fixture.file,
        captureError: undefined,
      });
  });

  it.each(fixtures.map((f) => [f.file, f] as const))(
    '%s: every received message has a schema and round-trips',
    (_file, fixture) => {
      const methodById = new Map<string, string>();
      const serverRequestById = new Map<string, string>();
      for (const entry of fixture.transcript) {
        if (entry.message === undefined) continue;
        const message = asRecord(entry.message);
        const key = `${entry.conn}\u0000${JSON.stringify(message?.id)}`;
        if (entry.dir === 'send') {
          if (message && typeof message.method === 'string' && 'id' in message)
            methodById.set(key, message.method);
          const answered = serverRequestById.get(key);
          if (message && answered !== undefined && 'result' in message) {
            // Our answer to a server→client request, which the executor accepted.
            const schema = serverMethods[answered as keyof typeof serverMethods].result;
            expect(wire(schema.parse(message.result))).toStrictEqual(message.result);
          }
          continue;
        }
        const classified = classifyMessage(entry.message);
        expect(classified).toBeDefined();
        if (classified === undefined) continue;
        switch (classified.kind) {
          case 'response': {
            const method = methodById.get(key);
            expect(method).toBeDefined();
            if (method === undefined || !isClientMethod(method))
              throw new Error(`response to unknown method ${method}`);
            const parsed = clientMethods[method].result.parse(classified.result);
            expect({ method, result: wire(parsed) }).toStrictEqual({
              method,
              result: classified.result,
            });
            break;
          }
          case 'error': {
            const parsed = JsonRpcErrorObject.parse(classified.error);
            expect(parsed).toStrictEqual(classified.error);
            expect(Object.keys(classified.error).sort()).toEqual(['code', 'message']); // never `data`
            expect(classified.id === -1 || methodById.has(key)).toBe(true);
            break;
          }
          case 'notification': {
            const method = classified.method;
            if (!isServerNotification(method))
              throw new Error(`no schema for server notification \`${method}\``);
            const parsed = serverNotifications[method].parse(classified.params);
            expect({ method, params: wire(parsed) }).toStrictEqual({
              method,
              params: classified.params,
            });
            break;
          }
          case 'request': {
            const method = classified.method;
            if (!(method in serverMethods))
              throw new Error(`no schema for server request \`${method}\``);
            const parsed = serverMethods[method as keyof typeof serverMethods].params.parse(
              classified.params,
            );
            expect(wire(parsed)).toStrictEqual(classified.params);
            serverRequestById.set(key, method);
            break;
          }
        }
      }
    },
  );
});

describe('outbound params against what the executor accepted', () => {
  const accepted = allExchanges.filter(
    (x) => x.reply !== undefined && 'result' in x.reply && isClientMethod(x.method),
  );

  it('every method our registry knows was exercised successfully against the binary', () => {
    const seen = new Set(accepted.map((x) => x.method));
    expect(Object.keys(clientMethods).filter((m) => !seen.has(m))).toEqual([]);
  });

  it.each(accepted.map((x) => [`${x.fixture} ${x.conn}#${String(x.id)} ${x.method}`, x] as const))(
    '%s parses, and canonical params re-serialize to the same keys and nulls',
    (_label, x) => {
      const schema = clientMethods[x.method as ClientMethod].params;
      const parsed = schema.parse(x.params);
      if (x.variant === undefined) {
        expect(wire(parsed)).toStrictEqual(x.params);
        // An explicit null must be what our parsed type carries even when the member is absent
        // (nullable-required, serde `Option` without skip_serializing_if), not an optional field.
        const record = asRecord(x.params) ?? {};
        for (const [key, value] of Object.entries(record)) {
          if (value !== null) continue;
          const { [key]: _dropped, ...without } = record;
          expect({ key, params: wire(schema.parse(without)) }).toStrictEqual({
            key,
            params: x.params,
          });
        }
      }
    },
  );

  it('params the executor refused to decode (-32602) are refused by our schemas too', () => {
    const refused = allExchanges.filter((x) => {
      const error = asRecord(x.reply?.error);
      return (
        error?.code === -32602 &&
        typeof error.message === 'string' &&
        DECODE_FAILURE.test(error.message)
      );
    });
    expect(refused.length).toBeGreaterThanOrEqual(8);
    for (const x of refused) {
      if (!isClientMethod(x.method)) throw new Error(`unexpected method ${x.method}`);
      const result = clientMethods[x.method].params.safeParse(x.params);
      expect({ method: x.method, params: x.params, accepted: result.success }).toEqual({
        method: x.method,
        params: x.params,
        accepted: false,
      });
    }
  });

  it('initialized notifications match our schema', () => {
    const sent = fixtures
      .flatMap((f) => f.transcript)
      .filter((e) => e.dir === 'send' && asRecord(e.message)?.method === 'initialized');
    expect(sent.length).toBeGreaterThan(0);
    for (const entry of sent) {
      const params = asRecord(entry.message)?.params;
      expect(wire(clientNotifications.initialized.parse(params))).toStrictEqual(params);
    }
  });

  it('methodFamily() names the same family as the executor gating errors', () => {
    const gating = allExchanges.filter((x) => x.fixture === 'gating');
    expect(gating.length).toBeGreaterThanOrEqual(16);
    for (const x of gating) {
      const message = String(asRecord(x.reply?.error)?.message);
      const family = /before using (.+) methods$/.exec(message)?.[1];
      if (x.method === 'initialize') continue;
      expect({ method: x.method, family: methodFamily(x.method as ClientMethod) }).toEqual({
        method: x.method,
        family,
      });
    }
  });
});

describe('process event invariants seen on the wire', () => {
  it('seq starts at 1, is contiguous across output/exited/closed, and closed is last', () => {
    let checked = 0;
    for (const fixture of fixtures) {
      const seqs = new Map<string, { seq: number; method: string }[]>();
      for (const entry of fixture.transcript) {
        const message = asRecord(entry.message);
        if (
          entry.dir !== 'recv' ||
          typeof message?.method !== 'string' ||
          !message.method.startsWith('process/')
        )
          continue;
        const params = asRecord(message.params)!;
        const key = `${entry.conn}/${String(params.processId)}`;
        seqs.set(key, [
          ...(seqs.get(key) ?? []),
          { seq: Number(params.seq), method: message.method },
        ]);
      }
      for (const events of seqs.values()) {
        if (!events.some((e) => e.method === 'process/closed')) continue; // connection ended first
        const last = events.at(-1)!;
        expect(last.method).toBe('process/closed');
        const sorted = events.map((e) => e.seq).sort((a, b) => a - b);
        expect(sorted).toEqual(sorted.map((_, i) => i + 1));
        expect(last.seq).toBe(sorted.length);
        expect(events.filter((e) => e.method === 'process/exited')).toHaveLength(1);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });
});
