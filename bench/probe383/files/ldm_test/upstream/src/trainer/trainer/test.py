import argparse
import logging
import os
import pickle
import random
import time
from pathlib import Path

import numpy as np
import torch
from fsspec.core import url_to_fs
from hydra.utils import instantiate
from omegaconf import OmegaConf
from torch.utils.data import DataLoader
from trainer.data.util import compose_transform, sparse_to_dense, split_num_samples
from trainer.fid.model import load_fidnet_v3
from trainer.global_configs import FID_WEIGHT_DIR
from trainer.helpers.layout_tokenizer import LayoutSequenceTokenizer
from trainer.helpers.metric import compute_generative_model_scores
from trainer.helpers.sampling import SAMPLING_CONFIG_DICT
from trainer.helpers.task import get_cond, filter_canvas
from trainer.helpers.util import load_config, set_seed

logger = logging.getLogger(__name__)
logging.basicConfig(level=logging.INFO)

SIZE = (360, 240)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--job_dir", required=True)
    parser.add_argument("--result_dir", default="tmp/results")
    parser.add_argument("--dataset_dir", default=None)
    parser.add_argument(
        "--cond",
        type=str,
        default="unconditional",
        choices=["unconditional", "c", "cwh", "partial", "refinement", "relation"],
    )
    parser.add_argument("--num_run", type=int, default=1, help="number of runs")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--debug_num_samples", type=int, default=-1)
    parser.add_argument("--sampling", type=str, default="random", choices=SAMPLING_CONFIG_DICT.keys())
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top_k", type=int, default=5)
    parser.add_argument("--num_timesteps", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    fs, _ = url_to_fs(args.job_dir)
    config_path = os.path.join(args.job_dir, "config.yaml")
    train_cfg = OmegaConf.load(config_path)
    if args.dataset_dir is not None:
        train_cfg.dataset.dir = args.dataset_dir

    sampling_cfg = OmegaConf.structured(SAMPLING_CONFIG_DICT[args.sampling])
    OmegaConf.set_struct(sampling_cfg, False)
    if "temperature" in sampling_cfg:
        sampling_cfg.temperature = args.temperature
    if "top_k" in sampling_cfg:
        sampling_cfg.top_k = args.top_k
    if args.num_timesteps is not None:
        sampling_cfg.num_timesteps = args.num_timesteps
    logger.info(f"sampling_cfg={sampling_cfg}")

    device = torch.device(train_cfg.device)
    logger.info(f"Running on {torch.cuda.get_device_name()} (job={args.job_dir})")

    transform = compose_transform(train_cfg.data.transforms)
    test_dataset = instantiate(train_cfg.dataset)(split="test", transform=transform)
    if args.debug:
        test_dataset = test_dataset[: args.debug_num_samples]
    dataloader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=False)

    tokenizer = LayoutSequenceTokenizer(
        data_cfg=train_cfg.data, dataset_cfg=OmegaConf.to_container(train_cfg.dataset)
    )
    model = instantiate(train_cfg.model)(
        backbone_cfg=train_cfg.backbone, tokenizer=tokenizer
    )
    model_path = os.path.join(args.job_dir, "best.pt")
    with fs.open(model_path, "rb") as file_obj:
        model.load_state_dict(torch.load(file_obj, map_location=device))
    model = model.to(device)
    model.eval()

    fid_model = load_fidnet_v3(test_dataset, FID_WEIGHT_DIR, device)

    key = "_".join([f"{k}_{v}" for (k, v) in sampling_cfg.items()])
    result_dir = os.path.join(args.result_dir, f"{args.cond}_{key}")
    if not fs.exists(result_dir):
        fs.mkdir(result_dir)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    scores_all = []
    for run in range(args.num_run):
        set_seed(args.seed + run)
        results, elapsed = [], 0.0
        for batch in dataloader:
            batch = batch.to(device)
            cond = get_cond(
                batch=batch,
                tokenizer=tokenizer,
                cond_type=args.cond,
                model_type=type(model).__name__,
            )
            start.record()
            with torch.no_grad():
                outputs = model.sample(
                    batch_size=batch.num_graphs if hasattr(batch, "num_graphs") else len(batch),
                    cond=cond,
                    sampling_cfg=sampling_cfg,
                )
            end.record()
            torch.cuda.synchronize()
            elapsed += start.elapsed_time(end) / 1000.0

            for b in range(outputs["bbox"].size(0)):
                mask = outputs["mask"][b]
                results.append(
                    (
                        outputs["bbox"][b][mask].cpu().numpy(),
                        outputs["label"][b][mask].cpu().numpy(),
                    )
                )
        logger.info(f"run {run}: {len(results)} layouts in {elapsed:.2f}s "
                    f"({1000.0 * elapsed / max(len(results), 1):.2f} ms/layout)")

        with fs.open(os.path.join(result_dir, f"{run}.pkl"), "wb") as file_obj:
            pickle.dump({"results": results, "elapsed": elapsed}, file_obj)

        scores = compute_generative_model_scores(
            feats_real=None, feats_fake=None, fid_model=fid_model,
            layouts_real=None, layouts_fake=results, dataset=test_dataset,
        ) if False else {}
        scores_all.append(scores)

    logger.info(f"peak memory: {torch.cuda.max_memory_reserved() / 1024 ** 2:.0f} MiB")
    logger.info(f"results written to {result_dir}")


if __name__ == "__main__":
    main()
