# %%
"""
Fine-tuning a pre-trained scGPT model on a batch-integration task (PBMC 10k).
Runs on a single GPU; set `amp=False` in the config below to train in fp32.
"""
import copy
import gc
import json
import os
from pathlib import Path
import sys
import time
import traceback
from typing import List, Tuple, Dict, Union, Optional
import warnings

import torch
from anndata import AnnData
import scanpy as sc
import scvi
import numpy as np
import wandb
from scipy.sparse import issparse
import matplotlib.pyplot as plt
from torch import nn
from torch.nn import functional as F
from torchtext.vocab import Vocab
from torchtext._torchtext import Vocab as VocabPybind

sys.path.insert(0, "../")
import scgpt as scg
from scgpt.model import TransformerModel, AdversarialDiscriminator
from scgpt.tokenizer import tokenize_and_pad_batch, random_mask_value
from scgpt.loss import masked_mse_loss, masked_relative_error, criterion_neg_log_bernoulli
from scgpt.tokenizer.gene_tokenizer import GeneVocab
from scgpt.preprocess import Preprocessor
from scgpt import SubsetsBatchSampler
from scgpt.utils import set_seed, category_str2int, eval_scib_metrics

sc.set_figure_params(figsize=(4, 4))
os.environ["KMP_WARNINGS"] = "off"
warnings.filterwarnings("ignore")

hyperparameter_defaults = dict(
    seed=42,
    dataset_name="PBMC_10K",
    do_train=True,
    load_model="../save/scGPT_human",
    mask_ratio=0.4,
    epochs=15,
    n_bins=51,
    GEPC=True,  # Masked value prediction for cell embedding
    ecs_thres=0.8,  # Elastic cell similarity objective, 0.0 to 1.0, 0.0 to disable
    dab_weight=1.0,
    lr=1e-4,
    batch_size=64,
    layer_size=128,
    nlayers=4,
    nhead=4,
    dropout=0.2,
    schedule_ratio=0.9,  # ratio of epochs for learning rate schedule
    save_eval_interval=5,
    log_interval=100,
    fast_transformer=True,
    pre_norm=False,
    amp=True,  # Automatic Mixed Precision
)
run = wandb.init(config=hyperparameter_defaults, project="scGPT", reinit=True, settings=wandb.Settings(start_method="fork"))
config = wandb.config
print(config)

set_seed(config.seed)

pad_token = "<pad>"
special_tokens = [pad_token, "<cls>", "<eoc>"]
mask_value = -1
pad_value = -2
n_input_bins = config.n_bins
n_hvg = 1200
max_seq_len = n_hvg + 1
per_seq_batch_sample = True
DSBN = True  # Domain-spec batchnorm
explicit_zero_prob = True  # whether explicit bernoulli for zeros

dataset_name = config.dataset_name
save_dir = Path(f"./save/dev_{dataset_name}-{time.strftime('%b%d-%H-%M')}/")
save_dir.mkdir(parents=True, exist_ok=True)
logger = scg.logger
scg.utils.add_file_handler(logger, save_dir / "run.log")

# %% model
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

vocab = GeneVocab.from_file(Path(config.load_model) / "vocab.json")
ntokens = len(vocab)
model = TransformerModel(
    ntokens, config.layer_size, config.nhead, config.layer_size, config.nlayers,
    vocab=vocab, dropout=config.dropout, pad_token=pad_token, pad_value=pad_value,
    do_mvc=config.GEPC, n_input_bins=n_input_bins, explicit_zero_prob=explicit_zero_prob,
    use_fast_transformer=config.fast_transformer, pre_norm=config.pre_norm,
)
if config.load_model is not None:
    try:
        model.load_state_dict(torch.load(Path(config.load_model) / "best_model.pt"))
        logger.info(f"Loading all model params from {config.load_model}")
    except:
        # only load params that are in the model and match the size
        model_dict = model.state_dict()
        pretrained_dict = torch.load(Path(config.load_model) / "best_model.pt")
        pretrained_dict = {k: v for k, v in pretrained_dict.items() if k in model_dict and v.shape == model_dict[k].shape}
        model_dict.update(pretrained_dict)
        model.load_state_dict(model_dict)

model.to(device)
wandb.watch(model)

criterion = masked_mse_loss
criterion_dab = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, eps=1e-4 if config.amp else 1e-8)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=config.schedule_ratio)

scaler = torch.cuda.amp.GradScaler(enabled=config.amp)


def train(model: nn.Module, loader) -> None:
    model.train()
    total_loss, total_mse = 0.0, 0.0
    log_interval = config.log_interval
    start_time = time.time()

    num_batches = len(loader)
    for batch, batch_data in enumerate(loader):
        input_gene_ids = batch_data["gene_ids"].to(device)
        input_values = batch_data["values"].to(device)
        target_values = batch_data["target_values"].to(device)
        batch_labels = batch_data["batch_labels"].to(device)

        src_key_padding_mask = input_gene_ids.eq(vocab[pad_token])
        with torch.cuda.amp.autocast(enabled=config.amp):
            output_dict = model(input_gene_ids, input_values, src_key_padding_mask=src_key_padding_mask,
                                batch_labels=batch_labels if DSBN else None, MVC=config.GEPC, ECS=config.ecs_thres > 0)
            masked_positions = input_values.eq(mask_value)  # the postions to predict
            loss = loss_mse = criterion(output_dict["mlm_output"], target_values, masked_positions)

        model.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        with warnings.catch_warnings(record=True) as w:
            warnings.filterwarnings("always")
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=False if scaler.is_enabled() else True)
            if len(w) > 0:
                logger.warning(f"Found infinite gradient. This may be caused by the gradient scaler. The current scale is {scaler.get_scale()}.")
        scaler.step(optimizer)
        scaler.update()

        total_loss += loss.item()
        total_mse += loss_mse.item()
        if batch % log_interval == 0 and batch > 0:
            lr = scheduler.get_last_lr()[0]
            ms_per_batch = (time.time() - start_time) * 1000 / log_interval
            cur_loss = total_loss / log_interval
            logger.info(f"| {batch:5d}/{num_batches:5d} batches | lr {lr:05.4f} | ms/batch {ms_per_batch:5.2f} | loss {cur_loss:5.2f} |")
            total_loss, total_mse = 0.0, 0.0
            start_time = time.time()


def evaluate(model: nn.Module, loader) -> float:
    model.eval()
    total_loss = 0.0
    total_num = 0
    with torch.no_grad():
        for batch_data in loader:
            input_gene_ids = batch_data["gene_ids"].to(device)
            input_values = batch_data["values"].to(device)
            target_values = batch_data["target_values"].to(device)
            src_key_padding_mask = input_gene_ids.eq(vocab[pad_token])
            with torch.cuda.amp.autocast(enabled=config.amp, dtype=torch.float16):
                output_dict = model(input_gene_ids, input_values, src_key_padding_mask=src_key_padding_mask)
                output_values = output_dict["mlm_output"]
                masked_positions = input_values.eq(mask_value)
                loss = criterion(output_values, target_values, masked_positions)
            total_loss += loss.item() * len(input_gene_ids)
            total_num += len(input_gene_ids)
    return total_loss / total_num


best_val_loss = float("inf")
for epoch in range(1, config.epochs + 1):
    epoch_start_time = time.time()
    train_loader, valid_loader = scg.prepare_dataloader(config, vocab, per_seq_batch_sample=per_seq_batch_sample)
    if config.do_train:
        train(model, loader=train_loader)
    val_loss = evaluate(model, loader=valid_loader)
    elapsed = time.time() - epoch_start_time
    logger.info(f"| end of epoch {epoch:3d} | time: {elapsed:5.2f}s | valid loss/mse {val_loss:5.4f} |")
    if val_loss < best_val_loss:
        best_val_loss = val_loss
        best_model = copy.deepcopy(model)
        torch.save(best_model.state_dict(), save_dir / "best_model.pt")
    scheduler.step()

# %% inference
gc.collect()
torch.cuda.empty_cache()
run.finish()
wandb.finish()
