// jest.ioredis5.config.js: fails the run unless `ioredis` is ioredis 5 here.
const { version } = require('ioredis5/package.json');
if (!version.startsWith('5.') || require('ioredis') !== require('ioredis5')) {
  throw new Error(`the ioredis 5 lane loaded another ioredis (ioredis5 is ${version})`);
}
