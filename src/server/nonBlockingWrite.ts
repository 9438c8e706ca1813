/**
 * Writing files without ever parking a libuv thread-pool thread (there are four, shared by
 * every client's file operations) on a special file. A FIFO is opened `O_NONBLOCK`: without a
 * reader the open fails at once with ENXIO (`No such device or address (os error 6)`, the
 * binary's answer to `fs/open` `replace` on such a FIFO; its `fs/writeFile` waits for a reader
 * instead, see FINDINGS.md), and with one the bytes go through the event loop, however long
 * the reader takes. A character device's writes fail with EAGAIN rather than block. Guarded
 * by filesystemSpecialFiles.spec.ts.
 */
import { constants, close, createReadStream, fstat, open, write, type Stats } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';

const openFd = promisify(open);
const fstatFd = promisify(fstat);
const closeFd = promisify(close);
const writeFd = promisify(write);

/** A file opened for writing, and whether it is a FIFO (to be written through the event loop). */
export interface WritableFile {
  readonly fd: number;
  readonly stats: Stats;
}

/** Opens `path` write-only with `flags` and `O_NONBLOCK`; closes it again if `fstat` fails. */
export async function openWritable(path: string, flags: number): Promise<WritableFile> {
  const fd = await openFd(path, flags | constants.O_WRONLY | constants.O_NONBLOCK, 0o666);
  try {
    return { fd, stats: await fstatFd(fd) };
  } catch (error) {
    await closeFd(fd).catch(() => undefined);
    throw error;
  }
}

/** Writes `data` whole to `file` and closes it (also when the write fails). */
export async function writeAllAndClose(file: WritableFile, data: Uint8Array): Promise<void> {
  if (file.stats.isFIFO()) {
    await streamToPipe(file.fd, Readable.from([data]));
    return;
  }
  try {
    let written = 0;
    while (written < data.length) {
      const { bytesWritten } = await writeFd(file.fd, data, written, data.length - written);
      written += bytesWritten;
    }
  } finally {
    await closeFd(file.fd).catch(() => undefined);
  }
}

/**
 * Streams `source` into a non-blocking pipe fd through the event loop; the socket owns the fd
 * and closes it, whatever happens.
 */
async function streamToPipe(fd: number, source: Readable): Promise<void> {
  const pipe = new Socket({ fd, readable: false, writable: true });
  try {
    await pipeline(source, pipe);
  } finally {
    pipe.destroy();
  }
}

/**
 * Copies the regular file `from` to `to`: into a FIFO (with a reader) through the event loop,
 * anywhere else with `copyFile` once a non-blocking open has shown `to` is no FIFO.
 */
export async function copyRegularFile(from: string, to: string): Promise<void> {
  const target = await openWritable(to, constants.O_CREAT);
  if (target.stats.isFIFO()) {
    await streamToPipe(target.fd, createReadStream(from));
    return;
  }
  await closeFd(target.fd);
  await copyFile(from, to);
}
