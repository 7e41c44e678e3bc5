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
      'OOM command not allowed (3000 more warnings held back before it)',
    ]);
  });

  it('logs another message at once', () => {
    const lines: string[] = [];
    const warn = throttledWarning(
      (line) => lines.push(line),
      () => 0,
    );
    warn('OOM command not allowed');
    warn('OOM command not allowed');
    warn('Connection is closed.');
    expect(lines).toEqual([
      'OOM command not allowed',
      'Connection is closed. (1 more warnings held back before it)',
    ]);
  });
});
