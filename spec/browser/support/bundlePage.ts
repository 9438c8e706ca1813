/**
 * A blank page on 127.0.0.1 that loads the browser bundle (`dist/browser/execrx.js`, built by
 * `npm run build`) and exposes it as `window.execrx`, for specs and benchmarks that drive the
 * client from Chromium with `page.evaluate`.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const BROWSER_BUNDLE = fileURLToPath(
  new URL('../../../dist/browser/execrx.js', import.meta.url),
);

const PAGE = `<!doctype html><meta charset="utf-8"><title>execrx bundle</title>
<script type="module">import * as execrx from './execrx.js'; window.execrx = execrx;</script>`;

export interface BundlePage {
  readonly url: string;
  close(): Promise<void>;
}

export interface BundlePageOptions {
  /** Default: the built `dist/browser/execrx.js`. */
  readonly bundlePath?: string;
  /** The HTML served at `/`; it must load `./execrx.js`. Default: the blank page above. */
  readonly html?: string;
  /** Answers any other request it recognises (returns true), else it gets a 404. */
  readonly otherRoutes?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

export async function serveBundlePage(options: BundlePageOptions = {}): Promise<BundlePage> {
  const bundle = readFileSync(options.bundlePath ?? BROWSER_BUNDLE);
  const server = createServer((request, response) => {
    if (request.url === '/execrx.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(bundle);
    } else if (request.url === '/') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(options.html ?? PAGE);
    } else if (options.otherRoutes?.(request, response) !== true) {
      response.writeHead(404);
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The bundle's exports, as `window.execrx` holds them in the page. */
export type ExecrxModule = typeof import('../../../src/browser.js');
