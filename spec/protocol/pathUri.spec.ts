import { describe, expect, it } from '@jest/globals';
import {
  fileUriToPath,
  fileUriToPathBytes,
  isFileUri,
  pathBytesToFileUri,
  PathUri,
  PathUriError,
  pathToFileUri,
} from '../../src/protocol/index.js';
import { asRecord, exchanges, loadWireFixtures } from './wireFixtures.js';

const all = loadWireFixtures().flatMap(exchanges);
const ok = (x: (typeof all)[number]) => asRecord(asRecord(x.reply)?.result);

describe('pathUri against the executor', () => {
  it('spells unusual file names exactly like the executor (canonicalize echoes our URI)', () => {
    const probes = all.filter(
      (x) => x.fixture === 'fs-path-encoding' && x.method === 'fs/canonicalize',
    );
    expect(probes.length).toBeGreaterThanOrEqual(8);
    for (const x of probes) {
      const sent = String(asRecord(x.params)?.path);
      expect(ok(x)?.path).toBe(sent);
    }
  });

  it('round-trips every URI the executor returned (canonicalize, walk, environment info)', () => {
    const uris: string[] = [];
    for (const x of all) {
      const result = ok(x);
      if (x.method === 'fs/canonicalize' && typeof result?.path === 'string')
        uris.push(result.path);
      if (x.method === 'fs/walk' && Array.isArray(result?.entries)) {
        for (const entry of result.entries as { path: string }[]) uris.push(entry.path);
      }
    }
    expect(uris.length).toBeGreaterThanOrEqual(20);
    for (const uri of uris) expect(pathToFileUri(fileUriToPath(uri))).toBe(uri);
  });

  it('rejects every path the executor rejected as a URI or as foreign to a POSIX host', () => {
    const rejected = all.filter((x) => {
      const error = asRecord(asRecord(x.reply)?.error);
      const message = String(error?.message ?? '');
      return x.fixture === 'fs-errors' && /URI|path URIs|invalid on 'linux'/.test(message);
    });
    expect(rejected.length).toBeGreaterThanOrEqual(7);
    for (const x of rejected) {
      const path = String(asRecord(x.params)?.path);
      expect({ path, accepted: isFileUri(path) }).toEqual({ path, accepted: false });
    }
  });
});

describe('pathToFileUri / fileUriToPath', () => {
  it('percent-encodes space, %, #, ?, backslash, braces, backtick and non-ASCII but keeps sub-delims', () => {
    expect(pathToFileUri("/t/a b%#?\\{}`ü;=&'()[]^|")).toBe(
      "file:///t/a%20b%25%23%3F%5C%7B%7D%60%C3%BC;=&'()[]^|",
    );
    expect(fileUriToPath("file:///t/a%20b%25%23%3F%5C%7B%7D%60%C3%BC;=&'()[]^|")).toBe(
      "/t/a b%#?\\{}`ü;=&'()[]^|",
    );
  });

  it('decodes each printable ASCII byte the same whether it is written literally or as %XX', () => {
    for (let byte = 0x20; byte <= 0x7e; byte++) {
      const char = String.fromCharCode(byte);
      if ('%?#'.includes(char)) continue; // literal, they are not part of a path
      const escaped = `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
      expect(fileUriToPath(`file:///dir/a${char}b`)).toBe(`/dir/a${char}b`);
      expect(fileUriToPath(`file:///dir/a${escaped}b`)).toBe(`/dir/a${char}b`);
      expect(fileUriToPathBytes(`file:///dir/a${char}b`)).toEqual(Buffer.from(`/dir/a${char}b`));
      expect(fileUriToPath(pathToFileUri(`/dir/a${char}b`))).toBe(`/dir/a${char}b`);
    }
    expect(pathToFileUri('/a-z_A.Z~0:9/@!$&()*+,;=[]^|')).toBe(
      'file:///a-z_A.Z~0:9/@!$&()*+,;=[]^|',
    );
    expect(() => fileUriToPath('file:///C:/Windows')).toThrow(PathUriError);
  });

  it('normalizes file://localhost and accepts unencoded spaces like the executor', () => {
    expect(fileUriToPath('file://localhost/tmp/x')).toBe('/tmp/x');
    expect(fileUriToPath('file:///tmp/a b')).toBe('/tmp/a b');
    expect(fileUriToPath('file:///')).toBe('/');
  });

  it('explains why a native path, another scheme or a relative path is refused', () => {
    expect(() => fileUriToPath('/tmp/x')).toThrow(
      /not a file: URI; convert native paths with pathToFileUri/,
    );
    expect(() => fileUriToPath('http://example.com/x')).toThrow(/scheme `http`/);
    expect(() => fileUriToPath('file:///x?y')).toThrow(/query/);
    expect(() => fileUriToPath('file:///x#y')).toThrow(/fragment/);
    expect(() => fileUriToPath('file://u:p@localhost/x')).toThrow(/user name/);
    expect(() => fileUriToPath('file://localhost:80/x')).toThrow(/port/);
    expect(() => fileUriToPath('file:///C:/x')).toThrow(/Windows drive/);
    expect(() => fileUriToPath('file://server/share')).toThrow(/UNC/);
    expect(() => fileUriToPath('file:///a%00b')).toThrow(/NUL/);
    expect(() => pathToFileUri('relative/x')).toThrow(PathUriError);
  });

  it('uses the opaque fallback for paths that are not UTF-8, and decodes it back', () => {
    const bytes = Buffer.from([0x2f, 0x74, 0x2f, 0xff, 0xfe]);
    const uri = pathBytesToFileUri(bytes);
    expect(uri.startsWith('file:///%00/bad/path/')).toBe(true);
    expect(Buffer.from(fileUriToPathBytes(uri))).toEqual(bytes);
    expect(() => fileUriToPath(uri)).toThrow(/not valid UTF-8/);
    expect(pathBytesToFileUri(Buffer.from('/ok/ü'))).toBe('file:///ok/%C3%BC');
  });

  it('PathUri schema accepts file: URIs and refuses native paths', () => {
    expect(PathUri.safeParse('file:///tmp').success).toBe(true);
    expect(PathUri.safeParse('/tmp').success).toBe(false);
    expect(PathUri.safeParse('https://x/y').success).toBe(false);
  });
});
