/**
 * The per-connection table of streaming file handles: `fs/open`, `fs/readBlock`,
 * `fs/writeBlock`, `fs/close` (spec §7.9). Handles never outlive their connection.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import { decodeBase64Strict } from '../protocol/base64.js';
import { fsFailure } from './osError.js';
import { fsPath } from './hostPath.js';
import { RpcFailure } from './rpcFailure.js';
import { ensureRegularFile } from './filesystem.js';
import { enforceFileSandbox } from './sandbox/fileSystemAccess.js';

export const MAX_OPEN_FILE_HANDLES = 128;
const MAX_HANDLE_ID_BYTES = 32;
const MAX_READ_BLOCK_BYTES = 1024 * 1024;

interface OpenFile {
  file: FileHandle;
  writable: boolean;
}

export class FileHandleTable {
  private readonly handles = new Map<string, OpenFile>();
  /** Ids reserved while their open is in flight, so a duplicate is refused at once. */
  private readonly opening = new Set<string>();

  async open(params: {
    handleId: string;
    path: string;
    mode?: 'read' | 'replace' | null;
    sandbox?: unknown;
  }): Promise<{
    handleId: string;
  }> {
    const path = fsPath(params.path);
    enforceFileSandbox(params.sandbox, path, params.mode === 'replace' ? 'write' : 'read');
    const { handleId } = params;
    if (Buffer.byteLength(handleId) > MAX_HANDLE_ID_BYTES) {
      throw RpcFailure.invalidRequest(
        `file handle ID must not exceed ${MAX_HANDLE_ID_BYTES} bytes`,
      );
    }
    if (this.handles.has(handleId) || this.opening.has(handleId)) {
      throw RpcFailure.invalidRequest(`file handle \`${handleId}\` already exists`);
    }
    if (this.handles.size + this.opening.size >= MAX_OPEN_FILE_HANDLES) {
      throw RpcFailure.invalidRequest(
        `at most ${MAX_OPEN_FILE_HANDLES} file handles may be open per connection`,
      );
    }
    this.opening.add(handleId);
    try {
      const writable = params.mode === 'replace';
      // O_NONBLOCK: a FIFO fails at once (ENXIO without a reader, else "not a file" below)
      // instead of parking a thread-pool thread until a peer opens its other end.
      const flags = writable
        ? constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NONBLOCK
        : constants.O_RDONLY | constants.O_NONBLOCK;
      const file = await open(path, flags, 0o666);
      try {
        await ensureRegularFile(file, path);
      } catch (error) {
        await file.close();
        throw error;
      }
      this.handles.set(handleId, { file, writable });
      return { handleId };
    } catch (error) {
      throw fsFailure(error);
    } finally {
      this.opening.delete(handleId);
    }
  }

  private lookup(handleId: string): OpenFile {
    const entry = this.handles.get(handleId);
    if (!entry) throw RpcFailure.notFound(`unknown file handle \`${handleId}\``);
    return entry;
  }

  async readBlock(params: {
    handleId: string;
    offset: number;
    len: number;
  }): Promise<{ chunk: string; eof: boolean }> {
    if (params.len < 1 || params.len > MAX_READ_BLOCK_BYTES) {
      throw RpcFailure.invalidRequest(
        `file read block length must be between 1 and ${MAX_READ_BLOCK_BYTES}`,
      );
    }
    const entry = this.lookup(params.handleId);
    const buffer = Buffer.alloc(params.len);
    let filled = 0;
    try {
      while (filled < params.len) {
        const { bytesRead } = await entry.file.read(
          buffer,
          filled,
          params.len - filled,
          params.offset + filled,
        );
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
    } catch (error) {
      await this.close({ handleId: params.handleId });
      throw fsFailure(error);
    }
    return { chunk: buffer.subarray(0, filled).toString('base64'), eof: filled < params.len };
  }

  async writeBlock(params: {
    handleId: string;
    offset: number;
    chunk: string;
  }): Promise<Record<string, never>> {
    const entry = this.lookup(params.handleId);
    if (!entry.writable)
      throw RpcFailure.invalidRequest(`file handle \`${params.handleId}\` is not writable`);
    let bytes: Uint8Array;
    try {
      bytes = decodeBase64Strict(params.chunk);
    } catch (error) {
      throw RpcFailure.invalidRequest(
        `fs/writeBlock requires valid base64 chunk: ${(error as Error).message}`,
      );
    }
    try {
      let written = 0;
      while (written < bytes.length) {
        const result = await entry.file.write(
          bytes,
          written,
          bytes.length - written,
          params.offset + written,
        );
        written += result.bytesWritten;
      }
    } catch (error) {
      await this.close({ handleId: params.handleId });
      throw fsFailure(error);
    }
    return {};
  }

  async close(params: { handleId: string }): Promise<Record<string, never>> {
    const entry = this.handles.get(params.handleId);
    this.handles.delete(params.handleId);
    await entry?.file.close().catch(() => undefined);
    return {};
  }

  async closeAll(): Promise<void> {
    const entries = [...this.handles.values()];
    this.handles.clear();
    await Promise.all(entries.map((entry) => entry.file.close().catch(() => undefined)));
  }
}
