/** Whether a process id is alive (signal 0), and a bounded wait until it is gone. */

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls every 100 ms, for at most 10 s, until `pid` is gone; the caller asserts the outcome. */
export async function waitUntilGone(pid: number): Promise<void> {
  for (let attempt = 0; attempt < 100 && isAlive(pid); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
