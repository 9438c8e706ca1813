/**
 * Runs the TypeScript executor as its own process for the benchmarks (so it does not share
 * the client's event loop, just like the binary): prints the bound URL, stops on SIGTERM.
 * `node --import tsx bench/support/serveTsExecutor.ts`
 */
import { startExecServer } from '../../src/server/index.js';

const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
process.stdout.write(`${server.url}\n`);
const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
