/**
 * The filesystem of an environment: one object for the environment's lifetime. Every call
 * first asks the lazy client for the current session (connecting or joining a reconnect), so
 * after a refresh the same object transparently works on the new session.
 */
import { type Observable, firstValueFrom, switchMap } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import type { FileSystemClient } from '../client/fileSystemClient.js';

type Fs = FileSystemClient;

export class EnvironmentFileSystem {
  /** @param session how to reach the session for each call (`get()` or fail-fast). */
  constructor(private readonly session: () => Observable<ExecServerClient>) {}

  readFile(...args: Parameters<Fs['readFile']>): ReturnType<Fs['readFile']> {
    return this.on((fs) => fs.readFile(...args));
  }
  writeFile(...args: Parameters<Fs['writeFile']>): ReturnType<Fs['writeFile']> {
    return this.on((fs) => fs.writeFile(...args));
  }
  createDirectory(...args: Parameters<Fs['createDirectory']>): ReturnType<Fs['createDirectory']> {
    return this.on((fs) => fs.createDirectory(...args));
  }
  getMetadata(...args: Parameters<Fs['getMetadata']>): ReturnType<Fs['getMetadata']> {
    return this.on((fs) => fs.getMetadata(...args));
  }
  canonicalize(...args: Parameters<Fs['canonicalize']>): ReturnType<Fs['canonicalize']> {
    return this.on((fs) => fs.canonicalize(...args));
  }
  readDirectory(...args: Parameters<Fs['readDirectory']>): ReturnType<Fs['readDirectory']> {
    return this.on((fs) => fs.readDirectory(...args));
  }
  remove(...args: Parameters<Fs['remove']>): ReturnType<Fs['remove']> {
    return this.on((fs) => fs.remove(...args));
  }
  copy(...args: Parameters<Fs['copy']>): ReturnType<Fs['copy']> {
    return this.on((fs) => fs.copy(...args));
  }
  walk(...args: Parameters<Fs['walk']>): ReturnType<Fs['walk']> {
    return this.on((fs) => fs.walk(...args));
  }
  readFileStream(...args: Parameters<Fs['readFileStream']>): ReturnType<Fs['readFileStream']> {
    return this.on((fs) => fs.readFileStream(...args));
  }
  /** `FileSystemClient.readFileBlocks` on the current session (pulled block by block). */
  async *readFileBlocks(
    ...args: Parameters<Fs['readFileBlocks']>
  ): ReturnType<Fs['readFileBlocks']> {
    const client = await firstValueFrom(this.session());
    yield* client.fs.readFileBlocks(...args);
  }
  writeFileStream(...args: Parameters<Fs['writeFileStream']>): ReturnType<Fs['writeFileStream']> {
    return this.on((fs) => fs.writeFileStream(...args));
  }

  private on<T>(call: (fs: Fs) => Observable<T>): Observable<T> {
    return this.session().pipe(switchMap((client) => call(client.fs)));
  }
}
