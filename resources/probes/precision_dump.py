# Precision dump harness (runs on the host, torch >= 1.13). Arguments come as JSON in
# AMW_PRECISION_ARGS: {"entry": "FILE:FUNCTION", "role": "baseline"|"target", "dtype":
# "fp32"|"bf16"|"fp16", "mode": "statistics"|"tensor", "backward": bool, "workdir": "DIR",
# "state": "FILE" (target: the baseline's weights and inputs), "sha256": "...", "script": "FILE"
# (instead of entry), "argv": [...], "steps": N (script mode: root forward calls recorded),
# "ops": ["gelu", ...] (aten ops recorded beside the modules), "modules": ["block.*", ...]
# (tensor mode: the records whose tensors are kept), "tensorCap", "tensorTotal"}.
# FUNCTION() returns (model, batches). Script mode runs the user's script as-is: every nn.Module
# is hooked as it is called (global module hooks), the first module called from outside any
# other is the model (named by its named_modules()); its weights are saved (baseline) or loaded
# (target) at its first call, and the script is stopped when its model is called for step N+1.
# Selected aten ops are recorded through TorchDispatchMode (torch >= 1.13), named
# "<enclosing module>/aten::<op>", in execution order next to the modules; without it they are
# not recorded and the dump says so. Seeds are fixed and deterministic algorithms switched on
# (and recorded) before the entry runs. The baseline saves the model's state_dict and the batches
# to DIR/state.pt; the target builds the model, loads both (checksum verified), so only device and
# kernels differ. Forward hooks on every nn.Module record, in execution order (a module is recorded
# as its forward returns, so a child comes before its parent), max/min/mean/L2 norm, dtype, shape
# and NaN/Inf counts of every output tensor; tensor mode also writes a capped float32 copy of
# each output to DIR/tensors.bin. Prints one line: @@AMW-PRECISION@@{json}. Errors in the user's
# code come back in that JSON with their traceback, never as a crash of the harness.
import fnmatch, hashlib, importlib.util, inspect, json, math, os, random, re, runpy, struct, sys, time, traceback, warnings

ARGS = json.loads(os.environ.get("AMW_PRECISION_ARGS", "{}"))
HERE = os.path.abspath(__file__) if "__file__" in globals() else "<harness>"
SEED = int(ARGS.get("seed", 1234))
ROLE = ARGS.get("role", "baseline")
DTYPE = ARGS.get("dtype", "fp32") if ROLE == "target" else "fp32"
MODE = ARGS.get("mode", "statistics")
TENSOR_CAP = int(ARGS.get("tensorCap", 65536))  # elements kept per output tensor (tensor mode)
TENSOR_TOTAL = int(ARGS.get("tensorTotal", 256 * 1024 * 1024))  # bytes, the whole file
SCRIPT = ARGS.get("script")
STEPS = max(1, int(ARGS.get("steps", 1)))
OPS = [str(o) for o in (ARGS.get("ops") or [])]
PATTERNS = [str(p) for p in (ARGS.get("modules") or [])]
OP_LIMIT = int(ARGS.get("opLimit", 20000))  # op records kept (an op called in a loop adds up)
WORKDIR = os.path.join(os.path.expanduser("~"), ARGS.get("workdir") or ".amw-precision/tmp")
out = {"v": 1, "role": ROLE, "entry": ARGS.get("entry") or SCRIPT, "script": bool(SCRIPT), "device": "cpu", "deviceNote": None,
       "dtype": DTYPE, "autocast": None, "bf16Supported": None, "mode": MODE, "modules": [],
       "determinism": {"seed": None, "torchDeterministic": None, "cudnnDeterministic": None,
                       "npuDeterministic": None, "hcclDeterministic": os.environ.get("HCCL_DETERMINISTIC"),
                       "worldSize": int(os.environ.get("WORLD_SIZE", "1") or 1)},
       "gradScaler": None, "state": None, "loaded": None, "tensors": None, "batches": 0,
       "warnings": [], "error": None,
       "opHooks": {"requested": OPS, "via": None, "seen": [], "note": None, "dropped": 0} if OPS else None,
       "tensorsDropped": 0}
phase = {"now": "import torch"}


INLINE_LIMIT = int(ARGS.get("inlineLimit", 4 * 1024 * 1024))  # bytes of JSON printed on stdout


def finish():
    text = json.dumps(out, allow_nan=False, default=str)
    if len(text) > INLINE_LIMIT:
        # a large model's records go to a file the engine fetches over SFTP (stdout is capped)
        try:
            os.makedirs(WORKDIR, exist_ok=True)
            path = os.path.join(WORKDIR, "dump-%s.json" % ROLE)
            with open(path, "w") as f:
                f.write(text)
            text = json.dumps({"v": 1, "role": ROLE, "file": os.path.relpath(path, os.path.expanduser("~")),
                               "bytes": len(text), "modules": []})
        except OSError:
            pass
    print("@@AMW-PRECISION@@" + text)
    sys.stdout.flush()


def fail(e):
    out["error"] = {"type": type(e).__name__, "message": str(e)[:1000], "traceback": traceback.format_exc()[-6000:],
                    "phase": phase["now"]}


try:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch
except BaseException as e:
    fail(e)
    finish()
    sys.exit(0)

out["torch"] = torch.__version__
torch_npu = None
try:
    import torch_npu  # noqa: F401
    out["torchNpu"] = getattr(torch_npu, "__version__", "?")
except BaseException as e:
    out["torchNpu"] = None


def pick_device():
    if torch_npu is not None:
        try:
            if torch.npu.is_available():
                return "npu", None
            return "cpu", "torch_npu %s is installed but torch.npu.is_available() is False" % out["torchNpu"]
        except Exception as e:
            return "cpu", "torch.npu failed: %s" % e
    if torch.cuda.is_available():
        return "cuda", None
    return "cpu", "no torch_npu and no CUDA on this host"


def fix_seeds():
    random.seed(SEED)
    try:
        import numpy
        numpy.random.seed(SEED)
    except Exception:
        pass
    torch.manual_seed(SEED)
    d = out["determinism"]
    d["seed"] = SEED
    try:
        torch.use_deterministic_algorithms(True, warn_only=True)
    except TypeError:
        torch.use_deterministic_algorithms(True)
    d["torchDeterministic"] = bool(torch.are_deterministic_algorithms_enabled())
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    d["cudnnDeterministic"] = bool(torch.backends.cudnn.deterministic)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(SEED)
    if torch_npu is not None:
        npu = getattr(torch, "npu", None)
        try:
            npu.manual_seed_all(SEED)
        except Exception:
            pass
        setter = getattr(npu, "set_deterministic", None) or getattr(getattr(torch_npu, "npu", None), "set_deterministic", None)
        if setter is not None:
            try:
                setter(True)
                d["npuDeterministic"] = True
            except Exception as e:
                out["warnings"].append("set_deterministic failed: %s" % e)
                d["npuDeterministic"] = False
        else:
            d["npuDeterministic"] = None


user_root = [None]


def load_entry(spec):
    path, _, fn = spec.rpartition(":")
    if not path or not fn:
        raise ValueError("entry must be FILE:FUNCTION, got %r" % spec)
    path = os.path.abspath(os.path.expanduser(path))
    user_root[0] = os.path.dirname(path) + os.sep
    sys.path.insert(0, os.path.dirname(path))
    os.chdir(os.path.dirname(path))
    module_spec = importlib.util.spec_from_file_location("amw_entry", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, fn):
        raise AttributeError("%s has no function %s" % (path, fn))
    scan_grad_scaler(path)
    return getattr(module, fn)


def scan_grad_scaler(path):
    """GradScaler(init_scale=..., growth_interval=...) in the entry's file, for the loss-scale check."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:
        return
    gs = {"found": False, "initScale": None, "growthInterval": None, "at": None}
    for i, line in enumerate(lines):
        if "GradScaler(" in line:
            call = " ".join(lines[i:i + 4])
            gs["found"] = True
            gs["at"] = "%s:%d" % (os.path.basename(path), i + 1)
            m = re.search(r"init_scale\s*=\s*([0-9.eE+*\-]+)", call)
            if m:
                try:
                    gs["initScale"] = float(eval(m.group(1), {"__builtins__": {}}))
                except Exception:
                    pass
            elif re.search(r"GradScaler\(\s*\)", call):
                gs["initScale"] = 65536.0  # torch's default, 2**16
            m = re.search(r"growth_interval\s*=\s*([0-9]+)", call)
            if m:
                gs["growthInterval"] = int(m.group(1))
            break
    out["gradScaler"] = gs


def rel(path):
    path = os.path.abspath(path)
    root = user_root[0]
    return os.path.relpath(path, root) if root and path.startswith(root) else path


_class_sources = {}


def class_source(cls):
    if cls not in _class_sources:
        _class_sources[cls] = _class_source(cls)
    return _class_sources[cls]


def _class_source(cls):
    try:
        f = inspect.getsourcefile(cls)
        if not f or "/torch/" in f:
            return None
        return "%s:%d" % (rel(f), inspect.getsourcelines(cls)[1])
    except Exception:
        return None


def call_site():
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if fn != HERE and "/torch/" not in fn and not fn.startswith("<"):
            root = user_root[0]
            if root is None or os.path.abspath(fn).startswith(root):
                return "%s:%d" % (rel(fn), f.f_lineno)
        f = f.f_back
    return None


def finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


tensor_file = [None, 0]


def stats(t, keep=False):
    t = t.detach()
    s = {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "max": None, "min": None,
         "mean": None, "norm": None, "nan": 0, "inf": 0, "numel": t.numel()}
    if t.numel() == 0:
        return s
    x = t.abs().float() if t.is_complex() else t.float()
    nan = torch.isnan(x)
    inf = torch.isinf(x)
    s["nan"] = int(nan.sum())
    s["inf"] = int(inf.sum())
    ok = x[~(nan | inf)] if (s["nan"] or s["inf"]) else x
    if ok.numel():
        s["max"] = finite(ok.max())
        s["min"] = finite(ok.min())
        s["mean"] = finite(ok.double().mean())
        s["norm"] = finite(ok.double().norm())
    if keep and MODE == "tensor":
        f = tensor_file[0]
        flat = x.reshape(-1)[:TENSOR_CAP].contiguous().cpu()
        if f is not None and tensor_file[1] + flat.numel() * 4 <= TENSOR_TOTAL:
            s["data"] = {"offset": tensor_file[1], "count": flat.numel()}
            f.write(flat.numpy().astype("<f4").tobytes())
            tensor_file[1] += flat.numel() * 4
        else:
            out["tensorsDropped"] += 1  # past the run's byte cap: statistics only, and said so
    return s


def kept(name):
    """Tensor mode keeps the chosen records' tensors (all of them when none are chosen)."""
    return MODE == "tensor" and (not PATTERNS or any(fnmatch.fnmatchcase(name, p) for p in PATTERNS))


def tensors_in(res, found):
    if isinstance(res, torch.Tensor):
        found.append(res)
    elif isinstance(res, (list, tuple)):
        for r in res:
            tensors_in(r, found)
    elif isinstance(res, dict):
        for r in res.values():
            tensors_in(r, found)
    return found


calls = {}
sites = {}
stack = []  # names of the modules whose forward is running (innermost last)


def record(name, cls, res, kind="forward", site=None, source=None):
    n = calls.get((kind, name), 0)
    calls[(kind, name)] = n + 1
    keep = kept(name)
    out["modules"].append({
        "module": name, "call": n, "cls": cls, "order": len(out["modules"]), "classSource": source,
        "callSite": site, "outputs": [stats(t, keep) for t in tensors_in(res, [])], "kind": kind})


def on_pre(name):
    stack.append(name)
    sites.setdefault(name, []).append(call_site())


def on_post(name, mod, res):
    if stack and stack[-1] == name:
        stack.pop()
    site = sites.get(name) or [None]
    record(name, type(mod).__name__, res, "forward", site.pop() if site else None, class_source(type(mod)))


def hook_modules(model):
    def pre(name):
        def f(mod, inp):
            on_pre(name)
        return f

    def post(name):
        def f(mod, inp, res):
            on_post(name, mod, res)
        return f

    for name, mod in model.named_modules():
        mod.register_forward_pre_hook(pre(name))
        mod.register_forward_hook(post(name))


# ---- selected aten ops --------------------------------------------------------------------------

def op_matcher():
    wanted = set()
    for o in OPS:
        o = o[6:] if o.startswith("aten::") else o
        wanted.add(o)
    def match(func):
        packet = func.overloadpacket.__name__
        overload = "%s.%s" % (packet, getattr(func, "_overloadname", "default"))
        return packet if packet in wanted else (overload if overload in wanted else None)
    return match


def op_mode():
    """A dispatch mode recording the chosen aten ops' outputs, or None (and why) where torch lacks it."""
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except Exception as e:
        out["opHooks"]["note"] = "torch %s has no TorchDispatchMode (%s): aten ops are not recorded" % (torch.__version__, str(e)[:120])
        return None
    match = op_matcher()
    seen = set()

    class OpRecorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            res = func(*args, **(kwargs or {}))
            # forward ops inside a module only (backward and the script's own loss code are not the model)
            name = match(func) if phase["now"] == "forward" and stack else None
            if name is not None:
                if name not in seen:
                    seen.add(name)
                    out["opHooks"]["seen"].append(name)
                if out["opHooks"]["dropped"] or op_count[0] >= OP_LIMIT:
                    out["opHooks"]["dropped"] += 1
                else:
                    op_count[0] += 1
                    where = stack[-1] if stack else ""
                    label = "%s/aten::%s" % (where, name) if where else "aten::%s" % name
                    record(label, "aten::%s" % str(func).split(".", 1)[-1], res, "op", call_site(), None)
            return res

    out["opHooks"]["via"] = "TorchDispatchMode"
    return OpRecorder()


op_count = [0]


class Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ---- script mode ----------------------------------------------------------------------------------

class StopScript(BaseException):
    """Raised into the user's script when its model is called past the steps asked for."""


script_state = {"roots": [], "names": {}, "rootCalls": 0, "first": None}


def script_name(mod):
    names = script_state["names"]
    n = names.get(id(mod))
    if n is not None:
        return n
    if not stack:
        # a module called from outside any other: a model; the first one is "the" model
        k = len(script_state["roots"])
        script_state["roots"].append(mod)
        prefix = "[%d]" % k if k else ""
        for sub_name, sub in mod.named_modules():
            full = (prefix + "." + sub_name if sub_name else prefix) if prefix else sub_name
            names.setdefault(id(sub), full)
        return names[id(mod)]
    # built after its parent was named (a module made inside a forward)
    n = "%s.<%s>" % (stack[-1], type(mod).__name__)
    names[id(mod)] = n
    return n


def hook_script(state_path):
    from torch.nn.modules import module as nn_module

    def pre(mod, inp):
        if not stack:
            first = script_state["first"]
            if first is None:
                script_state["first"] = mod
                script_name(mod)
                on_first_call(mod, state_path)
            if mod is script_state["first"]:
                if script_state["rootCalls"] >= STEPS:
                    raise StopScript()
                script_state["rootCalls"] += 1
                out["batches"] = script_state["rootCalls"]
        on_pre(script_name(mod))

    def post(mod, inp, res):
        on_post(script_name(mod), mod, res)

    nn_module.register_module_forward_pre_hook(pre)
    nn_module.register_module_forward_hook(post)


def on_first_call(model, state_path):
    """Script mode: the model's weights saved (baseline) or loaded (target) before its first forward."""
    p = next(iter(model.parameters()), None)
    out["device"] = p.device.type if p is not None else "cpu"
    if ROLE == "baseline":
        phase["now"] = "save"
        cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        torch.save({"state_dict": cpu_state, "batches": []}, state_path)
        out["state"] = {"path": os.path.relpath(state_path, os.path.expanduser("~")),
                        "sha256": sha256_of(state_path), "bytes": os.path.getsize(state_path)}
    else:
        phase["now"] = "load"
        load_state(model)
    if ARGS.get("backward"):
        for name, prm in model.named_parameters():
            prm.register_hook(grad_hook(name))
    phase["now"] = "forward"


def grad_hook(name):
    done = [False]

    def f(grad):
        if not done[0]:
            done[0] = True
            record(name, "grad", grad, "grad")
        return None
    return f


def load_state(model):
    """Target: the baseline's weights (and inputs) loaded, checksum verified, names compared."""
    path = os.path.join(os.path.expanduser("~"), ARGS["state"])
    got = sha256_of(path)
    if ARGS.get("sha256") and got != ARGS["sha256"]:
        raise IOError("weights and inputs %s: sha256 %s, expected %s" % (path, got, ARGS["sha256"]))
    saved = torch.load(path, map_location="cpu")
    own = model.state_dict()
    missing = [k for k in saved["state_dict"] if k not in own]
    unexpected = [k for k in own if k not in saved["state_dict"]]
    if missing or unexpected:
        raise KeyError("the model differs between the two sides: only on the baseline %s; only on the target %s"
                       % (missing[:10], unexpected[:10]))
    shapes = [k for k, v in saved["state_dict"].items() if tuple(v.shape) != tuple(own[k].shape)]
    if shapes:
        k = shapes[0]
        raise ValueError("the model differs between the two sides: %s is %s on the baseline and %s on the target"
                         % (k, list(saved["state_dict"][k].shape), list(own[k].shape)))
    model.load_state_dict(saved["state_dict"], strict=True)
    out["loaded"] = {"sha256": got}
    return saved["batches"]


def to_device(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, tuple):
        return tuple(to_device(y, device) for y in x)
    if isinstance(x, list):
        return [to_device(y, device) for y in x]
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def autocast_for(device):
    if DTYPE == "fp32":
        return None
    dt = torch.bfloat16 if DTYPE == "bf16" else torch.float16
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx = torch.autocast(device_type=device, dtype=dt)
    for w in caught:
        out["warnings"].append("autocast: %s" % str(w.message)[:300])
    if not getattr(ctx, "_enabled", True):
        out["warnings"].append("autocast %s is not available on %s" % (DTYPE, device))
        return None
    out["autocast"] = {"device": device, "dtype": DTYPE}
    return ctx


def run_script(state_path, amp, ops):
    path = os.path.abspath(os.path.expanduser(SCRIPT))
    user_root[0] = os.path.dirname(path) + os.sep
    sys.argv = [path] + [str(a) for a in (ARGS.get("argv") or [])]
    sys.path.insert(0, os.path.dirname(path))
    os.chdir(os.path.dirname(path))
    scan_grad_scaler(path)
    hook_script(state_path)
    phase["now"] = "forward"
    t_forward = time.time()
    c_forward = time.process_time()
    try:
        with amp or Nothing():
            with ops or Nothing():
                runpy.run_path(path, run_name="__main__")
    except StopScript:
        pass  # the steps asked for are recorded: the rest of the script is not needed
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
    out["forwardSeconds"] = round(time.time() - t_forward, 4)
    out["forwardCpuSeconds"] = round(time.process_time() - c_forward, 4)
    if script_state["first"] is None:
        raise RuntimeError("%s ran to its end without calling any nn.Module: nothing to compare" % SCRIPT)


def run_entry(state_path, device, ops):
    model, batches = load_entry(ARGS["entry"])()
    batches = list(batches)
    if ROLE == "baseline":
        phase["now"] = "save"
        cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        torch.save({"state_dict": cpu_state, "batches": to_device(batches, "cpu")}, state_path)
        out["state"] = {"path": os.path.relpath(state_path, os.path.expanduser("~")),
                        "sha256": sha256_of(state_path), "bytes": os.path.getsize(state_path)}
    else:
        phase["now"] = "load"
        batches = load_state(model)
    phase["now"] = "move"
    if device != "cpu":
        try:
            model = model.to(device)
        except Exception as e:
            out["deviceNote"] = "moving the model to %s failed (%s): running on the CPU" % (device, str(e)[:200])
            device = "cpu"
    p = next(iter(model.parameters()), None)
    out["device"] = p.device.type if p is not None else device
    if out["device"] != device:
        out["deviceNote"] = (out["deviceNote"] or "") + ("%s reported available but tensors stay on the %s" % (device, out["device"]))
        device = out["device"]
    model.eval()
    hook_modules(model)
    amp = autocast_for(device)
    t_forward = time.time()
    c_forward = time.process_time()
    for i, batch in enumerate(batches):
        if not isinstance(batch, (tuple, list)):
            batch = (batch,)
        batch = to_device(batch, device)
        phase["now"] = "forward"
        with amp or Nothing():
            with ops or Nothing():
                res = model(*batch)
        if ARGS.get("backward"):
            phase["now"] = "backward"
            found = tensors_in(res, [])
            loss = found[0]
            (loss.float().sum() if loss.dim() else loss).backward()
        out["batches"] = i + 1
    out["forwardSeconds"] = round(time.time() - t_forward, 4)
    out["forwardCpuSeconds"] = round(time.process_time() - c_forward, 4)
    if ARGS.get("backward"):
        for name, prm in model.named_parameters():
            if prm.grad is not None:
                record(name, "grad", prm.grad, "grad")


t0 = time.time()
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device, note = pick_device()
        out["deviceNote"] = note
        if device == "npu":
            try:
                out["bf16Supported"] = bool(torch.npu.is_bf16_supported())
            except Exception:
                name = ""
                try:
                    name = torch.npu.get_device_name(0)
                except Exception:
                    pass
                # Atlas 910B/910_93 (A2/A3) have bf16; 910A and 310P do not
                out["bf16Supported"] = bool(re.search(r"910B|910_93|910C", name)) if name else None
        elif device == "cuda":
            out["bf16Supported"] = bool(torch.cuda.is_bf16_supported())
        else:
            out["bf16Supported"] = True
        phase["now"] = "seeds"
        fix_seeds()
        phase["now"] = "entry"
        os.makedirs(WORKDIR, exist_ok=True)
        state_path = os.path.join(WORKDIR, "state.pt")
        if MODE == "tensor":
            tensor_file[0] = open(os.path.join(WORKDIR, "tensors.bin"), "wb")
        ops = op_mode() if OPS else None
        if SCRIPT:
            # the script places its own tensors; autocast (target) wraps the whole script
            run_script(state_path, autocast_for(device) if ROLE == "target" else None, ops)
        else:
            run_entry(state_path, device, ops)
    out["warnings"] += [str(w.message)[:300] for w in caught][:50]
except BaseException as e:
    fail(e)
finally:
    if tensor_file[0] is not None:
        tensor_file[0].close()
        out["tensors"] = {"path": os.path.relpath(os.path.join(WORKDIR, "tensors.bin"), os.path.expanduser("~")),
                          "bytes": tensor_file[1]}
out["seconds"] = round(time.time() - t0, 3)
finish()
