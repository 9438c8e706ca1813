import { describe, expect, it } from '@jest/globals';
import {
  clientMethods,
  EnvironmentInfo,
  HttpRequestBodyDeltaNotification,
  InitializeResult,
  NoParams,
  ProcessExitedNotification,
  ProcessStartResult,
  type ParamsOf,
  type ResultOf,
} from '../../src/protocol/index.js';

describe('schemas: legacy and edge inputs', () => {
  it('no-params methods accept null, an absent member or {}, and nothing else', () => {
    expect(NoParams.parse(null)).toBeNull();
    expect(NoParams.parse(undefined)).toBeNull();
    expect(NoParams.parse({})).toBeNull();
    expect(NoParams.safeParse({ a: 1 }).success).toBe(false);
    expect(NoParams.safeParse([]).success).toBe(false);
  });

  it('an old executor environment/info ({shell} only) gets the client defaults', () => {
    const info = EnvironmentInfo.parse({ shell: { name: 'sh', path: '/bin/sh' } });
    expect(info.executorVersion).toBe('0.0.0');
    expect(info.capabilities.fileWriteStreaming).toBe(false);
    expect(info.capabilities.environmentConfigRead).toBe(false);
    expect(InitializeResult.parse({ sessionId: 's' })).toEqual({ sessionId: 's' });
  });

  it('legacy results without sandboxType / sandboxDenied still parse', () => {
    expect(ProcessStartResult.parse({ processId: 'p' })).toEqual({ processId: 'p' });
    expect(ProcessExitedNotification.parse({ processId: 'p', seq: 2, exitCode: 0 })).toEqual({
      processId: 'p',
      seq: 2,
      exitCode: 0,
    });
  });

  it('body deltas default done/error and refuse non-base64', () => {
    expect(
      HttpRequestBodyDeltaNotification.parse({ requestId: 'r', seq: 1, deltaBase64: '' }),
    ).toEqual({
      requestId: 'r',
      seq: 1,
      deltaBase64: '',
      done: false,
      error: null,
    });
    expect(
      HttpRequestBodyDeltaNotification.safeParse({ requestId: 'r', seq: 1, deltaBase64: '***' })
        .success,
    ).toBe(false);
  });

  it('a typed literal of ParamsOf<> serializes to the exact upstream client bytes', () => {
    const start: ParamsOf<'process/start'> = {
      processId: 'p1',
      argv: ['sh', '-c', 'echo hi'],
      cwd: 'file:///tmp',
      envPolicy: null,
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      pipeStdin: false,
      arg0: null,
      sandbox: null,
      enforceManagedNetwork: false,
      managedNetwork: null,
    };
    // spec/protocol.md §4.1 example, byte for byte.
    expect(JSON.stringify(start)).toBe(
      '{"processId":"p1","argv":["sh","-c","echo hi"],"cwd":"file:///tmp","envPolicy":null,"env":{"PATH":"/usr/bin:/bin"},"tty":false,"pipeStdin":false,"arg0":null,"sandbox":null,"enforceManagedNetwork":false,"managedNetwork":null}',
    );
    expect(JSON.stringify(clientMethods['process/start'].params.parse(start))).toBe(
      JSON.stringify(start),
    );
    const status: ResultOf<'environment/status'> = { status: 'ready' };
    expect(status.status).toBe('ready');
  });
});
