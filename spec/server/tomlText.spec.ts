/**
 * TOML printing as the 0.169.0 binary prints `environmentConfig/read` layers. Every expected
 * text below is the binary's own output for the same input (probed 2026-12-01).
 */
import { describe, expect, it } from '@jest/globals';
import { parseToml, printFloat, printToml, TomlSyntaxError } from '../../src/server/tomlText.js';

const roundTrip = (text: string): string => printToml(parseToml(text));

describe('printToml', () => {
  it('picks the string form the binary picks', () => {
    const input = [
      '[s]',
      `q1 = 'a"b'`,
      `q2 = "it's"`,
      `q3 = '''a\\b''c'''`,
      `q4 = "x'''y\\\\"`,
      `q5 = "line1\\n\\"quoted\\"\\nend"`,
      `q6 = "tab\\there"`,
      `q7 = "cr\\r"`,
      `q8 = "ends with'"`,
      `q9 = "back\\\\slash it's"`,
      `q10 = "nl\\\\\\n"`,
      `q11 = "\\u007f del"`,
      `q12 = ""`,
      `q13 = "trail\\n"`,
      `q14 = "a\\"\\"\\"b\\nc"`,
      `"é" = 1`,
      `"a.b" = 2`,
      `"" = 3`,
      `a-b_C9 = 4`,
      `"a b" = 5`,
    ].join('\n');
    expect(roundTrip(input)).toBe(
      [
        '[s]',
        `q1 = 'a"b'`,
        `q2 = "it's"`,
        `q3 = '''a\\b''c'''`,
        `q4 = "x'''y\\\\"`,
        'q5 = """',
        'line1',
        '"quoted"',
        'end"""',
        'q6 = "tab\\there"',
        'q7 = "cr\\r"',
        `q8 = "ends with'"`,
        `q9 = '''back\\slash it's'''`,
        "q10 = '''",
        'nl\\',
        "'''",
        'q11 = "\\u007F del"',
        'q12 = ""',
        'q13 = """',
        'trail',
        '"""',
        "q14 = '''",
        'a"""b',
        "c'''",
        '"é" = 1',
        '"a.b" = 2',
        '"" = 3',
        'a-b_C9 = 4',
        '"a b" = 5',
        '',
      ].join('\n'),
    );
  });

  it('prints numbers, booleans and dates as Rust does', () => {
    // [input, the binary's output]; the same text where it prints the value back unchanged.
    const cases: [string, string?][] = [
      ['t = true'],
      ['n = -17'],
      ['big = 9007199254740993'],
      ['f2 = 0.1'],
      ['f3 = 3e-7', 'f3 = 0.0000003'],
      ['f4 = 1e16', 'f4 = 10000000000000000.0'],
      ['f5 = 123456789.125'],
      ['h = -0.0'],
      ['i = inf'],
      ['j = -inf'],
      ['k = nan'],
      ['d = 1979-05-27T07:32:00Z'],
      ['ld = 1979-05-27'],
      ['lt = 07:32:00.5'],
      ['odt = 1979-05-27T00:32:00.999-07:00'],
    ];
    expect(roundTrip(cases.map(([input]) => input).join('\n'))).toBe(
      cases.map(([input, output]) => `${output ?? input}\n`).join(''),
    );
    expect(printFloat(1e300)).toBe(`1${'0'.repeat(300)}.0`);
    expect(printFloat(-2.5e-3)).toBe('-0.0025');
  });

  it('lays out tables, inline tables and arrays of tables as sections', () => {
    const input = [
      'model = "m"',
      '[mcp_servers.bar]',
      'command = "bar"',
      'env = { A = "1", B = { C = 2 } }',
      'empty = []',
      'emptyt = {}',
      'nested = [[1, 2], ["a"]]',
      'tabs = [{ a = 1 }, { b = 2 }]',
      '[[mcp_servers.arr]]',
      'a = 1',
      '[[mcp_servers.arr]]',
      'b = 2',
      '[mcp_servers.only_sub]',
      '[mcp_servers.only_sub.sub]',
      'x = 1',
    ].join('\n');
    expect(roundTrip(input)).toBe(
      [
        'model = "m"',
        '',
        '[mcp_servers.bar]',
        'command = "bar"',
        'empty = []',
        'nested = [[1, 2], ["a"]]',
        '',
        '[mcp_servers.bar.env]',
        'A = "1"',
        '',
        '[mcp_servers.bar.env.B]',
        'C = 2',
        '',
        '[mcp_servers.bar.emptyt]',
        '',
        '[[mcp_servers.bar.tabs]]',
        'a = 1',
        '',
        '[[mcp_servers.bar.tabs]]',
        'b = 2',
        '',
        '[[mcp_servers.arr]]',
        'a = 1',
        '',
        '[[mcp_servers.arr]]',
        'b = 2',
        '',
        '[mcp_servers.only_sub.sub]',
        'x = 1',
        '',
      ].join('\n'),
    );
    expect(printToml({})).toBe('');
  });
});

describe('parseToml', () => {
  it('reports a syntax error with its line and column', () => {
    let caught: unknown;
    try {
      parseToml('model = "x"\n[[broken\n');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(TomlSyntaxError);
    expect((caught as TomlSyntaxError).line).toBe(2);
    expect((caught as TomlSyntaxError).message).toMatch(/^2:\d+: /);
  });
});
