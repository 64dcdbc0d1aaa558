
import os
import sys
import torch
import random
import shutil
import logging
import traceback
import numpy as np
from collections import OrderedDict


class InfiniteDataLoader(torch.utils.data.DataLoader):
    """DataLoader that never raises StopIteration: when the underlying dataset is
    exhausted it silently restarts, so the training loop can be driven by a fixed
    number of iterations per epoch instead of the length of the dataset."""
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.dataset_iterator = super().__iter__()

    def __iter__(self):
        return self

    def __next__(self):
        try:
            batch = next(self.dataset_iterator)
        except StopIteration:
            self.dataset_iterator = super().__iter__()
            batch = next(self.dataset_iterator)
        return batch


def make_deterministic(seed: int = 0):
    """Seed every RNG we use and force deterministic cudnn kernels (slower).
    seed == -1 leaves everything random."""
    seed = int(seed)
    if seed == -1:
        return
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def setup_logging(output_folder: str, exist_ok: bool = False, console: str = "debug",
                  info_filename: str = "info.log", debug_filename: str = "debug.log"):
    """Root logger writing INFO to info.log, DEBUG to debug.log and (optionally) to the console.
    console: "debug", "info" or None (no console handler, e.g. when a notebook already has one).
    Uncaught exceptions are logged too, so crashed runs keep their traceback in the log files."""
    if not exist_ok and os.path.exists(output_folder):
        raise FileExistsError(f"{output_folder} already exists!")
    os.makedirs(output_folder, exist_ok=True)
    base_formatter = logging.Formatter('%(asctime)s   %(message)s', "%Y-%m-%d %H:%M:%S")
    logger = logging.getLogger('')
    logger.setLevel(logging.DEBUG)

    if info_filename is not None:
        info_file_handler = logging.FileHandler(f'{output_folder}/{info_filename}')
        info_file_handler.setLevel(logging.INFO)
        info_file_handler.setFormatter(base_formatter)
        logger.addHandler(info_file_handler)

    if debug_filename is not None:
        debug_file_handler = logging.FileHandler(f'{output_folder}/{debug_filename}')
        debug_file_handler.setLevel(logging.DEBUG)
        debug_file_handler.setFormatter(base_formatter)
        logger.addHandler(debug_file_handler)

    if console is not None:
        console_handler = logging.StreamHandler()
        if console == "debug":
            console_handler.setLevel(logging.DEBUG)
        if console == "info":
            console_handler.setLevel(logging.INFO)
        console_handler.setFormatter(base_formatter)
        logger.addHandler(console_handler)

    def my_handler(type_, value, tb):
        logger.info("\n" + "".join(traceback.format_exception(type, value, tb)))
        logging.info("Experiment finished (with some errors)")
    sys.excepthook = my_handler


def move_to_device(optimizer: torch.optim.Optimizer, device: str):
    """Optimizer states (e.g. Adam's exp_avg) are not moved by model.to(), so move them by hand."""
    for state in optimizer.state.values():
        for k, v in state.items():
            if torch.is_tensor(v):
                state[k] = v.to(device)


def save_checkpoint(state: dict, is_best: bool, output_folder: str,
                    ckpt_filename: str = "last_checkpoint.pth"):
    # weights are saved from the training device (load with map_location when changing machine)
    checkpoint_path = f"{output_folder}/{ckpt_filename}"
    torch.save(state, checkpoint_path)
    if is_best:
        torch.save(state["model_state_dict"], f"{output_folder}/best_model.pth")


def resume_train(args, output_folder: str, model: torch.nn.Module, model_optimizer: torch.optim.Optimizer,
                 classifiers: list, classifiers_optimizers: list):
    """Restore model, optimizers, classifiers and bookkeeping from last_checkpoint.pth."""
    logging.info(f"Loading checkpoint: {args.resume_train}")
    checkpoint = torch.load(args.resume_train)
    start_epoch_num = checkpoint["epoch_num"]

    model_state_dict = checkpoint["model_state_dict"]
    if list(model_state_dict.keys())[0].startswith("module."):
        # checkpoint saved from a DataParallel-wrapped model
        model_state_dict = OrderedDict({k.replace("module.", ""): v for (k, v) in model_state_dict.items()})
    model.load_state_dict(model_state_dict)

    model_optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    assert args.groups_num == len(classifiers) == len(classifiers_optimizers) == \
        len(checkpoint["classifiers_state_dict"]) == len(checkpoint["optimizers_state_dict"]), \
        (f"{args.groups_num}, {len(classifiers)}, {len(classifiers_optimizers)}, "
         f"{len(checkpoint['classifiers_state_dict'])}, {len(checkpoint['optimizers_state_dict'])}")

    for c, sd in zip(classifiers, checkpoint["classifiers_state_dict"]):
        # the optimizer state must be created on the same device as the parameters
        c = c.to(args.device)
        c.load_state_dict(sd)
    for c, sd in zip(classifiers_optimizers, checkpoint["optimizers_state_dict"]):
        c.load_state_dict(sd)
    for c in classifiers:
        # only the active group's head lives on the GPU during training
        c = c.cpu()

    best_val_recall1 = checkpoint["best_val_recall1"]

    # keep best_model.pth alongside the resumed run
    shutil.copy(args.resume_train.replace("last_checkpoint.pth", "best_model.pth"), output_folder)

    return model, model_optimizer, classifiers, classifiers_optimizers, best_val_recall1, start_epoch_num
