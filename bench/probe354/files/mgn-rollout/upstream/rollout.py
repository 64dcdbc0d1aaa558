"""Roll out a trained MeshGraphNets simulator on the CylinderFlow test split.

    python rollout.py --gpu 0 --model_dir checkpoint/simulator.pth --test_split test --rollout_num 5
"""
import argparse
import os
import pickle
import time

import numpy as np
import torch
import torch_geometric.transforms as T
from torch_geometric.loader import DataLoader
from tqdm import tqdm

from dataset import FPC_ROLLOUT
from model.simulator import Simulator
from utils.utils import NodeType

parser = argparse.ArgumentParser(description="Implementation of MeshGraphNets")
parser.add_argument("--gpu", type=int, default=0, help="gpu number: 0 or 1")
parser.add_argument("--model_dir", type=str, default="checkpoint/simulator.pth")
parser.add_argument("--dataset_dir", type=str, default="data/cylinder_flow/h5")
parser.add_argument("--test_split", type=str, default="test")
parser.add_argument("--rollout_num", type=int, default=1)
parser.add_argument("--save_dir", type=str, default="result")
parser.add_argument("--profile", action="store_true", help="report per-step latency with CUDA events")
args = parser.parse_args()

# gpu devices
torch.cuda.set_device(args.gpu)


def rollout_error(predicteds, targets):
    number_len = targets.shape[0]
    squared_diff = np.square(predicteds - targets).reshape(number_len, -1)
    loss = np.sqrt(np.cumsum(np.mean(squared_diff, axis=1), axis=0) / np.arange(1, number_len + 1))

    for show_step in range(0, 1000000, 50):
        if show_step < number_len:
            print("testing rmse  @ step %d loss: %.2e" % (show_step, loss[show_step]))
        else:
            break

    return loss


@torch.no_grad()
def rollout(model, dataloader, rollout_index=1):
    dataset.change_file(rollout_index)

    predicted_velocity = None
    mask = None
    predicteds = []
    targets = []
    step_times = []

    for graph in tqdm(dataloader, total=600):
        graph = transformer(graph)
        graph = graph.cuda()

        if mask is None:
            node_type = graph.x[:, 0]
            mask = torch.logical_or(node_type == NodeType.NORMAL, node_type == NodeType.OUTFLOW)
            mask = torch.logical_not(mask)

        if predicted_velocity is not None:
            graph.x[:, 1:3] = predicted_velocity.detach()

        next_v = graph.y
        if args.profile:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
        predicted_velocity = model(graph, velocity_sequence_noise=None)
        if args.profile:
            end.record()
            torch.cuda.synchronize()
            step_times.append(start.elapsed_time(end))

        predicted_velocity[mask] = next_v[mask]

        predicteds.append(predicted_velocity.detach().cpu().numpy())
        targets.append(next_v.detach().cpu().numpy())

    crds = graph.pos.cpu().numpy()
    result = [np.stack(predicteds), np.stack(targets)]

    os.makedirs(args.save_dir, exist_ok=True)
    with open(os.path.join(args.save_dir, "result" + str(rollout_index) + ".pkl"), "wb") as f:
        pickle.dump([result, crds], f)

    if step_times:
        print("mean step latency: %.2f ms (GPU %s)" % (np.mean(step_times[10:]), torch.cuda.get_device_name(args.gpu)))

    return result


if __name__ == "__main__":
    simulator = Simulator(message_passing_num=15, node_input_size=11, edge_input_size=3, device=torch.device("cuda"))
    simulator.load_checkpoint(args.model_dir)
    simulator.eval()

    dataset = FPC_ROLLOUT(args.dataset_dir, split=args.test_split)
    transformer = T.Compose([T.FaceToEdge(), T.Cartesian(norm=False), T.Distance(norm=False)])
    test_loader = DataLoader(dataset=dataset, batch_size=1)

    t0 = time.time()
    for i in range(args.rollout_num):
        result = rollout(simulator, test_loader, rollout_index=i)
        print("------------------------------------------------------------------")
        rollout_error(result[0], result[1])
    print("total rollout wall time: %.1fs" % (time.time() - t0))
