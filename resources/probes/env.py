# Environment-stage sections (after inventory.py, see lib.py): login scripts, device access,
# groups, limits, the torch_npu import and a small NPU computation, installed packages.
import glob, grp, resource, sys

home_dir = os.path.expanduser("~")
rc_lines = []
for path in [home_dir + "/.bashrc", home_dir + "/.profile", home_dir + "/.bash_profile", "/etc/profile", "/etc/bash.bashrc"] + sorted(glob.glob("/etc/profile.d/*.sh")):
    text = read(path)
    if text is None:
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if "set_env.sh" in line or "*i*) ;;" in line or re.search(r"\[ -z \"?\$PS1\"? \] && return", line):
            rc_lines.append({"file": path, "line": n, "text": line.strip()[:300]})
put("rc_files", 0, json.dumps(rc_lines))

nodes = sorted(glob.glob("/dev/davinci*")) + [p for p in ("/dev/devmm_svm", "/dev/hisi_hdc") if os.path.exists(p)]
access = [{"path": p, "read": os.access(p, os.R_OK), "write": os.access(p, os.W_OK)} for p in nodes]
put("device_access", 0, json.dumps(access))

names = []
for g in os.getgroups():
    try:
        names.append(grp.getgrgid(g).gr_name)
    except KeyError:
        names.append(str(g))
put("groups", 0, json.dumps(names))

lim = {}
for key, res in (("nofile", resource.RLIMIT_NOFILE), ("memlock", resource.RLIMIT_MEMLOCK)):
    soft, hard = resource.getrlimit(res)
    lim[key] = [soft, hard]
put("limits", 0, json.dumps(lim))

# Installed distributions from directory names only: reading every METADATA costs most of a second.
dists = {}
for d in sys.path:
    if not d or not os.path.isdir(d):
        continue
    try:
        entries = os.listdir(d)
    except OSError:
        continue
    for entry in entries:
        m = re.match(r"^([A-Za-z0-9_.]+?)-([0-9][^-]*?)(?:-py[0-9.]+)?\.(dist-info|egg-info)$", entry)
        if m:
            dists.setdefault(m.group(1).lower().replace("_", "-"), m.group(2))
# DeepSpeed is fine on NPU when it carries the NPU accelerator (upstream since 0.10)
ds = importlib.util.find_spec("deepspeed")
if ds is not None and ds.origin and os.path.exists(os.path.join(os.path.dirname(ds.origin), "accelerator", "npu_accelerator.py")):
    dists["deepspeed-npu-accelerator"] = dists.get("deepspeed", "present")
put("dists", 0, json.dumps(dists))

# The import check and the NPU computation run in a child Python with set_env.sh sourced, as a
# training script would be started. Their output ends with one marked JSON line.
IMPORT_CODE = r"""
import json, traceback
out = {"ok": False}
try:
    import torch
    out["torch"] = torch.__version__
    import torch_npu
    out["torch_npu"] = getattr(torch_npu, "__version__", None)
    out["available"] = bool(torch.npu.is_available())
    out["count"] = int(torch.npu.device_count()) if out["available"] else 0
    out["name"] = torch.npu.get_device_name(0) if out["count"] else None
    out["ok"] = out["available"] and out["count"] > 0
except BaseException as e:
    out["error"] = (type(e).__name__ + ": " + str(e))[:500]
    out["traceback"] = traceback.format_exc()[-3000:]
print("@@AMW-RESULT@@" + json.dumps(out))
"""

OP_CODE = r"""
import json, time, traceback
out = {"ok": False}
try:
    import torch, torch_npu
    t0 = time.time()
    x = torch.randn(128, 128).npu()
    y = torch.nn.functional.softmax(x @ x.t(), dim=-1)
    idx = torch.nonzero(y > 0.01)
    value = float(y.sum().cpu())
    out.update(ok=abs(value - 128.0) < 1e-2, value=value, nonzero=int(idx.shape[0]), seconds=round(time.time() - t0, 3), device=str(x.device))
except BaseException as e:
    out["error"] = (type(e).__name__ + ": " + str(e))[:500]
    out["traceback"] = traceback.format_exc()[-3000:]
print("@@AMW-RESULT@@" + json.dumps(out))
"""


put("import_test", *python_check(IMPORT_CODE, 120))
put("op_test", *python_check(OP_CODE, 180))
