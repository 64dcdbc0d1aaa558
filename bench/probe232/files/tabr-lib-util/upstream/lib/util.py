import argparse
import dataclasses
import datetime
import enum
import inspect
import json
import os
import pickle
import shutil
import sys
import time
import typing
import warnings
from copy import deepcopy
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar, Union, cast

import delu
import numpy as np
import tomli
import tomli_w
import torch
from loguru import logger

from . import env

# ======================================================================================
# >>> types <<<
# ======================================================================================
KWArgs = dict[str, Any]
JSONDict = dict[str, Any]  # must be JSON-serializable

T = TypeVar('T')


class Part(enum.Enum):
    TRAIN = 'train'
    VAL = 'val'
    TEST = 'test'

    def __str__(self) -> str:
        return self.value


class TaskType(enum.Enum):
    REGRESSION = 'regression'
    BINCLASS = 'binclass'
    MULTICLASS = 'multiclass'

    def __str__(self) -> str:
        return self.value


class Score(enum.Enum):
    ACCURACY = 'accuracy'
    CROSS_ENTROPY = 'cross-entropy'
    MAE = 'mae'
    R2 = 'r2'
    RMSE = 'rmse'
    ROC_AUC = 'roc-auc'

    def __str__(self) -> str:
        return self.value


# ======================================================================================
# >>> IO <<<
# ======================================================================================
def load_json(path: Union[Path, str], **kwargs) -> Any:
    return json.loads(Path(path).read_text(), **kwargs)


def dump_json(x: Any, path: Union[Path, str], **kwargs) -> None:
    kwargs.setdefault('indent', 4)
    Path(path).write_text(json.dumps(x, **kwargs) + '\n')


def load_pickle(path: Union[Path, str], **kwargs) -> Any:
    return pickle.loads(Path(path).read_bytes(), **kwargs)


def dump_pickle(x: Any, path: Union[Path, str], **kwargs) -> None:
    Path(path).write_bytes(pickle.dumps(x, **kwargs))


def load_config(output_or_config_path: Union[str, Path]) -> JSONDict:
    with open(get_config_path(output_or_config_path), 'rb') as f:
        return tomli.load(f)


def dump_config(config: JSONDict, output_or_config_path: Union[str, Path]) -> None:
    path = get_config_path(output_or_config_path)
    with open(path, 'wb') as f:
        tomli_w.dump(config, f)
    assert config == load_config(path)  # sanity check


def get_config_path(output_or_config_path: Union[str, Path]) -> Path:
    path = env.get_path(output_or_config_path)
    return (
        path
        if path.name.endswith('.toml')
        else path.with_name(path.name.removesuffix('.toml') + '.toml')
        if path.with_name(path.name + '.toml').exists()
        else path / 'config.toml'
    )


def load_report(output: Union[Path, str]) -> JSONDict:
    return load_json(env.get_path(output) / 'report.json')


def dump_report(report: dict, output: Union[Path, str]) -> None:
    dump_json(report, env.get_path(output) / 'report.json')


def dump_predictions(predictions: dict[str, np.ndarray], output: Union[Path, str]) -> None:
    np.savez(env.get_path(output) / 'predictions.npz', **predictions)


def dump_summary(summary: JSONDict, output: Union[Path, str]) -> None:
    dump_json(summary, env.get_path(output) / 'summary.json')


# ======================================================================================
# >>> hardware <<<
# ======================================================================================
def get_device() -> torch.device:
    return torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')


def is_oom_exception(err: RuntimeError) -> bool:
    return isinstance(err, torch.cuda.OutOfMemoryError) or any(
        x in str(err)
        for x in [
            'CUDA out of memory',
            'CUBLAS_STATUS_ALLOC_FAILED',
            'CUDA error: out of memory',
        ]
    )


def get_gpu_names() -> list[str]:
    return [
        torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())
    ]


def free_memory() -> None:
    """Free as much GPU memory as possible (used between tuning trials)."""
    import gc

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()


def configure_libraries() -> None:
    torch.set_num_threads(1)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    # TF32 changes the results of matmuls on Ampere GPUs, we disable it for reproducibility
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    logger.remove()
    logger.add(sys.stderr, format='<level>{message}</level>')


# ======================================================================================
# >>> CLI <<<
# ======================================================================================
_LAST_SNAPSHOT_TIME = None


def backup_output(output: Path) -> None:
    backup_dir = os.environ.get('TMP_OUTPUT_PATH')
    snapshot_dir = os.environ.get('SNAPSHOT_PATH')
    if backup_dir is None:
        assert snapshot_dir is None
        return
    assert snapshot_dir is not None

    try:
        relative_output_dir = output.relative_to(env.get_project_dir())
    except ValueError:
        return

    for dir_ in [backup_dir, snapshot_dir]:
        new_output = dir_ / relative_output_dir
        prev_backup_output = new_output.with_name(new_output.name + '_prev')
        new_output.parent.mkdir(exist_ok=True, parents=True)
        if new_output.exists():
            new_output.rename(prev_backup_output)
        shutil.copytree(output, new_output)
        # the case for evaluate.py which automatically creates configs
        if output.with_suffix('.toml').exists():
            shutil.copyfile(output.with_suffix('.toml'), new_output.with_suffix('.toml'))
        if prev_backup_output.exists():
            shutil.rmtree(prev_backup_output)

    global _LAST_SNAPSHOT_TIME
    if _LAST_SNAPSHOT_TIME is None or time.time() - _LAST_SNAPSHOT_TIME > 10 * 60:
        import nirvana_dl.snapshot  # type: ignore[code]

        nirvana_dl.snapshot.dump_snapshot()
        _LAST_SNAPSHOT_TIME = time.time()
        print('The snapshot was saved!')


def _print_sep():
    print('-' * 100)


def print_config(config: dict) -> None:
    print()
    _print_sep()
    print(json.dumps(config, indent=2))
    _print_sep()


def start(
    main_fn: Callable[..., Any],
    output: Union[str, Path],
    config: Optional[JSONDict] = None,
    force: bool = False,
    continue_: bool = False,
) -> bool:
    """Create the output directory, print the environment and decide whether to run."""
    print_sep = _print_sep
    output = env.get_path(output)
    print_sep()
    print(f'[>>>] {env.try_get_relative_path(output)} | {datetime.datetime.now()}')
    print_sep()

    if output.exists():
        if force:
            logger.warning('Removing the existing output')
            time.sleep(1.0)
            shutil.rmtree(output)
            output.mkdir()
        elif not continue_:
            backup_output(output)
            logger.warning('The output already exists!')
            return False
        elif output.joinpath('DONE').exists():
            backup_output(output)
            logger.info('Already done!\n')
            return False
        else:
            logger.info('Continuing with the existing output')
    else:
        logger.info('Creating the output')
        output.mkdir()

    environment: JSONDict = {}
    if torch.cuda.is_available():  # this is mainly for reproducibility reasons
        cvd = os.environ.get('CUDA_VISIBLE_DEVICES')
        environment['CUDA_VISIBLE_DEVICES'] = cvd
        environment['gpus'] = get_gpu_names()
        environment['torch.version.cuda'] = torch.version.cuda
        environment['torch.backends.cudnn.version()'] = torch.backends.cudnn.version()  # type: ignore[code]
        environment['torch.cuda.nccl.version()'] = torch.cuda.nccl.version()  # type: ignore[code]
    if environment:
        print(json.dumps(environment, indent=2))
    dump_json({'environment': environment}, output / 'environment.json')
    return True


def finish(output: Path, report: JSONDict) -> None:
    dump_report(report, output)
    if report.get('time') is None and 'start_time' in report:
        report['time'] = str(datetime.timedelta(seconds=time.time() - report['start_time']))
    output.joinpath('DONE').touch()
    backup_output(output)
    print()
    _print_sep()
    try:
        print(f'[<<<] {env.try_get_relative_path(output)} | {datetime.datetime.now()}')
    except ValueError:
        print(f'[<<<] {output} | {datetime.datetime.now()}')
    _print_sep()
    print()


def run_cli(fn: Callable):
    parser = argparse.ArgumentParser()
    parser.add_argument('config', metavar='FILE')
    parser.add_argument('--force', action='store_true')
    parser.add_argument('--continue', action='store_true', dest='continue_')
    args = parser.parse_args()
    config_path = env.get_path(args.config)
    assert config_path.exists()
    fn(
        load_config(config_path),
        config_path.with_suffix(''),
        force=args.force,
        continue_=args.continue_,
    )


def seed_everything(seed: int) -> None:
    # delu.random.seed covers python, numpy and torch (including all CUDA devices)
    delu.random.seed(seed)


def make_random_batches(train_size: int, batch_size: int, device: Optional[torch.device] = None) -> list[torch.Tensor]:
    permutation = torch.randperm(train_size, device=device)
    batches = permutation.split(batch_size)
    # this function is used only for training, so the last batch may be dropped
    if len(batches) > 1 and len(batches[-1]) < batch_size:
        batches = batches[:-1]
    return batches


def get_n_parameters(m: torch.nn.Module) -> int:
    return sum(x.numel() for x in m.parameters() if x.requires_grad)
