from __future__ import annotations

import logging
import math
import os
import queue
from collections import OrderedDict
from typing import Any, Callable, Iterable, Literal

import numpy as np
import torch
import torch.multiprocessing as mp
from torch import Tensor, device, nn
from tqdm.autonotebook import trange

from .util import batch_to_device, get_device_name, truncate_embeddings

logger = logging.getLogger(__name__)


class SentenceTransformer(nn.Sequential):
    """
    Loads or creates a SentenceTransformer model that can be used to map sentences / text to embeddings.

    Args:
        model_name_or_path (str, optional): If it is a filepath on disc, it loads the model from that path.
        device (str, optional): Device (like "cuda", "cpu", "mps") that should be used for computation. If None,
            checks if a GPU can be used.
    """

    def __init__(self, model_name_or_path: str | None = None, modules: Iterable[nn.Module] | None = None,
                 device: str | None = None, truncate_dim: int | None = None, **kwargs):
        self.truncate_dim = truncate_dim
        super().__init__(OrderedDict([(str(idx), module) for idx, module in enumerate(modules or [])]))
        if device is None:
            device = get_device_name()
            logger.info(f"Use pytorch device_name: {device}")
        self.to(device)
        self.is_hpu_graph_enabled = False

    @property
    def device(self) -> device:
        """
        Get torch.device from module, assuming that the whole module has one device.
        In case there are no PyTorch parameters, fall back to CPU.
        """
        try:
            return next(self.parameters()).device
        except StopIteration:
            return torch.device("cpu")

    def encode(self, sentences: str | list[str], batch_size: int = 32, show_progress_bar: bool | None = None,
               convert_to_numpy: bool = True, convert_to_tensor: bool = False, device: str | None = None,
               normalize_embeddings: bool = False) -> list[Tensor] | np.ndarray | Tensor:
        """
        Computes sentence embeddings.
        """
        if self.device.type == "hpu" and not self.is_hpu_graph_enabled:
            import habana_frameworks.torch as ht

            ht.hpu.wrap_in_hpu_graph(self, disable_tensor_cache=True)
            self.is_hpu_graph_enabled = True

        self.eval()
        input_was_string = False
        if isinstance(sentences, str) or not hasattr(sentences, "__len__"):
            sentences = [sentences]
            input_was_string = True

        if device is None:
            device = self.device
        self.to(device)

        all_embeddings = []
        length_sorted_idx = np.argsort([-len(sen) for sen in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]

        for start_index in trange(0, len(sentences), batch_size, desc="Batches", disable=not show_progress_bar):
            sentences_batch = sentences_sorted[start_index : start_index + batch_size]
            features = self.tokenize(sentences_batch)
            features = batch_to_device(features, device)
            with torch.no_grad():
                out_features = self.forward(features)
                embeddings = truncate_embeddings(out_features["sentence_embedding"], self.truncate_dim)
                embeddings = embeddings.detach()
                if normalize_embeddings:
                    embeddings = torch.nn.functional.normalize(embeddings, p=2, dim=1)
                # fixes for #522 and #487 to avoid oom problems on gpu with large datasets
                if convert_to_numpy:
                    embeddings = embeddings.cpu()
                all_embeddings.extend(embeddings)

        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]
        if convert_to_tensor:
            all_embeddings = torch.stack(all_embeddings) if len(all_embeddings) else torch.Tensor()
        elif convert_to_numpy:
            all_embeddings = np.asarray([emb.float().numpy() for emb in all_embeddings])
        if input_was_string:
            all_embeddings = all_embeddings[0]
        return all_embeddings

    def start_multi_process_pool(self, target_devices: list[str] = None) -> dict[str, Any]:
        """
        Starts a multi-process pool to process the encoding with several independent processes. This method is
        recommended if you want to encode on multiple GPUs or CPUs.

        Args:
            target_devices (List[str], optional): PyTorch target devices, e.g. ["cuda:0", "cuda:1", ...],
                ["cpu", "cpu", "cpu", "cpu"]. If target_devices is None and CUDA is available, then all
                available CUDA devices will be used. If target_devices is None and CUDA is not available,
                then 4 CPU devices will be used.
        """
        if target_devices is None:
            if torch.cuda.is_available():
                target_devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
            else:
                logger.info("CUDA is not available. Starting 4 CPU workers")
                target_devices = ["cpu"] * 4

        logger.info("Start multi-process pool on devices: {}".format(", ".join(map(str, target_devices))))

        self.to("cpu")
        self.share_memory()
        ctx = mp.get_context("spawn")
        input_queue = ctx.Queue()
        output_queue = ctx.Queue()
        processes = []

        for device_id in target_devices:
            p = ctx.Process(
                target=SentenceTransformer._encode_multi_process_worker,
                args=(device_id, self, input_queue, output_queue),
                daemon=True,
            )
            p.start()
            processes.append(p)

        return {"input": input_queue, "output": output_queue, "processes": processes}

    @staticmethod
    def _encode_multi_process_worker(target_device: str, model: SentenceTransformer, input_queue: queue.Queue,
                                     results_queue: queue.Queue) -> None:
        """
        Internal working process to encode sentences in multi-process setup
        """
        while True:
            try:
                chunk_id, batch_size, sentences = input_queue.get()
                embeddings = model.encode(sentences, device=target_device, show_progress_bar=False,
                                          convert_to_numpy=True, batch_size=batch_size)
                results_queue.put([chunk_id, embeddings])
            except queue.Empty:
                break

    def old_fit(self, train_objectives, epochs: int = 1, steps_per_epoch=None, optimizer_class=torch.optim.AdamW,
                optimizer_params: dict[str, object] = {"lr": 2e-5}, max_grad_norm: float = 1, use_amp: bool = False):
        """
        Deprecated training method from before Sentence Transformers v3.0, kept for backwards compatibility.
        """
        if use_amp:
            from torch.cuda.amp import autocast

            scaler = torch.cuda.amp.GradScaler()

        self.to(self.device)
        dataloaders = [dataloader for dataloader, _ in train_objectives]
        loss_models = [loss for _, loss in train_objectives]
        for loss_model in loss_models:
            loss_model.to(self.device)
        optimizers = [optimizer_class(lm.parameters(), **optimizer_params) for lm in loss_models]

        for epoch in trange(epochs, desc="Epoch"):
            data_iterators = [iter(dataloader) for dataloader in dataloaders]
            for _ in trange(steps_per_epoch or min(len(d) for d in dataloaders), desc="Iteration", smoothing=0.05):
                for train_idx, loss_model in enumerate(loss_models):
                    optimizer = optimizers[train_idx]
                    features, labels = next(data_iterators[train_idx])
                    labels = labels.to(self.device)
                    features = list(map(lambda batch: batch_to_device(batch, self.device), features))
                    if use_amp:
                        with autocast():
                            loss_value = loss_model(features, labels)
                        scale_before_step = scaler.get_scale()
                        scaler.scale(loss_value).backward()
                        scaler.unscale_(optimizer)
                        torch.nn.utils.clip_grad_norm_(loss_model.parameters(), max_grad_norm)
                        scaler.step(optimizer)
                        scaler.update()
                    else:
                        loss_value = loss_model(features, labels)
                        loss_value.backward()
                        torch.nn.utils.clip_grad_norm_(loss_model.parameters(), max_grad_norm)
                        optimizer.step()
                    optimizer.zero_grad()
