import { describe, expect, it } from '@jest/globals';
import { classifyMessage, encodeMessage } from '../../src/protocol/jsonrpc.js';

describe('classifyMessage', () => {
  it('tells requests, notifications, responses and errors apart', () => {
    expect(classifyMessage({ id: 1, method: 'initialize', params: {} })?.kind).toBe('request');
    expect(classifyMessage({ method: 'process/output', params: {} })?.kind).toBe('notification');
    expect(classifyMessage({ id: 'a', result: {} })?.kind).toBe('response');
    expect(classifyMessage({ id: 2, error: { code: -32600, message: 'bad' } })?.kind).toBe('error');
  });

  it('tolerates a jsonrpc member and rejects batches and non-objects', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 1, result: null })?.kind).toBe('response');
    expect(classifyMessage([{ id: 1, result: {} }])).toBeUndefined();
    expect(classifyMessage('x')).toBeUndefined();
    expect(classifyMessage({ id: 1.5, result: {} })).toBeUndefined();
  });

  it('never puts a jsonrpc member on the wire', () => {
    const text = encodeMessage({
      kind: 'request',
      id: 1,
      method: 'environment/info',
      params: null,
    });
    expect(JSON.parse(text)).toEqual({ id: 1, method: 'environment/info', params: null });
  });
});
