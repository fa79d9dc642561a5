/**
 * A document the compiler cannot read: which file (or URL) and which JSON
 * pointer inside it, so the person can open the file at the right place.
 */
export class DocumentError extends Error {
  override name = 'DocumentError';
  readonly file: string;
  readonly pointer: string;

  constructor(file: string, pointer: string, problem: string) {
    super(`${file}${pointer ? `#${pointer}` : ''}: ${problem}`);
    this.file = file;
    this.pointer = pointer;
  }
}

/** RFC 6901 escaping of one reference token. */
export const escapeToken = (token: string): string =>
  token.replace(/~/g, '~0').replace(/\//g, '~1');

export const unescapeToken = (token: string): string =>
  token.replace(/~1/g, '/').replace(/~0/g, '~');

/** Appends reference tokens to a JSON pointer. */
export const pointerOf = (base: string, ...tokens: (string | number)[]): string =>
  tokens.reduce<string>((p, t) => `${p}/${escapeToken(String(t))}`, base);
