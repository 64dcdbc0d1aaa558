import math
import time

import numpy as np
import torch

from tensordict import TensorDict
from tqdm.auto import tqdm

from rl4co.data.transforms import StateAugmentation
from rl4co.utils.ops import batchify, gather_by_index, unbatchify


def check_unused_kwargs(class_, kwargs):
    if len(kwargs) > 0 and not (len(kwargs) == 1 and "progress" in kwargs):
        print(f"Warning: {class_.__class__.__name__} does not use kwargs {kwargs}")


def _timed(fn, *args, **kwargs):
    """Run fn and return (output, seconds). Uses CUDA events on GPU so asynchronous kernels are counted."""
    if torch.cuda.is_available():
        start_event = torch.cuda.Event(enable_timing=True)
        end_event = torch.cuda.Event(enable_timing=True)
        start_event.record()
        out = fn(*args, **kwargs)
        end_event.record()
        torch.cuda.synchronize()
        return out, start_event.elapsed_time(end_event) / 1000.0
    start = time.time()
    out = fn(*args, **kwargs)
    return out, time.time() - start


class EvalBase:
    """Base class for evaluation

    Args:
        env: Environment
        progress: Whether to show progress bar
        **kwargs: Additional arguments (to be implemented in subclasses)
    """

    name = "base"

    def __init__(self, env, progress=True, **kwargs):
        check_unused_kwargs(self, kwargs)
        self.env = env
        self.progress = progress

    def __call__(self, policy, dataloader, **kwargs):
        """Evaluate the policy on the given dataloader with **kwargs parameter
        self._inner is implemented in subclasses and returns actions and rewards
        """
        total_time = 0.0
        with torch.inference_mode():
            rewards_list = []
            actions_list = []

            for batch in tqdm(
                dataloader, disable=not self.progress, desc=f"Running {self.name}"
            ):
                td = batch.to(next(policy.parameters()).device)
                td = self.env.reset(td)
                (actions, rewards), dt = _timed(self._inner, policy, td, **kwargs)
                total_time += dt
                rewards_list.append(rewards)
                actions_list.append(actions)

            # Padding: pad actions to the same length with zeros
            max_length = max(action.size(-1) for action in actions_list)
            actions = torch.cat(
                [
                    torch.nn.functional.pad(action, (0, max_length - action.size(-1)))
                    for action in actions_list
                ],
                0,
            )
            rewards = torch.cat(rewards_list, 0)

        tqdm.write(f"Mean reward for {self.name}: {rewards.mean():.4f}")
        tqdm.write(f"Time: {total_time:.4f}s")

        # Empty cache
        torch.cuda.empty_cache()

        return {
            "actions": actions.cpu(),
            "rewards": rewards.cpu(),
            "inference_time": total_time,
            "avg_reward": rewards.cpu().mean(),
        }

    def _inner(self, policy, td):
        """Inner function to be implemented in subclasses.
        This function returns actions and rewards for the given policy
        """
        raise NotImplementedError("Implement in subclass")


class GreedyEval(EvalBase):
    """Evaluates the policy using greedy decoding and single trajectory"""

    name = "greedy"

    def __init__(self, env, **kwargs):
        check_unused_kwargs(self, kwargs)
        super().__init__(env, kwargs.get("progress", True))

    def _inner(self, policy, td):
        out = policy(
            td.clone(),
            decode_type="greedy",
            num_starts=0,
            return_actions=True,
        )
        rewards = self.env.get_reward(td, out["actions"])
        return out["actions"], rewards


class AugmentationEval(EvalBase):
    """Evaluates the policy via N state augmentations
    `force_dihedral_8` forces the use of 8 augmentations (rotations and flips) as in POMO
    https://en.wikipedia.org/wiki/Examples_of_groups#dihedral_group_of_order_8

    Args:
        num_augment (int): Number of state augmentations
        force_dihedral_8 (bool): Whether to force the use of 8 augmentations
    """

    name = "augmentation"

    def __init__(self, env, num_augment=8, force_dihedral_8=False, feats=None, **kwargs):
        check_unused_kwargs(self, kwargs)
        super().__init__(env, kwargs.get("progress", True))
        self.augmentation = StateAugmentation(
            num_augment=num_augment,
            augment_fn="dihedral8" if force_dihedral_8 else "symmetric",
            feats=feats,
        )

    def _inner(self, policy, td, num_augment=None):
        if num_augment is None:
            num_augment = self.augmentation.num_augment
        td_init = td.clone()
        td = self.augmentation(td)
        out = policy(td.clone(), decode_type="greedy", num_starts=0, return_actions=True)

        # Move into batches and compute rewards
        rewards = self.env.get_reward(batchify(td_init, num_augment), out["actions"])
        rewards = unbatchify(rewards, num_augment)
        actions = unbatchify(out["actions"], num_augment)

        # Get best reward and corresponding action
        rewards, max_idxs = rewards.max(dim=1)
        actions = gather_by_index(actions, max_idxs, dim=max_idxs.dim())
        return actions, rewards

    @property
    def num_augment(self):
        return self.augmentation.num_augment


def get_automatic_batch_size(eval_fn, start_batch_size=8192, max_batch_size=4096):
    """Automatically reduces the batch size based on the eval function

    Args:
        eval_fn: The eval function
        start_batch_size: The starting batch size. This should be the theoretical maximum batch size
        max_batch_size: The maximum batch size. This is the practical maximum batch size
    """
    batch_size = start_batch_size

    effective_ratio = 1

    if hasattr(eval_fn, "num_starts"):
        batch_size = batch_size // (eval_fn.num_starts // 10)
        effective_ratio *= eval_fn.num_starts // 10
    if hasattr(eval_fn, "num_augment"):
        batch_size = batch_size // eval_fn.num_augment
        effective_ratio *= eval_fn.num_augment
    if hasattr(eval_fn, "samples"):
        batch_size = batch_size // eval_fn.samples
        effective_ratio *= eval_fn.samples

    batch_size = min(batch_size, max_batch_size)
    # get closest integer power of 2
    batch_size = 2 ** int(math.log2(batch_size))

    print(f"Effective batch size: {batch_size} (ratio: {effective_ratio})")

    return batch_size


def evaluate_policy(
    env,
    policy,
    dataset,
    method="greedy",
    batch_size=None,
    max_batch_size=4096,
    start_batch_size=8192,
    auto_batch_size=True,
    save_results=False,
    save_fname="results.npz",
    **kwargs,
):
    num_loc = getattr(env.generator, "num_loc", None)

    methods_mapping = {
        "greedy": {"func": GreedyEval, "kwargs": {}},
        "augment": {"func": AugmentationEval, "kwargs": {}},
        "augment_dihedral_8": {
            "func": AugmentationEval,
            "kwargs": {"num_augment": 8, "force_dihedral_8": True},
        },
    }

    assert method in methods_mapping, "Method {} not found".format(method)

    # Set up the evaluation function
    eval_settings = methods_mapping[method]
    func, kwargs_ = eval_settings["func"], eval_settings["kwargs"]
    # subsitute kwargs with the ones passed in
    kwargs_.update(kwargs)
    kwargs = kwargs_
    eval_fn = func(env, **kwargs)

    if auto_batch_size:
        assert (
            batch_size is None
        ), "Cannot set both batch_size and auto_batch_size to True"
        batch_size = get_automatic_batch_size(
            eval_fn, max_batch_size=max_batch_size, start_batch_size=start_batch_size
        )
        print("Using automatic batch size: {}".format(batch_size))

    # Set up the dataloader; halve the batch size on OOM instead of crashing the whole sweep
    while True:
        dataloader = torch.utils.data.DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=False,
            num_workers=0,
            collate_fn=dataset.collate_fn,
        )
        try:
            retvals = eval_fn(policy, dataloader)
            break
        except torch.cuda.OutOfMemoryError:
            if batch_size <= 1:
                raise
            torch.cuda.empty_cache()  # release the cached blocks of the failed attempt
            batch_size //= 2
            print(f"OOM, retrying with batch size {batch_size}")

    # Save results
    if save_results:
        print("Saving results to {}".format(save_fname))
        np.savez(save_fname, **retvals)

    return retvals


def load_tsplib_instance(path):
    """Read the NODE_COORD_SECTION of a TSPLIB file into a (1, n, 2) TensorDict, normalised to [0, 1]^2."""
    coords, reading = [], False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("NODE_COORD_SECTION"):
                reading = True
                continue
            if line in ("EOF", "") or not reading:
                continue
            _, x, y = line.split()[:3]
            coords.append((float(x), float(y)))
    locs = torch.tensor(coords, dtype=torch.float32)
    scale = (locs.max(0).values - locs.min(0).values).max()
    locs = (locs - locs.min(0).values) / scale
    return TensorDict({"locs": locs[None]}, batch_size=[1], device="cuda"), scale.item()


if __name__ == "__main__":
    import argparse
    import pickle

    from rl4co.envs import get_env

    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", type=str, default="tsp", help="Problem to solve")
    parser.add_argument("--generator-params", type=dict, default={"num_loc": 50}, help="Generator parameters for the environment")
    parser.add_argument("--data-path", type=str, default="data/tsp/tsp50_test_seed1234.npz", help="Path of the test data npz file")
    parser.add_argument("--tsplib", type=str, default=None, help="Evaluate on a single TSPLIB instance instead")
    parser.add_argument("--model", type=str, default="AttentionModel", help="The class name of the valid model")
    parser.add_argument("--ckpt-path", type=str, default="checkpoints/am-tsp50.ckpt", help="The path of the checkpoint file")
    parser.add_argument("--device", type=str, default="cuda:0", help="Device to run the evaluation")
    parser.add_argument("--method", type=str, default="greedy")
    parser.add_argument("--save-path", type=str, default="results", help="The path to save the solving results")

    opts = parser.parse_args()

    device = torch.device(opts.device)

    # Load the test data
    env = get_env(opts.problem, generator_params=opts.generator_params)

    # Load the model
    import rl4co.models as models

    model_class = getattr(models, opts.model)
    model = model_class.load_from_checkpoint(opts.ckpt_path, map_location=device, load_baseline=False)
    policy = model.policy.to(device).eval()

    if opts.tsplib is not None:
        td, scale = load_tsplib_instance(opts.tsplib)
        with torch.inference_mode():
            out = policy(env.reset(td), env, decode_type="greedy", return_actions=True)
        print(f"{opts.tsplib}: tour length {(-out['reward'].item()) * scale:.1f}")
    else:
        dataset = env.dataset(filename=opts.data_path)
        torch.cuda.reset_peak_memory_stats()
        results = evaluate_policy(env, policy, dataset, method=opts.method)
        print(f"Peak memory: {torch.cuda.max_memory_allocated() / 1024 ** 3:.2f} GB")
        with open(f"{opts.save_path}/{opts.problem}_{opts.method}.pkl", "wb") as f:
            pickle.dump(results, f)
