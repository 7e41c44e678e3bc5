import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version';

describe('library version', () => {
  it('matches the package.json that gets published', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as {
      name: string;
      version: string;
    };
    expect({ name: LIBRARY_NAME, version: LIBRARY_VERSION }).toEqual({
      name: manifest.name,
      version: manifest.version,
    });
  });
});
