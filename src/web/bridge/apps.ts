/** Mountable apps: `{mount(container), unmount()}` registered by name. */
import { BridgeError } from './errors.js';

export interface AppDefinition {
  mount(container: Element): void | Promise<void>;
  unmount(): void | Promise<void>;
  description?: string;
  /** CSS selector of the default container (else a fresh `<div data-wu-app>` in body). */
  container?: string;
}

interface AppEntry {
  def: AppDefinition;
  mounted: Element | null;
}

const apps = new Map<string, AppEntry>();

export function app(name: string, def: AppDefinition): () => void {
  apps.set(name, { def, mounted: null });
  return () => apps.delete(name);
}

export function describeApp(name: string) {
  const e = apps.get(name);
  if (!e) return null;
  return {
    name,
    description: e.def.description ?? '',
    mounted: e.mounted !== null,
    container: e.mounted ? selectorOf(e.mounted) : (e.def.container ?? null),
  };
}

function selectorOf(el: Element): string {
  if (el.id) return `#${el.id}`;
  const app = el.getAttribute('data-wu-app');
  return app ? `[data-wu-app="${app}"]` : el.tagName.toLowerCase();
}

export const listApps = () => [...apps.keys()].map((n) => describeApp(n)!);

function entry(name: string): AppEntry {
  const e = apps.get(name);
  if (!e)
    throw new BridgeError(
      'WU_APP_NOT_FOUND',
      `No app '${name}' is registered; call wu_list_apps for the names.`,
    );
  return e;
}

export function mountedContainer(name: string): Element {
  const e = entry(name);
  if (!e.mounted)
    throw new BridgeError(
      'WU_APP_NOT_MOUNTED',
      `App '${name}' is not mounted; mount it with wu_mount_app first.`,
    );
  return e.mounted;
}

export async function mountApp(name: string, container?: string) {
  const e = entry(name);
  if (e.mounted) return { mounted: name, alreadyMounted: true, app: describeApp(name) };
  const selector = container ?? e.def.container;
  let target: Element | null;
  if (selector) {
    target = document.querySelector(selector);
    if (!target)
      throw new BridgeError(
        'WU_ELEMENT_NOT_FOUND',
        `No container matches '${selector}'; give another selector.`,
      );
  } else {
    target = document.createElement('div');
    target.setAttribute('data-wu-app', name);
    document.body.appendChild(target);
  }
  await e.def.mount(target);
  e.mounted = target;
  return { mounted: name, app: describeApp(name) };
}

export async function unmountApp(name: string) {
  const e = entry(name);
  if (!e.mounted) throw new BridgeError('WU_APP_NOT_MOUNTED', `App '${name}' is not mounted.`);
  await e.def.unmount();
  const el = e.mounted;
  e.mounted = null;
  if (el.getAttribute('data-wu-app') === name && el.childNodes.length === 0) el.remove();
  return { unmounted: name, app: describeApp(name) };
}
