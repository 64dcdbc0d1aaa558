import os
import sys
import time
import datetime
import logging

import numpy as np

logger = logging.getLogger(__name__)


def set_seed(seed):
    """Set the global random seed.

    Args:
        seed (int): random seed
    """
    try:
        import torch
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
    except Exception as e:
        print("Set seed failed,details are ", e)
        pass
    import numpy as np
    np.random.seed(seed)
    import random as python_random
    python_random.seed(seed)
    # cuda env
    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":16:8"


def get_now_time():
    """Return the time string, the format is %Y-%m-%d %H:%M:%S

    Returns:
        str: now time
    """
    now = datetime.datetime.now()
    dt_string = now.strftime("%Y-%m-%d %H:%M:%S")
    return dt_string


def debug_print(text, fuc_name=""):
    """Printing text with function name.

    Args:
        text (str): the text will print
        fuc_name (str, optional): _description_. Defaults to "".
    """
    print(f"{get_now_time()} - {fuc_name} - said: {text}")


def get_device_str():
    """Human-readable description of the accelerator used for this run (written to the wandb summary)."""
    import torch
    use_cuda = torch.cuda.is_available()
    if use_cuda:
        idx = torch.cuda.current_device()
        return f"cuda:{idx} ({torch.cuda.get_device_name(idx)})"
    return "cpu"


def count_parameters(model, trainable_only=True):
    if trainable_only:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    return sum(p.numel() for p in model.parameters())


def format_bytes(n):
    for unit in ["B", "KB", "MB", "GB", "TB"]:
        if abs(n) < 1024.0:
            return f"{n:3.1f}{unit}"
        n /= 1024.0
    return f"{n:.1f}PB"


def log_gpu_memory(prefix=""):
    """Print allocated / reserved memory; silently skipped on CPU-only machines."""
    import torch
    if not torch.cuda.is_available():
        return
    alloc = torch.cuda.memory_allocated()
    reserved = torch.cuda.memory_reserved()
    peak = torch.cuda.max_memory_allocated()
    debug_print(f"{prefix} mem alloc={format_bytes(alloc)} reserved={format_bytes(reserved)} peak={format_bytes(peak)}",
                fuc_name="log_gpu_memory")


class Timer(object):
    """Simple wall-clock timer used by the training loop (host time, not kernel time)."""

    def __init__(self, name=""):
        self.name = name
        self.start = None
        self.total = 0.0
        self.count = 0

    def __enter__(self):
        self.start = time.time()
        return self

    def __exit__(self, *exc):
        self.total += time.time() - self.start
        self.count += 1
        return False

    @property
    def mean(self):
        return self.total / max(self.count, 1)

    def __repr__(self):
        return f"Timer({self.name}: total={self.total:.2f}s, mean={self.mean:.4f}s over {self.count})"


def ensure_dir(path):
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
    return path


def save_cur_predict_result(dres, q, r, d, t, m, sm, p):
    # dres, q, r, qshft, rshft, m, sm, y
    results = []
    for i in range(0, t.shape[0]):
        cps = p[i][0:m[i].sum().item()].cpu().tolist()
        cts = t[i][0:m[i].sum().item()].cpu().tolist()
        cqs = q[i][0:m[i].sum().item()].cpu().tolist()
        crs = r[i][0:m[i].sum().item()].cpu().tolist()
        cds = d[i][0:m[i].sum().item()].cpu().tolist()
        qs, rs, ts, ps, ds = [], [], [], [], []
        for cq, cr, ct, cp, cd in zip(cqs, crs, cts, cps, cds):
            qs.append(str(cq))
            rs.append(str(cr))
            ts.append(str(ct))
            ps.append(str(cp))
            ds.append(str(cd))
        results.append([" ".join(qs), " ".join(rs), " ".join(ts), " ".join(ps), " ".join(ds)])
    dres.extend(results)
    return dres


def setup_logging(log_dir, name="pykt"):
    ensure_dir(log_dir)
    fh = logging.FileHandler(os.path.join(log_dir, f"{name}.log"))
    fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.addHandler(fh)
    root.setLevel(logging.INFO)
    return root


def move_to_device(batch, device, non_blocking=False):
    """Recursively move tensors in (nested) dicts / lists / tuples to `device`.

    `device` is whatever the caller uses for the model (a torch.device or a string such as "cuda").
    """
    import torch
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: move_to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(move_to_device(v, device, non_blocking) for v in batch)
    return batch


def str2bool(v):
    if isinstance(v, bool):
        return v
    return str(v).lower() in ("yes", "true", "t", "1")


def load_json(path):
    import json
    with open(path) as f:
        return json.load(f)


def dump_json(obj, path, indent=2):
    import json
    ensure_dir(os.path.dirname(path) or ".")
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)


def is_cuda_tensor_dict(d):
    """True if every tensor in the data dict is already on the GPU (skips the copy in model_forward)."""
    import torch
    return all((not isinstance(v, torch.Tensor)) or v.is_cuda for v in d.values())
