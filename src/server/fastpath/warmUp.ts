/**
 * Warms this process's executor code before a server reports ready (`execrx serve`).
 *
 * V8 optimises a function only once it has run a good deal. An executor whose requests come
 * one at a time, with idle gaps, never gets there (the figure: docs/performance.md,
 * bench/executor-cold-latency.ts). So before serving, a throwaway executor on a loopback
 * port gets a few thousand requests over a few real WebSockets: the path every request shares (socket read, frame reader, JSON
 * checks, dispatch, reply, socket write) is optimised by the time the first client comes.
 * Optimised code belongs to the functions, not to the executor, so the real one has it too.
 *
 * The requests are read-only, and of several kinds, because optimised code that meets
 * something it never saw is thrown away (and V8 takes a long while to optimise it again):
 * `fs/getMetadata` (the cheapest request) of a directory, a file and two missing paths
 * (failing replies; one message over 256 characters, which the JSON checks take another way),
 * and `fs/canonicalize`, answered asynchronously as `process/start` is. They come over 32
 * connections, one after another, so the handshake path (`initialize`, `initialized`) has
 * run often enough to be known too.
 */
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { firstValueFrom, from, timeout } from 'rxjs';
import WebSocket from 'ws';
import { ErrorCode } from '../../protocol/errors.js';
import { startExecServer } from '../execServer.js';

/** How much `warmUpExecutor` sends and how long it may take. */
export interface WarmUpOptions {
  /** Requests in all. Default 6,000 (~0.7 s here). */
  readonly requests?: number;
  /** Connections they are spread over, one after another. Default 32. */
  readonly connections?: number;
  /** Give up after this long. Default 10 s. */
  readonly timeLimitMs?: number;
}

/** What the throwaway executor answered. */
export interface WarmUpReport {
  /** Successful replies. */
  readonly results: number;
  /** `-32004` (not found) replies, for the missing paths. */
  readonly notFound: number;
}

/** Requests kept in flight on a connection: the executor reads several per socket read. */
const WINDOW = 32;

/**
 * The requests sent, in turn (after `id`); half of them fail with -32004. `fs/canonicalize`
 * answers asynchronously: real traffic has such handlers (`process/start`), and code
 * optimised without ever seeing one was thrown away at the first.
 */
function warmUpRequests(): readonly string[] {
  const directory = pathToFileURL(tmpdir()).href;
  const missing = `${directory}/execrx-warm-up-missing`;
  const request = (method: string, path: string): string =>
    `,"method":"${method}","params":{"path":"${path}","sandbox":null}}`;
  const metadata = [
    request('fs/getMetadata', directory),
    request('fs/getMetadata', missing),
    request('fs/getMetadata', pathToFileURL(process.execPath).href),
    request('fs/getMetadata', `${directory}/${'execrx-warm-up-missing/'.repeat(12)}`),
  ];
  // Fewer of the asynchronous kind: each one is a trip through the libuv thread pool.
  return [
    ...metadata,
    ...metadata,
    request('fs/canonicalize', directory),
    request('fs/canonicalize', missing),
  ];
}

/** One connection: the handshake, then `requests` requests; tallies the replies into `tally`. */
async function warmUpConnection(
  url: string,
  requests: number,
  tally: { results: number; notFound: number },
): Promise<void> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('open', resolve);
      socket.once('error', reject);
    });
    const texts = warmUpRequests();
    let sent = 0;
    let answered = 0;
    await new Promise<void>((resolve, reject) => {
      const sendOne = (): void => {
        sent += 1;
        socket.send(`{"id":${sent}${texts[(sent - 1) % texts.length] as string}`);
      };
      socket.on('message', (data) => {
        let reply: { id?: unknown; result?: unknown; error?: { code?: unknown } };
        try {
          reply = JSON.parse(String(data)) as typeof reply;
        } catch {
          return reject(new Error(`a reply is not JSON: ${String(data).slice(0, 200)}`));
        }
        if (reply.id === 0) {
          if (reply.result === undefined) return reject(new Error('initialize failed'));
          socket.send('{"method":"initialized","params":{}}');
          socket.ping(); // the executor answers with a Pong: control frames take the same path
          for (let index = 0; index < Math.min(WINDOW, requests); index += 1) sendOne();
          return;
        }
        if (reply.result !== undefined) tally.results += 1;
        else if (reply.error?.code === ErrorCode.notFound) tally.notFound += 1;
        else return reject(new Error(`unexpected reply ${String(data).slice(0, 200)}`));
        answered += 1;
        if (sent < requests) sendOne();
        if (answered === requests) resolve();
      });
      socket.once('close', () => reject(new Error('the connection closed')));
      socket.send(
        '{"id":0,"method":"initialize","params":{"clientName":"execrx-warm-up","resumeSessionId":null}}',
      );
    });
  } finally {
    await closeSocket(socket);
  }
}

/** Closes with a Close frame, as clients do (the executor then ends the TCP connection). */
async function closeSocket(socket: WebSocket): Promise<void> {
  if (socket.readyState === WebSocket.CLOSED) return;
  const closed = new Promise((resolve) => socket.once('close', resolve));
  if (socket.readyState === WebSocket.OPEN) socket.close();
  else socket.terminate();
  await closed;
}

/**
 * Serves a throwaway executor on 127.0.0.1, sends it read-only `fs/*` requests, stops it.
 * Rejects if it answered anything unexpected or took longer than the time limit.
 */
export async function warmUpExecutor(options: WarmUpOptions = {}): Promise<WarmUpReport> {
  const requests = options.requests ?? 6_000;
  const connections = options.connections ?? 32;
  const server = await startExecServer({ listen: 'ws://127.0.0.1:0' });
  const tally = { results: 0, notFound: 0 };
  const run = async (): Promise<void> => {
    for (let index = 0; index < connections; index += 1) {
      const share = Math.floor(requests / connections) + (index < requests % connections ? 1 : 0);
      if (share > 0) await warmUpConnection(server.url, share, tally);
    }
  };
  try {
    await firstValueFrom(from(run()).pipe(timeout(options.timeLimitMs ?? 10_000)));
  } finally {
    await server.close();
  }
  return { ...tally };
}
