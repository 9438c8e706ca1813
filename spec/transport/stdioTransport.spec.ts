import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import {
  ConnectError,
  DisconnectedError,
  MessageTooLargeError,
  ProtocolError,
  ServerError,
} from '../../src/protocol/errors.js';
import { RpcConnection } from '../../src/rpc/rpcConnection.js';
import {
  fromStdio,
  MAX_STDIO_LINE_BYTES,
  spawnStdioTransport,
  type SpawnedStdioTransport,
} from '../../src/transport/stdioTransport.js';
import { isAlive } from '../support/processAlive.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

function pipePair(options?: Parameters<typeof fromStdio>[2]) {
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
  const transport = fromStdio(input, output, options);
  const received = lastValueFrom(transport.incoming$.pipe(toArray()));
  return { input, output, written, transport, received };
}

describe('fromStdio', () => {
  it('splits newline-delimited messages, holds partial lines, strips \\r and skips blank lines', async () => {
    const { input, transport, received } = pipePair();
    input.write('{"a":1}\n{"b"');
    input.write(':2}\r\n\n   \n{"c":');
    input.write('3}\n');
    input.end();
    await expect(received).resolves.toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    transport.close();
  });

  it('keeps multi-byte characters split across chunks and very long lines intact', async () => {
    const { input, received } = pipePair();
    const long = `{"data":"${'é'.repeat(3_000_000)}"}`;
    const bytes = Buffer.from(`${long}\n{"tail":"ü"}\n`, 'utf8');
    for (let offset = 0; offset < bytes.length; offset += 65_537)
      input.write(bytes.subarray(offset, offset + 65_537));
    input.end();
    const lines = await received;
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(long);
    expect(lines[1]).toBe('{"tail":"ü"}');
  });

  it('delivers a final unterminated line at end of input', async () => {
    const { input, received } = pipePair();
    input.end('{"a":1}\n{"last":true}');
    await expect(received).resolves.toEqual(['{"a":1}', '{"last":true}']);
  });

  it('disconnects with a DisconnectedError on a line over the limit', async () => {
    const { input, received } = pipePair({ maxLineBytes: 16 });
    input.write('{"ok":1}\n');
    input.write('{"way":"too long for the limit"');
    const error = await received.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toBe(
      'exec-server transport disconnected: JSON-RPC message from exec-server stdio exceeds maximum length of 16 bytes',
    );
  });

  it('errors incoming$ with DisconnectedError when the input fails', async () => {
    const { input, received } = pipePair();
    input.destroy(new Error('EPIPE-ish'));
    const error = await received.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DisconnectedError);
    expect((error as Error).message).toBe('exec-server transport disconnected: EPIPE-ish');
  });

  it('writes one line per message; close() is idempotent, ends output and ignores later sends', async () => {
    const { output, written, transport, received } = pipePair();
    transport.send('{"id":1,"method":"a","params":null}');
    transport.send('{"method":"b","params":{}}');
    const ended = new Promise((resolve) => output.once('end', resolve));
    transport.close();
    transport.close();
    transport.send('{"late":true}');
    await ended;
    await expect(received).resolves.toEqual([]);
    expect(written.join('')).toBe(
      '{"id":1,"method":"a","params":null}\n{"method":"b","params":{}}\n',
    );
  });
});

/** A child that announces its pid, echoes requests as responses and optionally ignores SIGTERM. */
const ECHO_CHILD = `
if (process.argv.includes('--stubborn')) process.on('SIGTERM', () => {});
process.stdout.write(JSON.stringify({ method: 'hello', params: { pid: process.pid } }) + '\\n');
if (process.argv.includes('--garbage')) process.stdout.write('this is not json\\n');
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  let i;
  while ((i = buffer.indexOf('\\n')) >= 0) {
    const message = JSON.parse(buffer.slice(0, i));
    buffer = buffer.slice(i + 1);
    process.stdout.write(JSON.stringify({ id: message.id, result: { echo: message.params } }) + '\\n');
  }
});
setInterval(() => {}, 1000);
`;

async function spawnEcho(...flags: string[]): Promise<SpawnedStdioTransport> {
  const transport = await firstValueFrom(
    spawnStdioTransport(process.execPath, ['-e', ECHO_CHILD, '--', ...flags], {
      terminationGraceMs: 200,
    }),
  );
  cleanups.push(async () => {
    transport.close();
    await firstValueFrom(transport.exit$);
  });
  return transport;
}

describe('spawnStdioTransport', () => {
  it('talks JSON-RPC to the child and terminates it on close', async () => {
    const transport = await spawnEcho();
    const rpc = new RpcConnection(transport);
    const hello = await firstValueFrom(rpc.notifications$);
    expect(hello).toEqual({ method: 'hello', params: { pid: transport.pid } });
    await expect(firstValueFrom(rpc.request('ping', { n: 1 }))).resolves.toEqual({
      echo: { n: 1 },
    });
    rpc.close();
    const exit = await firstValueFrom(transport.exit$);
    expect(exit.signal).toBe('SIGTERM');
    expect(isAlive(transport.pid)).toBe(false);
  });

  it('kills a child that ignores SIGTERM after the grace period', async () => {
    const transport = await spawnEcho('--stubborn');
    const rpc = new RpcConnection(transport);
    await firstValueFrom(rpc.notifications$);
    rpc.close();
    const exit = await firstValueFrom(transport.exit$);
    expect(exit.signal).toBe('SIGKILL');
  });

  it('terminates a child whose output is malformed', async () => {
    const transport = await spawnEcho('--garbage');
    const rpc = new RpcConnection(transport);
    const reason = await firstValueFrom(rpc.closed$);
    expect(reason).toBeInstanceOf(ProtocolError);
    expect(reason.message).toContain('this is not json');
    await firstValueFrom(transport.exit$);
    expect(isAlive(transport.pid)).toBe(false);
  });

  it('fails with ConnectError when the command cannot be spawned', async () => {
    const error = await firstValueFrom(spawnStdioTransport('/nonexistent/exec-server', [])).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as Error).message).toBe(
      'failed to spawn exec-server: spawn /nonexistent/exec-server ENOENT',
    );
  });
});

describe('the real codex exec-server over stdio', () => {
  /** The binary on stdio, with its own CODEX_HOME; stopped (and the home removed) after the test. */
  async function spawnCodex(): Promise<{
    transport: SpawnedStdioTransport;
    rpc: RpcConnection;
    codexHome: string;
  }> {
    const codexHome = mkdtempSync(join(tmpdir(), 'execrx-codex-home-'));
    cleanups.push(() => rmSync(codexHome, { recursive: true, force: true }));
    const transport = await firstValueFrom(
      spawnStdioTransport('node_modules/.bin/codex', ['exec-server', '--listen', 'stdio'], {
        env: { ...process.env, CODEX_HOME: codexHome },
      }),
    );
    cleanups.push(async () => {
      transport.close();
      await firstValueFrom(transport.exit$);
    });
    return { transport, rpc: new RpcConnection(transport), codexHome };
  }

  it('initializes, answers environment/info, rejects unknown methods, and is stopped on close', async () => {
    const { transport, rpc } = await spawnCodex();
    const init = (await firstValueFrom(
      rpc.request('initialize', { clientName: 'execrx-spec', resumeSessionId: null }),
    )) as { sessionId: string };
    expect(typeof init.sessionId).toBe('string');
    rpc.notify('initialized', {});
    const info = (await firstValueFrom(rpc.request('environment/info', null))) as {
      executorVersion: string;
    };
    expect(info.executorVersion).toBe('0.169.0');
    const unknown = await firstValueFrom(rpc.request('no/suchMethod', {})).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ServerError);
    expect(unknown).toMatchObject({
      code: -32601,
      serverMessage: 'exec-server stub does not implement `no/suchMethod` yet',
    });
    rpc.close();
    await firstValueFrom(transport.exit$);
    expect(isAlive(transport.pid)).toBe(false);
  });

  it('refuses a request over its 64 MiB line limit without sending it, and goes on', async () => {
    // The binary exits on a longer line (checked: 64 MiB + 1 byte ends it, 64 MiB does not).
    const { transport, rpc, codexHome } = await spawnCodex();
    await firstValueFrom(
      rpc.request('initialize', { clientName: 'execrx-spec', resumeSessionId: null }),
    );
    rpc.notify('initialized', {});
    const dataBase64 = 'A'.repeat(MAX_STDIO_LINE_BYTES);
    const refused = await firstValueFrom(
      rpc.request('fs/writeFile', { path: `file://${codexHome}/big`, dataBase64, sandbox: null }),
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MessageTooLargeError);
    expect(refused).toMatchObject({ limit: MAX_STDIO_LINE_BYTES });
    expect((refused as MessageTooLargeError).bytes).toBeGreaterThan(MAX_STDIO_LINE_BYTES);
    const info = (await firstValueFrom(rpc.request('environment/info', null))) as {
      executorVersion: string;
    };
    expect(info.executorVersion).toBe('0.169.0');
    expect(isAlive(transport.pid)).toBe(true);
  });
});
