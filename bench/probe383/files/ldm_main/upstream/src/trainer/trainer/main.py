import logging
import os
import time
from pathlib import Path

import hydra
import torch
import torch.nn as nn
from fsspec.core import url_to_fs
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from trainer.data.util import compose_transform, sparse_to_dense, split_num_samples
from trainer.fid.model import load_fidnet_v3
from trainer.global_configs import DATASET_DIR, FID_WEIGHT_DIR, JOB_DIR
from trainer.helpers.layout_tokenizer import LayoutSequenceTokenizer
from trainer.helpers.metric import compute_generative_model_scores
from trainer.helpers.sampling import register_sampling_config
from trainer.helpers.scheduler import ReduceLROnPlateauWithWarmup
from trainer.helpers.util import set_seed
from trainer.helpers.visualization import save_image
from trainer.hydra_configs import DataConfig, TrainConfig

logger = logging.getLogger(__name__)

# numbers of model forward+backward between two evaluations
SAVE_INTERVAL = 50


def _to(inputs, device):
    """
    Move every tensor in a (possibly nested) dict to the target device.
    """
    outputs = {}
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor):
            outputs[k] = v.to(device)
        elif isinstance(v, dict):
            outputs[k] = _to(v, device)
        else:
            outputs[k] = v
    return outputs


# if config is not used by hydra.utils.instantiate, define schema to validate args
cs = hydra.core.config_store.ConfigStore.instance()
cs.store(group="data", name="base_data_default", node=DataConfig)
cs.store(group="training", name="base_training_default", node=TrainConfig)
register_sampling_config(cs)


@hydra.main(version_base="1.2", config_path="../../../config", config_name="main")
def main(cfg: DictConfig):
    logger.info(cfg)

    fs, _ = url_to_fs(cfg.job_dir)
    if not fs.exists(cfg.job_dir):
        fs.mkdir(cfg.job_dir)

    with fs.open(os.path.join(cfg.job_dir, "config.yaml"), "wb") as file_obj:
        file_obj.write(OmegaConf.to_yaml(cfg).encode("utf-8"))

    if cfg.debug:
        cfg.data.num_workers = 1
        cfg.training.epochs = 2
        cfg.data.batch_size = 64

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    set_seed(cfg.seed)

    device = torch.device(cfg.device)
    writer = SummaryWriter(os.path.join(cfg.job_dir, "logs"))

    transform = compose_transform(cfg.data.transforms)
    train_dataset = instantiate(cfg.dataset)(split="train", transform=transform)
    val_dataset = instantiate(cfg.dataset)(split="val", transform=transform)

    kwargs = {
        "batch_size": cfg.data.batch_size,
        "num_workers": cfg.data.num_workers,
        "pin_memory": True,
    }
    train_dataloader = DataLoader(train_dataset, shuffle=True, **kwargs)
    val_dataloader = DataLoader(val_dataset, shuffle=False, **kwargs)

    tokenizer = LayoutSequenceTokenizer(
        data_cfg=cfg.data, dataset_cfg=OmegaConf.to_container(cfg.dataset)
    )
    model = instantiate(cfg.model)(
        backbone_cfg=cfg.backbone, tokenizer=tokenizer
    )
    model = model.to(device)

    optim_groups = model.optim_groups(cfg.optimizer.weight_decay)
    optimizer = instantiate(cfg.optimizer)(optim_groups)
    scheduler = instantiate(cfg.scheduler)(optimizer=optimizer)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.training.use_amp)

    fid_model = load_fidnet_v3(train_dataset, FID_WEIGHT_DIR, device)

    best_val_loss = float("Inf")
    for epoch in range(cfg.training.epochs):
        model.train()
        start_time = time.time()
        train_loss = {}
        for step, batch in enumerate(train_dataloader):
            batch = batch.to(device)
            with torch.cuda.amp.autocast(enabled=cfg.training.use_amp):
                outputs, losses = model(batch)
                loss = sum(losses.values())

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if cfg.training.grad_norm_clip > 0.0:
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), cfg.training.grad_norm_clip)
            scaler.step(optimizer)
            scaler.update()

            for (k, v) in losses.items():
                train_loss[k] = train_loss.get(k, 0.0) + float(v.item())

            if step % cfg.training.log_interval == 0:
                logger.info(
                    f"Epoch {epoch} step {step}: "
                    + " ".join([f"{k}: {v / (step + 1):.4f}" for k, v in train_loss.items()])
                )

        train_loss = {k: v / len(train_dataloader) for (k, v) in train_loss.items()}
        duration = time.time() - start_time

        # validation
        model.eval()
        val_loss = {}
        with torch.no_grad():
            for batch in val_dataloader:
                batch = batch.to(device)
                with torch.cuda.amp.autocast(cfg.training.use_amp):
                    _, losses = model(batch)
                for (k, v) in losses.items():
                    val_loss[k] = val_loss.get(k, 0.0) + float(v.item())
        val_loss = {k: v / len(val_dataloader) for (k, v) in val_loss.items()}
        total_val_loss = sum(val_loss.values())

        if isinstance(scheduler, ReduceLROnPlateauWithWarmup):
            scheduler.step(total_val_loss)
        else:
            scheduler.step()

        logger.info(
            f"Epoch {epoch}/{cfg.training.epochs}: elapsed={duration:.1f}s "
            f"train={sum(train_loss.values()):.4f} val={total_val_loss:.4f} "
            f"peak_mem={torch.cuda.max_memory_allocated() / 1024 ** 3:.2f}GB"
        )
        for k, v in train_loss.items():
            writer.add_scalar(f"train/{k}", v, epoch + 1)
        for k, v in val_loss.items():
            writer.add_scalar(f"val/{k}", v, epoch + 1)

        if total_val_loss < best_val_loss:
            best_val_loss = total_val_loss
            with fs.open(os.path.join(cfg.job_dir, "best.pt"), "wb") as file_obj:
                torch.save(model.state_dict(), file_obj)

        if (epoch + 1) % cfg.training.sample_interval == 0:
            # sampling a few layouts for visual inspection
            model.eval()
            batch = next(iter(val_dataloader)).to(device)
            with torch.no_grad():
                layouts = model.sample(batch_size=cfg.data.batch_size, cond=None, sampling_cfg=cfg.sampling)
            save_image(
                layouts["bbox"], layouts["label"], layouts["mask"], val_dataset.colors,
                os.path.join(cfg.job_dir, f"samples_{epoch + 1:04d}.png"),
            )
            torch.cuda.empty_cache()

    with fs.open(os.path.join(cfg.job_dir, "final.pt"), "wb") as file_obj:
        torch.save(model.state_dict(), file_obj)
    writer.close()


if __name__ == "__main__":
    main()
