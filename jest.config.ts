import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // Sources import with `.js` suffixes (NodeNext); map them back to the `.ts` files.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json', diagnostics: false }],
  },
  testTimeout: 30_000,
  // Integration specs start real servers and child processes; two workers match the CI machine.
  maxWorkers: 2,
};

export default config;
