"""
Multi-GPU metric learning on MNIST with pytorch-metric-learning.

Each process computes embeddings for its shard of the batch; DistributedLossWrapper
all-gathers the embeddings (keeping gradients for the local part) so that the
triplet miner sees the whole global batch.

    python examples/distributed/train_mnist_ddp.py --epochs 3 --batch-size 256
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torchvision import datasets, transforms

from pytorch_metric_learning import distances, losses, miners, reducers, testers
from pytorch_metric_learning.utils import distributed as pml_dist
from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator


def setup(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(port)
    # surface NCCL errors (e.g. a rank dying inside all_gather) instead of hanging forever
    os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"
    # initialize the process group
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class Net(nn.Module):
    def __init__(self, embedding_size=128):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.bn = nn.BatchNorm2d(64)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, embedding_size)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = self.bn(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        return x


def train(model, loss_func, mining_func, device, train_loader, optimizer, epoch, rank):
    model.train()
    for batch_idx, (data, labels) in enumerate(train_loader):
        data, labels = data.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad()
        embeddings = model(data)
        indices_tuple = mining_func(embeddings, labels)
        loss = loss_func(embeddings, labels, indices_tuple)
        loss.backward()
        optimizer.step()
        if batch_idx % 20 == 0 and rank == 0:
            print(
                "Epoch {} Iteration {}: Loss = {}, Number of mined triplets = {}".format(
                    epoch, batch_idx, loss, mining_func.miner.num_triplets
                )
            )


# convenient function from pytorch-metric-learning
def get_all_embeddings(dataset, model):
    tester = testers.BaseTester()
    return tester.get_all_embeddings(dataset, model)


# compute accuracy using AccuracyCalculator from pytorch-metric-learning
def test(train_set, test_set, model, accuracy_calculator):
    train_embeddings, train_labels = get_all_embeddings(train_set, model)
    test_embeddings, test_labels = get_all_embeddings(test_set, model)
    train_labels = train_labels.squeeze(1)
    test_labels = test_labels.squeeze(1)
    print("Computing accuracy")
    accuracies = accuracy_calculator.get_accuracy(
        test_embeddings, test_labels, train_embeddings, train_labels, False
    )
    print("Test set accuracy (Precision@1) = {}".format(accuracies["precision_at_1"]))


def demo_basic(rank, world_size, args):
    setup(rank, world_size, args.port)
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    torch.manual_seed(args.seed + rank)
    np.random.seed(args.seed + rank)

    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]
    )
    dataset1 = datasets.MNIST(args.data_dir, train=True, download=rank == 0, transform=transform)
    dist.barrier()
    dataset2 = datasets.MNIST(args.data_dir, train=False, transform=transform)

    train_sampler = torch.utils.data.distributed.DistributedSampler(
        dataset1, num_replicas=world_size, rank=rank, shuffle=True
    )
    train_loader = torch.utils.data.DataLoader(
        dataset1,
        batch_size=args.batch_size // world_size,
        sampler=train_sampler,
        num_workers=4,
        pin_memory=True,
        drop_last=True,
    )

    model = Net(args.embedding_size).to(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    ddp_model = DDP(model, device_ids=[rank])
    optimizer = optim.Adam(ddp_model.parameters(), lr=args.lr)

    ### pytorch-metric-learning stuff ###
    distance = distances.CosineSimilarity()
    reducer = reducers.ThresholdReducer(low=0)
    loss_func = losses.TripletMarginLoss(margin=0.2, distance=distance, reducer=reducer)
    loss_func = pml_dist.DistributedLossWrapper(loss=loss_func, efficient=True)
    mining_func = miners.TripletMarginMiner(
        margin=0.2, distance=distance, type_of_triplets="semihard"
    )
    mining_func = pml_dist.DistributedMinerWrapper(miner=mining_func, efficient=True)
    accuracy_calculator = AccuracyCalculator(include=("precision_at_1",), k=1)
    ### pytorch-metric-learning stuff ###

    for epoch in range(1, args.epochs + 1):
        train_sampler.set_epoch(epoch)
        train(ddp_model, loss_func, mining_func, device, train_loader, optimizer, epoch, rank)
        if rank == 0:
            test(dataset1, dataset2, ddp_model.module, accuracy_calculator)
        dist.barrier()

    if rank == 0 and args.save_path:
        torch.save(ddp_model.module.state_dict(), args.save_path)
    cleanup()


def parse_args():
    parser = argparse.ArgumentParser(description="PML distributed MNIST example")
    parser.add_argument("--data-dir", type=str, default="./mnist")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--embedding-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--port", type=int, default=12355)
    parser.add_argument("--save-path", type=str, default="")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    world_size = torch.cuda.device_count()
    assert world_size >= 1, "this example needs at least one GPU"
    print("Spawning {} processes".format(world_size))
    mp.spawn(demo_basic, args=(world_size, args), nprocs=world_size, join=True)
