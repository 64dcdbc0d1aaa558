"""Train MeshGraphNets on the CylinderFlow (flow past cylinder) dataset.

PyTorch re-implementation of "Learning Mesh-Based Simulation with Graph Networks"
(Pfaff et al., ICLR 2021). The dataset must first be converted from TFRecord to
HDF5 with `parse_tfrecord.py`.

    python train.py --dataset_dir data/cylinder_flow/h5 --batch_size 20 --print_batch 10
"""
import argparse
import os
import time

import numpy as np
import torch
import torch_geometric.transforms as T
from torch.cuda.amp import GradScaler, autocast
from torch.utils.tensorboard import SummaryWriter
from torch_geometric.loader import DataLoader

from dataset import FPC
from model.simulator import Simulator
from utils.noise import get_velocity_noise
from utils.utils import NodeType

parser = argparse.ArgumentParser(description="Implementation of MeshGraphNets")
parser.add_argument("--gpu", type=int, default=0, help="gpu number: 0 or 1")
parser.add_argument("--model_dir", type=str, default="checkpoint/simulator.pth")
parser.add_argument("--dataset_dir", type=str, default="data/cylinder_flow/h5")
parser.add_argument("--batch_size", type=int, default=20)
parser.add_argument("--max_epoch", type=int, default=1000)
parser.add_argument("--noise_std", type=float, default=2e-2)
parser.add_argument("--print_batch", type=int, default=10)
parser.add_argument("--save_batch", type=int, default=200)
parser.add_argument("--message_passing_num", type=int, default=15)
parser.add_argument("--lr", type=float, default=1e-4)
parser.add_argument("--amp", action="store_true", help="train with torch.cuda.amp (fp16 autocast + GradScaler)")
parser.add_argument("--resume", action="store_true")
args = parser.parse_args()

batch_size = args.batch_size
noise_std = args.noise_std
print_batch = args.print_batch
save_batch = args.save_batch

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

device = torch.device("cuda")
torch.cuda.set_device(args.gpu)

simulator = Simulator(
    message_passing_num=args.message_passing_num,
    node_input_size=11,
    edge_input_size=3,
    device=device,
)
optimizer = torch.optim.Adam(simulator.parameters(), lr=args.lr)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.1 ** (1 / 5e6))
scaler = GradScaler(enabled=args.amp)
print("Optimizer initialized")

writer = SummaryWriter(log_dir=os.path.join(os.path.dirname(args.model_dir), "logs"))


def train(model: Simulator, dataloader, optimizer, epoch, global_step):
    model.train()
    t0 = time.time()
    for batch_index, graph in enumerate(dataloader):
        graph = transformer(graph)
        graph = graph.cuda(non_blocking=True)

        node_type = graph.x[:, 0]  # "node_type, cur_v, pressure, time"
        velocity_sequence_noise = get_velocity_noise(graph, noise_std=noise_std, device=device)

        with autocast(enabled=args.amp):
            predicted_acc, target_acc = model(graph, velocity_sequence_noise)
            mask = torch.logical_or(node_type == NodeType.NORMAL, node_type == NodeType.OUTFLOW)
            errors = ((predicted_acc - target_acc) ** 2)[mask]
            loss = torch.mean(errors)

        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        global_step += 1

        if batch_index % print_batch == 0:
            mem = torch.cuda.max_memory_allocated() / 1024 ** 2
            print(
                "epoch: %d  batch: %d  loss: %.2e  lr: %.2e  %.2fs/it  max mem %.0f MB"
                % (epoch, batch_index, loss.item(), scheduler.get_last_lr()[0],
                   (time.time() - t0) / print_batch, mem)
            )
            writer.add_scalar("train/loss", loss.item(), global_step)
            t0 = time.time()

        if batch_index % save_batch == 0:
            model.save_checkpoint(args.model_dir)
            torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                        "scaler": scaler.state_dict(), "step": global_step},
                       args.model_dir.replace(".pth", "_opt.pth"))
    return global_step


@torch.no_grad()
def validate(model: Simulator, dataloader):
    model.eval()
    losses = []
    for graph in dataloader:
        graph = transformer(graph).to(device)
        node_type = graph.x[:, 0]
        predicted_acc, target_acc = model(graph, None)
        mask = torch.logical_or(node_type == NodeType.NORMAL, node_type == NodeType.OUTFLOW)
        losses.append(torch.mean(((predicted_acc - target_acc) ** 2)[mask]).item())
    model.train()
    return float(np.mean(losses))


if __name__ == "__main__":
    dataset_fpc = FPC(dataset_dir=args.dataset_dir, split="train", max_epochs=50)
    valid_fpc = FPC(dataset_dir=args.dataset_dir, split="valid", max_epochs=1)
    train_loader = DataLoader(dataset=dataset_fpc, batch_size=batch_size, num_workers=10, pin_memory=True)
    valid_loader = DataLoader(dataset=valid_fpc, batch_size=batch_size, num_workers=4)
    transformer = T.Compose([T.FaceToEdge(), T.Cartesian(norm=False), T.Distance(norm=False)])

    global_step = 0
    if args.resume and os.path.exists(args.model_dir):
        simulator.load_checkpoint(args.model_dir)
        opt_state = torch.load(args.model_dir.replace(".pth", "_opt.pth"), map_location="cuda")
        optimizer.load_state_dict(opt_state["optimizer"])
        scheduler.load_state_dict(opt_state["scheduler"])
        scaler.load_state_dict(opt_state["scaler"])
        global_step = opt_state["step"]
        print(f"Resumed from step {global_step}")

    for epoch in range(args.max_epoch):
        global_step = train(simulator, train_loader, optimizer, epoch, global_step)
        val = validate(simulator, valid_loader)
        writer.add_scalar("valid/loss", val, global_step)
        print(f"epoch {epoch}: valid loss {val:.3e}")
        torch.cuda.empty_cache()
