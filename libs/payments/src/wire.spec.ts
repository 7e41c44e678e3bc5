import { correlatedUrl } from './wire';

describe('correlatedUrl', () => {
  const cases: [string, string, string][] = [
    ['https://shop.example/cb', 'k-1', 'https://shop.example/cb?malipo_key=k-1'],
    ['https://shop.example/cb?order=7', 'k 2', 'https://shop.example/cb?order=7&malipo_key=k%202'],
    ['https://shop.example/cb#top', 'k-3', 'https://shop.example/cb?malipo_key=k-3#top'],
    ['https://shop.example/cb?malipo_key=old', 'k-4', 'https://shop.example/cb?malipo_key=k-4'],
    ['https://shop.example/cb', 'k/5', 'https://shop.example/cb?malipo_key=k%2F5'],
  ];

  it.each(cases)('appends the key to %s', (url, key, expected) => {
    expect(correlatedUrl(url, key)).toBe(expected);
  });
});
