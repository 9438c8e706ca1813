/**
 * Test helper: run the TypeScript executor in-process on an ephemeral loopback port. Same
 * shape as `codexExecServer.ts`'s factory, so specs can run one exchange against both.
 */
import { startExecServer, type ExecServerOptions } from '../../src/server/index.js';
import type { ExecServerFactory, RunningExecServer } from './codexExecServer.js';

export type TsExecServerOptions = Omit<ExecServerOptions, 'listen' | 'input' | 'output'>;

export async function startTsExecServer(
  options: TsExecServerOptions = {},
): Promise<RunningExecServer> {
  const server = await startExecServer({ ...options, listen: 'ws://127.0.0.1:0' });
  return { url: server.url, stop: () => server.close() };
}

export const tsExecServerFactory: ExecServerFactory = () => startTsExecServer();
