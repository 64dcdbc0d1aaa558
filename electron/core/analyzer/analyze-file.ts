import type { Node, Parser } from 'web-tree-sitter';
import type { CodeEdit, CodeFinding, Language } from '../../../shared/api';
import { canonicalName, importAliases, nameMatches } from './names';
import type { Rule } from './rules';

export type Edit = CodeEdit;
export type Finding = CodeFinding;

export interface FileAnalysis {
  findings: Finding[];
  /** The file imports torch (so `import torch_npu` belongs in it). */
  importsTorch: boolean;
  /** `if __name__ == "__main__":` at the top level: an entry point. */
  entryPoint: boolean;
  parseErrors: boolean;
}

type RuleOf<K extends Rule['match']['kind']> = Rule & {
  match: Extract<Rule['match'], { kind: K }>;
};

/** The rules sorted by how they match, plus the cheap text searches that find candidates. */
interface Compiled {
  strings: { r: RuleOf<'string'>; re: RegExp }[];
  stringHint: RegExp | null;
  methods: RuleOf<'method'>[];
  attributes: RuleOf<'attribute'>[];
  memberHint: RegExp | null;
  keywords: RuleOf<'keyword'>[];
  keywordHint: RegExp | null;
  references: RuleOf<'reference'>[];
  calls: RuleOf<'call'>[];
  imports: RuleOf<'import'>[];
  /** First segments of every name a reference or call rule knows (torch, apex, nvtx…). */
  roots: Set<string>;
  /** Every name pattern of the reference and call rules. */
  patterns: string[];
  chainHints: Map<string, RegExp | null>;
}

const compiledCache = new WeakMap<Rule[], Compiled>();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compile(rules: Rule[]): Compiled {
  const hit = compiledCache.get(rules);
  if (hit) return hit;
  const of = <K extends Rule['match']['kind']>(kind: K) =>
    rules.filter((r) => r.match.kind === kind) as RuleOf<K>[];
  const strings = of('string').map((r) => ({ r, re: new RegExp(r.match.regex) }));
  const methods = of('method');
  const attributes = of('attribute');
  const keywords = of('keyword');
  const references = of('reference');
  const calls = of('call');
  const members = [...new Set([...methods, ...attributes].map((r) => r.match.name))];
  const keywordNames = [...new Set(keywords.map((r) => r.match.name))];
  const patterns = [
    ...new Set([...references, ...calls].flatMap((r) => r.match.names as string[])),
  ];
  const c: Compiled = {
    strings,
    // anchors dropped: the hint finds the text anywhere, the rule's own regex then decides
    stringHint: strings.length
      ? new RegExp(
          strings.map((s) => `(?:${s.r.match.regex.replace(/\^|\$/g, '')})`).join('|'),
          'g',
        )
      : null,
    methods,
    attributes,
    memberHint: members.length
      ? new RegExp(`\\.\\s*(?:${members.map(escape).join('|')})\\b`, 'g')
      : null,
    keywords,
    keywordHint: keywordNames.length
      ? new RegExp(`\\b(?:${keywordNames.map(escape).join('|')})\\s*=`, 'g')
      : null,
    references,
    calls,
    imports: of('import'),
    roots: new Set(patterns.map((n) => n.split('.')[0]!)),
    patterns,
    chainHints: new Map(),
  };
  compiledCache.set(rules, c);
  return c;
}

const STRING_CONTENT = /^(?:[rRbBuUfF]{0,2})(['"]{1,3})([\s\S]*)\1$/;

/**
 * The text inside a string literal's quotes and where each piece starts. In an f-string the
 * interpolations read as "0", so f"cuda:{rank}" reads as "cuda:0"; edits only touch literal text.
 */
function stringContent(
  node: Node,
): { value: string; pieces: { text: string; offset: number }[] } | null {
  if (node.type !== 'string') return null;
  const parts = node.namedChildren.filter(
    (c): c is Node => !!c && (c.type === 'string_content' || c.type === 'interpolation'),
  );
  if (!parts.length) {
    const m = STRING_CONTENT.exec(node.text);
    return m ? { value: m[2]!, pieces: [] } : null;
  }
  return {
    value: parts.map((p) => (p.type === 'interpolation' ? '0' : p.text)).join(''),
    pieces: parts
      .filter((p) => p.type === 'string_content')
      .map((p) => ({ text: p.text, offset: p.startIndex })),
  };
}

const IMPORT_PARENTS = new Set([
  'import_statement',
  'import_from_statement',
  'dotted_name',
  'aliased_import',
]);

const IMPORT_HINT = /^[ \t]*(?:import|from)[ \t]/gm;

/** The most specific reference rule for a dotted name (longest matching pattern wins). */
function bestReference(rules: RuleOf<'reference'>[], name: string) {
  let best: { r: RuleOf<'reference'>; p: string } | undefined;
  for (const r of rules) {
    const p = r.match.names.find((n) => nameMatches(n, name));
    if (!p || (r.match.except ?? []).some((e) => nameMatches(e, name))) continue;
    if (!best || p.length > best.p.length) best = { r, p };
  }
  return best;
}

/** Whitespace, or a line continuation, between the segments of a dotted name. */
const GAP = String.raw`(?:\s|\\\n)*`;

/**
 * Where an imported name starts a chain some rule can match: `torch` only as `torch.cuda…`,
 * `torch.backends…` and the like, `nn` (torch.nn) only as `nn.functional.scaled_dot_product_attention`,
 * `cuda` (from torch) anywhere. So ordinary model code (`nn.Linear`, `F.relu`, `dist.all_reduce`)
 * never becomes a candidate, which keeps the tree work to the places that matter.
 */
function chainHint(c: Compiled, aliases: Map<string, string>): RegExp | null {
  // files of one project import alike: one regex per distinct set of imports
  const key = [...aliases].join(';');
  const hit = c.chainHints.get(key);
  if (hit !== undefined) return hit;
  if (c.chainHints.size > 500) c.chainHints.clear();
  const alternatives: string[] = [];
  for (const [local, full] of aliases) {
    if (!c.roots.has(full.split('.')[0]!)) continue;
    const rests = new Set<string>();
    let whole = false;
    for (const pattern of c.patterns) {
      const p = pattern.endsWith('.*') ? pattern.slice(0, -2) : pattern;
      if (p === full || (pattern.endsWith('.*') && full.startsWith(`${p}.`))) whole = true;
      else if (p.startsWith(`${full}.`)) rests.add(p.slice(full.length + 1));
    }
    const name = escape(local);
    if (whole) alternatives.push(`${name}\\b`);
    else if (rests.size)
      alternatives.push(
        `${name}${GAP}\\.${GAP}(?:${[...rests]
          .map((r) => r.split('.').map(escape).join(`${GAP}\\.${GAP}`))
          .join('|')})\\b`,
      );
  }
  const re = alternatives.length ? new RegExp(`\\b(?:${alternatives.join('|')})`, 'g') : null;
  c.chainHints.set(key, re);
  return re;
}

/** Every match of a global regex over the text: [start, end) of the whole match. */
function* matches(re: RegExp | null, text: string): Generator<[number, number, string]> {
  if (!re) return;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    yield [m.index, m.index + m[0].length, m[0]];
    if (m[0].length === 0) re.lastIndex++;
  }
}

/**
 * Finds the rules' matches in one Python file. Tree-sitter parses the whole file; cheap text
 * searches only point at candidate places (an imported name, `.cuda`, `device_ids=`, "nccl"), and
 * the syntax tree at each place decides — so comments, look-alike variables and prose in strings
 * never match, and the walk does not visit every node of a large file.
 */
export function analyzeSource(
  parser: Parser,
  source: string,
  file: string,
  rules: Rule[],
  lang: Language,
): FileAnalysis {
  const tree = parser.parse(source);
  if (!tree) return { findings: [], importsTorch: false, entryPoint: false, parseErrors: true };
  const c = compile(rules);
  const root = tree.rootNode;
  // imports start a line: find the keywords, let the tree confirm (and skip strings, comments)
  const importStatements: Node[] = [];
  for (const [start, end, text] of matches(IMPORT_HINT, source)) {
    const kw = start + text.search(/\S/);
    const stmt = root.descendantForIndex(kw, end - 1)?.parent;
    if (
      stmt &&
      stmt.startIndex === kw &&
      (stmt.type === 'import_statement' || stmt.type === 'import_from_statement')
    )
      importStatements.push(stmt);
  }
  const aliases = importAliases(importStatements);

  let lineStarts: number[] | undefined;
  const pos = (index: number) => {
    if (!lineStarts) {
      lineStarts = [0];
      for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1))
        lineStarts.push(i + 1);
    }
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - lineStarts[lo]! + 1 };
  };
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const add = (rule: Rule, node: Node, vars: Record<string, string>, edits?: Edit[]) => {
    const key = `${rule.id}@${node.startIndex}`;
    if (seen.has(key)) return;
    seen.add(key);
    const s = pos(node.startIndex);
    const e = pos(node.endIndex);
    const fill = (t: string) => t.replace(/\{\{(\w+)\}\}/g, (_, k: string) => vars[k] ?? '');
    findings.push({
      ruleId: rule.id,
      file,
      line: s.line,
      column: s.column,
      endLine: e.line,
      endColumn: e.column,
      severity: rule.severity,
      category: rule.category,
      message: fill(rule.message[lang]),
      ...(rule.fix || edits
        ? { fix: { description: rule.fix ? rule.fix[lang] : '', edits: edits ?? [] } }
        : {}),
    });
  };
  const inComment = (n: Node | null) => n?.type === 'comment';

  // strings: device names, backends, environment variable names
  const doneStrings = new Set<number>();
  for (const [start, end] of matches(c.stringHint, source)) {
    let node = root.descendantForIndex(start, end);
    while (node && node.type !== 'string' && node.type !== 'module' && !inComment(node))
      node = node.parent;
    if (!node || node.type !== 'string' || doneStrings.has(node.startIndex)) continue;
    doneStrings.add(node.startIndex);
    const content = stringContent(node);
    if (!content) continue;
    for (const { r, re } of c.strings) {
      if (!re.test(content.value)) continue;
      const rw = r.rewrite;
      const piece =
        rw?.kind === 'string-replace'
          ? content.pieces.find((p) => p.text.includes(rw.from))
          : undefined;
      const edits =
        rw?.kind === 'string-replace' && piece
          ? [
              {
                start: piece.offset + piece.text.indexOf(rw.from),
                end: piece.offset + piece.text.indexOf(rw.from) + rw.from.length,
                text: rw.to,
              },
            ]
          : undefined;
      add(r, node, { text: content.value }, edits);
    }
  }

  // names bound by imports of modules the rules know: the longest dotted chain that resolves,
  // so torch.cuda.amp.autocast is one finding; a call of it is checked against the call rules
  const re = chainHint(c, aliases);
  const doneChains = new Set<number>();
  if (re) {
    for (const [start] of matches(re, source)) {
      const id = root.descendantForIndex(start);
      if (!id || id.type !== 'identifier' || id.startIndex !== start) continue;
      // a name that is itself an attribute (`x.torch`) is not the imported module
      const up = id.parent;
      if (up?.type === 'attribute' && !up.childForFieldName('object')?.equals(id)) continue;
      if (up && IMPORT_PARENTS.has(up.type)) continue;
      if (up?.type === 'keyword_argument' && up.childForFieldName('name')?.equals(id)) continue;
      let chain: Node = id;
      while (
        chain.parent?.type === 'attribute' &&
        chain.parent.childForFieldName('object')?.equals(chain)
      )
        chain = chain.parent;
      if (doneChains.has(chain.startIndex * 1e6 + chain.endIndex)) continue;
      doneChains.add(chain.startIndex * 1e6 + chain.endIndex);
      const name = canonicalName(chain, aliases);
      if (!name) continue;
      const best = bestReference(c.references, name);
      if (best) add(best.r, chain, { name }, renameSegment(best.r, chain));
      const call = chain.parent;
      if (call?.type === 'call' && call.childForFieldName('function')?.equals(chain))
        checkCall(call, name);
    }
  }

  function checkCall(call: Node, name: string) {
    const args = call.childForFieldName('arguments');
    const argList = args?.namedChildren.filter((a): a is Node => !!a) ?? [];
    for (const r of c.calls) {
      if (!r.match.names.some((n) => nameMatches(n, name))) continue;
      if (r.match.stringArg) {
        const first =
          argList.find((a) => a.type !== 'keyword_argument') ??
          argList
            .find((a) => a.childForFieldName('name')?.text === 'device_type')
            ?.childForFieldName('value');
        const s = first ? stringContent(first) : null;
        if (!s || s.value !== r.match.stringArg) continue;
      }
      if (r.id === 'add.set-device') {
        if (/\bset_device\s*\(/.test(source)) continue;
        add(r, call, { name }, setDeviceEdit(call));
        continue;
      }
      add(r, call, { name });
    }
  }

  /** `torch.npu.set_device(LOCAL_RANK)` on its own line before the statement that starts HCCL. */
  function setDeviceEdit(call: Node): Edit[] | undefined {
    const local = (full: string) => [...aliases].find(([, v]) => v === full)?.[0];
    const [os, torch] = [local('os'), local('torch')];
    if (!os || !torch) return undefined;
    let stmt = call;
    while (stmt.parent && stmt.parent.type !== 'block' && stmt.parent.type !== 'module')
      stmt = stmt.parent;
    const lineStart = source.lastIndexOf('\n', stmt.startIndex - 1) + 1;
    const indent = source.slice(lineStart, stmt.startIndex);
    if (/\S/.test(indent)) return undefined;
    const text = `${torch}.npu.set_device(int(${os}.environ.get("LOCAL_RANK", 0)))\n${indent}`;
    return [{ start: stmt.startIndex, end: stmt.startIndex, text }];
  }

  // members: `.cuda()`, `.to(rank)`, `x.is_cuda`
  for (const [start, end, text] of matches(c.memberHint, source)) {
    const nameAt = start + text.search(/[A-Za-z_]/);
    const ident = root.descendantForIndex(nameAt, end);
    const attr = ident?.parent;
    if (!ident || ident.type !== 'identifier' || attr?.type !== 'attribute') continue;
    if (!attr.childForFieldName('attribute')?.equals(ident)) continue;
    const call = attr.parent;
    const called = call?.type === 'call' && call.childForFieldName('function')?.equals(attr);
    if (called) {
      const argList =
        call.childForFieldName('arguments')?.namedChildren.filter((a): a is Node => !!a) ?? [];
      for (const r of c.methods) {
        if (ident.text !== r.match.name) continue;
        if (r.match.firstArgIdentifier) {
          const first = argList[0];
          if (!first || !['identifier', 'attribute'].includes(first.type)) continue;
          if (!r.match.firstArgIdentifier.includes(first.text.split('.').pop()!)) continue;
          add(r, call, { text: first.text });
          continue;
        }
        const edits =
          r.rewrite?.kind === 'method-rename'
            ? [{ start: ident.startIndex, end: ident.endIndex, text: r.rewrite.to }]
            : undefined;
        add(r, call, { name: ident.text }, edits);
      }
    } else {
      for (const r of c.attributes) {
        if (ident.text !== r.match.name) continue;
        const edits =
          r.rewrite?.kind === 'attribute-rename'
            ? [{ start: ident.startIndex, end: ident.endIndex, text: r.rewrite.to }]
            : undefined;
        add(r, attr, { text: attr.text }, edits);
      }
    }
  }

  // keyword arguments: device_ids=, map_location=, pin_memory=True, fused=True
  for (const [start] of matches(c.keywordHint, source)) {
    const ident = root.descendantForIndex(start, start + 1);
    const kw = ident?.parent;
    if (!ident || ident.type !== 'identifier' || kw?.type !== 'keyword_argument') continue;
    if (!kw.childForFieldName('name')?.equals(ident)) continue;
    const v = kw.childForFieldName('value');
    for (const r of c.keywords) {
      if (ident.text !== r.match.name || !v) continue;
      if (r.match.valueRegex && !new RegExp(r.match.valueRegex).test(v.text)) continue;
      add(r, kw, { text: v.text });
    }
  }

  for (const stmt of importStatements) {
    const modules =
      stmt.type === 'import_from_statement'
        ? [stmt.childForFieldName('module_name')?.text ?? '']
        : stmt
            .childrenForFieldName('name')
            .map(
              (n) =>
                (n?.type === 'aliased_import' ? n.childForFieldName('name')?.text : n?.text) ?? '',
            );
    for (const r of c.imports) {
      const hit = modules.find((m) =>
        r.match.modules.some((want) => m === want || m.startsWith(`${want}.`)),
      );
      if (hit) add(r, stmt, { name: hit });
    }
    // `from torch.cuda.amp import autocast`: the import names a CUDA module; the rewrite fixes
    // the module path, and the uses keep working through the imported name
    if (stmt.type !== 'import_from_statement') continue;
    const module = stmt.childForFieldName('module_name');
    if (!module || module.text.startsWith('.')) continue;
    const first = stmt.childrenForFieldName('name')[0];
    const imported =
      first?.type === 'aliased_import' ? first.childForFieldName('name')?.text : first?.text;
    const name = `${module.text}.${imported ?? ''}`;
    const best = bestReference(c.references, name);
    if (!best || best.r.uses) continue;
    const rw = best.r.rewrite;
    const segments = module.text.split('.');
    const at = rw?.kind === 'rename-segment' ? segments.indexOf(rw.from) : -1;
    const edits =
      rw?.kind === 'rename-segment' && at >= 0
        ? [
            {
              start: module.startIndex,
              end: module.endIndex,
              text: segments.map((seg, i) => (i === at ? rw.to : seg)).join('.'),
            },
          ]
        : undefined;
    add(best.r, stmt, { name }, edits);
  }

  const importsTorch = [...aliases.values()].some((v) => v === 'torch' || v.startsWith('torch.'));
  const entryPoint =
    source.includes('__main__') &&
    root.namedChildren.some(
      (n) =>
        n?.type === 'if_statement' &&
        /^__name__\s*==\s*['"]__main__['"]$/.test(n.childForFieldName('condition')?.text ?? ''),
    );
  const parseErrors = root.hasError;
  findings.sort(
    (a, b) => a.line - b.line || a.column - b.column || a.ruleId.localeCompare(b.ruleId),
  );
  tree.delete();
  return { findings, importsTorch, entryPoint, parseErrors };
}

/**
 * `torch.cuda.synchronize` → `torch.npu.synchronize`: the segment named `from` in the chain. With
 * `from torch import cuda` … `cuda.synchronize()` the import is what changes; the use stays.
 */
function renameSegment(rule: Rule, chain: Node): Edit[] | undefined {
  const rw = rule.rewrite;
  if (rw?.kind === 'replace-expression')
    return [{ start: chain.startIndex, end: chain.endIndex, text: rw.to }];
  if (rw?.kind !== 'rename-segment') return undefined;
  let cur: Node | null = chain;
  while (cur && cur.type === 'attribute') {
    const attr = cur.childForFieldName('attribute');
    if (attr?.text === rw.from)
      return [{ start: attr.startIndex, end: attr.endIndex, text: rw.to }];
    cur = cur.childForFieldName('object');
  }
  return undefined;
}
