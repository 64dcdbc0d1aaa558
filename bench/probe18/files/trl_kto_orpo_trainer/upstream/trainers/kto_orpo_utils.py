"""Shared pieces of our KTO and ORPO trainers (subclasses of trl's trainers).

* reference log-probs for KTO are precomputed once, in bf16, before training;
* ORPO's odds-ratio loss is computed in fp32 regardless of the model dtype.
"""
from contextlib import nullcontext
from typing import Dict, List, Tuple

import torch
import torch.nn.functional as F
from accelerate import PartialState
from torch.utils.data import DataLoader
from tqdm import tqdm
from trl import KTOTrainer, ORPOTrainer


def selective_log_softmax(logits: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """log_softmax(logits).gather(index) without materialising the full log-prob tensor."""
    if logits.dtype in (torch.float32, torch.float64):
        selected = torch.gather(logits, dim=-1, index=index.unsqueeze(-1)).squeeze(-1)
        logsumexp = torch.stack([torch.logsumexp(row, dim=-1) for row in logits])
        return selected - logsumexp
    out = []
    for row_logits, row_labels in zip(logits, index):
        row_logps = F.log_softmax(row_logits, dim=-1)
        out.append(row_logps.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(out)


class PrecomputedRefKTOTrainer(KTOTrainer):
    """KTO with reference log-probs computed up front so the reference model can be freed."""

    def _amp_context(self):
        if self._peft_has_been_casted_to_bf16:
            return torch.cuda.amp.autocast(dtype=torch.bfloat16)
        return nullcontext()

    @torch.no_grad()
    def precompute_reference(self, dataset) -> List[Tuple[float, float]]:
        loader = DataLoader(dataset, batch_size=self.args.per_device_eval_batch_size,
                            collate_fn=self.data_collator, pin_memory=True, shuffle=False)
        loader = self.accelerator.prepare(loader)
        results = []
        for batch in tqdm(loader, desc="reference log-probs", disable=not self.accelerator.is_main_process):
            with self._amp_context():
                ref_chosen, ref_kl = self.compute_reference_log_probs(batch)
            ref_chosen, ref_kl = self.accelerator.gather_for_metrics((ref_chosen, ref_kl))
            results.extend(zip(ref_chosen.float().cpu().tolist(), ref_kl.float().cpu().tolist()))
        self.ref_model = None
        torch.cuda.empty_cache()
        return results


class Fp32LossORPOTrainer(ORPOTrainer):
    """ORPO with the odds-ratio term computed in fp32."""

    def odds_ratio_loss(self, policy_chosen_logps: torch.FloatTensor, policy_rejected_logps: torch.FloatTensor):
        with torch.autocast(device_type="cuda", enabled=False):
            chosen = policy_chosen_logps.float()
            rejected = policy_rejected_logps.float()
            log_odds = (chosen - rejected) - (
                torch.log1p(-torch.exp(chosen)) - torch.log1p(-torch.exp(rejected))
            )
            ratio = F.logsigmoid(log_odds)
            losses = self.beta * ratio
        chosen_rewards = self.beta * chosen.detach()
        rejected_rewards = self.beta * rejected.detach()
        return losses, chosen_rewards, rejected_rewards, torch.mean(ratio), torch.mean(log_odds)

    def get_batch_logps(self, logits: torch.FloatTensor, labels: torch.LongTensor,
                        average_log_prob: bool = False) -> torch.FloatTensor:
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != self.label_pad_token_id
        labels[labels == self.label_pad_token_id] = 0
        per_token_logps = selective_log_softmax(logits, labels)
        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        return (per_token_logps * loss_mask).sum(-1)


def device_for_rank() -> str:
    state = PartialState()
    return f"cuda:{state.local_process_index}" if state.distributed_type != "NO" else str(state.device)


def summarize(metrics: Dict[str, List[float]]) -> Dict[str, float]:
    return {k: float(sum(v) / max(len(v), 1)) for k, v in metrics.items()}
