/** A scripted registry on 127.0.0.1 for registry client tests: records every request. */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Handler = (request: RecordedRequest, response: ServerResponse) => void;

export interface RegistryServer {
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Resolves when the client side of the n-th request (from 0) goes away; rejects after 2 s. */
  closed(n: number): Promise<void>;
  setHandler(handler: Handler): void;
  stop(): Promise<void>;
}

/** A well-formed Noise public key (JSON) whose bytes are all `fill`. */
export const noiseKeyJson = (fill: number) => ({
  suite: 'Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256',
  x25519_public_key: Buffer.alloc(32, fill).toString('base64'),
  mlkem768_public_key: Buffer.alloc(1184, fill).toString('base64'),
});

export function json(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json' }).end(text);
}

export async function startRegistryServer(): Promise<RegistryServer> {
  let handler: Handler = (_request, response) => json(response, 404, {});
  const requests: RecordedRequest[] = [];
  const closedWaiters: Promise<void>[] = [];
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    closedWaiters.push(new Promise((resolve) => response.on('close', () => resolve())));
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(request);
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    closed: async (n) => {
      for (let i = 0; i < 200 && closedWaiters[n] === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`request ${n} was not closed within 2 s`)), 2000);
      });
      try {
        await Promise.race([closedWaiters[n] ?? deadline, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },
    setHandler: (next) => {
      handler = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
