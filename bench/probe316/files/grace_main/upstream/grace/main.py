import copy
import importlib
import logging
import os
import time

import hydra
import numpy as np
import torch
from omegaconf import OmegaConf
from torch.utils.data import DataLoader
from tqdm import tqdm

import wandb
from grace import models
from grace.dataset import NQ, SCOTUS, Hallucination, WebText10k, zsRE
from grace.editors import GRACE, GRACE_EMA, GRACE_barebones, MEND, Defer, Finetune, Finetune_EWC, Finetune_Retrain, ROME
from grace.metrics import Accuracy, F1, PPL, is_qa_error, is_acc_error
from grace.utils import tokenize_gpt, tokenize_qa, tokenize_clf

OmegaConf.register_new_resolver("uuid", lambda: 1)
LOG = logging.getLogger(__name__)

EDITORS = {
    "grace": GRACE,
    "grace_ema": GRACE_EMA,
    "grace_barebones": GRACE_barebones,
    "mend": MEND,
    "defer": Defer,
    "ft": Finetune,
    "ft_ewc": Finetune_EWC,
    "ft_retrain": Finetune_Retrain,
    "rome": ROME,
}


def get_device(config):
    """Pick the accelerator: an explicit ``device=cuda:N`` override wins, else the first GPU."""
    if str(config.get("device", "")).startswith("cuda:"):
        return torch.device(config.device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_seed(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


@hydra.main(config_path="config", config_name="config")
def run(config):
    base_dir = hydra.utils.get_original_cwd()
    set_seed(config.seed)
    device = get_device(config)
    config.device = str(device)
    LOG.info(f"Running on {config.device}")

    if config.wandb:
        wandb.init(
            project=config.wandb_project_name,
            config=OmegaConf.to_container(config, resolve=True),
            name=f"{config.editor._name}_{config.experiment.task}_{config.model.name}",
            mode="online" if config.wandb_mode == "online" else "offline",
        )

    # --- Load model and tokenizer ---
    model = models.get_hf_model(config)
    tokenizer = models.get_tokenizer(config)
    model.to(device)
    model.eval()

    # --- Load data ---
    task = config.experiment.task
    if task == "qa":
        upstream = NQ()
        edits = zsRE(split="edit")
        tokenize = tokenize_qa
        metric = F1
        is_error = is_qa_error
    elif task == "hallucination":
        upstream = WebText10k()
        edits = Hallucination(split="edit")
        tokenize = tokenize_gpt
        metric = PPL
        is_error = lambda *args: True  # noqa: E731
    elif task == "scotus":
        upstream = SCOTUS("train")
        edits = SCOTUS("edit")
        tokenize = tokenize_clf
        metric = Accuracy
        is_error = is_acc_error
    else:
        raise ValueError(f"Unknown task {task}")

    edit_loader = DataLoader(edits, batch_size=1, shuffle=True)
    upstream_loader = DataLoader(upstream, batch_size=config.experiment.upstream_bs, shuffle=False)

    # --- Load editor ---
    Editor = EDITORS[config.editor._name]
    editor = Editor(config, model)
    editor = editor.to(device)

    # --- Begin editing ---
    n_edits = 0
    batch_history = []
    all_UP, all_HIS, all_TRR, all_ERR = [], [], [], []
    edit_times = []
    for i, batch in enumerate(tqdm(edit_loader)):
        tokens = tokenize(batch, tokenizer, device)
        if not is_error(editor, tokens):
            continue
        n_edits += 1
        batch_history.append(tokens)

        # --- Perform the edit (synchronise so the timing covers the GPU work) ---
        torch.cuda.synchronize()
        start = time.time()
        editor.edit(config, tokens, batch_history)
        torch.cuda.synchronize(device)
        edit_times.append(time.time() - start)

        # --- Compute and log metrics ---
        log_dict = {}
        with torch.no_grad():
            ERR = metric(editor, tokens)
            TRR = np.mean([metric(editor, tokenize(up, tokenizer, device)) for up in list(upstream_loader)[:config.experiment.n_upstream]])
            HIS = np.mean([metric(editor, past) for past in batch_history])
        all_TRR.append(TRR)
        all_ERR.append(ERR)
        all_HIS.append(HIS)
        log_dict["TRR"] = TRR
        log_dict["ERR"] = ERR
        log_dict["HIS"] = HIS
        log_dict["n_edits"] = n_edits
        log_dict["edit_time"] = edit_times[-1]
        log_dict["gpu_mem_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
        if hasattr(editor, "log_dict"):
            log_dict.update(editor.log_dict)
        if config.wandb:
            wandb.log(log_dict)
        if n_edits >= config.experiment.max_edits:
            break

    summary = {
        "n_edits": n_edits,
        "TRR": float(np.mean(all_TRR)) if all_TRR else None,
        "ERR": float(np.mean(all_ERR)) if all_ERR else None,
        "HIS": float(np.mean(all_HIS)) if all_HIS else None,
        "mean_edit_time": float(np.mean(edit_times)) if edit_times else None,
    }
    LOG.info(summary)
    if config.ckpt:
        ckpt_dir = os.path.join(base_dir, "ckpts", config.editor._name)
        os.makedirs(ckpt_dir, exist_ok=True)
        torch.save(editor.state_dict(), os.path.join(ckpt_dir, f"{task}_{config.model.name}.pt"))
    if config.wandb:
        wandb.run.summary.update(summary)
        wandb.finish()


if __name__ == "__main__":
    run()
