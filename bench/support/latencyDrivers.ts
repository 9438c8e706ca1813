/**
 * The two clients the latency benchmark drives through identical protocol steps:
 * connect (WebSocket open, `initialize`, `initialized`), `fs/getMetadata`, `process/start`,
 * and waiting for the `process/closed` notification.
 */
import { firstValueFrom, lastValueFrom, switchMap } from 'rxjs';
import { ExecServerClient, type ProcessHandle } from '../../src/client/index.js';
import { fileUriToPath, pathToFileUri } from '../../src/protocol/pathUri.js';
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
