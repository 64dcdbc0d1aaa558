# Profiling harness (runs on the host, torch >= 1.13). Arguments as JSON in AMW_PROFILE_ARGS:
# {"entry": "FILE:FUNCTION" | "script": "FILE", "steps": N, "level": "Level1", "backward": bool,
#  "out": DIR}. FUNCTION() returns (model, batches); one warm-up step, then N profiled steps
# (batches reused in turn). With torch_npu and an NPU: torch_npu.profiler (CPU + NPU activities,
# the level asked for), output in DIR as torch_npu writes it (*_ascend_pt). Without: torch.profiler
# on the CPU (CUDA too when there is a GPU) as the stand-in, a Chrome trace in DIR — the result
# says which. Prints one line: @@AMW-PROFILE@@{json}; the user's errors come back in it.
import json, os, runpy, sys, time, traceback, importlib.util

ARGS = json.loads(os.environ.get("AMW_PROFILE_ARGS", "{}"))
OUT = os.path.abspath(os.path.expanduser(ARGS.get("out") or "~/.amw/profiles/run"))
STEPS = int(ARGS.get("steps") or 5)
out = {"v": 1, "entry": ARGS.get("entry") or ARGS.get("script"), "out": OUT, "steps": [],
       "profiler": None, "device": "cpu", "error": None, "notes": []}


def finish():
    print("@@AMW-PROFILE@@" + json.dumps(out))
    sys.stdout.flush()


try:
    import torch
except BaseException as e:
    out["error"] = {"type": type(e).__name__, "message": str(e)[:500], "traceback": traceback.format_exc()[-4000:]}
    finish()
    sys.exit(0)
out["torch"] = torch.__version__
npu = None
try:
    import torch_npu  # noqa: F401
    out["torchNpu"] = getattr(torch_npu, "__version__", "?")
    if hasattr(torch_npu, "profiler") and torch.npu.is_available():
        npu = torch_npu
except BaseException:
    out["torchNpu"] = None
if out.get("torchNpu") and npu is None:
    out["notes"].append("torch_npu is installed but has no profiler or no NPU is visible")

os.makedirs(OUT, exist_ok=True)


def sync():
    if npu is not None:
        torch.npu.synchronize()
    elif torch.cuda.is_available():
        torch.cuda.synchronize()


def load_entry(spec):
    path, _, fn = spec.rpartition(":")
    path = os.path.abspath(os.path.expanduser(path))
    sys.path.insert(0, os.path.dirname(path))
    os.chdir(os.path.dirname(path))
    module_spec = importlib.util.spec_from_file_location("amw_entry", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    if not hasattr(module, fn):
        raise AttributeError("%s has no function %s" % (path, fn))
    return getattr(module, fn)


def profiler(active):
    if npu is not None:
        P = npu.profiler
        level = getattr(P.ProfilerLevel, ARGS.get("level") or "Level1")
        try:
            cfg = P._ExperimentalConfig(profiler_level=level, aic_metrics=P.AiCMetrics.PipeUtilization,
                                        data_simplification=True)
        except TypeError:  # older torch_npu: fewer options
            cfg = P._ExperimentalConfig(profiler_level=level)
        out["profiler"] = "torch_npu.profiler"
        out["device"] = "npu"
        return P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.NPU],
                         schedule=P.schedule(wait=0, warmup=1, active=active, repeat=1),
                         on_trace_ready=P.tensorboard_trace_handler(OUT), experimental_config=cfg)
    acts = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(torch.profiler.ProfilerActivity.CUDA)
        out["device"] = "cuda"
    out["profiler"] = "torch.profiler"
    return torch.profiler.profile(activities=acts,
                                  schedule=torch.profiler.schedule(wait=0, warmup=1, active=active, repeat=1),
                                  on_trace_ready=torch.profiler.tensorboard_trace_handler(OUT))


t0 = time.time()
try:
    if ARGS.get("script"):
        path = os.path.abspath(os.path.expanduser(ARGS["script"]))
        sys.argv = [path]
        sys.path.insert(0, os.path.dirname(path))
        os.chdir(os.path.dirname(path))
        with profiler(1) as prof:
            prof.step()  # the whole script is one profiled step
            start = time.time()
            runpy.run_path(path, run_name="__main__")
            sync()
            out["steps"].append(time.time() - start)
            prof.step()
    else:
        model, batches = load_entry(ARGS["entry"])()
        batches = list(batches)
        if not batches:
            raise ValueError("the entry returned no batches")
        dev = None
        if npu is not None:
            dev = "npu"
        elif torch.cuda.is_available():
            dev = "cuda"
        if dev:
            model = model.to(dev)

        def step(i):
            b = batches[i % len(batches)]
            if not isinstance(b, (tuple, list)):
                b = (b,)
            if dev:
                b = tuple(x.to(dev) if isinstance(x, torch.Tensor) else x for x in b)
            res = model(*b)
            if ARGS.get("backward"):
                loss = res if isinstance(res, torch.Tensor) else res[0]
                (loss.float().sum() if loss.dim() else loss).backward()
            sync()

        with profiler(STEPS) as prof:
            for i in range(STEPS + 1):  # the first is the schedule's warm-up
                start = time.time()
                step(i)
                if i:
                    out["steps"].append(time.time() - start)
                prof.step()
except BaseException as e:
    out["error"] = {"type": type(e).__name__, "message": str(e)[:1000], "traceback": traceback.format_exc()[-6000:]}
out["seconds"] = round(time.time() - t0, 3)
finish()
