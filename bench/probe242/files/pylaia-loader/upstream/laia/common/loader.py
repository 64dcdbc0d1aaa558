import os
from collections import OrderedDict
from importlib import import_module
from typing import Any, Callable, Dict, Optional, Union

import natsort as ns
import torch

import laia.common.logging as log
from laia.common.types import Module

_logger = log.get_logger(__name__)


class ObjectLoader:
    """Loads a pickled object from disk.

    The object is mapped to ``device`` when it is deserialized. By default
    everything is loaded on the CPU, so that a model trained on a GPU node
    can be inspected on a laptop.
    """

    def __init__(self, filepath: Union[str, os.PathLike], device: str = "cpu"):
        self._filepath = filepath
        self._device = device

    def load(self) -> Optional[Any]:
        try:
            return torch.load(self._filepath, map_location=self._device)
        except FileNotFoundError:
            _logger.info("Could not find the file {}", self._filepath)
        return None


class BasicModelLoader(ObjectLoader):
    def load(self) -> Optional[Module]:
        obj = super().load()
        if obj is None:
            return None
        module, fn = obj["module"], obj["name"]
        args, kwargs = obj.get("args", ()), obj.get("kwargs", {})
        model = getattr(import_module(module), fn)(*args, **kwargs)
        return model


class ModelLoader(BasicModelLoader):
    def __init__(
        self,
        load_path: Union[str, os.PathLike],
        filename: str = "model",
        device: str = "cpu",
    ):
        self._path = os.path.join(load_path, filename)
        super().__init__(self._path, device=device)

    def load_by(self, filepath: Union[str, os.PathLike]) -> Optional[Module]:
        model = self.load()
        if model is None:
            return None
        state_dict = self.get_model_state_dict(filepath)
        model.load_state_dict(state_dict)
        _logger.info("Loaded model {}", filepath)
        return model

    @staticmethod
    def get_model_state_dict(checkpoint: str) -> Dict:
        # checkpoints written by pytorch-lightning wrap the model weights
        # inside "state_dict" and prefix every key with "model."
        ckpt = torch.load(checkpoint, map_location="cpu")
        if "pytorch-lightning_version" in ckpt:
            return OrderedDict(
                (k.replace("model.", "", 1), v) for k, v in ckpt["state_dict"].items()
            )
        return ckpt

    @staticmethod
    def choose_by(path: str, monitor: Optional[str] = None) -> Optional[str]:
        files = [
            os.path.join(path, f) for f in os.listdir(path) if f.endswith(".ckpt")
        ]
        if not files:
            return None
        if monitor is None:
            return ns.natsorted(files)[-1]
        key = lambda f: float(f.split(f"-{monitor}=")[-1].rsplit(".", 1)[0])
        try:
            return min(files, key=key)
        except ValueError:
            _logger.warning(
                "Could not parse monitor {} from the checkpoint names in {}", monitor, path
            )
            return ns.natsorted(files)[-1]

    @staticmethod
    def prepare_checkpoint(checkpoint: str, exp_dirpath: str, monitor: str) -> str:
        if checkpoint:
            checkpoint_path = os.path.join(exp_dirpath, checkpoint)
            found = os.path.isfile(checkpoint_path)
            checkpoint = checkpoint_path if found else checkpoint
        else:
            checkpoint = ModelLoader.choose_by(exp_dirpath, monitor)
        assert checkpoint and os.path.isfile(
            checkpoint
        ), f'Could not find the checkpoint "{checkpoint}"'
        return checkpoint


class StateCheckpointLoader(ObjectLoader):
    """Restores a full training state (model + optimizer + scheduler).

    Used by ``pylaia-htr-train-ctc --train.resume``. The optimizer state is
    moved to the device the training will run on, otherwise the first
    optimizer step after resuming would mix CPU and GPU tensors.
    """

    def __init__(self, filepath: Union[str, os.PathLike], device: Optional[str] = None):
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        super().__init__(filepath, device=device)

    def load_state(self, model, optimizer=None, scheduler=None) -> Dict[str, Any]:
        state = self.load()
        if state is None:
            raise FileNotFoundError(self._filepath)
        model.load_state_dict(state["model"])
        if optimizer is not None and "optimizer" in state:
            optimizer.load_state_dict(state["optimizer"])
            _move_optimizer_state(optimizer, self._device)
        if scheduler is not None and "scheduler" in state:
            scheduler.load_state_dict(state["scheduler"])
        return state


def _move_optimizer_state(optimizer, device) -> None:
    for st in optimizer.state.values():
        for k, v in st.items():
            if torch.is_tensor(v):
                st[k] = v.to(device)


def load_gpu_checkpoint(checkpoint: str, gpu: int = 0) -> Dict:
    """Warm-start helper for checkpoints produced by the GPU cluster.

    The old (pre-lightning) trainer saved tensors that already lived on the
    GPU; loading them straight onto the GPU avoids the host round-trip for
    the large (>100M params) models we use for the Himanis collection.
    """
    ckpt = torch.load(checkpoint, map_location=f"cuda:{gpu}")
    if "model" in ckpt and "optimizer" in ckpt:
        ckpt = ckpt["model"]
    return ckpt


class CheckpointSaver:
    def __init__(self, filepath: Union[str, os.PathLike]):
        self._filepath = filepath

    def save(self, obj: Any, **kwargs) -> str:
        filepath = self._filepath.format(**kwargs) if kwargs else self._filepath
        dirname = os.path.dirname(os.path.normpath(filepath))
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        torch.save(obj, filepath)
        _logger.debug("Saved {}", filepath)
        return filepath


class ModelSaver(CheckpointSaver):
    def __init__(self, save_path: Union[str, os.PathLike], filename: str = "model"):
        super().__init__(os.path.join(save_path, filename))

    def save(self, func: Callable, *args, **kwargs) -> str:
        return super().save(
            {
                "module": func.__module__,
                "name": func.__name__,
                "args": args,
                "kwargs": kwargs,
            }
        )
