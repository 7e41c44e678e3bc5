import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The binary: `REDIS_SERVER` if set, else `redis-server` on the PATH (Debian: /usr/bin). */
const BINARY = process.env.REDIS_SERVER ?? 'redis-server';
const START_TIMEOUT_MS = 15_000;

/** A free loopback port (a race with other processes is possible; start() retries once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/**
 * Sends one inline command and resolves with the first reply line; rejects when unreachable, or
 * when the server stays silent for `timeoutMs`: long enough for a snapshot or a flush on a busy
 * machine, where a short bound failed a stop that was only slow.
 */
function command(port: number, line: string, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let reply = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no answer to ${line}`)));
    socket.on('connect', () => socket.write(`${line}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply.split('\r\n')[0]);
      }
    });
    // SHUTDOWN closes the connection without a reply.
    socket.on('close', () => resolve(reply.split('\r\n')[0]));
    socket.on('error', reject);
  });
}

/**
 * A real `redis-server` for one test file, on a free loopback port, persistence off (`--save ''
 * --appendonly no`): started by {@link RedisServer.start}, which waits for PING, and stopped by
 * {@link RedisServer.close}. {@link RedisServer.stop} and {@link RedisServer.restart} simulate an
 * outage of the same server (same port, data kept: a snapshot is written at the stop only, as a
 * Redis that survives a network outage or fails over keeps its keys); {@link RedisServer.freeze}
 * makes it hang instead (SIGSTOP: connections stay open, commands time out).
 *
 * A missing binary or a server that does not answer fails the test: it is never skipped.
 */
export class RedisServer {
  private process?: ChildProcess;
  /** What the server printed (warnings and above), for the errors of a failed start or stop. */
  private stderr = '';
  private constructor(
    readonly port: number,
    private readonly dir: string,
    /** More arguments of `redis-server`, e.g. a Cluster node's. */
    private readonly extraArgs: readonly string[],
  ) {}

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** @param extraArgs more arguments of `redis-server`, given the server's own directory. */
  static async start(
    extraArgs: (dir: string) => readonly string[] = () => [],
  ): Promise<RedisServer> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const port = await freePort();
      const dir = mkdtempSync(join(tmpdir(), 'malipo-redis-'));
      const server = new RedisServer(port, dir, extraArgs(dir));
      try {
        await server.launch();
        return server;
      } catch (error) {
        lastError = error;
        await server.close();
      }
    }
    throw new Error(
      `Could not start ${BINARY} (install Debian's redis-server, or set REDIS_SERVER): ${
        lastError instanceof Error ? lastError.message : String(lastError)
      }`,
    );
  }

  /** Stops the server as in an outage; its keys come back with {@link restart}. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const reply = await command(this.port, 'SHUTDOWN SAVE');
    // A refused SHUTDOWN (a snapshot that could not be written) leaves the server running.
    if (reply.startsWith('-')) {
      throw new Error(`SHUTDOWN SAVE answered ${reply}: ${this.stderr.trim()}`);
    }
    await exited;
    this.process = undefined;
  }

  /** Starts the same server again, on the same port, with the keys it had at {@link stop}. */
  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  /** Freezes the server: it accepts nothing and answers nothing until {@link thaw}. */
  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  thaw(): void {
    this.process?.kill('SIGCONT');
  }

  /** Deletes every key (`FLUSHALL`), between the cases of one file. */
  async flushAll(): Promise<void> {
    const reply = await command(this.port, 'FLUSHALL');
    if (reply !== '+OK') throw new Error(`FLUSHALL answered ${reply}`);
  }

  /** Kills the server and removes its files. */
  async close(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const child = spawn(
      BINARY,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        '--loglevel',
        'warning',
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.process = child;
    this.stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    const failed = new Promise<never>((_, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${this.stderr.trim()}`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      const pong = await Promise.race([command(this.port, 'PING', 500).catch(() => ''), failed]);
      if (pong === '+PONG') return;
      if (Date.now() > deadline) throw new Error(`no PONG within ${START_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
