/**
 * A one-line transfer progress display on a terminal: bytes done of the total, rate, time
 * left and the current file, redrawn at most every 100 ms. Nothing when stderr is not a
 * terminal (piped or redirected output stays clean).
 */
import type { Writable } from 'node:stream';

const CLEAR_LINE = '\r\x1b[2K';
const REDRAW_MS = 100;

export interface ProgressBar {
  /** The file now being copied. */
  file(name: string): void;
  /** `bytes` more were transferred. */
  advance(bytes: number): void;
  /** Removes the line. */
  done(): void;
}

export function progressBar(
  stderr: Writable & { isTTY?: boolean; columns?: number },
  totalBytes: number,
  now: () => number = Date.now,
): ProgressBar {
  if (stderr.isTTY !== true)
    return { file: () => undefined, advance: () => undefined, done: () => undefined };
  const started = now();
  let transferred = 0;
  let current = '';
  let lastDraw = 0;
  let visible = false;
  const draw = (force: boolean): void => {
    const at = now();
    if (!force && at - lastDraw < REDRAW_MS) return;
    lastDraw = at;
    const line = formatProgress(transferred, totalBytes, (at - started) / 1000, current);
    const width = Math.max(20, (stderr.columns ?? 80) - 1);
    stderr.write(`${CLEAR_LINE}${line.length > width ? line.slice(0, width) : line}`);
    visible = true;
  };
  return {
    file(name) {
      current = name;
      draw(true);
    },
    advance(bytes) {
      transferred += bytes;
      draw(false);
    },
    done() {
      if (visible) stderr.write(CLEAR_LINE);
      visible = false;
    },
  };
}

/** `12.0 MiB / 40.0 MiB  30%  3.1 MiB/s  0:09 left  name` */
export function formatProgress(
  done: number,
  total: number,
  elapsedSeconds: number,
  name: string,
): string {
  const rate = elapsedSeconds > 0 ? done / elapsedSeconds : 0;
  const percent = total > 0 ? Math.floor((done / total) * 100) : 100;
  const left = rate > 0 ? formatClock((total - done) / rate) : '--:--';
  return `${formatBytes(done)} / ${formatBytes(total)}  ${percent}%  ${formatBytes(rate)}/s  ${left} left  ${name}`;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function formatClock(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const secs = String(whole % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${secs}` : `${minutes}:${secs}`;
}
