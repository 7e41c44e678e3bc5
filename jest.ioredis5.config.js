/**
 * Every suite that speaks to Redis, again on ioredis 5 (`npm run test:ioredis5`, run by CI): the
 * repository installs ioredis 6 and, as `ioredis5`, the last 5.x it supports. Every `ioredis`
 * this run loads (ours, BullMQ's) is ioredis 5; child processes a suite starts load ioredis 6.
 */
const fs = require('node:fs');
const path = require('node:path');
const base = require('./jest.config');

/**
 * What a suite that uses Redis imports: a Redis server of its own, ioredis, our Redis parts, or the
 * BullMQ runs' kit (which starts its redis-server).
 */
const USES_REDIS =
  /spec-support\/redis-server|from 'ioredis'|@malipo\/nestjs\/(redis|runs\/bullmq)|\/redis\/|runs\/bullmq\/|\/runs-kit'/;

function suites(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : suites(file);
    return /\.(spec|e2e-spec)\.ts$/.test(entry.name) &&
      USES_REDIS.test(fs.readFileSync(file, 'utf8'))
      ? [file]
      : [];
  });
}

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/libs', '<rootDir>/test'],
  testRegex: undefined,
  testMatch: [
    ...suites(path.join(__dirname, 'libs')),
    ...suites(path.join(__dirname, 'test')),
  ].filter(
    (file) =>
      !file.includes(`${path.sep}browser${path.sep}`) &&
      !file.includes(`${path.sep}consumers${path.sep}`),
  ),
  moduleNameMapper: { ...base.moduleNameMapper, '^ioredis$': 'ioredis5' },
  setupFiles: ['<rootDir>/libs/payments/spec-support/ioredis5-only.js'],
};
