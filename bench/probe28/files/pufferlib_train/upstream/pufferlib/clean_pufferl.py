# Condensed PufferLib clean_pufferl trainer: EnvPool-style vectorized rollouts into pinned/GPU buffers.
import os
import time
from collections import defaultdict

import numpy as np
import psutil
import torch

import pufferlib
import pufferlib.pytorch
import pufferlib.vector


def create(config, vecenv, policy, optimizer=None, wandb=None):
    seed_everything(config.seed, config.torch_deterministic)
    utilization = Utilization()
    vecenv.async_reset(config.seed)
    obs_shape = vecenv.single_observation_space.shape
    obs_dtype = vecenv.single_observation_space.dtype
    atn_shape = vecenv.single_action_space.shape
    total_agents = vecenv.num_agents

    experience = Experience(config.batch_size, config.bptt_horizon, config.minibatch_size, obs_shape, obs_dtype,
                            atn_shape, config.cpu_offload, config.device)
    uncompiled_policy = policy
    if config.compile:
        policy = torch.compile(policy, mode=config.compile_mode)
    optimizer = torch.optim.Adam(policy.parameters(), lr=config.learning_rate, eps=1e-5)
    scaler = torch.cuda.amp.GradScaler(enabled=config.precision == "float16")
    amp_ctx = torch.amp.autocast(device_type="cuda", dtype=getattr(torch, config.precision),
                                 enabled=config.precision != "float32")
    return pufferlib.namespace(config=config, vecenv=vecenv, policy=policy, uncompiled_policy=uncompiled_policy,
                               optimizer=optimizer, scaler=scaler, amp_ctx=amp_ctx, experience=experience,
                               utilization=utilization, global_step=0, epoch=0, stats={}, total_agents=total_agents)


@torch.no_grad()
def evaluate(data):
    config, experience = data.config, data.experience
    while not experience.full:
        o, r, d, t, info, env_id, mask = data.vecenv.recv()
        o = torch.as_tensor(o)
        o_device = o.to(config.device, non_blocking=True)
        r = torch.as_tensor(r).to(config.device)
        d = torch.as_tensor(d).to(config.device)
        with data.amp_ctx:
            actions, logprob, _, value = data.policy(o_device)
        experience.store(o if config.cpu_offload else o_device, value, actions, logprob, r, d, env_id, mask)
        data.vecenv.send(actions.cpu().numpy())
    return data.stats


def train(data):
    config, experience = data.config, data.experience
    for epoch in range(config.update_epochs):
        for mb in range(experience.num_minibatches):
            obs = experience.b_obs[mb]
            obs = obs.to(config.device, non_blocking=True)
            with data.amp_ctx:
                loss = data.policy.loss(obs, experience, mb)
            data.optimizer.zero_grad()
            data.scaler.scale(loss).backward()
            data.scaler.unscale_(data.optimizer)
            torch.nn.utils.clip_grad_norm_(data.policy.parameters(), config.max_grad_norm)
            data.scaler.step(data.optimizer)
            data.scaler.update()
    if config.device == "cuda":
        torch.cuda.synchronize()
    data.epoch += 1


class Experience:
    def __init__(self, batch_size, bptt_horizon, minibatch_size, obs_shape, obs_dtype, atn_shape,
                 cpu_offload=False, device="cuda"):
        obs_dtype = pufferlib.pytorch.numpy_to_torch_dtype_dict[obs_dtype]
        pin = device == "cuda" and cpu_offload
        self.obs = torch.zeros(batch_size, *obs_shape, dtype=obs_dtype, pin_memory=pin,
                               device=device if not pin else "cpu")
        self.actions = torch.zeros(batch_size, *atn_shape, dtype=torch.int32, device=device)
        self.logprobs = torch.zeros(batch_size, device=device)
        self.rewards = torch.zeros(batch_size, device=device)
        self.dones = torch.zeros(batch_size, device=device)
        self.values = torch.zeros(batch_size, device=device)
        self.minibatch_size = minibatch_size
        self.num_minibatches = batch_size // minibatch_size
        self.ptr = 0
        self.full = False


class Utilization:
    def __init__(self, delay=1):
        self.cpu_util, self.gpu_util, self.gpu_mem = [], [], []
        self.delay = delay

    def sample(self):
        self.cpu_util.append(psutil.cpu_percent())
        if torch.cuda.is_available():
            self.gpu_util.append(torch.cuda.utilization())
            free, total = torch.cuda.mem_get_info()
            self.gpu_mem.append(100 * (total - free) / total)


def seed_everything(seed, torch_deterministic):
    np.random.seed(seed)
    if seed is not None:
        torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = torch_deterministic
