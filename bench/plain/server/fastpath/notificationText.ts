/**
 * Plain twin of src/server/fastpath/notificationText.ts: every notification is
 * `JSON.stringify({ method, params })`, handed over as one piece. The params class keeps the
 * fast module's fields and encoding (not the trick) and overrides only the text.
 */
import { ProcessOutputParams as FastProcessOutputParams } from '../../../../src/server/fastpath/notificationText.js';
import type { SplitText } from '../../../../src/server/splitText.js';

export class ProcessOutputParams extends FastProcessOutputParams {
  override notificationText(method: string): string {
    return JSON.stringify({ method, params: this });
  }

  override splitNotificationText(method: string): SplitText {
    return { head: this.notificationText(method), ascii: '', tail: '' };
  }
}

export function notificationText(method: string, params: unknown): string {
  return JSON.stringify({ method, params });
}
