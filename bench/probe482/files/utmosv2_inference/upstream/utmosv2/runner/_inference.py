from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from tqdm import tqdm

from utmosv2.utils import calc_metrics, print_metrics

if TYPE_CHECKING:
    import pandas as pd

    from utmosv2._settings._config import Config


def run_inference(
    cfg: Config,
    model: torch.nn.Module,
    test_dataloader: torch.utils.data.DataLoader,
    cycle: int,
    test_data: pd.DataFrame,
    device: torch.device,
) -> np.ndarray:
    """Run test-time-augmented inference; each cycle re-samples random crops."""
    model.eval()
    test_preds = np.zeros(len(test_data))
    if cfg.reproduce:
        test_dataloader.dataset.set_seed(cfg.inference.seed)  # type: ignore
    for c in range(cycle):
        test_preds_c = []
        with torch.no_grad():
            pbar = tqdm(
                test_dataloader,
                total=len(test_dataloader),
                desc=f"  [Inference] ({c + 1}/{cycle})",
            )
            for t in pbar:
                x = t[:-1]
                x = [t.to(device, non_blocking=True) for t in x]
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    output = model(*x).squeeze(1)
                test_preds_c.append(output.float().cpu().numpy())
        test_preds_c = np.concatenate(test_preds_c)
        test_preds += test_preds_c
        if cfg.inference.verbose and c == 0:
            test_data = test_data.copy()
            test_data["pred"] = test_preds_c
            print_metrics(calc_metrics(test_data, test_preds_c))
    test_preds /= cycle
    return test_preds


def show_inference_data(data: pd.DataFrame) -> None:
    print(
        data[[c for c in data.columns if c != "mos"]]
        .rename(columns={"dataset": "predict_dataset"})
        .head()
    )


def save_test_preds(cfg: Config, data: pd.DataFrame, test_preds: np.ndarray) -> None:
    data = data.copy()
    data["mos"] = test_preds
    out = cfg.inference.save_path / f"{cfg.config_name}_[fold{cfg.inference.fold}_tta{cfg.inference.num_tta}_s{cfg.split.seed}]_test_preds.csv"
    data[["utt_id", "mos"]].to_csv(out, index=False)
    print(f"Test predictions are saved to {out}")


def make_submission_file(cfg: Config, data: pd.DataFrame, test_preds: np.ndarray) -> None:
    data = data.copy()
    data["pred"] = test_preds
    out = cfg.inference.save_path / "answer.txt"
    with open(out, "w") as f:
        for utt_id, pred in zip(data["utt_id"], data["pred"]):
            f.write(f"{utt_id},{pred}\n")
    print(f"Submission file is saved to {out}")
