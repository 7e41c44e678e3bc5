import { HttpException } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The sandbox writes its answers itself on the Node request/response pair (Express extends both),
 * so faults can replace or drop an answer, and no Express type package is needed.
 */
export type SandboxRequest = IncomingMessage & { body?: unknown; originalUrl?: string };
export type SandboxResponse = ServerResponse;

/** A status and JSON body, produced before anything is written (so it can be stored or dropped). */
export interface ApiReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * The real service's error body: `{ status, success: false, message }`, `status` a number, equal
 * to the HTTP status except when the service refuses with HTTP 200.
 */
export interface ErrorBody {
  status: number;
  success: false;
  message: string;
}

export function errorBody(status: number, message: string): ErrorBody {
  return { status, success: false, message };
}

/** An error answer; `bodyStatus` differs from the HTTP status only for a refusal with HTTP 200. */
export function errorReply(status: number, message: string, bodyStatus = status): ApiReply {
  return { status, body: errorBody(bodyStatus, message) };
}

/** An error answered with the real error body by the exception filter. */
export class SandboxHttpError extends HttpException {
  constructor(status: number, message: string) {
    super(errorBody(status, message), status);
  }
}

export function sendJson(
  res: SandboxResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  send(res, status, JSON.stringify(body) ?? 'null', {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  });
}

export function sendHtml(res: SandboxResponse, status: number, html: string): void {
  send(res, status, html, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
  });
}

export function send(
  res: SandboxResponse,
  status: number,
  text: string,
  headers: Record<string, string>,
): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.end(text);
}

/** The path of a request, without query string. */
export function requestPath(req: SandboxRequest): string {
  return new URL(req.originalUrl ?? req.url ?? '/', 'http://sandbox.invalid').pathname;
}

/** One header value; repeated headers are joined by Node, which is what a caller sent. */
export function headerValue(req: SandboxRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
