import { throttledWarning } from './throttled-warning';

describe('throttledWarning', () => {
  it('logs a repeated message once per 10 s, and says how many it held back', () => {
    const lines: string[] = [];
    const clock = { ms: 0 };
    const warn = throttledWarning(
      (line) => lines.push(line),
      () => clock.ms,
    );

    for (let i = 0; i < 3_000; i += 1) warn('OOM command not allowed');
    clock.ms = 9_999;
    warn('OOM command not allowed');
    expect(lines).toEqual(['OOM command not allowed']);

    clock.ms = 10_000;
    warn('OOM command not allowed');
    expect(lines).toEqual([
      'OOM command not allowed',
      'OOM command not allowed (3000 more like it held back before it)',
    ]);
  });

  it('holds back each of several alternating messages on its own', () => {
    const lines: string[] = [];
    const clock = { ms: 0 };
    const warn = throttledWarning(
      (line) => lines.push(line),
      () => clock.ms,
    );
    for (let i = 0; i < 10_000; i += 1) {
      warn(i % 2 === 0 ? 'OOM command not allowed' : 'Connection is closed.');
    }
    expect(lines).toEqual(['OOM command not allowed', 'Connection is closed.']);

    clock.ms = 10_000;
    warn('Connection is closed.');
    expect(lines.at(-1)).toBe('Connection is closed. (4999 more like it held back before it)');
  });
});
