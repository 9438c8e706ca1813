/** Plain twin of src/server/fastpath/frameSlabs.ts: a fresh buffer for every write. */
import type { Socket } from 'node:net';

export class FrameSlabs {
  write(socket: Socket, length: number, fill: (target: Buffer) => void): void {
    const target = Buffer.allocUnsafe(length);
    fill(target);
    socket.write(target);
  }
}
