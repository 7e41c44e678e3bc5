import { amountsDiffer } from './transaction-outcome';

describe('amountsDiffer', () => {
  it.each([
    ['KES', 100, 100.004, false],
    ['KES', 100, 100.005, true],
    ['KES', 0.1 + 0.2, 0.3, false],
    ['TND', 1.234, 1.2344, false],
    ['TND', 1.234, 1.238, true],
    ['TND', 1.234, 1.2345, true],
    ['tnd ', 1.234, 1.235, true],
    ['CLF', 1.2345, 1.2346, true],
    ['UGX', 1000, 1000.4, false],
    ['UGX', 1000, 1001, true],
    [undefined, 100, 100.004, false],
    [undefined, 100, 100.01, true],
  ] as const)('in %s, %p and %p differ: %p', (currency, a, b, differ) => {
    expect(amountsDiffer(a, b, currency)).toBe(differ);
    expect(amountsDiffer(b, a, currency)).toBe(differ);
  });
});
