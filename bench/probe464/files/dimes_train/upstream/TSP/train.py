import os
import sys
import time
import random
import pickle
import subprocess

import numpy as np
import torch

from inc.tsp_args import args_init, args_to_str
from inc.tsp_nets import Net
from inc.tsp_core import tsp_outer_step, tsp_evaluate, tsp_softdist


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def load_instances(path):
    """Test files are one instance per line: x1 y1 x2 y2 ... output t1 t2 ..."""
    insts = []
    with open(path) as f:
        for line in f:
            toks = line.strip().split(' output ')[0].split()
            arr = np.array(toks, dtype=np.float32).reshape(-1, 2)
            insts.append(arr)
    return insts


def random_batch(batch_size, n_nodes, rng):
    return [rng.random((n_nodes, 2)).astype(np.float32) for _ in range(batch_size)]


def write_heatmap(path, theta, edge_index, n):
    dense = np.zeros((n, n), dtype=np.float32)
    ei = edge_index.numpy()
    dense[ei[0], ei[1]] = theta.numpy()
    with open(path, 'w') as f:
        f.write(f'{n}\n')
        for i in range(n):
            f.write(' '.join(f'{v:.6f}' for v in dense[i]) + '\n')


def run_mcts(heatmap_dir, n_nodes, n_insts, time_limit=0.1):
    """The MCTS refinement is the Att-GCN+MCTS C++ code (CPU only); it reads heatmaps from disk."""
    cmd = ['./mcts/bin/solve-tsp', str(n_nodes), str(n_insts), heatmap_dir, str(time_limit)]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def train(args, net):
    opt = torch.optim.AdamW(net.parameters(), lr=args.outer_lr, weight_decay=args.outer_wd)
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    log = []
    t0 = time.time()
    for step in range(1, args.tr_outer_steps + 1):
        batch = random_batch(args.tr_batch_size, args.n_nodes, rng)
        torch.cuda.reset_peak_memory_stats()
        loss, best = tsp_outer_step(net, opt, batch, args)
        log.append((step, loss, best))
        if step % args.log_every == 0:
            mem = torch.cuda.max_memory_allocated() / 2 ** 30
            print(f'[step {step:5d}] loss={loss:.4f} inner-best={best:.4f} '
                  f'mem={mem:.2f}GiB elapsed={time.time() - t0:.0f}s', flush=True)
        if step % args.ckpt_every == 0 or step == args.tr_outer_steps:
            path = os.path.join(args.output_dir, f'{args.save_name}~step{step}.pt')
            torch.save(net.state_dict(), path)
            print(f'  saved {path}')
    with open(os.path.join(args.output_dir, f'{args.save_name}~log.pkl'), 'wb') as f:
        pickle.dump(log, f)


def test(args, net):
    insts = load_instances(os.path.join(args.data_dir, f'tsp{args.n_nodes}_test_concorde.txt'))
    if args.te_range is not None:
        lo, hi = map(int, args.te_range.split(':'))
        insts = insts[lo:hi]
    heatmap_dir = os.path.join(args.output_dir, 'heatmaps', args.save_name)
    os.makedirs(heatmap_dir, exist_ok=True)

    greedy, sample, times = [], [], []
    for i, coords in enumerate(insts):
        torch.cuda.synchronize()
        t0 = time.time()
        res = tsp_evaluate(net, coords, args)
        torch.cuda.synchronize(args.device)
        times.append(time.time() - t0)
        greedy.append(res['greedy'])
        sample.append(res['sample'])
        if args.te_mcts:
            n = coords.shape[0]
            theta = tsp_softdist(n, res['edge_index'], res['theta'])
            write_heatmap(os.path.join(heatmap_dir, f'heatmap{i}.txt'), theta[res['edge_index'][0], res['edge_index'][1]],
                          res['edge_index'], n)
        print(f'[{i:4d}] greedy={res["greedy"]:.4f} sample={res["sample"]:.4f} time={times[-1]:.2f}s', flush=True)

    print(f'avg greedy = {np.mean(greedy):.4f}, avg sample = {np.mean(sample):.4f}, total time = {np.sum(times):.1f}s')
    if args.te_mcts:
        print(run_mcts(heatmap_dir, args.n_nodes, len(insts)))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ('train', 'test') else 'train'
    if len(sys.argv) > 1 and sys.argv[1] in ('train', 'test'):
        del sys.argv[1]
    args = args_init(n_nodes=500, knn_k=50, outer_opt='AdamW',
                     outer_opt_kwargs=dict(lr=1e-3, weight_decay=5e-4))
    print(args_to_str(args))
    set_seed(args.seed)

    args.device = torch.device(args.device)
    net = Net(args).to(args.device)
    print(f'#params = {net.num_parameters()}')

    if args.te_net_load is not None:
        net.load_state_dict(torch.load(args.te_net_load, map_location=args.device))

    if mode == 'train':
        train(args, net)
    else:
        net.eval()
        test(args, net)


if __name__ == '__main__':
    main()
