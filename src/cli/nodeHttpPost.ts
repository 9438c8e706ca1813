/**
 * The registry's `HttpPost` over `node:http`/`node:https`, for the CLI: Node 20's `fetch` loads
 * and compiles undici on its first call, which cost more CPU than the rest of a registry lookup
 * (docs/performance.md, "Noise path and fresh latency"). Same contract as `fetchPost`: one POST,
 * redirects not followed (a 3xx is just a status), abort through the signal.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { HttpPost } from '../registry/index.js';

export const nodeHttpPost: HttpPost = (url, { headers, body, signal }) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(
      target,
      { method: 'POST', headers, signal },
      (response: IncomingMessage) =>
        resolve({
          status: response.statusCode ?? 0,
          body: response,
          cancel: async () => {
            response.destroy();
          },
        }),
    );
    outgoing.once('error', reject);
    outgoing.end(body);
  });
