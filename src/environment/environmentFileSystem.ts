/**
 * The filesystem of an environment: one object for the environment's lifetime. Every call
 * first asks the lazy client for the current session (connecting or joining a reconnect), so
 * after a refresh the same object transparently works on the new session.
 */
import { type Observable, firstValueFrom, switchMap } from 'rxjs';
import type { ExecServerClient } from '../client/execServerClient.js';
import type { FileSystemClient } from '../client/fileSystemClient.js';

type Fs = FileSystemClient;

/**
 * `FileSystemClient` calls on whichever session is current: each call asks for the session
 * (connecting or waiting as the environment decides) and then behaves as the same call on
 * `client.fs`.
 */
export class EnvironmentFileSystem {
  /** @param session how to reach the session for each call (`get()` or fail-fast). */
  constructor(private readonly session: () => Observable<ExecServerClient>) {}

  /** {@inheritDoc FileSystemClient.readFile} */
  readFile(...args: Parameters<Fs['readFile']>): ReturnType<Fs['readFile']> {
    return this.on((fs) => fs.readFile(...args));
  }
  /** {@inheritDoc FileSystemClient.writeFile} */
  writeFile(...args: Parameters<Fs['writeFile']>): ReturnType<Fs['writeFile']> {
    return this.on((fs) => fs.writeFile(...args));
  }
  /** {@inheritDoc FileSystemClient.createDirectory} */
  createDirectory(...args: Parameters<Fs['createDirectory']>): ReturnType<Fs['createDirectory']> {
    return this.on((fs) => fs.createDirectory(...args));
  }
  /** {@inheritDoc FileSystemClient.getMetadata} */
  getMetadata(...args: Parameters<Fs['getMetadata']>): ReturnType<Fs['getMetadata']> {
    return this.on((fs) => fs.getMetadata(...args));
  }
  /** {@inheritDoc FileSystemClient.canonicalize} */
  canonicalize(...args: Parameters<Fs['canonicalize']>): ReturnType<Fs['canonicalize']> {
    return this.on((fs) => fs.canonicalize(...args));
  }
  /** {@inheritDoc FileSystemClient.readDirectory} */
  readDirectory(...args: Parameters<Fs['readDirectory']>): ReturnType<Fs['readDirectory']> {
    return this.on((fs) => fs.readDirectory(...args));
  }
  /** {@inheritDoc FileSystemClient.remove} */
  remove(...args: Parameters<Fs['remove']>): ReturnType<Fs['remove']> {
    return this.on((fs) => fs.remove(...args));
  }
  /** {@inheritDoc FileSystemClient.copy} */
  copy(...args: Parameters<Fs['copy']>): ReturnType<Fs['copy']> {
    return this.on((fs) => fs.copy(...args));
  }
  /** {@inheritDoc FileSystemClient.walk} */
  walk(...args: Parameters<Fs['walk']>): ReturnType<Fs['walk']> {
    return this.on((fs) => fs.walk(...args));
  }
  /** {@inheritDoc FileSystemClient.readFileStream} */
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

  /** {@inheritDoc FileSystemClient.writeFileStream} */
  writeFileStream(...args: Parameters<Fs['writeFileStream']>): ReturnType<Fs['writeFileStream']> {
    return this.on((fs) => fs.writeFileStream(...args));
  }

  private on<T>(call: (fs: Fs) => Observable<T>): Observable<T> {
    return this.session().pipe(switchMap((client) => call(client.fs)));
  }
}
