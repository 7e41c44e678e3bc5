/** Browser tests: headless Debian Chromium through playwright-core (`npm run test:browser`). */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/browser'],
  testRegex: '.*\\.browser-spec\\.ts$',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60_000,
};
