/**
 * Raw `process/start` params of a child that floods stdout with zeros (after 0.2 s, so the
 * test can stop reading first), for the back-pressure specs of both executor transports.
 */
export const FLOOD_PROCESS_START_PARAMS = {
  processId: 'flood',
  argv: ['sh', '-c', 'sleep 0.2; exec cat /dev/zero'],
  cwd: 'file:///',
  env: { PATH: '/usr/bin:/bin' },
  tty: false,
  arg0: null,
} as const;
