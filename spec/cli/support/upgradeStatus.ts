/** The HTTP status a WebSocket upgrade is answered with (101 when it opens), with `origin`. */
import WebSocket from 'ws';

export function upgradeStatus(url: string, origin: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, origin === undefined ? {} : { origin });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => {
      resolve(101);
      socket.close();
    });
    socket.once('error', reject);
  });
}
