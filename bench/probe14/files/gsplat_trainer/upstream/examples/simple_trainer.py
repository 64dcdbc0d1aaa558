import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import imageio
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import tqdm
import tyro
from fused_ssim import fused_ssim
from torch.utils.tensorboard import SummaryWriter
from torchmetrics.image.lpip import LearnedPerceptualImagePatchSimilarity

from datasets.colmap import Dataset, Parser
from gsplat.rendering import rasterization
from gsplat.strategy import DefaultStrategy
from utils import knn, rgb_to_sh, set_random_seed


@dataclass
class Config:
    data_dir: str = "data/360_v2/garden"
    data_factor: int = 4
    result_dir: str = "results/garden"
    batch_size: int = 1
    max_steps: int = 30_000
    eval_steps: List[int] = field(default_factory=lambda: [7_000, 30_000])
    sh_degree: int = 3
    init_opa: float = 0.1
    init_scale: float = 1.0
    ssim_lambda: float = 0.2
    near_plane: float = 0.01
    far_plane: float = 1e10
    packed: bool = False
    sparse_grad: bool = False
    antialiased: bool = False
    strategy: DefaultStrategy = field(default_factory=DefaultStrategy)
    # Dump GPU memory stats to the stats json.
    log_memory: bool = True


def create_splats_with_optimizers(parser, cfg, scene_scale, device="cuda", world_rank=0, world_size=1):
    points = torch.from_numpy(parser.points).float()
    rgbs = torch.from_numpy(parser.points_rgb / 255.0).float()

    dist2_avg = (knn(points, 4)[:, 1:] ** 2).mean(dim=-1)  # [N,]
    dist_avg = torch.sqrt(dist2_avg)
    scales = torch.log(dist_avg * cfg.init_scale).unsqueeze(-1).repeat(1, 3)  # [N, 3]

    points = points[world_rank::world_size]
    rgbs = rgbs[world_rank::world_size]
    scales = scales[world_rank::world_size]

    N = points.shape[0]
    quats = torch.rand((N, 4))
    opacities = torch.logit(torch.full((N,), cfg.init_opa))

    colors = torch.zeros((N, (cfg.sh_degree + 1) ** 2, 3))
    colors[:, 0, :] = rgb_to_sh(rgbs)

    params = [
        ("means", torch.nn.Parameter(points), 1.6e-4 * scene_scale),
        ("scales", torch.nn.Parameter(scales), 5e-3),
        ("quats", torch.nn.Parameter(quats), 1e-3),
        ("opacities", torch.nn.Parameter(opacities), 5e-2),
        ("sh0", torch.nn.Parameter(colors[:, :1, :]), 2.5e-3),
        ("shN", torch.nn.Parameter(colors[:, 1:, :]), 2.5e-3 / 20),
    ]
    splats = torch.nn.ParameterDict({n: v for n, v, _ in params}).to(device)

    BS = cfg.batch_size * world_size
    optimizer_class = torch.optim.SparseAdam if cfg.sparse_grad else torch.optim.Adam
    optimizers = {
        name: optimizer_class(
            [{"params": splats[name], "lr": lr * math.sqrt(BS), "name": name}],
            eps=1e-15 / math.sqrt(BS),
            betas=(1 - BS * (1 - 0.9), 1 - BS * (1 - 0.999)),
            fused=True,
        )
        for name, _, lr in params
    }
    return splats, optimizers


class Runner:
    def __init__(self, local_rank: int, world_rank: int, world_size: int, cfg: Config):
        set_random_seed(42 + local_rank)
        self.cfg = cfg
        self.world_rank = world_rank
        self.world_size = world_size
        self.device = f"cuda:{local_rank}"

        os.makedirs(cfg.result_dir, exist_ok=True)
        self.stats_dir = f"{cfg.result_dir}/stats"
        os.makedirs(self.stats_dir, exist_ok=True)
        self.writer = SummaryWriter(log_dir=f"{cfg.result_dir}/tb")

        self.parser = Parser(data_dir=cfg.data_dir, factor=cfg.data_factor, normalize=True, test_every=8)
        self.trainset = Dataset(self.parser, split="train")
        self.scene_scale = self.parser.scene_scale * 1.1

        self.splats, self.optimizers = create_splats_with_optimizers(
            self.parser, cfg, self.scene_scale, device=self.device,
            world_rank=world_rank, world_size=world_size,
        )
        self.strategy_state = cfg.strategy.initialize_state(scene_scale=self.scene_scale)
        self.lpips = LearnedPerceptualImagePatchSimilarity(net_type="alex", normalize=True).to(self.device)

    def rasterize_splats(self, camtoworlds, Ks, width, height, **kwargs):
        means = self.splats["means"]
        quats = self.splats["quats"]
        scales = torch.exp(self.splats["scales"])
        opacities = torch.sigmoid(self.splats["opacities"])
        colors = torch.cat([self.splats["sh0"], self.splats["shN"]], 1)
        render_colors, render_alphas, info = rasterization(
            means=means, quats=quats, scales=scales, opacities=opacities, colors=colors,
            viewmats=torch.linalg.inv(camtoworlds), Ks=Ks, width=width, height=height,
            packed=self.cfg.packed, absgrad=self.cfg.strategy.absgrad,
            sparse_grad=self.cfg.sparse_grad,
            rasterize_mode="antialiased" if self.cfg.antialiased else "classic",
            distributed=self.world_size > 1,
            **kwargs,
        )
        return render_colors, render_alphas, info

    def train(self):
        cfg = self.cfg
        device = self.device
        trainloader = torch.utils.data.DataLoader(
            self.trainset, batch_size=cfg.batch_size, shuffle=True,
            num_workers=4, persistent_workers=True, pin_memory=True,
        )
        trainloader_iter = iter(trainloader)
        global_tic = time.time()
        pbar = tqdm.tqdm(range(cfg.max_steps))
        for step in pbar:
            try:
                data = next(trainloader_iter)
            except StopIteration:
                trainloader_iter = iter(trainloader)
                data = next(trainloader_iter)

            camtoworlds = data["camtoworld"].to(device)
            Ks = data["K"].to(device)
            pixels = data["image"].to(device) / 255.0
            height, width = pixels.shape[1:3]
            sh_degree_to_use = min(step // 1000, cfg.sh_degree)

            renders, alphas, info = self.rasterize_splats(
                camtoworlds=camtoworlds, Ks=Ks, width=width, height=height,
                sh_degree=sh_degree_to_use, near_plane=cfg.near_plane, far_plane=cfg.far_plane,
            )
            colors = renders[..., :3]
            cfg.strategy.step_pre_backward(self.splats, self.optimizers, self.strategy_state, step, info)

            l1loss = F.l1_loss(colors, pixels)
            ssimloss = 1.0 - fused_ssim(colors.permute(0, 3, 1, 2), pixels.permute(0, 3, 1, 2), padding="valid")
            loss = l1loss * (1.0 - cfg.ssim_lambda) + ssimloss * cfg.ssim_lambda
            loss.backward()

            pbar.set_description(f"loss={loss.item():.3f}| sh degree={sh_degree_to_use}| ")

            for optimizer in self.optimizers.values():
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

            cfg.strategy.step_post_backward(self.splats, self.optimizers, self.strategy_state, step, info,
                                            packed=cfg.packed)

            if step in [i - 1 for i in cfg.eval_steps]:
                mem = torch.cuda.max_memory_allocated() / 1024**3
                stats = {"mem": mem, "ellipse_time": time.time() - global_tic,
                         "num_GS": len(self.splats["means"])}
                print("Step: ", step, stats)
                with open(f"{self.stats_dir}/train_step{step:04d}_rank{self.world_rank}.json", "w") as f:
                    json.dump(stats, f)
                torch.cuda.synchronize()


def main(local_rank: int, world_rank, world_size: int, cfg: Config):
    if world_size > 1:
        dist.init_process_group(backend="nccl", rank=world_rank, world_size=world_size)
        torch.cuda.set_device(local_rank)
    runner = Runner(local_rank, world_rank, world_size, cfg)
    runner.train()


if __name__ == "__main__":
    cfg = tyro.cli(Config)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    main(local_rank, world_rank, world_size, cfg)
