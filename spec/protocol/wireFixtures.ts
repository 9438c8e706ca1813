/** Loads the wire fixtures captured from the real executor (scripts/capture-fixtures.ts). */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One transcript line. `message` is parsed JSON; `raw` is text that was not valid JSON. */
export interface TranscriptEntry {
  conn: string;
  dir: 'send' | 'recv';
  message?: unknown;
  raw?: string;
  /** Sent as a binary WebSocket frame. */
  binary?: boolean;
  event?: 'open' | 'close' | 'ping' | 'http';
  code?: number;
  reason?: string;
  /** Free-form detail for `http` events and notes. */
  detail?: unknown;
  /** Milliseconds since the scenario started (only where timing is the point). */
  atMs?: number;
  /**
   * Set on requests whose params deliberately differ from what the upstream client would
   * send (omitted defaults, extra fields); says how. The spec skips its canonical-form check.
   */
  variant?: string;
}

export interface WireFixture {
  file: string;
  name: string;
  description: string;
  executor: string;
  transcript: TranscriptEntry[];
  captureError?: string;
}

export const WIRE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'wire');

export function loadWireFixtures(): WireFixture[] {
  return readdirSync(WIRE_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      ...(JSON.parse(readFileSync(join(WIRE_DIR, file), 'utf8')) as Omit<WireFixture, 'file'>),
    }));
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A request sent by the capture, paired with the reply it got. */
export interface Exchange {
  fixture: string;
  conn: string;
  id: unknown;
  method: string;
  /** `undefined` when the params member was omitted. */
  params: unknown;
  variant: string | undefined;
  reply: Record<string, unknown> | undefined;
}

/** Pairs every request the capture sent with its response or error, per connection. */
export function exchanges(fixture: WireFixture): Exchange[] {
  const pending = new Map<string, Exchange>();
  const all: Exchange[] = [];
  for (const entry of fixture.transcript) {
    const message = asRecord(entry.message);
    if (message === undefined) continue;
    const key = `${entry.conn}\u0000${JSON.stringify(message.id)}`;
    if (entry.dir === 'send' && typeof message.method === 'string' && 'id' in message) {
      const exchange: Exchange = {
        fixture: fixture.name,
        conn: entry.conn,
        id: message.id,
        method: message.method,
        params: message.params,
        variant: entry.variant,
        reply: undefined,
      };
      pending.set(key, exchange);
      all.push(exchange);
    } else if (entry.dir === 'recv' && !('method' in message) && 'id' in message) {
      const exchange = pending.get(key);
      if (exchange !== undefined) {
        exchange.reply = message;
        pending.delete(key);
      }
    }
  }
  return all;
}

/** Round-trips through JSON so `undefined` members disappear exactly as on the wire. */
export function wire(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}
