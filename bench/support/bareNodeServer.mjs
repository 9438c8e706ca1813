/**
 * A yardstick for bench/executor-cold-latency.ts, not an executor: the least a Node.js process
 * can do to answer `fs/getMetadata` over a WebSocket — node:http's upgrade, a small masked
 * frame read by hand, JSON.parse, lstatSync, a template reply. It checks nothing (no
 * duplicate keys, no params validation, no URI parsing, no gating) and understands only
 * what the benchmark's client sends, and is not warmed up (execrx serve is: src/server/fastpath/warmUp.ts).
 * Prints its `ws://` URL on the first stdout line.
 */
import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

function reply(socket, text) {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? [0x81, length] : [0x81, 126, length >> 8, length & 0xff];
  socket.write(Buffer.concat([Buffer.from(header), Buffer.from(text)]));
}

function answer(message) {
  if (message.method === 'initialize') {
    const cwd = pathToFileURL(process.cwd()).href;
    return JSON.stringify({
      id: message.id,
      result: { sessionId: 'bare', environmentInfo: { cwd } },
    });
  }
  const stats = lstatSync(message.params.path.slice('file://'.length));
  return (
    `{"id":${message.id},"result":{"isDirectory":${stats.isDirectory()},"isFile":${stats.isFile()}` +
    `,"isSymlink":false,"size":${stats.size},"createdAtMs":${Math.floor(stats.birthtimeMs)}` +
    `,"modifiedAtMs":${Math.floor(stats.mtimeMs)}}}`
  );
}

const server = createServer((_request, response) => response.writeHead(404).end());
server.on('upgrade', (request, socket) => {
  const key = request.headers['sec-websocket-key'];
  const accept = createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
  socket.setNoDelay(true);
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  // One whole masked Text frame per read: all this benchmark's client ever sends.
  socket.on('data', (chunk) => {
    if ((chunk[0] & 0x0f) !== 0x1) return;
    let length = chunk[1] & 0x7f;
    let offset = 2;
    if (length === 126) {
      length = chunk.readUInt16BE(2);
      offset = 4;
    }
    const mask = chunk.subarray(offset, offset + 4);
    offset += 4;
    for (let index = 0; index < length; index += 1) chunk[offset + index] ^= mask[index & 3];
    const message = JSON.parse(chunk.toString('utf8', offset, offset + length));
    if (message.id !== undefined) reply(socket, answer(message));
  });
});
server.listen(0, '127.0.0.1', () => console.log(`ws://127.0.0.1:${server.address().port}`));
