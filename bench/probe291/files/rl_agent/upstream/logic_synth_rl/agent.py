"""PPO agent for logic-synthesis flow optimisation.

State  : normalised AIG statistics (#ANDs, #levels, #PIs/#POs, delay, area,
         and the last k actions one-hot encoded)
Action : one ABC transformation out of ACTIONS (see abc_env.py)
Reward : weighted improvement of delay/area w.r.t. the previous step, as in
         DRiLLS (Hosny et al., ASP-DAC'20), with a PPO learner instead of A2C.
"""
import os
import logging
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

logger = logging.getLogger(__name__)

Transition = namedtuple("Transition", ["state", "action", "logp", "reward", "done", "value"])


def get_device(prefer_gpu=True, gpu_id=0):
    """Pick the training device; rollouts always stay on the CPU."""
    if prefer_gpu and torch.cuda.is_available():
        return torch.device("cuda", gpu_id)
    return torch.device("cpu")


class ActorCritic(nn.Module):
    def __init__(self, state_dim, num_actions, hidden=256):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(state_dim, hidden), nn.Tanh(),
            nn.Linear(hidden, hidden), nn.Tanh(),
        )
        self.pi = nn.Linear(hidden, num_actions)
        self.v = nn.Linear(hidden, 1)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
                nn.init.zeros_(m.bias)
        nn.init.orthogonal_(self.pi.weight, gain=0.01)
        nn.init.orthogonal_(self.v.weight, gain=1.0)

    def forward(self, s):
        h = self.body(s)
        return self.pi(h), self.v(h).squeeze(-1)

    def act(self, s):
        logits, v = self(s)
        dist = Categorical(logits=logits)
        a = dist.sample()
        return a, dist.log_prob(a), v

    def evaluate(self, s, a):
        logits, v = self(s)
        dist = Categorical(logits=logits)
        return dist.log_prob(a), dist.entropy(), v


class RolloutBuffer(object):
    def __init__(self):
        self.clear()

    def clear(self):
        self.items = []

    def add(self, *args):
        self.items.append(Transition(*args))

    def __len__(self):
        return len(self.items)

    def compute_returns(self, last_value, gamma, lam):
        """GAE(lambda) over the stored episode fragments."""
        rewards = np.array([t.reward for t in self.items], dtype=np.float32)
        dones = np.array([t.done for t in self.items], dtype=np.float32)
        values = np.array([t.value for t in self.items] + [last_value], dtype=np.float32)
        adv = np.zeros_like(rewards)
        gae = 0.0
        for i in reversed(range(len(rewards))):
            nonterminal = 1.0 - dones[i]
            delta = rewards[i] + gamma * values[i + 1] * nonterminal - values[i]
            gae = delta + gamma * lam * nonterminal * gae
            adv[i] = gae
        returns = adv + values[:-1]
        return adv, returns


class PPOAgent(object):
    def __init__(self, state_dim, num_actions, cfg):
        self.cfg = cfg
        self.device = get_device(cfg.get("use_gpu", True), cfg.get("gpu_id", 0))
        self.net = ActorCritic(state_dim, num_actions, cfg.get("hidden", 256)).to(self.device)
        # a CPU copy of the policy is used for acting inside the ABC workers
        self.actor_cpu = ActorCritic(state_dim, num_actions, cfg.get("hidden", 256))
        self.sync_actor()
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.get("lr", 3e-4), eps=1e-5)
        self.buffer = RolloutBuffer()
        self.gamma = cfg.get("gamma", 0.99)
        self.lam = cfg.get("gae_lambda", 0.95)
        self.clip = cfg.get("clip", 0.2)
        self.epochs = cfg.get("ppo_epochs", 4)
        self.minibatch = cfg.get("minibatch", 64)
        self.ent_coef = cfg.get("ent_coef", 0.01)
        self.vf_coef = cfg.get("vf_coef", 0.5)
        self.max_grad_norm = cfg.get("max_grad_norm", 0.5)
        logger.info("PPO agent on %s", self.device)

    def sync_actor(self):
        state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
        self.actor_cpu.load_state_dict(state)

    @torch.no_grad()
    def select_action(self, state, greedy=False):
        s = torch.as_tensor(state, dtype=torch.float32).unsqueeze(0)
        logits, v = self.actor_cpu(s)
        if greedy:
            a = logits.argmax(-1)
            logp = F.log_softmax(logits, -1).gather(-1, a.unsqueeze(-1)).squeeze(-1)
        else:
            dist = Categorical(logits=logits)
            a = dist.sample()
            logp = dist.log_prob(a)
        return int(a.item()), float(logp.item()), float(v.item())

    def store(self, state, action, logp, reward, done, value):
        self.buffer.add(state, action, logp, reward, done, value)

    def update(self, last_state):
        with torch.no_grad():
            _, _, last_v = self.select_action(last_state)
        adv, ret = self.buffer.compute_returns(last_v, self.gamma, self.lam)
        states = torch.as_tensor(np.array([t.state for t in self.buffer.items]), dtype=torch.float32)
        actions = torch.as_tensor([t.action for t in self.buffer.items], dtype=torch.long)
        old_logp = torch.as_tensor([t.logp for t in self.buffer.items], dtype=torch.float32)
        adv = torch.as_tensor(adv)
        ret = torch.as_tensor(ret)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)

        if self.device.type == "cuda":
            states = states.cuda(self.device, non_blocking=True)
            actions = actions.cuda(self.device, non_blocking=True)
            old_logp = old_logp.cuda(self.device, non_blocking=True)
            adv = adv.cuda(self.device, non_blocking=True)
            ret = ret.cuda(self.device, non_blocking=True)

        n = states.size(0)
        stats = {"pi_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
        count = 0
        for _ in range(self.epochs):
            perm = torch.randperm(n, device=states.device)
            for start in range(0, n, self.minibatch):
                idx = perm[start:start + self.minibatch]
                logp, ent, v = self.net.evaluate(states[idx], actions[idx])
                ratio = torch.exp(logp - old_logp[idx])
                s1 = ratio * adv[idx]
                s2 = torch.clamp(ratio, 1 - self.clip, 1 + self.clip) * adv[idx]
                pi_loss = -torch.min(s1, s2).mean()
                v_loss = F.mse_loss(v, ret[idx])
                loss = pi_loss + self.vf_coef * v_loss - self.ent_coef * ent.mean()
                self.opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.net.parameters(), self.max_grad_norm)
                self.opt.step()
                with torch.no_grad():
                    stats["approx_kl"] += (old_logp[idx] - logp).mean().item()
                stats["pi_loss"] += pi_loss.item()
                stats["v_loss"] += v_loss.item()
                stats["entropy"] += ent.mean().item()
                count += 1
        self.buffer.clear()
        self.sync_actor()
        if self.device.type == 'cuda':
            torch.cuda.empty_cache()
        return {k: v / max(count, 1) for k, v in stats.items()}

    def save(self, path):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        torch.save({"net": self.net.state_dict(), "opt": self.opt.state_dict(), "cfg": self.cfg}, path)

    def load(self, path):
        ckpt = torch.load(path, map_location=self.device)
        self.net.load_state_dict(ckpt["net"])
        if "opt" in ckpt:
            self.opt.load_state_dict(ckpt["opt"])
        self.sync_actor()
