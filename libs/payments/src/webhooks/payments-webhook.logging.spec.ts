import { forLog, ThrottledWarnings } from './payments-webhook.logging';

describe('ThrottledWarnings', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('writes 20 warnings a minute, then one line with the count withheld', () => {
    const lines: string[] = [];
    const warnings = new ThrottledWarnings({ warn: (m) => lines.push(m) }, 'webhook refusals');

    for (let i = 0; i < 5000; i += 1) warnings.warn(`Refused ${i}`);
    expect(lines).toHaveLength(20);
    expect(lines[19]).toBe('Refused 19');

    jest.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(21);
    expect(lines[20]).toMatch(
      /^4980 more webhook refusals in the last minute, not logged one by one/,
    );

    // A new minute writes again; a quiet one writes no summary.
    warnings.warn('Refused again');
    jest.advanceTimersByTime(60_000);
    expect(lines.slice(21)).toEqual(['Refused again']);
  });
});

describe('forLog', () => {
  it('bounds a value from a delivery: printable, at most 64 characters', () => {
    expect(forLog('9BD1eR\n[Nest] forged line\u001b[31m')).toBe('9BD1eR?[Nest] forged line?[31m');
    expect(forLog('x'.repeat(100))).toBe(`${'x'.repeat(64)}...`);
  });
});
