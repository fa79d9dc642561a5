/** Shows failures in the page's alert region; each can be dismissed. */
import { ApiError } from './api.js';
import { h } from './dom.js';

let region: HTMLElement | null = null;

export function initErrors(el: HTMLElement): void {
  region = el;
}

export function showError(error: unknown, context?: string): void {
  // A 401 means the session ended: the sign-in screen says so (main.ts), not an error line.
  if (error instanceof ApiError && error.status === 401) return;
  const message = error instanceof Error ? error.message : String(error);
  const text = context ? `${context}: ${message}` : message;
  if (!region) return;
  // The same message twice stays one line.
  for (const p of region.querySelectorAll('p')) if (p.textContent === text) return;
  const item = h(
    'div',
    { class: 'error' },
    h('p', {}, text),
    h(
      'button',
      { type: 'button', 'aria-label': 'Dismiss error', onclick: () => item.remove() },
      '×',
    ),
  );
  region.append(item);
}

export function clearErrors(): void {
  region?.replaceChildren();
}
