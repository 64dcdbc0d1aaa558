/**
 * What an import statement names, read once per statement, from its text when the text is plain
 * (ASCII names, no comments or continuations inside): every child read through the parser's API
 * costs a call into its WebAssembly, and a file's imports were a sixth of a one-shot scan's tree
 * work. Anything else is read from the tree, with the same result. For a parsed statement the
 * tree says where it is (readImport); a plain module-level import that no rule reads is not
 * parsed at all, and is read from its line alone (readImportLine).
 */
import type { Node } from 'web-tree-sitter';

/** One imported name: `a.b` (`name`, `alias` null), or `a.b as c` (`name` a.b, `alias` c). */
export interface ImportedName {
  /** The dotted name as written. */
  name: string;
  alias: string | null;
  /** The whole item as written (`a.b as c`). */
  text: string;
}

export interface ImportStatement {
  /** Null for a statement read from its text that was not parsed (no rule reads its node). */
  node: Node | null;
  /** `from … import …` (an import_from_statement). */
  from: boolean;
  /** The module of a from-import as written (`..utils`, `torch.cuda`), with its offsets. */
  module: { text: string; start: number; end: number } | null;
  /** The imported names, in order (none for `from m import *`). */
  names: ImportedName[];
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const AS = /[ \t]+as[ \t]+/y;

/** Reads one import statement (`node`, of type `type`), from its text where that is exact. */
export function readImport(source: string, node: Node, type: string): ImportStatement {
  return readImportText(source, node, type) ?? readImportTree(node, type);
}

/**
 * The plain grammar: `import a.b [as c], …` and `from .m import x [as y], …` / `(…)` / `*`,
 * with spaces between tokens (and newlines inside parentheses). Null when the statement is
 * written any other way, or does not end where the tree says.
 */
export function readImportText(source: string, node: Node, type: string): ImportStatement | null {
  const read = readPlainImport(source, node.startIndex, type === 'import_from_statement');
  return read && read.end === node.endIndex
    ? { node, from: read.from, module: read.module, names: read.names }
    : null;
}

/**
 * An import statement read from its text alone, with no tree: `at` is where a statement line of
 * the module starts with its keyword (the lexer and a search found it there, in code). Null
 * unless it is written in the plain grammar and nothing but a comment follows it on its line —
 * then it reads as the tree would read it. (After a `;` the line holds another statement, which
 * the analysis must see where it is: such a line is parsed.)
 */
export function readImportLine(source: string, at: number): ImportStatement | null {
  const read = readPlainImport(source, at, source.startsWith('from', at));
  if (!read) return null;
  let i = read.end;
  while (source[i] === ' ' || source[i] === '\t') i++;
  const next = source[i];
  if (next !== undefined && next !== '\n' && next !== '\r' && next !== '#') return null;
  return { node: null, from: read.from, module: read.module, names: read.names };
}

function readPlainImport(
  source: string,
  from0: number,
  from: boolean,
): (Omit<ImportStatement, 'node'> & { end: number }) | null {
  let at = from0;
  const skip = (re: RegExp) => {
    re.lastIndex = at;
    const m = re.exec(source);
    if (m) at += m[0].length;
    return m;
  };
  const spaces = (newlines: boolean) => {
    while (at < source.length) {
      const k = source.charCodeAt(at);
      if (k === 32 || k === 9 || (newlines && k === 10)) at++;
      else break;
    }
  };
  const word = (w: string) => {
    if (!source.startsWith(w, at)) return false;
    const next = source.charCodeAt(at + w.length);
    if (next !== 32 && next !== 9) return false;
    at += w.length;
    return true;
  };
  const item = (): ImportedName | null => {
    const start = at;
    const name = skip(NAME)?.[0];
    if (!name) return null;
    let alias: string | null = null;
    if (skip(AS)) {
      alias = skip(IDENT)?.[0] ?? null;
      if (!alias) return null;
    }
    return { name, alias, text: source.slice(start, at) };
  };
  /** Items separated by commas (a trailing one allowed, as the grammar does). */
  const list = (newlines: boolean): ImportedName[] | null => {
    const out: ImportedName[] = [];
    for (;;) {
      const it = item();
      if (!it) return out.length ? out : null;
      out.push(it);
      const before = at;
      spaces(newlines);
      if (source[at] !== ',') {
        at = before;
        return out;
      }
      at++;
      spaces(newlines);
    }
  };
  let module: ImportStatement['module'] = null;
  let names: ImportedName[] | null;
  if (!from) {
    if (!word('import')) return null;
    spaces(false);
    names = list(false);
  } else {
    if (!word('from')) return null;
    spaces(false);
    const start = at;
    while (source[at] === '.') at++;
    NAME.lastIndex = at;
    const dotted = NAME.exec(source);
    if (dotted) at += dotted[0].length;
    if (at === start) return null;
    module = { text: source.slice(start, at), start, end: at };
    // `from . import x` and `from .m import x` alike: at least one space before `import`
    const k = source.charCodeAt(at);
    if (k !== 32 && k !== 9) return null;
    spaces(false);
    if (!word('import') && !source.startsWith('import(', at)) return null;
    if (source.startsWith('import(', at)) at += 'import'.length;
    spaces(false);
    if (source[at] === '*') {
      at++;
      names = [];
    } else if (source[at] === '(') {
      at++;
      spaces(true);
      names = list(true);
      spaces(true);
      if (source[at] !== ')') return null;
      at++;
    } else names = list(false);
  }
  return names ? { from, module, names, end: at } : null;
}

/** The same from the tree: for statements the text reader does not take. */
export function readImportTree(node: Node, type: string): ImportStatement {
  const names: ImportedName[] = [];
  for (const n of node.childrenForFieldName('name')) {
    if (!n) continue;
    if (n.type === 'aliased_import')
      names.push({
        name: n.childForFieldName('name')?.text ?? '',
        // '' (not null) when the tree holds no alias: still an aliased item
        alias: n.childForFieldName('alias')?.text ?? '',
        text: n.text,
      });
    else names.push({ name: n.text, alias: null, text: n.text });
  }
  const from = type === 'import_from_statement';
  const m = from ? node.childForFieldName('module_name') : null;
  return {
    node,
    from,
    module: m ? { text: m.text, start: m.startIndex, end: m.endIndex } : null,
    names,
  };
}
