/** W3C trace context values: parsing, validation, new and child contexts. */
import { describe, expect, it } from '@jest/globals';
import {
  childTraceContext,
  isValidTraceState,
  newTraceContext,
  parseTraceParent,
  validTraceContext,
} from '../../src/protocol/w3cTraceContext.js';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('W3C trace context', () => {
  it('parses a version-00 traceparent', () => {
    expect(parseTraceParent(PARENT)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parseTraceParent(PARENT.replace(/-01$/, '-00'))?.sampled).toBe(false);
  });

  it.each([
    ['00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    [''],
  ])('refuses traceparent %j', (value) => {
    expect(parseTraceParent(value)).toBeUndefined();
    expect(validTraceContext({ traceparent: value })).toBeUndefined();
  });

  it('validates tracestate and drops only an invalid tracestate', () => {
    expect(isValidTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toBe(true);
    expect(isValidTraceState('')).toBe(true);
    expect(isValidTraceState('Upper=x')).toBe(false);
    expect(isValidTraceState('a=b=c,')).toBe(false);
    expect(isValidTraceState(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBe(
      false,
    );
    expect(validTraceContext({ traceparent: PARENT, tracestate: 'bad state' })).toEqual({
      traceparent: PARENT,
    });
  });

  it('makes root and child contexts that parse', () => {
    const root = newTraceContext();
    expect(parseTraceParent(root.traceparent)?.sampled).toBe(true);
    const child = childTraceContext({ traceparent: PARENT, tracestate: 'rojo=1' });
    const parts = parseTraceParent(child.traceparent)!;
    expect(parts.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(parts.parentId).not.toBe('00f067aa0ba902b7');
    expect(child.tracestate).toBe('rojo=1');
    expect(() => childTraceContext({ traceparent: 'nope' })).toThrow('invalid traceparent');
  });
});
