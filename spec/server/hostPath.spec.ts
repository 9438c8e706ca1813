/**
 * `pathFromUri`: the native path of a `file:` URI, as the URL parser resolves it (dot segments,
 * percent-decoding, a backslash as `/`), or the binary's error text for what this POSIX host cannot
 * name (other hosts, drive letters, an encoded `/`) and for malformed URIs.
 */
import { describe, expect, it } from '@jest/globals';
import { pathFromUri } from '../../src/server/hostPath.js';

function outcome(uri: string): string {
  try {
    return `path ${pathFromUri(uri)}`;
  } catch (error) {
    return `error ${(error as Error).message}`;
  }
}

describe('pathFromUri', () => {
  it.each([
    ['file:///', 'path /'],
    ['file:///tmp', 'path /tmp'],
    ['file:///tmp/a b', 'path /tmp/a b'],
    ['file:///tmp/./x', 'path /tmp/x'],
    ['file:///tmp/../x', 'path /x'],
    ['file:///tmp/..', 'path /'],
    ['file:////double', 'path //double'],
    ['file:///C:/x', "error 'file:///C:/x' is invalid on 'linux'"],
    ['file:///c|/x', "error 'file:///c|/x' is invalid on 'linux'"],
    ['file:///a%2Fb', "error 'file:///a%2Fb' is invalid on 'linux'"],
    ['file:///a%20b', 'path /a b'],
    ['file:///a?q', 'error query parameters are not allowed in path URIs'],
    ['file:///a#f', 'error fragments are not allowed in path URIs'],
    ['file:///a\\b', 'path /a/b'],
    ['file://host/a', "error 'file://host/a' is invalid on 'linux'"],
    ['FILE:///a', 'path /a'],
    ['file:/a', 'path /a'],
    ['file:a', 'path /a'],
    ['http:///a', 'error unsupported path URI scheme `http`'],
    ['/a', 'error invalid URI: relative URL without a base'],
    ["file:///~user/it's+(1),[x];=@!$&*", "path /~user/it's+(1),[x];=@!$&*"],
  ])('converts %j to %s', (uri, expected) => {
    expect(outcome(uri)).toBe(expected);
  });
});
