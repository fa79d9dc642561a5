/**
 * A real accessibility tree (spec/page.md "Doing better"): roles (explicit or
 * implicit), accessible names, states, open shadow roots, and a stable `ref`
 * per element (the same element keeps its ref across snapshots) that click
 * and type accept. Bounded in nodes; says so when cut.
 */
import { isSecretName, REDACTED } from './redact.js';

export interface A11yNode {
  ref?: string;
  role: string;
  name?: string;
  level?: number;
  value?: string;
  checked?: boolean | 'mixed';
  disabled?: boolean;
  expanded?: boolean;
  selected?: boolean;
  required?: boolean;
  focused?: boolean;
  children?: A11yNode[];
}

const refs = new WeakMap<Element, string>();
const byRef = new Map<string, WeakRef<Element>>();
let nextRef = 1;

export function refOf(el: Element): string {
  let ref = refs.get(el);
  if (!ref) {
    ref = `e${nextRef++}`;
    refs.set(el, ref);
    byRef.set(ref, new WeakRef(el));
  }
  return ref;
}

export function elementByRef(ref: string): Element | null {
  const el = byRef.get(ref)?.deref() ?? null;
  return el && el.isConnected ? el : null;
}

const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE']);
const INPUT_ROLES: Record<string, string> = {
  button: 'button',
  submit: 'button',
  reset: 'button',
  image: 'button',
  checkbox: 'checkbox',
  radio: 'radio',
  range: 'slider',
  number: 'spinbutton',
  search: 'searchbox',
};
const TAG_ROLES: Record<string, string> = {
  BUTTON: 'button',
  SUMMARY: 'button',
  TEXTAREA: 'textbox',
  OPTION: 'option',
  NAV: 'navigation',
  MAIN: 'main',
  HEADER: 'banner',
  FOOTER: 'contentinfo',
  ASIDE: 'complementary',
  FORM: 'form',
  ARTICLE: 'article',
  UL: 'list',
  OL: 'list',
  LI: 'listitem',
  TABLE: 'table',
  TR: 'row',
  TH: 'columnheader',
  TD: 'cell',
  DIALOG: 'dialog',
  FIELDSET: 'group',
  DETAILS: 'group',
  P: 'paragraph',
  PROGRESS: 'progressbar',
  LABEL: 'label',
};

export function roleOf(el: Element): string | null {
  const explicit = el.getAttribute('role')?.trim().split(/\s+/)[0];
  if (explicit) return explicit === 'none' ? 'presentation' : explicit;
  const tag = el.tagName;
  if (tag === 'A' || tag === 'AREA') return el.hasAttribute('href') ? 'link' : null;
  if (tag === 'INPUT') {
    const type = (el as HTMLInputElement).type;
    if (type === 'hidden') return null;
    return INPUT_ROLES[type] ?? 'textbox';
  }
  if (tag === 'SELECT') {
    const s = el as HTMLSelectElement;
    return s.multiple || s.size > 1 ? 'listbox' : 'combobox';
  }
  if (/^H[1-6]$/.test(tag)) return 'heading';
  if (tag === 'IMG') return el.getAttribute('alt') === '' ? 'presentation' : 'img';
  if (tag === 'SECTION')
    return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
  if (isEditable(el)) return 'textbox';
  return TAG_ROLES[tag] ?? null;
}

export function isEditable(el: Element): boolean {
  return (
    el instanceof HTMLElement &&
    el.isContentEditable &&
    !(el.parentElement?.isContentEditable ?? false)
  );
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const cap = (s: string) => (s.length > 200 ? `${s.slice(0, 199)}…` : s);

/** Controls whose content is a value, not text: never part of another element's name. */
const VALUE_HOLDERS = 'select, textarea, [contenteditable]';

function textOf(el: Element): string {
  if (!el.querySelector(VALUE_HOLDERS))
    return collapse((el as HTMLElement).innerText ?? el.textContent ?? '');
  // A label wrapping a select or an editable region would otherwise be named by its value.
  const copy = el.cloneNode(true) as Element;
  for (const holder of copy.querySelectorAll(VALUE_HOLDERS)) holder.remove();
  return collapse(copy.textContent ?? '');
}

const NAME_FROM_CONTENT = new Set([
  'button',
  'link',
  'heading',
  'option',
  'listitem',
  'cell',
  'columnheader',
  'checkbox',
  'radio',
  'tab',
  'menuitem',
  'treeitem',
  'switch',
  'label',
  'paragraph',
  'row',
]);

export function nameOf(el: Element): string {
  const root = el.getRootNode() as Document | ShadowRoot;
  const labelledby = el.getAttribute('aria-labelledby');
  if (labelledby) {
    const text = labelledby
      .split(/\s+/)
      .map((id) => root.getElementById?.(id) ?? document.getElementById(id))
      .filter((x): x is HTMLElement => x !== null)
      .map(textOf)
      .join(' ');
    if (text) return cap(text);
  }
  const label = el.getAttribute('aria-label');
  if (label?.trim()) return cap(collapse(label));
  if (
    el instanceof HTMLInputElement ||
    el instanceof HTMLTextAreaElement ||
    el instanceof HTMLSelectElement
  ) {
    const labels = el.labels ? [...el.labels].map(textOf).join(' ') : '';
    if (labels) return cap(labels);
    if (el instanceof HTMLInputElement && ['button', 'submit', 'reset'].includes(el.type))
      return cap(
        el.value || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : ''),
      );
    const placeholder = el.getAttribute('placeholder');
    if (placeholder) return cap(placeholder);
  }
  if (el instanceof HTMLImageElement) return cap(el.alt || el.title || '');
  const role = roleOf(el);
  if (role && NAME_FROM_CONTENT.has(role)) {
    const t = textOf(el);
    if (t) return cap(t);
  }
  if (el instanceof HTMLElement && el.isContentEditable) {
    const ph = el.getAttribute('aria-placeholder') ?? el.getAttribute('data-placeholder');
    if (ph) return cap(ph);
  }
  return cap(el.getAttribute('title') ?? '');
}

function hidden(el: Element): boolean {
  if (el.getAttribute('aria-hidden') === 'true' || (el as HTMLElement).hidden) return true;
  const style = getComputedStyle(el);
  return style.display === 'none' || style.visibility === 'hidden';
}

function deepActive(): Element | null {
  let a: Element | null = document.activeElement;
  while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
  return a;
}

/** `autocomplete` tokens that name a secret: any password, a payment card's fields, a one-time code. */
const SECRET_AUTOCOMPLETE = /(^|\s)(\S*password|cc-\S+|one-time-code)(\s|$)/i;

/**
 * Whether a form control or editable region holds a secret, by what it means
 * rather than how it shows: `type=password`, a secret `autocomplete`, a
 * secret-named `name` or `id`, or a label that names a secret ("Password").
 */
export function isSecretField(el: Element): boolean {
  if (el instanceof HTMLInputElement && el.type === 'password') return true;
  const autocomplete = el.getAttribute('autocomplete');
  if (autocomplete && SECRET_AUTOCOMPLETE.test(autocomplete)) return true;
  const name = el.getAttribute('name');
  if ((name && isSecretName(name)) || (el.id && isSecretName(el.id))) return true;
  const label = nameOf(el);
  return label !== '' && isSecretName(label.replace(/\s+/g, '_'));
}

function valueOf(el: Element): string | undefined {
  let value: string | undefined;
  if (el instanceof HTMLInputElement) {
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image'].includes(el.type))
      return undefined;
    value = el.value;
  } else if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) value = el.value;
  else if (el instanceof HTMLElement && el.isContentEditable && isEditable(el))
    value = collapse(el.innerText);
  if (value === undefined) return undefined;
  return value !== '' && isSecretField(el) ? REDACTED : value;
}

/**
 * Whether the page keeps an element from the calling agent: inside
 * `data-wu-private`, or inside `data-wu-agent` naming another agent (the
 * relay names the caller; an unnamed caller sees no agent's own parts).
 */
export function hiddenFromAgent(el: Element, caller: string | null): boolean {
  if (el.closest('[data-wu-private]')) return true;
  const mine = el.closest('[data-wu-agent]');
  return mine !== null && (caller === null || mine.getAttribute('data-wu-agent') !== caller);
}

function describe(el: Element, role: string): A11yNode {
  const node: A11yNode = { ref: refOf(el), role };
  const name = nameOf(el);
  if (name) node.name = name;
  if (role === 'heading')
    node.level = Number(el.getAttribute('aria-level') ?? el.tagName.slice(1)) || 2;
  const value = valueOf(el);
  if (value !== undefined) node.value = cap(value);
  if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio'))
    node.checked = el.indeterminate ? 'mixed' : el.checked;
  else if (el.hasAttribute('aria-checked'))
    node.checked =
      el.getAttribute('aria-checked') === 'mixed'
        ? 'mixed'
        : el.getAttribute('aria-checked') === 'true';
  if ((el as HTMLButtonElement).disabled === true || el.getAttribute('aria-disabled') === 'true')
    node.disabled = true;
  if (el.hasAttribute('aria-expanded')) node.expanded = el.getAttribute('aria-expanded') === 'true';
  else if (el.tagName === 'SUMMARY' && el.parentElement instanceof HTMLDetailsElement)
    node.expanded = el.parentElement.open;
  if (el instanceof HTMLOptionElement) node.selected = el.selected;
  else if (el.hasAttribute('aria-selected'))
    node.selected = el.getAttribute('aria-selected') === 'true';
  if ((el as HTMLInputElement).required === true || el.getAttribute('aria-required') === 'true')
    node.required = true;
  if (deepActive() === el) node.focused = true;
  return node;
}

/** Children in the flat tree: shadow root content, slotted nodes, light children. */
function childNodesOf(el: Element | ShadowRoot): Node[] {
  if (el instanceof HTMLSlotElement) {
    const assigned = el.assignedNodes({ flatten: true });
    return assigned.length > 0 ? assigned : [...el.childNodes];
  }
  if (el instanceof Element && el.shadowRoot) return [...el.shadowRoot.childNodes];
  return [...el.childNodes];
}

const TEXT_IN_NAME = new Set([...NAME_FROM_CONTENT, 'textbox', 'img']);

export interface SnapshotResult {
  tree: A11yNode[];
  nodeCount: number;
  truncated: boolean;
  maxNodes: number;
  /** Set when the tree was cut at `maxChars` characters of JSON. */
  maxChars?: number;
}

/** JSON characters a node adds to the tree, its children aside (plus the array and key around them). */
const sizeOf = (node: A11yNode) => JSON.stringify({ ...node, children: undefined }).length + 16;

/**
 * The accessibility tree under `root`, at most `maxNodes` nodes and about
 * `maxChars` characters of JSON (then `truncated: true`), in document order.
 */
export function snapshot(
  root: Element,
  maxNodes = 1500,
  maxChars = Infinity,
  caller: string | null = null,
): SnapshotResult {
  let count = 0;
  let chars = 0;
  let truncated = false;
  let cutByChars = false;
  const full = () => {
    if (count >= maxNodes) truncated = true;
    return truncated;
  };
  /** Counts a node in, or says the budget is spent. */
  const admit = (node: A11yNode) => {
    const size = sizeOf(node);
    if (chars + size > maxChars) {
      truncated = true;
      cutByChars = true;
      return false;
    }
    chars += size;
    count++;
    return true;
  };
  const walk = (node: Node, out: A11yNode[]) => {
    if (full()) return;
    if (node.nodeType === Node.TEXT_NODE) {
      const text = collapse(node.textContent ?? '');
      if (text) {
        const leaf: A11yNode = { role: 'text', name: cap(text) };
        if (admit(leaf)) out.push(leaf);
      }
      return;
    }
    if (!(node instanceof Element) || SKIP.has(node.tagName) || hidden(node)) return;
    if (hiddenFromAgent(node, caller)) return;
    const role = roleOf(node);
    if (role === null || role === 'presentation' || role === 'generic' || role === 'none') {
      for (const c of childNodesOf(node)) walk(c, out);
      return;
    }
    const described = describe(node, role);
    if (!admit(described)) return;
    let kids: A11yNode[] = [];
    // A secret field's content is its value: never walked into (options, text, markup).
    if (!(described.value === REDACTED && isSecretField(node)))
      for (const c of childNodesOf(node)) walk(c, kids);
    // The name already carries the text; keep only element children (links in a list item…).
    if (described.name && TEXT_IN_NAME.has(role)) kids = kids.filter((k) => k.role !== 'text');
    if (kids.length > 0) described.children = kids;
    out.push(described);
  };
  const tree: A11yNode[] = [];
  walk(root, tree);
  return {
    tree,
    nodeCount: count,
    truncated,
    maxNodes,
    ...(cutByChars ? { maxChars } : {}),
  };
}

/** Every element in the document, shadow roots included. */
export function* allElements(root: Document | ShadowRoot | Element = document): Generator<Element> {
  const stack: (Document | ShadowRoot | Element)[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node instanceof Element) {
      yield node;
      if (node.shadowRoot) stack.push(node.shadowRoot);
    }
    const children = node instanceof Document ? [node.documentElement] : [...node.children];
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

const CLICKABLE =
  'a[href],button,input[type=button],input[type=submit],input[type=reset],input[type=checkbox],input[type=radio],summary,[role=button],[role=link],[role=menuitem],[role=tab],[role=checkbox],[onclick]';

/** The element whose accessible name or text matches `text`: exact first, then containing; clickable ones preferred. */
export function elementByText(text: string, caller: string | null = null): Element | null {
  const wanted = collapse(text).toLowerCase();
  let exact: Element | null = null;
  let partial: Element | null = null;
  let exactAny: Element | null = null;
  for (const el of allElements()) {
    if (SKIP.has(el.tagName) || !(el instanceof HTMLElement)) continue;
    if (hiddenFromAgent(el, caller)) continue;
    const clickable = el.matches(CLICKABLE);
    const name = (nameOf(el) || textOf(el)).toLowerCase();
    if (!name) continue;
    if (clickable && name === wanted && !hidden(el)) {
      exact = el;
      break;
    }
    if (clickable && !partial && name.includes(wanted) && !hidden(el)) partial = el;
    if (!exactAny && textOf(el).toLowerCase() === wanted && el.children.length === 0 && !hidden(el))
      exactAny = el;
  }
  return exact ?? partial ?? exactAny;
}

/** A short description of an element for tool results. */
export function brief(el: Element) {
  const role = roleOf(el);
  return {
    ref: refOf(el),
    tag: el.tagName.toLowerCase(),
    role: role ?? 'generic',
    name: nameOf(el),
  };
}
