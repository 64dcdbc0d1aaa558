import argparse
import os
import pathlib
import random
import sys
from datetime import datetime

import numpy as np
import torch
import torch.distributed as dist
import wandb
import yaml
from munch import munchify, unmunchify

from experiments.segmentation import Segmentation
from experiments.generation import Generation

eps = 1e-10


def timehash():
    t = datetime.now()
    return f"{t.year:04d}{t.month:02d}{t.day:02d}-{t.hour:02d}{t.minute:02d}{t.second:02d}"


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)


def setup_distributed(config):
    """torchrun sets RANK / LOCAL_RANK / WORLD_SIZE; a plain `python main.py` runs on one GPU."""
    if "RANK" not in os.environ:
        config.distributed = False
        config.local_rank = 0
        config.world_size = 1
        return torch.device("cuda:0")

    config.distributed = True
    config.rank = int(os.environ["RANK"])
    config.local_rank = int(os.environ["LOCAL_RANK"])
    config.world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(config.local_rank)
    dist.init_process_group(backend=config.trainer.get("dist_backend", "nccl"), init_method="env://",
                            world_size=config.world_size, rank=config.rank)
    dist.barrier()
    return torch.device(f"cuda:{config.local_rank}")


def is_main(config):
    return not config.distributed or config.rank == 0


if __name__ == "__main__":
    arg_parser = argparse.ArgumentParser()
    arg_parser.add_argument("--config", default="configs/gen-training-unet-trainval.yaml", help="the config file used to run the experiment")
    arg_parser.add_argument("--verbose", action="store_true", help="verbose mode")
    arg_parser.add_argument("--competitor", action="store_true", help="competitor mode")
    arg_parser.add_argument("--test", action="store_true", help="evaluate only")
    arg_parser.add_argument("--reload", action="store_true", help="reload the last checkpoint of the experiment")
    args = arg_parser.parse_args()

    # check if the config files exists
    if not os.path.exists(args.config):
        print("Config file does not exist: {}".format(args.config))
        raise SystemExit

    # Munchify the dict to access entries with both dot notation and ['name']
    config = yaml.load(open(args.config, "r"), yaml.FullLoader)
    config = munchify(config)

    device = setup_distributed(config)
    config.device = str(device)

    # Setup to be deterministic
    set_seed(config.seed)
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

    if is_main(config):
        print(f"running on {torch.cuda.device_count()} GPU(s): {torch.cuda.get_device_name(device)}")

    # start wandb
    wandb.init(
        project="alveolar_canal",
        entity="maxillo",
        config=unmunchify(config),
        mode="online" if is_main(config) and config.get("wandb", True) else "disabled",
    )

    # Check if project_dir exists
    if not os.path.exists(config.project_dir):
        print("Project_dir does not exist: {}".format(config.project_dir))
        raise SystemExit

    # check if preprocessing is set and file exists
    if config.data_loader.preprocessing is None:
        config.data_loader.preprocessing = ""
    if config.data_loader.augmentations is None:
        config.data_loader.augmentations = ""

    if args.reload:
        config.trainer.reload = True

    experiment_name = config.title + "_" + timehash()
    config.project_dir = os.path.join(config.project_dir, experiment_name)
    if is_main(config):
        pathlib.Path(os.path.join(config.project_dir, "checkpoints")).mkdir(parents=True, exist_ok=True)
        pathlib.Path(os.path.join(config.project_dir, "files")).mkdir(parents=True, exist_ok=True)
        yaml.dump(unmunchify(config), open(os.path.join(config.project_dir, "config.yaml"), "w"))

    if config.experiment.name == "Segmentation":
        experiment = Segmentation(config, device, args.verbose)
    elif config.experiment.name == "Generation":
        experiment = Generation(config, device, args.verbose)
    else:
        raise ValueError(f"unknown experiment {config.experiment.name}")

    if args.test:
        test_iou, test_dice = experiment.test(phase="Test")
        if is_main(config):
            print(f"Test results: IoU {test_iou:.4f}, Dice {test_dice:.4f}")
        sys.exit(0)

    try:
        for epoch in range(experiment.epoch, config.trainer.epochs):
            train_loss, train_iou, train_dice = experiment.train()
            if is_main(config):
                wandb.log({"Train/Loss": train_loss, "Train/IoU": train_iou, "Train/Dice": train_dice,
                           "lr": experiment.optimizer.param_groups[0]["lr"]}, step=epoch)

            val_iou, val_dice = experiment.test(phase="Validation")
            if is_main(config):
                wandb.log({"Validation/IoU": val_iou, "Validation/Dice": val_dice}, step=epoch)

            if experiment.scheduler is not None:
                if config.lr_scheduler.name == "Plateau":
                    experiment.scheduler.step(val_iou)
                else:
                    experiment.scheduler.step()

            if is_main(config):
                if val_iou > experiment.best_metric:
                    experiment.best_metric = val_iou
                    experiment.save("best.pth")
                experiment.save("last.pth")
                print(f"Epoch {epoch}: train IoU {train_iou:.4f} val IoU {val_iou:.4f} "
                      f"(max mem {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB)")

            experiment.epoch += 1
    except KeyboardInterrupt:
        print("interrupted, saving the last checkpoint")
        if is_main(config):
            experiment.save("interrupted.pth")

    if config.distributed:
        dist.destroy_process_group()
