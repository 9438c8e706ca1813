/**
 * The executor's handler table (src/server/methods.ts) against the method table and the real
 * binary's transcripts (spec/fixtures/wire): each handler's serde-worded decoder accepts every
 * params value the binary accepted, and words its -32602 failures as the binary did; a
 * capability flag is advertised exactly when its methods are served.
 */
import { describe, expect, it } from '@jest/globals';
import { METHODS, clientMethods, isClientMethod } from '../../src/protocol/methods.js';
import { EXECUTOR_CAPABILITIES } from '../../src/server/environmentInfo.js';
import { HANDLERS, handlerOf, type ServedMethod } from '../../src/server/methods.js';
import { RpcFailure } from '../../src/server/rpcFailure.js';
import { asRecord, exchanges, loadWireFixtures } from '../protocol/wireFixtures.js';

/** serde's own failure texts; the rest (URIs, base64, state) come from the handlers. */
const SERDE_FAILURE =
  /^(missing field|invalid type|unknown variant|invalid value|invalid length|invalid number)/;
const all = loadWireFixtures().flatMap(exchanges);
const servedNames = (Object.keys(HANDLERS) as ServedMethod[]).filter((m) => handlerOf(m));

function decodeOutcome(method: string, params: unknown): { ok: true } | { error: string } {
  try {
    handlerOf(method)!.decode(params);
    return { ok: true };
  } catch (error) {
    if (!(error instanceof RpcFailure)) throw error;
    return { error: `${error.code} ${error.message}` };
  }
}

describe('server handler table', () => {
  it('covers every client request of the method table but initialize', () => {
    const requests = Object.keys(clientMethods).filter((m) => m !== 'initialize');
    expect(Object.keys(HANDLERS).sort()).toEqual(requests.sort());
  });

  it('names the gating family of the method table', () => {
    for (const method of servedNames) {
      expect({ method, family: handlerOf(method)!.family }).toEqual({
        method,
        family: METHODS[method].family,
      });
    }
  });

  it('decodes every params value the binary answered with a result', () => {
    const accepted = all.filter(
      (x) => servedNames.includes(x.method as ServedMethod) && x.reply && 'result' in x.reply,
    );
    expect(accepted.length).toBeGreaterThan(50);
    for (const x of accepted) {
      expect({ method: x.method, params: x.params, ...decodeOutcome(x.method, x.params) }).toEqual({
        method: x.method,
        params: x.params,
        ok: true,
      });
    }
  });

  it('words its params failures as the binary does (-32602)', () => {
    const rejected = all.filter(
      (x) =>
        servedNames.includes(x.method as ServedMethod) && asRecord(x.reply?.error)?.code === -32602,
    );
    expect(
      rejected.filter((x) => SERDE_FAILURE.test(String(asRecord(x.reply?.error)?.message))).length,
    ).toBeGreaterThan(5);
    for (const x of rejected) {
      const error = asRecord(x.reply?.error)!;
      if (!SERDE_FAILURE.test(String(error.message))) continue;
      expect({ method: x.method, params: x.params, ...decodeOutcome(x.method, x.params) }).toEqual({
        method: x.method,
        params: x.params,
        error: `${error.code} ${error.message}`,
      });
    }
  });

  it('decodes what the client schema produces from the binary-accepted params', () => {
    for (const x of all) {
      if (!isClientMethod(x.method) || !handlerOf(x.method) || !x.reply || !('result' in x.reply))
        continue;
      const parsed = clientMethods[x.method].params.safeParse(x.params);
      if (!parsed.success) continue; // params the upstream client never sends
      expect({ method: x.method, ...decodeOutcome(x.method, parsed.data) }).toEqual({
        method: x.method,
        ok: true,
      });
    }
  });

  it('advertises a capability flag exactly when the methods it gates are served', () => {
    for (const [method, entry] of Object.entries(METHODS)) {
      if (entry.from !== 'client' || entry.capability === undefined) continue;
      expect({ method, advertised: EXECUTOR_CAPABILITIES[entry.capability] }).toEqual({
        method,
        advertised: handlerOf(method) !== undefined,
      });
    }
  });
});
