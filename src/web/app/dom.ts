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
