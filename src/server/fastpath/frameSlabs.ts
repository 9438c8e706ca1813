/**
 * Outbound WebSocket frames assembled in reused buffers. A fresh buffer per write is external
 * memory to V8, which schedules garbage collections by it; buffers of SLAB_BYTES are kept and
 * reused once their write has completed, so a steady output stream allocates none.
 *
 * Contract: `write` puts on the socket exactly the `length` bytes `fill` wrote at the start of
 * its target, in call order, as the plain twin (bench/plain/server/fastpath/frameSlabs.ts,
 * a fresh buffer per write) does; a slab is reused only after the socket is done with it.
 * spec/server/fastpath/frameSlabs.spec.ts holds the two together; what it earns:
 * docs/performance.md, "Fast paths" (`bench/fast-paths-output.ts`).
 */
import type { Socket } from 'node:net';

/** Writes up to this size are assembled in a reused slab; bigger ones get their own buffer. */
const SLAB_BYTES = 256 * 1024;
/** Slabs kept for reuse; more are only in flight while the socket is backed up. */
const SPARE_SLABS = 4;

export class FrameSlabs {
  private readonly spare: Buffer[] = [];

  /** Writes to `socket` the first `length` bytes of a buffer that `fill` filled. */
  write(socket: Socket, length: number, fill: (target: Buffer) => void): void {
    if (length > SLAB_BYTES) {
      const target = Buffer.allocUnsafe(length);
      fill(target);
      socket.write(target);
      return;
    }
    const slab = this.spare.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
    fill(slab);
    // Once written the slab is free again (the callback also runs when the write fails).
    socket.write(slab.subarray(0, length), () => {
      if (this.spare.length < SPARE_SLABS) this.spare.push(slab);
    });
  }
}
