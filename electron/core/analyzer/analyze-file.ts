import type { Node, Parser } from 'web-tree-sitter';
import type { Language } from '../../../shared/api';
import { canonicalName, importAliases, nameMatches } from './names';
import type { Rule } from './rules';

/** A text edit on the source (UTF-16 offsets, as JavaScript strings index). */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

export interface Finding {
  ruleId: string;
  file: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  severity: Rule['severity'];
  category: string;
  message: string;
  fix?: { description: string; edits: Edit[] };
}

export interface FileAnalysis {
  findings: Finding[];
  /** The file imports torch (so `import torch_npu` belongs in it). */
  importsTorch: boolean;
  /** `if __name__ == "__main__":` or a top-level call of main(): an entry point. */
  entryPoint: boolean;
  parseErrors: boolean;
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

export function analyzeSource(
  parser: Parser,
  source: string,
  file: string,
  rules: Rule[],
  lang: Language,
): FileAnalysis {
  const tree = parser.parse(source);
  if (!tree) return { findings: [], importsTorch: false, entryPoint: false, parseErrors: true };
  const root = tree.rootNode;
  const aliases = importAliases(root);
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const pos = (index: number) => {
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

  const byKind = <K extends Rule['match']['kind']>(kind: K) =>
    rules.filter((r) => r.match.kind === kind) as (Rule & {
      match: Extract<Rule['match'], { kind: K }>;
    })[];
  const stringRules = byKind('string').map((r) => ({ r, re: new RegExp(r.match.regex) }));
  const methodRules = byKind('method');
  const keywordRules = byKind('keyword');
  const referenceRules = byKind('reference');
  const callRules = byKind('call');
  const importRules = byKind('import');

  // strings: device names, backends, environment variable names
  for (const node of root.descendantsOfType('string')) {
    if (!node) continue;
    const content = stringContent(node);
    if (!content) continue;
    for (const { r, re } of stringRules) {
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

  // references: the longest dotted chain that resolves, so torch.cuda.amp.autocast is one finding
  for (const node of root.descendantsOfType(['attribute', 'identifier'])) {
    if (!node) continue;
    if (node.parent?.type === 'attribute' && node.parent.childForFieldName('object')?.equals(node))
      continue; // not the outermost
    if (node.type === 'identifier' && node.parent?.type === 'attribute') continue;
    if (
      node.parent &&
      ['import_statement', 'import_from_statement', 'dotted_name', 'aliased_import'].includes(
        node.parent.type,
      )
    )
      continue;
    const name = canonicalName(node, aliases);
    if (!name) continue;
    // most specific matching rule wins
    const matching = referenceRules
      .map((r) => ({ r, p: r.match.names.find((n) => nameMatches(n, name)) }))
      .filter(
        (x): x is { r: (typeof referenceRules)[number]; p: string } =>
          !!x.p && !(x.r.match.except ?? []).some((e) => nameMatches(e, name)),
      )
      .sort((a, b) => b.p.length - a.p.length);
    const best = matching[0];
    if (!best) continue;
    const rw = best.r.rewrite;
    let edits: Edit[] | undefined;
    if (rw?.kind === 'rename-segment') {
      // find the attribute/identifier in the chain whose own name is `from` and maps through aliases
      let cur: Node | null = node;
      while (cur && cur.type === 'attribute') {
        const attr = cur.childForFieldName('attribute');
        if (attr?.text === rw.from) {
          edits = [{ start: attr.startIndex, end: attr.endIndex, text: rw.to }];
          break;
        }
        cur = cur.childForFieldName('object');
      }
      if (
        !edits &&
        cur?.type === 'identifier' &&
        aliases.get(cur.text)?.split('.').pop() === rw.from &&
        aliases.get(cur.text) !== rw.from
      ) {
        // `from torch import cuda` … `cuda.synchronize()`: the import is what changes; leave the use
        edits = undefined;
      }
    }
    add(best.r, node, { name }, edits);
  }

  for (const call of root.descendantsOfType('call')) {
    if (!call) continue;
    const fn = call.childForFieldName('function');
    const args = call.childForFieldName('arguments');
    if (!fn || !args) continue;
    const argList = args.namedChildren.filter((a): a is Node => !!a);
    // .cuda(), .to(rank)
    if (fn.type === 'attribute') {
      const method = fn.childForFieldName('attribute');
      for (const r of methodRules) {
        if (method?.text !== r.match.name) continue;
        if (r.match.firstArgIdentifier) {
          const first = argList[0];
          if (
            !first ||
            first.type === 'keyword_argument' ||
            !r.match.firstArgIdentifier.includes(first.text)
          )
            continue;
          add(r, call, { text: first.text });
          continue;
        }
        const edits =
          r.rewrite?.kind === 'method-rename'
            ? [{ start: method.startIndex, end: method.endIndex, text: r.rewrite.to }]
            : undefined;
        add(r, call, { name: method.text }, edits);
      }
    }
    const name = canonicalName(fn, aliases);
    if (name) {
      for (const r of callRules) {
        if (!r.match.names.some((n) => nameMatches(n, name))) continue;
        if (r.match.stringArg) {
          const first =
            argList.find((a) => a.type !== 'keyword_argument') ??
            argList
              .find((a) => a.childForFieldName('name')?.text === 'device_type')
              ?.childForFieldName('value');
          const c = first ? stringContent(first) : null;
          if (!c || c.value !== r.match.stringArg) continue;
        }
        add(r, call, { name });
      }
    }
    for (const kw of argList.filter((a) => a.type === 'keyword_argument')) {
      const k = kw.childForFieldName('name')?.text;
      const v = kw.childForFieldName('value');
      for (const r of keywordRules) {
        if (k !== r.match.name || !v) continue;
        if (r.match.valueRegex && !new RegExp(r.match.valueRegex).test(v.text)) continue;
        add(r, kw, { text: v.text });
      }
    }
  }

  for (const stmt of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    if (!stmt) continue;
    const modules =
      stmt.type === 'import_from_statement'
        ? [stmt.childForFieldName('module_name')?.text ?? '']
        : stmt
            .childrenForFieldName('name')
            .map(
              (n) =>
                (n?.type === 'aliased_import' ? n.childForFieldName('name')?.text : n?.text) ?? '',
            );
    for (const r of importRules) {
      const hit = modules.find((m) =>
        r.match.modules.some((want) => m === want || m.startsWith(`${want}.`)),
      );
      if (hit) add(r, stmt, { name: hit });
    }
  }

  // `from torch.cuda.amp import autocast`: the import names a CUDA module; the rewrite fixes the
  // module path, and the uses keep working through the imported name
  for (const stmt of root.descendantsOfType('import_from_statement')) {
    const module = stmt?.childForFieldName('module_name');
    if (!stmt || !module || module.text.startsWith('.')) continue;
    const first = stmt.childrenForFieldName('name')[0];
    const imported =
      first?.type === 'aliased_import' ? first.childForFieldName('name')?.text : first?.text;
    const name = `${module.text}.${imported ?? ''}`;
    const best = referenceRules
      .map((r) => ({ r, p: r.match.names.find((n) => nameMatches(n, name)) }))
      .filter((x) => !!x.p && !(x.r.match.except ?? []).some((e) => nameMatches(e, name)))
      .sort((a, b) => b.p!.length - a.p!.length)[0];
    if (!best) continue;
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
  const entryPoint = /^if\s+__name__\s*==\s*['"]__main__['"]\s*:/m.test(source);
  const parseErrors = root.hasError;
  findings.sort(
    (a, b) => a.line - b.line || a.column - b.column || a.ruleId.localeCompare(b.ruleId),
  );
  tree.delete();
  return { findings, importsTorch, entryPoint, parseErrors };
}
