/// <reference lib="dom" />
import { firstValueFrom } from 'rxjs';
import type { ExecServerClient } from '../../browser.js';

/** Bytes of a file shown at most (the viewer is for a glance, not for downloads). */
const MAX_VIEW_BYTES = 256 * 1024;

/** The file browser: lists a directory through `client.fs`, opens folders, shows files. */
export class FileBrowser {
  constructor(
    private readonly client: () => Promise<ExecServerClient>,
    private readonly pathInput: HTMLInputElement,
    private readonly list: HTMLUListElement,
    private readonly viewer: HTMLPreElement,
    private readonly fail: (message: string) => void,
  ) {}

  /** Only the newest listing is shown (an older answer may arrive after a newer request). */
  private listing = 0;

  async open(path: string): Promise<void> {
    const listing = ++this.listing;
    try {
      const fs = (await this.client()).fs;
      const entries = await firstValueFrom(fs.readDirectory(path));
      if (listing !== this.listing) return;
      this.pathInput.value = path;
      const sorted = [...entries].sort(
        (a, b) =>
          Number(b.isDirectory) - Number(a.isDirectory) || a.fileName.localeCompare(b.fileName),
      );
      const items = [{ fileName: '..', isDirectory: true }, ...sorted].map((entry) => {
        const item = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = entry.isDirectory ? `${entry.fileName}/` : entry.fileName;
        const child = join(path, entry.fileName);
        button.addEventListener('click', () => {
          void (entry.isDirectory ? this.open(child) : this.view(child));
        });
        item.append(button);
        return item;
      });
      this.list.replaceChildren(...items);
    } catch (error) {
      this.fail(`cannot list ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async view(path: string): Promise<void> {
    try {
      const fs = (await this.client()).fs;
      const metadata = await firstValueFrom(fs.getMetadata(path));
      if (metadata.size > MAX_VIEW_BYTES) {
        this.viewer.textContent = `${path}: ${metadata.size} bytes, too large to show here`;
        return;
      }
      const bytes = await firstValueFrom(fs.readFile(path));
      this.viewer.textContent = new TextDecoder().decode(bytes);
    } catch (error) {
      this.fail(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

function join(directory: string, name: string): string {
  if (name === '..') {
    const parent = directory.replace(/\/+$/, '').replace(/\/[^/]*$/, '');
    return parent === '' ? '/' : parent;
  }
  return directory.endsWith('/') ? `${directory}${name}` : `${directory}/${name}`;
}
