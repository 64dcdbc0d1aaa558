from __future__ import annotations

import abc
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch
from torch.cuda.amp import autocast
from tqdm import tqdm

from utmosv2.dataset._schema import DatasetSchema
from utmosv2.utils import get_dataset


class UTMOSv2ModelMixin(abc.ABC):
    """
    Abstract mixin for UTMOSv2 models, defining the `predict` entry point that
    accepts a single file, a directory, or a list of files.
    """

    @property
    @abc.abstractmethod
    def _cfg(self) -> SimpleNamespace:
        pass

    @abc.abstractmethod
    def eval(self) -> "UTMOSv2ModelMixin":
        pass

    @abc.abstractmethod
    def to(self, device: str | torch.device) -> "UTMOSv2ModelMixin":
        pass

    @abc.abstractmethod
    def __call__(self, *args, **kwargs) -> torch.Tensor:
        pass

    def predict(
        self,
        *,
        input_path: Path | str | None = None,
        input_dir: Path | str | None = None,
        val_list: list[str] | None = None,
        val_list_path: Path | str | None = None,
        predict_dataset: str = "sarulab",
        device: str | torch.device = "cuda:0" if torch.cuda.is_available() else "cpu",
        num_workers: int = 4,
        batch_size: int = 16,
        num_repetitions: int = 1,
        remove_silent_section: bool = True,
        verbose: bool = True,
    ) -> float | list[dict[str, str | float]]:
        """
        Predict the MOS (Mean Opinion Score) of audio files.

        Args:
            input_path (Path | str | None): Path to a single audio file (`.wav`) to predict MOS.
                Either `input_path` or `input_dir` must be provided, but not both.
            input_dir (Path | str | None): Path to a directory of `.wav` files to predict MOS.
            val_list (list[str] | None): List of file names (without extension) to restrict prediction to.
            val_list_path (Path | str | None): Path to a text file containing a list of file names.
            predict_dataset (str): Name of the dataset to associate with the prediction. Defaults to "sarulab".
            device (str | torch.device): Device to use for prediction. Defaults to "cuda:0" if available, otherwise "cpu".
            num_workers (int): Number of workers for data loading. Defaults to 4.
            batch_size (int): Batch size for the data loader. Defaults to 16.
            num_repetitions (int): Number of prediction repetitions to average results. Defaults to 1.
            remove_silent_section (bool): Whether to remove silent sections from the audio. Defaults to True.
            verbose (bool): Whether to display progress during prediction. Defaults to True.

        Returns:
            float: If `input_path` is specified, returns the predicted MOS.
            list[dict[str, str | float]]: If `input_dir` is specified, returns a list of dicts
                containing file paths and predicted MOS scores.
        """
        data = self._prepare_data(input_path, input_dir, val_list, val_list_path, predict_dataset)
        dataset = get_dataset(self._cfg, data, self._cfg.phase)
        dataloader = torch.utils.data.DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=False,
            num_workers=num_workers,
            pin_memory=True,
        )

        pred = self._predict_impl(dataloader, num_repetitions, device, verbose)

        if input_path is not None:
            return float(pred[0])
        else:
            return [
                {"file_path": d.file_path.as_posix(), "predicted_mos": float(p)}
                for d, p in zip(data, pred)
            ]

    def _prepare_data(self, input_path, input_dir, val_list, val_list_path, predict_dataset):
        if input_path is None and input_dir is None:
            raise ValueError("Either `input_path` or `input_dir` must be provided.")
        if input_path is not None and input_dir is not None:
            raise ValueError("Only one of `input_path` or `input_dir` must be provided.")
        if input_path is not None:
            input_path = Path(input_path)
            if not input_path.exists():
                raise FileNotFoundError(f"File not found: {input_path}")
            return [DatasetSchema(file_path=input_path, dataset=predict_dataset)]
        input_dir = Path(input_dir)
        res = sorted(input_dir.glob("*.wav"))
        if val_list_path is not None:
            with open(val_list_path, "r") as f:
                val_list = [line.strip() for line in f]
        if val_list is not None:
            keep = {v.replace(".wav", "") for v in val_list}
            res = [p for p in res if p.stem in keep]
        return [DatasetSchema(file_path=p, dataset=predict_dataset) for p in res]

    def _predict_impl(
        self,
        dataloader: torch.utils.data.DataLoader,
        num_repetitions: int,
        device: str | torch.device,
        verbose: bool,
    ) -> np.ndarray:
        self.eval().to(device)
        res = 0.0
        for i in range(num_repetitions):
            pred = []
            pbar = tqdm(
                dataloader,
                disable=not verbose,
                total=len(dataloader),
                desc=f"Predicting [{i + 1}/{num_repetitions}]: ",
            )
            with torch.no_grad():
                for t in pbar:
                    x = t[:-1]
                    x = [t.to(device, non_blocking=True) for t in x]
                    with autocast():
                        output = self.__call__(*x).squeeze(1)
                    pred.append(output.cpu().numpy())
            res += np.concatenate(pred) / num_repetitions
        return res
