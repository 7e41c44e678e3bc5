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
  // The fault matrix runs its six operations side by side (test/reliability/fault-matrix.e2e-spec.ts).
  maxConcurrency: 6,
};
