/** Errors the bridge reports: to `connect()` callers, and to the relay as `{code, message}`. */
export class BridgeError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
  }
}

export const denied = (flag: string, what: string) =>
  new BridgeError(
    'WU_PERMISSION_DENIED',
    `The page does not allow ${what} (permission '${flag}' is off); ask the page's owner to enable it.`,
  );
