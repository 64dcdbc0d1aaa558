import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from .tsp_nets import knn_graph, edge_logits_to_dense

__all__ = [
    'tsp_make_input', 'tsp_sample', 'tsp_greedy', 'tsp_evaluate', 'tsp_reinforce_grad',
    'tsp_inner_optimize', 'tsp_outer_step', 'tsp_softdist',
]


def tsp_make_input(coords, knn_k, device):
    """coords: numpy array (n, 2) -> (x, edge_index, edge_attr) on `device`."""
    x = torch.as_tensor(coords, dtype=torch.float32, device=device)
    edge_index, edge_attr = knn_graph(x, knn_k)
    return x, edge_index, edge_attr


def tour_length(x, tours):
    """x: (n, 2), tours: (b, n) long. Returns (b,) tour lengths."""
    pts = x[tours]
    return (pts - pts.roll(-1, dims=1)).norm(dim=-1).sum(-1)


@torch.no_grad()
def tsp_greedy(n, edge_index, theta, start=0):
    """Greedy decoding on the heatmap: always take the highest-scoring unvisited neighbour."""
    dense = edge_logits_to_dense(n, edge_index, theta)
    visited = torch.zeros(n, dtype=torch.bool, device=theta.device)
    tour = [start]
    visited[start] = True
    cur = start
    for _ in range(n - 1):
        scores = dense[cur].masked_fill(visited, -math.inf)
        if torch.isinf(scores).all():
            # KNN graph has no unvisited neighbour: fall back to the nearest unvisited city by index
            nxt = int((~visited).nonzero()[0])
        else:
            nxt = int(scores.argmax())
        tour.append(nxt)
        visited[nxt] = True
        cur = nxt
    return torch.tensor(tour, device=theta.device)


def tsp_sample(n, edge_index, theta, sample_size, start=None, greedy=False):
    """Autoregressive sampling of `sample_size` tours from the heatmap.

    Returns tours (b, n) and their log-probabilities (b,), differentiable w.r.t. theta.
    """
    device = theta.device
    dense = edge_logits_to_dense(n, edge_index, theta)
    b = sample_size
    if start is None:
        start = torch.randint(0, n, (b,), device=device)
    visited = torch.zeros(b, n, dtype=torch.bool, device=device)
    batch_idx = torch.arange(b, device=device)
    visited[batch_idx, start] = True
    cur = start
    tours = [start]
    logp = torch.zeros(b, device=device)
    for _ in range(n - 1):
        logits = dense[cur].masked_fill(visited, -math.inf)
        # rows with no unvisited KNN neighbour: uniform over unvisited cities
        dead = torch.isinf(logits).all(dim=-1)
        if dead.any():
            logits = torch.where(dead[:, None] & ~visited, torch.zeros_like(logits), logits)
        log_probs = F.log_softmax(logits, dim=-1)
        if greedy:
            nxt = log_probs.argmax(dim=-1)
        else:
            nxt = torch.multinomial(log_probs.exp(), 1).squeeze(-1)
        logp = logp + log_probs[batch_idx, nxt]
        visited[batch_idx, nxt] = True
        tours.append(nxt)
        cur = nxt
    return torch.stack(tours, dim=1), logp


def tsp_reinforce_grad(x, edge_index, theta, sample_size):
    """REINFORCE gradient of E[cost] w.r.t. the heatmap with a mean baseline."""
    n = x.size(0)
    tours, logp = tsp_sample(n, edge_index, theta, sample_size)
    with torch.no_grad():
        costs = tour_length(x, tours)
        adv = costs - costs.mean()
    loss = (adv * logp).mean()
    return loss, costs


def _make_inner_opt(name, params, lr, wd):
    if name == 'AdamW':
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    if name == 'Adam':
        return torch.optim.Adam(params, lr=lr, weight_decay=wd)
    if name == 'SGD':
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=wd)
    raise ValueError(f'unknown inner optimiser {name}')


def tsp_inner_optimize(net, x, edge_index, edge_attr, args, steps, lr, create_graph=False):
    """Per-instance fine-tuning of the heatmap (the 'inner loop' of meta-learning).

    With create_graph=True the returned theta stays connected to the network parameters so the outer
    step can differentiate through the inner updates (first-order otherwise).
    """
    theta = net(x, edge_index, edge_attr)
    best = math.inf
    for step in range(steps):
        loss, costs = tsp_reinforce_grad(x, edge_index, theta, args.tr_inner_sample_size)
        (g,) = torch.autograd.grad(loss, theta, create_graph=create_graph)
        theta = theta - lr * g
        best = min(best, costs.min().item())
    return theta, best


def tsp_outer_step(net, opt, batch, args):
    opt.zero_grad()
    total_loss = 0.
    bests = []
    for coords in batch:
        x, edge_index, edge_attr = tsp_make_input(coords, args.knn_k, args.device)
        theta, best = tsp_inner_optimize(net, x, edge_index, edge_attr, args,
                                         args.tr_inner_steps, args.tr_inner_lr, create_graph=False)
        loss, _ = tsp_reinforce_grad(x, edge_index, theta, args.tr_inner_sample_size)
        (loss / len(batch)).backward()
        total_loss += loss.item()
        bests.append(best)
        del theta, loss
        torch.cuda.empty_cache()
    torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    opt.step()
    return total_loss / len(batch), float(np.mean(bests))


def tsp_softdist(n, edge_index, theta, temp=1.0):
    """Row-softmax of the heatmap; used as the prior for MCTS."""
    dense = edge_logits_to_dense(n, edge_index, theta / temp)
    return torch.softmax(dense, dim=-1).nan_to_num(0.)


@torch.no_grad()
def tsp_evaluate(net, coords, args, sample_size=None):
    """Test-time: fine-tune on the instance, then greedy + sampling. Returns dict of costs and timing."""
    sample_size = sample_size or args.te_sample_size
    x, edge_index, edge_attr = tsp_make_input(coords, args.knn_k, args.device)
    n = x.size(0)
    t0 = time.time()
    with torch.enable_grad():
        theta, _ = tsp_inner_optimize(net, x, edge_index, edge_attr, args,
                                      args.te_inner_steps, args.te_inner_lr)
    theta = theta.detach()
    t_inner = time.time() - t0

    greedy_tour = tsp_greedy(n, edge_index, theta)
    greedy_cost = tour_length(x, greedy_tour[None])[0].item()
    tours, _ = tsp_sample(n, edge_index, theta, sample_size)
    sample_cost = tour_length(x, tours).min().item()
    return {
        'greedy': greedy_cost,
        'sample': sample_cost,
        'theta': theta.cpu(),
        'edge_index': edge_index.cpu(),
        't_inner': t_inner,
    }
