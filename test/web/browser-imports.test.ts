/**
 * The browser entry (`src/web/app/`, served as `/ui/*.js`) must load in a
 * browser as plain ESM: every runtime import is a relative module inside the
 * app folder (no bare specifiers, nothing Node-only); type-only imports are
 * erased by tsc and may point anywhere but `node:`. Node globals stay out.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const APP = fileURLToPath(new URL('../../src/web/app/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? files(full) : full.endsWith('.ts') ? [full] : [];
  });
}

interface Import {
  file: string;
  specifier: string;
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
  );
  const found: Import[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      found.push({ file, specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({ file, specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ file, specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('browser entry imports', () => {
  const all = files(APP);

  it('finds the browser modules', () => {
    expect(all.map((f) => relative(APP, f))).toContain('main.ts');
  });

  it('imports at run time only relative modules inside src/web/app, or absolute URLs the server serves', () => {
    const bad = all
      .flatMap(importsOf)
      .filter((i) => !i.typeOnly)
      .filter((i) => {
        if (i.specifier.startsWith('/ui/') || i.specifier === '/bridge.js') return false;
        if (!i.specifier.startsWith('.')) return true;
        const target = resolve(dirname(i.file), i.specifier);
        return !target.startsWith(APP) || !i.specifier.endsWith('.js');
      })
      .map((i) => `${relative(APP, i.file)} imports ${i.specifier}`);
    expect(bad).toEqual([]);
  });

  it('never imports node: builtins, even for types', () => {
    const bad = all
      .flatMap(importsOf)
      .filter((i) => i.specifier.startsWith('node:'))
      .map((i) => `${relative(APP, i.file)} imports ${i.specifier}`);
    expect(bad).toEqual([]);
  });

  it('uses no Node globals', () => {
    const bad = all.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return /\b(process\.|Buffer\b|require\(|__dirname|__filename|global\.)/.test(text)
        ? [relative(APP, file)]
        : [];
    });
    expect(bad).toEqual([]);
  });
});
