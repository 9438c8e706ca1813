/// <reference lib="dom" />
import { Terminal } from '@xterm/xterm';
import type { Subscription } from 'rxjs';
import type { ProcessHandle } from '../../browser.js';

/** The protocol's terminal is fixed at 80x24 (`process/resize` does not exist: -32601). */
const COLUMNS = 80;
const ROWS = 24;

export interface PanelEvents {
  output(text: string): void;
  ended(summary: string): void;
  failed(message: string): void;
}

/**
 * One process: its output in an xterm terminal, its state in the header, keyboard input
 * forwarded when it runs on a terminal. Several panels live side by side.
 */
export class ProcessPanel {
  readonly element: HTMLElement;
  private readonly terminal: Terminal;
  private readonly stateText: HTMLElement;
  private readonly subscriptions: Subscription[] = [];
  private readonly decoder = new TextDecoder();
  private finished = false;

  constructor(
    readonly number: number,
    readonly command: string,
    readonly tty: boolean,
    private readonly handle: ProcessHandle,
    private readonly events: PanelEvents,
  ) {
    this.element = document.createElement('article');
    this.element.className = 'process';
    this.element.setAttribute('aria-label', `Process ${number}`);
    const header = document.createElement('h2');
    const title = document.createElement('span');
    title.textContent = `#${number} ${tty ? '[tty] ' : ''}${command}`;
    this.stateText = document.createElement('span');
    this.stateText.className = 'state';
    this.stateText.textContent = 'running';
    const close = document.createElement('button');
    close.type = 'button';
    close.textContent = `Close #${number}`;
    close.addEventListener('click', () => this.dispose());
    header.append(title, this.stateText, close);
    const screen = document.createElement('div');
    this.element.append(header, screen);
    this.terminal = new Terminal({
      cols: COLUMNS,
      rows: ROWS,
      convertEol: !tty, // pipes carry bare \n; a pty already sends \r\n
      disableStdin: !tty,
      fontSize: 12,
      theme: { background: '#111111', foreground: '#dddddd', cursor: '#dddddd' },
      scrollback: 2000,
    });
    this.terminal.open(screen);
    if (tty) {
      this.terminal.onData((data) => {
        if (!this.finished) this.handle.write(data).subscribe({ error: () => undefined });
      });
      this.terminal.focus();
    }
    this.subscriptions.push(
      handle.events$.subscribe({
        next: (event) => {
          if (event.type === 'output') {
            this.terminal.write(event.chunk);
            this.events.output(this.decoder.decode(event.chunk, { stream: true }));
          } else if (event.type === 'exited') {
            this.stateText.textContent = `exited with ${event.exitCode}`;
          }
        },
        error: (error: unknown) => {
          this.finished = true;
          const message = error instanceof Error ? error.message : String(error);
          this.stateText.textContent = 'stream lost';
          this.terminal.write(`\r\n\x1b[31m[output stream error: ${message}]\x1b[0m\r\n`);
          this.events.failed(message);
        },
        complete: () => {
          this.finished = true;
          this.events.output(this.decoder.decode());
        },
      }),
      handle.exit$.subscribe({
        next: (code) => this.events.ended(`exit ${code}`),
        error: () => undefined,
      }),
    );
  }

  interrupt(): void {
    this.handle
      .signal('interrupt')
      .subscribe({ error: (e: unknown) => this.events.failed(String(e)) });
  }

  terminate(): void {
    this.handle.terminate().subscribe({ error: (e: unknown) => this.events.failed(String(e)) });
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    if (!this.finished) this.terminate();
    this.terminal.dispose();
    this.element.remove();
  }
}
