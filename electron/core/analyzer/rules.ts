import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { resourcesDir } from '../paths';
import { msg, type Msg, type MsgParam } from '../../../shared/api/text';
import { CODE_CATEGORIES } from '../../../shared/stages/code/api';
import { ruleKey } from '../../../shared/i18n/rule-key';

/** A finding's message or fix as a message: the rule's (or its hint's) text and the values. */
export function ruleMsg(
  id: string,
  field: 'message' | 'fix',
  vars: Record<string, MsgParam> = {},
  hint?: number,
): Msg {
  return msg(ruleKey(id, field, hint), vars);
}

const Text = z.object({ en: z.string(), 'zh-CN': z.string() });

const Match = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('string'),
    regex: z.string(),
    /** Not where the string is only compared or a dict key (`impl == "x"`): a setting, not a test. */
    notCompared: z.boolean().optional(),
    /** Only as a comparison operand, itself or in a call: `grad_norm == float("inf")`. */
    onlyCompared: z.boolean().optional(),
    /** With onlyCompared: only when compared with a name whose last segment matches this. */
    comparedWith: z.string().optional(),
    /** With onlyCompared: not when compared with a name matching this (a norm's order: `ord`). */
    notComparedWith: z.string().optional(),
    /** Only as a dict's key: `{"GPU": 1}`, a Ray resource request. */
    dictKey: z.boolean().optional(),
    /**
     * With dictKey: only in a dict given as a keyword argument whose name matches this regex
     * (`ray_actor_options={"num_gpus": 1}`; a `{"gpu": …}` of statistics is no request).
     */
    dictIn: z.string().optional(),
    /**
     * Only as the value of a keyword argument or of a dict entry whose name matches this regex
     * (whole): LightGBM's `device_type="gpu"`, CatBoost's `{"task_type": "GPU"}`.
     */
    settingName: z.string().optional(),
    /** The setting may also be assigned: `cfg.accelerator = "gpu"`, `kwargs["accelerator"] = "gpu"`. */
    settingAssigned: z.boolean().optional(),
    /** A plain variable of that name counts too: `strategy = "ddp" if n > 1 else "auto"`. */
    settingBare: z.boolean().optional(),
    /**
     * A plain variable of that name counts where the file passes it on by the same keyword
     * (`accelerator = "gpu"` … `pl.Trainer(accelerator=accelerator)`), not where it is a record.
     */
    settingPassed: z.boolean().optional(),
    /**
     * Only where it names a variable being set: `os.environ["X"] = …`,
     * `os.environ.setdefault("X", …)`, `os.putenv("X", …)`; not where it is read.
     */
    envSet: z.boolean().optional(),
    /**
     * Only where the variable is given a value matching this regex: set (`os.environ["X"] =
     * "v"`, `setdefault("X", "v")`) or read with it as the default (`os.environ.get("X", "v")`).
     */
    envValue: z.string().optional(),
    /**
     * Only as a positional argument of a call whose function's last name matches this regex:
     * the dispatch key of `lib.impl("abs", abs, "CUDA")`, not a `"CUDA"` printed or compared.
     * With settingName, also as that call's keyword of that name (`init_process_group("gloo")`
     * and `init_process_group(backend="gloo")`, not `new_group(backend="gloo")`).
     */
    inCallOf: z.string().optional(),
    /**
     * Not inside the arguments of a call whose function's last name matches this regex, however
     * deep in the statement: a message (`print("export CUDA_VISIBLE_DEVICES=" + ids)`,
     * `parser.add_argument(…, help="…")`) tells, it sets nothing.
     */
    notInCallOf: z.string().optional(),
    /**
     * With inCallOf: the argument after it is a string that matches this regex (the default of
     * `os.environ.get("BUILD_EXT", "1")`).
     */
    nextArg: z.string().optional(),
  }),
  /** A function definition whose name matches: `def enable_xformers_memory_efficient_attention`. */
  z.object({ kind: z.literal('definition'), regex: z.string() }),
  /**
   * A call of a plain name matching this, not bound to a library a rule knows: the project's own
   * switch, `replace_llama_attn_with_flash_attn()`.
   */
  z.object({
    kind: z.literal('call-name'),
    regex: z.string(),
    /**
     * Words one of which every match holds (`flash_attn`, `xformers`): a file with none of them
     * is not looked into for this rule. Default: every word of the regex.
     */
    words: z.array(z.string().min(3)).optional(),
    /** Names bound by an import count too (`from accelerate.utils import is_xpu_available`). */
    imported: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('method'),
    name: z.string(),
    /** The in-place form too: `masked_fill_` as well as `masked_fill`. */
    inPlace: z.boolean().optional(),
    /**
     * The first argument (or `device=`) is a name ending so (`rank`, `self.local_rank`, a dotted
     * tail like `device.index`), an element of one, or a no-argument method call written with
     * its parentheses (`get_device()`), or the literal `0`.
     */
    firstArgIdentifier: z.array(z.string()).optional(),
    /** The object the method is called on, as written: `\\.pow\\(2\\)$` for `x.pow(2).mean(…)`. */
    objectRegex: z.string().optional(),
    /**
     * With objectRegex, a plain name as the object also matches by the value it was given just
     * before, read as `(value)`: `w = w + mask` a few statements above `w.softmax(-1)`.
     */
    objectAssigned: z.boolean().optional(),
    /** Only as an operand of `*`: `x * self.gelu(gate)` (a gated activation). */
    inProduct: z.boolean().optional(),
    /** The call's argument list, as written, matches: `keepdim=True`. */
    argsRegex: z.string().optional(),
  }),
  z.object({
    kind: z.literal('keyword'),
    name: z.string(),
    valueRegex: z.string().optional(),
    /** A plain assignment to that name instead of the argument: `num_warps = 8 if … else 4`. */
    assigned: z.boolean().optional(),
    /**
     * Not an argument of a call to these (resolved through the imports, `.*` for a whole
     * library): numpy's `meshgrid(…, sparse=True)` is no embedding.
     */
    notInCallOf: z.array(z.string()).optional(),
    /** Only where the same call also has a keyword argument whose name matches this regex (whole): `grid=` beside `block=` or `args=`. */
    withKeyword: z.string().optional(),
    /** Reported on the whole call, from its first line, not on the argument. */
    atCall: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('reference'),
    names: z.array(z.string()),
    except: z.array(z.string()).optional(),
    /**
     * Only where the name itself is a value: assigned, returned, or a branch of a conditional
     * expression (`device_module = torch.cuda`), not an argument (`hasattr(torch.cuda, …)`).
     */
    asValue: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('call'),
    names: z.array(z.string()),
    /**
     * Words one of which every match holds (`rank` in `torch.zeros(…, device=rank)`): what the
     * file-level prefilter looks for instead of the names, common ones like `torch.zeros`.
     */
    words: z.array(z.string().min(3)).optional(),
    stringArg: z.string().optional(),
    /** Only without a device argument (positional, device= or device_type=): GradScaler() is CUDA's. */
    withoutDevice: z.boolean().optional(),
    /** Only without this keyword argument (nor `**kwargs`, which may hold it): a setting not made. */
    withoutKeyword: z.string().optional(),
    /** Only with at most this many positional arguments (nor `*args`): torch.load's second is map_location. */
    maxPositional: z.number().optional(),
    /** Some argument's source text matches this (`float("-inf")` in a mask, `x + mask`). */
    argRegex: z.string().optional(),
    /** Only the first positional argument is tested against argRegex. */
    firstArgOnly: z.boolean().optional(),
    /**
     * With firstArgOnly, a plain name also matches by the value it was given just before, in the
     * same function: `scores = scores + mask` (or `scores += mask`) a few statements above.
     */
    argAssigned: z.boolean().optional(),
    /** Only as an operand of `*`: `F.silu(x) * y` (a gated activation). */
    inProduct: z.boolean().optional(),
    /**
     * Only where it sizes a Triton launch grid: in the tuple a lambda or a `grid` function
     * returns, assigned to a `grid` name or passed as `grid=`, or in `kernel[(…)]`.
     */
    inGrid: z.boolean().optional(),
  }),
  /**
   * A name a from-import brings in (`from maskrcnn_benchmark.layers import nms`): `names` is a
   * regex on the name, `except` one on `module.name` (torchvision's own), `words` what a file
   * holds when it can match.
   */
  z.object({
    kind: z.literal('imported-name'),
    names: z.string(),
    except: z.string().optional(),
    words: z.array(z.string().min(3)),
    /** Each call of the name the import binds is told too (the import alone: default). */
    calls: z.boolean().optional(),
  }),
  z.object({
    kind: z.literal('import'),
    modules: z.array(z.string()),
    /** Submodules another rule speaks for: `apex.optimizers` is not apex.amp. */
    except: z.array(z.string()).optional(),
  }),
  /**
   * An attribute read that is not a call: `x.is_cuda`. With `callers`, a module function that
   * returns it (`def num_sms(): return props.multi_processor_count`) is flagged where it is called.
   */
  z.object({
    kind: z.literal('attribute'),
    name: z.string(),
    callers: z.boolean().optional(),
    /** Not in the branch of an `if` that tests for CUDA (`if current_platform.is_cuda():`). */
    notInCudaBranch: z.boolean().optional(),
  }),
  /**
   * Calls into a compiled extension module: a name imported as `_C` / `_ext` / `*_cuda` (any
   * `from … import` whose name matches `modules`), or bound by a loader call
   * (`ext = ext_loader.load_ext(…)`, `torch.utils.cpp_extension.load(…)`): every `ext.op(…)`.
   */
  z.object({
    kind: z.literal('extension'),
    modules: z.string(),
    /**
     * Module names the scanned project's own build declares as CUDA extensions (setup.py's
     * `CUDAExtension("droid_backends", …)`): set per scan (withExtensionNames), never in the data.
     */
    names: z.array(z.string()).optional(),
    loaders: z.array(z.string()),
    /**
     * This rule also flags, once per torch.autograd.Function whose forward/backward calls the
     * extension, the forward's `def` line: where the NPU forward/backward pair is added.
     */
    functionRule: z.string().optional(),
    /** The rule that reports the import of an extension the file uses. */
    importRule: z.string().optional(),
    /** Told at a handler that stops the program where the extension's import fails. */
    raiseRule: z.string().optional(),
    /** And at the forward's last `ctx.x = …`: where `ctx.device = input.device.type` goes. */
    ctxRule: z.string().optional(),
    /**
     * And at `if x.device.type == "cpu":` in a function that otherwise calls the extension: the
     * PyTorch path only the CPU takes, where the NPU belongs too.
     */
    cpuRule: z.string().optional(),
    /** And at each `Fn.apply(…)` of an autograd Function over the extension, outside it. */
    applyRule: z.string().optional(),
    /**
     * A module bound by a plain `import x` and called as `x.op(…)` in an autograd Function's
     * forward or backward is an extension whatever its name (PyTorch's extension tutorial:
     * `import lltm_cpp` … `lltm_cpp.forward(…)`), unless its name matches this regex: the
     * standard library and pure-Python packages.
     */
    autogradExcept: z.string().optional(),
  }),
  /** A plain name (not a string, not an attribute) tested in a condition: `if is_nccl_backend:`. */
  z.object({ kind: z.literal('condition-name'), regex: z.string() }),
  /**
   * A `raise` (or exit) that is the `else:` of an `if` whose condition matches this regex: the
   * branch a host without CUDA takes (`if torch.cuda.is_available() and CUDA_HOME …: … else:
   * raise NotImplementedError("Cuda is not available")`).
   */
  z.object({ kind: z.literal('else-raise'), condition: z.string() }),
  /** Found by the scanner itself (what must be added, requirements, scripts), not by a pattern. */
  z.object({ kind: z.literal('none') }),
]);

const Rewrite = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('string-replace'), from: z.string(), to: z.string() }),
  z.object({ kind: z.literal('method-rename'), to: z.string() }),
  /**
   * One segment of the dotted name as written (`torch.cuda.x` → `torch.npu.x`); the root only
   * where it is the module itself (`torch.profiler.profile` → `torch_npu.profiler.profile`).
   * `imports`: the names the renamed module also has; a from-import naming any other is left
   * as written (torch_npu.profiler has no record_function).
   */
  z.object({
    kind: z.literal('rename-segment'),
    from: z.string(),
    to: z.string(),
    imports: z.array(z.string()).optional(),
  }),
  z.object({ kind: z.literal('attribute-rename'), to: z.string() }),
  /** The whole matched expression becomes this text (e.g. dist.Backend.NCCL → "hccl"). */
  z.object({ kind: z.literal('replace-expression'), to: z.string() }),
  /** The keyword argument goes, with its comma (`, num_warps=8`): a removal, not a rewrite. */
  z.object({ kind: z.literal('remove-argument') }),
  /** A call gets this as its first argument: `GradScaler()` → `GradScaler("npu")`. */
  z.object({ kind: z.literal('insert-first-argument'), text: z.string() }),
  /** The argument written last: `torch.load(path)` → `torch.load(path, map_location="cpu")`. */
  z.object({ kind: z.literal('append-argument'), text: z.string() }),
  /** The statement that is the matched call goes (its line, or `pass` if it is alone). */
  z.object({ kind: z.literal('remove-statement') }),
]);

export const Rule = z.object({
  id: z.string().regex(/^[a-z]+\.[a-z0-9-]+$/),
  category: z.enum(CODE_CATEGORIES),
  severity: z.enum(['error', 'warning', 'info']),
  /** Short name of what the rule is about, for filters and the code stage's checks. */
  title: Text,
  message: Text,
  why: Text,
  fix: Text.optional(),
  docs: z.string().optional(),
  match: Match,
  rewrite: Rewrite.optional(),
  /** torch_npu's transfer_to_npu patches this at run time: transfer mode leaves it alone. */
  transfer: z.boolean().optional(),
  /**
   * Told without an edit, but its one replacement is torch_npu's (a flash-attn kernel →
   * npu_fusion_attention, NVTX → torch_npu.npu.mstx): the file then imports torch_npu.
   */
  torchNpuFix: z.boolean().optional(),
  /**
   * Flags the places a library's names are used (each call a porter rewrites); the library's
   * import rule already flags the import line, so this one does not repeat it there.
   */
  uses: z.boolean().optional(),
  /** One finding per file (the first place), its message saying how many: `{{count}}`. */
  once: z.boolean().optional(),
  /**
   * Not in a file whose text matches this regex: a branch for another accelerator is told only
   * where the file has none for the NPU yet.
   */
  unlessFile: z.string().optional(),
  /** A more precise fix where the matched name says which op it is (`nms` → torchvision.ops.nms). */
  hints: z
    .array(z.object({ when: z.string(), fix: Text.optional(), message: Text.optional() }))
    .optional(),
  /** Not reported in a file where this other rule has a finding (it says the same, closer). */
  subsumedBy: z.string().optional(),
  /** Not reported in a file that imports one of these: it loads the NPU counterpart already. */
  unlessImported: z.array(z.string()).optional(),
  /**
   * Not reported in a file whose text matches this regex: the file does already what the rule
   * advises (`autocast` or a GradScaler where the rule asks for mixed precision).
   */
  unlessSource: z.string().optional(),
});
export type Rule = z.infer<typeof Rule>;

let cached: Rule[] | undefined;

const withNames = new Map<string, Rule[]>();
/**
 * The rules with the extension rule also knowing these module names (the scanned project's
 * CUDA extensions, whatever they are called): one array per set of names, so what is compiled
 * from it is compiled once.
 */
export function withExtensionNames(rules: Rule[], names: readonly string[]): Rule[] {
  if (!names.length) return rules;
  const key = [...names].sort().join(' ');
  let out = withNames.get(key);
  if (!out) {
    if (withNames.size > 16) withNames.clear();
    out = rules.map((r) =>
      r.match.kind === 'extension' ? { ...r, match: { ...r.match, names: [...names] } } : r,
    );
    withNames.set(key, out);
  }
  return out;
}

/**
 * The modules a setup.py builds with CUDAExtension (their last segment, as code imports them):
 * `CUDAExtension("droid_backends", …)`, `CUDAExtension(name="lietorch_backends", sources=…)`,
 * also under the name the build chose it by (`extension = CUDAExtension` … `extension(name=…)`,
 * mmcv's and CLRNet's idiom), and a name given by a variable assigned a string in the file.
 */
export function cudaExtensionNames(setupPy: string): string[] {
  const out = new Set<string>();
  const builders = ['CUDAExtension'];
  for (const m of setupPy.matchAll(/\b(\w+)[ \t]*=[ \t]*CUDAExtension\b(?![ \t]*\()/g))
    builders.push(m[1]!);
  const b = `\\b(?:${builders.join('|')})\\s*\\(`;
  for (const m of setupPy.matchAll(
    new RegExp(
      `${b}\\s*(?:name\\s*=\\s*)?["']([\\w.]+)["']|${b}(?:[^()]|\\([^()]*\\))*?\\bname\\s*=\\s*["']([\\w.]+)["']`,
      'g',
    ),
  ))
    out.add((m[1] ?? m[2])!.split('.').pop()!);
  // `name=ext_name` with `ext_name = 'clrnet.ops.nms_impl'` earlier in the file
  for (const m of setupPy.matchAll(
    new RegExp(`${b}(?:[^()]|\\([^()]*\\))*?\\bname\\s*=\\s*([A-Za-z_]\\w*)\\s*[,)]`, 'g'),
  )) {
    const value = new RegExp(`^[ \\t]*${m[1]}[ \\t]*=[ \\t]*["']([\\w.]+)["']`, 'm').exec(setupPy);
    if (value) out.add(value[1]!.split('.').pop()!);
  }
  return [...out];
}

/** The analyzer's rules from resources/knowledge/rules/*.json, validated once. */
export function loadRules(): Rule[] {
  if (cached) return cached;
  const file = join(resourcesDir(), 'knowledge', 'rules', 'cuda.json');
  // jitless: validated once per process, where compiling zod's fast path (run-time code, never
  // in V8's code cache) cost a one-shot `amw scan` 3% of its start-up instructions
  const parsed = z
    .object({ rules: z.array(Rule) })
    .safeParse(JSON.parse(readFileSync(file, 'utf8')), { jitless: true });
  if (!parsed.success) {
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  const ids = new Set<string>();
  for (const r of parsed.data.rules) {
    if (ids.has(r.id)) throw new Error(`${file}: duplicate rule id ${r.id}`);
    ids.add(r.id);
  }
  cached = parsed.data.rules;
  return cached;
}

let libs: Record<string, string> | undefined;

/**
 * Which rule a distribution named in a requirements file, setup.py or pyproject speaks for
 * (resources/knowledge/requirement-libs.json); every rule it names must exist.
 */
export function requirementLibs(): Record<string, string> {
  if (libs) return libs;
  const file = join(resourcesDir(), 'knowledge', 'requirement-libs.json');
  const parsed = z
    .object({ libraries: z.record(z.string().regex(/^[a-z0-9._-]+$/), z.string()) })
    .safeParse(JSON.parse(readFileSync(file, 'utf8')), { jitless: true });
  if (!parsed.success)
    throw new Error(
      `${file} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const ids = new Set(loadRules().map((r) => r.id));
  const unknown = Object.values(parsed.data.libraries).filter((id) => !ids.has(id));
  if (unknown.length) throw new Error(`${file}: no such rules: ${unknown.join(', ')}`);
  libs = parsed.data.libraries;
  return libs;
}

/** The words one of which every match of a call-name rule holds: declared, else the regex's words. */
export const callNameWords = (match: { regex: string; words?: string[] }): string[] =>
  match.words ?? match.regex.match(/[A-Za-z_]\w{2,}/g) ?? [];
