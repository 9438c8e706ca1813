/**
 * Process and HTTP backends of an environment: like the filesystem, each call goes to the
 * environment's current session. A process handle stays bound to the session that started it
 * (it never migrates to a replacement session).
 */
import { type Observable, switchMap } from 'rxjs';
import type { ExecServerClient, StartProcessOptions } from '../client/execServerClient.js';
import type { HttpRequest, HttpResponse } from '../client/httpClient.js';
import type { ProcessHandle } from '../client/processHandle.js';

/**
 * Processes on the current session. A started process stays bound to the session that started it.
 */
export class EnvironmentProcessBackend {
  constructor(private readonly session: () => Observable<ExecServerClient>) {}

  /** Starts a process on the current session (connecting first if needed). */
  start(options: StartProcessOptions): Observable<ProcessHandle> {
    return this.session().pipe(switchMap((client) => client.startProcess(options)));
  }
}

/** HTTP requests from the executor host of the current session. */
export class EnvironmentHttpClient {
  constructor(private readonly session: () => Observable<ExecServerClient>) {}

  /** Sends one HTTP request from the executor host of the current session. */
  request(request: HttpRequest): Observable<HttpResponse> {
    return this.session().pipe(switchMap((client) => client.http.request(request)));
  }
}
