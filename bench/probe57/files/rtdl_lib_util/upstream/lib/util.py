import __main__
import argparse
import datetime
import enum
import json
import os
import pickle
import random
import shutil
import sys
import time
from copy import deepcopy
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar, Union, cast

import numpy as np
import pynvml
import tomli
import tomli_w
import torch
import zero

PROJECT_DIR = Path(os.environ.get("PROJECT_DIR", Path(__file__).absolute().resolve().parents[1]))
OUTPUT_DIR = PROJECT_DIR / "output"
DATA_DIR = PROJECT_DIR / "data"

RawConfig = Dict[str, Any]
Report = Dict[str, Any]
T = TypeVar("T")


class Part(enum.Enum):
    TRAIN = "train"
    VAL = "val"
    TEST = "test"

    def __str__(self) -> str:
        return self.value


class TaskType(enum.Enum):
    BINCLASS = "binclass"
    MULTICLASS = "multiclass"
    REGRESSION = "regression"

    def __str__(self) -> str:
        return self.value


def load_config(path: Union[Path, str]) -> Any:
    with open(path, "rb") as f:
        return unpack_config(tomli.load(f))


def dump_config(config: Any, path: Union[Path, str]) -> None:
    with open(path, "wb") as f:
        tomli_w.dump(pack_config(config), f)


def unpack_config(config: RawConfig) -> RawConfig:
    return cast(RawConfig, _replace(config, lambda x: x == "__null__", None))


def pack_config(config: RawConfig) -> RawConfig:
    return cast(RawConfig, _replace(config, lambda x: x is None, "__null__"))


def _replace(data, condition, value):
    def do(x):
        if isinstance(x, dict):
            return {k: do(v) for k, v in x.items()}
        elif isinstance(x, list):
            return [do(y) for y in x]
        else:
            return value if condition(x) else x

    return do(data)


def load_json(path: Union[Path, str], **kwargs) -> Any:
    return json.loads(Path(path).read_text(), **kwargs)


def dump_json(x: Any, path: Union[Path, str], **kwargs) -> None:
    kwargs.setdefault("indent", 4)
    Path(path).write_text(json.dumps(x, **kwargs) + "\n")


def load_pickle(path: Union[Path, str], **kwargs) -> Any:
    return pickle.loads(Path(path).read_bytes(), **kwargs)


def dump_pickle(x: Any, path: Union[Path, str], **kwargs) -> None:
    Path(path).write_bytes(pickle.dumps(x, **kwargs))


def get_device() -> torch.device:
    return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


def get_gpus_info() -> Dict[str, Any]:
    """Driver version and per-card name / memory, stored in every report."""
    pynvml.nvmlInit()
    n = pynvml.nvmlDeviceGetCount()
    devices = []
    for i in range(n):
        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        devices.append(
            {"name": pynvml.nvmlDeviceGetName(handle), "memory_total": mem.total, "memory_used": mem.used}
        )
    info = {"driver": pynvml.nvmlSystemGetDriverVersion(), "devices": devices}
    pynvml.nvmlShutdown()
    return info


def is_oom_exception(err: RuntimeError) -> bool:
    return any(
        x in str(err)
        for x in [
            "CUDA out of memory",
            "CUBLAS_STATUS_ALLOC_FAILED",
            "CUDA error: out of memory",
        ]
    )


def set_seeds(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def get_peak_memory_mb() -> float:
    return torch.cuda.max_memory_allocated() / 2 ** 20


def reset_peak_memory() -> None:
    torch.cuda.reset_peak_memory_stats()


def _print_sep(c, size=100):
    print(c * size)


def start(
    config_cls: type = dict,
    argv: Optional[List[str]] = None,
    patch_raw_config: Optional[Callable[[RawConfig], None]] = None,
) -> Tuple[Any, Path, Report]:
    parser = argparse.ArgumentParser()
    parser.add_argument("config", metavar="FILE")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--continue", action="store_true", dest="continue_")
    if argv is None:
        program = __main__.__file__  # type: ignore[name-defined]
        args = parser.parse_args()
    else:
        program = argv[0]
        args = parser.parse_args(argv[1:])

    snapshot_dir = os.environ.get("SNAPSHOT_PATH")
    if snapshot_dir and Path(snapshot_dir).joinpath("CHECKPOINTS_RESTORED").exists():
        assert args.continue_

    config_path = Path(args.config).absolute().resolve()
    output_dir = config_path.with_suffix("")
    _print_sep("=")
    print(f"[output] {output_dir}")
    _print_sep("=")

    assert config_path.exists()
    raw_config = load_config(config_path)
    if patch_raw_config is not None:
        patch_raw_config(raw_config)
    config = raw_config if config_cls is dict else config_cls(**raw_config)

    if output_dir.exists():
        if args.force:
            print("Removing the existing output and creating a new one...")
            shutil.rmtree(output_dir)
            output_dir.mkdir()
        elif not args.continue_:
            backup_output(output_dir)
            print("The output directory already exists. Done!\n")
            sys.exit()
        elif output_dir.joinpath("DONE").exists():
            backup_output(output_dir)
            print("The \"DONE\" file already exists. Done!")
            sys.exit()
        else:
            print("Continuing with the existing output...")
    else:
        print("Creating the output...")
        output_dir.mkdir()

    report = {
        "program": str(program),
        "environment": {},
        "config": raw_config,
    }
    if torch.cuda.is_available():  # type: ignore[code]
        report["environment"].update(
            {
                "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "gpus": get_gpus_info(),
                "torch.version.cuda": torch.version.cuda,
                "torch.backends.cudnn.version()": torch.backends.cudnn.version(),  # type: ignore[code]
                "torch.cuda.nccl.version()": torch.cuda.nccl.version(),  # type: ignore[code]
            }
        )
    dump_report(report, output_dir)
    dump_json(raw_config, output_dir / "raw_config.json")
    _print_sep("-")
    print(json.dumps(raw_config, indent=4))
    _print_sep("=")
    return config, output_dir, report


_LAST_SNAPSHOT_TIME = None


def backup_output(output_dir: Path) -> None:
    backup_dir = os.environ.get("TMP_OUTPUT_PATH")
    snapshot_dir = os.environ.get("SNAPSHOT_PATH")
    if backup_dir is None:
        assert snapshot_dir is None
        return
    assert snapshot_dir is not None
    try:
        relative_output_dir = output_dir.relative_to(PROJECT_DIR)
    except ValueError:
        return
    for dir_ in [backup_dir, snapshot_dir]:
        new_output_dir = dir_ / relative_output_dir
        prev_backup_output_dir = new_output_dir.with_name(new_output_dir.name + "_prev")
        new_output_dir.parent.mkdir(exist_ok=True, parents=True)
        if new_output_dir.exists():
            new_output_dir.rename(prev_backup_output_dir)
        shutil.copytree(output_dir, new_output_dir)
        if prev_backup_output_dir.exists():
            shutil.rmtree(prev_backup_output_dir)
    global _LAST_SNAPSHOT_TIME
    if _LAST_SNAPSHOT_TIME is None or time.time() - _LAST_SNAPSHOT_TIME > 10 * 60:
        _LAST_SNAPSHOT_TIME = time.time()
        print("The snapshot was saved!")


def dump_report(report: dict, output_dir: Path) -> None:
    dump_json(report, output_dir / "report.json")


def load_report(output_dir: Path) -> Report:
    return load_json(output_dir / "report.json")


def finish(output_dir: Path, report: dict) -> None:
    print()
    _print_sep("=")
    metrics = report.get("metrics")
    if metrics is not None:
        print(json.dumps({k: v.get("score") for k, v in metrics.items()}, indent=4))
    report["peak_memory_mb"] = get_peak_memory_mb()
    dump_report(report, output_dir)
    json_output_path = os.environ.get("JSON_OUTPUT_FILE")
    if json_output_path:
        try:
            key = str(output_dir.relative_to(PROJECT_DIR))
        except ValueError:
            pass
        else:
            json_output_path = Path(json_output_path)
            try:
                json_data = json.loads(json_output_path.read_text())
            except (FileNotFoundError, json.decoder.JSONDecodeError):
                json_data = {}
            json_data[key] = load_json(output_dir / "report.json")
            json_output_path.write_text(json.dumps(json_data, indent=4))
        shutil.copyfile(json_output_path, os.path.join(os.environ["SNAPSHOT_PATH"], "json_output.json"))

    output_dir.joinpath("DONE").touch()
    backup_output(output_dir)
    print(f"Done! | {report.get('time')} | {output_dir}")
    _print_sep("=")
    print()


def format_seconds(seconds: float) -> str:
    return str(datetime.timedelta(seconds=round(seconds)))


def make_optimizer(optimizer: str, parameter_groups, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    Optimizer = {
        "adabelief": None,
        "adam": torch.optim.Adam,
        "adamw": torch.optim.AdamW,
        "radam": torch.optim.RAdam,
        "sgd": torch.optim.SGD,
    }[optimizer]
    momentum = (0.9,) if Optimizer is torch.optim.SGD else ()
    return Optimizer(parameter_groups, lr, *momentum, weight_decay=weight_decay)


def get_lr(optimizer: torch.optim.Optimizer) -> float:
    return next(iter(optimizer.param_groups))["lr"]


def replace_factor_with_value(config: RawConfig, key: str, reference_value: int, bounds: Tuple[float, float]) -> None:
    factor_key = key + "_factor"
    if factor_key not in config:
        assert key in config
    else:
        assert key not in config
        factor = config.pop(factor_key)
        assert bounds[0] <= factor <= bounds[1]
        config[key] = int(factor * reference_value)


def concat_features(D) -> Dict[str, torch.Tensor]:
    """Numerical and (already one-hot encoded) categorical parts side by side, per split."""
    return {
        part: torch.cat(
            [torch.as_tensor(D.X_num[part], dtype=torch.float32)]
            + ([torch.as_tensor(D.X_cat[part], dtype=torch.float32)] if D.X_cat else []),
            dim=1,
        )
        for part in D.X_num
    }


def run_timer():
    timer = zero.Timer()
    timer.run()
    return timer

