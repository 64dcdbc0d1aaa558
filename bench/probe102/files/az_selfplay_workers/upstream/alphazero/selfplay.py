"""
Self-play driver: N CPU worker processes run MCTS and send leaf evaluations to the
GPU inference servers (see inference_server.py). Finished games are written as
compressed .npz shards that the trainer picks up.

    python -m alphazero.selfplay --game connect4 --workers 48 --sims 400 --out data/selfplay

Use --local-eval to run everything in one process without servers (slow, but handy
under a debugger).
"""
import argparse
import logging
import math
import os
import random
import time
import uuid

import numpy as np
import torch
import torch.multiprocessing as mp

from . import games
from .inference_server import ServerConfig, start_servers, publish_weights, shutdown
from .model import build_model

log = logging.getLogger("selfplay")


class Node:
    __slots__ = ("prior", "visit_count", "value_sum", "children", "to_play")

    def __init__(self, prior: float, to_play: int):
        self.prior = prior
        self.visit_count = 0
        self.value_sum = 0.0
        self.children = {}
        self.to_play = to_play

    def expanded(self):
        return len(self.children) > 0

    def value(self):
        return 0.0 if self.visit_count == 0 else self.value_sum / self.visit_count


class RemoteEvaluator:
    """Evaluates positions through the shared slots of an inference server.

    Nothing in here touches the accelerator: `cuda_slots` is the SharedSlots object
    whose *input* side is ordinary host shared memory.
    """

    def __init__(self, worker_id, cuda_slots, gpu_request_q):
        self.worker_id = worker_id
        self.cuda_slots = cuda_slots
        self.gpu_request_q = gpu_request_q

    def __call__(self, encoded):
        self.cuda_slots.write_request(self.worker_id, encoded)
        self.gpu_request_q.put(self.worker_id)
        return self.cuda_slots.read_result(self.worker_id)


class LocalEvaluator:
    """In-process evaluation, used with --local-eval."""

    def __init__(self, model_cfg, weights_path):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model = build_model(model_cfg)
        state = torch.load(weights_path, map_location=self.device)
        self.model.load_state_dict(state["model"])
        self.model.to(self.device).eval()

    @torch.no_grad()
    def __call__(self, encoded):
        x = torch.from_numpy(encoded).unsqueeze(0).to(self.device)
        logits, v = self.model(x)
        return torch.softmax(logits, dim=1)[0].cpu().numpy(), float(v.item())


def run_mcts(game, state, evaluate, num_simulations, c_puct=1.5, dirichlet_alpha=0.3, noise_frac=0.25):
    root = Node(1.0, game.to_play(state))
    policy, _ = evaluate(game.encode(state))
    legal = game.legal_actions(state)
    priors = policy[legal]
    priors = priors / max(priors.sum(), 1e-8)
    noise = np.random.dirichlet([dirichlet_alpha] * len(legal))
    for a, p, n in zip(legal, priors, noise):
        root.children[a] = Node((1 - noise_frac) * p + noise_frac * n, -root.to_play)

    for _ in range(num_simulations):
        node = root
        sim_state = game.clone(state)
        path = [node]
        while node.expanded():
            total = math.sqrt(node.visit_count + 1)
            best, best_score = None, -float("inf")
            for a, child in node.children.items():
                u = c_puct * child.prior * total / (1 + child.visit_count)
                score = -child.value() + u
                if score > best_score:
                    best, best_score = a, score
            sim_state = game.step(sim_state, best)
            node = node.children[best]
            path.append(node)

        terminal, outcome = game.terminal(sim_state)
        if terminal:
            value = outcome * game.to_play(sim_state)
        else:
            policy, value = evaluate(game.encode(sim_state))
            legal = game.legal_actions(sim_state)
            p = policy[legal]
            p = p / max(p.sum(), 1e-8)
            for a, prior in zip(legal, p):
                node.children[a] = Node(float(prior), -node.to_play)

        for n in reversed(path):
            n.value_sum += value
            n.visit_count += 1
            value = -value

    visits = np.zeros(game.num_actions, dtype=np.float32)
    for a, child in root.children.items():
        visits[a] = child.visit_count
    return visits


def play_game(game, evaluate, args):
    state = game.initial_state()
    history = []
    move = 0
    while True:
        terminal, outcome = game.terminal(state)
        if terminal:
            break
        visits = run_mcts(game, state, evaluate, args.sims)
        pi = visits / visits.sum()
        if move < args.temp_moves:
            action = int(np.random.choice(len(pi), p=pi))
        else:
            action = int(np.argmax(pi))
        history.append((game.encode(state), pi, game.to_play(state)))
        state = game.step(state, action)
        move += 1
    # outcome is from player +1's perspective
    boards = np.stack([h[0] for h in history])
    policies = np.stack([h[1] for h in history])
    values = np.array([outcome * h[2] for h in history], dtype=np.float32)
    return boards, policies, values


def worker_main(worker_id, args, cuda_slots, gpu_request_q, games_done):
    seed = args.seed * 1000 + worker_id
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.set_num_threads(1)

    game = games.make(args.game)
    evaluate = RemoteEvaluator(worker_id, cuda_slots, gpu_request_q)
    os.makedirs(args.out, exist_ok=True)

    buf_b, buf_p, buf_v = [], [], []
    while games_done.value < args.num_games:
        b, p, v = play_game(game, evaluate, args)
        buf_b.append(b)
        buf_p.append(p)
        buf_v.append(v)
        with games_done.get_lock():
            games_done.value += 1
        if len(buf_b) >= args.games_per_shard:
            path = os.path.join(args.out, f"{uuid.uuid4().hex}.npz")
            np.savez_compressed(path, boards=np.concatenate(buf_b), policies=np.concatenate(buf_p),
                                values=np.concatenate(buf_v))
            buf_b, buf_p, buf_v = [], [], []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", default="connect4")
    parser.add_argument("--workers", type=int, default=48)
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--num-games", type=int, default=10000)
    parser.add_argument("--games-per-shard", type=int, default=8)
    parser.add_argument("--temp-moves", type=int, default=12)
    parser.add_argument("--weights", default="checkpoints/latest.pt")
    parser.add_argument("--out", default="data/selfplay")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gpus", default=None, help="comma separated GPU ids for the inference servers (default: all)")
    parser.add_argument("--max-batch", type=int, default=512)
    parser.add_argument("--fp16", action="store_true", help="run the servers in half precision")
    parser.add_argument("--local-eval", action="store_true")
    args = parser.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(processName)s %(message)s")
    game = games.make(args.game)
    model_cfg = games.default_model_cfg(args.game)

    if args.local_eval:
        evaluate = LocalEvaluator(model_cfg, args.weights)
        t0 = time.time()
        b, p, v = play_game(game, evaluate, args)
        log.info("local game: %d moves in %.1fs", len(v), time.time() - t0)
        return

    mp.set_start_method("spawn", force=True)
    cfg = ServerConfig(
        max_batch=args.max_batch,
        use_fp16=args.fp16,
        gpus=[int(g) for g in args.gpus.split(",")] if args.gpus else None,
        weights_path=args.weights,
        model_cfg=model_cfg,
    )
    slots, request_queues, weights_queues, servers, stop_event = start_servers(
        cfg, args.workers, game.encoded_shape, game.num_actions
    )
    games_done = mp.Value("i", 0)
    workers = []
    for wid in range(args.workers):
        q = request_queues[wid % len(request_queues)]
        p = mp.Process(target=worker_main, args=(wid, args, slots, q, games_done), name=f"worker{wid}")
        p.start()
        workers.append(p)

    last_weights = os.path.getmtime(args.weights)
    try:
        while any(p.is_alive() for p in workers):
            time.sleep(5)
            log.info("games done: %d / %d", games_done.value, args.num_games)
            mtime = os.path.getmtime(args.weights)
            if mtime != last_weights:
                publish_weights(weights_queues, args.weights)
                last_weights = mtime
    finally:
        for p in workers:
            p.join()
        shutdown(servers, stop_event)


if __name__ == "__main__":
    main()
