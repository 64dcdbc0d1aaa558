"""
OctoModel: thin PyTorch wrapper that bundles the tokenizers, the block transformer and the
readout heads, plus the text processor and dataset statistics needed at inference time.
Mirrors the public API of octo.model.octo_model.OctoModel (JAX).
"""
import json
import logging
import os
from typing import Any, Dict, Optional

import numpy as np
import torch
import torch.nn as nn

from octo_pytorch.model.components.action_heads import DiffusionActionHead, L1ActionHead
from octo_pytorch.model.components.tokenizers import ImageTokenizer, LanguageTokenizer, LowdimObsTokenizer
from octo_pytorch.model.octo_module import OctoTransformer
from octo_pytorch.utils.text_processing import HFTokenizer

logger = logging.getLogger(__name__)

HEAD_REGISTRY = {"diffusion": DiffusionActionHead, "l1": L1ActionHead}


class OctoModel(nn.Module):
    def __init__(self, config: Dict[str, Any], dataset_statistics: Optional[Dict[str, Any]] = None):
        super().__init__()
        self.config = config
        self.dataset_statistics = dataset_statistics
        mcfg = config["model"]

        observation_tokenizers = nn.ModuleDict()
        for name, tcfg in mcfg["observation_tokenizers"].items():
            if tcfg["kind"] == "image":
                observation_tokenizers[name] = ImageTokenizer(**tcfg["kwargs"])
            else:
                observation_tokenizers[name] = LowdimObsTokenizer(**tcfg["kwargs"])
        task_tokenizers = nn.ModuleDict(
            {name: LanguageTokenizer(**tcfg["kwargs"]) for name, tcfg in mcfg["task_tokenizers"].items()}
        )
        self.octo_transformer = OctoTransformer(
            observation_tokenizers=observation_tokenizers,
            task_tokenizers=task_tokenizers,
            readouts=mcfg["readouts"],
            transformer_kwargs=mcfg["transformer_kwargs"],
            token_embedding_size=mcfg["token_embedding_size"],
            max_horizon=mcfg["max_horizon"],
        )
        self.heads = nn.ModuleDict(
            {name: HEAD_REGISTRY[hcfg["kind"]](**hcfg["kwargs"]) for name, hcfg in mcfg["heads"].items()}
        )
        self.text_processor = HFTokenizer(**config["text_processor"]) if config.get("text_processor") else None

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def forward(self, observations, tasks, timestep_pad_mask, train: bool = False):
        return self.octo_transformer(observations, tasks, timestep_pad_mask, train=train)

    # ------------------------------------------------------------------ tasks
    def create_tasks(self, goals: Optional[Dict[str, np.ndarray]] = None, texts: Optional[list] = None):
        assert goals is not None or texts is not None
        tasks = {"pad_mask_dict": {}}
        if goals is not None:
            for k, v in goals.items():
                tasks[k] = torch.as_tensor(v, device=self.device)
                tasks["pad_mask_dict"][k] = torch.ones(v.shape[:1], dtype=torch.bool, device=self.device)
        else:
            batch_size = len(texts)
            for k in self.config["model"]["observation_tokenizers"]:
                if k.startswith("image"):
                    tasks[k] = torch.zeros((batch_size, 256, 256, 3), dtype=torch.uint8, device=self.device)
                    tasks["pad_mask_dict"][k] = torch.zeros(batch_size, dtype=torch.bool, device=self.device)
        if texts is not None:
            assert self.text_processor is not None
            encoded = self.text_processor.encode(texts)
            tasks["language_instruction"] = {k: v.to(self.device) for k, v in encoded.items()}
            tasks["pad_mask_dict"]["language_instruction"] = torch.ones(
                len(texts), dtype=torch.bool, device=self.device
            )
        else:
            batch_size = next(iter(goals.values())).shape[0]
            tasks["pad_mask_dict"]["language_instruction"] = torch.zeros(
                batch_size, dtype=torch.bool, device=self.device
            )
        return tasks

    # --------------------------------------------------------------- sampling
    @torch.no_grad()
    def sample_actions(
        self,
        observations: Dict[str, torch.Tensor],
        tasks: Dict[str, Any],
        unnormalization_statistics: Optional[Dict[str, Any]] = None,
        generator: Optional[torch.Generator] = None,
    ) -> torch.Tensor:
        pad_mask = observations["timestep_pad_mask"]
        transformer_outputs = self.octo_transformer(observations, tasks, pad_mask, train=False)
        actions = self.heads["action"].predict_action(transformer_outputs, generator=generator)
        if unnormalization_statistics is not None:
            mask = torch.as_tensor(
                unnormalization_statistics.get("mask", np.ones_like(unnormalization_statistics["mean"], dtype=bool)),
                device=actions.device,
            )
            mean = torch.as_tensor(unnormalization_statistics["mean"], device=actions.device, dtype=actions.dtype)
            std = torch.as_tensor(unnormalization_statistics["std"], device=actions.device, dtype=actions.dtype)
            actions = torch.where(mask, actions * std + mean, actions)
        return actions

    # ------------------------------------------------------------------- I/O
    @classmethod
    def load_pretrained(cls, checkpoint_path: str, device: str = "cuda") -> "OctoModel":
        """
        checkpoint_path: either a single .pt file produced by `save_pretrained` or a directory
        containing config.json, dataset_statistics.json and model.pt (output of convert_jax_checkpoint.py).
        """
        if os.path.isdir(checkpoint_path):
            with open(os.path.join(checkpoint_path, "config.json")) as f:
                config = json.load(f)
            stats_path = os.path.join(checkpoint_path, "dataset_statistics.json")
            dataset_statistics = None
            if os.path.exists(stats_path):
                with open(stats_path) as f:
                    dataset_statistics = json.load(f)
            state_dict = torch.load(os.path.join(checkpoint_path, "model.pt"), map_location=device)
        else:
            payload = torch.load(checkpoint_path, map_location=device)
            config, dataset_statistics, state_dict = (
                payload["config"],
                payload.get("dataset_statistics"),
                payload["state_dict"],
            )
        model = cls(config, dataset_statistics)
        missing, unexpected = model.load_state_dict(state_dict, strict=False)
        if missing:
            logger.warning(f"missing keys when loading Octo checkpoint: {missing}")
        if unexpected:
            logger.warning(f"unexpected keys when loading Octo checkpoint: {unexpected}")
        model.to(device)
        model.eval()
        return model

    def save_pretrained(self, path: str) -> None:
        state_dict = {k: v.detach().cpu() for k, v in self.state_dict().items()}
        torch.save(
            {"config": self.config, "dataset_statistics": self.dataset_statistics, "state_dict": state_dict},
            path,
        )
