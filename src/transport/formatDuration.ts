/**
 * Renders a duration the way the upstream Rust client prints `Duration` in its error texts
 * (`10s`, `1.5s`, `250ms`), so messages such as
 * ``timed out connecting to exec-server websocket `<url>` after 10s`` read the same on both stacks.
 */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${milliseconds}ms`;
  return `${milliseconds / 1000}s`;
}
