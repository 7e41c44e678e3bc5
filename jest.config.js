/** @type {import('jest').Config} */
module.exports = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: '.',
  roots: ['<rootDir>/libs', '<rootDir>/apps', '<rootDir>/test'],
  testRegex: '.*\\.(spec|e2e-spec)\\.ts$',
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/test/browser/', '/test/consumers/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: true }],
  },
  moduleNameMapper: {
    '^@malipo/nestjs$': '<rootDir>/libs/payments/src',
    '^@malipo/nestjs/(.*)$': '<rootDir>/libs/payments/src/$1',
  },
  testEnvironment: 'node',
  testTimeout: 30_000,
  // Four suites at a time even on two cores: the suites mostly wait on loopback servers and real
  // retry backoffs (a full run uses ~65 s of CPU in ~40 s on the 2-core CI machine), so two
  // workers would leave the cores idle half the time.
  maxWorkers: 4,
  // The fault matrix runs its six operations side by side (test/reliability/fault-matrix.e2e-spec.ts).
  maxConcurrency: 6,
};
