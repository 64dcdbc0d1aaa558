# Hyperparameter tuning with Optuna (TPE).
# Usage: python bin/tune.py exp/tabm/california/0-tuning.toml --continue
import importlib
import shutil
import time
from copy import deepcopy
from pathlib import Path
from typing import Any, Optional

import delu
import optuna
import optuna.samplers
import optuna.trial
import torch
from loguru import logger
from typing_extensions import NotRequired, TypedDict

if __name__ == '__main__':
    import sys

    sys.path.append(str(Path.cwd()))

import lib
from lib import KWArgs

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML_OK = True
except Exception:  # driver not found, running on CPU, ...
    _NVML_OK = False


class Config(TypedDict):
    seed: int
    function: str
    n_trials: NotRequired[int]
    timeout: NotRequired[int]
    sampler: KWArgs
    space: dict[str, Any]


def sample_config(trial: optuna.trial.Trial, space: Any, label_parts: list) -> Any:
    if isinstance(space, bool | int | float | str | bytes):
        return space
    elif isinstance(space, dict):
        if '_tune_' in space or '-tune-' in space:
            distribution = space['_tune_'] if '_tune_' in space else space['-tune-']
            # for backward compatibility, accept lists as well
            if distribution == '?':
                default, args_ = space['default'], space['args']
                flag = trial.suggest_categorical('.'.join(label_parts + ['?']), [False, True])
                return sample_config(trial, args_, label_parts) if flag else default
            elif distribution == 'int-power-of-two':
                low, high = space['low'], space['high']
                return 2 ** trial.suggest_int('.'.join(label_parts), low, high)
            else:
                args = {k: v for k, v in space.items() if k not in ('_tune_', '-tune-')}
                return getattr(trial, f'suggest_{distribution}')('.'.join(label_parts), **args)
        return {k: sample_config(trial, v, label_parts + [k]) for k, v in space.items()}
    elif isinstance(space, list):
        return [sample_config(trial, v, label_parts + [str(i)]) for i, v in enumerate(space)]
    raise ValueError(f'Unknown space: {space}')


def gpu_snapshot() -> dict[str, float]:
    """Memory/utilization of the GPU this process runs on (for the tuning report)."""
    if not _NVML_OK or not torch.cuda.is_available():
        return {}
    handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    return {
        'gpu_mem_used_gb': mem.used / 2**30,
        'gpu_util': float(util.gpu),
        'torch_reserved_gb': torch.cuda.memory_reserved() / 2**30,
    }


def main(config: Config, output: str | Path, *, force: bool = False, continue_: bool = False) -> Optional[dict]:
    config, output, report = lib.check(config, output, config_type=Config, force=force, continue_=continue_)
    if config is None:
        return None
    output = Path(output)
    function = lib.import_(config['function'])
    sampler = optuna.samplers.TPESampler(**config['sampler'], seed=config['seed'])
    study = optuna.create_study(direction='maximize', sampler=sampler)

    report['trial_reports'] = trial_reports = []
    timer = delu.tools.Timer()
    timer.run()

    def objective(trial: optuna.trial.Trial) -> float:
        trial_config = sample_config(trial, config['space'], [])
        trial_config['seed'] = config['seed']
        with lib.TemporaryDirectory() as tmp:
            try:
                trial_report = function(trial_config, Path(tmp) / 'output')
            except RuntimeError as err:
                if lib.is_oom_exception(err):
                    logger.warning('OOM: pruning the trial')
                    torch.cuda.empty_cache()  # free the failed trial's tensors
                    raise optuna.TrialPruned() from err
                raise
        assert trial_report is not None
        trial_report['trial_id'] = trial.number
        trial_report['tuning_time'] = timer.elapsed()
        trial_report['hardware'] = gpu_snapshot()
        trial_reports.append(trial_report)
        # Release the memory of the finished trial before the next one starts.
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return trial_report['metrics']['val']['score']

    study.optimize(
        objective,
        n_trials=config.get('n_trials'),
        timeout=config.get('timeout'),
        callbacks=[lambda study, trial: lib.dump_report(output, report)],
        show_progress_bar=False,
    )
    report['best'] = trial_reports[study.best_trial.number] if trial_reports else None
    report['time'] = timer.elapsed()
    lib.finish(output, report)
    return report


if __name__ == '__main__':
    lib.configure_torch(deterministic=True)
    lib.run_MainFunction_cli(main)
