// Measures every function in a source tree with the TypeScript compiler: declarations, methods, constructors,
// accessors, arrows and function expressions, from the first line of the node to its last. Each is named by
// its file (relative to the tree), the name of what holds it (function, method, variable or property; class
// members as Class.member) and, for a function with no name of its own, `<anonymous>` in that holder.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export interface FunctionLength {
  /** `file#name`, e.g. `process/spawner/spawner.ts#Spawner.onHelperExit`. */
  id: string;
  /** `file:line` of its first line. */
  at: string;
  lines: number;
}

function ownName(n: ts.Node): string | undefined {
  if (ts.isConstructorDeclaration(n)) return 'constructor';
  const named = n as ts.Node & { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  const p = n.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    return ts.isIdentifier(p.name) ? p.name.text : undefined;
  return undefined;
}

function isFunction(n: ts.Node): n is ts.FunctionLikeDeclaration {
  return (
    ts.isFunctionDeclaration(n) ||
    ts.isMethodDeclaration(n) ||
    ts.isArrowFunction(n) ||
    ts.isFunctionExpression(n) ||
    ts.isConstructorDeclaration(n) ||
    ts.isGetAccessorDeclaration(n) ||
    ts.isSetAccessorDeclaration(n)
  );
}

function measureFile(file: string, rel: string, out: FunctionLength[]): void {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (n: ts.Node, holder: string[]) => {
    let inner = holder;
    if (isFunction(n)) {
      const own = ownName(n);
      const cls = ts.isClassLike(n.parent) && n.parent.name ? `${n.parent.name.text}.` : '';
      inner = [...holder, own ? `${cls}${own}` : '<anonymous>'];
      const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      out.push({ id: `${rel}#${inner.join('>')}`, at: `${rel}:${first + 1}`, lines: last - first + 1 });
    }
    ts.forEachChild(n, (c) => visit(c, inner));
  };
  visit(sf, []);
}

/** Every function of every .ts file below `root`. */
export function functionLengths(root: string): FunctionLength[] {
  const out: FunctionLength[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts'))
        measureFile(abs, path.relative(root, abs).split(path.sep).join('/'), out);
    }
  };
  walk(root);
  return out;
}
