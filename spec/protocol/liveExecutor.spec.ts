/**
 * Our schemas against a live codex exec-server 0.169.0 (started by spec/support), plus the
 * helper's own contract: bound URL, throwaway CODEX_HOME, clean stop, clear start errors.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import WebSocket from 'ws';
import {
  clientMethods,
  fileUriToPath,
  type ClientMethod,
  type ParamsOf,
  type ResultOf,
} from '../../src/protocol/index.js';
import { startCodexExecServer, type RunningExecServer } from '../support/codexExecServer.js';

let server: RunningExecServer | undefined;
let socket: WebSocket | undefined;

afterEach(async () => {
  socket?.terminate();
  socket = undefined;
  await server?.stop();
  server = undefined;
});

async function connect(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 1;
  const call = <M extends ClientMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const onMessage = (data: WebSocket.RawData) => {
        const message = JSON.parse(data.toString()) as {
          id?: number;
          result?: unknown;
          error?: unknown;
        };
        if (message.id !== id) return;
        ws.off('message', onMessage);
        if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)));
        else resolve(clientMethods[method].result.parse(message.result) as ResultOf<M>);
      };
      ws.on('message', onMessage);
      ws.send(JSON.stringify({ id, method, params }));
    });
  };
  return { ws, call };
}

describe('codex exec-server (live)', () => {
  it('starts on an ephemeral loopback port and speaks the dialect our schemas describe', async () => {
    server = await startCodexExecServer();
    expect(server.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const { ws, call } = await connect(server.url);
    socket = ws;
    const init = await call('initialize', { clientName: 'execrx-spec', resumeSessionId: null });
    expect(init.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(init.environmentInfo?.executorVersion).toBe('0.169.0');
    ws.send(JSON.stringify({ method: 'initialized', params: {} }));
    const status = await call('environment/status', null);
    expect(status).toEqual({ status: 'ready' });
    const config = await call('environmentConfig/read', {
      cwd: init.environmentInfo!.cwd!,
      configPaths: [['config.toml']],
      requirementsPaths: [],
    });
    const codexHome = fileUriToPath(config.codexHomeDir);
    expect(existsSync(codexHome)).toBe(true);
    expect(codexHome).not.toBe(process.env.CODEX_HOME);

    await server.stop();
    server = undefined;
    expect(existsSync(codexHome)).toBe(false); // the throwaway CODEX_HOME is removed on stop
  });

  it('stop() is idempotent and waits for the executor to exit', async () => {
    server = await startCodexExecServer();
    const url = server.url;
    await Promise.all([server.stop(), server.stop()]);
    server = undefined;
    const refused = await new Promise<boolean>((resolve) => {
      const ws = new WebSocket(url);
      ws.once('open', () => {
        ws.terminate();
        resolve(false);
      });
      ws.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
  });

  it('fails with the executor stderr when it cannot start', async () => {
    await expect(startCodexExecServer({ args: ['--no-such-flag'] })).rejects.toThrow(
      /did not print its ws:\/\/ URL \(it exited with code 2\)[\s\S]*unexpected argument '--no-such-flag'/,
    );
  });
});
