import type { Node } from 'web-tree-sitter';
import type { ImportStatement } from './import-statements';

/**
 * What each local name refers to, from the file's imports: `import torch as T` maps T → torch,
 * `from torch.cuda.amp import autocast as ac` maps ac → torch.cuda.amp.autocast.
 */
export function importAliases(statements: ImportStatement[]): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const stmt of statements) {
    if (!stmt.from) {
      for (const { name, alias } of stmt.names) {
        if (alias !== null) {
          if (name && alias) aliases.set(alias, name);
        } else {
          // `import torch.distributed` binds `torch`
          const first = name.split('.')[0]!;
          if (!aliases.has(first)) aliases.set(first, first);
        }
      }
    } else {
      const module = stmt.module?.text;
      if (!module || module.startsWith('.')) continue;
      for (const { name, alias } of stmt.names) {
        if (alias !== null) {
          if (name && alias) aliases.set(alias, `${module}.${name}`);
        } else aliases.set(name, `${module}.${name}`);
      }
    }
  }
  return aliases;
}

/**
 * Names bound by a call instead of an import statement: RLlib's `torch, nn = try_import_torch()`
 * binds torch and torch.nn as `import torch` and `from torch import nn` would; a lazily loaded
 * module (data-juicer's `torch = LazyLoader("torch")`, `lazy_import("torch.distributed")`,
 * `importlib.import_module("torch")`) binds its name as `import torch` would.
 */
export function callBindings(source: string, into: Map<string, string>): void {
  if (source.includes('try_import_torch'))
    for (const m of source.matchAll(
      /^[ \t]*(\w+)[ \t]*,[ \t]*(\w+)[ \t]*=[ \t]*try_import_torch\(/gm,
    )) {
      into.set(m[1]!, 'torch');
      into.set(m[2]!, 'torch.nn');
    }
  if (
    source.includes('LazyLoader(') ||
    source.includes('lazy_import(') ||
    source.includes('import_module(')
  )
    for (const m of source.matchAll(LAZY_BINDING)) if (!into.has(m[1]!)) into.set(m[1]!, m[2]!);
}
const LAZY_BINDING =
  /^[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]+\.)?(?:LazyLoader|lazy_import|import_module)\([ \t]*(?:name[ \t]*=[ \t]*)?["']([A-Za-z_][\w.]*)["'][ \t]*(?:,[^)\n]*)?\)/gm;

/**
 * The dotted name an expression stands for, through the aliases: `T.cuda.is_available` →
 * `torch.cuda.is_available`. Null for anything that is not a plain name chain.
 */
export function canonicalName(node: Node, aliases: Map<string, string>): string | null {
  // down the chain in a loop: it is as deep as the text makes it (a recursion overflowed the
  // stack on `torch.torch.…` 30k deep, and the whole scan with it)
  const attrs: string[] = [];
  let n = node;
  while (n.type === 'attribute') {
    const object = n.childForFieldName('object');
    const attr = n.childForFieldName('attribute');
    if (!object || !attr) return null;
    attrs.push(attr.text);
    n = object;
  }
  if (n.type !== 'identifier') return null;
  const base = aliases.get(n.text) ?? null;
  if (!attrs.length) return base;
  return base ? `${base}.${attrs.reverse().join('.')}` : null;
}

/** `torch.cuda.*` matches `torch.cuda.x` and deeper; a pattern without `*` matches exactly. */
export function nameMatches(pattern: string, name: string): boolean {
  if (pattern.endsWith('.*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}
