import { describe, expect, it } from 'vitest';
import { DEFAULT_MESSAGES, ERROR_CODES } from '../../src/kernel/errors.js';

describe('error vocabulary', () => {
  it('is exactly the catalogue of spec/kernel.md §2, in order', () => {
    expect(ERROR_CODES).toEqual([
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
    ]);
  });

  it('gives every code a one-sentence default message', () => {
    for (const code of ERROR_CODES) {
      expect(DEFAULT_MESSAGES[code]).toMatch(/^[A-Z].*\.$/);
    }
  });
});
