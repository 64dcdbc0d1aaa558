import logging
import os
import pickle
import random
import subprocess

import numpy as np
import torch
import torchvision
from datasets import load_dataset as hf_load_dataset
from torch.utils.data import Dataset
from torchvision import transforms

from dataset.utils import TabularDataset, TextDataset, load_agnews


def check_configs(configs: dict):
    """
    Check if the configs are valid.

    Args:
        configs (dict): Configuration dictionary.
    """
    privacy_game = configs["audit"]["privacy_game"]
    supported_games = ["privacy_loss_model"]
    if privacy_game not in supported_games:
        raise NotImplementedError(
            f"{privacy_game} is not supported. Please choose from {supported_games}"
        )
    mia_algorithm = configs["audit"]["algorithm"]
    num_models = configs["audit"]["num_ref_models"]
    if mia_algorithm == "RMIA" and (num_models is None or num_models < 1):
        raise ValueError("The game should have at least 2 models")

    model_name = configs["train"]["model_name"]
    if model_name == "speedyresnet" and not configs["train"]["device"].startswith("cuda"):
        raise ValueError("speedyresnet only runs on a CUDA device")


def setup_log(report_dir: str, name: str, save_file: bool) -> logging.Logger:
    """
    Set up a logger with the specified name.

    Args:
        report_dir (str): Folder name of the report.
        name (str): Name of the logger.
        save_file (bool): Flag about whether to save to file.

    Returns:
        logging.Logger: Configured logger.
    """
    my_logger = logging.getLogger(name)
    my_logger.setLevel(logging.INFO)

    if save_file:
        log_format = logging.Formatter("%(asctime)s %(levelname)-8s %(message)s")
        filename = f"{report_dir}/log_{name}.log"

        if not os.path.exists(filename):
            with open(filename, "w") as f:
                pass

        log_handler = logging.FileHandler(filename, mode="a")
        log_handler.setLevel(logging.INFO)
        log_handler.setFormatter(log_format)
        my_logger.addHandler(log_handler)

    return my_logger


def initialize_seeds(seed: int):
    """
    Initialize seeds for reproducibility.

    Args:
        seed (int): Seed value for random number generators.
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)


def create_directories(paths: dict):
    """
    Create directories if they do not exist.

    Args:
        paths (dict): Dictionary of directory paths to create.
    """
    for path in paths.values():
        if not os.path.exists(path):
            os.makedirs(path)


def get_free_gpu_memory():
    """Returns the free memory (MiB) of every visible GPU, as reported by nvidia-smi.

    Used to warn users before launching many reference-model trainings in parallel.
    """
    try:
        output = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=memory.free", "--format=csv,noheader,nounits"],
            encoding="utf-8",
        )
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []
    return [int(x) for x in output.strip().split("\n") if x.strip()]


class InfiniteRepeatDataset(Dataset):
    """Wraps a dataset so that a DataLoader can keep sampling from it."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        return self.dataset[idx % len(self.dataset)]


def load_dataset(configs: dict, data_dir: str, logger: logging.Logger):
    """
    Load the dataset based on the configuration.

    Args:
        configs (dict): Configuration dictionary.
        data_dir (str): Directory where the data is stored.
        logger (logging.Logger): Logger object for logging information.

    Returns:
        Tuple of the auditing dataset and the population dataset.
    """
    dataset_name = configs["data"]["dataset"]
    path = f"{data_dir}/{dataset_name}"

    if os.path.exists(f"{path}.pkl"):
        with open(f"{path}.pkl", "rb") as file:
            all_data = pickle.load(file)
        logger.info(f"Load data from {path}.pkl")
        if os.path.exists(f"{path}_population.pkl"):
            with open(f"{path}_population.pkl", "rb") as file:
                population = pickle.load(file)
        else:
            population = None
        return all_data, population

    if dataset_name == "cifar10":
        transform = transforms.Compose(
            [
                transforms.ToTensor(),
                transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
            ]
        )
        train_data = torchvision.datasets.CIFAR10(
            root=path, train=True, download=True, transform=transform
        )
        test_data = torchvision.datasets.CIFAR10(
            root=path, train=False, download=True, transform=transform
        )
        x = np.concatenate([train_data.data, test_data.data], axis=0)
        y = np.concatenate([train_data.targets, test_data.targets], axis=0)
        all_data = train_data
        all_data.data = x
        all_data.targets = y
        population = None
    elif dataset_name == "cifar100":
        transform = transforms.Compose(
            [
                transforms.ToTensor(),
                transforms.Normalize((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
            ]
        )
        train_data = torchvision.datasets.CIFAR100(
            root=path, train=True, download=True, transform=transform
        )
        test_data = torchvision.datasets.CIFAR100(
            root=path, train=False, download=True, transform=transform
        )
        all_data = train_data
        all_data.data = np.concatenate([train_data.data, test_data.data], axis=0)
        all_data.targets = np.concatenate(
            [train_data.targets, test_data.targets], axis=0
        )
        population = None
    elif dataset_name == "purchase100":
        if not os.path.exists(f"{data_dir}/dataset_purchase"):
            raise FileNotFoundError(
                f"{data_dir}/dataset_purchase not found, please download it first"
            )
        df = np.loadtxt(f"{data_dir}/dataset_purchase", delimiter=",")
        all_data = TabularDataset(df[:, 1:].astype(np.float32), df[:, 0].astype(np.int64) - 1)
        population = None
    elif dataset_name == "agnews":
        tokenizer = configs["data"].get("tokenizer")
        if tokenizer is None:
            raise ValueError("tokenizer not specified in configs[data]")
        all_data = load_agnews(tokenizer=tokenizer)
        population = None
    else:
        raise NotImplementedError(f"{dataset_name} is not implemented")

    with open(f"{path}.pkl", "wb") as file:
        pickle.dump(all_data, file)
    logger.info(f"Save data to {path}.pkl")
    return all_data, population
