import type { ArgumentsHost } from '@nestjs/common';

/** What Express and Fastify replies have in common, so the filters need neither. */
type Reply =
  | { status(code: number): { json(body: unknown): unknown } }
  | { code(code: number): { send(body: unknown): unknown } };

/**
 * Answers the HTTP request of `host` with `body` under its `statusCode`, on Express or Fastify.
 * @internal The library's exception filters answer through it.
 */
export function replyWith(host: ArgumentsHost, body: { statusCode: number }): void {
  const reply = host.switchToHttp().getResponse<Reply>();
  if ('status' in reply) reply.status(body.statusCode).json(body);
  else reply.code(body.statusCode).send(body);
}
