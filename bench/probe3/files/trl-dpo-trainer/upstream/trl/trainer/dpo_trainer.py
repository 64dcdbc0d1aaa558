# Copyright 2023 The HuggingFace Team. All rights reserved.
"""Direct Preference Optimisation trainer (condensed)."""
import random
import warnings
from contextlib import contextmanager, nullcontext
from copy import deepcopy
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate.utils import is_deepspeed_available, tqdm
from torch.utils.data import DataLoader
from transformers import PreTrainedModel, Trainer

from ..models import create_reference_model
from .utils import DPODataCollatorWithPadding, pad_to_length, peft_module_casting_to_bf16

if is_deepspeed_available():
    import deepspeed


class DPOTrainer(Trainer):
    _tag_names = ["trl", "dpo"]

    def __init__(self, model=None, ref_model=None, args=None, data_collator=None, train_dataset=None,
                 tokenizer=None, peft_config=None, beta: float = 0.1, label_smoothing: float = 0.0,
                 loss_type: Literal["sigmoid", "hinge", "ipo"] = "sigmoid", max_length: int = 1024,
                 precompute_ref_log_probs: bool = False, **kwargs):
        self._peft_has_been_casted_to_bf16 = False
        if peft_config is not None:
            from peft import get_peft_model

            model = get_peft_model(model, peft_config)
            if args.bf16 and getattr(model, "is_loaded_in_4bit", False):
                peft_module_casting_to_bf16(model)
                # LoRA weights stay fp32 while the frozen base runs in bf16
                self._peft_has_been_casted_to_bf16 = True

        if args.bf16 and not torch.cuda.is_bf16_supported():
            raise ValueError("bf16 DPO training requires an Ampere (or newer) GPU.")

        if ref_model is None and peft_config is None:
            ref_model = create_reference_model(model)
        self.ref_model = ref_model
        self.is_peft_model = peft_config is not None
        self.beta = beta
        self.label_smoothing = label_smoothing
        self.loss_type = loss_type
        self.max_length = max_length
        self.precompute_ref_log_probs = precompute_ref_log_probs
        self._precomputed_train_ref_log_probs = False
        if data_collator is None:
            data_collator = DPODataCollatorWithPadding(pad_token_id=tokenizer.pad_token_id)

        super().__init__(model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
                         tokenizer=tokenizer, **kwargs)

        if self.ref_model is not None:
            if self.is_deepspeed_enabled:
                self.ref_model = self._prepare_deepspeed(self.ref_model)
            else:
                self.ref_model = self.accelerator.prepare_model(self.ref_model, evaluation_mode=True)

    def _prepare_deepspeed(self, model: PreTrainedModel):
        deepspeed_plugin = self.accelerator.state.deepspeed_plugin
        config_kwargs = deepcopy(deepspeed_plugin.deepspeed_config)
        if model is not None and hasattr(model, "config"):
            hidden_size = max(model.config.hidden_sizes) if getattr(model.config, "hidden_sizes", None) \
                else getattr(model.config, "hidden_size", None)
            if hidden_size is not None and config_kwargs["zero_optimization"]["stage"] == 3:
                config_kwargs.update({
                    "zero_optimization.reduce_bucket_size": hidden_size * hidden_size,
                    "zero_optimization.stage3_param_persistence_threshold": 10 * hidden_size,
                    "zero_optimization.stage3_prefetch_bucket_size": 0.9 * hidden_size * hidden_size,
                })
        if config_kwargs["zero_optimization"]["stage"] != 3:
            config_kwargs["zero_optimization"]["stage"] = 0
        model, *_ = deepspeed.initialize(model=model, config=config_kwargs)
        model.eval()
        return model

    @contextmanager
    def null_ref_context(self):
        """With a PEFT model the reference is the base model with adapters disabled."""
        with self.accelerator.unwrap_model(self.model).disable_adapter() if self.is_peft_model else nullcontext():
            yield

    def get_train_dataloader(self) -> DataLoader:
        if self.precompute_ref_log_probs and not self._precomputed_train_ref_log_probs:
            dataloader_params = {
                "batch_size": self.args.per_device_train_batch_size,
                "collate_fn": self.data_collator,
                "num_workers": self.args.dataloader_num_workers,
                "pin_memory": self.args.dataloader_pin_memory,
                "shuffle": False,
            }
            data_loader = self.accelerator.prepare(DataLoader(self.train_dataset, **dataloader_params))
            reference_chosen_logps, reference_rejected_logps = [], []
            for padded_batch in tqdm(iterable=data_loader, desc="Train dataset reference log probs"):
                chosen_logp, rejected_logp = self.compute_reference_log_probs(padded_batch)
                chosen_logp, rejected_logp = self.accelerator.gather_for_metrics((chosen_logp, rejected_logp))
                reference_chosen_logps.append(chosen_logp.cpu())
                reference_rejected_logps.append(rejected_logp.cpu())
            # free the activations of the reference pass before training starts
            torch.cuda.empty_cache()
            self.accelerator.free_memory()
            all_chosen = torch.cat(reference_chosen_logps).float().numpy()
            all_rejected = torch.cat(reference_rejected_logps).float().numpy()
            self.train_dataset = self.train_dataset.add_column(name="reference_chosen_logps", column=all_chosen)
            self.train_dataset = self.train_dataset.add_column(name="reference_rejected_logps", column=all_rejected)
            self._precomputed_train_ref_log_probs = True
        return super().get_train_dataloader()

    def compute_reference_log_probs(self, padded_batch: Dict) -> Tuple[torch.Tensor, torch.Tensor]:
        compte_ref_context_manager = torch.cuda.amp.autocast if self._peft_has_been_casted_to_bf16 else nullcontext
        with torch.no_grad(), compte_ref_context_manager():
            if self.ref_model is None:
                with self.null_ref_context():
                    chosen, rejected, _, _ = self.concatenated_forward(self.model, padded_batch)
            else:
                chosen, rejected, _, _ = self.concatenated_forward(self.ref_model, padded_batch)
        return chosen, rejected

    @staticmethod
    def get_batch_logps(logits: torch.FloatTensor, labels: torch.LongTensor, label_pad_token_id: int = -100):
        if logits.shape[:-1] != labels.shape:
            raise ValueError("Logits (batch and sequence length dim) and labels must have the same shape.")
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != label_pad_token_id
        labels[labels == label_pad_token_id] = 0
        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
        return (per_token_logps * loss_mask).sum(-1)

    def concatenated_forward(self, model: nn.Module, batch: Dict[str, Union[List, torch.LongTensor]]):
        len_chosen = batch["chosen_labels"].shape[0]
        max_length = max(batch["chosen_input_ids"].shape[1], batch["rejected_input_ids"].shape[1])
        concatenated = {
            k: torch.cat([pad_to_length(batch[f"chosen_{k}"], max_length, 0),
                          pad_to_length(batch[f"rejected_{k}"], max_length, 0)], dim=0).to(self.accelerator.device)
            for k in ("input_ids", "attention_mask", "labels")
        }
        all_logits = model(concatenated["input_ids"], attention_mask=concatenated["attention_mask"],
                           use_cache=False).logits
        all_logps = self.get_batch_logps(all_logits, concatenated["labels"])
        return all_logps[:len_chosen], all_logps[len_chosen:], all_logits[:len_chosen], all_logits[len_chosen:]

    def dpo_loss(self, policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                 reference_rejected_logps) -> Tuple[torch.FloatTensor, torch.FloatTensor, torch.FloatTensor]:
        pi_logratios = policy_chosen_logps - policy_rejected_logps
        ref_logratios = reference_chosen_logps - reference_rejected_logps
        pi_logratios = pi_logratios.to(self.accelerator.device)
        ref_logratios = ref_logratios.to(self.accelerator.device)
        logits = pi_logratios - ref_logratios
        if self.loss_type == "sigmoid":
            losses = (-F.logsigmoid(self.beta * logits) * (1 - self.label_smoothing)
                      - F.logsigmoid(-self.beta * logits) * self.label_smoothing)
        elif self.loss_type == "hinge":
            losses = torch.relu(1 - self.beta * logits)
        elif self.loss_type == "ipo":
            losses = (logits - 1 / (2 * self.beta)) ** 2
        else:
            raise ValueError(f"Unknown loss type: {self.loss_type}.")
        chosen_rewards = self.beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps - reference_rejected_logps).detach()
        return losses, chosen_rewards, rejected_rewards

    def compute_loss(self, model, inputs, return_outputs=False):
        compute_loss_context_manager = torch.cuda.amp.autocast if self._peft_has_been_casted_to_bf16 else nullcontext
        with compute_loss_context_manager():
            policy_chosen_logps, policy_rejected_logps, _, _ = self.concatenated_forward(model, inputs)
            if "reference_chosen_logps" in inputs:
                ref_chosen, ref_rejected = inputs["reference_chosen_logps"], inputs["reference_rejected_logps"]
            else:
                ref_chosen, ref_rejected = self.compute_reference_log_probs(inputs)
            losses, chosen_rewards, rejected_rewards = self.dpo_loss(
                policy_chosen_logps, policy_rejected_logps, ref_chosen, ref_rejected)
        loss = losses.mean().to(self.args.device)
        self.store_metrics({"rewards/accuracies": (chosen_rewards > rejected_rewards).float().mean().cpu()})
        if return_outputs:
            return loss, {"chosen_rewards": chosen_rewards, "rejected_rewards": rejected_rewards}
        return loss

    def store_metrics(self, metrics: Dict[str, float]) -> None:
        if not hasattr(self, "_stored_metrics"):
            self._stored_metrics = {}
        for key, value in metrics.items():
            self._stored_metrics.setdefault(key, []).append(value)
