"""Trainer subclasses used across our fine-tuning experiments.

* ``WeightedLossTrainer`` - class-weighted / label-smoothed cross entropy for imbalanced
  classification (the HF default loss ignores class priors).
* ``DistillationTrainer`` - logit distillation from a frozen teacher that lives on the
  same GPU as the student; teacher forward runs under fp16 autocast to save memory.

Both keep the Trainer's own AMP handling for the student (``--fp16`` / ``--bf16``).
"""
from __future__ import annotations

import logging
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import PreTrainedModel, Trainer, TrainingArguments

logger = logging.getLogger(__name__)


def compute_class_weights(labels: Sequence[int], num_labels: int, smoothing: float = 1.0) -> torch.Tensor:
    """Inverse-frequency weights, normalised to mean 1. Returned on the CPU."""
    counts = torch.bincount(torch.as_tensor(list(labels), dtype=torch.long), minlength=num_labels).float()
    weights = 1.0 / (counts + smoothing)
    return weights * (num_labels / weights.sum())


class WeightedLossTrainer(Trainer):
    """Trainer whose loss uses per-class weights and optional label smoothing."""

    def __init__(
        self,
        *args,
        class_weights: Optional[torch.Tensor] = None,
        label_smoothing: float = 0.0,
        focal_gamma: float = 0.0,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        if class_weights is not None:
            # keep the weights next to the logits; Trainer has already moved the model
            class_weights = class_weights.cuda()
        self.class_weights = class_weights
        self.label_smoothing = label_smoothing
        self.focal_gamma = focal_gamma

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs.get("logits")
        # loss in fp32 regardless of the autocast dtype the Trainer picked
        with torch.cuda.amp.autocast(enabled=False):
            logits32 = logits.float()
            if self.focal_gamma > 0:
                logp = F.log_softmax(logits32, dim=-1)
                p_t = logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1).exp()
                ce = F.nll_loss(logp, labels, weight=self.class_weights, reduction="none")
                loss = ((1 - p_t) ** self.focal_gamma * ce).mean()
            else:
                loss_fct = nn.CrossEntropyLoss(weight=self.class_weights, label_smoothing=self.label_smoothing)
                loss = loss_fct(logits32.view(-1, self.model.config.num_labels), labels.view(-1))
        return (loss, outputs) if return_outputs else loss


class DistillationTrainer(Trainer):
    """Student/teacher logit distillation (Hinton et al.) on top of the task loss."""

    def __init__(
        self,
        *args,
        teacher_model: PreTrainedModel = None,
        alpha: float = 0.5,
        temperature: float = 2.0,
        teacher_fp16: bool = True,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        if teacher_model is None:
            raise ValueError("DistillationTrainer needs a teacher_model")
        self.teacher = teacher_model
        self.teacher.eval()
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        # place the teacher where the student is; with DDP every rank holds its own copy
        self._move_model_to_device(self.teacher, self.args.device)
        self.alpha = alpha
        self.temperature = temperature
        self.teacher_fp16 = teacher_fp16

    def _teacher_logits(self, inputs: Dict[str, torch.Tensor]) -> torch.Tensor:
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.teacher_fp16, dtype=torch.float16):
            out = self.teacher(**inputs)
        return out.logits.float()

    def compute_loss(self, model, inputs, return_outputs=False):
        outputs_student = model(**inputs)
        student_loss = outputs_student.loss
        teacher_logits = self._teacher_logits({k: v for k, v in inputs.items() if k != "labels"})

        T = self.temperature
        loss_kd = F.kl_div(
            F.log_softmax(outputs_student.logits.float() / T, dim=-1),
            F.softmax(teacher_logits / T, dim=-1),
            reduction="batchmean",
        ) * (T * T)
        loss = self.alpha * student_loss + (1.0 - self.alpha) * loss_kd
        return (loss, outputs_student) if return_outputs else loss


class GradNormLoggingTrainer(WeightedLossTrainer):
    """Logs the global grad norm (before clipping) every ``logging_steps``.

    The Trainer only reports the clipped norm in recent versions; we want the raw one to
    spot fp16 overflow steps early.
    """

    def training_step(self, model: nn.Module, inputs: Dict[str, torch.Tensor]) -> torch.Tensor:
        loss = super().training_step(model, inputs)
        if self.state.global_step % max(1, self.args.logging_steps) == 0 and self.args.process_index == 0:
            norms: List[torch.Tensor] = [
                p.grad.detach().float().norm(2) for p in model.parameters() if p.grad is not None
            ]
            if norms:
                total = torch.norm(torch.stack(norms), 2).item()
                scale = None
                if self.do_grad_scaling:
                    scale = self.scaler.get_scale()
                    total = total / scale
                self.log({"grad_norm_raw": total, "loss_scale": scale or 1.0})
        return loss


def build_trainer(
    kind: str,
    model: PreTrainedModel,
    args: TrainingArguments,
    train_dataset=None,
    eval_dataset=None,
    tokenizer=None,
    data_collator=None,
    compute_metrics=None,
    teacher_model: Optional[PreTrainedModel] = None,
    class_weights: Optional[torch.Tensor] = None,
    **extra,
) -> Trainer:
    common = dict(
        model=model,
        args=args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        tokenizer=tokenizer,
        data_collator=data_collator,
        compute_metrics=compute_metrics,
    )
    if kind == "weighted":
        return WeightedLossTrainer(class_weights=class_weights, **common, **extra)
    if kind == "gradnorm":
        return GradNormLoggingTrainer(class_weights=class_weights, **common, **extra)
    if kind == "distill":
        return DistillationTrainer(teacher_model=teacher_model, **common, **extra)
    if kind == "plain":
        return Trainer(**common)
    raise ValueError(f"unknown trainer kind {kind!r}")
