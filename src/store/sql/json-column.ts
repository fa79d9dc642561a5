/**
 * JSON values are stored as text in both dialects (not jsonb): text keeps
 * the caller's key order and any string jsonb would reject (`\u0000`).
 */

/** `undefined` is stored as JSON `null`, the only JSON spelling of "nothing". */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function fromJson<T = unknown>(text: string): T {
  return JSON.parse(text) as T;
}

export function toNullableJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

export function fromNullableJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
