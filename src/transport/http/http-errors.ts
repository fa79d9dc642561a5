/**
 * The one mapping from kernel failures to HTTP: status per code
 * (`http-status.ts`) and the REST error body `{status, code, message, …data}`.
 * Every REST route, kernel and door alike, answers failures through here, so
 * one code always answers with one status and only catalogue codes go out.
 */
import type { ServerResponse } from 'node:http';
import type { Failure } from '../../kernel/errors.js';
import { HTTP_STATUS } from './http-status.js';
import { sendJson } from './http-util.js';
import type { RestResponse } from '../surface.js';

/**
 * A failure as a REST response. `status` overrides the code's usual status
 * where HTTP has a more precise one (401 for a missing credential, 405 for a
 * path that exists under another method).
 */
export function failureResponse(f: Failure, status: number = HTTP_STATUS[f.code]): RestResponse {
  return { status, body: { status, code: f.code, message: f.message, ...(f.data ?? {}) } };
}

export function sendFailure(res: ServerResponse, f: Failure, status?: number): void {
  const { status: s, body } = failureResponse(f, status);
  sendJson(res, s, body);
}
