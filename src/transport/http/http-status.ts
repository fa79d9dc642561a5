/**
 * The HTTP status each kernel error code maps to, for every REST route (kernel
 * and doors alike), so one code always answers with one status.
 */
import type { ErrorCode } from '../../kernel/errors.js';

export const HTTP_STATUS: Readonly<Record<ErrorCode, number>> = {
  malformedRequest: 400,
  notFound: 404,
  noProject: 409,
  approvalRequired: 403,
  approvalDenied: 403,
  notAuthorized: 403,
  versionConflict: 409,
  confirmRequired: 400,
  requestTooLarge: 413,
  resultTooLarge: 413,
  busy: 429,
  timeout: 504,
  cancelled: 499,
  mutationUncertain: 503,
  unavailable: 503,
  upstreamError: 502,
  internal: 500,
};
