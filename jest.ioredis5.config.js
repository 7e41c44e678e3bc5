/**
 * The suites that speak to Redis again, on ioredis 5 (`npm run test:ioredis5`, run by CI): the
 * repository installs ioredis 6 and, as `ioredis5`, the last 5.x it supports. Every `ioredis`
 * this run loads (ours, BullMQ's) is ioredis 5; child processes a suite starts load ioredis 6.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/libs/payments/src', '<rootDir>/test'],
  testRegex: '/(redis|runs/bullmq|journal)/.*\\.(spec|e2e-spec)\\.ts$',
  moduleNameMapper: { ...base.moduleNameMapper, '^ioredis$': 'ioredis5' },
  setupFiles: ['<rootDir>/libs/payments/spec-support/ioredis5-only.js'],
};
