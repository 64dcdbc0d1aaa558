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
 * The dotted name an expression stands for, through the aliases: `T.cuda.is_available` →
 * `torch.cuda.is_available`. Null for anything that is not a plain name chain.
 */
export function canonicalName(node: Node, aliases: Map<string, string>): string | null {
  if (node.type === 'identifier') return aliases.get(node.text) ?? null;
  if (node.type === 'attribute') {
    const object = node.childForFieldName('object');
    const attr = node.childForFieldName('attribute');
    if (!object || !attr) return null;
    const base = canonicalName(object, aliases);
    return base ? `${base}.${attr.text}` : null;
  }
  return null;
}

/** `torch.cuda.*` matches `torch.cuda.x` and deeper; a pattern without `*` matches exactly. */
export function nameMatches(pattern: string, name: string): boolean {
  if (pattern.endsWith('.*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}
