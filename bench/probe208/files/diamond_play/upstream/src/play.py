import argparse
from functools import partial
from pathlib import Path
from typing import Tuple

from huggingface_hub import snapshot_download
from hydra import compose, initialize
from hydra.utils import instantiate
from omegaconf import DictConfig, OmegaConf
import torch
from torch.utils.data import DataLoader

from agent import Agent
from coroutines.collector import make_collector, NumToCollect
from data import BatchSampler, collate_segments_to_batch, Dataset
from envs import make_atari_env, WorldModelEnv
from game import ActionNames, DatasetEnv, Game, get_keymap_and_action_names, Keymap, NamedEnv, PlayEnv
from utils import ATARI_100K_GAMES, get_path_agent_ckpt, prompt_atari_game


OmegaConf.register_new_resolver("eval", eval)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("-p", "--pretrained", action="store_true", help="Download pretrained world models and agents.")
    parser.add_argument("-d", "--dataset-mode", action="store_true", help="Dataset visualization mode.")
    parser.add_argument("-r", "--record", action="store_true", help="Record episodes in PlayEnv.")
    parser.add_argument("--store-denoising-trajectory", action="store_true", help="Save denoising steps in info.")
    parser.add_argument("--store-original-obs", action="store_true", help="Save original obs (pre resizing) in info.")
    parser.add_argument("--mouse-multiplier", type=int, default=10, help="Multiplication factor for the mouse movement.")
    parser.add_argument("--size-multiplier", type=int, default=2, help="Multiplication factor for the screen size.")
    parser.add_argument("--compile", action="store_true", help="Turn on model compilation (GPU only).")
    parser.add_argument("--fps", type=int, default=15, help="Frame rate.")
    parser.add_argument("--no-header", action="store_true")
    return parser.parse_args()


def check_args(args: argparse.Namespace) -> bool:
    if not args.record and (args.store_denoising_trajectory or args.store_original_obs):
        print("Warning: not in recording mode, ignoring --store* options")
    return True


def prepare_dataset_mode(cfg: DictConfig) -> Tuple[DatasetEnv, Keymap]:
    datasets = []
    dataset_train = Dataset(Path("dataset/train"), "train_dataset", cache_in_ram=False)
    dataset_test = Dataset(Path("dataset/test"), "test_dataset", cache_in_ram=False)
    for dataset in (dataset_train, dataset_test):
        dataset.load_from_default_path()
        if dataset.num_episodes > 0:
            datasets.append(dataset)
    _, env_action_names = get_keymap_and_action_names(cfg.env.keymap)
    dataset_env = DatasetEnv(datasets, env_action_names)
    keymap, _ = get_keymap_and_action_names("dataset_mode")
    return dataset_env, keymap


def prepare_play_mode(cfg: DictConfig, args: argparse.Namespace) -> Tuple[PlayEnv, Keymap]:
    path_ckpt = get_path_agent_ckpt("checkpoints", epoch=-1)
    # interactive play is meant for a single local GPU
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    # Real envs
    train_env = make_atari_env(num_envs=1, device=device, **cfg.env.train)
    test_env = make_atari_env(num_envs=1, device=device, **cfg.env.test)

    # Models
    agent = Agent(instantiate(cfg.agent, num_actions=test_env.num_actions)).to(device).eval()
    agent.load(path_ckpt)

    # Collect for imagination's initialization
    n = agent.denoiser.inner_model.cfg.num_steps_conditioning
    dataset = Dataset(Path(f"dataset/{path_ckpt.stem}_{n}"))
    dataset.load_from_default_path()
    if len(dataset) == 0:
        print(f"Collecting {n} steps in real environment for world model initialization.")
        collector = make_collector(test_env, agent.actor_critic, dataset, epsilon=0)
        collector.send(NumToCollect(steps=n))
        dataset.save_to_default_path()

    # World model environment
    bs = BatchSampler(dataset, 0, 1, 1, n, None, False)
    dl = DataLoader(dataset, batch_sampler=bs, collate_fn=collate_segments_to_batch)
    wm_env_cfg = instantiate(cfg.world_model_env, num_batches_to_preload=1)
    wm_env = WorldModelEnv(agent.denoiser, agent.upsampler, agent.rew_end_model, dl, wm_env_cfg, return_denoising_trajectory=True)

    if device.type == "cuda" and args.compile:
        print("Compiling models...")
        wm_env.predict_next_obs = torch.compile(wm_env.predict_next_obs, mode="reduce-overhead")
        wm_env.upsample_next_obs = torch.compile(wm_env.upsample_next_obs, mode="reduce-overhead")

    play_env = PlayEnv(
        agent,
        wm_env,
        cfg.env.train.id,
        args.record,
        args.store_denoising_trajectory,
        args.store_original_obs,
    )

    keymap, _ = get_keymap_and_action_names(cfg.env.keymap)
    return play_env, keymap


@torch.no_grad()
def main():
    args = parse_args()
    ok = check_args(args)
    if not ok:
        return

    if args.pretrained:
        name = prompt_atari_game()
        path_hf = Path(snapshot_download(repo_id="eloialonso/diamond", allow_patterns=f"atari_100k/models/{name}.pt"))
        path_ckpt = path_hf / f"atari_100k/models/{name}.pt"

        # Override config
        cfg = OmegaConf.load(path_hf / "atari_100k/config/agent/default.yaml")
        cfg.env.train.id = cfg.env.test.id = f"{name}NoFrameskip-v4"
        cfg.world_model_env.horizon = 50
    else:
        with initialize(version_base="1.3", config_path="../config"):
            cfg = compose(config_name="trainer")
        path_ckpt = None

    if args.dataset_mode:
        env, keymap = prepare_dataset_mode(cfg)
    else:
        env, keymap = prepare_play_mode(cfg, args)

    size = (env.env.unwrapped.original_shape if hasattr(env.env, "unwrapped") else (cfg.env.train.size,) * 2)
    size = tuple(x * args.size_multiplier for x in size)
    game = Game(env, keymap, size, fps=args.fps, verbose=not args.no_header)
    game.run()


if __name__ == "__main__":
    main()
