"""Intrinsically Motivated Goal Exploration (IMGEP) of Lenia parameters.

Each iteration samples a goal in a behavioural space (here: hand-defined
statistics of the final pattern), picks the nearest previously discovered
parameter set, mutates it, and rolls out the Lenia system. Optionally the
mutated parameters are refined by gradient descent through the differentiable
Lenia step (``--inner-optim``).

    python experiments/run_imgep.py --config experiments/config/imgep_lenia.yaml --seed 0
"""
import argparse
import json
import os
import pickle
import sys
import time

import numpy as np
import torch
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lenia.systems.lenia_torch import Lenia  # noqa: E402
from lenia.analysis.statistics import LeniaStatistics  # noqa: E402
from lenia.utils.kernels import random_patch  # noqa: E402

# all tensors (including the ones created inside Lenia) live on the GPU
torch.set_default_tensor_type("torch.cuda.FloatTensor")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="experiments/config/imgep_lenia.yaml")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-explorations", type=int, default=None)
    parser.add_argument("--out", type=str, default="results")
    parser.add_argument("--inner-optim", action="store_true")
    return parser.parse_args()


def set_seed(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def sample_parameters(rng, cfg):
    space = cfg["parameter_space"]
    n_rings = rng.integers(1, space["max_rings"] + 1)
    return {
        "R": int(rng.integers(space["R"][0], space["R"][1] + 1)),
        "T": float(rng.uniform(*space["T"])),
        "b": [float(x) for x in rng.uniform(0.0, 1.0, size=n_rings)],
        "m": float(rng.uniform(*space["m"])),
        "s": float(rng.uniform(*space["s"])),
        "kn": 0,
        "gn": 1,
    }


def mutate(params, rng, cfg):
    sigma = cfg["mutation"]
    p = dict(params)
    p["R"] = int(np.clip(p["R"] + rng.normal(0, sigma["R"]), *cfg["parameter_space"]["R"]))
    p["T"] = float(np.clip(p["T"] + rng.normal(0, sigma["T"]), *cfg["parameter_space"]["T"]))
    p["m"] = float(np.clip(p["m"] + rng.normal(0, sigma["m"]), *cfg["parameter_space"]["m"]))
    p["s"] = float(np.clip(p["s"] + rng.normal(0, sigma["s"]), *cfg["parameter_space"]["s"]))
    p["b"] = [float(np.clip(b + rng.normal(0, sigma["b"]), 0.0, 1.0)) for b in p["b"]]
    return p


def inner_optimisation(system, params, init_state, goal, stats, cfg):
    """Refine m and s by gradient descent towards the goal embedding."""
    m = torch.tensor(params["m"], requires_grad=True)
    s = torch.tensor(params["s"], requires_grad=True)
    opt = torch.optim.Adam([m, s], lr=cfg["inner_optim"]["lr"])
    goal_t = torch.as_tensor(goal)
    for _ in range(cfg["inner_optim"]["steps"]):
        p = dict(params, m=m, s=s)
        system.reset(init_state, p)
        x = system.state
        for _ in range(cfg["inner_optim"]["rollout"]):
            x = system.step_fn(x)
        emb = stats.embed_torch(x)
        loss = ((emb - goal_t) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    params = dict(params, m=float(m.detach()), s=float(s.detach().clamp(min=1e-3)))
    return params


def diversity(embeddings, n_bins=20):
    """Number of occupied cells of a regular grid over the (normalised) goal space,
    the usual diversity measure reported for IMGEP vs random search."""
    e = np.asarray(embeddings, dtype=np.float64)
    if len(e) == 0:
        return 0
    lo = e.min(axis=0)
    hi = e.max(axis=0)
    norm = (e - lo) / np.maximum(hi - lo, 1e-8)
    cells = np.floor(norm * (n_bins - 1)).astype(np.int64)
    return len({tuple(c) for c in cells})


def plot_history(history, out_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    emb = np.stack(history["embeddings"])
    alive = np.asarray(history["alive"])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    axes[0].scatter(emb[:, 0], emb[:, 2], c=alive, s=3, cmap="coolwarm")
    axes[0].set_xlabel("mass")
    axes[0].set_ylabel("spread")
    axes[1].plot(np.cumsum(alive))
    axes[1].set_title("cumulative alive patterns")
    div = [diversity(emb[: i + 1]) for i in range(0, len(emb), max(1, len(emb) // 100))]
    axes[2].plot(div)
    axes[2].set_title("diversity (occupied bins)")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "history.png"), dpi=120)
    plt.close(fig)


def render_discoveries(system, history, out_dir, n=16, rng=None):
    """Re-run a random subset of alive discoveries and save their final states."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0) if rng is None else rng
    alive_idx = [i for i, a in enumerate(history["alive"]) if a]
    if not alive_idx:
        return
    pick = rng.choice(alive_idx, size=min(n, len(alive_idx)), replace=False)
    cols = 4
    rows = int(np.ceil(len(pick) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3 * cols, 3 * rows))
    for ax, i in zip(np.atleast_1d(axes).ravel(), pick):
        init = random_patch(system.config["SX"], 64, rng=np.random.default_rng(int(i)))
        system.reset(init, history["params"][i])
        final = system.run()[-1]
        ax.imshow(final.float().cpu().numpy().squeeze(), cmap="viridis", vmin=0, vmax=1)
        ax.set_title("#%d R=%d" % (i, history["params"][i]["R"]), fontsize=8)
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "discoveries.png"), dpi=120)
    plt.close(fig)


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    n_expl = args.n_explorations or cfg["n_explorations"]
    set_seed(args.seed)
    rng = np.random.default_rng(args.seed)

    out_dir = os.path.join(args.out, "imgep_seed%d" % args.seed)
    os.makedirs(out_dir, exist_ok=True)

    system = Lenia(cfg["system"])
    stats = LeniaStatistics(cfg["system"]["SX"], cfg["system"]["SY"])

    history = {"params": [], "embeddings": [], "alive": []}
    t0 = time.time()
    for i in range(n_expl):
        init_state = random_patch(cfg["system"]["SX"], cfg["init_patch_size"], rng=rng)
        if i < cfg["n_random_init"]:
            params = sample_parameters(rng, cfg)
        else:
            goal = stats.sample_goal(rng, np.stack(history["embeddings"]))
            dists = np.linalg.norm(np.stack(history["embeddings"]) - goal[None], axis=1)
            source = history["params"][int(np.argmin(dists))]
            params = mutate(source, rng, cfg)
            if args.inner_optim:
                params = inner_optimisation(system, params, init_state, goal, stats, cfg)

        system.reset(init_state, params)
        observations = system.run()
        final = observations[-1]
        emb = stats.embed(final)
        alive = bool(system.animals_alive().all().item())

        history["params"].append(params)
        history["embeddings"].append(emb)
        history["alive"].append(alive)

        if i % cfg["log_every"] == 0:
            n_alive = sum(history["alive"])
            print(
                "[%5d/%d] %.1fs  alive %d  R=%d T=%.1f m=%.3f s=%.4f  gpu %.0fMB"
                % (i, n_expl, time.time() - t0, n_alive, params["R"], params["T"], params["m"], params["s"],
                   torch.cuda.memory_allocated() / 2 ** 20)
            )
        if i % cfg["save_every"] == 0:
            with open(os.path.join(out_dir, "history.pkl"), "wb") as f:
                pickle.dump(history, f)
            torch.cuda.empty_cache()

    with open(os.path.join(out_dir, "history.pkl"), "wb") as f:
        pickle.dump(history, f)
    summary = {"n": n_expl, "alive": int(sum(history["alive"])), "time_s": time.time() - t0,
               "diversity": diversity(history["embeddings"])}
    plot_history(history, out_dir)
    render_discoveries(system, history, out_dir)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
