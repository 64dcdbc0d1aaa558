import argparse
import socket
import time
from contextlib import contextmanager

import dgl
import dgl.nn.pytorch as dglnn
import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class DistSAGE(nn.Module):
    def __init__(self, in_feats, n_hidden, n_classes, n_layers, activation, dropout):
        super().__init__()
        self.n_layers = n_layers
        self.n_hidden = n_hidden
        self.n_classes = n_classes
        self.layers = nn.ModuleList()
        self.layers.append(dglnn.SAGEConv(in_feats, n_hidden, "mean"))
        for i in range(1, n_layers - 1):
            self.layers.append(dglnn.SAGEConv(n_hidden, n_hidden, "mean"))
        self.layers.append(dglnn.SAGEConv(n_hidden, n_classes, "mean"))
        self.dropout = nn.Dropout(dropout)
        self.activation = activation

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.activation(h)
                h = self.dropout(h)
        return h


def compute_acc(pred, labels):
    labels = labels.long()
    return (th.argmax(pred, dim=1) == labels).float().sum() / len(pred)


def load_subtensor(g, seeds, input_nodes, device, load_feat=True):
    """Copies features and labels of a set of nodes onto GPU."""
    batch_inputs = g.ndata["features"][input_nodes].to(device) if load_feat else None
    batch_labels = g.ndata["labels"][seeds].to(device)
    return batch_inputs, batch_labels


@contextmanager
def timer(name, stats):
    tic = time.time()
    yield
    stats[name] = stats.get(name, 0.0) + time.time() - tic


def run(args, device, data):
    train_nid, val_nid, test_nid, in_feats, n_classes, g = data
    shuffle = True
    sampler = dgl.dataloading.NeighborSampler([int(fanout) for fanout in args.fan_out.split(",")])
    dataloader = dgl.dataloading.DistNodeDataLoader(
        g,
        train_nid,
        sampler,
        batch_size=args.batch_size,
        shuffle=shuffle,
        drop_last=False,
    )
    model = DistSAGE(in_feats, args.num_hidden, n_classes, args.num_layers, F.relu, args.dropout)
    model = model.to(device)
    if not args.standalone:
        if args.num_gpus == -1:
            model = th.nn.parallel.DistributedDataParallel(model)
        else:
            model = th.nn.parallel.DistributedDataParallel(model, device_ids=[device], output_device=device)
    loss_fcn = nn.CrossEntropyLoss()
    loss_fcn = loss_fcn.to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.num_epochs):
        stats = {}
        tic = time.time()
        num_seeds = 0
        num_inputs = 0
        step_time = []
        with model.join():
            for step, (input_nodes, seeds, blocks) in enumerate(dataloader):
                tic_step = time.time()
                with timer("sample+copy", stats):
                    batch_inputs, batch_labels = load_subtensor(g, seeds, input_nodes, "cpu")
                    batch_labels = batch_labels.long()
                    num_seeds += len(blocks[-1].dstdata[dgl.NID])
                    num_inputs += len(blocks[0].srcdata[dgl.NID])
                    blocks = [block.to(device) for block in blocks]
                    batch_inputs = batch_inputs.to(device)
                    batch_labels = batch_labels.to(device)
                with timer("compute", stats):
                    batch_pred = model(blocks, batch_inputs)
                    loss = loss_fcn(batch_pred, batch_labels)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                step_t = time.time() - tic_step
                step_time.append(step_t)
                if step % args.log_every == 0:
                    acc = compute_acc(batch_pred, batch_labels)
                    gpu_mem_alloc = th.cuda.max_memory_allocated() / 1000000 if th.cuda.is_available() else 0
                    print(
                        "Part {} | Epoch {:05d} | Step {:05d} | Loss {:.4f} | Train Acc {:.4f} | "
                        "Speed (samples/sec) {:.4f} | GPU {:.1f} MB | time {:.3f} s".format(
                            g.rank(), epoch, step, loss.item(), acc.item(),
                            np.mean(args.batch_size / np.array(step_time[-args.log_every:])),
                            gpu_mem_alloc, np.sum(step_time[-args.log_every:]),
                        )
                    )
        toc = time.time()
        print("Part {}, Epoch Time(s): {:.4f}, {}".format(g.rank(), toc - tic, stats))


def main(args):
    print(socket.gethostname(), "Initializing DGL dist")
    dgl.distributed.initialize(args.ip_config, net_type=args.net_type)
    if not args.standalone:
        print(socket.gethostname(), "Initializing DGL process group")
        th.distributed.init_process_group(backend=args.backend)
    print(socket.gethostname(), "Initializing DistGraph")
    g = dgl.distributed.DistGraph(args.graph_name, part_config=args.part_config)
    print(socket.gethostname(), "rank:", g.rank())

    pb = g.get_partition_book()
    if "trainer_id" in g.ndata:
        train_nid = dgl.distributed.node_split(
            g.ndata["train_mask"], pb, force_even=True, node_trainer_ids=g.ndata["trainer_id"])
    else:
        train_nid = dgl.distributed.node_split(g.ndata["train_mask"], pb, force_even=True)
    val_nid = dgl.distributed.node_split(g.ndata["val_mask"], pb, force_even=True)
    test_nid = dgl.distributed.node_split(g.ndata["test_mask"], pb, force_even=True)
    local_nid = pb.partid2nids(pb.partid).detach().numpy()
    print("part {}, train: {} (local: {})".format(
        g.rank(), len(train_nid), len(np.intersect1d(train_nid.numpy(), local_nid))))

    if args.num_gpus == -1:
        device = th.device("cpu")
    else:
        dev_id = g.rank() % args.num_gpus
        device = th.device("cuda:" + str(dev_id))
        th.cuda.set_device(device)
    n_classes = args.n_classes
    if n_classes == -1:
        labels = g.ndata["labels"][np.arange(g.num_nodes())]
        n_classes = len(th.unique(labels[th.logical_not(th.isnan(labels))]))
    in_feats = g.ndata["features"].shape[1]

    data = train_nid, val_nid, test_nid, in_feats, n_classes, g
    run(args, device, data)
    print("parent ends")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="GCN")
    parser.add_argument("--graph_name", type=str, help="graph name")
    parser.add_argument("--id", type=int, help="the partition id")
    parser.add_argument("--ip_config", type=str, help="The file for IP configuration")
    parser.add_argument("--part_config", type=str, help="The path to the partition config file")
    parser.add_argument("--n_classes", type=int, default=-1, help="the number of classes")
    parser.add_argument("--backend", type=str, default="gloo", help="pytorch distributed backend")
    parser.add_argument("--num_gpus", type=int, default=-1,
                        help="the number of GPU device. Use -1 for CPU training")
    parser.add_argument("--num_epochs", type=int, default=20)
    parser.add_argument("--num_hidden", type=int, default=16)
    parser.add_argument("--num_layers", type=int, default=2)
    parser.add_argument("--fan_out", type=str, default="10,25")
    parser.add_argument("--batch_size", type=int, default=1000)
    parser.add_argument("--log_every", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--local_rank", type=int, help="get rank of the process")
    parser.add_argument("--standalone", action="store_true", help="run in the standalone mode")
    parser.add_argument("--net_type", type=str, default="socket",
                        help="backend net type, 'socket' or 'tensorpipe'")
    args = parser.parse_args()
    print(args)
    main(args)
