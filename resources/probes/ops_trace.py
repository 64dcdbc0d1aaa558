# Operator capture harness (runs on the host, torch >= 1.13). Arguments come as JSON in
# AMW_OPS_ARGS: {"entry": "FILE:FUNCTION"} where FUNCTION() returns (model, batches), or
# {"script": "FILE", "argv": [...]}; optional "backward": true. Every aten op that reaches the
# dispatcher is recorded with overload, input shapes and dtypes, count, the nn.Module path and the
# user source line that caused it. Prints one line: @@AMW-OPS@@{json}. Errors in the user's code
# are reported in that JSON with their traceback, never as a crash of the harness.
import json, linecache, os, runpy, sys, time, traceback, warnings, importlib.util

ARGS = json.loads(os.environ.get("AMW_OPS_ARGS", "{}"))
HERE = os.path.abspath(__file__) if "__file__" in globals() else "<harness>"
MAX_SHAPES = 12
MAX_SOURCES = 5
out = {"v": 1, "entry": ARGS.get("entry") or ARGS.get("script"), "backward": bool(ARGS.get("backward")),
       "batches": 0, "inputs": [], "ops": [], "warnings": [], "error": None}


def finish():
    print("@@AMW-OPS@@" + json.dumps(out))
    sys.stdout.flush()


try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map
except BaseException as e:
    out["error"] = {"type": type(e).__name__, "message": str(e)[:500], "traceback": traceback.format_exc()[-4000:], "phase": "import torch"}
    finish()
    sys.exit(0)

out["torch"] = torch.__version__
out["python"] = sys.version.split()[0]
try:
    import torch_npu  # noqa: F401
    out["torchNpu"] = getattr(torch_npu, "__version__", "?")
except BaseException:
    out["torchNpu"] = None

user_root = None
module_stack = []
state = {"batch": -1, "phase": "forward"}
ops = {}


def describe(x):
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""), "sparse": x.layout != torch.strided}
    return None


def tensor_args(args, kwargs):
    found = []

    def visit(x):
        d = describe(x)
        if d is not None:
            found.append(d)
        return x

    tree_map(visit, (args, kwargs))
    return found


def user_frame():
    for f in reversed(traceback.extract_stack()):
        fn = os.path.abspath(f.filename)
        if fn == HERE or "/torch/" in fn or "<" in f.filename:
            continue
        if user_root is None or fn.startswith(user_root):
            return fn, f.lineno
    return None


def has_kernel(name, overload, key):
    qualified = name if overload in ("default", "") else name + "." + overload
    try:
        return bool(torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key))
    except Exception:
        return False


# composite facts of ops seen only inside other composite ops: {"aten::x.overload": {...}}
callee_facts = {}


def composite_facts(func, args, kwargs, depth):
    name, overload = func._schema.name, func._overloadname
    explicit = has_kernel(name, overload, "CompositeExplicitAutograd")
    implicit = has_kernel(name, overload, "CompositeImplicitAutograd")
    # the composite kernel is what a backend without its own kernel runs; calling it directly
    # is only safe where the CPU has no kernel of its own either (it is then what runs here)
    callees = None
    if explicit and not has_kernel(name, overload, "CPU") and depth < 3:
        callees = Recorder.callees(func, args, kwargs, depth + 1)
    return {"composite": "explicit" if explicit else ("implicit" if implicit else None), "callees": callees}


class Recorder(TorchDispatchMode):
    """Records each op; a composite op's callees are captured once, on copies, RNG restored."""

    def __init__(self, sink=None, depth=0):
        super().__init__()
        self.sink = sink
        self.depth = depth

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func._schema.name
        overload = func._overloadname
        if self.sink is not None:
            key = name + "." + overload
            self.sink.add(key)
            if key not in callee_facts and key not in ops:
                callee_facts[key] = {}  # taken before recursing: no cycles
                callee_facts[key] = composite_facts(func, args, kwargs, self.depth)
            return func(*args, **kwargs)
        key = name + "." + overload
        rec = ops.get(key)
        if rec is None:
            rec = ops[key] = {"op": name, "overload": overload, "count": 0, "sigs": {}, "dtypes": set(),
                              "modules": set(), "sources": {}, "sparse": False, "phases": set(),
                              "composite": None, "callees": None}
            rec.update(composite_facts(func, args, kwargs, 0))
        rec["count"] += 1
        tensors = tensor_args(args, kwargs)
        sig = json.dumps([t["shape"] for t in tensors])
        rec["sigs"].setdefault(sig, set()).add(state["batch"])
        for t in tensors:
            rec["dtypes"].add(t["dtype"])
            rec["sparse"] = rec["sparse"] or t["sparse"]
        rec["phases"].add(state["phase"])
        rec["modules"].add(module_stack[-1] if module_stack else ("(backward)" if state["phase"] == "backward" else "(top level)"))
        if len(rec["sources"]) < MAX_SOURCES:
            where = user_frame()
            if where:
                label = "%s:%d" % (os.path.relpath(where[0], user_root or "/"), where[1])
                rec["sources"].setdefault(label, linecache.getline(where[0], where[1]).strip()[:200])
        return func(*args, **kwargs)

    @staticmethod
    def callees(func, args, kwargs, depth=1):
        seen = set()
        rng = torch.get_rng_state()
        try:
            copies = tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, (args, kwargs))
            with Recorder(seen, depth):
                func._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, *copies[0], **copies[1])
        except Exception:
            return None
        finally:
            torch.set_rng_state(rng)
        return sorted(seen)


def hook_modules(model):
    def pre(name):
        def f(mod, inp):
            module_stack.append(name or type(mod).__name__)
        return f

    def post(mod, inp, res):
        if module_stack:
            module_stack.pop()

    for name, mod in model.named_modules():
        mod.register_forward_pre_hook(pre(name))
        mod.register_forward_hook(post)


def load_entry(spec):
    global user_root
    path, _, fn = spec.rpartition(":")
    if not path or not fn:
        raise ValueError("entry must be FILE:FUNCTION, got %r" % spec)
    path = os.path.abspath(os.path.expanduser(path))
    user_root = os.path.dirname(path) + os.sep
    sys.path.insert(0, os.path.dirname(path))
    os.chdir(os.path.dirname(path))
    module_spec = importlib.util.spec_from_file_location("amw_entry", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, fn):
        raise AttributeError("%s has no function %s" % (path, fn))
    return getattr(module, fn)


def shape_of(x):
    d = describe(x)
    return d if d is not None else {"type": type(x).__name__}


t0 = time.time()
try:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if ARGS.get("script"):
            path = os.path.abspath(os.path.expanduser(ARGS["script"]))
            user_root = os.path.dirname(path) + os.sep
            sys.argv = [path] + list(ARGS.get("argv") or [])
            sys.path.insert(0, os.path.dirname(path))
            os.chdir(os.path.dirname(path))
            with Recorder():
                runpy.run_path(path, run_name="__main__")
        else:
            state["phase"] = "setup"
            model, batches = load_entry(ARGS["entry"])()
            hook_modules(model)
            for i, batch in enumerate(batches):
                if not isinstance(batch, (tuple, list)):
                    batch = (batch,)
                state["batch"] = i
                out["inputs"].append([shape_of(a) for a in batch])
                with Recorder():
                    state["phase"] = "forward"
                    res = model(*batch)
                    if ARGS.get("backward"):
                        state["phase"] = "backward"
                        loss = res if isinstance(res, torch.Tensor) else res[0]
                        (loss.float().sum() if loss.dim() else loss).backward()
                out["batches"] = i + 1
    out["warnings"] = [str(w.message)[:300] for w in caught][:50]
except BaseException as e:
    out["error"] = {"type": type(e).__name__, "message": str(e)[:1000], "traceback": traceback.format_exc()[-6000:],
                    "phase": state["phase"], "batch": state["batch"]}
out["seconds"] = round(time.time() - t0, 3)

for rec in ops.values():
    per_batch = {}
    for sig, batches in rec["sigs"].items():
        for b in batches:
            per_batch.setdefault(b, set()).add(sig)
    distinct = list(rec["sigs"].keys())
    out["ops"].append({
        "op": rec["op"], "overload": rec["overload"], "count": rec["count"],
        "shapes": [json.loads(s) for s in distinct[:MAX_SHAPES]], "distinctShapes": len(distinct),
        # dynamic: the same op sees different input shapes in different batches
        "dynamic": len({frozenset(v) for k, v in per_batch.items() if k >= 0}) > 1,
        "dtypes": sorted(rec["dtypes"]), "modules": sorted(rec["modules"])[:20],
        "sources": [{"at": k, "text": v} for k, v in rec["sources"].items()],
        "sparse": rec["sparse"], "phases": sorted(rec["phases"]),
        "composite": rec["composite"], "callees": rec["callees"],
    })
out["calleeFacts"] = {k: v for k, v in callee_facts.items() if v}
finish()
