/**
 * The one way a screen's form submits: the page does not navigate, the
 * sentences of the last submit are cleared, the fields are read and checked
 * (a refusal says what to fix and sends nothing), the button is disabled
 * while the request runs (a double click does not act twice) and a failure's
 * sentence is shown where the form shows its failures.
 */
import { busy, onOwner } from './dom.js';
import { showError } from './errors.js';

/** What `read` returns to stop a submit: nothing is sent. */
export class Refusal {
  constructor(
    /** The sentence shown where failures go; none: the submit stops silently. */
    readonly problem?: string,
    /** For a failure target that is a context: the context this refusal is shown under. */
    readonly context?: string,
  ) {}
}

/** Stops a submit from `read`, showing `problem` (if any) where the form's failures go. */
export const refuse = (problem?: string, context?: string) => new Refusal(problem, context);

/** The sentence of a failure. */
export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

export interface FormOptions<T> {
  /** The submit button: disabled while `send` runs. */
  button: HTMLButtonElement;
  /** Elements whose text is emptied when a submit begins (last time's status and problem). */
  clear?: readonly HTMLElement[];
  /** Reads and checks the fields before anything is sent. */
  read?: () => T | Refusal;
  /** Sends what `read` returned; what to do on success is part of it. */
  send: (value: T) => Promise<unknown>;
  /**
   * Where a failure (or a refusal's sentence) goes: an element whose text
   * becomes the sentence, a context for the page's alert region
   * (`showError`), or a function given the error and the value read.
   */
  failed: HTMLElement | string | ((error: unknown, value: T | undefined) => void);
  /** Submits from anyone, not only the owner's own gestures (the sign-in form, before there is an owner). */
  anyone?: boolean;
}

/** Wires `el`'s submit as the options say, and returns `el`. */
export function form<F extends HTMLFormElement, T = undefined>(el: F, o: FormOptions<T>): F {
  const fail = (error: unknown, value: T | undefined, context?: string) => {
    if (typeof o.failed === 'function') o.failed(error, value);
    else if (typeof o.failed === 'string') showError(error, context ?? o.failed);
    else o.failed.textContent = messageOf(error);
  };
  const submit = (e: Event) => {
    e.preventDefault();
    for (const c of o.clear ?? []) c.textContent = '';
    const value = o.read ? o.read() : (undefined as T);
    if (value instanceof Refusal) {
      if (value.problem !== undefined) fail(value.problem, undefined, value.context);
      return;
    }
    return busy(o.button, async () => {
      try {
        await o.send(value);
      } catch (err) {
        fail(err, value);
      }
    });
  };
  if (o.anyone) el.addEventListener('submit', (e) => void submit(e));
  else onOwner(el, 'submit', submit);
  return el;
}
