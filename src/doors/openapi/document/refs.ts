/**
 * `$ref` resolution over a loaded document set. Schemas are resolved deeply;
 * a `$ref` back to a schema that is already being expanded (a cycle) is cut
 * and named — `{"x-cycle": "#/components/schemas/Node"}` — never expanded
 * forever. Expansions that do not depend on the path taken are memoised, so
 * large documents (Asana, Discord) resolve in linear time.
 */
import { isObject } from '../../../kernel/index.js';
import { DocumentError, pointerOf, unescapeToken } from './errors.js';
import { absoluteUri, type DocumentSet, type LoadedDocument } from './load.js';

export interface Location {
  readonly doc: LoadedDocument;
  readonly pointer: string;
}

export type Json = unknown;
type Obj = Record<string, unknown>;

/** Keywords whose value is one schema. */
const ONE = [
  'items',
  'additionalProperties',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'additionalItems',
  'unevaluatedItems',
  'unevaluatedProperties',
];
/** Keywords whose value is an array of schemas. */
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to schemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas'];

export const CYCLE = 'x-cycle';

interface Resolved {
  value: Json;
  /** Refs cut somewhere inside; empty means the value does not depend on the path taken. */
  cuts: readonly string[];
}

export class Resolver {
  private readonly memo = new Map<string, Json>();
  private readonly names = new WeakMap<object, string>();

  constructor(private readonly set: DocumentSet) {}

  get main(): LoadedDocument {
    return this.set.main;
  }

  /** The node a `$ref` written at `loc` points to. */
  target(ref: string, loc: Location): { node: Json; loc: Location; key: string } {
    const hash = ref.indexOf('#');
    const file = hash < 0 ? ref : ref.slice(0, hash);
    const fragment = hash < 0 ? '' : ref.slice(hash + 1);
    const doc = file === '' ? loc.doc : this.set.all.get(absoluteUri(file, loc.doc.uri));
    if (!doc)
      throw new DocumentError(
        loc.doc.label,
        loc.pointer,
        `$ref '${ref}' points to a document that was not loaded`,
      );
    let pointer: string;
    try {
      pointer = decodeURIComponent(fragment);
    } catch {
      throw new DocumentError(
        loc.doc.label,
        loc.pointer,
        `$ref '${ref}' is not a valid URI fragment`,
      );
    }
    if (pointer !== '' && !pointer.startsWith('/'))
      throw new DocumentError(loc.doc.label, loc.pointer, `$ref '${ref}' is not a JSON pointer`);
    let node: Json = doc.root;
    for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
      const token = unescapeToken(raw);
      node = Array.isArray(node) ? node[Number(token)] : isObject(node) ? node[token] : undefined;
      if (node === undefined)
        throw new DocumentError(loc.doc.label, loc.pointer, `$ref '${ref}' points to nothing`);
    }
    return { node, loc: { doc, pointer }, key: `${doc.uri}#${pointer}` };
  }

  /** Follows `$ref` chains of a non-schema object (parameter, request body, response, path item). */
  deref(node: Json, loc: Location): { node: Json; loc: Location } {
    const seen = new Set<string>();
    while (isObject(node) && typeof node.$ref === 'string') {
      const t = this.target(node.$ref, loc);
      if (seen.has(t.key))
        throw new DocumentError(loc.doc.label, loc.pointer, `$ref '${node.$ref}' refers to itself`);
      seen.add(t.key);
      node = t.node;
      loc = t.loc;
    }
    return { node, loc };
  }

  /** How a `$ref` is shown: local refs as written, others with their document. */
  private shown(key: string): string {
    const prefix = `${this.set.main.uri}#`;
    return key.startsWith(prefix) ? `#${key.slice(prefix.length)}` : key;
  }

  /** The component name a resolved schema came from (`Pet`), if any. */
  nameOf(schema: Json): string | undefined {
    return isObject(schema) ? this.names.get(schema) : undefined;
  }

  /** A schema with every `$ref` resolved and cycles cut. */
  schema(node: Json, loc: Location): Json {
    return this.resolve(node, loc, []).value;
  }

  private resolve(node: Json, loc: Location, stack: string[]): Resolved {
    if (Array.isArray(node)) return { value: node, cuts: [] };
    if (!isObject(node)) return { value: node, cuts: [] };
    if (typeof node.$ref === 'string') return this.resolveRef(node, loc, stack);
    let cuts: string[] = [];
    const out: Obj = {};
    for (const [key, value] of Object.entries(node)) {
      const at = pointerOf(loc.pointer, key);
      if (ONE.includes(key) && isObject(value)) {
        const r = this.resolve(value, { doc: loc.doc, pointer: at }, stack);
        out[key] = r.value;
        if (r.cuts.length) cuts = cuts.concat(r.cuts);
      } else if ((MANY.includes(key) || key === 'items') && Array.isArray(value)) {
        out[key] = value.map((v, i) => {
          const r = this.resolve(v, { doc: loc.doc, pointer: pointerOf(at, i) }, stack);
          if (r.cuts.length) cuts = cuts.concat(r.cuts);
          return r.value;
        });
      } else if (MAP.includes(key) && isObject(value)) {
        const map: Obj = {};
        for (const [name, sub] of Object.entries(value)) {
          const r = this.resolve(sub, { doc: loc.doc, pointer: pointerOf(at, name) }, stack);
          map[name] = r.value;
          if (r.cuts.length) cuts = cuts.concat(r.cuts);
        }
        out[key] = map;
      } else {
        out[key] = value;
      }
    }
    return { value: out, cuts };
  }

  private resolveRef(node: Obj, loc: Location, stack: string[]): Resolved {
    const t = this.target(node.$ref as string, loc);
    const siblings = Object.entries(node).filter(
      ([k]) => k !== '$ref' && k !== 'description' && k !== 'summary' && k !== 'title',
    );
    let inner: Resolved;
    if (stack.includes(t.key)) {
      inner = { value: { [CYCLE]: this.shown(t.key) }, cuts: [t.key] };
    } else if (this.memo.has(t.key)) {
      inner = { value: this.memo.get(t.key), cuts: [] };
    } else {
      stack.push(t.key);
      const r = this.resolve(t.node, t.loc, stack);
      stack.pop();
      const cuts = r.cuts.filter((c) => c !== t.key);
      // Only its own cycle inside: the expansion is the same wherever it is reached from.
      if (cuts.length === 0) this.memo.set(t.key, r.value);
      const name = t.loc.pointer.split('/').pop();
      if (isObject(r.value) && name && !this.names.has(r.value))
        this.names.set(r.value, unescapeToken(name));
      inner = { value: r.value, cuts };
    }
    if (siblings.length === 0) return inner;
    // OpenAPI 3.1: keywords beside a $ref apply too.
    const rest = this.resolve(Object.fromEntries(siblings), loc, stack);
    return { value: { allOf: [inner.value, rest.value] }, cuts: [...inner.cuts, ...rest.cuts] };
  }
}
