# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
#
# Run a fine-tuned AV-HuBERT separation / enhancement model on a manifest and
# write the estimated target-speaker waveforms plus SI-SNRi / PESQ / STOI.

import ast
import logging
import math
import os
import sys
from dataclasses import dataclass, field, is_dataclass
from typing import Optional

import hydra
import numpy as np
import soundfile as sf
import torch
from fairseq import checkpoint_utils, tasks, utils
from fairseq.dataclass.configs import (
    CheckpointConfig,
    CommonConfig,
    CommonEvalConfig,
    DatasetConfig,
    DistributedTrainingConfig,
    FairseqDataclass,
)
from fairseq.logging import progress_bar
from fairseq.logging.meters import StopwatchMeter
from hydra.core.config_store import ConfigStore
from omegaconf import MISSING, OmegaConf

logging.root.setLevel(logging.INFO)
logging.basicConfig(stream=sys.stdout, level=logging.INFO)
logger = logging.getLogger(__name__)

config_path = os.path.join(os.path.dirname(__file__), "../conf/avse")


@dataclass
class OverrideConfig(FairseqDataclass):
    noise_wav: Optional[str] = field(default=None, metadata={"help": "noise wav file"})
    noise_prob: float = field(default=0, metadata={"help": "noise probability"})
    noise_snr: float = field(default=0, metadata={"help": "noise SNR in audio"})
    modalities: str = field(default="audio,video", metadata={"help": "which modality to use"})
    data: Optional[str] = field(default=None, metadata={"help": "path to test data directory"})


@dataclass
class SeOutputConfig(FairseqDataclass):
    results_path: Optional[str] = field(default=None, metadata={"help": "where to write estimated wavs and scores"})
    write_wavs: bool = field(default=True)
    compute_pesq: bool = field(default=False)


@dataclass
class InferConfig(FairseqDataclass):
    task: object = None
    common: CommonConfig = CommonConfig()
    common_eval: CommonEvalConfig = CommonEvalConfig()
    checkpoint: CheckpointConfig = CheckpointConfig()
    distributed_training: DistributedTrainingConfig = DistributedTrainingConfig()
    dataset: DatasetConfig = DatasetConfig()
    override: OverrideConfig = OverrideConfig()
    output: SeOutputConfig = SeOutputConfig()
    is_ax: bool = field(default=False)


def si_snr(est, ref, eps=1e-8):
    est = est - est.mean()
    ref = ref - ref.mean()
    proj = np.dot(est, ref) * ref / (np.dot(ref, ref) + eps)
    noise = est - proj
    return 10 * np.log10((np.dot(proj, proj) + eps) / (np.dot(noise, noise) + eps))


def main(cfg: InferConfig):
    if cfg.output.results_path is not None:
        os.makedirs(cfg.output.results_path, exist_ok=True)
        output_path = os.path.join(cfg.output.results_path, "scores.txt")
        with open(output_path, "w", buffering=1, encoding="utf-8") as h:
            return _main(cfg, h)
    return _main(cfg, sys.stdout)


def _main(cfg, output_file):
    logger.info(cfg.common_eval.path)
    utils.import_user_module(cfg.common)
    models, saved_cfg, task = checkpoint_utils.load_model_ensemble_and_task([cfg.common_eval.path])
    model = models[0].eval()
    if cfg.common.fp16:
        model = model.half()
    use_cuda = torch.cuda.is_available() and not cfg.common.cpu
    if use_cuda:
        model = model.cuda()
    model.prepare_for_inference_(cfg) if hasattr(model, "prepare_for_inference_") else None

    # override the data / noise settings of the training task
    saved_cfg.task.modalities = cfg.override.modalities.split(",")
    task = tasks.setup_task(saved_cfg.task)
    task.cfg.noise_wav = cfg.override.noise_wav
    task.cfg.noise_prob = cfg.override.noise_prob
    task.cfg.noise_snr = cfg.override.noise_snr
    if cfg.override.data is not None:
        task.cfg.data = cfg.override.data
    task.load_dataset(cfg.dataset.gen_subset, task_cfg=saved_cfg.task)

    # Set dictionaries
    if cfg.common.seed is not None:
        np.random.seed(cfg.common.seed)
        utils.set_torch_seed(cfg.common.seed)

    # Load dataset (possibly sharded)
    itr = task.get_batch_iterator(
        dataset=task.dataset(cfg.dataset.gen_subset),
        max_tokens=cfg.dataset.max_tokens,
        max_sentences=cfg.dataset.batch_size,
        max_positions=utils.resolve_max_positions(task.max_positions(), model.max_positions()),
        ignore_invalid_inputs=cfg.dataset.skip_invalid_size_inputs_valid_test,
        required_batch_size_multiple=cfg.dataset.required_batch_size_multiple,
        seed=cfg.common.seed,
        num_shards=cfg.distributed_training.distributed_world_size,
        shard_id=cfg.distributed_training.distributed_rank,
        num_workers=cfg.dataset.num_workers,
        data_buffer_size=cfg.dataset.data_buffer_size,
    ).next_epoch_itr(shuffle=False)
    progress = progress_bar.progress_bar(
        itr,
        log_format=cfg.common.log_format,
        log_interval=cfg.common.log_interval,
        default_log_format=("tqdm" if not cfg.common.no_progress_bar else "simple"),
    )

    gen_timer = StopwatchMeter()
    scores = {"si_snr": [], "si_snri": [], "pesq": []}
    sr = saved_cfg.model.sample_rate
    if cfg.output.compute_pesq:
        from pesq import pesq

    for sample in progress:
        sample = utils.move_to_cuda(sample) if use_cuda else sample
        if "net_input" not in sample:
            continue

        gen_timer.start()
        with torch.no_grad():
            net_output = model(**sample["net_input"])
        est_wav = net_output["est_wav"].float().cpu().numpy()
        num_generated = est_wav.shape[0]
        gen_timer.stop(num_generated)

        ref_wav = sample["target_wav"].float().cpu().numpy()
        mix_wav = sample["net_input"]["mix_wav"].float().cpu().numpy()
        lengths = sample["target_lengths"].cpu().numpy()
        for i, sample_id in enumerate(sample["id"].tolist()):
            n = int(lengths[i])
            est, ref, mix = est_wav[i, :n], ref_wav[i, :n], mix_wav[i, :n]
            s = si_snr(est, ref)
            scores["si_snr"].append(s)
            scores["si_snri"].append(s - si_snr(mix, ref))
            if cfg.output.compute_pesq:
                scores["pesq"].append(pesq(sr, ref, est, "wb"))
            if cfg.output.write_wavs and cfg.output.results_path is not None:
                fid = task.dataset(cfg.dataset.gen_subset).names[sample_id]
                fid = fid[1] if isinstance(fid, tuple) else fid
                out_fn = os.path.join(cfg.output.results_path, "wav", fid.replace("/", "_") + ".wav")
                os.makedirs(os.path.dirname(out_fn), exist_ok=True)
                sf.write(out_fn, est, sr)

    logger.info(
        "Processed {} utterances in {:.1f}s ({:.2f} utt/s)".format(
            gen_timer.n, gen_timer.sum, gen_timer.n / max(gen_timer.sum, 1e-8)
        )
    )
    for k, v in scores.items():
        if len(v) > 0:
            print(f"{k}: {np.mean(v):.3f}", file=output_file)
    if use_cuda:
        logger.info(f"peak device memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")
    return scores


@hydra.main(config_path=config_path, config_name="infer")
def hydra_main(cfg: InferConfig):
    container = OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)
    cfg = OmegaConf.create(container)
    OmegaConf.set_struct(cfg, True)

    if cfg.common.reset_logging:
        reset_logging()

    wer = main(cfg)
    logger.info("finished")
    return wer


def reset_logging():
    root = logging.getLogger()
    for handler in root.handlers:
        root.removeHandler(handler)
    root.setLevel(os.environ.get("LOGLEVEL", "INFO").upper())
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        logging.Formatter(
            fmt="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
            datefmt="%Y-%m-%d %H:%M:%S",
        )
    )
    root.addHandler(handler)


def cli_main() -> None:
    try:
        from hydra._internal.utils import (
            get_args,
        )

        cfg_name = get_args().config_name or "infer"
    except ImportError:
        logger.warning("Failed to get config name from hydra args")
        cfg_name = "infer"

    cs = ConfigStore.instance()
    cs.store(name=cfg_name, node=InferConfig)

    for k in InferConfig.__dataclass_fields__:
        if is_dataclass(InferConfig.__dataclass_fields__[k].type):
            v = InferConfig.__dataclass_fields__[k].default
            cs.store(name=k, node=v)

    hydra_main()  # pylint: disable=no-value-for-parameter


if __name__ == "__main__":
    cli_main()
