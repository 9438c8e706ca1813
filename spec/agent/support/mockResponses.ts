/**
 * A small, honest mock of the OpenAI Responses API for driving the real `codex exec` without
 * a model service: `POST /v1/responses` is answered with server-sent events from a script of
 * turns (a tool call each, then a final message). Every request body is kept, so a test can
 * check what the agent sent back for each tool call (`function_call_output` /
 * `custom_tool_call_output`) instead of trusting exit codes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One model turn: a tool call, or the final answer. */
export type Turn =
  | { kind: 'exec'; cmd: string; tty?: boolean; yieldTimeMs?: number }
  | { kind: 'writeStdin'; sessionId: number; chars: string; yieldTimeMs?: number }
  | { kind: 'patch'; patch: string }
  | { kind: 'message'; text: string };

/** What the agent sent back for one tool call. */
export interface ToolOutput {
  callId: string;
  /** The tool's output text as the agent reported it to the model. */
  output: string;
}

export interface MockResponses {
  /** `http://127.0.0.1:PORT/v1` */
  readonly baseUrl: string;
  /** Tool outputs the agent sent, in order. */
  readonly toolOutputs: ToolOutput[];
  /** How many `POST /v1/responses` were answered. */
  readonly requestCount: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

function sse(response: ServerResponse, events: object[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    const type = (event as { type: string }).type;
    response.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
  }
  response.end();
}

function item(turn: Turn, index: number): object {
  const callId = `call_${index}`;
  switch (turn.kind) {
    case 'exec':
      return {
        type: 'function_call',
        id: `fc_${index}`,
        call_id: callId,
        name: 'exec_command',
        arguments: JSON.stringify({
          cmd: turn.cmd,
          yield_time_ms: turn.yieldTimeMs ?? 5_000,
          ...(turn.tty ? { tty: true } : {}),
        }),
      };
    case 'writeStdin':
      return {
        type: 'function_call',
        id: `fc_${index}`,
        call_id: callId,
        name: 'write_stdin',
        arguments: JSON.stringify({
          session_id: turn.sessionId,
          chars: turn.chars,
          yield_time_ms: turn.yieldTimeMs ?? 5_000,
        }),
      };
    case 'patch':
      return {
        type: 'custom_tool_call',
        id: `ctc_${index}`,
        call_id: callId,
        name: 'apply_patch',
        input: turn.patch,
      };
    case 'message':
      return {
        type: 'message',
        role: 'assistant',
        id: `msg_${index}`,
        content: [{ type: 'output_text', text: turn.text }],
      };
  }
}

/** The text of a tool output item (a string, or content parts). */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    return output
      .map((part) =>
        typeof part === 'object' && part !== null
          ? String((part as { text?: unknown }).text ?? '')
          : '',
      )
      .join('');
  }
  if (typeof output === 'object' && output !== null) {
    const content = (output as { content?: unknown }).content;
    if (content !== undefined) return outputText(content);
  }
  return JSON.stringify(output);
}

/** A turn, or how to make it from the tool outputs received so far (e.g. a session id). */
export type ScriptedTurn = Turn | ((outputs: readonly ToolOutput[]) => Turn);

/** Starts the mock on 127.0.0.1:0; `turns` are played in order, one per request. */
export async function startMockResponses(turns: readonly ScriptedTurn[]): Promise<MockResponses> {
  const toolOutputs: ToolOutput[] = [];
  const seenCalls = new Set<string>();
  let requestCount = 0;

  const handle = (request: IncomingMessage, response: ServerResponse, body: string): void => {
    if (request.method !== 'POST' || !request.url?.endsWith('/responses')) {
      response.writeHead(404).end();
      return;
    }
    let parsed: { input?: unknown[] };
    try {
      parsed = JSON.parse(body) as { input?: unknown[] };
    } catch {
      response.writeHead(400).end('body is not JSON');
      return;
    }
    for (const entry of parsed.input ?? []) {
      const record = entry as { type?: string; call_id?: string; output?: unknown };
      if (
        (record.type === 'function_call_output' || record.type === 'custom_tool_call_output') &&
        typeof record.call_id === 'string' &&
        !seenCalls.has(record.call_id)
      ) {
        seenCalls.add(record.call_id);
        toolOutputs.push({ callId: record.call_id, output: outputText(record.output) });
      }
    }
    const index = requestCount;
    requestCount += 1;
    // Past the script: finish politely rather than loop.
    const scripted = turns[index] ?? { kind: 'message', text: 'done' };
    const turn = typeof scripted === 'function' ? scripted(toolOutputs) : scripted;
    const responseId = `resp_${index}`;
    sse(response, [
      { type: 'response.created', response: { id: responseId } },
      { type: 'response.output_item.done', output_index: 0, item: item(turn, index) },
      {
        type: 'response.completed',
        response: {
          id: responseId,
          usage: {
            input_tokens: 1,
            input_tokens_details: null,
            output_tokens: 1,
            output_tokens_details: null,
            total_tokens: 2,
          },
        },
      },
    ]);
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        response.writeHead(413).end();
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    toolOutputs,
    get requestCount() {
      return requestCount;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
