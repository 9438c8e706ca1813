/**
 * The two clients the latency benchmark drives through identical protocol steps:
 * connect (WebSocket open, `initialize`, `initialized`), `fs/getMetadata`, `process/start`,
 * and waiting for the `process/closed` notification.
 */
import { firstValueFrom, lastValueFrom, switchMap } from 'rxjs';
import { ExecServerClient, type ProcessHandle } from '../../src/client/index.js';
import { fileUriToPath, pathToFileUri } from '../../src/protocol/pathUri.js';
import { RpcConnection } from '../../src/rpc/rpcConnection.js';
import { connectWebSocket } from '../../src/transport/webSocketTransport.js';
import { HandwrittenClient } from '../handwritten-client.js';

export interface LatencySession {
  /**
   * The executor's working directory (native path), from the `initialize` result. Not part
   * of `connection_ms`: upstream reads `environment.info()` after its connection timer too.
   */
  environmentCwd(): Promise<string>;
  getMetadata(path: string): Promise<void>;
  /** Resolves when `process/start` answered; the result resolves at `process/closed`. */
  start(processId: string, argv: readonly string[], cwd: string): Promise<StartedProcess>;
  close(): void;
}

export interface StartedProcess {
  waitClosed(): Promise<void>;
}

export type LatencyClient = (url: string) => Promise<LatencySession>;

/** Our stack: connectWebSocket → RpcConnection → ExecServerClient. */
export const execrxClient: LatencyClient = async (url) => {
  const client = await firstValueFrom(
    connectWebSocket(url).pipe(
      switchMap((transport) => ExecServerClient.connect(transport, { clientName: 'bench' })),
    ),
  );
  return {
    environmentCwd: async () => {
      const info = await firstValueFrom(client.environmentInfo());
      return fileUriToPath(info.cwd ?? 'file:///');
    },
    getMetadata: async (path) => {
      await firstValueFrom(client.fs.getMetadata(path));
    },
    start: async (processId, argv, cwd) => {
      const handle: ProcessHandle = await firstValueFrom(
        client.startProcess({ processId, argv, cwd }),
      );
      return {
        waitClosed: async () => {
          await lastValueFrom(handle.events$, { defaultValue: undefined });
        },
      };
    },
    close: () => client.close(),
  };
};

/**
 * Our stack cut below the client layer, for bench/client-layers.ts: `connectWebSocket` and an
 * `RpcConnection`, the handshake as two plain steps (no deadline, no session). Connect and
 * `fs/getMetadata` only.
 */
export const rpcLayerClient: LatencyClient = async (url) => {
  const rpc = new RpcConnection(await firstValueFrom(connectWebSocket(url)));
  await firstValueFrom(rpc.request('initialize', { clientName: 'bench', resumeSessionId: null }));
  rpc.notify('initialized', {});
  return layerSession(
    (path) =>
      firstValueFrom(rpc.request('fs/getMetadata', { path: pathToFileUri(path), sandbox: null })),
    () => rpc.close(),
  );
};

/**
 * Our stack cut below the rpc layer: `connectWebSocket`'s Transport with the hand-written
 * client's JSON handling on top (an id counter, a map of resolvers).
 */
export const transportLayerClient: LatencyClient = async (url) => {
  const transport = await firstValueFrom(connectWebSocket(url));
  const waiting = new Map<number, () => void>();
  let nextId = 1;
  transport.incoming$.subscribe((text) => {
    const id = (JSON.parse(text) as { id?: number }).id;
    const resolve = id === undefined ? undefined : waiting.get(id);
    if (resolve === undefined) return;
    waiting.delete(id!);
    resolve();
  });
  const request = (method: string, params: unknown): Promise<void> =>
    new Promise((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      transport.send(JSON.stringify({ id, method, params }));
    });
  await request('initialize', { clientName: 'bench', resumeSessionId: null });
  transport.send(JSON.stringify({ method: 'initialized', params: {} }));
  return layerSession(
    (path) => request('fs/getMetadata', { path: pathToFileUri(path), sandbox: null }),
    () => transport.close(),
  );
};

function layerSession(
  getMetadata: (path: string) => Promise<unknown>,
  close: () => void,
): LatencySession {
  const unsupported = (): never => {
    throw new Error('a layer client measures connect and fs/getMetadata only');
  };
  return {
    environmentCwd: unsupported,
    getMetadata: async (path) => {
      await getMetadata(path);
    },
    start: unsupported,
    close,
  };
}

interface InitializeResult {
  environmentInfo?: { cwd?: string | null };
}

/** The hand-written baseline: the same messages, no RxJS, no validation. */
export const handwrittenClient: LatencyClient = async (url) => {
  const client = await HandwrittenClient.connect(url);
  const closedWaiters = new Map<string, () => void>();
  const closedEarly = new Set<string>();
  client.onNotification((notification) => {
    if (notification.method !== 'process/closed') return;
    const processId = (notification.params as { processId: string }).processId;
    const waiter = closedWaiters.get(processId);
    if (waiter) {
      closedWaiters.delete(processId);
      waiter();
    } else {
      closedEarly.add(processId);
    }
  });
  const init = (await client.request('initialize', {
    clientName: 'bench',
    resumeSessionId: null,
  })) as InitializeResult;
  client.notify('initialized', {});
  return {
    environmentCwd: () => Promise.resolve(fileUriToPath(init.environmentInfo?.cwd ?? 'file:///')),
    getMetadata: async (path) => {
      await client.request('fs/getMetadata', { path: pathToFileUri(path), sandbox: null });
    },
    start: async (processId, argv, cwd) => {
      await client.request('process/start', {
        processId,
        argv: [...argv],
        cwd: pathToFileUri(cwd),
        envPolicy: null,
        env: {},
        tty: false,
        pipeStdin: false,
        arg0: null,
        sandbox: null,
        enforceManagedNetwork: false,
        managedNetwork: null,
      });
      return {
        waitClosed: () =>
          closedEarly.delete(processId)
            ? Promise.resolve()
            : new Promise<void>((resolve) => closedWaiters.set(processId, resolve)),
      };
    },
    close: () => client.close(),
  };
};
