"""Self-play with a central GPU inference server.

N CPU self-play processes run MCTS and push leaf positions onto a shared request queue; one
inference process batches them, evaluates the network on the GPU and sends (policy, value) back
through per-worker pipes. Weights are reloaded from the latest checkpoint between generations.
"""
import os
import queue
import time

import numpy as np
import torch
import torch.multiprocessing as mp

from alphazero.game import Game
from alphazero.mcts import MCTS
from alphazero.network import PolicyValueNet

BATCH_SIZE = 256
MAX_WAIT = 0.002


class InferenceServer:
    def __init__(self, checkpoint, request_q, reply_pipes, gpu_id=0, use_fp16=True):
        self.checkpoint = checkpoint
        self.request_q = request_q
        self.reply_pipes = reply_pipes
        self.gpu_id = gpu_id
        self.use_fp16 = use_fp16

    def run(self):
        torch.cuda.set_device(self.gpu_id)
        device = torch.device(f"cuda:{self.gpu_id}")
        net = PolicyValueNet().to(device)
        net.load_state_dict(torch.load(self.checkpoint, map_location=device))
        net.eval()
        if self.use_fp16:
            net = net.half()
        torch.backends.cudnn.benchmark = True

        # pinned staging buffer for host->device copies
        staging = torch.empty((BATCH_SIZE, *Game.OBS_SHAPE), dtype=torch.float32).pin_memory()

        while True:
            ids, states = [], []
            deadline = time.time() + MAX_WAIT
            while len(ids) < BATCH_SIZE:
                try:
                    wid, state = self.request_q.get(timeout=max(0.0, deadline - time.time()))
                except queue.Empty:
                    break
                if wid is None:
                    return
                ids.append(wid)
                states.append(state)
            if not ids:
                continue
            n = len(ids)
            staging[:n].copy_(torch.from_numpy(np.stack(states)))
            x = staging[:n].cuda(non_blocking=True)
            if self.use_fp16:
                x = x.half()
            with torch.no_grad():
                log_pi, v = net(x)
            pi = log_pi.float().exp().cpu().numpy()
            v = v.float().cpu().numpy()
            for i, wid in enumerate(ids):
                self.reply_pipes[wid].send((pi[i], v[i, 0]))


def remote_evaluator(worker_id, request_q, pipe):
    def evaluate(state):
        request_q.put((worker_id, state))
        return pipe.recv()

    return evaluate


def selfplay_worker(worker_id, request_q, pipe, out_q, num_games, num_sims, seed):
    np.random.seed(seed + worker_id)
    torch.manual_seed(seed + worker_id)
    evaluate = remote_evaluator(worker_id, request_q, pipe)
    for _ in range(num_games):
        game = Game()
        mcts = MCTS(evaluate, num_sims=num_sims, c_puct=1.5, dirichlet_alpha=0.3)
        history = []
        while not game.is_over():
            pi = mcts.search(game, temperature=1.0 if game.move_count < 30 else 0.0)
            history.append((game.observation(), pi, game.to_play()))
            game.play(np.random.choice(len(pi), p=pi))
        z = game.outcome()
        out_q.put([(obs, pi, z if player == 0 else -z) for obs, pi, player in history])


def generate(checkpoint, num_workers=32, games_per_worker=4, num_sims=400, seed=0):
    mp.set_start_method("spawn", force=True)
    request_q = mp.Queue(maxsize=4 * BATCH_SIZE)
    out_q = mp.Queue()
    pipes = [mp.Pipe() for _ in range(num_workers)]
    gpu_id = int(os.environ.get("LOCAL_RANK", 0)) % max(1, torch.cuda.device_count())
    server = InferenceServer(checkpoint, request_q, [p[0] for p in pipes], gpu_id=gpu_id)
    server_proc = mp.Process(target=server.run, daemon=True)
    server_proc.start()
    workers = [
        mp.Process(target=selfplay_worker, args=(i, request_q, pipes[i][1], out_q, games_per_worker, num_sims, seed))
        for i in range(num_workers)
    ]
    for w in workers:
        w.start()
    samples = []
    for _ in range(num_workers * games_per_worker):
        samples.extend(out_q.get())
    for w in workers:
        w.join()
    request_q.put((None, None))
    server_proc.join(timeout=10)
    return samples


if __name__ == "__main__":
    data = generate("checkpoints/latest.pt")
    torch.save(data, "selfplay/latest.pt")
