/**
 * A scripted executor on the far end of an in-memory transport pair. Requests are recorded;
 * `handlers` answer some methods automatically (initialize answers by default), the rest wait
 * for the test to `respond` / `fail` them. Everything is synchronous.
 */
import { createTransportPair, type PairEnd } from '../../support/transportPair.js';

export interface RecordedRequest {
  readonly id: number;
  readonly method: string;
  readonly params: unknown;
  answered: boolean;
}

export type AutoHandler = (params: unknown, request: RecordedRequest) => unknown;

export class FakeExecutor {
  readonly requests: RecordedRequest[] = [];
  readonly notifications: { method: string; params: unknown }[] = [];
  /** Answers (`{ result }` / `{ error }` shapes) received for server→client requests. */
  readonly replies: unknown[] = [];
  readonly handlers = new Map<string, AutoHandler>();

  constructor(
    readonly end: PairEnd,
    sessionId = 'session-1',
    environmentInfo?: unknown,
  ) {
    this.handlers.set('initialize', () => ({
      sessionId,
      ...(environmentInfo === undefined ? {} : { environmentInfo }),
    }));
    end.incoming$.subscribe((text) => this.receive(text));
  }

  /** Unanswered requests for `method`, oldest first. */
  pending(method?: string): RecordedRequest[] {
    return this.requests.filter(
      (r) => !r.answered && (method === undefined || r.method === method),
    );
  }

  /** The oldest unanswered request for `method`; throws when there is none. */
  take(method: string): RecordedRequest {
    const request = this.pending(method)[0];
    if (request === undefined) {
      throw new Error(`no pending ${method}; saw ${this.requests.map((r) => r.method).join(', ')}`);
    }
    return request;
  }

  respond(request: RecordedRequest, result: unknown): void {
    request.answered = true;
    this.end.send(JSON.stringify({ id: request.id, result }));
  }

  fail(request: RecordedRequest, code: number, message: string): void {
    request.answered = true;
    this.end.send(JSON.stringify({ id: request.id, error: { code, message } }));
  }

  notify(method: string, params: unknown): void {
    this.end.send(JSON.stringify({ method, params }));
  }

  /** A server→client request. */
  request(id: number, method: string, params: unknown): void {
    this.end.send(JSON.stringify({ id, method, params }));
  }

  private receive(text: string): void {
    const message = JSON.parse(text) as { id?: number; method?: string; params?: unknown };
    if (message.method === undefined) {
      this.replies.push(message);
      return;
    }
    if (message.id === undefined) {
      this.notifications.push({ method: message.method, params: message.params });
      return;
    }
    const request: RecordedRequest = {
      id: message.id,
      method: message.method,
      params: message.params,
      answered: false,
    };
    this.requests.push(request);
    const handler = this.handlers.get(message.method);
    if (handler !== undefined) {
      const result = handler(message.params, request);
      if (result !== undefined) this.respond(request, result);
    }
  }
}

/** A linked client transport and fake executor. */
export function fakeConnection(
  sessionId = 'session-1',
  environmentInfo?: unknown,
): {
  transport: PairEnd;
  executor: FakeExecutor;
} {
  const { client, server } = createTransportPair();
  return { transport: client, executor: new FakeExecutor(server, sessionId, environmentInfo) };
}

export const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
export const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
