import logging
import os
import platform

import hydra
import omegaconf
import pytorch_lightning as pl
import torch
from pytorch_lightning.loggers import TensorBoardLogger

torch.backends.cudnn.enabled = True
torch.backends.cudnn.benchmark = True

log = logging.getLogger(__name__)


def hydra_params_to_dotdict(hparams):
    def _to_dot_dict(cfg):
        res = {}
        for k, v in cfg.items():
            if isinstance(v, omegaconf.DictConfig):
                res.update(
                    {k + "." + subk: subv for subk, subv in _to_dot_dict(v).items()}
                )
            elif isinstance(v, (str, int, float, bool)):
                res[k] = v

        return res

    return _to_dot_dict(hparams)


def _log_environment(cfg):
    """Print what we are about to train on; handy when comparing runs across machines."""
    log.info("python %s on %s", platform.python_version(), platform.node())
    log.info("torch %s, lightning %s", torch.__version__, pl.__version__)
    if len(cfg.gpus) > torch.cuda.device_count():
        raise RuntimeError(
            "config asks for gpus={} but only {} visible".format(
                list(cfg.gpus), torch.cuda.device_count()
            )
        )
    for idx in cfg.gpus:
        log.info("  gpu %d: %s", idx, torch.cuda.get_device_name(idx))


def _make_callbacks(cfg):
    early_stop_callback = pl.callbacks.EarlyStopping(patience=5)
    checkpoint_callback = pl.callbacks.ModelCheckpoint(
        monitor="val_acc",
        mode="max",
        save_top_k=2,
        filepath=os.path.join(
            cfg.task_model.name, "{epoch}-{val_loss:.2f}-{val_acc:.3f}"
        ),
        verbose=True,
    )
    return early_stop_callback, checkpoint_callback


@hydra.main("config/config.yaml")
def main(cfg):
    log.info(cfg.pretty())
    _log_environment(cfg)

    pl.seed_everything(cfg.get("seed", 0))

    model = hydra.utils.instantiate(cfg.task_model, hydra_params_to_dotdict(cfg))

    early_stop_callback, checkpoint_callback = _make_callbacks(cfg)
    logger = TensorBoardLogger("lightning_logs", name=cfg.task_model.name)

    # "dp" keeps the whole SA/FP stack on one process and splits the batch over the
    # listed devices; "ddp" spawns one process per device.
    trainer = pl.Trainer(
        gpus=list(cfg.gpus),
        max_epochs=cfg.epochs,
        early_stop_callback=early_stop_callback,
        checkpoint_callback=checkpoint_callback,
        distributed_backend=cfg.get("distrib_backend", "dp"),
        logger=logger,
        gradient_clip_val=cfg.get("grad_clip", 0.0),
        progress_bar_refresh_rate=20,
    )

    trainer.fit(model)
    trainer.test(model)


def _sanity_check_ops():
    """Fail early if pointnet2_ops was built for the wrong toolkit."""
    from pointnet2_ops import pointnet2_utils

    xyz = torch.rand(2, 128, 3).cuda()
    idx = pointnet2_utils.furthest_point_sample(xyz, 16)
    assert idx.shape == (2, 16), idx.shape
    log.info("pointnet2_ops OK (fps on %s)", xyz.device)


if __name__ == "__main__":
    if os.environ.get("PN2_CHECK_OPS", "1") == "1":
        _sanity_check_ops()
    main()
