import time
from dataclasses import dataclass
from typing import List, Optional, Tuple

import ray
import torch
import torch.distributed as dist
import torch.nn as nn

from openrlhf.models.utils import compute_approx_kl, compute_reward, masked_mean
from openrlhf.utils.logging_utils import init_logger

logger = init_logger(__name__)


@dataclass
class Experience:
    """Experience is a batch of data. These data should have the the sequence length and number of actions."""

    sequences: torch.Tensor
    action_log_probs: torch.Tensor
    base_action_log_probs: torch.Tensor
    values: torch.Tensor
    returns: Optional[torch.Tensor]
    advantages: Optional[torch.Tensor]
    attention_mask: Optional[torch.LongTensor]
    action_mask: Optional[torch.BoolTensor]
    info: Optional[dict]
    kl: Optional[torch.Tensor] = None

    @torch.no_grad()
    def to_device(self, device: torch.device):
        for field in ("sequences", "action_log_probs", "base_action_log_probs", "values", "returns",
                      "advantages", "attention_mask", "action_mask", "kl"):
            value = getattr(self, field)
            if value is not None:
                setattr(self, field, value.to(device))
        self.info = {key: value.to(device) if isinstance(value, torch.Tensor) else value
                     for key, value in self.info.items()}
        return self

    def pin_memory(self):
        self.sequences = self.sequences.pin_memory()
        self.action_log_probs = self.action_log_probs.pin_memory()
        if self.values is not None:
            self.values = self.values.pin_memory()
        return self


class NaiveExperienceMaker:
    def __init__(self, actor, critic, reward_model, initial_model, tokenizer, prompt_max_len, kl_controller,
                 strategy=None, reward_fn=None):
        self.actor = actor
        self.critic = critic
        self.reward_model = reward_model
        self.initial_model = initial_model
        self.tokenizer = tokenizer
        self.prompt_max_len = prompt_max_len
        self.kl_ctl = kl_controller
        self.strategy = strategy
        self.reward_fn = reward_fn
        self.perf_stats = None

    def tokenize_fn(self, texts, max_length, padding=True, device=None):
        batch = self.tokenizer(texts, return_tensors="pt", add_special_tokens=False, max_length=max_length,
                               padding=True, truncation=True)
        return {k: v.to(device) for k, v in batch.items()}

    @torch.no_grad()
    def make_experience(self, prompts: List[str], **generate_kwargs) -> Experience:
        torch.cuda.nvtx.range_push("make_experience")
        self.actor.eval()
        self.initial_model.eval()
        if self.critic is not None:
            self.critic.eval()

        inputs = self.tokenize_fn(prompts, self.prompt_max_len, device="cuda")
        sequences, attention_mask, action_mask = self.actor.generate(**inputs, **generate_kwargs)
        num_actions = action_mask.size(1)

        start = time.time()
        action_log_probs = self.actor(sequences, num_actions, attention_mask)
        base_action_log_probs = self.initial_model(sequences, num_actions, attention_mask)
        value = self.critic(sequences, num_actions, attention_mask) if self.critic is not None else None
        r = self.reward_model(sequences, attention_mask)
        torch.cuda.synchronize()
        forward_time = time.time() - start

        kl = compute_approx_kl(action_log_probs, base_action_log_probs, action_mask=action_mask)
        info = {
            "kl": masked_mean(kl, action_mask, dim=-1),
            "reward": r,
            "response_length": action_mask.float().sum(dim=-1),
            "total_length": attention_mask.float().sum(dim=-1),
            "forward_time": torch.tensor([forward_time], device=torch.cuda.current_device()),
        }
        self.actor.train()
        if self.critic is not None:
            self.critic.train()
        torch.cuda.nvtx.range_pop()
        return Experience(sequences, action_log_probs, base_action_log_probs, value, None, None,
                          attention_mask, action_mask, info, kl)

    @torch.no_grad()
    def compute_advantages_and_returns(self, values, rewards, action_mask, gamma: float, lambd: float):
        lastgaelam = 0
        advantages_reversed = []
        response_length = rewards.size(1)
        if action_mask is not None:
            values = action_mask * values
            rewards = action_mask * rewards
        for t in reversed(range(response_length)):
            nextvalues = values[:, t + 1] if t < response_length - 1 else 0.0
            delta = rewards[:, t] + gamma * nextvalues - values[:, t]
            lastgaelam = delta + gamma * lambd * lastgaelam
            advantages_reversed.append(lastgaelam)
        advantages = torch.stack(advantages_reversed[::-1], dim=1)
        returns = advantages + values
        return advantages.detach(), returns

    def normalize_advantages(self, experiences: List[Experience]) -> None:
        all_adv = torch.cat([e.advantages.flatten() for e in experiences]).float()
        stats = torch.tensor([all_adv.sum(), (all_adv ** 2).sum(), all_adv.numel()], device="cuda")
        dist.all_reduce(stats)
        mean = stats[0] / stats[2]
        std = (stats[1] / stats[2] - mean ** 2).clamp(min=1e-8).sqrt()
        for e in experiences:
            e.advantages = (e.advantages - mean) / std
