/**
 * Page interaction: click by selector, text or ref; type into inputs,
 * textareas and contenteditable (submit with `requestSubmit()`); a DOM
 * screenshot rendered through SVG foreignObject into a PNG.
 */
import { BridgeError } from './errors.js';
import {
  brief,
  elementByRef,
  elementByText,
  hiddenFromAgent,
  isEditable,
  isSecretField,
} from './a11y.js';
import { REDACTED } from './redact.js';
import { getPermissions } from './permissions.js';

export interface Target {
  selector?: string | undefined;
  text?: string | undefined;
  ref?: string | undefined;
  /** The agent the relay says is calling (null: none named); parts kept from it are not found. */
  caller?: string | null | undefined;
}

/** Marks a control the page's owner keeps for themselves: an agent never clicks or types into it. */
const OWNER_CONTROL = '[data-wu-owner]';

function query(selector: string): Element | null {
  try {
    return document.querySelector(selector);
  } catch {
    throw new BridgeError('WU_INVALID_SELECTOR', `'${selector}' is not a valid CSS selector.`);
  }
}

function notFound(target: Target): BridgeError {
  return new BridgeError(
    'WU_ELEMENT_NOT_FOUND',
    target.ref !== undefined
      ? `No element has ref '${target.ref}' any more; take a new wu_snapshot.`
      : `No element matches ${target.selector !== undefined ? `selector '${target.selector}'` : `text '${target.text ?? ''}'`}; take a wu_snapshot and use a ref.`,
  );
}

export function findElement(target: Target): Element {
  const caller = target.caller ?? null;
  let el: Element | null = null;
  if (target.ref !== undefined) el = elementByRef(target.ref);
  else if (target.selector !== undefined) el = query(target.selector);
  else if (target.text !== undefined) {
    // Finding by text reads the page: without readDOM it would tell whether a text exists.
    if (!getPermissions().readDOM)
      throw new BridgeError(
        'WU_PERMISSION_DENIED',
        'Finding an element by its text reads the page, which needs readDOM; use a selector.',
      );
    el = elementByText(target.text, caller);
  }
  // What the page keeps from this agent is answered as absent.
  if (!el || hiddenFromAgent(el, caller)) throw notFound(target);
  return el;
}

/** The element, when an agent may act on it: never a control the owner keeps for themselves. */
function actionable(target: Target): Element {
  const el = findElement(target);
  if (el.closest(OWNER_CONTROL))
    throw new BridgeError(
      'WU_PERMISSION_DENIED',
      "This control is the page owner's own: an agent cannot click or type into it. Ask the owner to do it.",
    );
  return el;
}

/** What a click or typing answers about the element: only with readDOM (else success or failure only). */
const described = (el: Element) => (getPermissions().readDOM ? { element: brief(el) } : {});

export function click(target: Target) {
  const el = actionable(target);
  if ((el as HTMLButtonElement).disabled === true || el.getAttribute('aria-disabled') === 'true')
    throw new BridgeError(
      'WU_ELEMENT_DISABLED',
      'The element is disabled; it cannot be clicked now.',
    );
  if (el instanceof HTMLElement) {
    el.scrollIntoView?.({ block: 'center', inline: 'center' });
    const opts = { bubbles: true, cancelable: true, composed: true, view: window };
    el.dispatchEvent(new PointerEvent('pointerdown', opts));
    el.dispatchEvent(new MouseEvent('mousedown', opts));
    el.focus?.();
    el.dispatchEvent(new PointerEvent('pointerup', opts));
    el.dispatchEvent(new MouseEvent('mouseup', opts));
    el.click();
  } else {
    el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, composed: true }));
  }
  return { clicked: true, ...described(el) };
}

const TEXT_INPUTS = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number', '']);

function setNativeValue(el: HTMLInputElement | HTMLTextAreaElement, value: string) {
  // The prototype setter, so frameworks that track the value property see the change.
  const proto =
    el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')?.set?.call(el, value);
}

function key(el: Element, type: 'keydown' | 'keyup', ch: string) {
  el.dispatchEvent(
    new KeyboardEvent(type, { key: ch, bubbles: true, cancelable: true, composed: true }),
  );
}

export interface TypeOptions extends Target {
  text: string;
  clear: boolean;
  submit: boolean;
}

export function type(options: TypeOptions) {
  const el = actionable({ selector: options.selector, ref: options.ref, caller: options.caller });
  const isField =
    el instanceof HTMLTextAreaElement ||
    (el instanceof HTMLInputElement && TEXT_INPUTS.has(el.type));
  const editable = el instanceof HTMLElement && el.isContentEditable;
  if (!isField && !editable)
    throw new BridgeError(
      'WU_NOT_EDITABLE',
      'The element is not a text input, textarea or contenteditable; pick another with wu_snapshot.',
    );
  if (isField && (el.disabled || el.readOnly))
    throw new BridgeError('WU_ELEMENT_DISABLED', 'The field is disabled or read-only.');
  const html = el as HTMLElement;
  html.focus();
  const secret = isSecretField(el);
  if (isField) {
    const field = el;
    if (options.clear && field.value !== '') {
      setNativeValue(field, '');
      field.dispatchEvent(
        new InputEvent('input', {
          bubbles: true,
          composed: true,
          inputType: 'deleteContentBackward',
        }),
      );
    }
    for (const ch of options.text) {
      key(field, 'keydown', ch);
      setNativeValue(field, field.value + ch);
      field.dispatchEvent(
        new InputEvent('input', {
          bubbles: true,
          composed: true,
          data: ch,
          inputType: 'insertText',
        }),
      );
      key(field, 'keyup', ch);
    }
    field.dispatchEvent(new Event('change', { bubbles: true }));
  } else {
    const root = isEditable(html)
      ? html
      : ((html.closest('[contenteditable]') as HTMLElement | null) ?? html);
    if (options.clear) root.textContent = '';
    const selection = getSelection();
    const range = document.createRange();
    range.selectNodeContents(root);
    range.collapse(false);
    selection?.removeAllRanges();
    selection?.addRange(range);
    // execCommand fires the same beforeinput/input events a user's typing does.
    const inserted = document.execCommand?.('insertText', false, options.text) === true;
    if (!inserted) {
      root.append(document.createTextNode(options.text));
      root.dispatchEvent(
        new InputEvent('input', {
          bubbles: true,
          composed: true,
          data: options.text,
          inputType: 'insertText',
        }),
      );
    }
  }
  let submitted = false;
  if (options.submit) {
    const form = (isField ? el.form : null) ?? el.closest('form');
    if (form) {
      if (typeof form.requestSubmit === 'function') form.requestSubmit();
      else form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
      submitted = true;
    } else {
      key(el, 'keydown', 'Enter');
      key(el, 'keyup', 'Enter');
    }
  }
  const answer = { typed: options.text.length, cleared: options.clear, submitted };
  if (!getPermissions().readDOM) return answer;
  const value = isField ? el.value : (el as HTMLElement).innerText;
  return { ...answer, value: secret ? REDACTED : value, element: brief(el) };
}

const MAX_SIDE = 4096;
const MAX_STYLED = 3000;

const NOT_RENDERED = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'LINK', 'META']);

function inlineStyle(src: Element, copy: Element) {
  const cs = getComputedStyle(src);
  let text = '';
  for (let j = 0; j < cs.length; j++) {
    const prop = cs.item(j);
    text += `${prop}:${cs.getPropertyValue(prop)};`;
  }
  copy.setAttribute('style', text);
}

/**
 * A detached copy of what `src` renders, computed styles inlined (the SVG
 * image has no stylesheets): open shadow roots flattened with their slots
 * filled, custom elements as plain boxes (no constructors run), form values
 * kept (never a password), canvases as images.
 */
function renderCopy(src: Node, budget: { left: number; caller: string | null }): Node | null {
  if (src.nodeType === Node.TEXT_NODE) return document.createTextNode(src.textContent ?? '');
  if (!(src instanceof Element) || NOT_RENDERED.has(src.tagName)) return null;
  if (hiddenFromAgent(src, budget.caller)) return null;
  if (src instanceof HTMLSlotElement) {
    const fragment = document.createDocumentFragment();
    const assigned = src.assignedNodes({ flatten: true });
    for (const n of assigned.length > 0 ? assigned : [...src.childNodes]) {
      const r = renderCopy(n, budget);
      if (r) fragment.appendChild(r);
    }
    return fragment;
  }
  let copy: Element;
  if (src instanceof HTMLCanvasElement) {
    copy = document.createElement('img');
    try {
      copy.setAttribute('src', src.toDataURL());
    } catch {
      // A tainted canvas renders as an empty box.
    }
  } else if (src.tagName.includes('-')) copy = document.createElement('div');
  else copy = src.cloneNode(false) as Element;
  if (budget.left-- > 0) inlineStyle(src, copy);
  if (src instanceof HTMLInputElement) {
    copy.setAttribute('value', isSecretField(src) ? '' : src.value);
    if (src.checked) copy.setAttribute('checked', '');
  }
  if (src instanceof HTMLTextAreaElement) {
    copy.textContent = isSecretField(src) ? '' : src.value;
    return copy;
  }
  if (src instanceof HTMLElement && isEditable(src) && isSecretField(src)) return copy;
  for (const child of src.shadowRoot ? src.shadowRoot.childNodes : src.childNodes) {
    const r = renderCopy(child, budget);
    if (r) copy.appendChild(r);
  }
  return copy;
}

export async function screenshot(options: {
  selector?: string | undefined;
  quality: number;
  caller?: string | null | undefined;
}) {
  const caller = options.caller ?? null;
  const el =
    options.selector !== undefined
      ? findElement({ selector: options.selector, caller })
      : document.documentElement;
  const rect = el.getBoundingClientRect();
  const isRoot = el === document.documentElement;
  const width = Math.min(
    MAX_SIDE,
    Math.max(1, Math.ceil(isRoot ? document.documentElement.clientWidth : rect.width)),
  );
  const height = Math.min(
    MAX_SIDE,
    Math.max(1, Math.ceil(isRoot ? document.documentElement.clientHeight : rect.height)),
  );
  const clone = renderCopy(isRoot ? document.body : el, { left: MAX_STYLED, caller }) as Element;
  const xhtml = new XMLSerializer().serializeToString(clone);
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<foreignObject x="0" y="0" width="100%" height="100%">` +
    `<div xmlns="http://www.w3.org/1999/xhtml" style="width:${width}px;height:${height}px;overflow:hidden;background:${getComputedStyle(document.body).backgroundColor || 'white'}">${xhtml}</div>` +
    `</foreignObject></svg>`;
  const image = new Image();
  image.decoding = 'sync';
  const loaded = new Promise<void>((resolve, reject) => {
    image.onload = () => resolve();
    image.onerror = () =>
      reject(
        new BridgeError('WU_SCREENSHOT_FAILED', 'The page could not be rendered to an image.'),
      );
  });
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await loaded;
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new BridgeError('WU_SCREENSHOT_FAILED', 'No 2D canvas is available.');
  ctx.fillStyle = 'white';
  ctx.fillRect(0, 0, width, height);
  ctx.drawImage(image, 0, 0);
  let url: string;
  try {
    // PNG is lossless: quality is accepted for compatibility and does not change the bytes.
    url = canvas.toDataURL('image/png', options.quality);
  } catch {
    throw new BridgeError(
      'WU_SCREENSHOT_FAILED',
      'The browser refused to export the rendering (tainted canvas).',
    );
  }
  return {
    selector: options.selector ?? null,
    width,
    height,
    quality: options.quality,
    mimeType: 'image/png',
    timestamp: Date.now(),
    image: { data: url.slice(url.indexOf(',') + 1), mimeType: 'image/png' },
  };
}
