from functools import partial
from pathlib import Path
import shutil
import time
from typing import Dict, Optional, Tuple

import hydra
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from tqdm import tqdm
import wandb

from agent import Agent
from coroutines.collector import make_collector, NumToCollect
from data import BatchSampler, collate_segments_to_batch, Dataset, DatasetTraverser
from envs import make_atari_env, WorldModelEnv
from utils import (
    broadcast_if_needed,
    build_ddp_wrapper,
    CommonTools,
    configure_opt,
    count_parameters,
    get_lr_sched,
    keep_agent_copies_every,
    Logs,
    move_opt_to,
    process_confusion_matrices_if_any_and_compute_classification_metrics,
    save_info_for_import_script,
    save_with_backup,
    set_seed,
    StateDictMixin,
    try_until_no_except,
    wandb_log,
)


class Trainer(StateDictMixin):
    def __init__(self, cfg: DictConfig, root_dir: Path) -> None:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        OmegaConf.resolve(cfg)
        self._cfg = cfg
        self._rank = dist.get_rank() if dist.is_initialized() else 0
        self._world_size = dist.get_world_size() if dist.is_initialized() else 1

        # Pyright types
        self._train_env = None
        self._test_env = None
        self._agent = None

        # Checkpointing
        self._path_ckpt_dir = Path("checkpoints")
        self._path_state_ckpt = self._path_ckpt_dir / "state.pt"
        self._keep_agent_copies = partial(
            keep_agent_copies_every,
            path_ckpt=self._path_ckpt_dir,
            every=cfg.checkpointing.save_agent_every,
            num_to_keep=cfg.checkpointing.num_to_keep,
        )
        self._save_info_for_import_script = partial(
            save_info_for_import_script, run_name=cfg.wandb.name, path_ckpt_dir=self._path_ckpt_dir
        )

        # First time, init files hierarchy
        if not cfg.common.resume and self._rank == 0:
            self._init_files_hierarchy(root_dir)

        # Init wandb
        if self._rank == 0:
            try_until_no_except(
                partial(wandb.init, config=OmegaConf.to_container(cfg, resolve=True), reinit=True, resume=True, **cfg.wandb)
            )

        # Seed
        seed = cfg.common.seed if cfg.common.seed is not None else torch.seed() % 10 ** 9
        set_seed(seed + self._rank)

        # Device
        self._device = torch.device(f"cuda:{self._rank}" if torch.cuda.is_available() else "cpu")
        self._use_cuda = self._device.type == "cuda"

        # Envs
        num_train_envs = cfg.collection.train.num_envs
        num_test_envs = cfg.collection.test.num_envs
        self._train_env = make_atari_env(num_envs=num_train_envs, device=self._device, **cfg.env.train)
        self._test_env = make_atari_env(num_envs=num_test_envs, device=self._device, **cfg.env.test)

        # Create models
        num_actions = int(self._test_env.num_actions)
        self._agent = Agent(instantiate(cfg.agent, num_actions=num_actions)).to(self._device)
        self._use_ddp = self._world_size > 1
        if self._use_ddp:
            self._agent = build_ddp_wrapper(**self._agent._modules)

        if cfg.initialization.path_to_ckpt is not None:
            self._agent.load(**cfg.initialization)

        # Collectors
        self._train_dataset = Dataset(Path("dataset/train"), "train_dataset", cfg.training.cache_in_ram, use_manager=True)
        self._test_dataset = Dataset(Path("dataset/test"), "test_dataset", cache_in_ram=True)
        self._train_dataset.load_from_default_path()
        self._test_dataset.load_from_default_path()

        # Training state (things to be saved/restored)
        self.epoch = 0
        self.num_epochs_collect = None
        self.num_episodes_test = 0
        self.num_batch_train = CommonTools(0, 0, 0)
        self.num_batch_test = CommonTools(0, 0, 0)
        self.opt = CommonTools(None, None, None)
        self.lr_sched = CommonTools(None, None, None)

        # Setup training
        sigma_distribution_cfg = instantiate(cfg.denoiser.sigma_distribution)
        actor_critic_loss_cfg = instantiate(cfg.actor_critic.actor_critic_loss)
        self._agent.setup_training(sigma_distribution_cfg, actor_critic_loss_cfg, cfg.actor_critic.rl_env)

        # Optimizers
        c = cfg.denoiser.optimizer
        self.opt.denoiser = configure_opt(self._agent.denoiser, **c)
        c = cfg.rew_end_model.optimizer
        self.opt.rew_end_model = configure_opt(self._agent.rew_end_model, **c)
        c = cfg.actor_critic.optimizer
        self.opt.actor_critic = configure_opt(self._agent.actor_critic, **c)

        # LR schedulers
        self.lr_sched.denoiser = get_lr_sched(self.opt.denoiser, cfg.denoiser.training.lr_warmup_steps)
        self.lr_sched.rew_end_model = get_lr_sched(self.opt.rew_end_model, cfg.rew_end_model.training.lr_warmup_steps)
        self.lr_sched.actor_critic = get_lr_sched(self.opt.actor_critic, cfg.actor_critic.training.lr_warmup_steps)

        # Data loaders
        make_data_loader = partial(
            DataLoader,
            dataset=self._train_dataset,
            collate_fn=collate_segments_to_batch,
            num_workers=cfg.training.num_workers_data_loaders,
            persistent_workers=(cfg.training.num_workers_data_loaders > 0),
            pin_memory=self._use_cuda,
            pin_memory_device=str(self._device) if self._use_cuda else "",
        )

        make_batch_sampler = partial(BatchSampler, self._train_dataset, self._rank, self._world_size)

        self._data_loader_train = CommonTools(
            denoiser=make_data_loader(
                batch_sampler=make_batch_sampler(c.batch_size, c.num_steps_conditioning, guarantee_full_seqs=False)
            ),
            rew_end_model=make_data_loader(
                batch_sampler=make_batch_sampler(c.batch_size, c.seq_length, guarantee_full_seqs=False)
            ),
            actor_critic=make_data_loader(
                batch_sampler=make_batch_sampler(c.batch_size, c.burn_in, guarantee_full_seqs=False)
            ),
        )

        self._data_loader_test = CommonTools(
            denoiser=DatasetTraverser(self._test_dataset, c.batch_size, c.num_steps_conditioning),
            rew_end_model=DatasetTraverser(self._test_dataset, c.batch_size, c.seq_length),
            actor_critic=None,
        )

        # RL env
        rl_env = WorldModelEnv(self._agent.denoiser, self._agent.rew_end_model, self._data_loader_train.actor_critic, cfg.world_model_env, return_denoising_trajectory=False)

        # Setup collectors
        self._train_collector = make_collector(
            self._train_env, self._agent.actor_critic, self._train_dataset, cfg.collection.train.epsilon
        )
        self._test_collector = make_collector(
            self._test_env, self._agent.actor_critic, self._test_dataset, cfg.collection.test.epsilon, reset_every_collect=True
        )

        # Training state (things to be saved/restored)
        self._is_model_free = cfg.training.model_free
        self._rl_env = rl_env

        # Resume
        if cfg.common.resume:
            self.load_state_checkpoint()
        else:
            self.save_checkpoint()

        if self._rank == 0:
            for name in ("denoiser", "rew_end_model", "actor_critic"):
                print(f"{count_parameters(getattr(self._agent, name))} parameters in {name}")
            print(self._train_dataset)
            print(self._test_dataset)

    def run(self) -> None:
        to_log = []

        if self.epoch == 0:
            if self._is_model_free or self._cfg.collection.train.first_epoch is None:
                self.num_epochs_collect = self._cfg.collection.train.num_steps_total
            else:
                if self._rank == 0:
                    self._train_collector.send(NumToCollect(steps=self._cfg.collection.train.first_epoch.min))
                    to_log += self._train_collector.send(NumToCollect(steps=self._cfg.collection.train.first_epoch.min))
                self.num_epochs_collect, _ = broadcast_if_needed(self._cfg.collection.train.first_epoch.max, None)

        num_epochs = self.num_epochs_collect + self._cfg.training.num_final_epochs

        while self.epoch < num_epochs:
            self.epoch += 1
            start_time = time.time()

            if self._rank == 0:
                print(f"\nEpoch {self.epoch} / {num_epochs}\n")

            # Training
            should_collect_train = (
                self._rank == 0 and not self._is_model_free and self.epoch <= self.num_epochs_collect
            )

            if should_collect_train:
                c = self._cfg.collection.train
                to_log += self._train_collector.send(NumToCollect(steps=c.steps_per_epoch))

            if self._cfg.training.should:
                to_log += self.train_agent()

            # Evaluation
            should_test = self._cfg.evaluation.should and (self.epoch % self._cfg.evaluation.every == 0)
            should_collect_test = self._rank == 0 and should_test and self._cfg.collection.test.num_episodes > 0

            if should_collect_test:
                to_log += self.collect_test()

            if should_test:
                to_log += self.test_agent()

            # Logging
            to_log.append({"duration": (time.time() - start_time) / 3600})
            if self._rank == 0:
                wandb_log(to_log, self.epoch)
            to_log = []

            # Checkpointing
            self.save_checkpoint()

            if dist.is_initialized():
                dist.barrier()

        # Last collect
        if self._rank == 0 and not self._is_model_free:
            self._train_collector.send(NumToCollect(steps=self._cfg.collection.train.steps_per_epoch))
            self._train_dataset.save_to_default_path()

    def collect_test(self) -> Logs:
        c = self._cfg.collection.test
        to_log = self._test_collector.send(NumToCollect(episodes=c.num_episodes))
        key_episode_return = f"{self._test_dataset.name}/episode_return"
        test_episode_returns = [log[key_episode_return] for log in to_log if key_episode_return in log]
        return to_log

    def train_agent(self) -> Logs:
        self._agent.train()
        self._agent.zero_grad()
        to_log = []
        for name in ("denoiser", "rew_end_model", "actor_critic"):
            cfg = getattr(self._cfg, name).training
            if self.epoch > cfg.start_after_epochs:
                steps = cfg.steps_first_epoch if self.epoch == 1 else cfg.steps_per_epoch
                to_log += self.train_component(name, steps)
        return to_log

    @torch.no_grad()
    def test_agent(self) -> Logs:
        self._agent.eval()
        to_log = []
        for name in ("denoiser", "rew_end_model"):
            cfg = getattr(self._cfg, name).training
            if self.epoch > cfg.start_after_epochs:
                to_log += self.test_component(name)
        return to_log

    def train_component(self, name: str, steps: int) -> Logs:
        cfg = getattr(self._cfg, name).training
        model = getattr(self._agent, name)
        opt = self.opt.get(name)
        lr_sched = self.lr_sched.get(name)
        data_loader = self._data_loader_train.get(name)

        model.train()
        opt.zero_grad()
        data_iterator = iter(data_loader) if data_loader is not None else None
        to_log = []

        num_steps = cfg.grad_acc_steps * steps

        for i in tqdm(range(num_steps), desc=f"Training {name}", disable=self._rank > 0):
            batch = next(data_iterator).to(self._device) if data_iterator is not None else None
            loss, metrics = model(batch) if batch is not None else model()
            loss.backward()

            num_batch = self.num_batch_train.get(name)
            metrics[f"num_batch_train_{name}"] = num_batch
            self.num_batch_train.set(name, num_batch + 1)

            if (i + 1) % cfg.grad_acc_steps == 0:
                if cfg.max_grad_norm is not None:
                    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm).item()
                    metrics["grad_norm_before_clip"] = grad_norm

                opt.step()
                opt.zero_grad()

                if lr_sched is not None:
                    metrics["lr"] = lr_sched.get_last_lr()[0]
                    lr_sched.step()

            to_log.append(metrics)

        process_confusion_matrices_if_any_and_compute_classification_metrics(to_log)
        to_log = [{f"{name}/train/{k}": v for k, v in d.items()} for d in to_log]
        return to_log

    @torch.no_grad()
    def test_component(self, name: str) -> Logs:
        model = getattr(self._agent, name)
        data_loader = self._data_loader_test.get(name)
        model.eval()
        to_log = []
        for batch in tqdm(data_loader, desc=f"Evaluating {name}"):
            batch = batch.to(self._device)
            _, metrics = model(batch)
            num_batch = self.num_batch_test.get(name)
            metrics[f"num_batch_test_{name}"] = num_batch
            self.num_batch_test.set(name, num_batch + 1)
            to_log.append(metrics)

        process_confusion_matrices_if_any_and_compute_classification_metrics(to_log)
        to_log = [{f"{name}/test/{k}": v for k, v in d.items()} for d in to_log]
        return to_log

    def load_state_checkpoint(self) -> None:
        self.load_state_dict(torch.load(self._path_state_ckpt, map_location=self._device))

    def save_checkpoint(self) -> None:
        if self._rank == 0:
            save_with_backup(self.state_dict(), self._path_state_ckpt)
            self._train_dataset.save_to_default_path()
            self._test_dataset.save_to_default_path()
            self._keep_agent_copies(self._agent.state_dict(), self.epoch)
            self._save_info_for_import_script(self.epoch)

    def _init_files_hierarchy(self, root_dir: Path) -> None:
        self._path_ckpt_dir.mkdir(exist_ok=False, parents=False)
        path_config = Path("config") / "trainer.yaml"
        path_config.parent.mkdir(exist_ok=False, parents=False)
        shutil.copytree(src=root_dir / "src", dst="./src")
        shutil.copytree(src=root_dir / "scripts", dst="./scripts")
        shutil.copytree(src=root_dir / "config", dst="./config/original")
        path_config.write_text(OmegaConf.to_yaml(self._cfg))
