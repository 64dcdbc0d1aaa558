# The main training script for MLP-like models, including TabM.
# Usage: python bin/model.py exp/tabm/california/0-tuning/0.toml --force
import math
import shutil
import statistics
from pathlib import Path
from typing import Any, Literal, Optional

import delu
import numpy as np
import rtdl_num_embeddings
import torch
import torch.nn as nn
import torch.nn.functional as F
from loguru import logger
from torch import Tensor
from tqdm import tqdm
from typing_extensions import NotRequired, TypedDict

if __name__ == '__main__':
    _cwd = Path.cwd()
    assert _cwd.joinpath('.git').exists()
    import sys

    sys.path.append(str(_cwd))

import lib
import lib.data
import lib.deep
import lib.env
from lib import KWArgs, PartKey


class Config(TypedDict):
    seed: int
    data: KWArgs
    bins: NotRequired[KWArgs]
    model: KWArgs
    optimizer: KWArgs
    n_lr_warmup_epochs: NotRequired[int]
    batch_size: int
    patience: int
    n_epochs: int
    gradient_clipping_norm: NotRequired[float]
    parameter_statistics: NotRequired[bool]
    amp: NotRequired[bool]  # Automatic mixed precision in bfloat16.
    n_bins: NotRequired[int]
    compile: NotRequired[bool]  # torch.compile


def get_amp_dtype(device: torch.device) -> Optional[torch.dtype]:
    """bfloat16 on Ampere+, float16 on older GPUs, no AMP on CPU."""
    if device.type != 'cuda':
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def main(
    config: Config,
    output: str | Path,
    *,
    force: bool = False,
) -> Optional[dict[str, Any]]:
    # >>> Start
    config, output, report = lib.check(config, output, config_type=Config, force=force)
    if config is None:
        return None

    lib.show_config(config)  # type: ignore[code]
    output = Path(output)
    delu.random.seed(config['seed'])
    device = lib.get_device()
    evaluation_mode = torch.inference_mode

    # >>> Data
    dataset = lib.data.build_dataset(**config['data'])
    if dataset.task.is_regression:
        dataset.data['y'], regression_label_stats = lib.data.standardize_labels(dataset.data['y'])
    else:
        regression_label_stats = None
    dataset = dataset.to_torch(device)
    Y_train = dataset.data['y']['train'].to(
        torch.long if dataset.task.is_classification else torch.float
    )

    # >>> Model
    if 'bins' in config:
        bin_edges = rtdl_num_embeddings.compute_bins(dataset['x_num']['train'], **config['bins'])
        logger.info(f'Bin counts: {[len(x) - 1 for x in bin_edges]}')
    else:
        bin_edges = None

    model = lib.deep.Model(
        n_num_features=dataset.n_num_features,
        cat_cardinalities=dataset.compute_cat_cardinalities(),
        n_classes=dataset.task.try_compute_n_classes(),
        **config['model'],
        bins=bin_edges,
    )
    report['n_parameters'] = lib.deep.get_n_parameters(model)
    logger.info(f'n_parameters = {report["n_parameters"]}')
    report['prediction_type'] = 'labels' if dataset.task.is_regression else 'probs'
    model.to(device)
    if torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)

    # >>> Training
    step = 0
    batch_size = config['batch_size']
    report['epoch_size'] = epoch_size = math.ceil(dataset.size('train') / batch_size)
    eval_batch_size = 32768
    chunk_size = None
    generator = torch.Generator(device).manual_seed(config['seed'])

    report['metrics'] = {'val': {'score': -math.inf}}
    if 'n_lr_warmup_epochs' in config:
        n_warmup_steps = min(10000, config['n_lr_warmup_epochs'] * epoch_size)
        n_warmup_steps = max(1, math.trunc(n_warmup_steps / 10)) * 10
        logger.info(f'{n_warmup_steps=}')
        lr_scheduler = lib.deep.make_warmup_scheduler(n_warmup_steps)
    else:
        lr_scheduler = None

    optimizer = lib.deep.make_optimizer(
        **config['optimizer'], params=lib.deep.make_parameter_groups(model)
    )
    gradient_clipping_norm = config.get('gradient_clipping_norm')
    amp_dtype = get_amp_dtype(device)
    amp_enabled = config.get('amp', False) and amp_dtype is not None
    grad_scaler = torch.cuda.amp.GradScaler() if amp_enabled and amp_dtype is torch.float16 else None
    logger.info(f'AMP enabled: {amp_enabled} ({amp_dtype})')
    _loss_fn = (
        nn.functional.mse_loss
        if dataset.task.is_regression
        else nn.functional.cross_entropy
    )

    # Without compilation, the model is slower, but the code is easier to debug.
    if config.get('compile', False):
        # NOTE
        # `torch.compile` is intentionally called without the `mode` argument
        # (mode="reduce-overhead" caused issues during training with torch==2.0.1).
        model = torch.compile(model)
        evaluation_mode = torch.no_grad

    def loss_fn(y_pred: Tensor, y_true: Tensor) -> Tensor:
        # TabM produces k predictions per object. Each of them must be trained separately.
        # (regression)     y_pred.shape == (batch_size, k)
        # (classification) y_pred.shape == (batch_size, k, n_classes)
        k = y_pred.shape[1]
        return _loss_fn(
            y_pred.flatten(0, 1),
            y_true.repeat_interleave(k) if model.training else y_true,
        )

    @torch.autocast(device.type, enabled=amp_enabled, dtype=amp_dtype)  # type: ignore[code]
    def apply_model(part: PartKey, idx: Tensor) -> Tensor:
        return (
            model(
                dataset.data['x_num'][part][idx] if 'x_num' in dataset.data else None,
                dataset.data['x_cat'][part][idx] if 'x_cat' in dataset.data else None,
            )
            .squeeze(-1)  # Remove the last dimension for regression predictions.
            .float()
        )

    @evaluation_mode()
    def evaluate(parts: list[PartKey], eval_batch_size: int) -> tuple[dict[PartKey, Any], dict[PartKey, np.ndarray], int]:
        model.eval()
        predictions: dict[PartKey, np.ndarray] = {}
        for part in parts:
            while eval_batch_size:
                try:
                    predictions[part] = (
                        torch.cat(
                            [
                                apply_model(part, idx)
                                for idx in torch.arange(dataset.size(part), device=device).split(eval_batch_size)
                            ]
                        )
                        .cpu()
                        .numpy()
                    )
                except RuntimeError as err:
                    if not lib.is_oom_exception(err):
                        raise
                    eval_batch_size //= 2
                    logger.warning(f'eval_batch_size = {eval_batch_size}')
                else:
                    break
            if not eval_batch_size:
                RuntimeError('Not enough memory even for eval_batch_size=1')
        if regression_label_stats is not None:
            predictions = {
                k: v * regression_label_stats.std + regression_label_stats.mean
                for k, v in predictions.items()
            }
        metrics = (
            dataset.task.calculate_metrics(predictions, report['prediction_type'])
            if lib.are_valid_predictions(predictions)
            else {x: {'score': lib.WORST_SCORE} for x in predictions}
        )
        return metrics, predictions, eval_batch_size

    def train_step(batch_idx: Tensor) -> Tensor:
        optimizer.zero_grad()
        loss = loss_fn(apply_model('train', batch_idx), Y_train[batch_idx])
        if grad_scaler is None:
            loss.backward()
        else:
            grad_scaler.scale(loss).backward()
        if gradient_clipping_norm is not None and gradient_clipping_norm != 'none':
            if grad_scaler is not None:
                grad_scaler.unscale_(optimizer)
            nn.utils.clip_grad.clip_grad_norm_(model.parameters(), gradient_clipping_norm)
        if lr_scheduler is not None:
            lib.deep.apply_warmup(optimizer, lr_scheduler(step))
        if grad_scaler is None:
            optimizer.step()
        else:
            grad_scaler.step(optimizer)
            grad_scaler.update()
        return loss

    timer = delu.tools.Timer()
    early_stopping = delu.tools.EarlyStopping(config['patience'], mode='max')
    training_log = []
    writer = None

    timer.run()
    for epoch in range(config['n_epochs']):
        batches = torch.randperm(dataset.size('train'), generator=generator, device=device).split(batch_size)
        model.train()
        epoch_losses = []
        for batch_idx in tqdm(batches, desc=f'Epoch {epoch}', disable=not lib.env.is_local()):
            loss = train_step(batch_idx)
            step += 1
            epoch_losses.append(loss.detach())

        epoch_losses = torch.stack(epoch_losses).tolist()
        mean_loss = statistics.mean(epoch_losses)
        metrics, predictions, eval_batch_size = evaluate(['val', 'test'], eval_batch_size)

        training_log.append({'epoch-losses': epoch_losses, 'metrics': metrics, 'time': timer.elapsed()})
        lib.print_metrics(mean_loss, metrics)
        if metrics['val']['score'] > report['metrics']['val']['score']:
            logger.success('New best epoch!')
            report['best_step'] = step
            report['metrics'] = metrics
            lib.dump_checkpoint(output, {'model': model.state_dict(), 'epoch': epoch})
            lib.dump_predictions(output, predictions)

        early_stopping.update(metrics['val']['score'])
        if early_stopping.should_stop() or not lib.are_valid_predictions(predictions):
            break

    report['time'] = timer.elapsed()
    report['gpus'] = lib.get_gpu_names()
    report['max_memory_allocated_gb'] = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
    lib.finish(output, report)
    return report


if __name__ == '__main__':
    lib.configure_torch(deterministic=False)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    lib.run_MainFunction_cli(main)
