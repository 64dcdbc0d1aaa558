import os
import sys
import random
import datetime
import json

import numpy as np


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
    import os
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


def load_json(path):
    with open(path) as f:
        return json.load(f)


def save_json(obj, path, indent=None):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent)


def get_gpu_usage():
    """Return a short string with the memory used on the current card, for logging only."""
    import torch
    if not torch.cuda.is_available():
        return "gpu: n/a"
    idx = torch.cuda.current_device()
    used = torch.cuda.memory_allocated(idx) / 1024 ** 2
    reserved = torch.cuda.memory_reserved(idx) / 1024 ** 2
    name = torch.cuda.get_device_name(idx)
    return f"{name}[{idx}] allocated={used:.0f}MB reserved={reserved:.0f}MB"


def count_parameters(model, trainable_only=True):
    if trainable_only:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    return sum(p.numel() for p in model.parameters())


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self, name="", fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


def ensure_dir(path):
    if not os.path.exists(path):
        os.makedirs(path, exist_ok=True)
    return path


def flatten_list(nested):
    res = []
    for item in nested:
        if isinstance(item, (list, tuple)):
            res.extend(flatten_list(item))
        else:
            res.append(item)
    return res


def one_hot_numpy(idx, num):
    arr = np.zeros((len(idx), num), dtype=np.float32)
    arr[np.arange(len(idx)), idx] = 1.0
    return arr


def check_python_version(min_version=(3, 6)):
    if sys.version_info < min_version:
        raise RuntimeError(f"pykt requires python >= {'.'.join(map(str, min_version))}")


def random_split(items, ratio=0.8, seed=1024):
    rng = random.Random(seed)
    items = list(items)
    rng.shuffle(items)
    cut = int(len(items) * ratio)
    return items[:cut], items[cut:]
