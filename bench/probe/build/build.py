import json, os, sys
sys.path.insert(0, os.path.dirname(__file__))
from labels import E

ROOT = "/tmp/probe/files"
Z = "0" * 40
out, errors = [], []
for e in E:
    p = os.path.join(ROOT, e["id"], "upstream", e["path"])
    with open(p, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n = len(lines)
    changes = []
    for c in e["changes"]:
        match, kind, ct, req, ported, note = c[:6]
        explicit_occ = len(c) > 6
        occ = c[6] if explicit_occ else 1
        if match.startswith("="):
            cand = [i for i, l in enumerate(lines, 1) if l.strip() == match[1:]]
        else:
            cand = [i for i, l in enumerate(lines, 1) if match in l]
        if not cand:
            errors.append(f"{e['id']}: no match for {match!r}")
            continue
        if len(cand) > 1 and not explicit_occ:
            errors.append(f"{e['id']}: {len(cand)} matches for {match!r} at {cand}; give occurrence")
        if occ > len(cand):
            errors.append(f"{e['id']}: occurrence {occ} > {len(cand)} for {match!r}")
            continue
        ln = cand[occ - 1]
        changes.append({
            "kind": kind, "change_type": ct, "required": req,
            "upstream_line": ln, "ported_line": ln,
            "upstream_line_snippet": lines[ln - 1].strip(),
            "ported_line_snippet": ported,
            "note": note,
        })
    changes.sort(key=lambda c: c["upstream_line"])
    out.append({
        "id": e["id"], "source_type": "synthetic_probe", "porting_style": e["style"],
        "upstream": {"repo": e["repo"], "path": e["path"], "commit": Z, "n_lines": n},
        "ported": {"repo": e["repo"], "path": e["path"], "commit": Z, "n_lines": n},
        "changes": changes,
    })
if errors:
    print("\n".join(errors)); sys.exit(1)
ids = [e["id"] for e in out]
assert len(ids) == len(set(ids))
on_disk = sorted(os.listdir(ROOT))
missing = set(on_disk) - set(ids)
if missing: print("unlabelled dirs:", missing)
with open("/tmp/probe/manifest.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
print(len(out), "entries", sum(len(e["changes"]) for e in out), "changes")
