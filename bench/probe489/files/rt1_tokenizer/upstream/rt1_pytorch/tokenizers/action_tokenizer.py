"""
Uniform 256-bin action tokenizer used by RT-1.

Action layout (11 dims, as in the RT-1 paper):
    [terminate_episode(1), world_vector(3), rotation_delta(3), gripper_closedness_action(1),
     base_displacement_vertical_rotation(1), base_displacement_vector(2)]
"""
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

import numpy as np
import torch

ACTION_SPACE: Dict[str, Tuple[int, float, float]] = {
    # name: (size, low, high)
    "terminate_episode": (1, 0.0, 2.0),
    "world_vector": (3, -1.0, 1.0),
    "rotation_delta": (3, -np.pi / 2, np.pi / 2),
    "gripper_closedness_action": (1, -1.0, 1.0),
    "base_displacement_vertical_rotation": (1, -np.pi, np.pi),
    "base_displacement_vector": (2, -1.0, 1.0),
}


@dataclass
class RT1ActionTokenizer:
    num_bins: int = 256
    action_order: List[str] = field(default_factory=lambda: list(ACTION_SPACE.keys()))

    @property
    def tokens_per_action(self) -> int:
        return sum(ACTION_SPACE[k][0] for k in self.action_order)

    def tokenize(self, action: Dict[str, torch.Tensor]) -> torch.Tensor:
        """dict of (..., size) float tensors -> (..., tokens_per_action) long tensor"""
        tokens = []
        for key in self.action_order:
            size, low, high = ACTION_SPACE[key]
            a = action[key]
            if key == "terminate_episode":
                # one-hot [terminate, continue, ...] -> discrete index
                a = torch.argmax(a, dim=-1, keepdim=True).to(torch.long)
                tokens.append(a)
                continue
            a = torch.clamp(a, low, high)
            t = (a - low) / (high - low) * (self.num_bins - 1)
            tokens.append(t.round().to(torch.long))
        out = torch.cat(tokens, dim=-1)
        assert out.shape[-1] == self.tokens_per_action
        return out

    def detokenize(self, tokens: torch.Tensor) -> Dict[str, torch.Tensor]:
        """(..., tokens_per_action) long -> dict of float tensors"""
        out = {}
        i = 0
        for key in self.action_order:
            size, low, high = ACTION_SPACE[key]
            t = tokens[..., i : i + size]
            i += size
            if key == "terminate_episode":
                one_hot = torch.zeros(*t.shape[:-1], 3, device=t.device)
                one_hot.scatter_(-1, t.clamp(max=2), 1.0)
                out[key] = one_hot
                continue
            out[key] = t.to(torch.float32) / (self.num_bins - 1) * (high - low) + low
        return out

    def detokenize_logits(self, logits: torch.Tensor) -> Dict[str, torch.Tensor]:
        return self.detokenize(logits.argmax(dim=-1))
