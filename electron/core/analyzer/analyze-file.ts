import type { Node, Parser } from 'web-tree-sitter';
import type { CodeEdit, CodeFinding, Language } from '../../../shared/api';
import {
  allMatches,
  lastAtOrBefore,
  ledBy,
  loneCarriageReturn,
  newlineStarts,
  ownText,
  pointAt,
  wordLed,
} from './line-matches';
import {
  readImport,
  readImportLine,
  type ImportedName,
  type ImportStatement,
} from './import-statements';
import {
  callMayMatch,
  callNeed,
  keywordLeads,
  methodNeeds,
  skipGap,
  valueMayMatch,
  type CallNeed,
} from './call-needs';
import { callBindings, canonicalName, importAliases, nameMatches } from './names';
import { withoutParameters } from './parameter-ranges';
import { rangedInput, relevantSource, withoutLeadingComments } from './relevant';
import {
  COMMENT,
  ELIF,
  ELSE,
  EXCEPT,
  FINALLY,
  IF,
  inCode,
  OPEN_STRING,
  sourceTokens,
  STRING,
  TRY,
  type SourceTokens,
} from './source-tokens';
import { callNameWords, ruleMsg, type Rule } from './rules';

export type Edit = CodeEdit;
export type Finding = CodeFinding;

export interface FileAnalysis {
  findings: Finding[];
  /** The file imports torch (so `import torch_npu` belongs in it). */
  importsTorch: boolean;
  /** `if __name__ == "__main__":` at the top level: an entry point. */
  entryPoint: boolean;
  parseErrors: boolean;
  /** Offset just after the last import of the file's leading import block (-1: none). */
  importEnd: number;
  /**
   * An enum that chooses kernels by backend with a pure-PyTorch member (TRITON / CUDA / PYTORCH):
   * the project can run on NPU by selecting that member, before porting a single kernel.
   */
  backendSwitch: BackendSwitch | null;
  /**
   * Where a finding of a rule with `unlessSource` is kept: the modules the file imports, as
   * written (`hstu.model`, `.model`, and `pkg.name` for `from pkg import name`), so that the scan
   * can look for that text in the project's own modules among them too.
   */
  imports?: string[];
}

type RuleOf<K extends Rule['match']['kind']> = Rule & {
  match: Extract<Rule['match'], { kind: K }>;
};

/** The rules sorted by how they match, plus the cheap text searches that find candidates. */
interface Compiled {
  strings: { r: RuleOf<'string'>; re: RegExp }[];
  stringHint: RegExp | null;
  /** Whether a string rule's regex matches a text: one regex for all of them (their union). */
  stringAny: { test: (text: string) => boolean } | null;
  methods: RuleOf<'method'>[];
  attributes: RuleOf<'attribute'>[];
  memberHint: RegExp | null;
  /**
   * Methods whose only rules are quieted by a file's text (Rule.unlessSource): in a file that
   * holds that text their calls are no candidates, so nothing is parsed for them.
   */
  memberUnless: Map<string, RegExp>;
  /**
   * Members only method rules name (`.silu`, `.masked_fill_`: no attribute rule), as written,
   * and what their calls need: such a member is a candidate only where a rule may take it.
   */
  methodNeeds: Map<string, CallNeed>;
  /** Attributes whose returning helpers are flagged where called (`multi_processor_count`). */
  calledAttributes: RegExp | null;
  keywords: RuleOf<'keyword'>[];
  keywordHint: RegExp | null;
  references: RuleOf<'reference'>[];
  calls: RuleOf<'call'>[];
  /** The call rules that name a dotted name, in order (remembered: the same few names recur). */
  callRulesOf: (name: string) => RuleOf<'call'>[];
  /** What a call of a dotted name needs for a call rule to take it; null: no call rule names it. */
  callNeedOf: (name: string) => CallNeed | null;
  /** What the value of a keyword argument starts with where a rule can take it (call-needs). */
  keywordLeads: Map<string, string[]>;
  /**
   * Per keyword name whose every rule wants another keyword beside it in the call (withKeyword):
   * that other keyword as written (`block=` or `args=` beside `grid=`). A file without it
   * anywhere has no such call, and its `grid = lambda META: …` launch grids are not parsed for.
   */
  keywordCompanions: Map<string, RegExp>;
  /** Last segments of the calls whose argument is also read by its value above (argAssigned). */
  assignedCalls: string[];
  imports: RuleOf<'import'>[];
  importedNames: { r: RuleOf<'imported-name'>; re: RegExp; except: RegExp | null }[];
  extensions: RuleOf<'extension'>[];
  /** Whether an imported name (its last segment) binds a compiled extension (`_C`, `*_cuda`). */
  extensionName: (name: string) => boolean;
  /** Modules not taken for an extension where an autograd Function calls them (autogradExcept). */
  autogradExcept: RegExp | null;
  once: Set<string>;
  /** [rule, the rule whose finding in the same file says it already]. */
  subsumed: [string, string][];
  /** Per rule id: the imports that quiet it (Rule.unlessImported). */
  unlessImported: Map<string, string[]>;
  /** Per rule id: the text that quiets it anywhere in the file (Rule.unlessSource). */
  unlessSource: Map<string, RegExp>;
  /** The extension rules' loader calls, as named (`torch.utils.cpp_extension.load`). */
  loaders: string[];
  /** Each loader's last segment (`load` of torch.utils.cpp_extension.load). */
  loaderLasts: Set<string>;
  /** Each loader's name segments, the longest (rarest in a text) first. */
  loaderSegments: string[][];
  /** `\b(?:load|…)\s*\(`: their calls, by last segment (see loaderHint). */
  loaderHint: RegExp | null;
  conditionNames: { r: RuleOf<'condition-name'>; re: RegExp }[];
  /** else-raise rules and the conditions they read. */
  elseRaises: { r: RuleOf<'else-raise'>; re: RegExp }[];
  definitions: { r: RuleOf<'definition'>; re: RegExp }[];
  definitionHint: RegExp | null;
  /**
   * Words one of which every definitionHint match holds (its rules' regexes are alternations
   * of plain words); null where a rule's regex is written otherwise and no word is known.
   */
  definitionWords: string[] | null;
  callNames: { r: RuleOf<'call-name'>; re: RegExp }[];
  /** Plain calls a call-name rule can match (`replace_llama_attn_with_flash_attn()`). */
  callHint: RegExp | null;
  /** The words one of which every call-name match holds (the rules declare them). */
  callWords: string[];
  conditionHint: RegExp | null;
  /** First segments of every name a reference or call rule knows (torch, apex, nvtx…). */
  roots: Set<string>;
  /** Every name pattern of the reference and call rules. */
  patterns: string[];
  /** First segments of the names of the reference rules that report only a required library's uses. */
  usedRoots: Set<string>;
  /** Per imported module: the import rules that cover it, and which of those take it. */
  importRulesOf: (module: string) => ImportRulesOf;
  /** The first segments of the modules the import rules name (`cuda` of `cuda.cudart`). */
  importRoots: Set<string>;
  /** Per imported name (`local\0full`), the regex of the chains a rule can match from it. */
  chainRegexes: Map<string, RegExp | null>;
}

const compiledCache = new WeakMap<Rule[], Compiled>();
// The memos below outlive the file a name was cut from (up to thousands of names each): their
// keys are the names' own strings (ownText), or each file that brought a new name stayed in memory.
let collate: Intl.Collator['compare'] | undefined;
/**
 * `a.localeCompare(b)`'s order, without building a collator at every comparison — nor at start-up
 * (building one costs an empty `amw scan` a few milliseconds): made at the first sort.
 */
export const byText = (a: string, b: string): number =>
  (collate ??= new Intl.Collator().compare)(a, b);
/** Text matched literally inside a regex. */
export const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `\b(?:word|…)` then `rest`, global, searched from its words (wordLed). */
const wordsThen = (words: string[], rest: string) =>
  wordLed(new RegExp(`\\b(?:${words.map(escape).join('|')})${rest}`, 'g'), words);

/** See Compiled.importRulesOf: `covered` ignores the rules' exceptions (nodeNeeded asks that). */
interface ImportRulesOf {
  covered: boolean;
  taken: Set<RuleOf<'import'>>;
}
const NO_IMPORT_RULES: ImportRulesOf = { covered: false, taken: new Set() };

/**
 * The import rules per module name, remembered: every file asks for each of its imports, and the
 * same few modules (`os`, `torch`, `numpy`) recur in every file of a project.
 */
function importRulesOf(rules: RuleOf<'import'>[]): (module: string) => ImportRulesOf {
  const roots = new Set(rules.flatMap((r) => r.match.modules.map((m) => m.split('.')[0]!)));
  const under = (m: string, want: string) => m === want || m.startsWith(`${want}.`);
  const known = new Map<string, ImportRulesOf>();
  return (module) => {
    const dot = module.indexOf('.');
    if (!roots.has(dot < 0 ? module : module.slice(0, dot))) return NO_IMPORT_RULES;
    let hit = known.get(module);
    if (!hit) {
      const covering = rules.filter((r) => r.match.modules.some((w) => under(module, w)));
      hit = {
        covered: covering.length > 0,
        taken: new Set(
          covering.filter((r) => !(r.match.except ?? []).some((not) => under(module, not))),
        ),
      };
      if (known.size > 20000) known.clear();
      known.set(ownText(module), hit);
    }
    return hit;
  };
}

export function compile(rules: Rule[]): Compiled {
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
  const loaders = [...new Set(of('extension').flatMap((r) => r.match.loaders))];
  const c: Compiled = {
    strings,
    // anchors dropped: the hint finds the text anywhere, the rule's own regex then decides
    stringHint: strings.length
      ? new RegExp(
          strings.map((s) => `(?:${s.r.match.regex.replace(/\^|\$/g, '')})`).join('|'),
          'g',
        )
      : null,
    // the union matches where one of them does, unless one refers to its own groups (renumbered
    // in the union): those are tried one by one
    stringAny: strings.length
      ? strings.some((s) => /\\[1-9]|\\k<|\(\?</.test(s.r.match.regex))
        ? { test: (text: string) => strings.some((s) => s.re.test(text)) }
        : new RegExp(strings.map((s) => `(?:${s.r.match.regex})`).join('|'))
      : null,
    methods,
    attributes,
    memberHint: members.length ? memberRegex(methods, attributes) : null,
    memberUnless: new Map(
      methods
        .filter(
          (r) =>
            r.unlessSource &&
            ![...methods, ...attributes].some(
              (o) => o !== r && o.match.name === r.match.name && !o.unlessSource,
            ),
        )
        .map((r) => [r.match.name, new RegExp(r.unlessSource!)]),
    ),
    methodNeeds: methodNeeds(methods, new Set(attributes.map((r) => r.match.name))),
    calledAttributes: attributes.some((r) => r.match.callers)
      ? wordsThen(
          attributes.filter((r) => r.match.callers).map((r) => r.match.name),
          '\\b',
        )
      : null,
    keywords,
    keywordHint: keywordNames.length ? keywordHint(keywordNames) : null,
    references,
    calls,
    // searched as text: `softmax(` finds `log_softmax(` too, so a name holding another is left out
    assignedCalls: ((names: string[]) =>
      names.filter((n, i) => !names.some((o, j) => j !== i && n !== o && n.includes(o))))([
      ...new Set([
        ...calls
          .filter((r) => r.match.argAssigned)
          .flatMap((r) => r.match.names.map((n) => n.slice(n.lastIndexOf('.') + 1))),
        ...methods.filter((r) => r.match.objectAssigned).map((r) => r.match.name),
      ]),
    ]),
    callNeedOf: (() => {
      const known = new Map<string, CallNeed | null>();
      return (name: string) => {
        let hit = known.get(name);
        if (hit === undefined) {
          hit = callNeed(c.callRulesOf(name).map((r) => r.match));
          if (known.size > 20000) known.clear();
          known.set(ownText(name), hit);
        }
        return hit;
      };
    })(),
    keywordLeads: keywordLeads(keywords),
    keywordCompanions: new Map(
      [...new Set(keywords.map((r) => r.match.name))].flatMap((name) => {
        const of = keywords.filter((r) => r.match.name === name);
        if (!of.every((r) => r.match.withKeyword)) return [];
        const names = of.map((r) => r.match.withKeyword!.replace(/^\^|\$$/g, ''));
        return [[name, new RegExp(`\\b(?:${names.join('|')})\\s*=(?!=)`)] as const];
      }),
    ),
    callRulesOf: (() => {
      const known = new Map<string, RuleOf<'call'>[]>();
      return (name: string) => {
        let hit = known.get(name);
        if (!hit) {
          hit = calls.filter((r) => r.match.names.some((n) => nameMatches(n, name)));
          if (known.size > 20000) known.clear();
          known.set(ownText(name), hit);
        }
        return hit;
      };
    })(),
    imports: of('import'),
    importedNames: of('imported-name').map((r) => ({
      r,
      re: new RegExp(r.match.names),
      except: r.match.except ? new RegExp(r.match.except) : null,
    })),
    extensions: of('extension'),
    extensionName: (() => {
      const res = of('extension').map((r) => new RegExp(r.match.modules));
      const named = new Set(of('extension').flatMap((r) => r.match.names ?? []));
      // asked for every imported name of every file: the same few names recur
      const known = new Map<string, boolean>();
      return (name: string) => {
        let is = known.get(name);
        if (is === undefined) {
          const last = name.slice(name.lastIndexOf('.') + 1);
          is = named.has(last) || res.some((re) => re.test(last));
          if (known.size > 20000) known.clear();
          known.set(ownText(name), is);
        }
        return is;
      };
    })(),
    autogradExcept: (() => {
      const except = of('extension').find((r) => r.match.autogradExcept)?.match.autogradExcept;
      return except ? new RegExp(except) : null;
    })(),
    once: new Set(rules.filter((r) => r.once).map((r) => r.id)),
    subsumed: rules.filter((r) => r.subsumedBy).map((r) => [r.id, r.subsumedBy!]),
    unlessImported: new Map(
      rules.filter((r) => r.unlessImported).map((r) => [r.id, r.unlessImported!]),
    ),
    unlessSource: new Map(
      rules.filter((r) => r.unlessSource).map((r) => [r.id, new RegExp(r.unlessSource!)]),
    ),
    loaders,
    loaderLasts: new Set(loaders.map((l) => l.slice(l.lastIndexOf('.') + 1))),
    loaderSegments: loaders.map((l) => l.split('.').sort((a, b) => b.length - a.length)),
    // called by the last segment of its name (`load` of torch.utils.cpp_extension.load)
    loaderHint: of('extension').length
      ? wordsThen(
          [
            ...new Set(
              of('extension').flatMap((r) => r.match.loaders.map((l) => l.split('.').pop()!)),
            ),
          ],
          `${GAP}\\(`,
        )
      : null,
    conditionNames: of('condition-name').map((r) => ({ r, re: new RegExp(r.match.regex) })),
    elseRaises: of('else-raise').map((r) => ({ r, re: new RegExp(r.match.condition) })),
    definitions: of('definition').map((r) => ({ r, re: new RegExp(r.match.regex) })),
    definitionHint: of('definition').length
      ? wordLed(
          new RegExp(
            `\\bdef\\s+(?=\\w*(?:${of('definition')
              .map((r) => r.match.regex)
              .join('|')}))`,
            'g',
          ),
          ['def'],
        )
      : null,
    definitionWords: of('definition').every((r) => /^\w+(?:\|\w+)*$/.test(r.match.regex))
      ? of('definition').flatMap((r) => r.match.regex.split('|'))
      : null,
    callNames: of('call-name').map((r) => ({ r, re: new RegExp(r.match.regex) })),
    // from the rule's own text on (not `\b\w*` first: that tries every word of the file)
    callWords: of('call-name').flatMap((r) => callNameWords(r.match)),
    callHint: of('call-name').length
      ? new RegExp(
          `(?:${of('call-name')
            .map((r) => r.match.regex.replace(/\^|\$/g, ''))
            .join('|')})\\w*\\s*\\(`,
          'g',
        )
      : null,
    conditionHint: of('condition-name').length
      ? new RegExp(
          of('condition-name')
            .map((r) => `(?:${r.match.regex})`)
            .join('|'),
          'g',
        )
      : null,
    roots: new Set(patterns.map((n) => n.split('.')[0]!)),
    patterns,
    importRulesOf: importRulesOf(of('import')),
    importRoots: new Set(of('import').flatMap((r) => r.match.modules.map(rootOf))),
    usedRoots: new Set(
      references.filter((r) => r.uses).flatMap((r) => r.match.names.map((n) => n.split('.')[0]!)),
    ),
    chainRegexes: new Map(),
  };
  compiledCache.set(rules, c);
  return c;
}

/**
 * Whether `child`, a child of `parent`, is its first: the field such a node starts with (a call's
 * function, an attribute's object, a keyword argument's name, a pair's key, an assignment's
 * left side). Compared by offset: a field lookup is a call into the parser's WebAssembly, and
 * these tests run at every candidate.
 */
const firstChild = (parent: Node, child: Node) => child.startIndex === parent.startIndex;

const STRING_CONTENT = /^(?:[rRbBuUfF]{0,2})(['"]{1,3})([\s\S]*)\1$/;

/**
 * The text inside a string literal's quotes and where each piece starts. In an f-string the
 * interpolations read as "0", so f"cuda:{rank}" reads as "cuda:0" to the rules; `shown` keeps
 * them as written, for what a finding quotes. Edits only touch literal text.
 */
function stringContent(
  node: Node,
): { value: string; shown: string; pieces: { text: string; offset: number }[] } | null {
  if (node.type !== 'string') return null;
  const parts = node.namedChildren.filter(
    (c): c is Node => !!c && (c.type === 'string_content' || c.type === 'interpolation'),
  );
  if (!parts.length) {
    const m = STRING_CONTENT.exec(node.text);
    return m ? { value: m[2]!, shown: m[2]!, pieces: [] } : null;
  }
  return {
    value: parts.map((p) => (p.type === 'interpolation' ? '0' : p.text)).join(''),
    shown: parts.map((p) => p.text).join(''),
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

export const IMPORT_HINT = ledBy(/^[ \t]*(?:import|from)[ \t]/gm, ['import', 'from'], true);

/** `self.local_rank` ends with the name `local_rank`, `out.device.index` with `device.index`. */
function endsWithName(text: string, name: string): boolean {
  return text === name || text.endsWith(`.${name}`);
}

/**
 * `.name` where a method or attribute rule can match, narrowed by what the rule also needs
 * (`.to` only before `(local_rank`, `.mean` only after `.pow(2)`); every match starts at the dot.
 */
function memberRegex(methods: RuleOf<'method'>[], attributes: RuleOf<'attribute'>[]): RegExp {
  const plain = new Set<string>();
  const special: string[] = [];
  for (const r of methods) {
    const name = escape(r.match.name);
    if (r.match.firstArgIdentifier) {
      const words = r.match.firstArgIdentifier;
      const names = words.filter((w) => w !== '0').map((w) => escape(w.replace(/\(\)$/, '')));
      special.push(
        `${name}(?=\\s*\\(\\s*(?:device\\s*=\\s*)?(?:${
          words.includes('0') ? String.raw`0\s*[,)]|` : ''
        }(?:[\\w.]*\\.)?(?:${names.join('|')})\\b))`,
      );
    } else if (r.match.objectRegex)
      // the look-behind runs only where `.name` matched; a plain name when its value is read too
      special.push(
        `${name}\\b(?<=(?:${r.match.objectRegex.replace(/\$$/, '')}${
          r.match.objectAssigned ? String.raw`|(?:^|[^\w.])\w+` : ''
        })\\s*\\.\\s*${name})`,
      );
    else plain.add(r.match.inPlace ? `${name}_?` : name);
  }
  for (const r of attributes) plain.add(escape(r.match.name));
  const alternatives = [...(plain.size ? [`(?:${[...plain].join('|')})\\b`] : []), ...special];
  // `.` and the spaces after it written once: each alternative starts with a name, so no match
  // can take fewer spaces than there are, and the matches are those of `\.\s*A|\.\s*B|…`
  return new RegExp(`\\.\\s*(?:${alternatives.join('|')})`, 'g');
}

/** Top-level classes kept whole: enums (a kernel backend switch). */
const KEEP = /\bEnum\b/;
/**
 * Top-level statements whose header is always parsed: the entry point's guard (after what the
 * parser reads as space and the lexer does not: a form feed, a byte-order mark).
 */
const LOOK = /^[\v\f\u00a0\u1680\u2000-\u200b\u202f\u205f\u2060\u3000\ufeff]*if\b[^\n]*__name__/;
export const TEXT_IMPORT = ledBy(
  /^[ \t]*(?:import[ \t]+([^\n#;]+)|from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+))/gm,
  ['import', 'from'],
  true,
);
/**
 * A module imported by its name as a string (`_C, _ = optional_import("monai._C")`,
 * `ext = importlib.import_module("pkg._ext")`): the name's module, where the first argument is.
 */
const DYNAMIC_IMPORT = wordLed(/\b(?:import_module|optional_import)\s*\(\s*(["'])([\w.]+)\1/g, [
  'import_module',
  'optional_import',
]);
/** The names a line binds before its `=` (`_C, _ =` → `_C`, the first), or null. */
const ASSIGNED_FIRST = /^[ \t]*\(?[ \t]*(\w+)[ \t]*(?:,[^=\n]*)?\)?[ \t]*=[ \t]*[\w.]*$/;

const DYNAMIC_IMPORT_AT = new RegExp(DYNAMIC_IMPORT.source, 'y');
let dynamicOf: [Compiled, [string, number][]] | null = null;

/**
 * The names bound to an extension module imported by its name as a string (DYNAMIC_IMPORT), in
 * code (not a comment's or a docstring's example), each with where its line starts.
 */
function dynamicExtensions(c: Compiled, source: string): [string, number][] {
  matches(null, source);
  // asked twice per file (candidates, analysis): read once
  if (dynamicOf?.[0] === c) return dynamicOf[1];
  const out: [string, number][] = [];
  dynamicOf = [c, out];
  for (const [start] of codeMatches(DYNAMIC_IMPORT, source)) {
    DYNAMIC_IMPORT_AT.lastIndex = start;
    const m = DYNAMIC_IMPORT_AT.exec(source);
    if (!m || !c.extensionName(m[2]!)) continue;
    const lineStart = source.lastIndexOf('\n', start) + 1;
    const target = ASSIGNED_FIRST.exec(source.slice(lineStart, start));
    if (target) out.push([target[1]!, lineStart + /^[ \t]*/.exec(target[0])![0].length]);
  }
  return out;
}

/** `name = …load(`, the call's parenthesis perhaps on the next line (`load \\` then `(`). */
export const LOADED =
  /^[ \t]*(\w+)\s*=\s*[\w.]*?\b(?:load_ext|load|load_inline)(?:\s|\\\r?\n)*\(/gm;
/** LOADED's call alone: every LOADED match ends with one (`torch.load(` is in most files). */
const LOADER_CALL = /\b(?:load_ext|load|load_inline)(?:\s|\\\r?\n)*\(/g;
const LOADED_AT = new RegExp(LOADED.source.slice(1), 'my');
const SPACE = /\s/;
const WORD = /[\w.]/;

/**
 * The names an extension module is given again by a plain assignment (`ext_c = exllamav2_ext`,
 * `_C = _backend`): its calls through them are its calls.
 */
function extensionAliases(source: string, ext: Set<string>): string[] {
  if (!ext.size) return [];
  const re = new RegExp(
    `^[ \\t]*(\\w+)[ \\t]*=[ \\t]*(?:${[...ext].map(escape).join('|')})[ \\t]*(?:#.*)?$`,
    'gm',
  );
  const out: string[] = [];
  for (const m of source.matchAll(re)) if (!ext.has(m[1]!)) out.push(m[1]!);
  return out;
}

/**
 * `anti_alias_activation_cuda = load.load()` (BigVGAN's, through the project's own loader
 * module): a name an extension would have, given by some `load(` that is no data loader's. The
 * name, and where its line's statement starts.
 */
function namedLoads(c: Compiled, source: string): [string, number][] {
  // asked twice per file (candidates, analysis): read once
  if (namedOf?.[0] === c && namedOf[1] === source) return namedOf[2];
  const out: [string, number][] = [];
  namedOf = [c, source, out];
  for (const m of loadedMatches(source)) {
    const name = m[1]!;
    if (!c.extensionName(name) || NOT_EXTENSION.test(name)) continue;
    const fn =
      /=\s*([\w.]*?)\b(?:load_ext|load|load_inline)(?:\s|\\\r?\n)*\(/.exec(m[0])?.[1] ?? '';
    // a plain `load(` is a known loader's or none (the loader search tells which)
    if (!fn || DATA_LOADER.test(fn)) continue;
    out.push([name, m.index + /^[ \t]*/.exec(m[0])![0].length]);
  }
  return out;
}
let namedOf: [Compiled, string, [string, number][]] | null = null;
/** What a `….load(` of data is called through: `torch.load`, `json.load`, `np.load`. */
const DATA_LOADER =
  /^(?:torch\.(?:hub\.)?|json\.|np\.|numpy\.|pickle\.|yaml\.|joblib\.|dill\.|cloudpickle\.|safetensors\.\w+\.|h5py\.|mmcv\.|mmengine\.|srsly\.|ujson\.|orjson\.)$/;

/**
 * LOADED's matches, tried only at the line start each loader call leads back to (the call's
 * dotted prefix, spaces, `=`, spaces, a name, indentation): the same matches as trying every
 * line start of the file — a sticky search at each of a large file's lines cost more than the
 * rest of the extension search.
 */
export function loadedMatches(source: string): RegExpExecArray[] {
  const at: number[] = [];
  const lineStart = (i: number) => {
    const k = source.charCodeAt(i - 1);
    return i === 0 || k === 10 || k === 13 || k === 0x2028 || k === 0x2029;
  };
  for (const m of matches(LOADER_CALL, source)) {
    const q = m[0];
    let i = q;
    while (i > 0 && WORD.test(source[i - 1]!)) i--;
    while (i > 0 && SPACE.test(source[i - 1]!)) i--;
    if (source[--i] !== '=') continue;
    while (i > 0 && SPACE.test(source[i - 1]!)) i--;
    const end = i;
    while (i > 0 && /\w/.test(source[i - 1]!)) i--;
    if (i === end) continue;
    while (i > 0 && (source[i - 1] === ' ' || source[i - 1] === '\t')) i--;
    if (lineStart(i)) at.push(i);
  }
  at.sort((a, b) => a - b);
  const out: RegExpExecArray[] = [];
  let from = 0;
  for (const ls of at) {
    if (ls < from) continue;
    LOADED_AT.lastIndex = ls;
    const m = LOADED_AT.exec(source);
    if (!m) continue;
    out.push(m);
    from = m.index + (m[0].length || 1);
  }
  return out;
}
/**
 * `x = …` or `x += …` at a line's start (see argAssigned): the value a rule reads is any the
 * statements above give the name (`x = q @ k + mask`, `x = x + mask`).
 */
const ADDED_TO = /[ \t]*(\w+)[ \t]*(?:\+=|=(?!=))/y;
/** Methods that only change a tensor's dtype: softmax(scores.float()) reads scores' value. */
const CASTS = ['float', 'half', 'double', 'bfloat16', 'to', 'type', 'type_as'];

/** A call's first argument when it is a plain name (`(scores,` `(scores)`), or one cast (castOperand). */
const NAME_ARGUMENT = new RegExp(
  String.raw`\(\s*(\w+)(?:\s*\.\s*(?:${CASTS.join('|')})\s*\([^()]*\))?\s*[,)]`,
  'y',
);
/** How many lines above such a call its argument's sum is looked for (see assignedBefore). */
const ADDED_LINES = 12;

/** The plain name a method at `at` is called on (`w` of `w.softmax(`), if it is one. */
function calledOn(source: string, at: number): string | undefined {
  let dot = at - 1;
  while (source.charCodeAt(dot) === 32) dot--;
  if (source[dot] !== '.') return undefined;
  let end = dot - 1;
  while (source.charCodeAt(end) === 32) end--;
  let start = end;
  while (start > 0 && /\w/.test(source[start - 1]!)) start--;
  // `a.b.softmax(`: an attribute, not a plain name
  return start <= end && source[start - 1] !== '.' && /^[A-Za-z_]/.test(source[start]!)
    ? source.slice(start, end + 1)
    : undefined;
}

/**
 * The statements just above a call of one of `calls` that give a value to the name it is given
 * first or is called on (`w = q @ k + mask` or `w = w + mask` a few lines above `softmax(w, -1)`
 * or `w.softmax(-1)`): only those, not every assignment of a file (each kept one is parsed).
 */
function addedToLines(source: string, calls: string[]): number[] {
  const out: number[] = [];
  const starts = newlineStarts(source);
  // the lines above are found in the line starts, and read once per line and name: searched
  // back for through the text at each call, a long line of such calls (generated text) was
  // quadratic (20k softmax calls on one line: 2.6 s)
  const read = new Set<string>();
  for (const call of calls)
    for (let at = source.indexOf(call + '('); at >= 0; at = source.indexOf(call + '(', at + 1)) {
      NAME_ARGUMENT.lastIndex = at + call.length;
      const arg = NAME_ARGUMENT.exec(source)?.[1] ?? calledOn(source, at);
      if (!arg) continue;
      const line = pointAt(starts, at).row;
      if (read.has(`${line} ${arg}`)) continue;
      read.add(`${line} ${arg}`);
      for (let n = 0, above = line - 1; n < ADDED_LINES && above >= 0; n++, above--) {
        const start = starts[above]!;
        ADDED_TO.lastIndex = start;
        if (ADDED_TO.exec(source)?.[1] === arg) {
          // the statement's own start, past the indentation
          let stmt = start;
          while (source.charCodeAt(stmt) === 32 || source.charCodeAt(stmt) === 9) stmt++;
          out.push(stmt);
        }
      }
    }
  return out;
}

/** An autograd forward's `ctx.x = …` (one regex object: matches are kept per regex). */
export const CTX_ASSIGNMENT = ledBy(/^[ \t]*ctx\.\w+\s*=/gm, ['ctx.'], true);

/** An autograd Function's `def forward(ctx, …)` / `def backward(ctx, …)`, from its line start. */
const AUTOGRAD_METHOD = /([ \t]*)def[ \t]+(?:forward|backward)[ \t]*\([ \t]*ctx\b/y;
/** `name.op(` */
const MODULE_CALL = /(?<![\w.])([A-Za-z_]\w*)[ \t]*\.[ \t]*\w+[ \t]*\(/g;
let autogradMemo: [string, Set<string>] | null = null;

/**
 * The names called as `name.op(…)` in an autograd Function's forward or backward (each body read
 * up to the next code line indented no deeper than its `def`).
 */
function autogradCalled(source: string): Set<string> {
  if (autogradMemo?.[0] === source) return autogradMemo[1];
  const names = new Set<string>();
  // found by plain searches, each checked where its line starts, in a text that names a
  // Function at all (a multiline regex over every text was 0.5% of a scan's instructions)
  if (source.includes('Function') && source.includes('ctx'))
    for (const word of ['forward', 'backward'])
      for (let at = source.indexOf(word); at >= 0; at = source.indexOf(word, at + word.length)) {
        const line = source.lastIndexOf('\n', at) + 1;
        AUTOGRAD_METHOD.lastIndex = line;
        const m = AUTOGRAD_METHOD.exec(source);
        if (!m || line + m[0].length <= at) continue;
        const start = line + m[0].length;
        const ends = new RegExp(`\\n(?![ \\t]{${m[1]!.length + 1}}|[ \\t]*(?:#|\\r?\\n|$))`, 'g');
        ends.lastIndex = start;
        const end = ends.exec(source)?.index ?? source.length;
        for (const call of source.slice(start, end).matchAll(MODULE_CALL)) names.add(call[1]!);
      }
  autogradMemo = [source, names];
  return names;
}

/**
 * Whether a plain `import name` (as `local`) binds a compiled extension by its use: an autograd
 * Function's forward or backward calls it (the extension tutorial's shape, any module name).
 */
function autogradExtension(c: Compiled, source: string, name: string, local: string): boolean {
  return (
    !!c.autogradExcept &&
    !name.includes('.') &&
    autogradCalled(source).has(local) &&
    !c.autogradExcept.test(name)
  );
}

/**
 * Modules whose `_C` / `*_ext` names are not a project's compiled extension: PyTorch's own
 * bindings (`from torch import _C`) and the build tools of a setup.py (`build_ext`).
 */
// build tools' own `build_ext` (`from Cython.Distutils.build_ext import build_ext as _build_ext`)
const NOT_EXTENSION = /^(?:torch|setuptools|distutils|Cython|pybind11|numpy)(?:\.|$)/;

/** What a file's imports bind: aliases (as importAliases), [what, local name]. */
interface TextBindings {
  aliases: Map<string, string>;
  /** [what is imported (`pkg._ext`, `pkg._C.nms`), the local name that binds it] */
  bound: [string, string][];
}

/** One TEXT_IMPORT match's bindings, added to `to`. */
function bindText(m: RegExpExecArray, to: TextBindings): void {
  const parts = (m[1] ?? m[3] ?? '').replace(/[()\\\n]/g, ' ').split(',');
  for (const part of parts) {
    const w = /^\s*([\w.]+)(?:\s+as\s+(\w+))?/.exec(part);
    if (!w) continue;
    const [, name, alias] = w as unknown as [string, string, string | undefined];
    to.bound.push([m[2] === undefined ? name : `${m[2]}.${name}`, alias ?? name]);
    if (m[1] !== undefined)
      to.aliases.set(alias ?? name.split('.')[0]!, alias ? name : name.split('.')[0]!);
    else if (!m[2]!.startsWith('.')) to.aliases.set(alias ?? name, `${m[2]}.${name}`);
  }
}

const TEXT_IMPORT_AT = new RegExp(TEXT_IMPORT.source.slice(1), 'my');

/**
 * What the file's imports bind, for the candidate search (a superset of what the tree says), from
 * the import plan: a statement read from its text binds what it says (the tree's reading, see import-statements.ts), any other is read with
 * TEXT_IMPORT at its line. Imports written in comments and docstrings (`>>> import torch`), which
 * the analysis never reads, bind nothing here: they only made candidates.
 */
export function planBindings(source: string, c: Compiled): TextBindings {
  const to: TextBindings = { aliases: new Map(), bound: [] };
  let from = 0;
  let star = false;
  for (const im of importPlan(source, c).imports) {
    star ||= starAt(source, im.start);
    if (im.start < from) continue;
    const read = im.read;
    if (!read) {
      TEXT_IMPORT_AT.lastIndex = im.start;
      const m = TEXT_IMPORT_AT.exec(source);
      if (!m) continue;
      bindText(m, to);
      from = m.index + (m[0].length || 1);
      continue;
    }
    const module = read.module?.text;
    for (const { name, alias } of read.names) {
      const local = alias ?? name;
      if (!read.from) {
        to.bound.push([name, local]);
        const first = name.split('.')[0]!;
        to.aliases.set(alias ?? first, alias ? name : first);
      } else {
        to.bound.push([`${module}.${name}`, local]);
        if (!module!.startsWith('.')) to.aliases.set(local, `${module}.${name}`);
      }
    }
  }
  starTorch(source, to.aliases, star);
  callBindings(source, to.aliases);
  return to;
}

/** `from benchmarks.communication.utils import *`, `from .common import *`, at an import's start. */
const STAR_IMPORT_AT = /from[ \t]+[\w.]+[ \t]+import[ \t]+\*/y;

/** Whether the import starting at `at` is a star import. */
function starAt(source: string, at: number): boolean {
  STAR_IMPORT_AT.lastIndex = at;
  return STAR_IMPORT_AT.test(source);
}

/**
 * `torch` and `nn` from a project module's star import: a file that never binds the name itself
 * and still writes `torch.cuda.Event()` or `nn.DataParallel(model)` has it from there (nothing
 * else is called torch; `nn` is torch.nn wherever a module re-exports it).
 */
function starTorch(source: string, aliases: Map<string, string>, star: boolean): void {
  if (!star) return;
  if (!aliases.has('torch') && /\btorch[ \t]*\./.test(source)) aliases.set('torch', 'torch');
  if (!aliases.has('nn') && /(?<![\w.])nn[ \t]*\./.test(source)) aliases.set('nn', 'torch.nn');
}

/**
 * The `raise` lines an else-raise rule can take, read from the text: the first line above with
 * less indentation is an `else:`, and the `if` of that `else:` (the nearest line above at its
 * indentation that opens with `if`) matches some rule's condition. Parsing every `raise` of a
 * file that merely tests for CUDA somewhere cost a twentieth of a scan.
 */
function elseRaiseCandidates(source: string, raises: number[], rules: { re: RegExp }[]): number[] {
  const out: number[] = [];
  const indentOf = (line: string) => /^[ \t]*/.exec(line)![0].length;
  for (const at of raises) {
    const lineStart = source.lastIndexOf('\n', at - 1) + 1;
    const indent = indentOf(source.slice(lineStart, at + 40));
    let end = lineStart - 1;
    let elseIndent = -1;
    // up to the `else:` that holds this line, then up to its `if`
    for (let steps = 0; end > 0 && steps < 400; steps++) {
      const start = source.lastIndexOf('\n', end - 1) + 1;
      const line = source.slice(start, end);
      end = start - 1;
      if (!line.trim() || line.trimStart().startsWith('#')) continue;
      const n = indentOf(line);
      if (elseIndent < 0) {
        if (n >= indent) continue;
        if (!/^else\s*:/.test(line.trimStart())) break;
        elseIndent = n;
      } else if (n < elseIndent) break;
      else if (n === elseIndent && /^if\b/.test(line.trimStart())) {
        if (rules.some(({ re }) => re.test(line))) out.push(at);
        break;
      }
    }
  }
  return out;
}

/**
 * Offsets where some rule may match: the analysis's own text searches, run before parsing, each
 * kept only where its rule can take it (code, or a string that a string rule matches). `inElse`:
 * a `raise` matters only in an `else:` block (it tells a required import from an optional one).
 */
export function candidateOffsets(
  source: string,
  c: Compiled,
): { at: number[]; inElse: number[]; imports: number[]; whole: number[]; pruned: Set<number> } {
  const at: number[] = [];
  /** Members, keywords and chains no rule can take as written: the analysis passes them over. */
  const pruned = new Set<number>();
  const take = (may: boolean, offset: number) => {
    if (may) at.push(offset);
    else pruned.add(offset);
  };
  // indexed loops: a for-of with a destructured tuple, run before V8 optimises it, made an
  // iterator and a result object per element (a seventh of a scan's allocations)
  const push = (list: [number, number, string][]) => {
    for (let i = 0; i < list.length; i++) at.push(list[i]![0]);
  };
  const all = (re: RegExp | null) => push(codeMatches(re, source));
  // the imports the analysis reads from the tree (importPlan): the others are not parsed
  const plan = importPlan(source, c);
  for (const im of plan.imports) if (im.parse) at.push(im.start);
  at.push(...plan.strings);
  push(stringMatches(c, source));
  const { aliases, bound } = planBindings(source, c);
  const members = codeMatches(c.memberHint, source);
  // `loss.backward()` in a file that uses mixed precision is no finding: not parsed for
  if (c.memberUnless.size) {
    const quiet = new Map<string, boolean>();
    for (let i = 0; i < members.length; i++) {
      const name = members[i]![2].replace(/^\.\s*/, '');
      const unless = c.memberUnless.get(name);
      if (unless) {
        let q = quiet.get(name);
        if (q === undefined) quiet.set(name, (q = unless.test(source)));
        if (q) {
          pruned.add(members[i]![0]);
          continue;
        }
      }
      take(memberCanMatch(c, aliases, source, members[i]!), members[i]![0]);
    }
  } else
    for (let i = 0; i < members.length; i++)
      take(memberCanMatch(c, aliases, source, members[i]!), members[i]![0]);
  // a keyword whose every rule wants its value to start with a text (`pin_memory=True`): only
  // where it does (`pin_memory=args.pin_mem` is no rule's)
  const keywords = codeMatches(c.keywordHint, source);
  for (let i = 0; i < keywords.length; i++)
    take(keywordCanMatch(c, source, keywords[i]!), keywords[i]![0]);
  all(c.conditionHint);
  all(definitionHint(c, source));
  all(callHint(c, source));
  const loader = loaderHint(c, source);
  all(loader);
  // a name no rule takes as it is used there (`torch.where(c, x, y)` without `torch.tensor(`)
  // is not parsed for
  const chains = chainMatches(c, aliases, source);
  for (let i = 0; i < chains.length; i++)
    take(chainCanMatch(c, aliases, source, chains[i]!), chains[i]![0]);
  // `x = x + mask` above `softmax(x)`: kept for the call's rule to read (argAssigned)
  if (c.assignedCalls.length) at.push(...addedToLines(source, c.assignedCalls));
  // an extension's call sites, wherever the module is bound
  const ext = new Set<string>();
  for (let i = 0; i < bound.length; i++) {
    const local = bound[i]![1];
    if (ownNamed(bound[i]![0])) continue;
    if (!NOT_EXTENSION.test(bound[i]![0]) && c.extensionName(local)) ext.add(local);
    else if (autogradExtension(c, source, bound[i]![0], local)) ext.add(local);
  }
  const { modules: extModules, functions: extFns } = extensionImports(c, bound);
  for (const local of extModules) ext.add(local);
  if (extFns.length) all(wordsThen(extFns, '\\s*\\('));
  // `ext = load_ext(…)`: a loader call that can bind one (`state = torch.load(…)` cannot)
  if (loader) for (const m of loadedMatches(source)) ext.add(m[1]!);
  // a loader renamed by its import has every segment of its name written there
  const renamed = loader && renamedLoaders(c, aliases);
  if (renamed) {
    all(renamed);
    const assigned = new RegExp(`^[ \\t]*(\\w+)\\s*=\\s*(?:${renamed.source})`, 'gm');
    for (const m of source.matchAll(assigned)) ext.add(m[1]!);
  }
  for (const [local] of namedLoads(c, source)) ext.add(local);
  for (const [local] of dynamicExtensions(c, source)) ext.add(local);
  for (const local of extensionAliases(source, ext)) ext.add(local);
  if (ext.size) {
    all(wordsThen([...ext], `${GAP}\\.`));
    // an autograd forward's ctx attributes: where ctx.device goes
    all(CTX_ASSIGNMENT);
    // a PyTorch path for the CPU alone beside the extension's calls, and the calls of the
    // autograd Functions over it
    all(CPU_TEST);
    all(APPLY_CALL);
  }
  // the calls of a name an imported-name rule tells at each call (`DataParallelWithCallback(…)`)
  const called: string[] = [];
  for (const { r, re } of c.importedNames)
    if (r.match.calls)
      for (let i = 0; i < bound.length; i++)
        if (re.test(bound[i]![0].split('.').pop()!)) called.push(bound[i]![1]);
  if (called.length) all(wordsThen(called, '\\s*\\('));
  // the callers of a helper that returns an SM count
  const helpers = new Set<string>();
  for (const m of matches(c.calledAttributes, source)) {
    const start = m[0];
    const before = source.slice(Math.max(0, start - 4000), start);
    const def = [...before.matchAll(/^[ \t]*def[ \t]+(\w+)/gm)].at(-1);
    if (def) helpers.add(def[1]!);
  }
  if (helpers.size) all(wordsThen([...helpers], '\\s*\\('));
  // `else: raise` tells a required import from an optional one
  const inElse = codeMatches(RAISE, source).map((m) => m[0]);
  // and stops a host without CUDA where the condition tests for it
  if (c.elseRaises.some(({ re }) => re.test(source)))
    at.push(...elseRaiseCandidates(source, inElse, c.elseRaises));
  const imports = codeMatches(IMPORT_HINT, source).map((m) => m[0]);
  // a definition rule reports the whole definition: it is parsed whole
  const whole = codeMatches(definitionHint(c, source), source).map((m) => m[0]);
  return { at, inElse, imports, whole, pruned };
}

/**
 * Whether a rule can take the member found at `m` (`.name`): an attribute rule's anywhere; a
 * method's only where it is called, on something that is not another module (`np.double(…)`
 * is numpy's function; `F.silu(…)` a call rule's), as its rules need (call-needs).
 */
function memberCanMatch(
  c: Compiled,
  aliases: Map<string, string>,
  source: string,
  m: [number, number, string],
): boolean {
  const name = m[2].slice(m[2].search(/[A-Za-z_]/));
  const need = c.methodNeeds.get(name);
  if (need === undefined) return true;
  const open = skipGap(source, m[1]);
  const next = source.charCodeAt(open);
  if (next !== 40) return next === 35;
  // the object, where it is a plain dotted name on its own (see analyzeSource's module check)
  let b = m[0];
  while (b > 0 && OBJECT_CHAR.test(source[b - 1]!)) b--;
  const object = source.slice(b, m[0]);
  const plain = PLAIN_CHAIN.test(object) && (b === 0 || !AFTER_OBJECT.test(source[b - 1]!));
  if (!plain) return callMayMatch(source, tokensOf(source), -1, open, need);
  const module = plainChainName(object, aliases);
  // an imported module's name may be bound again to a value (`import model`, then `model = …`)
  if (moduleFunction(c, module, name) && !(object.indexOf('.') < 0 && rebound(source, object)))
    return false;
  return callMayMatch(source, tokensOf(source), b, open, need);
}
/**
 * `module.name(…)` is a module's function, no tensor's method: another library's (`np.double`),
 * or torch's where a call rule speaks for it (`F.silu(gate) * x`). Null: not a module.
 */
function moduleFunction(c: Compiled, module: string | null, name: string): boolean {
  return (
    module !== null &&
    ((module !== 'torch' && !module.startsWith('torch.')) ||
      c.callRulesOf(`${module}.${name}`).length > 0 ||
      // `torch.baddbmm(…)` is the reference rule's, not `.baddbmm(…)`'s
      c.references.some((r) => r.match.names.includes(`${module}.${name}`)))
  );
}
/**
 * Whether the file binds a plain name anywhere (assigned, a loop variable): an
 * imported module's name reused for a value, left for the tree to tell (shadowedName).
 */
function rebound(source: string, name: string): boolean {
  if (source !== reboundIn) {
    reboundIn = source;
    reboundNames.clear();
  }
  let is = reboundNames.get(name);
  if (is === undefined) reboundNames.set(name, (is = bindsName(source, name, 0, source.length)));
  return is;
}
/** rebound's answers for the file being read (one file at a time) */
let reboundIn = '';
const reboundNames = new Map<string, boolean>();
/**
 * Whether `name` is bound between `from` and `to`: written at a statement's start with a binding
 * after it (`name =`, `name: T =`, `name, x =`, `a, name =`, `for name in`). A search for the literal, not a regex
 * tried at every line.
 */
function bindsName(source: string, name: string, from: number, to: number): boolean {
  for (let at = source.indexOf(name, from); at >= 0 && at < to; at = source.indexOf(name, at + 1)) {
    if (at > 0 && WORD_OR_DOT.test(source[at - 1]!)) continue;
    BINDING.lastIndex = at + name.length;
    if (!BINDING.test(source)) continue;
    // the statement's own target, not a word of prose or an argument (`# torch, then x = …`)
    if (BINDING_HEAD.test(source.slice(source.lastIndexOf('\n', at - 1) + 1, at))) return true;
  }
  return false;
}
/** What follows a name that binds it: an assignment, a tuple's, an annotation's, a loop's `in`. */
const BINDING = /(?![\w.])[ \t]*(?:(?::[^=\n]*|,[^=\n]*)?=(?!=)|in\b)/y;
const WORD_OR_DOT = /[\w.]/;
/** What may stand before a bound name on its line: indentation, `for`, a tuple's names. */
const BINDING_HEAD = /^[ \t]*(?:for\s+)?(?:[\w.]+\s*,\s*)*$/;
/**
 * A plain name the enclosing function (or the module, above it) binds itself (a parameter,
 * `name = …`, `for name in`), so not the module of that name the file imports: `import model`
 * (a package registering models), then `model = create_model(…)` and `model.cuda()` in main().
 */
function shadowedName(object: Node, source: string): boolean {
  if (object.type !== 'identifier') return false;
  let fn = object.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  const name = object.text;
  const params = fn?.childForFieldName('parameters')?.text ?? '';
  if (new RegExp(`(?:^|[(,*\\s])${escape(name)}\\s*(?:[:=,)]|$)`).test(params)) return true;
  // in a function, what it binds before the call; at module level, what the module does
  return bindsName(source, name, fn?.startIndex ?? 0, object.startIndex);
}
const OBJECT_CHAR = /[\w.]/;
/** What may end an expression an object chain would then belong to (`f().x`, `a[0].x`, `"s".x`). */
const AFTER_OBJECT = /[\w.)\]}'"]/;

/** Whether a keyword rule can take the `name =` found at `m` (see Compiled.keywordLeads). */
function keywordCanMatch(c: Compiled, source: string, m: [number, number, string]): boolean {
  const name = /^\w+/.exec(m[2])?.[0] ?? '';
  const companion = c.keywordCompanions.get(name);
  if (companion && !companionIn(source, companion)) return false;
  const leads = c.keywordLeads.get(name);
  return !leads || valueMayMatch(source, m[1], leads);
}
/** Whether a keyword's companion (Compiled.keywordCompanions) is written in the file. */
function companionIn(source: string, re: RegExp): boolean {
  if (companionOf?.[0] !== source || companionOf[1] !== re)
    companionOf = [source, re, re.test(source)];
  return companionOf[2];
}
let companionOf: [string, RegExp, boolean] | null = null;

/**
 * Whether a rule can take the dotted name found at `m`: a reference rule names it, or it is
 * called as a call rule of its name needs (Compiled.callNeedOf). A chain that goes on
 * (`torch.max.x`), or is written otherwise than `a.b.c`, is left to the tree.
 */
function chainCanMatch(
  c: Compiled,
  aliases: Map<string, string>,
  source: string,
  m: [number, number, string],
): boolean {
  const text = m[2];
  if (!PLAIN_CHAIN.test(text)) return true;
  const open = skipGap(source, m[1]);
  const next = source.charCodeAt(open);
  if (next === 46 || next === 35) return true;
  const name = plainChainName(text, aliases);
  if (name === null) return true;
  if (bestReference(c.references, name)) return true;
  if (next !== 40) return false;
  // a method called on a name a rule knows by itself: `torch.version.cuda.replace(".", "")`
  const dot = name.lastIndexOf('.');
  if (dot > 0 && name.indexOf('.') < dot && namedReference(c, name.slice(0, dot))) return true;
  const need = c.callNeedOf(name);
  return !!need && callMayMatch(source, tokensOf(source), m[0], open, need);
}

const CLAUSES = new Set([ELSE, ELIF, EXCEPT, FINALLY]);
const NONE: ReadonlySet<number> = new Set();

/** A statement that starts with a string: a prefix (`rb`, `R`) or none, then a quote. */
function stringStatement(source: string, at: number): boolean {
  return /^[rRbBuUfF]{0,2}["']/.test(source.slice(at, at + 3));
}

/** One import statement of a file: where the search found it, and whether it is parsed. */
interface ImportPlan {
  /** The search's match: its line start and end. */
  start: number;
  end: number;
  /** Where its keyword is. */
  kw: number;
  /** A statement of the module's own (at the start of a statement line, not indented). */
  module: boolean;
  /** Read from its text (a plain statement that starts its statement line), else null. */
  read: ImportStatement | null;
  /** Parsed: the analysis reads its node, or the tree must see it where it is. */
  parse: boolean;
}

/**
 * The file's import statements, and which of them are parsed. Most of a file's imports
 * (`import os`, `from .utils import x`) only bind names, which their text says as well as the
 * tree; leaving them out of the parse is a fifth less text to parse. Parsed are: the statements
 * not read from text (written otherwise, or not starting a statement line), those a rule reports
 * or edits (nodeNeeded), those in a block whose being optional matters (optionalMatters), and
 * what tells where the module's leading import block ends (the tree decides
 * that, see analyzeSource): every module-level statement of that block that is not an import,
 * and the import before each of those and before its end.
 */
function importPlan(source: string, c: Compiled): { imports: ImportPlan[]; strings: number[] } {
  matches(null, source);
  if (planMemo?.[0] === c) return planMemo[1];
  const t = tokensOf(source);
  // only a statement of the module itself is left out: not a line that continues another
  // (`if x: \`), not one inside brackets; and none in a text with a lone `\r` (a line end to
  // the searches, not to the parser)
  const loneCR = loneCarriageReturn(source);
  /** The statement line that starts at `at` (a binary search), or -1. */
  const lineAt = (at: number) => {
    const starts = t.lineStarts;
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]! < at) lo = mid + 1;
      else hi = mid;
    }
    return lo < starts.length && starts[lo] === at ? lo : -1;
  };
  const plan: ImportPlan[] = [];
  for (const m of codeMatches(IMPORT_HINT, source)) {
    const start = m[0],
      end = m[1],
      text = m[2];
    const kw = start + text.search(/\S/);
    const line = loneCR ? -1 : lineAt(start);
    const module = kw === start && line >= 0 && !t.lineIndents[line];
    const read = line >= 0 ? readImportLine(source, kw) : null;
    // `from __future__ import …` is another kind of statement to the tree: it reads it
    const future = read?.module?.text === '__future__';
    plan.push({
      start,
      end,
      kw,
      module,
      read,
      parse: !read || future || nodeNeeded(c, read),
    });
  }
  // the libraries the module imports itself are required, however else they are imported
  const required = new Set<string>();
  for (const im of plan)
    if (im.module && im.read) for (const m of importedModules(im.read)) required.add(rootOf(m));
  for (const im of plan)
    if (!im.parse && !im.module) im.parse = optionalMatters(c, im.read!, required);
  const byStart = new Map(plan.filter((im) => im.module).map((im) => [im.start, im]));
  // the tree's reading of the block (analyzeSource) goes from import to import, past docstrings
  // and try/if blocks of imports, and ends at any other statement: whichever of those ends it,
  // the import before each is parsed, so the tree finds the same end; and a string statement
  // there is parsed too (left out, it would end the block where a whole parse goes on)
  const strings: number[] = [];
  let pending: ImportPlan | null = null;
  for (let i = 0; i < t.lineStarts.length; i++) {
    if (t.lineIndents[i]) continue;
    const start = t.lineStarts[i]!;
    const im = byStart.get(start);
    if (im) {
      pending = im;
      continue;
    }
    // before the first import nothing is left out that the tree would have read; a clause
    // (`except:`, `else:`) belongs to the statement before
    const word = t.lineWords[i]!;
    if (!plan.length || start < plan[0]!.start || CLAUSES.has(word)) continue;
    if (pending) pending.parse = true;
    pending = null;
    if (stringStatement(source, start)) strings.push(start);
    else if (word !== TRY && word !== IF) break;
  }
  if (pending) pending.parse = true;
  planMemo = [c, { imports: plan, strings }];
  return planMemo[1];
}

/**
 * Whether it matters that an import inside a block is optional (`try: import apex` … `except
 * ImportError`), which the tree tells: where it imports a library whose uses a rule reports only
 * if it is required (Rule.uses) and the module does not import it itself (`required`). An
 * import an import rule reports is parsed anyway (nodeNeeded); any other, such as
 * `from torch.distributed.fsdp import …` inside a function, is read from its text alone.
 */
function optionalMatters(c: Compiled, s: ImportStatement, required: Set<string>): boolean {
  // an extension's import is told unless it is guarded
  if (c.extensions.length && s.names.some((n) => c.extensionName(n.name))) return true;
  if (c.extensions.length && s.from && c.extensionName(s.module?.text ?? '')) return true;
  return importedModules(s).some((m) => {
    const root = rootOf(m);
    return c.usedRoots.has(root) && !required.has(root);
  });
}

const rootOf = (name: string) => {
  const dot = name.indexOf('.');
  return dot < 0 ? name : name.slice(0, dot);
};

/**
 * The reference rule a from-import is reported by: the first imported name a rule knows, whichever
 * place it has in the list (`from torch.utils.cpp_extension import BuildExtension, CUDAExtension`
 * is edited with the extension build; `from torch.profiler import ProfilerActivity, profile` must
 * change with its uses).
 */
function importReference(
  c: Compiled,
  s: ImportStatement,
): { name: string; best: Best } | undefined {
  const module = s.module!.text;
  const names = s.names.length ? s.names : [{ name: '' }];
  for (let i = 0; i < names.length; i++) {
    const name = `${module}.${names[i]!.name}`;
    const best = importedReference(c, name);
    if (best) return { name, best };
  }
  return undefined;
}

/**
 * The reference rule of a module a plain import binds to an alias (`import torch.cuda.amp as
 * amp`): the alias's uses cannot say the module's path, so the import is where it is fixed.
 * Without an alias (`import torch.cuda`) the uses name it themselves.
 */
function aliasedReference(c: Compiled, n: ImportedName): Best | undefined {
  if (n.alias === null || !c.roots.has(rootOf(n.name))) return undefined;
  // the module itself, or one a rule takes whole (`torch.cuda`: every `torch.cuda.*`)
  const best = importedReference(c, n.name) ?? importedReference(c, `${n.name}.*`);
  return best && !best.r.uses ? best : undefined;
}

/** A reference rule that can speak of an import: not one of values only (`torch.cuda` kept). */
function importedReference(c: Compiled, name: string): Best | undefined {
  const best = bestReference(c.references, name);
  return best?.r.match.asValue ? undefined : best;
}

/** Whether the analysis reads an import statement's node: a rule reports or edits it. */
function nodeNeeded(c: Compiled, s: ImportStatement): boolean {
  if (importRuleModules(c, s).some((m) => c.importRulesOf(m).covered)) return true;
  // `from torch.cuda.amp import autocast`: a reference rule's finding and edit are on it
  if (s.from && s.module && c.roots.has(s.module.text.split('.')[0]!) && importReference(c, s))
    return true;
  // `import torch.cuda.amp as amp`: so are they on the module an alias binds
  if (!s.from && s.names.some((n) => aliasedReference(c, n))) return true;
  // the import of a patch function that a call-name rule removes with its call
  return s.from && s.names.length === 1 && c.callNames.some(({ re }) => re.test(s.names[0]!.text));
}

/**
 * The call-name hint where it can match: its regex tries every offset of a file, and a file
 * without one of the rules' words holds no match.
 */
function callHint(c: Compiled, source: string): RegExp | null {
  matches(null, source);
  // asked twice per file (candidates, analysis): the words looked for once
  if (callHintOf?.[0] !== c)
    callHintOf = [c, c.callWords.some((w) => written(source, w)) ? c.callHint : null];
  return callHintOf[1];
}
let callHintOf: [Compiled, RegExp | null] | null = null;

/** Which words the last text holds: each looked for once (a search of the whole text when absent). */
const writtenMemo = new Map<string, boolean>();
function written(source: string, word: string): boolean {
  matches(null, source);
  let is = writtenMemo.get(word);
  if (is === undefined) writtenMemo.set(word, (is = source.includes(word)));
  return is;
}

/**
 * The definition hint where it can match: led by `def`, it was tried at every definition of
 * every file (10k on a 217k-line tree), and a file without one of the rules' words holds no
 * match.
 */
function definitionHint(c: Compiled, source: string): RegExp | null {
  matches(null, source);
  if (definitionHintOf?.[0] !== c)
    definitionHintOf = [
      c,
      !c.definitionWords || c.definitionWords.some((w) => written(source, w))
        ? c.definitionHint
        : null,
    ];
  return definitionHintOf[1];
}
let definitionHintOf: [Compiled, RegExp | null] | null = null;

/**
 * The loader calls that can bind an extension in this text: a call binds where its name
 * resolves to a loader (`torch.utils.cpp_extension.load`), through the file's imports or as
 * written, so every segment of some loader's name is written somewhere in the file. Elsewhere
 * `load(` is `torch.load`, `json.load`, `yaml.load` — in most training scripts — and none of
 * those calls is a candidate. Where one loader can bind, every loader's call is looked for, as
 * an import can give one loader another's name (`from mmcv.utils import load_ext as load`).
 * Null: none can.
 */
function loaderHint(c: Compiled, source: string): RegExp | null {
  matches(null, source);
  if (loaderHintOf?.[0] !== c) {
    // the longest (rarest) segment of a loader's first
    const bindable = c.loaderSegments.some((segs) => segs.every((seg) => written(source, seg)));
    loaderHintOf = [c, bindable ? c.loaderHint : null];
  }
  return loaderHintOf[1];
}
let loaderHintOf: [Compiled, RegExp | null] | null = null;

/**
 * A loader imported under another name (`from torch.utils.cpp_extension import load as
 * load_extension`, PreciseRoIPooling's): its calls bind an extension as `load(` does. Null: none.
 */
function renamedLoaders(c: Compiled, aliases: Map<string, string>): RegExp | null {
  let names: string[] | null = null;
  // (forEach: a destructuring for-of made an entry per name before V8 optimised it)
  aliases.forEach((full, local) => {
    const dot = full.lastIndexOf('.');
    // most names are bound as themselves; a loader's is rare
    if (full.length - dot - 1 === local.length && full.endsWith(local)) return;
    if (!c.loaderLasts.has(full.slice(dot + 1))) return;
    if (c.loaders.some((l) => full === l || full.endsWith(`.${l}`))) (names ??= []).push(local);
  });
  return names ? wordsThen(names, '\\s*\\(') : null;
}

export const RAISE = ledBy(/^[ \t]*raise\b/gm, ['raise'], true);

const bestMemo = new WeakMap<RuleOf<'reference'>[], Map<string, Best | undefined>>();
type Best = { r: RuleOf<'reference'>; p: string };

/** The reference rule that names this very name (no wildcard's), if any. */
function namedReference(c: Compiled, name: string): Best | undefined {
  const best = bestReference(c.references, name);
  return best?.p === name ? best : undefined;
}

/**
 * A module imported under the name compiled extensions go by (`from . import cuda as _C`, nerfacc's
 * package that loads its kernels): the alias says what the module is, whatever its own name.
 */
const EXTENSION_ALIAS = /^_(?:C|ext)$/;
/**
 * Where the statement starting at `at` (a statement line's start) ends: the next statement line
 * indented no deeper, or `end`.
 */
function statementEnd(t: SourceTokens, at: number, end: number): number {
  const starts = t.lineStarts;
  const lo = lastAtOrBefore(starts, at);
  const indent = t.lineIndents[lo]!;
  for (let i = lo + 1; i < starts.length; i++) if (t.lineIndents[i]! <= indent) return starts[i]!;
  return end;
}
/**
 * Whether a node is in the branch of an `if` taken for CUDA tensors only (`if x.is_cuda:`,
 * `if x.device.type == "cuda":`): the other branch is what an NPU tensor runs.
 */
function cudaBranch(node: Node, test = CUDA_TENSOR_TEST): boolean {
  for (let n: Node | null = node; n && n.type !== 'function_definition'; n = n.parent) {
    const up: Node | null = n.parent;
    if (
      (up?.type === 'if_statement' || up?.type === 'elif_clause') &&
      up.childForFieldName('consequence')?.equals(n) &&
      test.test(up.childForFieldName('condition')?.text ?? '')
    )
      return true;
  }
  return false;
}

/** A test for a CUDA tensor: `x.is_cuda`, `x.device.type == "cuda"`. */
const CUDA_TENSOR_TEST = /\bis_cuda\b|==\s*["']cuda["']/;
/**
 * A test for CUDA at all: a CUDA tensor, a CUDA platform (`current_platform.is_cuda()`,
 * `_is_cuda`), or CUDA available (`torch.cuda.is_available()`).
 */
export const CUDA_TEST = /\b_?is_cuda\b|==\s*["']cuda["']|\bcuda\s*\.\s*is_available\s*\(/;

/** `Fn.apply(`: an autograd Function called. */
const APPLY_CALL = /\b\w+[ \t]*\.[ \t]*apply[ \t]*\(/g;
/** `x.device.type == "cpu"`: the test that keeps a PyTorch path for the CPU alone. */
const CPU_TEST = /\.\s*device\s*\.\s*type\s*==\s*["']cpu["']/g;

/**
 * What a file's imports bind of compiled extensions, in one pass over them: `modules`, the local
 * names bound to an extension module under another name (`import pkg._ext as ext`, `from pkg
 * import _C as C`; the `from pkg import _C` form binds the name itself), and `functions`, the
 * functions imported from one (`from pkg._C import nms as _nms` → `_nms`).
 */
function extensionImports(
  c: Compiled,
  bound: [string, string][],
): { modules: string[]; functions: string[] } {
  const modules: string[] = [];
  const functions: string[] = [];
  for (let i = 0; i < bound.length; i++) {
    const name = bound[i]![0];
    const local = bound[i]![1];
    const dot = name.lastIndexOf('.');
    const module = dot > 0 ? name.slice(0, dot) : '';
    // whatever is imported from a compiled module is one of its ops, called directly (also one
    // named like a module: `from pointops._C import knn_query_cuda`)
    if (module && !NOT_EXTENSION.test(module) && c.extensionName(module)) functions.push(local);
    // a compiled module bound under another name (not a module's function of its own name)
    if (
      !ownNamed(name) &&
      c.extensionName(name) &&
      !name.startsWith('torch.') &&
      !c.extensionName(local)
    )
      modules.push(local);
  }
  return { modules, functions };
}

/** `from .gpu_nms import gpu_nms`: a module's function of the module's own name. */
function ownNamed(what: string): boolean {
  const dot = what.lastIndexOf('.');
  return dot > 0 && what.slice(0, dot).split('.').pop() === what.slice(dot + 1);
}

/** The most specific reference rule for a dotted name (longest matching pattern wins). */
function bestReference(rules: RuleOf<'reference'>[], name: string): Best | undefined {
  // the same few names recur in every file of a project
  let memo = bestMemo.get(rules);
  if (!memo) bestMemo.set(rules, (memo = new Map()));
  if (memo.has(name)) return memo.get(name);
  if (memo.size > 20000) memo.clear();
  const best = findBestReference(rules, name);
  memo.set(ownText(name), best);
  return best;
}

function findBestReference(rules: RuleOf<'reference'>[], name: string): Best | undefined {
  let best: Best | undefined;
  for (const r of rules) {
    const p = r.match.names.find((n) => nameMatches(n, name));
    if (!p || (r.match.except ?? []).some((e) => nameMatches(e, name))) continue;
    if (!best || p.length > best.p.length) best = { r, p };
  }
  return best;
}

/** The node is a value kept or handed back: assigned, returned, or a conditional's branch. */
function isValue(node: Node, up: Node | null, upType: string | undefined): boolean {
  if (upType === 'return_statement' || upType === 'conditional_expression') return true;
  return upType === 'assignment' && !!up!.childForFieldName('right')?.equals(node);
}

/** Whitespace, or a line continuation, between the segments of a dotted name. */
const GAP = String.raw`(?:\s|\\\n)*`;

/**
 * Where an imported name starts a chain some rule can match: `torch` only as `torch.cuda…`,
 * `torch.backends…` and the like, `nn` (torch.nn) only as `nn.functional.scaled_dot_product_attention`,
 * `cuda` (from torch) anywhere. So ordinary model code (`nn.Linear`, `F.relu`, `dist.all_reduce`)
 * never becomes a candidate, which keeps the tree work to the places that matter. In code only
 * (not in comments or plain strings), in order, none overlapping the one before.
 *
 * Each imported name has its own regex, shared by every file that imports it: one regex per
 * file's set of imports (thousands of characters each) cost more to compile than to run. The
 * matches are what that one alternation would find — the earliest first, at one offset the
 * name imported first, each search resuming where the previous match ended — as no name's chain
 * can start inside another chain of the same name.
 */
export function chainMatches(
  c: Compiled,
  aliases: Map<string, string>,
  text: string,
): [number, number, string][] {
  matches(null, text);
  // the names with a regex, in order, decide the matches (and key them)
  const res: RegExp[] = [];
  let key = '';
  // forEach: a for-of over a Map's entries made an entry array and iterator results per name
  aliases.forEach((full, local) => {
    const re = chainRegex(c, local, full);
    if (!re) return;
    res.push(re);
    key += `${local}\0${full}\n`;
  });
  const hit = chainMemo.get(key);
  if (hit) return hit;
  const found: [number, number, string, number][] = [];
  for (let order = 0; order < res.length; order++)
    for (const m of matches(res[order]!, text)) found.push([m[0], m[1], m[2], order]);
  found.sort((a, b) => a[0] - b[0] || a[3] - b[3]);
  const tokens = found.length ? tokensOf(text) : null;
  const out: [number, number, string][] = [];
  let end = 0;
  for (const m of found) {
    const start = m[0],
      stop = m[1],
      t = m[2];
    if (start < end) continue;
    end = stop;
    if (inCode(tokens!, start)) out.push([start, stop, t]);
  }
  chainMemo.set(key, out);
  return out;
}

/** The regex of the chains some rule can match from one imported name (null: none). */
export function chainRegex(c: Compiled, local: string, full: string): RegExp | null {
  // most imported names are under no root a rule knows (asked for each of every file's imports)
  const dot = full.indexOf('.');
  if (!c.roots.has(dot < 0 ? full : full.slice(0, dot))) return null;
  const key = `${local}\0${full}`;
  const hit = c.chainRegexes.get(key);
  if (hit !== undefined) return hit;
  let alternative: string | null = null;
  local = ownText(local);
  full = ownText(full);
  if (c.roots.has(full.split('.')[0]!)) {
    const rests = new Set<string>();
    let whole = false;
    for (const pattern of c.patterns) {
      const p = pattern.endsWith('.*') ? pattern.slice(0, -2) : pattern;
      if (p === full || (pattern.endsWith('.*') && full.startsWith(`${p}.`))) whole = true;
      else if (p.startsWith(`${full}.`)) rests.add(p.slice(full.length + 1));
    }
    const name = escape(local);
    if (whole) alternative = `${name}\\b`;
    else if (rests.size)
      alternative = `${name}${GAP}\\.${GAP}(?:${[...rests]
        .map((r) => r.split('.').map(escape).join(`${GAP}\\.${GAP}`))
        .join('|')})\\b`;
  }
  if (c.chainRegexes.size > 5000) c.chainRegexes.clear();
  // every match starts with the local name
  const re = alternative ? wordLed(new RegExp(`\\b(?:${alternative})`, 'g'), [local]) : null;
  c.chainRegexes.set(ownText(key), re);
  return re;
}

let memoText: string | null = null;
const memo = new Map<RegExp, [number, number, string][]>();
const codeMemo = new Map<RegExp, [number, number, string][]>();
let memoTokens: SourceTokens | null = null;
const stringMemo = new Map<RegExp, [number, number, string][]>();
const chainMemo = new Map<string, [number, number, string][]>();
let planMemo: [Compiled, { imports: ImportPlan[]; strings: number[] }] | null = null;

/** The text's strings and comments (kept for the last text, as its matches are). */
function tokensOf(text: string): SourceTokens {
  if (text !== memoText) matches(null, text);
  memoTokens ??= sourceTokens(text);
  return memoTokens;
}

/**
 * Every match of a global regex over the text, [start, end) of the whole match: kept for the
 * last text, so the searches that choose what to parse serve the analysis too.
 */
function matches(re: RegExp | null, text: string): [number, number, string][] {
  if (text !== memoText) {
    memo.clear();
    codeMemo.clear();
    stringMemo.clear();
    chainMemo.clear();
    planMemo = null;
    callHintOf = null;
    definitionHintOf = null;
    writtenMemo.clear();
    loaderHintOf = null;
    dynamicOf = null;
    memoTokens = null;
    memoText = text;
  }
  if (!re) return [];
  let hit = memo.get(re);
  if (!hit) {
    hit = scan(re, text);
    memo.set(re, hit);
  }
  return hit;
}

/** The matches that start in code: not in a comment or a plain string (no rule takes those). */
function codeMatches(re: RegExp | null, text: string): [number, number, string][] {
  const all = matches(re, text);
  if (!re || !all.length) return all;
  let hit = codeMemo.get(re);
  if (!hit) {
    const t = tokensOf(text);
    hit = all.filter((m) => inCode(t, m[0]));
    codeMemo.set(re, hit);
  }
  return hit;
}

/**
 * The string rules' matches that lie in one string a string rule can take: a plain string whose
 * text (between its quotes, as the tree reads it) some rule's pattern matches, or any f-string
 * (its interpolations read as "0") or unclosed string (left to the parser). The matches a search
 * of the whole file finds there (no pattern matches a quote, so none reaches into a string from
 * outside), found by searching those strings only: the whole-file search stopped at every `cuda`
 * of the code, and was one of a scan's costliest.
 */
export function stringMatches(c: Compiled, text: string): [number, number, string][] {
  const re = c.stringHint;
  if (!re) return [];
  matches(null, text);
  const hit = stringMemo.get(re);
  if (hit) return hit;
  const t = tokensOf(text);
  const kept: [number, number, string][] = [];
  for (let i = 0; i < t.kinds.length; i++) {
    const kind = t.kinds[i];
    if (kind === COMMENT) continue;
    if (kind === STRING) {
      const inner = text.slice(t.innerStarts[i], t.innerEnds[i]);
      if (!c.stringAny!.test(inner)) continue;
    }
    const from = t.starts[i]!;
    const to = t.ends[i]!;
    // an unclosed string ends before its line's end, and a match may reach past it there
    const piece = text.slice(from, kind === OPEN_STRING ? to + 1 : to);
    re.lastIndex = 0;
    for (let m = re.exec(piece); m; m = re.exec(piece)) {
      const end = from + m.index + m[0].length;
      if (end <= to) kept.push([from + m.index, end, m[0]]);
      if (!m[0].length) re.lastIndex++;
    }
  }
  stringMemo.set(re, kept);
  return kept;
}

/** Every match of a global regex over the text, [start, end, text], by the fastest equal search. */
export function scan(re: RegExp, text: string): [number, number, string][] {
  const fromEquals = equalsLed.get(re);
  if (fromEquals) return fromEquals(text);
  return allMatches(re, text).map((m) => [m.index, m.index + m[0].length, m[0]]);
}

/** Regexes searched from their `=` (keywordHint), and how. */
const equalsLed = new WeakMap<RegExp, (text: string) => [number, number, string][]>();
const SPACE_BEFORE = /\s/;
const WORD_BEFORE = /\w/;

/**
 * `\b(?:name|…)\s*=`, the keyword arguments a rule can match. Its matches are found from each
 * `=` of the text, with a look-behind for the rest: the same matches (none can overlap another:
 * each is a whole name, spaces and its first `=`) as the regex's own search, which tries every
 * offset with ten alternatives and was a one-shot scan's costliest search.
 */
function keywordHint(names: string[]): RegExp {
  const alternatives = names.map(escape).join('|');
  const re = new RegExp(`\\b(?:${alternatives})\\s*=`, 'g');
  const before = new RegExp(`(?<=\\b(?:${alternatives})\\s*)=`, 'y');
  equalsLed.set(re, (text) => {
    const out: [number, number, string][] = [];
    for (let q = text.indexOf('='); q >= 0; q = text.indexOf('=', q + 1)) {
      before.lastIndex = q;
      if (!before.test(text)) continue;
      let start = q;
      while (start > 0 && SPACE_BEFORE.test(text[start - 1]!)) start--;
      while (start > 0 && WORD_BEFORE.test(text[start - 1]!)) start--;
      out.push([start, q + 1, text.slice(start, q + 1)]);
    }
    return out;
  });
  return re;
}

/**
 * A file whose analysis ran past its deadline: broken or generated text that tree-sitter's error
 * recovery, or the lookups in the tree it makes, would take minutes over. Reported, not analysed.
 */
export class TooCostly extends Error {
  constructor() {
    super('the analysis ran past its deadline');
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
  /** Parse the whole file, not only what a rule can match (the same findings, slower). */
  whole = false,
  /** performance.now() past which the file is given up (TooCostly); none by default. */
  deadline = Infinity,
): FileAnalysis {
  const c0 = compile(rules);
  const candidates = candidateOffsets(source, c0);
  // a whole parse reads every match: the reference the narrowed reading is tested against
  const passed = whole ? NONE : candidates.pruned;
  const relevant = whole
    ? { patches: [], ranges: [] }
    : relevantSource(source, tokensOf(source), candidates, KEEP, LOOK);
  const ranges = whole
    ? []
    : withoutLeadingComments(
        source,
        tokensOf(source),
        withoutParameters(source, tokensOf(source), relevant.ranges, candidates.at),
      );
  // tree-sitter asks every hundred steps whether to go on: its error recovery is quadratic on
  // some broken text (an unclosed string of 500 kB: minutes)
  let steps = 0;
  const progressCallback = () => (++steps & 15) === 0 && performance.now() > deadline;
  const tree = ranges.length
    ? parser.parse(rangedInput(source, ranges, relevant.patches), null, {
        includedRanges: ranges,
        progressCallback,
      })
    : parser.parse(source, null, { progressCallback });
  if (!tree && performance.now() > deadline) {
    // a cancelled parse would resume where it stopped at the next file's
    parser.reset();
    throw new TooCostly();
  }
  if (!tree)
    return {
      findings: [],
      importsTorch: false,
      entryPoint: false,
      parseErrors: true,
      importEnd: -1,
      backendSwitch: null,
    };
  try {
    return analyzeTree(tree.rootNode, source, file, rules, lang, passed, deadline);
  } finally {
    tree.delete();
  }
}

/** What analyzeSource finds in a file's tree. */
function analyzeTree(
  root: Node,
  source: string,
  file: string,
  rules: Rule[],
  lang: Language,
  passed: ReadonlySet<number>,
  deadline: number,
): FileAnalysis {
  const c = compile(rules);
  // Every lookup walks down from the root past each node's earlier children: where syntax
  // errors flatten thousands of tokens into one node, each is linear and the file quadratic
  // (20k unclosed calls: 20 s), and walking up from one node deep in nested brackets as much.
  // The deadline is checked at each lookup (a few tens of thousands in a 200k-line scan).
  const nodeAt = (start: number, end = start): Node | null => {
    if (performance.now() > deadline) throw new TooCostly();
    return root.descendantForIndex(start, end);
  };
  // imports start a line: the search finds the keywords in code; those left out of the parse
  // were read from their text (importPlan), the tree confirms the others
  const importStatements: ImportStatement[] = [];
  /** Per statement: not the module's own (only such an import can be under a try or an if). */
  const indented: boolean[] = [];
  /** Per statement: where it starts (its keyword). */
  const importStarts: number[] = [];
  for (const { end, kw, module, read, parse } of importPlan(source, c).imports) {
    if (!parse) {
      // not the module's own: not optional to the analysis (optionalMatters)
      importStatements.push(read!);
      indented.push(false);
      importStarts.push(kw);
      continue;
    }
    const stmt = nodeAt(kw, end - 1)?.parent;
    if (!stmt || stmt.startIndex !== kw) continue;
    const type = stmt.type;
    if (type === 'import_statement' || type === 'import_from_statement') {
      importStatements.push(readImport(source, stmt, type));
      indented.push(!module);
      importStarts.push(kw);
    }
  }
  const aliases = importAliases(importStatements);
  starTorch(
    source,
    aliases,
    importStarts.some((at) => starAt(source, at)),
  );
  callBindings(source, aliases);
  // libraries imported only optionally (`try: import apex … except ImportError`, `if
  // is_xformers_available(): import xformers`): the project already runs without them, so
  // their uses are not findings
  // each import statement read once: the modules it names, whether it is optional
  const demanded = demandedTries(source, importStatements, indented);
  const imported = importStatements.map((stmt, i) => ({
    stmt,
    modules: importRuleModules(c, stmt),
    // a statement of the module's own is under no try or if
    optional:
      indented[i]! &&
      optionalImport(stmt.node!, source) &&
      !demanded.has(tryOf(stmt.node!)?.startIndex ?? -1),
  }));
  const optionalLibs = new Set<string>();
  const requiredLibs = new Set<string>();
  for (const { modules, optional } of imported)
    for (const m of modules) (optional ? optionalLibs : requiredLibs).add(m.split('.')[0]!);
  for (const lib of requiredLibs) optionalLibs.delete(lib);

  let lineStarts: Int32Array | undefined;
  const pos = (index: number) => {
    lineStarts ??= newlineStarts(source);
    const { row, column } = pointAt(lineStarts, index);
    return { line: row + 1, column: column + 1 };
  };
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const add = (
    rule: Rule,
    node: Pick<Node, 'startIndex' | 'endIndex'>,
    vars: Record<string, string>,
    edits?: Edit[],
    /** The text hints choose by, where it is not what the finding quotes (an f-string's). */
    matched?: string,
  ) => {
    const key = `${rule.id}@${node.startIndex}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (rule.unlessFile && unlessFile(rule.unlessFile, source)) return;
    const s = pos(node.startIndex);
    const e = pos(node.endIndex);
    // {{count}} is filled once the file is done (rules that report once per file)
    const fill = (t: string) =>
      t.replace(/\{\{(\w+)\}\}/g, (all, k: string) => vars[k] ?? (k === 'count' ? all : ''));
    const hintAt = rule.hints?.findIndex((h) =>
      new RegExp(h.when).test(matched ?? vars.name ?? vars.text ?? ''),
    );
    const hint = hintAt !== undefined && hintAt >= 0 ? rule.hints![hintAt] : undefined;
    const fix = hint?.fix ?? rule.fix;
    const message = hint?.message ?? rule.message;
    // the same texts as keys, so a stored scan reads in whichever language is chosen later
    const text = {
      message: ruleMsg(rule.id, 'message', vars, hint?.message ? hintAt : undefined),
      ...(fix ? { fix: ruleMsg(rule.id, 'fix', vars, hint?.fix ? hintAt : undefined) } : {}),
    };
    findings.push({
      ruleId: rule.id,
      file,
      line: s.line,
      column: s.column,
      endLine: e.line,
      endColumn: e.column,
      severity: rule.severity,
      category: rule.category,
      message: fill(message[lang]),
      ...(fix || edits
        ? { fix: { description: fix ? fill(fix[lang]) : '', edits: edits ?? [] } }
        : {}),
      text,
    });
  };
  const inComment = (n: Node | null) => n?.type === 'comment';

  // strings: device names, backends, environment variable names
  const doneStrings = new Set<number>();
  for (const m of stringMatches(c, source)) {
    const start = m[0],
      end = m[1];
    let node = nodeAt(start, end);
    while (node && node.type !== 'string' && node.type !== 'module' && !inComment(node))
      node = node.parent;
    if (!node || node.type !== 'string' || doneStrings.has(node.startIndex)) continue;
    doneStrings.add(node.startIndex);
    // a docstring (any string standing as a statement) is prose: "the nvidia-smi wrapper"
    if (node.parent?.type === 'expression_statement' && node.parent.namedChildCount === 1) continue;
    const content = stringContent(node);
    if (!content) continue;
    const dictKey = node.parent?.type === 'pair' && firstChild(node.parent, node);
    const compared = node.parent?.type === 'comparison_operator' || dictKey;
    for (const { r, re } of c.strings) {
      if (!re.test(content.value)) continue;
      if (compared && r.match.notCompared) continue;
      if (r.match.dictKey && !dictKey) continue;
      if (r.match.dictIn && !dictIn(node, r.match.dictIn)) continue;
      // with inCallOf, the setting is that call's keyword (or its positional argument, below)
      const callKeyword =
        !!r.match.settingName &&
        !!r.match.inCallOf &&
        keywordOfCall(node, r.match.settingName, r.match.inCallOf);
      if (
        r.match.settingName &&
        !r.match.inCallOf &&
        !isSettingOf(
          node,
          r.match.settingName,
          r.match.settingBare
            ? 'any'
            : r.match.settingPassed
              ? 'passed'
              : r.match.settingAssigned
                ? 'member'
                : 'none',
        )
      )
        continue;
      if (r.match.envSet && !envSet(node)) continue;
      if (r.match.envValue) {
        const value = envValueOf(node);
        if (value === null || !new RegExp(r.match.envValue).test(value)) continue;
      }
      if (r.match.inCallOf && !callKeyword && !calleeMatches(node, r.match.inCallOf)) continue;
      if (r.match.notInCallOf && insideCallOf(node, r.match.notInCallOf)) continue;
      if (r.match.nextArg && !nextArgMatches(node, r.match.nextArg)) continue;
      if (r.match.onlyCompared) {
        const comparison = comparedIn(node);
        if (!comparison) continue;
        const { comparedWith: only, notComparedWith: not } = r.match;
        if (only && !comparedWith(comparison, node, new RegExp(only), true)) continue;
        if (not && comparedWith(comparison, node, new RegExp(not))) continue;
      }
      const rw = r.rewrite;
      // `"NCCL"` is torch's `"nccl"` too: found in any case, replaced in the case it is written
      const from = rw?.kind === 'string-replace' ? rw.from.toUpperCase() : '';
      const piece = from
        ? content.pieces.find((p) => p.text.toUpperCase().includes(from))
        : undefined;
      const at = piece ? piece.text.toUpperCase().indexOf(from) : -1;
      const written = piece ? piece.text.slice(at, at + from.length) : '';
      const edits =
        rw?.kind === 'string-replace' && piece
          ? [
              {
                start: piece.offset + at,
                end: piece.offset + at + from.length,
                text: written === from && written !== rw.from ? rw.to.toUpperCase() : rw.to,
              },
            ]
          : undefined;
      // a replacement inside a string of several lines (a job script's template) is reported on
      // its own line
      const edit = edits?.[0];
      const spans = edit && source.lastIndexOf('\n', edit.start) >= node.startIndex;
      add(
        r,
        spans ? { startIndex: edit.start, endIndex: edit.end } : node,
        // the finding quotes the text as written; hints choose by it as the rules read it
        { text: content.shown },
        edits,
        content.value,
      );
    }
  }

  // names bound by imports of modules the rules know: the longest dotted chain that resolves,
  // so torch.cuda.amp.autocast is one finding; a call of it is checked against the call rules
  const doneChains = new Set<number>();
  {
    for (const m of chainMatches(c, aliases, source)) {
      const start = m[0];
      if (passed.has(start)) continue;
      const id = nodeAt(start);
      if (!id || id.type !== 'identifier' || id.startIndex !== start) continue;
      // a name that is itself an attribute (`x.torch`) is not the imported module
      const up = id.parent;
      const upType = up?.type;
      if (upType === 'attribute' && !firstChild(up!, id)) continue;
      if (upType && IMPORT_PARENTS.has(upType)) continue;
      if (upType === 'keyword_argument' && firstChild(up!, id)) continue;
      // up the dotted chain; `above` holds the whole chain (each node read once)
      let chain: Node = id;
      let above = up;
      let aboveType = upType;
      while (aboveType === 'attribute' && firstChild(above!, chain)) {
        chain = above!;
        above = chain.parent;
        aboveType = above?.type;
      }
      // the name bound again (`flash_attn_func = None` in an import's handler): not a use
      if (
        aboveType === 'assignment' &&
        chain === id &&
        above!.childForFieldName('left')?.equals(id)
      )
        continue;
      const end = chain.endIndex;
      if (doneChains.has(chain.startIndex * 1e6 + end)) continue;
      doneChains.add(chain.startIndex * 1e6 + end);
      const name = chainName(source, chain, end, aliases);
      if (!name) continue;
      // a type annotation (`x: torch.cuda.LongTensor`) runs nowhere: porters leave it
      if (inAnnotation(above, aboveType)) continue;
      const called = aboveType === 'call' && firstChild(above!, chain);
      let best = bestReference(c.references, name);
      let at = chain;
      let known = name;
      // a method called on a name a rule knows by itself: `torch.version.cuda.replace(".", "")`
      const dot = best || !called ? -1 : name.lastIndexOf('.');
      if (dot > 0 && name.indexOf('.') < dot) {
        best = namedReference(c, name.slice(0, dot));
        const object = best && chain.childForFieldName('object');
        if (object) {
          at = object;
          known = name.slice(0, dot);
        } else best = undefined;
      }
      if (best?.r.match.asValue && !isValue(chain, above, aboveType)) best = undefined;
      if (best && !(best.r.uses && optionalLibs.has(name.split('.')[0]!)))
        add(best.r, at, { name: known }, renameSegment(best.r, at, source, known));
      if (called) checkCall(above!, name);
    }
  }

  function checkCall(call: Node, name: string) {
    // most calls of a known library's names are no call rule's: their arguments are not read
    const named = c.callRulesOf(name);
    if (!named.length) return;
    const args = call.childForFieldName('arguments');
    const argList = args?.namedChildren.filter((a): a is Node => !!a) ?? [];
    for (const r of named) {
      if (r.match.stringArg || r.match.withoutDevice) {
        // the device as GradScaler ("cuda", device=) and autocast (device_type=) take it
        const first =
          argList.find((a) => a.type !== 'keyword_argument') ??
          argList
            .find((a) => /^(device_type|device)$/.test(a.childForFieldName('name')?.text ?? ''))
            ?.childForFieldName('value');
        if (r.match.withoutDevice) {
          if (first) continue;
        } else {
          const s = first ? stringContent(first) : null;
          if (!s || s.value !== r.match.stringArg) continue;
        }
      }
      const without = r.match.withoutKeyword;
      if (
        without &&
        argList.some(
          (a) =>
            a.type === 'dictionary_splat' ||
            (a.type === 'keyword_argument' && a.childForFieldName('name')?.text === without),
        )
      )
        continue;
      const most = r.match.maxPositional;
      if (
        most !== undefined &&
        (argList.some((a) => a.type === 'list_splat') ||
          argList.filter((a) => !/^(?:keyword_argument|dictionary_splat|comment)$/.test(a.type))
            .length > most)
      )
        continue;
      if (r.match.inProduct && !inProduct(call)) continue;
      if (r.match.inGrid && !inGrid(call)) continue;
      // a keyword argument that matched is reported where it is written (`device_id=rank`
      // lines below the call's name)
      let at: Node = call;
      if (r.match.argRegex) {
        const re = new RegExp(r.match.argRegex);
        const tested = r.match.firstArgOnly
          ? argList.filter((a) => a.type !== 'keyword_argument').slice(0, 1)
          : argList;
        const hit = tested.find((a) => re.test(a.text));
        if (hit?.type === 'keyword_argument') at = hit;
        if (!hit) {
          const arg = r.match.argAssigned ? castOperand(tested[0]) : undefined;
          if (
            arg?.type !== 'identifier' ||
            !assignedBefore(call, arg.text, source).some((v) => re.test(v))
          )
            continue;
        }
      }
      if (r.id === 'add.set-device') {
        if (source.includes('set_device') && /\bset_device\s*\(/.test(source)) continue;
        add(r, call, { name }, setDeviceEdit(call));
        continue;
      }
      // `GradScaler(enabled=x)` → `GradScaler("npu", enabled=x)`: the argument goes first
      const rw = r.rewrite;
      const open = args?.startIndex ?? -1;
      add(
        r,
        at,
        { name },
        rw?.kind === 'insert-first-argument' && open >= 0 && source[open] === '('
          ? [{ start: open + 1, end: open + 1, text: argList.length ? `${rw.text}, ` : rw.text }]
          : rw?.kind === 'append-argument' && args && source[args.endIndex - 1] === ')'
            ? appendArgument(args, argList, rw.text)
            : rw?.kind === 'replace-expression' && at === call && !argList.length
              ? [{ start: call.startIndex, end: call.endIndex, text: rw.to }]
              : undefined,
      );
    }
  }

  /** `torch.npu.set_device(LOCAL_RANK)` on its own line before the statement that starts HCCL. */
  function setDeviceEdit(call: Node): Edit[] | undefined {
    const local = (full: string) => [...aliases].find(([, v]) => v === full)?.[0];
    const [os, torch] = [local('os'), local('torch')];
    if (!torch || (!os && !rankInScope(call))) return undefined;
    let stmt = call;
    while (stmt.parent && stmt.parent.type !== 'block' && stmt.parent.type !== 'module')
      stmt = stmt.parent;
    const lineStart = source.lastIndexOf('\n', stmt.startIndex - 1) + 1;
    const indent = source.slice(lineStart, stmt.startIndex);
    if (/\S/.test(indent)) return undefined;
    // the rank variable in scope wins: a function launched by mp.spawn(fn, …) gets its rank as
    // its first parameter and no LOCAL_RANK is set, so LOCAL_RANK would put every rank on NPU 0
    const rank = rankInScope(call);
    const device = rank ?? `int(${os}.environ.get("LOCAL_RANK", 0))`;
    const text = `${torch}.npu.set_device(${device})\n${indent}`;
    return [{ start: stmt.startIndex, end: stmt.startIndex, text }];
  }

  /**
   * The local rank as the enclosing function knows it: the first parameter of a function this
   * file passes to `spawn(fn, …)` (torch.multiprocessing), else a parameter named like a local
   * rank. Null where the function has neither (the environment's LOCAL_RANK is then right).
   */
  function rankInScope(node: Node): string | null {
    let fn: Node | null = node.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    if (!fn) return null;
    const name = fn.childForFieldName('name')?.text;
    const params = (fn.childForFieldName('parameters')?.namedChildren ?? [])
      .map((p) =>
        p?.type === 'identifier'
          ? p.text
          : p?.type === 'typed_parameter' ||
              p?.type === 'default_parameter' ||
              p?.type === 'typed_default_parameter'
            ? (p.childForFieldName('name')?.text ?? p.namedChildren[0]?.text ?? '')
            : '',
      )
      .filter((p) => p && p !== 'self');
    if (
      name &&
      params.length &&
      // the literal first: a regex led by an alternative of `\b`s tries every offset
      (source.includes('spawn') || source.includes('Process')) &&
      new RegExp(`${LAUNCH.source}${escape(name)}\\b`).test(source)
    )
      return params[0]!;
    return (
      params.find((p) => /^(local_rank|local_gpu|gpu|gpu_id|device_id)$/.test(p)) ??
      (name ? spawnedRankArgument(source, name, params) : null)
    );
  }

  // members: `.cuda()`, `.to(rank)`, `x.is_cuda`
  for (const m of codeMatches(c.memberHint, source)) {
    if (passed.has(m[0])) continue;
    const start = m[0],
      end = m[1],
      text = m[2];
    const nameAt = start + text.search(/[A-Za-z_]/);
    const ident = nodeAt(nameAt, end);
    const attr = ident?.parent;
    if (!ident || ident.type !== 'identifier' || attr?.type !== 'attribute') continue;
    if (firstChild(attr, ident)) continue;
    // read once: each read of a node's text asks the parser for its end
    const identText = ident.text;
    const call = attr.parent;
    const called = call?.type === 'call' && firstChild(call, attr);
    // a function of a module the file imports is no tensor's method: another library's
    // (`np.double(…)`) is no finding, torch's is where no call rule speaks for it already
    // (`F.silu(gate) * x` is the gated-activation call; `torch.silu(gate) * x` has no call rule)
    const object = attr.childForFieldName('object');
    if (called && object) {
      const module = canonicalName(object, aliases);
      if (moduleFunction(c, module, identText) && !shadowedName(object, source)) continue;
    }
    if (called) {
      // the arguments only where a rule reads them (most `.cuda()` calls are read by name alone)
      let args: Node[] | undefined;
      const argList = () =>
        (args ??=
          call.childForFieldName('arguments')?.namedChildren.filter((a): a is Node => !!a) ?? []);
      for (const r of c.methods) {
        if (identText !== r.match.name && !(r.match.inPlace && identText === `${r.match.name}_`))
          continue;
        if (r.match.inProduct && !inProduct(call)) continue;
        if (
          r.match.argsRegex &&
          !new RegExp(r.match.argsRegex).test(call.childForFieldName('arguments')?.text ?? '')
        )
          continue;
        if (r.match.objectRegex) {
          const re = new RegExp(r.match.objectRegex);
          if (
            !re.test(object?.text ?? '') &&
            !(
              r.match.objectAssigned &&
              object?.type === 'identifier' &&
              assignedBefore(call, object.text, source).some((v) => re.test(`(${v})`))
            )
          )
            continue;
        }
        if (r.match.firstArgIdentifier) {
          // the device as the first argument, or as `device=` (`batch.to(device=rank)`)
          let first: Node | null | undefined = argList()[0];
          if (first?.type === 'keyword_argument')
            first =
              first.childForFieldName('name')?.text === 'device'
                ? first.childForFieldName('value')
                : null;
          // an element of a device list too (`x.to(device=self.gpu_ids[0])`)
          const named = first?.type === 'subscript' ? first.childForFieldName('value') : first;
          if (!first || !named) continue;
          if (named.type === 'call') {
            // a tensor's own index (`.to(x.get_device())`), written `get_device()` in the list;
            // a module's function of that name (`lib.get_device()`) returns a device
            const fn = named.childForFieldName('function');
            const receiver = fn?.childForFieldName('object');
            if (
              fn?.type !== 'attribute' ||
              !receiver ||
              named.childForFieldName('arguments')?.namedChildCount ||
              !r.match.firstArgIdentifier.includes(
                `${fn.childForFieldName('attribute')?.text}()`,
              ) ||
              aliases.has(receiver.text.split('.')[0]!)
            )
              continue;
          } else if (named.type === 'integer') {
            if (named.text !== '0' || !r.match.firstArgIdentifier.includes('0')) continue;
          } else if (!['identifier', 'attribute'].includes(named.type)) continue;
          else if (!r.match.firstArgIdentifier.some((w) => endsWithName(named.text, w))) continue;
          // told at the device argument: a chained `.to(\n rank\n)` is edited there
          add(r, first, { text: first.text });
          continue;
        }
        const edits =
          r.rewrite?.kind === 'method-rename'
            ? [{ start: ident.startIndex, end: ident.endIndex, text: r.rewrite.to }]
            : undefined;
        add(r, methodSpan(call, ident, source), { name: identText }, edits);
      }
    } else {
      for (const r of c.attributes) {
        if (identText !== r.match.name) continue;
        // chosen only where the platform is CUDA's: the NPU takes the other branch
        if (r.match.notInCudaBranch && cudaBranch(attr, CUDA_TEST)) continue;
        const edits =
          r.rewrite?.kind === 'attribute-rename'
            ? [{ start: ident.startIndex, end: ident.endIndex, text: r.rewrite.to }]
            : undefined;
        add(r, attr, { text: attr.text }, edits);
        if (r.match.callers) returnedBy(attr, r);
      }
    }
  }

  /** `def num_sms(i): return props(i).multi_processor_count`: every `num_sms(…)` is flagged too. */
  function returnedBy(node: Node, r: Rule) {
    let up: Node | null = node.parent;
    while (up && up.type !== 'return_statement' && up.type !== 'function_definition')
      up = up.parent;
    if (up?.type !== 'return_statement') return;
    let fn: Node | null = up.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    const name = fn?.childForFieldName('name')?.text;
    if (!fn || !name) return;
    const re = new RegExp(`\\b${escape(name)}\\s*\\(`, 'g');
    for (const m of matches(re, source)) {
      const start = m[0];
      const id = nodeAt(start);
      const call = id?.parent;
      if (id?.type !== 'identifier' || call?.type !== 'call') continue;
      if (!firstChild(call, id)) continue;
      add(r, call, { text: `${name}()` });
    }
  }

  // compiled extensions: `from . import _C`, `ext = ext_loader.load_ext(…)` → every `ext.op(…)`
  if (c.extensions.length) {
    const bound = new Set<string>();
    /** Where each name bound to an extension (or to one of its ops) is imported. */
    const importedAt = new Map<string, number>();
    /** The names whose extension ops are called or taken in this file. */
    const used = new Set<string>();
    /** Where the extension's ops are called or taken, and the autograd Functions calling them. */
    const opsAt: [number, string][] = [];
    const functions = new Set<string>();
    // an import already guarded (`try: from . import _C` … `except ImportError:`) is not told
    /** The import statement binding each of those names. */
    const importedBy = new Map<string, number>();
    const bindAt = (local: string, i: number) => {
      if (imported[i]!.optional) return;
      importedAt.set(local, importStarts[i]!);
      importedBy.set(local, i);
    };
    // the extension's CPU kernels (`ext.op_cpu_forward`) run anywhere
    importStatements.forEach((stmt, i) => {
      if (!stmt.from || NOT_EXTENSION.test(stmt.module?.text ?? '')) return;
      for (const { name, alias } of stmt.names) {
        const local = alias ?? name;
        if (!name || !local) continue;
        if (c.extensionName(name) || (alias !== null && EXTENSION_ALIAS.test(alias))) {
          bound.add(local);
          bindAt(local, i);
        }
      }
    });
    // `import pkg._ext as ext_module`: the alias is the module; `from pkg._C import nms as f`:
    // every `f(…)` is the extension's op
    const boundFns = new Map<string, string>();
    importStatements.forEach((stmt, i) => {
      if (!stmt.from)
        for (const { name, alias } of stmt.names) {
          if (alias !== null) {
            if (
              name &&
              alias &&
              !name.startsWith('torch.') &&
              (c.extensionName(name) ||
                (EXTENSION_ALIAS.test(alias) && !NOT_EXTENSION.test(name)) ||
                autogradExtension(c, source, name, alias))
            ) {
              bound.add(alias);
              bindAt(alias, i);
            }
          }
          // `import roi_align_cuda`: a top-level extension module; `import lltm_cpp`, called in
          // an autograd Function
          else if (
            !name.includes('.') &&
            (c.extensionName(name) || autogradExtension(c, source, name, name))
          ) {
            bound.add(name);
            bindAt(name, i);
          }
        }
      const module = stmt.module?.text ?? '';
      if (!stmt.from || NOT_EXTENSION.test(module)) return;
      if (!/\w/.test(module) || !c.extensionName(module)) return;
      for (const { name, alias } of stmt.names) {
        const local = alias ?? name;
        // an op of an extension-like name (`from pointops._C import knn_query_cuda`) is still
        // called as a function; a submodule so named is read through `bound` as well
        if (name && local) {
          boundFns.set(local, name);
          bindAt(local, i);
        }
      }
    });
    for (const [local, op] of boundFns) {
      if (/(^|_)cpu(_|$)/.test(op)) continue;
      for (const m of matches(new RegExp(`\\b${escape(local)}\\s*\\(`, 'g'), source)) {
        const start = m[0];
        const id = nodeAt(start);
        const call = id?.parent;
        if (id?.type !== 'identifier' || call?.type !== 'call') continue;
        if (!firstChild(call, id)) continue;
        extensionCall(call, local, opsAt, functions);
        used.add(local);
      }
    }
    // (codeMatches's arrays are its memo: joined into a new one)
    const loader = loaderHint(c, source);
    const renamed = loader && renamedLoaders(c, aliases);
    const hinted = codeMatches(loader, source);
    const loaderCalls = renamed ? hinted.concat(codeMatches(renamed, source)) : hinted;
    for (const m of loaderCalls) {
      const start = m[0];
      let call = nodeAt(start)?.parent ?? null;
      while (call && call.type === 'attribute') call = call.parent;
      if (call?.type !== 'call' || call.startIndex > start) continue;
      const fn = call.childForFieldName('function');
      if (!fn) continue;
      const full = canonicalName(fn, aliases) ?? fn.text;
      const loads = c.extensions.some((r) =>
        r.match.loaders.some((l) => full === l || full.endsWith(`.${l}`) || fn.text === l),
      );
      const assign = call.parent;
      const target = assign?.type === 'assignment' ? assign.childForFieldName('left') : null;
      if (loads && target?.type === 'identifier') bound.add(target.text);
    }
    for (const [local, at] of namedLoads(c, source)) {
      bound.add(local);
      if (!importedAt.has(local)) importedAt.set(local, at);
    }
    // `fused_layer_norm_cuda = importlib.import_module("fused_layer_norm_cuda")` is its import
    for (const [local, at] of dynamicExtensions(c, source)) {
      bound.add(local);
      if (!importedAt.has(local)) importedAt.set(local, at);
    }
    for (const local of extensionAliases(source, bound)) bound.add(local);
    for (const local of bound) {
      const re = new RegExp(`\\b${escape(local)}${GAP}\\.${GAP}\\w+${GAP}\\(`, 'g');
      for (const m of matches(re, source)) {
        const start = m[0];
        const id = nodeAt(start);
        const attr = id?.parent;
        if (id?.type !== 'identifier' || attr?.type !== 'attribute') continue;
        if (!firstChild(attr, id)) continue;
        const call = attr.parent;
        if (call?.type !== 'call' || !firstChild(call, attr)) continue;
        const op = attr.childForFieldName('attribute')?.text ?? '';
        if (/(^|_)cpu(_|$)/.test(op)) continue;
        extensionCall(call, attr.text.replace(/\s+/g, ''), opsAt, functions);
        used.add(local);
      }
      // the op taken as a value: `nms = amp.float_function(_C.nms)`, `fn = _C.roi_pool_forward`,
      // `fwd, bwd = _C.expm, _C.expm_backward`
      const ref = new RegExp(`\\b${escape(local)}${GAP}\\.${GAP}\\w+\\b(?!${GAP}[(.])`, 'g');
      for (const m of matches(ref, source)) {
        const start = m[0];
        const id = nodeAt(start);
        const attr = id?.parent;
        if (id?.type !== 'identifier' || attr?.type !== 'attribute') continue;
        if (!firstChild(attr, id)) continue;
        const op = attr.childForFieldName('attribute')?.text ?? '';
        if (/(^|_)cpu(_|$)|^__/.test(op)) continue;
        // one of several taken at once (lietorch's `forward_op, backward_op = ext.expm,
        // ext.expm_backward`) is read as that whole value
        const several = attr.parent?.type === 'expression_list' || attr.parent?.type === 'tuple';
        const taken = several ? attr.parent! : attr;
        const up = taken.parent;
        const value =
          up?.type === 'argument_list' ||
          up?.type === 'return_statement' ||
          (up?.type === 'assignment' && up.childForFieldName('right')?.equals(taken));
        if (value) {
          extensionCall(attr, attr.text.replace(/\s+/g, ''), opsAt, functions);
          used.add(local);
        }
      }
    }
    // the import of an extension this file uses: the module loads only where it was built
    for (const r of c.extensions) {
      const importRule = r.match.importRule && rules.find((x) => x.id === r.match.importRule);
      if (!importRule) continue;
      const raiseRule = r.match.raiseRule && rules.find((x) => x.id === r.match.raiseRule);
      const raised = new Set<number>();
      for (const local of used) {
        const at = importedAt.get(local);
        if (at === undefined) continue;
        const lineEnd = source.indexOf('\n', at);
        add(
          importRule,
          { startIndex: at, endIndex: lineEnd < 0 ? source.length : lineEnd },
          {
            name: local,
          },
        );
        // `except ImportError: raise ModuleNotFoundError("Please compile …")` (Deformable DETR's
        // MSDA): the handler, not only the import, is what keeps the PyTorch path from running
        const stop = raiseRule && stoppingHandler(importStatements[importedBy.get(local)!]?.node);
        if (stop && !raised.has(stop.startIndex)) {
          raised.add(stop.startIndex);
          add(raiseRule, stop, { name: local });
        }
      }
    }
    if (opsAt.length) applyCalls(functions, cpuOnlyPaths(opsAt, functions, bound));
  }

  /** One call (or use) of an extension's op, and the autograd Function it is in. */
  function extensionCall(
    call: Node,
    name: string,
    opsAt: [number, string][],
    functions: Set<string>,
  ) {
    opsAt.push([call.startIndex, name]);
    for (const r of c.extensions) {
      add(r, call, { name });
      const fnRule = r.match.functionRule && rules.find((x) => x.id === r.match.functionRule);
      const forward = fnRule ? autogradForward(call) : null;
      if (forward) functions.add(forward.cls);
      if (fnRule && forward) add(fnRule, forward.def, { name: forward.cls, op: name });
      const ctxRule = r.match.ctxRule && rules.find((x) => x.id === r.match.ctxRule);
      const at = ctxRule && forward ? lastCtxAssignment(forward.def) : null;
      if (ctxRule && at) {
        const lineStart = source.lastIndexOf('\n', at.stmt.startIndex - 1) + 1;
        const indent = source.slice(lineStart, at.stmt.startIndex);
        add(
          ctxRule,
          at.stmt,
          { name: forward!.cls, input: at.input },
          /\S/.test(indent) || !at.input
            ? undefined
            : [
                {
                  start: at.stmt.endIndex,
                  end: at.stmt.endIndex,
                  text: `\n${indent}ctx.device = ${at.input}.device.type`,
                },
              ],
        );
      }
    }
  }

  /**
   * `if x.device.type == "cpu": <PyTorch>` in a function that otherwise calls the extension (an
   * op, or an autograd Function over it: StyleGAN2's upfirdn2d, fused_leaky_relu): every other
   * device, the NPU too, goes on to the CUDA kernels. Not where the CPU branch itself calls the
   * extension (its CPU kernel), nor inside the autograd Function (its own rule).
   */
  function cpuOnlyPaths(
    opsAt: [number, string][],
    functions: Set<string>,
    bound: Set<string>,
  ): [number, number][] {
    const told: [number, number][] = [];
    const r = c.extensions.find((x) => x.match.cpuRule);
    const rule = r && rules.find((x) => x.id === r.match.cpuRule);
    if (!rule) return told;
    const names = bound.size
      ? new RegExp(`\\b(?:${[...bound].map(escape).join('|')})\\s*\\.\\s*\\w`)
      : null;
    const applied = functions.size
      ? new RegExp(`\\b(?:${[...functions].map(escape).join('|')})${GAP}\\.${GAP}apply\\b`, 'g')
      : null;
    for (const m of codeMatches(CPU_TEST, source)) {
      let cmp = nodeAt(m[0]);
      while (cmp && cmp.type !== 'comparison_operator' && cmp.type !== 'block') cmp = cmp.parent;
      if (cmp?.type !== 'comparison_operator' || cmp.namedChildren.length !== 2) continue;
      const left = cmp.namedChildren[0]!;
      if (left.type !== 'attribute' || cmp.namedChildren[1]!.type !== 'string') continue;
      const test = cmp.parent;
      let taken: Node | null | undefined;
      if (test?.type === 'if_statement' || test?.type === 'elif_clause')
        taken = test.childForFieldName('consequence');
      else if (test?.type === 'conditional_expression') taken = test.namedChildren[0];
      if (!taken || autogradForward(cmp)) continue;
      let def: Node | null = test!.parent;
      while (def && def.type !== 'function_definition') def = def.parent;
      if (!def) continue;
      // the definition's extent in the source: its statements left out of the parse are not in
      // the tree (the `return Fn.apply(…)` below the test)
      const from = def.startIndex;
      const to = statementEnd(tokensOf(source), from, source.length);
      const inDef = (at: number) => at >= from && at < to;
      const inTaken = (at: number) => at >= taken!.startIndex && at < taken!.endIndex;
      const ops = opsAt.filter(([at]) => inDef(at));
      // the CPU branch calls the extension itself (its CPU kernel `_C.nms_cpu`): no PyTorch path
      if (
        ops.some(([at]) => inTaken(at)) ||
        (names && names.test(source.slice(taken.startIndex, taken.endIndex).replace(/\\\n/g, ' ')))
      )
        continue;
      let op = ops[0]?.[1];
      if (!op && applied)
        for (const a of source.slice(from, to).matchAll(applied))
          if (!inTaken(from + a.index)) {
            op = a[0].replace(/\s+|\\\n/g, '');
            break;
          }
      if (!op) continue;
      const q = cmp.namedChildren[1]!.text.startsWith("'") ? "'" : '"';
      told.push([from, to]);
      add(
        rule,
        cmp,
        { text: cmp.text, left: left.text.replace(/\s+/g, '').replace(/\.device\.type$/, ''), op },
        [{ start: left.endIndex, end: cmp.endIndex, text: ` in (${q}cpu${q}, ${q}npu${q})` }],
      );
    }
    return told;
  }

  /**
   * `Fn.apply(…)` where Fn is an autograd Function over the extension: the call runs the CUDA
   * kernels, and the porter gives it its NPU path here (a PyTorch reference implementation, or a
   * torch_npu operator) when the Function itself is not given one. Not inside a Function, nor in
   * a function whose CPU-only test was told (its PyTorch path is the NPU's).
   */
  function applyCalls(functions: Set<string>, told: [number, number][]) {
    const r = c.extensions.find((x) => x.match.applyRule);
    const rule = r && rules.find((x) => x.id === r.match.applyRule);
    if (!rule || !functions.size) return;
    for (const m of codeMatches(APPLY_CALL, source)) {
      const name = /^\w+/.exec(m[2])![0];
      if (!functions.has(name)) continue;
      const id = nodeAt(m[0]);
      const attr = id?.parent;
      const call = attr?.parent;
      if (id?.type !== 'identifier' || attr?.type !== 'attribute' || call?.type !== 'call')
        continue;
      if (!firstChild(call, attr) || autogradForward(call)) continue;
      if (told.some(([a, b]) => m[0] >= a && m[0] < b) || cudaBranch(call)) continue;
      add(rule, call, { name });
    }
  }

  // definitions: `def enable_xformers_memory_efficient_attention(…)` — a switch for a CUDA library
  for (const m of codeMatches(definitionHint(c, source), source)) {
    const start = m[0],
      end = m[1];
    let def = nodeAt(start, end - 1);
    if (def && def.type !== 'function_definition') def = def.parent;
    if (def?.type !== 'function_definition' || def.startIndex !== start) continue;
    const name = def.childForFieldName('name')?.text ?? '';
    for (const { r, re: test } of c.definitions) if (test.test(name)) add(r, def, { name });
  }
  // a project's own switch called by its plain name (the library's own functions aside)
  for (const m of codeMatches(callHint(c, source), source)) {
    const start = m[0];
    const id = nodeAt(start);
    const call = id?.parent;
    if (id?.type !== 'identifier' || call?.type !== 'call') continue;
    if (!firstChild(call, id)) continue;
    const idText = id.text;
    const lib = aliases.get(idText)?.split('.')[0];
    const known = !!lib && c.roots.has(lib);
    for (const { r, re: test } of c.callNames)
      if ((!known || r.match.imported) && test.test(idText))
        add(
          r,
          call,
          { name: idText },
          r.rewrite?.kind === 'remove-statement' ? removeCallAndImport(call, idText) : undefined,
        );
  }

  /** The call's line and the import that binds only its name (the patch module needs CUDA). */
  function removeCallAndImport(call: Node, name: string): Edit[] | undefined {
    const edits = removeStatement(call, source);
    if (!edits) return undefined;
    const imp = importStatements.find(
      (st) => st.from && st.names.length === 1 && st.names[0]!.text === name,
    );
    return [...edits, ...((imp?.node && removeStatement(imp.node, source)) ?? [])];
  }

  // names tested in conditions: `if is_nccl_backend:` guards what only NCCL does
  const doneConditions = new Set<number>();
  for (const m of codeMatches(c.conditionHint, source)) {
    const start = m[0];
    let id = nodeAt(start);
    if (id?.type !== 'identifier') continue;
    const up = id.parent;
    if (up?.type === 'attribute') {
      // `nccl_cfg.enabled` tests something else; `self.use_nccl` is the name itself
      if (firstChild(up, id)) continue;
      id = up;
    }
    // the statement whose condition this is
    let cond: Node = id;
    let stmt = cond.parent;
    let stmtType = stmt?.type;
    while (stmt && stmtType && CONDITION_PARTS.has(stmtType)) {
      cond = stmt;
      stmt = cond.parent;
      stmtType = stmt?.type;
    }
    if (!stmt || !stmtType || !CONDITIONAL.has(stmtType)) continue;
    if (stmtType !== 'conditional_expression' && !stmt.childForFieldName('condition')?.equals(cond))
      continue;
    if (doneConditions.has(cond.startIndex)) continue;
    doneConditions.add(cond.startIndex);
    const idText = id.text;
    for (const { r, re: test } of c.conditionNames)
      if (test.test(idText)) add(r, cond, { name: idText });
  }

  // `else: raise …` under a test for CUDA: what a host without it does
  const elseRules = c.elseRaises.filter(({ re }) => re.test(source));
  if (elseRules.length)
    for (const m of codeMatches(RAISE, source)) {
      const stmt = nodeAt(m[0] + /^[ \t]*/.exec(source.slice(m[0], m[0] + 200))![0].length)?.parent;
      const clause = stmt?.type === 'raise_statement' ? stmt.parent?.parent : null;
      const ifStmt = clause?.type === 'else_clause' ? clause.parent : null;
      const cond = ifStmt?.type === 'if_statement' ? ifStmt.childForFieldName('condition') : null;
      // `if not torch.cuda.is_available(): … else: raise` stops where CUDA is, not where it is not
      if (!stmt || !cond || /^not\b/.test(cond.text)) continue;
      // the condition as one line, cut where it runs long (a FORCE_CUDA switch after it)
      const flat = cond.text.replace(/\s+/g, ' ');
      const text = flat.length > 64 ? `${flat.slice(0, 61)}…` : flat;
      for (const { r, re } of elseRules) if (re.test(cond.text)) add(r, stmt, { text });
    }

  // keyword arguments: device_ids=, map_location=, pin_memory=True, fused=True
  for (const m of codeMatches(c.keywordHint, source)) {
    const start = m[0];
    if (passed.has(start)) continue;
    const ident = nodeAt(start, start + 1);
    const kw = ident?.parent;
    const identType = ident?.type;
    const kwType = kw?.type;
    if (ident && identType === 'identifier' && kwType !== 'keyword_argument') {
      // `num_warps = 8 if BLOCK > 2048 else 4`: the value computed for the argument
      const assign = assignmentOf(ident);
      const identText = assign ? ident.text : '';
      for (const r of c.keywords)
        if (assign && r.match.assigned && identText === r.match.name)
          add(r, assign, { text: assign.childForFieldName('right')?.text ?? '' });
      continue;
    }
    if (!ident || !kw || identType !== 'identifier' || kwType !== 'keyword_argument') continue;
    if (!firstChild(kw, ident)) continue;
    const identText = ident.text;
    const v = kw.childForFieldName('value');
    for (const r of c.keywords) {
      if (identText !== r.match.name || !v || r.match.assigned) continue;
      if (r.match.valueRegex && !new RegExp(r.match.valueRegex).test(v.text)) continue;
      if (r.match.notInCallOf) {
        const fn = kw.parent?.parent?.childForFieldName('function');
        const called = fn ? canonicalName(fn, aliases) : null;
        if (called && r.match.notInCallOf.some((p) => nameMatches(p, called))) continue;
      }
      const args = kw.parent;
      const other = r.match.withKeyword;
      if (
        other &&
        !args?.namedChildren.some(
          (a) =>
            a?.type === 'keyword_argument' &&
            regexOf(other).test(a.childForFieldName('name')?.text ?? ''),
        )
      )
        continue;
      const rw = r.rewrite;
      add(
        r,
        r.match.atCall && args?.parent?.type === 'call' ? args.parent : kw,
        { text: v.text },
        rw?.kind === 'replace-expression'
          ? [{ start: kw.startIndex, end: kw.endIndex, text: rw.to }]
          : rw?.kind === 'remove-argument'
            ? removeArgument(kw)
            : undefined,
      );
    }
  }

  for (const { stmt, modules, optional: guarded } of imported) {
    // `try: import apex … except ImportError:` — the project already runs without the library
    const taken = guarded ? [] : modules.map((m) => c.importRulesOf(m).taken);
    if (taken.some((rs) => rs.size))
      for (const r of c.imports) {
        const at = taken.findIndex((rs) => rs.has(r));
        // parsed: nodeNeeded says so for every statement an import rule names
        if (at >= 0) add(r, stmt.node!, { name: modules[at]! });
      }
    if (!stmt.from && !guarded) {
      // `import torch.cuda.amp as amp`: the module path is renamed where it is written
      let from = stmt.node ? stmt.node.startIndex + 'import'.length : -1;
      for (const n of stmt.names) {
        const at = from < 0 ? -1 : source.indexOf(n.name, from);
        if (at >= 0) from = at + n.name.length;
        const best = stmt.node && at >= 0 ? aliasedReference(c, n) : undefined;
        if (!best) continue;
        const rw = best.r.rewrite;
        // not the root: the alias's uses are written through the alias, not the root's name
        const edits =
          rw?.kind === 'rename-segment'
            ? pathRenamed(n.name, at, at + n.name.length, rw, 1)
            : undefined;
        add(best.r, stmt.node!, { name: n.name }, edits);
      }
    }
    // `from torch.cuda.amp import autocast`: the import names a CUDA module; the rewrite fixes
    // the module path, and the uses keep working through the imported name
    const module = stmt.module;
    if (!stmt.from || !module || module.text.startsWith('.')) continue;
    // a reference rule's pattern starts with its root (nodeNeeded asks the same)
    const dot = module.text.indexOf('.');
    if (!c.roots.has(dot < 0 ? module.text : module.text.slice(0, dot))) continue;
    const known = importReference(c, stmt);
    if (!known || known.best.r.uses) continue;
    const { name, best } = known;
    const rw = best.r.rewrite;
    const edits =
      rw?.kind === 'rename-segment' &&
      (!rw.imports || stmt.names.every((n) => rw.imports!.includes(n.name)))
        ? pathRenamed(module.text, module.start, module.end, rw)
        : undefined;
    add(best.r, stmt.node!, { name }, edits);
  }

  // names a from-import brings in that a rule knows (a project's wrapper of a CUDA op)
  if (c.importedNames.length)
    importStatements.forEach((stmt, i) => {
      if (!stmt.from || imported[i]!.optional) return;
      const module = stmt.module?.text ?? '';
      // a compiled extension's own import is ext.extension-import's
      if (c.extensionName(module)) return;
      const at = importStarts[i]!;
      for (const { r, re, except } of c.importedNames) {
        const hit = stmt.names.find(
          ({ name }) => re.test(name) && !except?.test(`${module}.${name}`),
        );
        if (!hit) continue;
        const lineEnd = source.indexOf('\n', at);
        add(
          r,
          { startIndex: at, endIndex: lineEnd < 0 ? source.length : lineEnd },
          {
            name: hit.name,
            module,
          },
        );
        // each name it binds as called after the import, as a plain name
        if (r.match.calls)
          for (const { name, alias } of stmt.names) {
            if (!re.test(name) || except?.test(`${module}.${name}`)) continue;
            const local = alias || name;
            for (const m of source.matchAll(
              new RegExp(`(?<![\\w.])${escape(local)}(?=\\s*\\()`, 'g'),
            )) {
              if (m.index! <= at) continue;
              const id = nodeAt(m.index!);
              const call = id?.parent;
              if (id?.type !== 'identifier' || call?.type !== 'call') continue;
              if (call.childForFieldName('function')?.startIndex !== id.startIndex) continue;
              add(r, call, { name, module });
            }
          }
      }
    });

  const importsTorch = [...aliases.values()].some((v) => v === 'torch' || v.startsWith('torch.'));
  // the module's statements: all of them only where asked for (the entry point's guard, an enum
  // backend switch); the import block is read from the first to where it ends — building every
  // statement's node (and asking each its type) cost more than reading the block
  let topNodes: (Node | null)[] | undefined;
  const top = () => (topNodes ??= root.namedChildren);
  const guard = source.includes('__main__') ? mainGuard(nodeAt, source, top) : undefined;
  // the leading import block: module-level imports (and try/if blocks of imports) before the
  // first definition or other statement
  let importEnd = -1;
  // the end of the block's last plain import: trailing try/if blocks of optional imports (wandb,
  // apex, xformers) come after it, and porters put `import torch_npu` above them
  let plainEnd = -1;
  const unparsed = new Set(
    importPlan(source, c)
      .imports.filter((im) => !im.parse)
      .map((im) => im.kw),
  );
  for (let n = root.firstNamedChild; n; n = n.nextNamedSibling) {
    const type = n.type;
    if (type === 'comment') continue;
    // imports left out of the parse (read from text): the parser saw one `pass` for a run of them
    if (type === 'pass_statement' && unparsed.has(n.startIndex)) continue;
    if (
      type === 'import_statement' ||
      type === 'import_from_statement' ||
      type === 'future_import_statement'
    )
      importEnd = plainEnd = n.endIndex;
    else if (type === 'expression_statement' && n.namedChildren[0]?.type === 'string') continue;
    else if (
      (type === 'try_statement' || type === 'if_statement') &&
      /^\s*(import|from)\s/m.test(n.text) &&
      n.startIndex !== guard?.startIndex
    )
      importEnd = n.endIndex;
    else if (importEnd >= 0) break;
  }
  if (plainEnd >= 0) importEnd = plainEnd;
  // a comment closing the last import's line stays with it (`import model  # registers models`)
  if (importEnd >= 0) {
    const eol = source.indexOf('\n', importEnd);
    const lineEnd = eol < 0 ? source.length : source[eol - 1] === '\r' ? eol - 1 : eol;
    if (/^[ \t]*#/.test(source.slice(importEnd, lineEnd))) importEnd = lineEnd;
  }
  // An import the fixes rewrite to torch.npu (`from torch.npu.amp import autocast`) runs only
  // once torch_npu is loaded, which torch does by itself from torch_npu 2.5.1 on: `import
  // torch_npu` goes above the first such statement of the block, not after the block.
  let npuImport = Infinity;
  for (const f of findings)
    for (const e of f.fix?.edits ?? [])
      if (e.start < importEnd && e.text.startsWith('torch.npu'))
        npuImport = Math.min(npuImport, e.start);
  for (let n = root.firstNamedChild; n && n.startIndex <= npuImport; n = n.nextNamedSibling)
    if (n.endIndex > npuImport) {
      const lineEnd = source.lastIndexOf('\n', n.startIndex - 1);
      if (lineEnd >= 0) importEnd = lineEnd;
      break;
    }
  const parseErrors = root.hasError;
  // rules that say it once per file: the first place, and how many there are
  const once = new Map<string, Finding[]>();
  for (const f of findings)
    if (c.once.has(f.ruleId)) {
      const list = once.get(f.ruleId);
      if (list) list.push(f);
      else once.set(f.ruleId, [f]);
    }
  let kept = findings;
  const present = new Set(findings.map((f) => f.ruleId));
  if (c.subsumed.some(([, by]) => present.has(by)))
    kept = kept.filter((f) => !c.subsumed.some(([id, by]) => f.ruleId === id && present.has(by)));
  if ([...present].some((id) => c.unlessImported.has(id))) {
    const modules = new Set(imported.flatMap((i) => i.modules));
    kept = kept.filter((f) => !c.unlessImported.get(f.ruleId)?.some((m) => modules.has(m)));
  }
  let imports: string[] | undefined;
  for (const [id, re] of c.unlessSource)
    if (present.has(id)) {
      if (re.test(source)) kept = kept.filter((f) => f.ruleId !== id);
      else
        imports ??= imported.flatMap(({ stmt, modules }) =>
          stmt.from
            ? [
                ...modules,
                ...stmt.names.map(
                  (n) => `${modules[0]}${modules[0]!.endsWith('.') ? '' : '.'}${n.name}`,
                ),
              ]
            : modules,
        );
    }
  if (once.size) {
    const drop = new Set<Finding>();
    for (const all of once.values()) {
      all.sort((a, b) => a.line - b.line || a.column - b.column);
      all[0]!.message = all[0]!.message.replace(/\{\{count\}\}/g, String(all.length));
      for (const m of [all[0]!.text?.message, all[0]!.text?.fix])
        if (m) m.params = { ...m.params, count: all.length };
      // said once, fixed everywhere: the first finding carries every place's edit
      const edits = all.flatMap((f) => f.fix?.edits ?? []);
      if (all[0]!.fix && edits.length) all[0]!.fix.edits = edits;
      for (const f of all.slice(1)) drop.add(f);
    }
    kept = kept.filter((f) => !drop.has(f));
  }
  kept.sort((a, b) => a.line - b.line || a.column - b.column || byText(a.ruleId, b.ruleId));
  const backendSwitch = findBackendSwitch(top, source, pos);
  return {
    findings: kept,
    importsTorch,
    entryPoint: !!guard,
    parseErrors,
    importEnd,
    backendSwitch,
    ...(imports ? { imports: imports.map(ownText) } : {}),
  };
}

/** The modules an import statement names (`from a.b import c`: a.b; `import a.b as x`: a.b). */
function importedModules(stmt: ImportStatement): string[] {
  return stmt.from ? [stmt.module?.text ?? ''] : stmt.names.map((n) => n.name);
}

/**
 * The modules an import statement may bring in as an import rule reads them: `from pkg import
 * sub` names the package and, where an import rule names modules under it, a submodule as far
 * as text tells (`from cuda import cudart` is cuda-python's runtime, `from nvidia import dali` is
 * DALI).
 */
function importRuleModules(c: Compiled, stmt: ImportStatement): string[] {
  const modules = importedModules(stmt);
  const module = modules[0]!;
  if (!stmt.from || !c.importRoots.has(rootOf(module))) return modules;
  return [module, ...stmt.names.filter((n) => n.name).map((n) => `${module}.${n.name}`)];
}

/**
 * Where a method call is reported: the call, or from the method's name where the call starts on
 * an earlier line (`torch.zeros(\n  …\n).cuda()` is changed on the `.cuda()` line).
 */
function methodSpan(
  call: Node,
  ident: Node,
  source: string,
): Pick<Node, 'startIndex' | 'endIndex'> {
  const start = call.startIndex;
  const name = ident.startIndex;
  const at = source.lastIndexOf('\n', name - 1);
  return at < start ? call : { startIndex: name, endIndex: call.endIndex };
}

/** `f(a, b)` → `f(a, b, text)`, after a trailing comma as written (`f(\n  a,\n)`). */
function appendArgument(args: Node, argList: Node[], text: string): Edit[] {
  const last = argList.filter((a) => a.type !== 'comment').at(-1);
  if (!last) return [{ start: args.startIndex + 1, end: args.startIndex + 1, text }];
  // what is between the last argument and the closing parenthesis
  const comma = args.text.slice(last.endIndex - args.startIndex, -1).indexOf(',');
  const at = comma < 0 ? last.endIndex : last.endIndex + comma + 1;
  return [{ start: at, end: at, text: comma < 0 ? `, ${text}` : ` ${text},` }];
}

/**
 * An import in a `try:` whose handler catches ImportError (or everything), or under
 * `if is_<lib>_available():`: optional, the code runs without the library.
 */
function optionalImport(stmt: Node, source: string): boolean {
  let up = stmt.parent;
  let type = up?.type;
  if (type === 'block') {
    up = up!.parent;
    type = up?.type;
  }
  if (up && (type === 'if_statement' || type === 'elif_clause')) {
    // `else: raise …` makes the library required where this branch is asked for
    const ifStmt = type === 'elif_clause' ? up.parent : up;
    const orElse = ifStmt?.namedChildren.find((n) => n?.type === 'else_clause');
    if (orElse && /^\s*raise\b/m.test(orElse.childForFieldName('body')?.text ?? '')) return false;
    return /\bis_\w+_available\s*\(/.test(up.childForFieldName('condition')?.text ?? '');
  }
  if (!up || type !== 'try_statement') return false;
  // the library this statement imports: a handler that imports it again is a version shim
  // (`except ImportError: from flash_attn.flash_attn_interface import flash_attn_unpadded_func as
  // …`), the library still required; so is one that builds it
  const lib = /^\s*(?:from|import)\s+(\w+)/.exec(stmt.text)?.[1];
  const shim = lib ? new RegExp(`^\\s*(?:from|import)\\s+${lib}\\b`, 'm') : null;
  const block = (h: Node) => h.namedChildren.find((x) => x?.type === 'block');
  const buildsExtension = (h: Node) => {
    const body = block(h);
    return (
      !!body &&
      /\.cu\b|cpp_extension/.test(body.text) &&
      body.namedChildren.some(
        (st) =>
          st?.type === 'expression_statement' &&
          /^\w[\w.]*\s*=\s*(?:[\w.]+\.)?load(?:_inline)?\s*\(/.test(st.text),
      )
    );
  };
  return up.namedChildren.some(
    (h) =>
      h?.type === 'except_clause' &&
      !(shim && shim.test(block(h)?.text ?? '')) &&
      // a handler that always compiles the extension instead (pointnet2_ops' `_ext = load(…,
      // "*.cu")` as its own statement, not under an `if`) is the same CUDA code built another way
      !buildsExtension(h) &&
      (!h.namedChildren.some((x) => x?.type !== 'block' && x?.type !== 'comment') ||
        /\b(ImportError|ModuleNotFoundError|Exception)\b/.test(
          h.namedChildren.find((x) => x?.type !== 'block')?.text ?? '',
        )) &&
      // `except ImportError: raise ImportError("Please install apex …")` around the module's own
      // imports, or at the top of a function's body (llm-foundry's `flash_attn_fn`): the file, or
      // the function, does not run without the library (under `if args.fp16:` it is a feature's,
      // optional still)
      !(
        (up.parent?.type === 'module' ||
          (up.parent?.type === 'block' && up.parent.parent?.type === 'function_definition')) &&
        // the handler's own statements: a message printed first, then `exit()` (tiny-cuda-nn's)
        stopsAfterAll(source, h)
      ),
  );
}

/**
 * A dict key's dict is the value of a keyword argument named like `name` (a regex), or an
 * argument of a call of a function so named (Tune's `with_resources(fn, {"gpu": 1})`).
 */
function dictIn(key: Node, name: string): boolean {
  const up = key.parent?.parent?.parent;
  const named =
    up?.type === 'keyword_argument'
      ? up.childForFieldName('name')?.text
      : up?.type === 'argument_list'
        ? up.parent?.childForFieldName('function')?.text.split('.').pop()
        : undefined;
  return named !== undefined && new RegExp(name).test(named);
}

/**
 * A string that is the value of a keyword argument, a parameter's default or a dict entry named
 * like `name` (a regex), itself or as a branch of a conditional expression there.
 */
function isSettingOf(
  value: Node,
  name: string,
  assigned: 'none' | 'member' | 'passed' | 'any',
): boolean {
  // the value chosen by a condition: `accelerator="gpu" if torch.cuda.is_available() else "cpu"`
  let v = value;
  while (
    v.parent?.type === 'conditional_expression' ||
    v.parent?.type === 'parenthesized_expression'
  )
    v = v.parent;
  const up = v.parent;
  // set on a config object or a kwargs dict (`cfg.trainer.accelerator = "gpu"`,
  // `trainer_kwargs["accelerator"] = "gpu"`), for rules whose setting has no other meaning; a
  // bare variable only where its name says nothing else (`strategy = "ddp" if n > 1 else "auto"`)
  if (
    assigned !== 'none' &&
    up?.type === 'assignment' &&
    up.childForFieldName('right')?.startIndex === v.startIndex
  ) {
    const left = up.childForFieldName('left');
    const key =
      left?.type === 'attribute'
        ? left.childForFieldName('attribute')?.text
        : left?.type === 'subscript' && left.childForFieldName('subscript')
          ? stringContent(left.childForFieldName('subscript')!)?.value
          : left?.type === 'identifier' && (assigned === 'any' || assigned === 'passed')
            ? left.text
            : undefined;
    if (key === undefined || !new RegExp(`^(?:${name})$`).test(key)) return false;
    // a plain variable handed on by its own keyword: `Trainer(accelerator=accelerator)`
    return (
      assigned !== 'passed' ||
      left?.type !== 'identifier' ||
      new RegExp(`[(,]\\s*${escape(key)}\\s*=\\s*${escape(key)}\\s*[,)]`).test(
        value.tree.rootNode.text,
      )
    );
  }
  if (up?.childForFieldName('value')?.startIndex !== v.startIndex) return false;
  // a command-line option's default, for the same rules: `add_argument("--accelerator",
  // default="gpu")`, `@click.option("--accelerator", default="gpu")`
  if (
    assigned !== 'none' &&
    up.type === 'keyword_argument' &&
    up.childForFieldName('name')?.text === 'default' &&
    optionNamed(up.parent, name)
  )
    return true;
  const key =
    up.type === 'keyword_argument' ||
    up.type === 'default_parameter' ||
    up.type === 'typed_default_parameter'
      ? up.childForFieldName('name')?.text
      : up.type === 'pair'
        ? up.childForFieldName('key')?.text.replace(/^["']|["']$/g, '')
        : undefined;
  return key !== undefined && new RegExp(`^(?:${name})$`).test(key);
}

/** An option declaration's flags (`"-a", "--accelerator"`) include one named like `name`. */
function optionNamed(args: Node | null, name: string): boolean {
  const re = new RegExp(`^(?:${name})$`);
  for (const arg of args?.namedChildren ?? []) {
    if (arg?.type !== 'string') continue;
    const flag = stringContent(arg)?.value;
    if (flag?.startsWith('-') && re.test(flag.replace(/^-+/, '').replace(/-/g, '_'))) return true;
  }
  return false;
}

/** The argument after this one is a string whose text matches the regex. */
function nextArgMatches(arg: Node, regex: string): boolean {
  const next = arg.nextNamedSibling;
  return next?.type === 'string' && new RegExp(regex).test(stringContent(next)?.value ?? '');
}

/** The try statement whose body an import is in, directly. */
function tryOf(stmt: Node): Node | null {
  const up = stmt.parent?.type === 'block' ? stmt.parent.parent : stmt.parent;
  return up?.type === 'try_statement' ? up : null;
}

/**
 * The try statements (their starts) whose imports the code then demands: a name they bind tested
 * and the program stopped without it (`if flash_attn_func is None: raise …`, `assert gmm_ops is
 * not None`), or the flag they set (`FLASH_ATTN_2_AVAILABLE = True`, `= False` in the handler)
 * asserted (Wan's `assert FLASH_ATTN_2_AVAILABLE`). The handler's fallback is no fallback: the
 * imports are required, as under an `except ImportError: raise`.
 */
function demandedTries(source: string, statements: ImportStatement[], indented: boolean[]) {
  const out = new Set<number>();
  const tries = new Map<number, { node: Node; names: string[] }>();
  statements.forEach((st, i) => {
    const t = indented[i] && st.node ? tryOf(st.node) : null;
    if (!t) return;
    const entry = tries.get(t.startIndex) ?? { node: t, names: [] };
    tries.set(t.startIndex, entry);
    for (const { name, alias } of st.names) {
      const local = alias ?? (st.from ? name : name?.split('.')[0]);
      if (local) entry.names.push(local);
    }
  });
  const flagsOf = new Map([...tries].map(([at, { node }]) => [at, availabilityFlags(node)]));
  const all = [...flagsOf.values()].flat();
  // a test of any of them (elseOfFlagTest)
  const flags = all.length ? new RegExp(`\\b(?:${all.join('|')})\\b`) : null;
  for (const [at, { node, names }] of tries) {
    let none: Set<string> | undefined; // read only where the first two find nothing
    if (
      names.some((n) => demands(source, n, false, flags)) ||
      flagsOf.get(at)!.some((f) => demands(source, f, true, flags)) ||
      names.some(
        (n) => (none ??= handlerBound(node, 'None')).has(n) && calledBare(source, n, flags),
      )
    )
      out.add(at);
  }
  return out;
}

/** The plain names a block's own statements set to `value` (`HAS_APEX = True`). */
function assignedIn(block: Node | null | undefined, value: string): string[] {
  return (block?.namedChildren ?? []).flatMap((st) => {
    const a = st?.type === 'expression_statement' ? st.namedChildren[0] : null;
    const left = a?.type === 'assignment' ? a.childForFieldName('left') : null;
    return left?.type === 'identifier' && a!.childForFieldName('right')?.text === value
      ? [left.text]
      : [];
  });
}

/** The names a try statement's handlers set to `value` (`flash_attn_varlen_func = None`). */
function handlerBound(tryNode: Node, value: string): Set<string> {
  return new Set(
    tryNode.namedChildren
      .filter((h) => h?.type === 'except_clause')
      .flatMap((h) =>
        assignedIn(
          h!.namedChildren.find((x) => x?.type === 'block'),
          value,
        ),
      ),
  );
}

/**
 * Whether a name the handler left None is called where its function always runs, as the
 * statement's value (`x = flash_attn_varlen_func(…)`, `return …(…)`): calling None stops it.
 */
function calledBare(source: string, name: string, flags: RegExp | null): boolean {
  for (let at = source.indexOf(name); at >= 0; at = source.indexOf(name, at + name.length)) {
    if (source[at + name.length] !== '(' || /[\w.]/.test(source[at - 1] ?? '')) continue;
    const lineStart = source.lastIndexOf('\n', at - 1) + 1;
    if (!/^[ \t]*(?:return[ \t]+|[\w.,[\] \t*]+=[ \t]*)?$/.test(source.slice(lineStart, at)))
      continue;
    if (unconditional(source, lineStart, flags)) return true;
  }
  return false;
}

/**
 * The names a try statement sets True in its body and False in a handler: whether the library
 * it imports is there (`FLASH_ATTN_2_AVAILABLE`, `HAS_APEX`).
 */
function availabilityFlags(tryNode: Node): string[] {
  const yes = assignedIn(tryNode.childForFieldName('body'), 'True');
  if (!yes.length) return [];
  const no = handlerBound(tryNode, 'False');
  return yes.filter((n) => no.has(n));
}

/**
 * Whether the code stops without `name`, where its function always runs: `assert name is not
 * None`, `if name is None: raise …`, `if not name: raise …`, and for an availability flag a bare
 * `assert name`. Read from each place the name is written (a search of every line start cost more
 * than the rest of the import analysis).
 */
function demands(source: string, name: string, flag: boolean, flags: RegExp | null): boolean {
  for (let at = source.indexOf(name); at >= 0; at = source.indexOf(name, at + name.length)) {
    const lineStart = source.lastIndexOf('\n', at - 1) + 1;
    const lead = /^[ \t]*(assert|if)[ \t]+(not[ \t]+)?$/.exec(source.slice(lineStart, at));
    if (!lead) continue;
    const rest = source.slice(at + name.length, at + name.length + 300);
    const ok =
      lead[1] === 'assert'
        ? !lead[2] &&
          (/^[ \t]+is[ \t]+not[ \t]+None\b/.test(rest) ||
            (flag && /^[ \t]*(?:[,#\r\n]|$)/.test(rest)))
        : (lead[2] ? /^[ \t]*:/ : /^[ \t]+is[ \t]+None[ \t]*:/).test(rest) &&
          /^[ \t]*(?:#[^\n]*)?\n?[ \t]*raise\b/.test(rest.slice(rest.indexOf(':') + 1));
    if (ok && unconditional(source, lineStart, flags)) return true;
  }
  return false;
}

/**
 * Whether the statement on the line starting at `at` runs whenever its function does (or the
 * module): the nearest statement line above indented less is the `def` (under `if args.horovod:`
 * it is an opt-in feature's demand, optional still). The `else:` of a test of another library's
 * availability flag is the path taken without that library, as on an NPU host (Wan's `if
 * FLASH_ATTN_3_AVAILABLE: … else: assert FLASH_ATTN_2_AVAILABLE`).
 */
function unconditional(source: string, at: number, flags: RegExp | null): boolean {
  const t = tokensOf(source);
  const i = lastAtOrBefore(t.lineStarts, at);
  let indent = t.lineIndents[i]!;
  if (!indent) return true;
  // an option on by default is taken unless turned off: `def __init__(…, enable_flash=True)` …
  // `if enable_flash: assert flash_attn is not None` (Point Transformer V3's)
  let flag: string | undefined;
  let value: string | undefined;
  for (let j = i - 1; j >= 0; j--)
    if (t.lineIndents[j]! < indent) {
      const text = t.lineStarts[j]! + t.lineIndents[j]!;
      const head = source.slice(text, text + 80);
      if (/^(?:async[ \t]+)?def\b/.test(head))
        return (
          !flag ||
          new RegExp(
            `[(,\\s]${flag}[ \\t]*(?::[^,=)]*)?=[ \\t]*${value ? `["']${value}["']` : 'True\\b'}`,
          ).test(signature(source, text))
        );
      if (flags && /^else[ \t]*:/.test(head) && elseOfFlagTest(source, t, j, flags)) {
        indent = t.lineIndents[j]!;
        continue;
      }
      // or a mode chosen by default: `def attention(…, mode="flash")` … `elif mode == "flash":`
      // (HunyuanVideo's)
      const option = flag
        ? null
        : (/^if[ \t]+(?:self\.)?(\w+)[ \t]*:/.exec(head) ??
          /^(?:el)?if[ \t]+(?:self\.)?(\w+)[ \t]*==[ \t]*(["'])([\w.-]+)\2[ \t]*:/.exec(head));
      if (!option) return false;
      flag = option[1]!;
      value = option[3];
      indent = t.lineIndents[j]!;
    }
  return false;
}

/** Whether the `else:` on line `j` closes an if / elif chain that tests an availability flag. */
function elseOfFlagTest(
  source: string,
  t: ReturnType<typeof tokensOf>,
  j: number,
  flags: RegExp,
): boolean {
  const indent = t.lineIndents[j]!;
  for (let k = j - 1; k >= 0; k--) {
    if (t.lineIndents[k]! > indent) continue;
    if (t.lineIndents[k]! < indent) return false;
    const text = t.lineStarts[k]! + indent;
    const head = /^(?:el)?if\b([^:]*)/.exec(source.slice(text, text + 300));
    if (!head) return false;
    if (flags.test(head[1]!)) return true;
    if (head[0].startsWith('if')) return false;
  }
  return false;
}

/** A `def`'s parameter list, from the `def` at `at` to the colon that ends its header. */
function signature(source: string, at: number): string {
  const end = source.slice(at, at + 4000).search(/\)[ \t]*(?:->[^:\n]*)?:[ \t]*(?:#[^\n]*)?\r?\n/);
  return source.slice(at, end < 0 ? at + 4000 : at + end + 1);
}

/**
 * Whether an except clause stops the program, whatever it does first (`print(…)`, then `exit()`):
 * its statements read from the source at the block's own indentation (the parse leaves out the
 * statements no rule looks at).
 */
function stopsAfterAll(source: string, handler: Node): boolean {
  const block = handler.namedChildren.find((x) => x?.type === 'block');
  if (!block) return false;
  const start = block.startIndex;
  const text = source.slice(
    start,
    statementEnd(tokensOf(source), handler.startIndex, source.length),
  );
  if (REQUIRED_AFTER_ALL.test(text)) return true;
  const column = start - (source.lastIndexOf('\n', start - 1) + 1);
  for (const m of text.matchAll(/\n([ \t]*)(?=\S)/g))
    if (m[1]!.length === column && REQUIRED_AFTER_ALL.test(text.slice(m.index + 1))) return true;
  return false;
}

/**
 * The statement that stops the program in a handler of the `try:` whose body holds this import
 * (`raise …`, `sys.exit(…)`), at the handler block's own level.
 */
function stoppingHandler(stmt: Node | null | undefined): Node | undefined {
  const body = stmt?.parent;
  const tryNode = body?.parent;
  if (body?.type !== 'block' || tryNode?.type !== 'try_statement') return undefined;
  if (!tryNode.childForFieldName('body')?.equals(body)) return undefined;
  for (const h of tryNode.namedChildren) {
    if (h?.type !== 'except_clause') continue;
    const block = h.namedChildren.find((x) => x?.type === 'block');
    const stop = block?.namedChildren.find(
      (st) => !!st && (st.type === 'raise_statement' || REQUIRED_AFTER_ALL.test(st.text)),
    );
    if (stop) return stop;
  }
  return undefined;
}

/** A handler that only stops the program: the import it guards is required. */
const REQUIRED_AFTER_ALL = /^\s*(?:raise\b|(?:sys\.)?exit\s*\(|quit\s*\(|os\._exit\s*\()/;

/**
 * Where a function is started once per process with its rank first: `mp.spawn(fn, …)`,
 * `spawn(fn=fn, …)`, `mp.Process(target=fn, args=(rank, …))`.
 */
const LAUNCH = /(?:\bspawn\s*\(\s*(?:fn\s*=\s*)?|\bProcess\s*\([^()]*?\btarget\s*=\s*)/;

/**
 * The parameter of `name` that receives the rank of a function launched by `spawn(fn, …)`: the
 * tutorial's `def demo(rank, ws): setup(rank, ws)` makes `setup`'s first parameter the rank.
 * Read from the text (the spawned function may hold nothing a rule parses).
 */
function spawnedRankArgument(source: string, name: string, params: string[]): string | null {
  for (const m of source.matchAll(new RegExp(`${LAUNCH.source}(\\w+)`, 'g'))) {
    const def = new RegExp(`^([ \\t]*)def\\s+${escape(m[1]!)}\\s*\\(\\s*(\\w+)`, 'm').exec(source);
    if (!def) continue;
    // the spawned function's body: up to the next line indented no deeper than its `def`
    // (a signature's closing `):` on its own line is not the end)
    const rest = source.slice(def.index + def[0].length);
    const end = new RegExp(`\\n(?=${def[1]}[^\\s)])`).exec(rest);
    const body = end ? rest.slice(0, end.index) : rest;
    for (const call of body.matchAll(new RegExp(`\\b${escape(name)}\\s*\\(([^()]*)\\)`, 'g'))) {
      const at = call[1]!.split(',').findIndex((a) => a.trim() === def[2]);
      if (at >= 0 && params[at]) return params[at]!;
    }
  }
  return null;
}

/** The assignment whose target is this name, alone or in a tuple: `BLOCK, num_warps = f(n)`. */
function assignmentOf(ident: Node): Node | null {
  let target: Node = ident;
  if (target.parent?.type === 'pattern_list' || target.parent?.type === 'tuple_pattern')
    target = target.parent;
  const assign = target.parent;
  return assign?.type === 'assignment' && firstChild(assign, target) ? assign : null;
}

/** Whether a file's text matches a rule's unlessFile regex (asked once per file and regex). */
const unlessMemo = new Map<string, { source: string; hit: boolean }>();
function unlessFile(re: string, source: string): boolean {
  const memo = unlessMemo.get(re);
  if (memo && memo.source === source) return memo.hit;
  const hit = new RegExp(re).test(source);
  unlessMemo.set(re, { source, hit });
  return hit;
}

/** A string that is a positional argument of a call whose function's last name matches `re`. */
function calleeMatches(str: Node, re: string): boolean {
  const args = str.parent;
  return args?.type === 'argument_list' && argsOfCallee(args, re);
}

/** Whether a string is the value of keyword `name` (whole match) of a call whose function's last name matches `re`. */
function keywordOfCall(str: Node, name: string, re: string): boolean {
  const kw = str.parent;
  if (kw?.type !== 'keyword_argument' || kw.childForFieldName('value')?.id !== str.id) return false;
  const key = kw.childForFieldName('name')?.text ?? '';
  return regexOf(`^(?:${name})$`).test(key) && !!kw.parent && argsOfCallee(kw.parent, re);
}

/** Whether a node is in the arguments of a call whose function's last name matches `re`. */
function insideCallOf(node: Node, re: string): boolean {
  for (let n: Node | null = node.parent; n && !n.type.endsWith('statement'); n = n.parent)
    if (n.type === 'argument_list' && argsOfCallee(n, re)) return true;
  return false;
}

/** Whether an argument list is a call's whose function's last name matches `re`. */
function argsOfCallee(args: Node, re: string): boolean {
  const call = args.parent;
  if (call?.type !== 'call') return false;
  const fn = call.childForFieldName('function');
  const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute') : fn;
  return !!last && last.type === 'identifier' && regexOf(re).test(last.text);
}

/** A rule's regex source compiled once. */
function regexOf(source: string): RegExp {
  let re = ruleRegexes.get(source);
  if (!re) ruleRegexes.set(source, (re = new RegExp(source)));
  return re;
}
const ruleRegexes = new Map<string, RegExp>();

/**
 * Whether a string names an environment variable being set: the key of `os.environ[…] = …`
 * (or `+=`), or the first argument of `….setdefault(…)` / `putenv(…)`.
 */
function envSet(node: Node): boolean {
  const up = node.parent;
  if (up?.type === 'subscript') {
    const stmt = up.parent;
    return (
      (stmt?.type === 'assignment' || stmt?.type === 'augmented_assignment') &&
      stmt.childForFieldName('left')?.startIndex === up.startIndex
    );
  }
  if (up?.type !== 'argument_list' || up.parent?.type !== 'call') return false;
  const callee = up.parent.childForFieldName('function')?.text ?? '';
  return (
    /(?:\.setdefault|\bputenv)$/.test(callee) && up.namedChildren[0]?.startIndex === node.startIndex
  );
}

/**
 * The value an environment variable named by this string is given: what `os.environ[…] = …`
 * assigns, `setdefault` / `putenv` set, or `get` / `getenv` fall back to; null where none is
 * written as a string.
 */
function envValueOf(node: Node): string | null {
  const up = node.parent;
  let value: Node | null | undefined;
  if (up?.type === 'subscript') {
    const stmt = up.parent;
    if (stmt?.type === 'assignment' && stmt.childForFieldName('left')?.startIndex === up.startIndex)
      value = stmt.childForFieldName('right');
  } else if (
    up?.type === 'argument_list' &&
    up.parent?.type === 'call' &&
    up.namedChildren[0]?.startIndex === node.startIndex &&
    /(?:\.setdefault|\bputenv|environ\.get|\bgetenv)$/.test(
      up.parent.childForFieldName('function')?.text ?? '',
    )
  )
    value = up.namedChildren[1];
  return value?.type === 'string' ? (stringContent(value)?.value ?? null) : null;
}

/** The comparison a node is an operand of, itself or as a call's argument (`float("inf")`). */
function comparedIn(node: Node): Node | null {
  let n: Node | null = node;
  if (n.parent?.type === 'argument_list' && n.parent.parent?.type === 'call') n = n.parent.parent;
  return n.parent?.type === 'comparison_operator' ? n.parent : null;
}

/**
 * Whether some other operand of the comparison is a name matching `re` (`ord == float("inf")`);
 * `last`: its last segment does (`self.grad_norm` as `grad_norm`).
 */
function comparedWith(comparison: Node, node: Node, re: RegExp, last = false): boolean {
  return comparison.namedChildren.some(
    (o) =>
      !!o &&
      !(o.startIndex <= node.startIndex && node.endIndex <= o.endIndex) &&
      (o.type === 'identifier' || o.type === 'attribute') &&
      re.test(last ? o.text.slice(o.text.lastIndexOf('.') + 1) : o.text),
  );
}

/**
 * In an autograd forward `def forward(ctx, input, …)`: the last top-level `ctx.x = …` statement
 * and the first tensor parameter after ctx.
 */
function lastCtxAssignment(def: Node): { stmt: Node; input: string } | null {
  const params = (def.childForFieldName('parameters')?.namedChildren ?? [])
    .map((p) =>
      p?.type === 'identifier'
        ? p.text
        : (p?.childForFieldName('name')?.text ?? p?.namedChildren[0]?.text ?? ''),
    )
    .filter(Boolean);
  if (params[0] !== 'ctx') return null;
  // the end of the first run of `ctx.x = …` (where the forward stores its arguments)
  let last: Node | null = null;
  for (const st of def.childForFieldName('body')?.namedChildren ?? []) {
    const a = st?.type === 'expression_statement' ? st.namedChildren[0] : null;
    const isCtx =
      a?.type === 'assignment' && /^ctx\.\w+$/.test(a.childForFieldName('left')?.text ?? '');
    if (isCtx) last = st;
    else if (last && st?.type !== 'comment') break;
  }
  return last ? { stmt: last, input: params[1] ?? '' } : null;
}

/**
 * `torch._C._jit_set_nvfuser_enabled(True)` on its own line → its text goes, leaving the line
 * empty (`pass` when it is the block's only statement). Undefined where the call is part of a
 * larger statement.
 */
function removeStatement(node: Node, src: string): Edit[] | undefined {
  const call = node.type === 'call' ? node : node.parent;
  const stmt =
    node.type === 'import_from_statement' ? node : call?.type === 'call' ? call.parent : null;
  if (!stmt) return undefined;
  if (stmt.type === 'expression_statement' ? stmt.namedChildren.length !== 1 : stmt !== node)
    return undefined;
  const block = stmt.parent;
  if (!block) return undefined;
  const lineStart = src.lastIndexOf('\n', stmt.startIndex - 1) + 1;
  // the newline stays: an insertion at the statement's end (import torch_npu) keeps its place
  const next = src.indexOf('\n', stmt.endIndex);
  const lineEnd = next < 0 ? src.length : next;
  if (/\S/.test(src.slice(lineStart, stmt.startIndex))) return undefined;
  if (/\S/.test(src.slice(stmt.endIndex, lineEnd).replace(/#.*/, ''))) return undefined;
  const siblings = block.namedChildren.filter((n) => n && n.type !== 'comment');
  if (siblings.length > 1) return [{ start: lineStart, end: lineEnd, text: '' }];
  return [{ start: stmt.startIndex, end: stmt.endIndex, text: 'pass' }];
}

/** `f(a, num_warps=8)` → `f(a)`: the argument and the comma before it (or after, when first). */
function removeArgument(kw: Node): Edit[] | undefined {
  const list = kw.parent;
  if (list?.type !== 'argument_list') return undefined;
  const args = list.namedChildren.filter((a): a is Node => !!a && a.type !== 'comment');
  const i = args.findIndex((a) => a.equals(kw));
  if (i > 0) return [{ start: args[i - 1]!.endIndex, end: kw.endIndex, text: '' }];
  if (i === 0 && args.length > 1)
    return [{ start: kw.startIndex, end: args[1]!.startIndex, text: '' }];
  if (i === 0) return [{ start: kw.startIndex, end: kw.endIndex, text: '' }];
  return undefined;
}

/** How many statements above a use `assignedBefore` looks, counting those in an `if` block. */
const ASSIGNED_WITHIN = 4;
/** A statement that is not an expression: a definition, a block, a jump (see assignedBefore). */
const STATEMENT_KEYWORD =
  /^(?:@|(?:def|class|async|if|for|while|with|try|return|raise|del|import|from|assert|global|nonlocal|break|continue)\b)/;

/** `x` for `x` cast to another dtype (`x.float()`, `x.to(torch.float32)`), else the node itself. */
function castOperand(node: Node | undefined): Node | undefined {
  if (node?.type !== 'call') return node;
  const fn = node.childForFieldName('function');
  if (fn?.type !== 'attribute' || !CASTS.includes(fn.childForFieldName('attribute')?.text ?? ''))
    return node;
  return fn.childForFieldName('object') ?? node;
}

/**
 * The values given to `name` in the statements just before the one `node` is in, nearest first:
 * `x = x + mask` gives `x + mask`, `x += mask` gives `x + mask`. Assignments that transform the
 * name itself (`x = torch.max(x, m)`, `x = x.float()`) are passed over; one that gives it a
 * value not made from it ends the search, as does any other augmented assignment. The last
 * statements of an `if` block just above count (`if mask is not None: x = x + mask`).
 */
function assignedBefore(node: Node, name: string, source: string): string[] {
  let stmt: Node | null = node;
  while (stmt?.parent && stmt.parent.type !== 'block' && stmt.parent.type !== 'module')
    stmt = stmt.parent;
  const values: string[] = [];
  const uses = new RegExp(`\\b${escape(name)}\\b`);
  let seen = 0;
  // statements above, nearest first; an `if` without else contributes its block's statements
  const above = function* (from: Node | null): Generator<Node> {
    for (let s = from?.previousNamedSibling ?? null; s; s = s.previousNamedSibling) {
      if (s.type === 'if_statement' && !s.childForFieldName('alternative')) {
        const body = s.childForFieldName('consequence');
        const last = body?.namedChildren[body.namedChildren.length - 1];
        if (last) {
          yield last;
          yield* above(last);
        }
      } else yield s;
    }
  };
  for (const s of above(stmt)) {
    if (s.type === 'comment') continue;
    if (s.type === 'pass_statement') {
      // a statement no rule needed, written over with `pass` (relevantSource), read from the
      // text as the tree would read it: a definition or any statement but an expression ends
      // the search (an `if` too: the tree looks into one without `else`, these lines do not
      // know which it is), an expression counts, and a value given to the name not made from
      // it ends the search (one further above than a rule's candidates reach: ADDED_LINES)
      const end = source.indexOf('\n', s.startIndex);
      const line = source.slice(s.startIndex, end < 0 ? source.length : end);
      if (line.startsWith('pass') && !/^pass\w/.test(line)) continue;
      if (STATEMENT_KEYWORD.test(line) || ++seen > ASSIGNED_WITHIN) break;
      const given = line.startsWith(name) ? /^\s*=(?!=)(.*)/.exec(line.slice(name.length)) : null;
      if (given && !uses.test(given[1]!)) break;
      continue;
    }
    if (++seen > ASSIGNED_WITHIN || s.type !== 'expression_statement') break;
    const a = s.namedChildren[0];
    if (a?.type !== 'assignment' && a?.type !== 'augmented_assignment') continue;
    if (a.childForFieldName('left')?.text !== name) continue;
    const right = a.childForFieldName('right')?.text ?? '';
    if (a.type === 'augmented_assignment') {
      if (a.childForFieldName('operator')?.text === '+=') values.push(`${name} + ${right}`);
      break;
    }
    values.push(right);
    if (!uses.test(right)) break;
  }
  return values;
}

/**
 * A call that sizes a Triton launch grid: an element of a grid tuple (alone or in arithmetic,
 * `cdiv(M, BM) * cdiv(N, BN)`), the tuple a lambda or a function named like a grid returns,
 * assigned to such a name or passed as `grid=`, or the index of a launch (`kernel[(…)](…)`).
 */
function inGrid(node: Node): boolean {
  const skip = (n: Node | null, types: string[]) => {
    while (n && types.includes(n.type)) n = n.parent;
    return n;
  };
  const GRID = /grid/i;
  let up = skip(node.parent, ['binary_operator', 'parenthesized_expression']);
  if (up && (up.type === 'tuple' || up.type === 'list' || up.type === 'expression_list'))
    up = skip(up.parent, ['parenthesized_expression']);
  switch (up?.type) {
    case 'lambda':
      return true;
    case 'return_statement': {
      let fn: Node | null = up.parent;
      while (fn && fn.type !== 'function_definition' && fn.type !== 'lambda') fn = fn.parent;
      return GRID.test(fn?.childForFieldName('name')?.text ?? '');
    }
    case 'assignment':
      return GRID.test(up.childForFieldName('left')?.text ?? '');
    case 'keyword_argument':
      return GRID.test(up.childForFieldName('name')?.text ?? '');
    case 'subscript': {
      const launch = up.parent;
      return (
        up.childForFieldName('value')?.id !== node.id &&
        launch?.type === 'call' &&
        launch.childForFieldName('function')?.id === up.id
      );
    }
    default:
      return false;
  }
}

function inProduct(node: Node): boolean {
  let up = node.parent;
  while (up?.type === 'parenthesized_expression') up = up.parent;
  return up?.type === 'binary_operator' && up.childForFieldName('operator')?.type === '*';
}

/**
 * The `forward` of the torch.autograd.Function class a call is in (in its forward or backward):
 * `class XFunction(Function): def forward(ctx, …)`.
 */
function autogradForward(node: Node): { def: Node; cls: string } | null {
  let cls: Node | null = node.parent;
  while (cls && cls.type !== 'class_definition') cls = cls.parent;
  if (!cls || !/\bFunction\b/.test(cls.childForFieldName('superclasses')?.text ?? '')) return null;
  for (const st of cls.childForFieldName('body')?.namedChildren ?? []) {
    const def = st?.type === 'decorated_definition' ? st.childForFieldName('definition') : st;
    if (def?.type === 'function_definition' && def.childForFieldName('name')?.text === 'forward')
      return { def, cls: cls.childForFieldName('name')?.text ?? '' };
  }
  return null;
}

/** Inside a type annotation (`x: torch.cuda.LongTensor`, `-> torch.cuda.Stream`). */
function inAnnotation(from: Node | null, fromType = from?.type): boolean {
  for (let up = from, type = fromType; up; up = up.parent, type = up?.type) {
    if (type === 'type') return true;
    if (type!.endsWith('statement') || type === 'block' || type === 'module') return false;
  }
  return false;
}

/** What a tested name can sit in, inside a condition; and what has the condition. */
const CONDITION_PARTS = new Set([
  'boolean_operator',
  'not_operator',
  'comparison_operator',
  'parenthesized_expression',
]);
const CONDITIONAL = new Set([
  'if_statement',
  'elif_clause',
  'while_statement',
  'conditional_expression',
]);

const PLAIN_CHAIN = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/;

/**
 * canonicalName of a dotted chain (an identifier and the attributes over it), read from its text
 * when that is plain `a.b.c` (its segments are then the chain's nodes): no node is read.
 */
function chainName(
  source: string,
  chain: Node,
  end: number,
  aliases: Map<string, string>,
): string | null {
  const text = source.slice(chain.startIndex, end);
  return PLAIN_CHAIN.test(text) ? plainChainName(text, aliases) : canonicalName(chain, aliases);
}

/** What a plain `a.b.c` stands for through the aliases (its first name's), or null. */
function plainChainName(text: string, aliases: Map<string, string>): string | null {
  const dot = text.indexOf('.');
  const base = aliases.get(dot < 0 ? text : text.slice(0, dot));
  return base === undefined ? null : dot < 0 ? base : base + text.slice(dot);
}

const BACKEND_MEMBERS = /^(TRITON|CUDA|CUTLASS|FLASH|FBGEMM|GPU)$/i;
const TORCH_MEMBERS =
  /^(PYTORCH|TORCH|PT|NATIVE|REFERENCE|EAGER|PURE_PYTORCH|PYTHON|DEFAULT_TORCH)$/i;

const MAIN_GUARD = /^__name__\s*==\s*['"]__main__['"]$/;

/**
 * The module's `if __name__ == "__main__":` (its first). Looked for first at the statement lines
 * that start with `if` at no indentation (the lexer's): building every top-level statement's node
 * to ask each its type cost more, and most entry points hold hundreds. The lexer does not see
 * every line the parser reads as a statement (after a form feed, a zero-width space or a
 * byte-order mark before `if`; below a bracket left open; all of them in a text with a lone `\r`,
 * a line end to the parser only): so the guard it finds is taken only where no `__main__` is
 * written before it, and otherwise, or where it finds none, the module's statements are read.
 */
function mainGuard(
  nodeAt: (at: number) => Node | null,
  source: string,
  top: () => (Node | null)[],
): Node | undefined {
  const isGuard = (n: Node | null | undefined): n is Node =>
    n?.type === 'if_statement' && MAIN_GUARD.test(n.childForFieldName('condition')?.text ?? '');
  const statements = () => top().find(isGuard) ?? undefined;
  if (loneCarriageReturn(source)) return statements();
  const t = tokensOf(source);
  for (let i = 0; i < t.lineStarts.length; i++) {
    if (t.lineIndents[i] || t.lineWords[i] !== IF) continue;
    const at = t.lineStarts[i]!;
    // the `if` keyword, in its statement, in the module (not one the parser recovered elsewhere)
    const stmt = nodeAt(at)?.parent;
    if (stmt?.startIndex === at && stmt.parent?.type === 'module' && isGuard(stmt))
      return source.indexOf('__main__') > at ? stmt : statements();
  }
  return statements();
}

/** An enum choosing kernels by backend, with a pure-PyTorch member. */
export interface BackendSwitch {
  line: number;
  name: string;
  /** The pure-PyTorch member, and its string value where it has one. */
  member: string;
  value?: string;
  /** The members that choose GPU kernels (TRITON, TRITON_CC, CUDA …), with their string values. */
  gpu: { member: string; value?: string }[];
}

/** An enum named for what it switches: `HammerKernel`, `WKVBackend`, `AttnImpl`. */
const KERNEL_SWITCH = /(?:Kernel|Backend|Impl|Provider)(?![a-z])/;

/** A member whose kernels are written for NVIDIA GPUs (`TRITON_CC`, `CUTLASS_FP8` too). */
const GPU_MEMBER = /TRITON|CUDA|CUTLASS|FLASH|FBGEMM|GPU|CUDNN|TENSORRT|TRT/i;

/**
 * `class KernelBackend(Enum): TRITON = …; CUDA = …; PYTORCH = …` — kernels chosen by a switch
 * that has a pure-PyTorch member. Returns the enum, that member and the GPU ones.
 */
function findBackendSwitch(
  /** The module's statements (built when asked for). */
  top: () => (Node | null)[],
  source: string,
  pos: (i: number) => { line: number },
): FileAnalysis['backendSwitch'] {
  // the cheap search first: few files define an enum
  if (!source.includes('Enum') || !/Enum\b/.test(source) || !/\b(TRITON|CUDA)\b/i.test(source))
    return null;
  for (const node of top()) {
    // `@unique class Kernel(Enum)`: the class under its decorator
    const n = node?.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
    if (n?.type !== 'class_definition') continue;
    const bases = n.childForFieldName('superclasses')?.text ?? '';
    if (!/Enum\b/.test(bases)) continue;
    const members = (n.childForFieldName('body')?.namedChildren ?? [])
      .map((st) => (st?.type === 'expression_statement' ? st.namedChildren[0] : null))
      .filter((a): a is Node => a?.type === 'assignment')
      .map((a) => {
        const right = a.childForFieldName('right');
        const value =
          right?.type === 'string' ? /^(["'])(\w+)\1$/.exec(right.text)?.[2] : undefined;
        return { member: a.childForFieldName('left')?.text ?? '', value };
      });
    const name = n.childForFieldName('name')?.text ?? '';
    const torch = members.find((m) => TORCH_MEMBERS.test(m.member));
    // a switch of kernels by its name or by a Triton member (accelerate's RNGType has TORCH and
    // CUDA members: random generators, not kernels)
    if (
      torch &&
      members.some((m) => BACKEND_MEMBERS.test(m.member)) &&
      (KERNEL_SWITCH.test(name) || members.some((m) => /TRITON/i.test(m.member)))
    )
      return {
        line: pos(n.startIndex).line,
        name,
        ...torch,
        gpu: members.filter((m) => m !== torch && GPU_MEMBER.test(m.member)),
      };
  }
  return null;
}

/**
 * `torch.cuda.synchronize` → `torch.npu.synchronize`: the segment named `from` in the chain. With
 * `from torch import cuda` … `cuda.synchronize()` the import is what changes; the use stays.
 */
/**
 * A module path written at [start, end) of an import, its segment `rw.from` (from the `first`th
 * segment on) renamed to `rw.to`: `torch.cuda.amp` → `torch.npu.amp`. Undefined: no such segment.
 */
function pathRenamed(
  path: string,
  start: number,
  end: number,
  rw: { from: string; to: string },
  first = 0,
): Edit[] | undefined {
  const segments = path.split('.');
  const at = segments.indexOf(rw.from);
  if (at < first) return undefined;
  return [{ start, end, text: segments.map((seg, i) => (i === at ? rw.to : seg)).join('.') }];
}

function renameSegment(rule: Rule, chain: Node, source: string, name: string): Edit[] | undefined {
  const rw = rule.rewrite;
  if (rw?.kind === 'remove-statement') return removeStatement(chain, source);
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
  // the root: only the module written by its own name (not `from torch import cuda`'s `cuda`)
  if (cur?.type === 'identifier' && cur.text === rw.from && name.startsWith(`${rw.from}.`))
    return [{ start: cur.startIndex, end: cur.endIndex, text: rw.to }];
  return undefined;
}
