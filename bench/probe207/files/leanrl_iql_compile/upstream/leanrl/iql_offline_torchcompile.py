# Offline IQL on D4RL in the LeanRL style: single file, TensorDict batches,
# optional torch.compile and CUDA graphs for the update step.
#   python leanrl/iql_offline_torchcompile.py --env-id hopper-medium-v2 --compile --cudagraphs
import os

os.environ["TORCHDYNAMO_INLINE_INBUILT_NN_MODULES"] = "1"

import math
import random
import time
from collections import deque
from dataclasses import dataclass
from functools import partial

import d4rl  # noqa: F401
import gym
import numpy as np
import tensordict
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import tqdm
import tyro
import wandb
from tensordict import TensorDict, from_module, from_modules
from tensordict.nn import CudaGraphModule, TensorDictModule
from torchrl.data import LazyTensorStorage, ReplayBuffer


@dataclass
class Args:
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment"""
    seed: int = 1
    """seed of the experiment"""
    torch_deterministic: bool = True
    """if toggled, `torch.backends.cudnn.deterministic=False`"""
    cuda: bool = True
    """if toggled, cuda will be enabled by default"""
    track: bool = False
    """if toggled, this experiment will be tracked with Weights and Biases"""
    wandb_project_name: str = "leanrl-offline"
    """the wandb's project name"""
    wandb_entity: str = None
    """the entity (team) of wandb's project"""

    # Algorithm specific arguments
    env_id: str = "hopper-medium-v2"
    """the D4RL dataset / environment id"""
    total_steps: int = 1_000_000
    """total number of gradient steps"""
    buffer_device: str = "cuda"
    """where the whole D4RL dataset lives (it fits on one card)"""
    gamma: float = 0.99
    tau: float = 0.005
    batch_size: int = 256
    expectile: float = 0.7
    temperature: float = 3.0
    learning_rate: float = 3e-4
    eval_freq: int = 10_000
    eval_episodes: int = 10

    compile: bool = False
    """whether to use torch.compile."""
    cudagraphs: bool = False
    """whether to use cudagraphs on top of compile."""
    measure_burnin: int = 3
    """Number of burn-in iterations for speed measure."""


def make_mlp(in_dim, out_dim, hidden=256, device=None, squeeze=False):
    layers = [
        nn.Linear(in_dim, hidden, device=device),
        nn.ReLU(),
        nn.Linear(hidden, hidden, device=device),
        nn.ReLU(),
        nn.Linear(hidden, out_dim, device=device),
    ]
    return nn.Sequential(*layers)


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim, device=None):
        super().__init__()
        self.q1 = make_mlp(obs_dim + act_dim, 1, device=device)
        self.q2 = make_mlp(obs_dim + act_dim, 1, device=device)

    def forward(self, obs, act):
        x = torch.cat([obs, act], -1)
        return self.q1(x).squeeze(-1), self.q2(x).squeeze(-1)


class ValueNetwork(nn.Module):
    def __init__(self, obs_dim, device=None):
        super().__init__()
        self.v = make_mlp(obs_dim, 1, device=device)

    def forward(self, obs):
        return self.v(obs).squeeze(-1)


LOG_STD_MAX = 2
LOG_STD_MIN = -5


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, device=None):
        super().__init__()
        self.net = make_mlp(obs_dim, act_dim, device=device)
        self.log_std = nn.Parameter(torch.zeros(act_dim, device=device))

    def forward(self, obs):
        mean = torch.tanh(self.net(obs))
        log_std = self.log_std.clamp(LOG_STD_MIN, LOG_STD_MAX)
        return mean, log_std

    def log_prob(self, obs, act):
        mean, log_std = self(obs)
        var = torch.exp(2 * log_std)
        return (-((act - mean) ** 2) / (2 * var) - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)

    def act(self, obs):
        mean, _ = self(obs)
        return mean


def load_d4rl(env, device):
    dataset = d4rl.qlearning_dataset(env)
    obs_mean = dataset["observations"].mean(0)
    obs_std = dataset["observations"].std(0) + 1e-3
    td = TensorDict(
        observations=torch.as_tensor((dataset["observations"] - obs_mean) / obs_std, dtype=torch.float32),
        actions=torch.as_tensor(dataset["actions"], dtype=torch.float32),
        rewards=torch.as_tensor(dataset["rewards"], dtype=torch.float32),
        next_observations=torch.as_tensor((dataset["next_observations"] - obs_mean) / obs_std, dtype=torch.float32),
        dones=torch.as_tensor(dataset["terminals"], dtype=torch.float32),
        batch_size=[dataset["rewards"].shape[0]],
    )
    return td.to(device), obs_mean, obs_std


if __name__ == "__main__":
    args = tyro.cli(Args)
    run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{args.compile}__{args.cudagraphs}"

    wandb.init(
        project=args.wandb_project_name,
        entity=args.wandb_entity,
        name=f"{os.path.splitext(os.path.basename(__file__))[0]}-{run_name}",
        config=vars(args),
        save_code=True,
        mode="online" if args.track else "disabled",
    )

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    torch.set_float32_matmul_precision("high")

    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    env = gym.make(args.env_id)
    env.seed(args.seed)
    obs_dim = env.observation_space.shape[0]
    act_dim = env.action_space.shape[0]

    data, obs_mean, obs_std = load_d4rl(env, args.buffer_device)
    rb = ReplayBuffer(
        storage=LazyTensorStorage(data.shape[0], device=args.buffer_device),
        batch_size=args.batch_size,
    )
    rb.extend(data)

    qnet = QNetwork(obs_dim, act_dim, device=device)
    qnet_target = QNetwork(obs_dim, act_dim, device=device)
    qnet_target.load_state_dict(qnet.state_dict())
    vnet = ValueNetwork(obs_dim, device=device)
    actor = Actor(obs_dim, act_dim, device=device)

    # cudagraphs need a capturable optimizer when we do not compile
    capturable = args.cudagraphs and not args.compile
    q_optimizer = optim.Adam(qnet.parameters(), lr=args.learning_rate, capturable=capturable)
    v_optimizer = optim.Adam(vnet.parameters(), lr=args.learning_rate, capturable=capturable)
    actor_optimizer = optim.Adam(
        actor.parameters(), lr=args.learning_rate, fused=torch.cuda.is_available()
    )

    def expectile_loss(diff, expectile):
        weight = torch.where(diff > 0, expectile, 1 - expectile)
        return weight * diff.pow(2)

    def update_v(data):
        with torch.no_grad():
            q1, q2 = qnet_target(data["observations"], data["actions"])
            q = torch.min(q1, q2)
        v = vnet(data["observations"])
        v_loss = expectile_loss(q - v, args.expectile).mean()
        v_optimizer.zero_grad()
        v_loss.backward()
        v_optimizer.step()
        return TensorDict(v_loss=v_loss.detach(), adv=(q - v).detach())

    def update_q(data):
        with torch.no_grad():
            next_v = vnet(data["next_observations"])
            target = data["rewards"] + args.gamma * (1 - data["dones"]) * next_v
        q1, q2 = qnet(data["observations"], data["actions"])
        q_loss = F.mse_loss(q1, target) + F.mse_loss(q2, target)
        q_optimizer.zero_grad()
        q_loss.backward()
        q_optimizer.step()
        # polyak update of the target
        with torch.no_grad():
            for p, p_targ in zip(qnet.parameters(), qnet_target.parameters()):
                p_targ.lerp_(p, args.tau)
        return TensorDict(q_loss=q_loss.detach())

    def update_actor(data, adv):
        weights = torch.exp(args.temperature * adv).clamp(max=100.0)
        log_prob = actor.log_prob(data["observations"], data["actions"])
        actor_loss = -(weights * log_prob).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
        actor_optimizer.step()
        return TensorDict(actor_loss=actor_loss.detach())

    def update_main(data):
        out_v = update_v(data)
        out_q = update_q(data)
        out_pi = update_actor(data, out_v["adv"])
        return out_v.update(out_q).update(out_pi)

    policy = actor.act

    if args.compile:
        mode = None  # "reduce-overhead" if not args.cudagraphs else None
        update_main = torch.compile(update_main, mode=mode)
        policy = torch.compile(policy, mode="reduce-overhead")

    if args.cudagraphs:
        update_main = CudaGraphModule(update_main, in_keys=[], out_keys=[], warmup=5)

    @torch.no_grad()
    def evaluate(n_episodes):
        returns = []
        for _ in range(n_episodes):
            obs, done, ep_ret = env.reset(), False, 0.0
            while not done:
                obs_t = torch.as_tensor((obs - obs_mean) / obs_std, dtype=torch.float32, device=device)
                action = policy(obs_t.unsqueeze(0))[0].cpu().numpy()
                obs, reward, done, _ = env.step(action)
                ep_ret += reward
            returns.append(env.get_normalized_score(ep_ret) * 100)
        return float(np.mean(returns))

    start_time = None
    desc = ""
    pbar = tqdm.tqdm(range(args.total_steps))
    for global_step in pbar:
        if global_step == args.measure_burnin:
            torch.cuda.synchronize()
            start_time = time.time()
            measure_step = global_step

        data = rb.sample()
        data = data.to(device, non_blocking=True)
        logs = update_main(data)

        if (global_step + 1) % args.eval_freq == 0:
            torch.cuda.synchronize()  # flush queued kernels before reading the clock
            speed = (global_step - measure_step) / (time.time() - start_time)
            score = evaluate(args.eval_episodes)
            logs = logs.apply(torch.mean).to_dict()
            wandb.log(
                {
                    "speed": speed,
                    "d4rl_score": score,
                    "gpu_mem_gb": torch.cuda.max_memory_allocated() / 2**30,
                    **logs,
                },
                step=global_step,
            )
            pbar.set_description(f"speed: {speed: 4.1f} sps, score: {score: 4.1f}")

    env.close()
