#!/usr/bin/env python3
"""Regenerate a probe's manifest.json and the README table from its build/labels.py.

Shared by bench/probe3 and bench/probe4, whose build/build.py runs it for its own folder (the probe
is the folder above the build/ folder of the script that runs this, or --probe DIR).

Every label names its upstream line by a substring; the substring must occur on exactly one line
of the upstream file, otherwise the build stops with an error (missing or ambiguous label).
A substring written as "=text" matches only a line whose stripped text is exactly `text`.

  python3 build/build.py            # writes manifest.json and rewrites the table in README.md
  python3 build/build.py --check    # only validates, writes nothing
"""
import argparse
import collections
import json
import os
import sys

def _probe_root():
    if "--probe" in sys.argv:
        i = sys.argv.index("--probe")
        root = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return os.path.abspath(root)
    return os.path.dirname(os.path.dirname(os.path.abspath(sys.argv[0])))


ROOT = _probe_root()
HERE = os.path.join(ROOT, "build")
NAME = os.path.basename(ROOT)
FILES = os.path.join(ROOT, "files")
sys.dont_write_bytecode = True  # keep build/ free of __pycache__
sys.path.insert(0, HERE)
from labels import ENTRIES  # noqa: E402

KINDS = {
    "torch_cuda_api", "import_torch_npu", "tensor_to_device", "device_type", "unsupported_op_workaround",
    "amp", "triton_kernel_tuning", "custom_cuda_extension", "compile_mode", "fused_optimizer",
    "dist_backend", "attention_kernel", "npu_fused_op", "distributed_framework", "env_var",
    "device_capability_check", "pin_memory",
}
CHANGE_TYPES = {"replace", "npu_only_addition", "add_branch", "removal"}
STYLES = {"device_branch_or_abstraction", "transfer_to_npu", "explicit_replacement", "kernel_rewrite"}
ZERO = "0" * 40
TABLE_BEGIN = "<!-- table:begin -->"
TABLE_END = "<!-- table:end -->"


class BuildError(Exception):
    pass


def read_lines(path):
    """Same numbering as score.py: split on \\n, drop the empty tail."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.rstrip("\r") for ln in lines]


def locate(lines, sub, where):
    """Line number of the single line containing sub ("=text" means: the stripped line equals text)."""
    if sub.startswith("="):
        hits = [i for i, ln in enumerate(lines, 1) if ln.strip() == sub[1:]]
    else:
        hits = [i for i, ln in enumerate(lines, 1) if sub in ln]
    if not hits:
        raise BuildError(f"{where}: substring not found: {sub!r}")
    if len(hits) > 1:
        raise BuildError(f"{where}: substring is ambiguous ({len(hits)} lines: {hits}): {sub!r}")
    return hits[0]


def build():
    manifest, rows, errors = [], [], []
    seen_ids = set()
    for e in ENTRIES:
        where = e["id"]
        try:
            if e["id"] in seen_ids:
                raise BuildError(f"{where}: duplicate id")
            seen_ids.add(e["id"])
            if e["style"] not in STYLES:
                raise BuildError(f"{where}: unknown porting_style {e['style']!r}")
            path = os.path.join(FILES, e["id"], "upstream", *e["path"].split("/"))
            if not os.path.isfile(path):
                raise BuildError(f"{where}: upstream file missing: {path}")
            lines = read_lines(path)
            changes, used = [], set()
            for c in e["changes"]:
                if c["kind"] not in KINDS:
                    raise BuildError(f"{where}: unknown kind {c['kind']!r}")
                if c["change_type"] not in CHANGE_TYPES:
                    raise BuildError(f"{where}: unknown change_type {c['change_type']!r}")
                n = locate(lines, c["sub"], where)
                if n in used:
                    raise BuildError(f"{where}: two labels on line {n}")
                used.add(n)
                if c["change_type"] == "removal" and c["ported"] is not None:
                    raise BuildError(f"{where}:{n}: a removal has no ported line")
                if c["change_type"] != "removal" and not c["ported"]:
                    raise BuildError(f"{where}:{n}: ported_line_snippet missing")
                changes.append({
                    "kind": c["kind"],
                    "change_type": c["change_type"],
                    "required": bool(c["required"]),
                    "upstream_line": n,
                    "ported_line": n,
                    "upstream_line_snippet": lines[n - 1].strip(),
                    "ported_line_snippet": c["ported"],
                    "note": c["note"],
                })
            changes.sort(key=lambda c: c["upstream_line"])
            entry = {
                "id": e["id"],
                "source_type": "synthetic_probe",
                "porting_style": e["style"],
                "pr": None,
                "upstream": {"repo": "synthetic/" + NAME, "path": e["path"], "commit": ZERO,
                             "n_lines": len(lines)},
                "ported": {"repo": "synthetic/" + NAME, "path": e["path"], "commit": ZERO,
                           "n_lines": len(lines)},
                "changes": changes,
            }
            manifest.append(entry)
            rows.append((e["id"], e["path"], len(lines), len(changes),
                         sum(c["required"] for c in changes), e["imitates"]))
            if path.endswith(".py"):
                try:
                    with open(path, encoding="utf-8") as f:
                        compile(f.read(), path, "exec")
                except SyntaxError as err:
                    raise BuildError(f"{where}: does not compile: {err}")
        except BuildError as err:
            errors.append(str(err))
    # every upstream file on disk must be labelled
    on_disk = set(os.listdir(FILES)) if os.path.isdir(FILES) else set()
    for extra in sorted(on_disk - seen_ids):
        errors.append(f"{extra}: directory under files/ has no entry in labels.py")
    if errors:
        raise BuildError("\n".join(errors))
    return manifest, rows


def table(rows):
    out = [TABLE_BEGIN, "", "| id | file | lines | changes | imitates |", "|---|---|---|---|---|"]
    for id_, path, n, k, req, imit in rows:
        out.append(f"| {id_} | `{path}` | {n} | {k} ({req} required) | {imit} |")
    tl = sum(r[2] for r in rows)
    tc = sum(r[3] for r in rows)
    tr = sum(r[4] for r in rows)
    out.append(f"| **total** | {len(rows)} files | {tl} | {tc} ({tr} required) | |")
    out += ["", TABLE_END]
    return "\n".join(out)


def summary(manifest):
    kinds = collections.Counter()
    req = collections.Counter()
    types = collections.Counter()
    for e in manifest:
        for c in e["changes"]:
            kinds[c["kind"]] += 1
            req[c["kind"]] += c["required"]
            types[c["change_type"]] += 1
    lines = ["kind                          all  required"]
    for k, v in kinds.most_common():
        lines.append(f"  {k:<26}{v:>5}{req[k]:>10}")
    lines.append("change_type: " + ", ".join(f"{k}={v}" for k, v in types.most_common()))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="validate only")
    a = ap.parse_args()
    try:
        manifest, rows = build()
    except BuildError as err:
        print(f"build failed:\n{err}", file=sys.stderr)
        return 1
    n = sum(len(e["changes"]) for e in manifest)
    r = sum(c["required"] for e in manifest for c in e["changes"])
    print(f"{len(manifest)} files, {sum(x[2] for x in rows)} lines, {n} changes, {r} required")
    print(summary(manifest))
    if a.check:
        return 0
    with open(os.path.join(ROOT, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")
    readme = os.path.join(ROOT, "README.md")
    if os.path.isfile(readme):
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        if TABLE_BEGIN not in text or TABLE_END not in text:
            print("README.md has no table markers; table not written", file=sys.stderr)
            return 1
        head, rest = text.split(TABLE_BEGIN, 1)
        _, tail = rest.split(TABLE_END, 1)
        with open(readme, "w", encoding="utf-8") as f:
            f.write(head + table(rows) + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
