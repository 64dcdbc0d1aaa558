"""World-model agent (Dreamer-style) with an RSSM, an actor and a critic trained in imagination.

The recurrent observe step is the hot loop of training; it is captured once into a CUDA graph
with make_graphed_callables so the per-timestep Python/launch overhead disappears.
"""
import copy
import functools
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import distributions as torchd

from dreamer import networks, tools
from dreamer.replay import ReplayBuffer


to_np = lambda x: x.detach().cpu().numpy()


def pick_amp_dtype(precision):
    if precision == 16:
        return torch.float16
    if precision == "bf16" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


class RSSMCell(nn.Module):
    """One step of the recurrent state-space model: (deter, stoch, action, embed) -> posterior."""

    def __init__(self, stoch=32, classes=32, deter=512, hidden=512, act_dim=6, embed_dim=1024, unimix=0.01):
        super().__init__()
        self._stoch = stoch
        self._classes = classes
        self._unimix = unimix
        self.img_in = nn.Sequential(nn.Linear(stoch * classes + act_dim, hidden), nn.LayerNorm(hidden), nn.SiLU())
        self.gru = networks.GRUCell(hidden, deter, norm=True)
        self.img_out = nn.Sequential(nn.Linear(deter, hidden), nn.LayerNorm(hidden), nn.SiLU())
        self.obs_out = nn.Sequential(nn.Linear(deter + embed_dim, hidden), nn.LayerNorm(hidden), nn.SiLU())
        self.prior_head = nn.Linear(hidden, stoch * classes)
        self.post_head = nn.Linear(hidden, stoch * classes)

    def _logits(self, x, head):
        logits = head(x).reshape(x.shape[:-1] + (self._stoch, self._classes))
        if self._unimix > 0.0:
            probs = F.softmax(logits, -1)
            probs = (1 - self._unimix) * probs + self._unimix / self._classes
            logits = torch.log(probs)
        return logits

    def _sample(self, logits):
        # straight-through one-hot sample of the categorical latent
        sample = F.gumbel_softmax(logits, tau=1.0, hard=True, dim=-1)
        return sample.reshape(logits.shape[:-2] + (self._stoch * self._classes,))

    def forward(self, deter, stoch, action, embed, is_first):
        mask = 1.0 - is_first.float().unsqueeze(-1)
        deter = deter * mask
        stoch = stoch * mask
        x = self.img_in(torch.cat([stoch, action], -1))
        deter = self.gru(x, deter)
        prior_logits = self._logits(self.img_out(deter), self.prior_head)
        post_logits = self._logits(self.obs_out(torch.cat([deter, embed], -1)), self.post_head)
        stoch = self._sample(post_logits)
        return deter, stoch, prior_logits, post_logits


class WorldModel(nn.Module):

    def __init__(self, obs_space, act_space, step, config):
        super().__init__()
        self._step = step
        self._use_amp = config.precision in (16, "bf16")
        self._amp_dtype = pick_amp_dtype(config.precision)
        self._config = config
        shapes = {k: tuple(v.shape) for k, v in obs_space.spaces.items()}
        self.encoder = networks.MultiEncoder(shapes, **config.encoder)
        self.embed_size = self.encoder.outdim
        self.cell = RSSMCell(config.dyn_stoch, config.dyn_discrete, config.dyn_deter, config.dyn_hidden,
                             config.num_actions, self.embed_size, config.unimix_ratio)
        feat_size = config.dyn_stoch * config.dyn_discrete + config.dyn_deter
        self.heads = nn.ModuleDict()
        self.heads["decoder"] = networks.MultiDecoder(feat_size, shapes, **config.decoder)
        self.heads["reward"] = networks.MLP(feat_size, (255,), **config.reward_head)
        self.heads["cont"] = networks.MLP(feat_size, (), dist="binary", **config.cont_head)
        self._model_opt = tools.Optimizer(
            "model", self.parameters(), config.model_lr, config.opt_eps, config.grad_clip,
            config.weight_decay, opt=config.opt, use_amp=self._use_amp,
        )
        self._graphed_cell = None
        self._scales = dict(reward=config.reward_head["loss_scale"], cont=config.cont_head["loss_scale"])

    def maybe_graph_cell(self, batch_size):
        """Capture the RSSM step for a fixed batch size (training graph: fwd + bwd)."""
        if not self._config.cuda_graph or self._graphed_cell is not None:
            return
        c = self._config
        dev = self._config.device
        sample_args = (
            torch.zeros(batch_size, c.dyn_deter, device=dev, requires_grad=True),
            torch.zeros(batch_size, c.dyn_stoch * c.dyn_discrete, device=dev, requires_grad=True),
            torch.zeros(batch_size, c.num_actions, device=dev),
            torch.zeros(batch_size, self.embed_size, device=dev, requires_grad=True),
            torch.zeros(batch_size, dtype=torch.bool, device=dev),
        )
        # warm up on a side stream as required before capture
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                out = self.cell(*sample_args)
                sum(o.sum() for o in out).backward()
        torch.cuda.current_stream().wait_stream(s)
        self.cell.zero_grad(set_to_none=True)
        self._graphed_cell = torch.cuda.make_graphed_callables(self.cell, sample_args, num_warmup_iters=3)

    def observe(self, embed, action, is_first):
        B, T = embed.shape[:2]
        cell = self._graphed_cell if self._graphed_cell is not None else self.cell
        deter = torch.zeros(B, self._config.dyn_deter, device=embed.device)
        stoch = torch.zeros(B, self._config.dyn_stoch * self._config.dyn_discrete, device=embed.device)
        deters, stochs, priors, posts = [], [], [], []
        for t in range(T):
            deter, stoch, prior, post = cell(deter, stoch, action[:, t], embed[:, t], is_first[:, t])
            deters.append(deter)
            stochs.append(stoch)
            priors.append(prior)
            posts.append(post)
        return torch.stack(deters, 1), torch.stack(stochs, 1), torch.stack(priors, 1), torch.stack(posts, 1)

    def kl_loss(self, post, prior, free, dyn_scale, rep_scale):
        kld = torchd.kl.kl_divergence
        dist = lambda logits: torchd.Independent(torchd.OneHotCategoricalStraightThrough(logits=logits), 1)
        sg = lambda x: x.detach()
        rep_loss = kld(dist(post), dist(sg(prior)))
        dyn_loss = kld(dist(sg(post)), dist(prior))
        rep_loss = torch.clip(rep_loss, min=free)
        dyn_loss = torch.clip(dyn_loss, min=free)
        return dyn_scale * dyn_loss + rep_scale * rep_loss, dyn_loss, rep_loss

    def _train(self, data):
        data = self.preprocess(data)
        self.maybe_graph_cell(data["action"].shape[0])
        with tools.RequiresGrad(self):
            with torch.autocast(device_type="cuda", dtype=self._amp_dtype, enabled=self._use_amp):
                embed = self.encoder(data)
                deter, stoch, prior, post = self.observe(embed, data["action"], data["is_first"])
                kl_loss, dyn_loss, rep_loss = self.kl_loss(
                    post, prior, self._config.kl_free, self._config.dyn_scale, self._config.rep_scale)
                feat = torch.cat([stoch, deter], -1)
                losses = {}
                for name, head in self.heads.items():
                    pred = head(feat)
                    if isinstance(pred, dict):
                        for key, p in pred.items():
                            losses[key] = -p.log_prob(data[key])
                    else:
                        losses[name] = -pred.log_prob(data[name])
                scaled = {k: v * self._scales.get(k, 1.0) for k, v in losses.items()}
                model_loss = sum(scaled.values()) + kl_loss
            metrics = self._model_opt(torch.mean(model_loss), self.parameters())
        metrics.update({f"{k}_loss": to_np(torch.mean(v)) for k, v in losses.items()})
        metrics["dyn_loss"] = to_np(torch.mean(dyn_loss))
        metrics["rep_loss"] = to_np(torch.mean(rep_loss))
        return {"stoch": stoch, "deter": deter}, metrics

    def preprocess(self, obs):
        obs = {k: torch.as_tensor(np.asarray(v), device=self._config.device, dtype=torch.float32)
               for k, v in obs.items()}
        obs["image"] = obs["image"] / 255.0
        if "discount" in obs:
            obs["discount"] *= self._config.discount
            obs["discount"] = obs["discount"].unsqueeze(-1)
        obs["cont"] = (1.0 - obs["is_terminal"]).unsqueeze(-1)
        obs["is_first"] = obs["is_first"].bool()
        return obs


class Dreamer(nn.Module):

    def __init__(self, obs_space, act_space, config, logger, dataset):
        super().__init__()
        self._config = config
        self._logger = logger
        self._should_log = tools.Every(config.log_every)
        batch_steps = config.batch_size * config.batch_length
        self._should_train = tools.Every(batch_steps / config.train_ratio)
        self._should_pretrain = tools.Once()
        self._metrics = {}
        self._step = logger.step // config.action_repeat
        self._update_count = 0
        self._dataset = dataset
        self._wm = WorldModel(obs_space, act_space, self._step, config)
        self._task_behavior = networks.ImagBehavior(config, self._wm)
        if config.compile and os.name != "nt":
            self._wm = torch.compile(self._wm)
            self._task_behavior = torch.compile(self._task_behavior)

    def __call__(self, obs, reset, state=None, training=True):
        step = self._step
        if training:
            steps = self._config.pretrain if self._should_pretrain() else self._should_train(step)
            for _ in range(steps):
                self._train(next(self._dataset))
                self._update_count += 1
                self._metrics["update_count"] = self._update_count
            if self._should_log(step):
                for name, values in self._metrics.items():
                    self._logger.scalar(name, float(np.mean(values)))
                    self._metrics[name] = []
                self._logger.write(fps=True)
        policy_output, state = self._policy(obs, state, training)
        if training:
            self._step += len(reset)
            self._logger.step = self._config.action_repeat * self._step
        return policy_output, state

    def _train(self, data):
        metrics = {}
        post, mets = self._wm._train(data)
        metrics.update(mets)
        start = post
        reward = lambda f, s, a: self._wm.heads["reward"](torch.cat([s["stoch"], s["deter"]], -1)).mode()
        metrics.update(self._task_behavior._train(start, reward)[-1])
        for name, value in metrics.items():
            if name not in self._metrics:
                self._metrics[name] = [value]
            else:
                self._metrics[name].append(value)


def main(config):
    tools.set_seed_everywhere(config.seed)
    if config.deterministic_run:
        tools.enable_deterministic_run()
    torch.backends.cuda.matmul.allow_tf32 = True
    config.device = "cuda:0" if torch.cuda.is_available() else "cpu"
    logdir = os.path.expanduser(config.logdir)
    os.makedirs(logdir, exist_ok=True)
    replay = ReplayBuffer(config.dataset_size, config.batch_size, config.batch_length)
    logger = tools.Logger(logdir, config.action_repeat * replay.num_steps())
    train_envs = [tools.make_env(config, "train", i) for i in range(config.envs)]
    acts = train_envs[0].action_space
    config.num_actions = acts.n if hasattr(acts, "n") else acts.shape[0]
    agent = Dreamer(train_envs[0].observation_space, acts, config, logger, replay.iterate()).to(config.device)
    agent.requires_grad_(requires_grad=False)
    state = None
    t0 = time.time()
    while agent._step < config.steps:
        state = tools.simulate(agent, train_envs, replay, logger, limit=config.dataset_size, steps=config.eval_every, state=state)
        torch.save({"agent_state_dict": agent.state_dict()}, os.path.join(logdir, "latest.pt"))
        print(f"[{agent._step}] {time.time() - t0:.0f}s")
