/// <reference lib="dom" />
/**
 * The `execrx console` page: the execrx client (the browser bundle's platform) driven from a
 * small UI. Accessible names are part of its contract (issue #13; spec/browser/ uses them):
 * status region "Connection", textbox "Command", button "Run", log "Output", the text
 * "exit N", buttons "Interrupt" and "Refresh connection".
 */
import { firstValueFrom } from 'rxjs';
import {
  EnvironmentRegistryClient,
  LazyRemoteExecServerClient,
  NoiseChannelIdentity,
  RegistryConnectProvider,
  noiseRendezvous,
  webSocketUrl,
  type ExecServerClient,
  type ExecServerTransportParams,
} from '../../browser.js';
import type { ConsolePageConfig } from '../../cli/consoleServer.js';
import { fileUriToPath } from '../../protocol/pathUri.js';
import { FileBrowser } from './files.js';
import { ProcessPanel } from './processPanel.js';
import { statusView } from './status.js';

/** Output text kept in the "Output" log (the terminal panels keep their own scrollback). */
const MAX_LOG_CHARS = 1 << 20;

const byId = <T extends HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`console page: #${id} missing`);
  return element as T;
};

const config = JSON.parse(byId('execrx-config').textContent ?? '{}') as ConsolePageConfig;
const token = new URLSearchParams(location.search).get('token') ?? '';

function transportParams(): ExecServerTransportParams {
  if (config.kind === 'executor') {
    const url = new URL(config.path, location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.search = new URLSearchParams({ token }).toString();
    return webSocketUrl(url.href);
  }
  const registry = new EnvironmentRegistryClient({
    baseUrl: config.registryUrl,
    bearerToken: config.token,
  });
  return noiseRendezvous(
    new RegistryConnectProvider(registry, config.environmentId),
    NoiseChannelIdentity.generate(),
  );
}

const environment = new LazyRemoteExecServerClient(transportParams());
const client = (): Promise<ExecServerClient> => firstValueFrom(environment.get());

const status = byId('status');
const output = byId<HTMLPreElement>('output');
const exitText = byId('exit');
const errorText = byId('error');
const interrupt = byId<HTMLButtonElement>('interrupt');
const terminate = byId<HTMLButtonElement>('terminate');
const processes = byId('processes');
const showError = (message: string): void => {
  errorText.textContent = message;
};

statusView(environment).subscribe((view) => {
  status.textContent = view.text;
  status.className = view.connected ? 'connected' : 'disconnected';
});

/**
 * Keeps the page connected: the client connects lazily and, when a session cannot be resumed
 * (the executor restarted), waits for the next call. While Disconnected, one `get()` at a time
 * every RECONNECT_INTERVAL_MS brings it back as soon as the executor answers.
 */
const RECONNECT_INTERVAL_MS = 2_000;
let connecting = false;
setInterval(() => {
  if (connecting || environment.connectionState === 'Connected') return;
  connecting = true;
  client()
    .catch(() => undefined)
    .finally(() => {
      connecting = false;
    });
}, RECONNECT_INTERVAL_MS);

let latest: ProcessPanel | undefined;
/** The number of the latest process, whose output the "Output" log shows. */
let latestNumber = 0;
let processCount = 0;

async function run(command: string, tty: boolean): Promise<void> {
  errorText.textContent = '';
  const session = await client();
  const info = await firstValueFrom(session.environmentInfo());
  const cwd = info.cwd == null ? '/' : fileUriToPath(info.cwd);
  const handle = await firstValueFrom(
    session.startProcess({
      argv: ['/bin/sh', '-c', command],
      cwd,
      envPolicy: {
        inherit: 'all',
        ignoreDefaultExcludes: false,
        exclude: [],
        set: {},
        includeOnly: [],
      },
      ...(tty ? { env: { TERM: 'xterm-256color' } } : {}),
      tty,
    }),
  );
  const number = ++processCount;
  output.textContent = '';
  exitText.textContent = '';
  // The panel subscribes to the process's events as it is made, and output that already
  // arrived is replayed at once: the callbacks tell the latest process by its number, which is
  // set before (the Noise case of spec/browser/console.spec.ts guards it).
  latestNumber = number;
  const panel = new ProcessPanel(number, command, tty, handle, {
    output: (text) => {
      if (latestNumber !== number) return;
      const next = (output.textContent ?? '') + text;
      output.textContent = next.length > MAX_LOG_CHARS ? next.slice(-MAX_LOG_CHARS) : next;
      output.scrollTop = output.scrollHeight;
    },
    ended: (summary) => {
      if (latestNumber !== number) return;
      exitText.textContent = summary;
      interrupt.disabled = true;
      terminate.disabled = true;
    },
    failed: (message) => {
      if (latestNumber === number) showError(`process #${number}: ${message}`);
    },
  });
  latest = panel;
  interrupt.disabled = false;
  terminate.disabled = false;
  processes.prepend(panel.element);
}

byId<HTMLFormElement>('run-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const command = byId<HTMLInputElement>('command').value.trim();
  if (command === '') return;
  run(command, byId<HTMLInputElement>('tty').checked).catch((error: unknown) =>
    showError(`cannot run: ${error instanceof Error ? error.message : String(error)}`),
  );
});
interrupt.addEventListener('click', () => latest?.interrupt());
terminate.addEventListener('click', () => latest?.terminate());
byId('refresh').addEventListener('click', () => {
  errorText.textContent = '';
  environment.refreshConnection().subscribe({
    error: (error: unknown) =>
      showError(`refresh failed: ${error instanceof Error ? error.message : String(error)}`),
  });
});

const files = new FileBrowser(
  client,
  byId<HTMLInputElement>('path'),
  byId<HTMLUListElement>('entries'),
  byId<HTMLPreElement>('file'),
  showError,
);
byId<HTMLFormElement>('files-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void files.open(byId<HTMLInputElement>('path').value.trim() || '/');
});

// Connect now (the client is lazy), and start the file browser at the executor's directory.
client()
  .then(async (session) => {
    const info = await firstValueFrom(session.environmentInfo());
    await files.open(info.cwd == null ? '/' : fileUriToPath(info.cwd));
  })
  .catch((error: unknown) =>
    showError(`cannot connect: ${error instanceof Error ? error.message : String(error)}`),
  );
