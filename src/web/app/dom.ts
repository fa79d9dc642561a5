/**
 * A tiny element builder. Text always goes in as text nodes (never HTML), so
 * whatever an agent wrote cannot inject markup into the owner's page.
 */
export type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A label wrapping its control, so the control is named by the label text. */
export function field(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', {}, label, control);
}

/** Disables a button while an action runs, so a double click does not act twice. */
export async function busy<T>(
  button: HTMLButtonElement,
  run: () => Promise<T>,
): Promise<T | undefined> {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await run();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/**
 * Keeps a list's children in step with `items` by key: new items get an
 * element, kept ones are updated in place (so a half-made choice in a form
 * survives a live update), gone ones are removed.
 */
export function keyed<T>(
  list: HTMLElement,
  items: readonly T[],
  key: (item: T) => string,
  create: (item: T) => HTMLElement,
  update?: (el: HTMLElement, item: T) => void,
): void {
  const existing = new Map<string, HTMLElement>();
  for (const child of Array.from(list.children))
    if (child instanceof HTMLElement && child.dataset.key) existing.set(child.dataset.key, child);
  let previous: Element | null = null;
  for (const item of items) {
    const k = key(item);
    let el = existing.get(k);
    if (el) {
      existing.delete(k);
      update?.(el, item);
    } else {
      el = create(item);
      el.dataset.key = k;
    }
    const want: Element | null = previous ? previous.nextElementSibling : list.firstElementChild;
    if (want !== el) list.insertBefore(el, want);
    previous = el;
  }
  for (const el of existing.values()) el.remove();
}

/** Labels each cell with its column heading, so tables can stack into cards at phone width (CSS `table.stack`). */
export function labelCells(
  row: HTMLTableRowElement,
  headings: readonly string[],
): HTMLTableRowElement {
  Array.from(row.cells).forEach((cell, i) => {
    const label = headings[i];
    if (label) cell.dataset.label = label;
  });
  return row;
}

/**
 * The owner's own hand (issue 34). An agent may drive this page through the
 * page bridge, but every control that changes the owner's state acts only on
 * the owner's own gesture: `event.isTrusted`, and for the events a browser
 * fires on a script's behalf (the `change` of a checkbox a script clicked,
 * the `submit` of a form a script submitted) the gesture that caused them.
 * Controls made with `onOwner` are also marked `data-wu-owner`, which the
 * bridge refuses to click or type into.
 */
export const OWNER_CONTROL = 'data-wu-owner';

/**
 * The person's input being handled now (its last click or key event); null
 * for a script's, and once its task ends. The reset is a timer, which the
 * browser may run several milliseconds late: a submit is counted only when
 * that input could have caused it (`causedSubmit`), not for being near it.
 */
let personInput: Event | null = null;
let watching = false;
const INPUT_EVENTS = [
  'pointerdown',
  'pointerup',
  'mousedown',
  'mouseup',
  'click',
  'keydown',
  'keyup',
  'input',
  'change',
];

function watchInput(): void {
  if (watching) return;
  watching = true;
  const seen = (e: Event) => {
    // The browser's own input/change after a script's click() is trusted, yet its
    // cause was not: only clicks, keys and untrusted events decide.
    if (e.isTrusted && (e.type === 'input' || e.type === 'change')) return;
    personInput = e.isTrusted ? e : null;
    setTimeout(() => (personInput = null), 0);
  };
  for (const type of INPUT_EVENTS) window.addEventListener(type, seen, { capture: true });
}

/**
 * Whether `e` is the owner's own gesture (never a script's, nor an agent's
 * through the bridge). The browser fires a trusted `submit` for a script's
 * `requestSubmit()` or button `click()`, and a trusted `change` for a
 * script's click on a checkbox or radio: those count only when a person's
 * click or key press caused them. A select's trusted `change` comes only
 * from a person (a script setting its value fires nothing).
 */
export function byOwner(e: Event): boolean {
  if (!e.isTrusted) return false;
  if (e.type === 'submit') return personInput !== null && causedSubmit(personInput, e);
  const t = e.target;
  const toggled = t instanceof HTMLInputElement && (t.type === 'checkbox' || t.type === 'radio');
  return (e.type === 'change' || e.type === 'input') && toggled ? personInput !== null : true;
}

/**
 * Whether the person's `input` is what submitted the form: a click on the
 * submit's own button (the browser names it `submitter`), or Enter in a
 * field of that form. A script's `requestSubmit()` right after the person
 * clicked something else — in a listener of that click, or while the reset
 * timer is late — is not the owner's.
 */
function causedSubmit(input: Event, submit: Event): boolean {
  const at = input.target;
  if (!(at instanceof Node)) return false;
  if (input.type === 'keydown')
    return (
      (input as KeyboardEvent).key === 'Enter' &&
      'form' in at &&
      (at as { form: unknown }).form === submit.target
    );
  const submitter = (submit as SubmitEvent).submitter;
  return input.type === 'click' && submitter !== null && submitter.contains(at);
}

/**
 * Makes `el` one of the owner's controls: `act` runs only for the owner's own
 * gesture; any other event is cancelled (a checkbox stays as it was, a form
 * is not sent) and `refused` may say so.
 *
 * @example
 * onOwner(signOutButton, 'click', () => signOut());
 */
export function onOwner<K extends keyof HTMLElementEventMap>(
  el: HTMLElement,
  type: K,
  act: (e: HTMLElementEventMap[K]) => unknown,
  refused?: (e: HTMLElementEventMap[K]) => void,
): void {
  watchInput();
  markOwner(el);
  el.addEventListener(type, (e) => {
    if (byOwner(e)) {
      void act(e);
      return;
    }
    e.preventDefault();
    e.stopImmediatePropagation();
    refused?.(e);
  });
}

/** Marks a part of the page (an input a decision reads) as the owner's: the bridge never types or clicks there. */
export function markOwner(el: HTMLElement): void {
  el.setAttribute(OWNER_CONTROL, '');
}

/**
 * Keeps a part of the page that belongs to one agent (its request, its grant)
 * from every other agent driving the page; null keeps it from all of them.
 */
export function forAgent<E extends HTMLElement>(el: E, agent: string | null): E {
  if (agent) el.setAttribute('data-wu-agent', agent);
  else el.setAttribute('data-wu-private', '');
  return el;
}
