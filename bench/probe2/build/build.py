#!/usr/bin/env python3
"""Build ../manifest.json (and the table in ../README.md) from labels.py.

Each label is (line_substring, kind, change_type, required, ported_snippet, note[, occurrence]).
A label resolves to exactly one line of files/<id>/upstream/<path>:
  * if exactly one line's stripped text equals line_substring, that line;
  * else the lines containing line_substring must be unique, or `occurrence` (1-based) picks one.
Anything missing or ambiguous aborts the build with a message.
"""
import json
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from labels import ENTRIES  # noqa: E402

KINDS = {
    "torch_cuda_api", "import_torch_npu", "tensor_to_device", "device_type", "unsupported_op_workaround",
    "amp", "triton_kernel_tuning", "custom_cuda_extension", "compile_mode", "fused_optimizer", "dist_backend",
    "attention_kernel", "npu_fused_op", "distributed_framework", "env_var", "device_capability_check",
    "pin_memory",
}
CHANGE_TYPES = {"replace", "npu_only_addition", "add_branch", "removal"}
STYLES = {"device_branch_or_abstraction", "transfer_to_npu", "explicit_replacement", "kernel_rewrite"}
ZERO = "0" * 40

README_HEAD = """<!-- Written for this project on 2026-12-04 by a helper session that was not shown the scanner's
rules or the development corpus's files (only its README, its manifest format and ../shared/knowledge),
as an independent check on whether the rules generalise. Synthetic: no file is a real port. -->
# Synthetic probe corpus 2: CUDA -> Ascend NPU porting changes

Hand-written imitations (never verbatim copies) of the CUDA-side code of well-known open-source PyTorch
projects, chosen to avoid everything the first probe (`../probe`) covers. They keep the structure and idioms of
the imitated code (function names, control flow, the CUDA call sites) but were retyped, reduced and altered, so
no file matches an upstream file. Only the upstream (CUDA) side
exists: `files/<id>/upstream/<path>`. `manifest.json` labels the lines a careful porter making the code run
(and run well) on Ascend would change, in the format of `corpus-dev/manifest.json`
(`source_type: synthetic_probe`, commits all zeros, ported path = upstream path, `ported_line` = `upstream_line`).
`required: true` means the code fails, is wrong, or is unusably slow on NPU without the change.

Every file also contains ordinary code that must not be flagged and some deliberate, unlabelled near-misses:
CPU-only paths (`map_location="cpu"`, numpy/CPU float64 schedules, CPU reference kernels), device-agnostic
code (`x.device`, `torch.device(args.device)` where the default is fixed elsewhere, `accelerator.device`),
strings and comments that mention CUDA, `torch.cuda.*` calls in files ported with `transfer_to_npu`,
`device.type == "cuda"` branches whose else-path is already correct on NPU, SDPA calls, `torch.ops.fbgemm.*`
(fbgemm-ascend provides them), `AdamW(fused=True)` (`_fused_adamw_` has an NPU kernel).

`build/labels.py` holds the labels as (line substring, kind, change_type, required, ported snippet, note[, occurrence]);
`python3 build/build.py` regenerates `manifest.json` and the table below, failing loudly when a substring is
missing or ambiguous. Check with:

```sh
python3 build/build.py          # (run with PYTHONDONTWRITEBYTECODE=1 to keep build/ clean)
python3 ../../../shared/corpus-dev/score.py --corpus manifest.json --root files --findings <(echo '[]')
```

"""


def resolve(lines, sub, occurrence, where):
    stripped = [ln.strip() for ln in lines]
    exact = [i for i, s in enumerate(stripped) if s == sub]
    if occurrence is None and len(exact) == 1:
        return exact[0]
    hits = [i for i, s in enumerate(stripped) if sub in s]
    if not hits:
        raise SystemExit(f"{where}: substring not found: {sub!r}")
    if occurrence is None:
        if len(hits) > 1:
            raise SystemExit(f"{where}: substring ambiguous ({len(hits)} lines: "
                             f"{[h + 1 for h in hits]}): {sub!r}")
        return hits[0]
    if occurrence < 1 or occurrence > len(hits):
        raise SystemExit(f"{where}: occurrence {occurrence} out of range (1..{len(hits)}): {sub!r}")
    return hits[occurrence - 1]


def read_lines(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines]


def main():
    manifest, rows, kinds, seen_ids = [], [], Counter(), set()
    total_lines = 0
    for e in ENTRIES:
        eid, path = e["id"], e["path"]
        if eid in seen_ids:
            raise SystemExit(f"duplicate id {eid}")
        seen_ids.add(eid)
        if e["style"] not in STYLES:
            raise SystemExit(f"{eid}: bad porting_style {e['style']}")
        fpath = os.path.join(ROOT, "files", eid, "upstream", *path.split("/"))
        if not os.path.isfile(fpath):
            raise SystemExit(f"{eid}: missing file {fpath}")
        lines = read_lines(fpath)
        n = len(lines)
        total_lines += n
        changes, used = [], set()
        for lab in e["labels"]:
            if len(lab) not in (6, 7):
                raise SystemExit(f"{eid}: bad label tuple {lab!r}")
            sub, kind, ctype, req, ported, note = lab[:6]
            occ = lab[6] if len(lab) == 7 else None
            where = f"{eid}:{path}"
            if kind not in KINDS:
                raise SystemExit(f"{where}: bad kind {kind}")
            if ctype not in CHANGE_TYPES:
                raise SystemExit(f"{where}: bad change_type {ctype}")
            if not isinstance(req, bool):
                raise SystemExit(f"{where}: required must be bool: {sub!r}")
            idx = resolve(lines, sub, occ, where)
            key = (idx, kind)
            if key in used:
                raise SystemExit(f"{where}: two labels of kind {kind} on line {idx + 1}")
            used.add(key)
            ln = idx + 1
            changes.append({
                "kind": kind,
                "change_type": ctype,
                "required": req,
                "upstream_line": ln,
                "ported_line": ln,
                "upstream_line_snippet": lines[idx].strip(),
                "ported_line_snippet": ported,
                "note": note,
            })
            kinds[kind] += 1
        changes.sort(key=lambda c: (c["upstream_line"], c["kind"]))
        manifest.append({
            "id": eid,
            "source_type": "synthetic_probe",
            "porting_style": e["style"],
            "pr": "",
            "upstream": {"repo": e["repo"], "path": path, "commit": ZERO, "n_lines": n},
            "ported": {"repo": e["repo"], "path": path, "commit": ZERO, "n_lines": n},
            "changes": changes,
        })
        rows.append((eid, path, n, len(changes), e["imitates"]))

    with open(os.path.join(ROOT, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")

    n_changes = sum(len(e["changes"]) for e in manifest)
    n_req = sum(c["required"] for e in manifest for c in e["changes"])
    with open(os.path.join(ROOT, "README.md"), "w", encoding="utf-8") as f:
        f.write(README_HEAD)
        f.write("| id | file | lines | changes | imitates |\n|---|---|---|---|---|\n")
        for eid, path, n, c, imit in rows:
            f.write(f"| {eid} | `{path}` | {n} | {c} | {imit} |\n")
        f.write(f"\n{len(rows)} files, {total_lines} lines, {n_changes} labelled changes "
                f"({n_req} required).\n\nChanges per kind: "
                + ", ".join(f"{k} {v}" for k, v in kinds.most_common()) + ".\n")
        ct = Counter(c["change_type"] for e in manifest for c in e["changes"])
        f.write("\nChanges per change_type: " + ", ".join(f"{k} {v}" for k, v in ct.most_common()) + ".\n")

    print(f"{len(rows)} files, {total_lines} lines, {n_changes} changes, {n_req} required")
    for k, v in kinds.most_common():
        print(f"  {k:28s} {v}")


if __name__ == "__main__":
    main()
