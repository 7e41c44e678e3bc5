import { parseSandboxArgs, SANDBOX_USAGE } from './cli-options';

describe('malipo-sandbox arguments', () => {
  it('maps every flag to a startSandbox option', () => {
    expect(
      parseSandboxArgs([
        '--port',
        '0',
        '--host',
        '0.0.0.0',
        '--username',
        'me',
        '--password',
        'secret-pw',
        '--webhook-delay-ms',
        '25',
        '--rate-limit',
        '20',
      ]),
    ).toEqual({
      help: false,
      options: {
        port: 0,
        host: '0.0.0.0',
        apiUsername: 'me',
        apiPassword: 'secret-pw',
        webhookDelayMs: 25,
        rateLimit: { requestsPerSecond: 20 },
      },
    });
  });

  it('leaves unset what is not given, so the environment variables apply', () => {
    expect(parseSandboxArgs([])).toEqual({ help: false, options: {} });
  });

  it('answers --help', () => {
    expect(parseSandboxArgs(['--help'])).toEqual({ help: true });
  });

  it('documents every flag in --help', () => {
    for (const flag of ['--port', '--host', '--webhook-delay-ms', '--rate-limit']) {
      expect(SANDBOX_USAGE).toContain(flag);
    }
  });

  it.each([
    [['--port', 'abc'], /--port must be a whole number/],
    [['--port', '70000'], /--port must be at most 65535/],
    [['--webhook-delay-ms', '1.5'], /--webhook-delay-ms must be a whole number/],
    [['--rate-limit', '0'], /--rate-limit must be at least 1/],
    [['--rate-limit', 'fast'], /--rate-limit must be a whole number/],
    [['--verbose'], /Unknown option '--verbose'/],
  ])('refuses %j', (args, message) => {
    expect(() => parseSandboxArgs(args)).toThrow(message);
  });
});
