/**
 * The files that say what a project installs — requirements*.txt, setup.py / pyproject.toml /
 * setup.cfg, conda's environment.yml — read line by line for what does not install or run on
 * Ascend: CUDA-only packages, CUDA builds of torch and NVIDIA's runtime, torch pinned without
 * torch_npu.
 */
import type { Msg } from '../../../shared/api/text';
import { loadKnowledge } from '../knowledge/load';
import { TooCostly, type Edit } from './analyze-file';
import { newlineStarts, pointAt } from './line-matches';
import { requirementLibs } from './rules';

// `cu118`, or the CUDA version from a variable (`+cu${CUDA_VER}`, `whl/cu$CU`)
// (and a wheel's own URL under a folder for a CUDA version: `…/radon-v2/cuda-11.3/torch-1.11/…whl`)
const CUDA_WHEEL =
  /\+cu(?:\d+|\$\{?\w+\}?)|download\.pytorch\.org\/whl\/cu(?:\d+|\$)|^\s*nvidia-[a-z0-9-]+-cu\d+|^\s*cupy-cuda|^\s*https?:\/\/\S*\/(?:cuda[-_]?\d+(?:\.\d+)?|cu\d{3})\/\S*\.whl\b/;
/** OpenMMLab's index of mmcv wheels built for a CUDA version (`…/mmcv/dist/cu121/torch2.1/…`). */
export const MMCV_CUDA_INDEX = /download\.openmmlab\.com\/mmcv\/dist\/cu\d+/;
/** A requirement as quoted in a list, without its quotes. */
const unquoted = (spec: string) => spec.replace(/^["']|["']$/g, '');
/** NVIDIA's CUDA runtime wheels as packaging metadata names them (`nvidia-cudnn-cu12`). */
const CUDA_RUNTIME_WHEEL = /^nvidia-[a-z0-9-]+-cu\d+$/;
/** The torch_npu release built for a torch version, from the version matrix (newest first). */
function torchNpuFor(torch: string): string | null {
  const base = torch.replace(/\+.*$/, '');
  const rows = loadKnowledge().versions.matrix.filter((m) => m.torch === base);
  return (rows.find((m) => m.status === 'active') ?? rows[0])?.torchNpu ?? null;
}

export type AddFinding = (
  ruleId: string,
  file: string,
  at: { line: number; column: number; endColumn: number },
  opts?: { vars?: Record<string, string>; message?: string; text?: Msg; edits?: Edit[] },
) => void;

/**
 * `install_requires=[…]` in setup.py, `dependencies = […]` in pyproject.toml, `install_requires =`
 * in setup.cfg: a quoted (or, in setup.cfg, listed) requirement naming a CUDA-only package.
 */
export function scanPackageDependencies(rel: string, src: string, finding: AddFinding): void {
  if (!/install_requires|dependenc|requires/.test(src)) return;
  // Poetry's tables name packages as keys: `flash-attn = { version = "^2.5" }`
  let poetryTable = false;
  // set in the loop's callback, where TypeScript does not follow it
  let torch = null as { line: number; at: number; spec: string; listed: boolean } | null;
  let hasTorchNpu = false;
  const starts = newlineStarts(src);
  src.split('\n').forEach((line, i) => {
    if (/^\s*#/.test(line)) return;
    if (/^\s*\[/.test(line))
      poetryTable = /^\s*\[tool\.poetry\.(?:group\.[\w-]+\.)?(?:dev-)?dependencies\]/.test(line);
    const specs = poetryTable
      ? [/^\s*([A-Za-z0-9_.-]+)\s*=/.exec(line)].filter((m): m is RegExpExecArray => !!m)
      : rel.endsWith('.cfg')
        ? [/^\s+([A-Za-z0-9_.-]+)\s*(?:[<>=!~;[]|$)/.exec(line)].filter(
            (m): m is RegExpExecArray => !!m,
          )
        : [
            ...line.matchAll(
              /["']([A-Za-z0-9_.-]+)\s*(?:\[[^\]"']*\])?\s*(?:[<>=!~;@][^"']*)?["']/g,
            ),
          ];
    for (const m of specs) {
      const dashed = m[1]!.toLowerCase().replace(/[-_.]+/g, '-');
      if (dashed === 'torch-npu') hasTorchNpu = true;
      // a quoted list entry gets the torch_npu pin beside it; a Poetry or setup.cfg line is told
      // pinned only: a bare "torch" can be a keyword or a package name in setup.py's other fields
      if (dashed === 'torch' && !torch && /[<>=~]/.test(m[0]))
        torch = {
          line: i,
          at: m.index ?? 0,
          spec: m[0],
          listed: !poetryTable && !rel.endsWith('.cfg'),
        };
      const ruleId =
        packageRule(m[1]!) ?? (CUDA_RUNTIME_WHEEL.test(dashed) ? 'req.cuda-wheel' : '');
      if (!ruleId) continue;
      const col = (m.index ?? 0) + 1;
      // a CUDA runtime wheel alone on its line of a list goes with its line
      const alone =
        ruleId === 'req.cuda-wheel' &&
        !poetryTable &&
        /^\s*$/.test(line.slice(0, m.index)) &&
        /^\s*,?\s*$/.test(line.slice((m.index ?? 0) + m[0].length));
      finding(
        ruleId,
        rel,
        { line: i + 1, column: col, endColumn: col + m[0].length },
        {
          vars: { name: m[1]!, text: unquoted(m[0]) },
          edits: alone
            ? [
                {
                  start: starts[i]!,
                  end: Math.min(starts[i]! + line.length + 1, src.length),
                  text: '',
                },
              ]
            : undefined,
        },
      );
    }
  });
  if (!torch || hasTorchNpu) return;
  const { line, at, spec, listed } = torch;
  const end = starts[line]! + at + spec.length;
  const version = /==\s*([0-9][0-9A-Za-z.+]*)/.exec(spec)?.[1];
  const npu = version ? torchNpuFor(version) : null;
  const quote = spec[0]!;
  const text = src.slice(starts[line]!, starts[line + 1] ?? src.length).replace(/\r?\n$/, '');
  const pin = `${quote}torch-npu==${npu}${quote}`;
  // an entry alone on its line (`  "torch==2.1.0",`) gets its own line below; else it goes beside
  const own = /^(\s*)$/.exec(text.slice(0, at));
  const edit: Edit | null =
    !npu || !listed
      ? null
      : own && /^\s*,\s*$/.test(text.slice(at + spec.length))
        ? {
            start: starts[line]! + text.length,
            end: starts[line]! + text.length,
            text: `\n${own[1]}${pin},`,
          }
        : { start: end, end, text: `, ${pin}` };
  finding(
    'req.torch-npu',
    rel,
    { line: line + 1, column: at + 1, endColumn: at + spec.length + 1 },
    {
      vars: { text: unquoted(spec) },
      edits: edit ? [edit] : undefined,
    },
  );
}

/** pip's options that take a value as the next word (`-r requirements.txt`, `-f URL`). */
const PIP_VALUE_OPTIONS = new Set(
  (
    '-r --requirement -c --constraint -e --editable -f --find-links -i --index-url ' +
    '--extra-index-url -t --target --prefix --root --src --upgrade-strategy --python-version ' +
    '--platform --implementation --abi --no-binary --only-binary --progress-bar -C ' +
    '--config-settings --global-option --install-option --build-option --trusted-host ' +
    '--cache-dir --log --proxy --timeout --retries --python'
  ).split(' '),
);

/**
 * A command at `at` that does not run: in a comment, or words an echo prints (`echo "pip install
 * apex"`). What is before it on its line is read only so far back: a line of commands stays linear.
 */
function notRun(src: string, lineStart: number, at: number): boolean {
  const before = src.slice(Math.max(lineStart, at - 512), at);
  const command = before.slice(Math.max(...[';', '&', '|'].map((c) => before.lastIndexOf(c))) + 1);
  return /(?:^|\s)#/.test(before) || /\b(?:echo|printf)\b/.test(command);
}

/**
 * `pip install …` in a script, a Dockerfile or a CI workflow (continued over `\` lines): each
 * package it names that has a rule is that rule's finding, where the name is written. Paths,
 * URLs and the values of pip's options are not packages.
 */
export function scanInstallCommands(
  rel: string,
  src: string,
  finding: AddFinding,
  /** performance.now() past which the file is given up (TooCostly). */
  deadline = Infinity,
): void {
  const starts = newlineStarts(src);
  const lineOf = (at: number) => pointAt(starts, at).row;
  // the command's words: up to a shell separator, a comment or an unescaped line end
  // (a quoted word may hold spaces: `"grouped_gemm @ git+https://…"`)
  const word = /\\\r?\n|(&&|\|\||[;|)`]|#|\r?\n)|(["']?)((?<=["'])[^"'\r\n]+|[^\s"';|&)`]+)\2/y;
  const gap = /[ \t]*/y;
  /** Where the last command's words ended: a command inside them was read with them. */
  let readTo = 0;
  /** The first torch pinned for the CPU build (the one torch_npu pairs with), if any. */
  let torch = null as PinnedTorch | null;
  const ownsNpu = src.includes('npu') && /torch[-_]npu/.test(src);
  for (const cmd of src.matchAll(/(?<![\w-])pip3?\s+install(?![\w-])/g)) {
    if (cmd.index < readTo) continue;
    const line = lineOf(cmd.index);
    if (performance.now() > deadline) throw new TooCostly();
    if (notRun(src, starts[line]!, cmd.index)) continue;
    word.lastIndex = cmd.index + cmd[0].length;
    let takesValue = false;
    let pinned = null as PinnedTorch | null;
    for (;;) {
      gap.lastIndex = word.lastIndex;
      gap.exec(src);
      word.lastIndex = gap.lastIndex;
      const w = word.exec(src);
      if (!w) break;
      readTo = word.lastIndex;
      if (w[1]) break;
      const token = w[3];
      if (!token) continue;
      const tokenAt = w.index + w[2]!.length;
      /** The rule's finding for `name`, on `length` characters from `at`. */
      const report = (ruleId: string, at: number, length: number, name: string) => {
        const i = lineOf(at);
        const column = at - starts[i]! + 1;
        const where = { line: i + 1, column, endColumn: column + length };
        finding(ruleId, rel, where, { vars: { name } });
      };
      // an extra named for a package installs it, on a path as on a name (an editable one's too:
      // `pip install -e .[deepspeed,flash-attn]`)
      const extras = /\[([^\]]*)\]/.exec(token);
      if (extras && !/\s@\s/.test(token))
        for (const extra of extras[1]!.matchAll(/[A-Za-z0-9_.-]+/g)) {
          const ruleId = packageRule(extra[0]);
          const at = tokenAt + extras.index + 1 + extra.index;
          if (ruleId) report(ruleId, at, extra[0].length, extra[0]);
        }
      if (takesValue) {
        takesValue = false;
        continue;
      }
      if (token.startsWith('-')) {
        takesValue = !token.includes('=') && PIP_VALUE_OPTIONS.has(token);
        continue;
      }
      // a repository's URL installs that repository's package; any other path, URL, wheel file
      // or variable is not a name on the index
      // `name @ url`, `name[extra] @ url`: a direct reference installs that name
      const direct = /^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*@\s*\S/.exec(token)?.[1];
      const fromUrl = direct ?? urlPackage(token);
      // a name with a version made of a variable is still that name (`flash-attn==${VERSION}`)
      const versioned = /^[A-Za-z0-9_.-]+(?:\[[^\]]*\])?\s*[<>=!~]/.test(token);
      if (!fromUrl && !versioned && /[/$\\]|^\.|\.whl$/.test(token)) continue;
      const spelled = fromUrl ?? /^[A-Za-z0-9_.-]+/.exec(token)?.[0];
      const ruleId = spelled ? packageRule(spelled) : undefined;
      if (ruleId) report(ruleId, tokenAt, token.length, spelled!);
      if (spelled === 'torch' && versioned && !fromUrl && !pinned)
        pinned = {
          at: tokenAt,
          token,
          version: /^torch\s*==\s*([0-9][0-9A-Za-z.]*)$/.exec(token)?.[1] ?? null,
        };
    }
    // not beside another accelerator's build (CUDA's is told by its own pattern, torch_npu with it)
    if (pinned && !torch && !ownsNpu && !OTHER_BUILD_IN_COMMAND.test(src.slice(cmd.index, readTo)))
      torch = pinned;
  }
  // torch installed by the script, torch_npu nowhere in it: the image or environment it builds
  // cannot run on the NPU; the release paired with that torch goes beside it
  if (torch) {
    const i = lineOf(torch.at);
    const column = torch.at - starts[i]! + 1;
    const npu = torch.version ? torchNpuFor(torch.version) : null;
    const end = torch.at + torch.token.length;
    finding(
      'req.torch-npu',
      rel,
      { line: i + 1, column, endColumn: column + torch.token.length },
      {
        vars: { text: torch.token },
        edits: npu ? [{ start: end, end, text: ` torch-npu==${npu}` }] : undefined,
      },
    );
  }
}

/** torch pinned in an install command: the token, where it is, its exact version if any. */
type PinnedTorch = { at: number; token: string; version: string | null };

/**
 * Another accelerator's build of torch named in an install command: its `+cu` / `+rocm` local
 * version, or its index (one chosen by a variable is taken for the CUDA one it usually is). The
 * CUDA one is told by its own pattern; an install script's alternatives for ROCm or XPU are not
 * where torch_npu goes, its CPU one is.
 */
const OTHER_BUILD_IN_COMMAND =
  /\+(?:cu|rocm|xpu)\d|\+\$\{?\w*cu|download\.pytorch\.org\/whl\/(?:nightly\/|test\/)?(?:cu|rocm|xpu|\$)/i;

/**
 * A script's inline Python that imports a CUDA-only library (`RUN python -c "import torch,
 * flash_attn, apex; print(…)"`, a build's check that its kernels load): the first such module of
 * each snippet, told by that library's rule. A compiled module named for CUDA
 * (`import pointnet2_batch_cuda`) is an operator library's.
 */
export function scanInlineImports(
  rel: string,
  src: string,
  finding: AddFinding,
  deadline = Infinity,
): void {
  if (!src.includes('-c')) return;
  const starts = newlineStarts(src);
  for (const cmd of src.matchAll(/(?<![\w-])python(?:3(?:\.\d+)?)?\s+-c\s+(["'])/g)) {
    if (performance.now() > deadline) throw new TooCostly();
    const open = cmd.index + cmd[0].length;
    const lineEnd = src.indexOf('\n', open);
    // the snippet up to its closing quote on the same line (or the line's end: a continued one)
    const end = Math.min(lineEnd < 0 ? src.length : lineEnd, open + 2000);
    const close = src.indexOf(cmd[1]!, open);
    const code = src.slice(open, close >= 0 && close < end ? close : end);
    const row = pointAt(starts, cmd.index).row;
    if (/^\s*#/.test(src.slice(starts[row]!, cmd.index))) continue;
    for (const m of code.matchAll(
      /(?:^|[;:]\s*|\s)(?:import\s+((?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*[\w.]+)|from\s+([\w.]+)\s+import\b)/g,
    )) {
      const modules = m[2] ? [m[2]] : m[1]!.split(',').map((x) => x.trim().split(/\s+/)[0]!);
      const hit = modules
        .map((mod) => {
          const top = mod.split('.')[0]!;
          // a compiled module: named for CUDA (`pointnet2_batch_cuda`), or a package's extension
          // (`ctr_ops._C`, `pkg._ext`), a build's check that its kernels load
          const ruleId =
            packageRule(top) ??
            (/^\w+_cuda$/.test(top) || /^\w+(?:\.\w+)*\.(?:_C|_ext)$/.test(mod)
              ? 'lib.cuda-ops'
              : undefined);
          return ruleId ? { mod, top: ruleId === 'lib.cuda-ops' ? mod : top, ruleId } : undefined;
        })
        .find((x) => x);
      if (!hit) continue;
      const at = open + m.index! + m[0].indexOf(hit.mod, m[0].search(/import|from/));
      const column = at - starts[row]! + 1;
      finding(
        hit.ruleId,
        rel,
        { line: row + 1, column, endColumn: column + hit.mod.length },
        { vars: { name: hit.top } },
      );
      break;
    }
  }
}

/**
 * `git clone <repository>` of a CUDA-only library, in a script or a Dockerfile (cloned to be built
 * by nvcc: `git clone https://github.com/SeanNaren/warp-ctc.git && cd warp-ctc/pytorch_binding`):
 * the repository's name looked up like a requirement's. NVIDIA's apex is told by its own script
 * pattern (Ascend's apex is its counterpart).
 */
export function scanCloneCommands(
  rel: string,
  src: string,
  finding: AddFinding,
  deadline = Infinity,
): void {
  if (!src.includes('git clone')) return;
  const starts = newlineStarts(src);
  // the first URL after the command's options (`--depth 1`, `-b v1.2`, `--recursive`)
  const clone =
    /(?<![\w-])git\s+clone\s+(?:-{1,2}[\w-]+(?:[= ](?!https?:|git@)\S+)?\s+)*["']?(?:https?:\/\/|git@)[^\s"']*?[/:]([A-Za-z0-9_.-]+?)(?:\.git)?\/?(?=["'\s]|$)/g;
  for (const m of src.matchAll(clone)) {
    if (performance.now() > deadline) throw new TooCostly();
    const repo = m[1]!;
    const ruleId = /^apex$/i.test(repo) ? undefined : packageRule(repo);
    if (!ruleId) continue;
    const row = pointAt(starts, m.index).row;
    if (notRun(src, starts[row]!, m.index)) continue;
    const at = m.index + m[0].lastIndexOf(repo);
    const column = at - starts[row]! + 1;
    finding(
      ruleId,
      rel,
      { line: row + 1, column, endColumn: column + repo.length },
      { vars: { name: repo } },
    );
  }
}

/**
 * The package a version-control URL installs: its `#egg=` name, else the repository's
 * (`git+https://github.com/NVlabs/tiny-cuda-nn.git@v1.7#subdirectory=bindings/torch`, also
 * with a slash before the fragment → tiny-cuda-nn, listed under that name too).
 */
function urlPackage(token: string): string | undefined {
  if (!/^["']?(?:git|hg|svn|bzr)\+/.test(token)) return undefined;
  const egg = /[#&]egg=([A-Za-z0-9_.-]+)/.exec(token)?.[1];
  if (egg) return egg;
  return /^["']?\w+\+[a-z]+:\/\/(?:[^/@\s]+@)?[^#@\s"']*\/([A-Za-z0-9_.-]+?)(?:\.git)?(?=\/?[@#"']|\/?$)/.exec(
    token,
  )?.[1];
}

/**
 * The package a local folder installs, by the folder's name (`submodules/simple-knn`,
 * `-e ./third_party/nvdiffrast/`: 3D Gaussian Splatting's environment.yml), when that name is a
 * listed library's; a folder of the project's own (`src`, `.`) is no package to look up.
 */
function localPackage(text: string): string | undefined {
  const folder =
    /^\s*(?:(?:-e|--editable)\s+)?(?:\.{1,2}\/)?(?:[\w.-]+\/)+([A-Za-z0-9_.-]+)\/?\s*$/.exec(
      text,
    )?.[1];
  return folder && packageRule(folder) ? folder : undefined;
}

/**
 * The rule for a distribution as packaging metadata spells it: any case and separator
 * (`Flash_Attn`), a nightly build (`triton-nightly`), a CUDA-versioned wheel (`cupy-cuda12x`).
 */
function packageRule(spelled: string): string | undefined {
  const libs = requirementLibs();
  const name = spelled.toLowerCase();
  const dashed = name.replace(/[-_.]+/g, '-');
  return (
    libs[name] ??
    libs[dashed] ??
    libs[dashed.replace(/-nightly$/, '')] ??
    libs[dashed.replace(/-cuda\d*x?$|-cu\d+$/, '')] ??
    // not a module path (`pointnet2_ops._ext`, `mamba_ssm.egg-info`): the package itself
    (name.includes('.') ? undefined : forkedOps(dashed, libs))
  );
}

/**
 * A fork of a CUDA-ops package under a longer name (`diff-gaussian-rasterization-w-depth`,
 * `simple-knn-fork`, `depth-diff-gaussian-rasterization`): its kernels are the same CUDA code. Only names of two words or more are
 * taken as a prefix, so that `cumm` says nothing about `cumm-utils`.
 */
function forkedOps(dashed: string, libs: Record<string, string>): string | undefined {
  for (let i = dashed.lastIndexOf('-'); i > 0; i = dashed.lastIndexOf('-', i - 1)) {
    const head = dashed.slice(0, i);
    if (head.includes('-') && libs[head] === 'lib.cuda-ops') return 'lib.cuda-ops';
    // or before it (`depth-diff-gaussian-rasterization`)
    const tail = dashed.slice(i + 1);
    if (tail.includes('-') && libs[tail] === 'lib.cuda-ops') return 'lib.cuda-ops';
  }
  return undefined;
}

export function scanRequirements(rel: string, src: string, finding: AddFinding): void {
  const starts = newlineStarts(src);
  const lines = src.split('\n');
  let torchLine = -1;
  let torchVersion: string | null = null;
  let hasTorchNpu = false;
  lines.forEach((text, i) => {
    if (/^\s*#/.test(text)) return;
    const name = requirementEntry(rel, text, i, starts[i]!, 0, finding, {
      start: starts[i]!,
      end: starts[i]! + text.length + 1,
      text: '',
    });
    if (name === 'torch') {
      torchLine = i;
      torchVersion = /==\s*([0-9][0-9A-Za-z.+]*)/.exec(text)?.[1] ?? null;
    }
    if (name === 'torch-npu' || name === 'torch_npu') hasTorchNpu = true;
  });
  if (torchLine < 0 || hasTorchNpu) return;
  const text = lines[torchLine]!;
  const npu = torchVersion ? torchNpuFor(torchVersion) : null;
  const at = starts[torchLine]! + text.length;
  finding(
    'req.torch-npu',
    rel,
    { line: torchLine + 1, column: 1, endColumn: text.length + 1 },
    {
      vars: { text: text.trim() },
      // without a pinned torch there is no release to name; the env stage tells the host's one
      edits: npu ? [{ start: at, end: at, text: `\ntorch-npu==${npu}` }] : undefined,
    },
  );
}

/**
 * One requirement as pip reads it (`text`, at offset `at` of line `i`): a CUDA-only package is
 * its rule's finding, a CUDA build (`+cu118`, the cu118 index, NVIDIA's runtime wheels) is
 * rewritten or `removal` removes it. The distribution's name, lower-cased.
 */
function requirementEntry(
  rel: string,
  text: string,
  i: number,
  /** Where `text` starts: its offset in the file and its column (0-based) in its line. */
  at: number,
  column: number,
  finding: AddFinding,
  removal: Edit,
): string | undefined {
  const lead = /^\s*/.exec(text)![0].length;
  const where = {
    line: i + 1,
    column: column + lead + 1,
    endColumn: column + text.length + 1,
  };
  const named = /^\s*([A-Za-z0-9_.-]+)/.exec(text)?.[1];
  // a direct reference (`dropout-layer-norm @ git+https://github.com/Dao-AILab/flash-attention…`)
  // is looked up by its name, else by the repository it installs from
  const direct = /^\s*[A-Za-z0-9_.-]+\s*@\s*(\S+)/.exec(text)?.[1];
  const spelled =
    urlPackage(text.trim().replace(/^(?:-e|--editable)\s+/, '')) ??
    localPackage(text) ??
    (named && direct && !packageRule(named) ? (urlPackage(direct) ?? named) : named);
  // spelled as in setup.py and pyproject: `cupy-cuda12x`, `cudf-cu12`, `flash_attn`
  const ruleId = spelled ? packageRule(spelled) : undefined;
  // mmcv from OpenMMLab's CUDA wheel index: its ops are CUDA kernels (no CPU/NPU wheel to swap in)
  if (MMCV_CUDA_INDEX.test(text)) {
    finding('req.mmcv-cuda-ops', rel, where, { vars: { text: text.trim() } });
    return spelled?.toLowerCase();
  }
  const wheel = CUDA_WHEEL.test(text);
  // `cupy-cuda12x`: the library's own finding, with the CUDA wheel's removal (not two findings)
  if (ruleId)
    finding(ruleId, rel, where, {
      vars: { name: spelled! },
      edits: wheel ? cudaWheelEdit(text, at, removal) : undefined,
    });
  else if (wheel)
    finding('req.cuda-wheel', rel, where, {
      vars: { text: text.trim() },
      edits: cudaWheelEdit(text, at, removal),
    });
  // a package built from source with its CUDA switch on (`lightgbm --config-settings=
  // cmake.define.USE_CUDA=ON`)
  else if (CMAKE_CUDA_DEFINE.test(text))
    finding('req.cuda-wheel', rel, where, { vars: { text: text.trim() } });
  return spelled?.toLowerCase();
}

const CMAKE_CUDA_DEFINE =
  /\bcmake\.define\.(?:\w+_)?(?:USE|WITH|ENABLE|BUILD)_CUDA\w*=(?:ON|On|on|1|TRUE|True|true)\b/;

/** conda's environment file: `dependencies:` at the top, with `channels:` or a `- pip:` list. */
export function isCondaEnvironment(rel: string, src: string): boolean {
  return (
    /\.ya?ml$/i.test(rel) &&
    /^dependencies:[ \t]*\r?$/m.test(src) &&
    (/^channels:[ \t]*\r?$/m.test(src) || /^[ \t]*-[ \t]+pip:[ \t]*\r?$/m.test(src))
  );
}

/**
 * The pip packages a YAML config lists for its runtime (Ray's `runtime_env: pip:`, bentofile's
 * `python: packages:`, a job spec's `requirements:`): each item read as a requirements line.
 */
export function scanYamlPackageLists(rel: string, src: string, finding: AddFinding): void {
  const starts = newlineStarts(src);
  /** The list key being read and its indentation, while its items follow it. */
  let list: { indent: number } | null = null;
  for (const [i, raw] of src.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const key = /^([ \t]*)(?:-[ \t]+)?([A-Za-z_][\w-]*):[ \t]*(?:#.*)?$/.exec(line);
    if (key) {
      list = PACKAGE_LIST_KEYS.test(key[2]!) ? { indent: key[1]!.length } : null;
      continue;
    }
    const item = /^([ \t]*)-[ \t]+["']?([^#\s"'](?:[^#"']*[^#\s"'])?)/.exec(line);
    if (!item) {
      if (/\S/.test(line) && !/^\s*#/.test(line)) list = null;
      continue;
    }
    if (!list || item[1]!.length < list.indent) continue;
    const value = item[2]!;
    const col = line.indexOf(value, item[1]!.length);
    requirementEntry(rel, value, i, starts[i]! + col, col, finding, {
      start: starts[i]!,
      end: Math.min(starts[i]! + raw.length + 1, src.length),
      text: '',
    });
  }
}
const PACKAGE_LIST_KEYS = /^(?:pip|packages|python_packages|pip_packages|requirements)$/;

const CONDA_CUDA_BUILD = /^[\w.-]+\s*=[^=\s]+=\S*(?:cuda\d|_cu\d{2,3}\b)/;

/** conda's CUDA stack: pytorch's CUDA pin, the toolkit, compiler, runtime, cuDNN and NCCL. */
const CONDA_CUDA =
  /^(?:pytorch-cuda|cudatoolkit(?:-dev)?|cuda(?:-[a-z-]+)?|cudnn|nccl|magma-cuda\d*|cutensor|libcu[a-z]+(?:-dev)?|libnccl|nvidia-[a-z0-9-]+)$/;

/**
 * conda's environment.yml: the `nvidia` channel and conda's CUDA packages go (whole lines); its
 * `- pip:` list is read as a requirements file; pytorch pinned without torch_npu gets the
 * matching release as a pip entry.
 */
export function scanCondaEnvironment(rel: string, src: string, finding: AddFinding): void {
  const starts = newlineStarts(src);
  let section = '';
  let pipIndent = -1;
  /** The `- pip:` line: where a torch-npu entry goes, and its items' indentation. */
  let pip: { end: number; indent: string; eol: string } | null = null;
  /** The first torch pin, conda's (`pytorch=2.1.0`) or pip's (`torch==2.1.0`), as written. */
  let torch: { line: number; column: number; text: string } | null = null;
  let hasTorchNpu = false;
  for (const [i, raw] of src.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const key = /^([A-Za-z_][\w-]*):/.exec(line);
    if (key) {
      section = key[1] === 'channels' || key[1] === 'dependencies' ? key[1] : '';
      continue;
    }
    const item = /^([ \t]*)-[ \t]+([^#\s](?:[^#]*[^#\s])?)/.exec(line);
    if (!item) continue;
    const indent = item[1]!.length;
    const value = item[2]!;
    const col = line.indexOf(value, indent);
    const wholeLine = {
      start: starts[i]!,
      end: Math.min(starts[i]! + raw.length + 1, src.length),
      text: '',
    };
    if (section === 'pip' && indent <= pipIndent) section = 'dependencies';
    if (section === 'dependencies' && value === 'pip:') {
      section = 'pip';
      pipIndent = indent;
      pip = { end: starts[i]! + line.length, indent: '', eol: raw.endsWith('\r') ? '\r\n' : '\n' };
      continue;
    }
    const where = { line: i + 1, column: col + 1, endColumn: col + value.length + 1 };
    let name: string | undefined;
    if (section === 'channels') {
      if (value === 'nvidia')
        finding('req.cuda-wheel', rel, where, {
          vars: { text: `channels: ${value}` },
          edits: [wholeLine],
        });
      continue;
    } else if (section === 'pip') {
      if (pip && !pip.indent) pip.indent = item[1]!;
      name = requirementEntry(rel, value, i, starts[i]! + col, col, finding, wholeLine);
      if (name === 'torch-npu' || name === 'torch_npu') hasTorchNpu = true;
    } else if (section === 'dependencies') {
      name = /^[A-Za-z0-9_.-]+/.exec(value)?.[0].toLowerCase();
      if (!name) continue;
      if (CONDA_CUDA.test(name))
        finding('req.cuda-wheel', rel, where, { vars: { text: value }, edits: [wholeLine] });
      // a CUDA build pinned by its build string (`pytorch=1.8.0=py3.6_cuda10.2_cudnn7.6.5_0`,
      // `torchvision=0.9.0=py36_cu102`)
      else if (CONDA_CUDA_BUILD.test(value))
        finding('req.cuda-wheel', rel, where, { vars: { text: value } });
      else {
        const ruleId = packageRule(name);
        if (ruleId) finding(ruleId, rel, where, { vars: { name } });
      }
    }
    if (name === 'torch' || (name === 'pytorch' && section === 'dependencies'))
      torch ??= { line: i, column: col, text: value };
  }
  if (!torch || hasTorchNpu) return;
  const version = /^[\w.-]+\s*==?\s*([0-9][0-9A-Za-z.]*)/.exec(torch.text)?.[1];
  const npu = version ? torchNpuFor(version) : null;
  finding(
    'req.torch-npu',
    rel,
    {
      line: torch.line + 1,
      column: torch.column + 1,
      endColumn: torch.column + torch.text.length + 1,
    },
    {
      vars: { text: torch.text },
      // torch_npu is on PyPI only: a pip entry, where the file has a pip list
      edits:
        npu && pip
          ? [
              {
                start: pip.end,
                end: pip.end,
                text: `${pip.eol}${pip.indent || '    '}- torch-npu==${npu}`,
              },
            ]
          : undefined,
    },
  );
}

/** torch==2.1.0+cu118 → torch==2.1.0; the cu118 index → the CPU one; CUDA runtime wheels go. */
function cudaWheelEdit(line: string, at: number, removal: Edit): Edit[] {
  // PyG's index names the torch build: its CPU wheels are under +cpu
  const pyg = /(data\.pyg\.org\/whl\/torch-[\d.]+)\+cu\d+/.exec(line);
  if (pyg) {
    const s = at + pyg.index + pyg[1]!.length;
    return [{ start: s, end: at + pyg.index + pyg[0].length, text: '+cpu' }];
  }
  // a wheel's own URL names its build twice (`whl/cu121/torch-2.1.0%2Bcu121-…whl`): the CPU
  // wheel is `whl/cpu/torch-2.1.0%2Bcpu-…whl`
  const wheel = /(download\.pytorch\.org\/whl\/)(cu\d+)\/[\w.-]+-[\d.]+(?:%2B|\+)(cu\d+)\b/.exec(
    line,
  );
  if (wheel) {
    const dir = at + wheel.index + wheel[1]!.length;
    const build = at + wheel.index + wheel[0].length - wheel[3]!.length;
    return [
      { start: dir, end: dir + wheel[2]!.length, text: 'cpu' },
      { start: build, end: build + wheel[3]!.length, text: 'cpu' },
    ];
  }
  const local = /\+cu(?:\d+|\$\{?\w+\}?)/.exec(line);
  if (local)
    return [{ start: at + local.index, end: at + local.index + local[0].length, text: '' }];
  const index = /(download\.pytorch\.org\/whl\/)(cu(?:\d+|\$\{?\w+\}?))/.exec(line);
  if (index) {
    const s = at + index.index + index[1]!.length;
    return [{ start: s, end: s + index[2]!.length, text: 'cpu' }];
  }
  return [removal];
}
