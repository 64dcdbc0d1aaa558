# Profiling harness (runs on the host, torch >= 1.13). Arguments as JSON in AMW_PROFILE_ARGS:
# {"entry": "FILE:FUNCTION" | "script": "FILE", "steps": N, "level": "Level1", "backward": bool,
#  "out": DIR, "activities": ["cpu", "npu"], "nproc": N | "npus", "node": I}. FUNCTION() returns (model, batches); one warm-up step, then N profiled steps
# (batches reused in turn). With torch_npu and an NPU: torch_npu.profiler (CPU + NPU activities,
# the level asked for), output in DIR as torch_npu writes it (*_ascend_pt). Without: torch.profiler
# on the CPU (CUDA too when there is a GPU) as the stand-in, a Chrome trace in DIR — the result
# says which. Prints one line: @@AMW-PROFILE@@{json}; the user's errors come back in it.
# Several ranks per node (nproc > 1, or "npus": one per /dev/davinciN): this process becomes a
# launcher that starts itself under torchrun (python3 -m torch.distributed.run --standalone
# --nproc_per_node N); each rank joins a process group (hccl on an NPU, gloo on a CPU host), writes
# its output to DIR/rank_R (R = node * N + local rank, the rank the job would have across nodes)
# and its result to a file the launcher merges. Each node is its own torchrun world.
import json, os, re, runpy, shutil, subprocess, sys, tempfile, time, traceback, importlib.util

ARGS = json.loads(os.environ.get("AMW_PROFILE_ARGS", "{}"))
OUT = os.path.abspath(os.path.expanduser(ARGS.get("out") or "~/.amw/profiles/run"))
STEPS = int(ARGS.get("steps") or 5)
ACTIVITIES = ARGS.get("activities") or ["cpu", "npu"]
out = {"v": 1, "entry": ARGS.get("entry") or ARGS.get("script"), "out": OUT, "steps": [],
       "profiler": None, "device": "cpu", "error": None, "notes": []}
RESULT_DIR = os.environ.get("AMW_PROFILE_RESULT_DIR")
IS_RANK = RESULT_DIR is not None and os.environ.get("LOCAL_RANK") is not None


def nproc():
    n = ARGS.get("nproc") or 1
    if n == "npus":
        try:
            return max(1, len([d for d in os.listdir("/dev") if re.match(r"^davinci\d+$", d)]))
        except OSError:
            return 1
    return max(1, int(n))


def finish():
    if IS_RANK:
        with open(os.path.join(RESULT_DIR, "rank-%s.json" % os.environ.get("RANK", "0")), "w") as f:
            json.dump(out, f)
        return
    print("@@AMW-PROFILE@@" + json.dumps(out))
    sys.stdout.flush()


def launch(n):
    """Starts this harness n times under torchrun and merges the ranks' results into `out`."""
    src = os.environ.get("AMW_PROFILE_HARNESS_SRC") or ""
    tmp = tempfile.mkdtemp(prefix="amw-profile-")
    path = os.path.join(tmp, "profile_run.py")
    with open(path, "w") as f:
        f.write(src)
    env = dict(os.environ, AMW_PROFILE_RESULT_DIR=tmp)
    env.pop("AMW_PROFILE_HARNESS_SRC", None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes", "1",
           # explicit redirects: the default does not parse under torch 1.13 on Python 3.11
           "--redirects=2", "--tee=1", "--nproc_per_node", str(n), path]
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=3500)
        rc, text = p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        rc, text = 124, "torchrun did not finish within 3500 s"
    base = int(ARGS.get("node") or 0) * n
    ranks, missing = [], []
    for local in range(n):
        try:
            with open(os.path.join(tmp, "rank-%d.json" % local)) as f:
                r = json.load(f)
        except (OSError, ValueError):
            missing.append(base + local)
            continue
        ranks.append(base + local)
        if not out["steps"]:
            out.update({k: r.get(k) for k in ("steps", "profiler", "device", "torch", "torchNpu")})
        if r.get("error") and not out["error"]:
            out["error"] = r["error"]
        out["notes"].extend(x for x in r.get("notes", []) if x not in out["notes"])
    out["ranks"], out["missingRanks"] = ranks, missing
    out["launcher"] = {"tool": "torchrun", "nprocPerNode": n, "rc": rc,
                       "backend": "hccl" if out.get("device") == "npu" else "gloo"}
    if not ranks and not out["error"]:
        out["error"] = {"type": "LaunchFailed", "message": "torchrun exited %d and no rank wrote a result" % rc,
                        "traceback": text[-4000:]}
    shutil.rmtree(tmp, ignore_errors=True)


NPROC = nproc()
if NPROC > 1 and not IS_RANK:
    launch(NPROC)
    finish()
    sys.exit(0)
if IS_RANK:
    OUT = os.path.join(OUT, "rank_%d" % (int(ARGS.get("node") or 0) * NPROC + int(os.environ["LOCAL_RANK"])))
    out["out"] = OUT


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
if IS_RANK:
    import torch.distributed as dist
    if npu is not None:
        torch.npu.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("hccl" if npu is not None else "gloo")


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
        acts = [a for k, a in (("cpu", P.ProfilerActivity.CPU), ("npu", P.ProfilerActivity.NPU)) if k in ACTIVITIES]
        return P.profile(activities=acts,
                         schedule=P.schedule(wait=0, warmup=1, active=active, repeat=1),
                         on_trace_ready=P.tensorboard_trace_handler(OUT), experimental_config=cfg)
    acts = [torch.profiler.ProfilerActivity.CPU]
    if "npu" in ACTIVITIES and torch.cuda.is_available():  # the device activity: CUDA here
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
if IS_RANK:
    try:
        dist.destroy_process_group()
    except BaseException:
        pass
finish()
