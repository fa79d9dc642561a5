/**
 * The kernel's one error vocabulary (spec/kernel.md §2).
 *
 * Codes are never reused or renamed; each door maps them onto its own wire
 * format. Every message tells the caller what to do next. Expected failures
 * travel as values (`Failure`); `AirlockError` exists so deep code can throw a
 * failure through layers that do not know about it, and the pipeline turns it
 * back into a value.
 */
import { randomUUID } from 'node:crypto';

export const ERROR_CODES = [
  'malformedRequest',
  'notFound',
  'noProject',
  'approvalRequired',
  'approvalDenied',
  'notAuthorized',
  'versionConflict',
  'confirmRequired',
  'requestTooLarge',
  'resultTooLarge',
  'busy',
  'timeout',
  'cancelled',
  'mutationUncertain',
  'unavailable',
  'upstreamError',
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Default sentence per code: what happened and what to do next. */
export const DEFAULT_MESSAGES: Readonly<Record<ErrorCode, string>> = {
  malformedRequest: 'The request is malformed; fix the named field and call again.',
  notFound: 'Nothing with that id exists; list the available items and use one of their ids.',
  noProject: 'No project is open; open or create a project first.',
  approvalRequired:
    'The owner has not approved this yet; ask them to approve the pending request, then call again.',
  approvalDenied: 'The owner denied this request; do not retry unless the owner asks you to.',
  notAuthorized:
    'This connection has no grant covering that resource; request access first and wait for approval.',
  versionConflict:
    'The resource changed since you read it; read it again and retry with the current version.',
  confirmRequired: 'This action is destructive; ask the user, then call again with confirm: true.',
  requestTooLarge: 'The request is too large; send less data per call.',
  resultTooLarge: 'The result is too large to return; narrow the request.',
  busy: 'Too many calls are in flight on this connection; wait for one to finish, then retry.',
  timeout: 'The call took too long and was stopped; nothing was written, so it is safe to retry.',
  cancelled: 'The call was cancelled before it finished.',
  mutationUncertain:
    'The call was interrupted and the write may have happened; check the resource or retry with the same operationID (never a new one).',
  unavailable: 'The service is not available right now; retry later.',
  upstreamError: 'The upstream service answered with an error; see the details.',
  internal: 'An internal error occurred; report the log id to the server operator.',
};

/** An expected failure, as a value. */
export interface Failure {
  readonly ok: false;
  readonly code: ErrorCode;
  readonly message: string;
  /** Extra machine-readable detail (current version, log id, field path…). */
  readonly data?: Readonly<Record<string, unknown>>;
}

export function failure(
  code: ErrorCode,
  message: string = DEFAULT_MESSAGES[code],
  data?: Record<string, unknown>,
): Failure {
  return data === undefined ? { ok: false, code, message } : { ok: false, code, message, data };
}

/**
 * The one `internal` failure: an id the operator finds in the server log,
 * nothing of the cause (no stack trace reaches a client). Log the error with
 * the same `logId`.
 */
export function internalFailure(logId: string = randomUUID()): Failure {
  return failure(
    'internal',
    `Internal error (log id ${logId}); report it to the server operator.`,
    { logId },
  );
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

/** A failure thrown through code that cannot return it; the pipeline catches it. */
export class AirlockError extends Error {
  readonly code: ErrorCode;
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string = DEFAULT_MESSAGES[code],
    data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AirlockError';
    this.code = code;
    this.data = data;
  }

  toFailure(): Failure {
    return failure(this.code, this.message, this.data as Record<string, unknown> | undefined);
  }
}

export function isFailure(value: unknown): value is Failure {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { ok?: unknown }).ok === false &&
    isErrorCode((value as { code?: unknown }).code)
  );
}
