"""Temporal Graph Network (TGN) link prediction on JODIE/Wikipedia, data-parallel over all GPUs.

python examples/tgn_multi_gpu.py --epochs 50 --batch_size 200
"""
import argparse
import os
import os.path as osp

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from sklearn.metrics import average_precision_score, roc_auc_score
from torch.nn import Linear
from torch.nn.parallel import DistributedDataParallel

from torch_geometric.datasets import JODIEDataset
from torch_geometric.loader import TemporalDataLoader
from torch_geometric.nn import TGNMemory, TransformerConv
from torch_geometric.nn.models.tgn import IdentityMessage, LastAggregator, LastNeighborLoader


class GraphAttentionEmbedding(torch.nn.Module):
    def __init__(self, in_channels, out_channels, msg_dim, time_enc):
        super().__init__()
        self.time_enc = time_enc
        edge_dim = msg_dim + time_enc.out_channels
        self.conv = TransformerConv(in_channels, out_channels // 2, heads=2, dropout=0.1, edge_dim=edge_dim)

    def forward(self, x, last_update, edge_index, t, msg):
        rel_t = last_update[edge_index[0]] - t
        rel_t_enc = self.time_enc(rel_t.to(x.dtype))
        edge_attr = torch.cat([rel_t_enc, msg], dim=-1)
        return self.conv(x, edge_index, edge_attr)


class LinkPredictor(torch.nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.lin_src = Linear(in_channels, in_channels)
        self.lin_dst = Linear(in_channels, in_channels)
        self.lin_final = Linear(in_channels, 1)

    def forward(self, z_src, z_dst):
        h = self.lin_src(z_src) + self.lin_dst(z_dst)
        return self.lin_final(h.relu())


def run(rank, world_size, args, data):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    device = torch.device(f"cuda:{rank}")

    train_data, val_data, test_data = data.train_val_test_split(val_ratio=0.15, test_ratio=0.15)
    # each rank trains on a contiguous slice of the event stream
    per_rank = train_data.num_events // world_size
    train_data = train_data[rank * per_rank:(rank + 1) * per_rank]
    train_loader = TemporalDataLoader(train_data, batch_size=args.batch_size, neg_sampling_ratio=1.0)
    val_loader = TemporalDataLoader(val_data, batch_size=args.batch_size, neg_sampling_ratio=1.0)
    neighbor_loader = LastNeighborLoader(data.num_nodes, size=10, device=device)

    memory_dim = time_dim = embedding_dim = 100
    memory = TGNMemory(data.num_nodes, data.msg.size(-1), memory_dim, time_dim,
                       message_module=IdentityMessage(data.msg.size(-1), memory_dim, time_dim),
                       aggregator_module=LastAggregator()).to(device)
    gnn = GraphAttentionEmbedding(memory_dim, embedding_dim, data.msg.size(-1), memory.time_enc).to(device)
    link_pred = LinkPredictor(embedding_dim).to(device)
    gnn = DistributedDataParallel(gnn, device_ids=[rank])
    link_pred = DistributedDataParallel(link_pred, device_ids=[rank])
    params = set(memory.parameters()) | set(gnn.parameters()) | set(link_pred.parameters())
    optimizer = torch.optim.Adam(params, lr=args.lr)
    criterion = torch.nn.BCEWithLogitsLoss()
    assoc = torch.empty(data.num_nodes, dtype=torch.long, device=device)

    for epoch in range(1, args.epochs + 1):
        memory.train()
        gnn.train()
        link_pred.train()
        memory.reset_state()
        neighbor_loader.reset_state()
        total_loss = 0.0
        for batch in train_loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            n_id, edge_index, e_id = neighbor_loader(batch.n_id)
            assoc[n_id] = torch.arange(n_id.size(0), device=device)
            z, last_update = memory(n_id)
            z = gnn(z, last_update, edge_index, data.t[e_id].to(device), data.msg[e_id].to(device))
            pos_out = link_pred(z[assoc[batch.src]], z[assoc[batch.dst]])
            neg_out = link_pred(z[assoc[batch.src]], z[assoc[batch.neg_dst]])
            loss = criterion(pos_out, torch.ones_like(pos_out)) + criterion(neg_out, torch.zeros_like(neg_out))
            memory.update_state(batch.src, batch.dst, batch.t, batch.msg)
            neighbor_loader.insert(batch.src, batch.dst)
            loss.backward()
            optimizer.step()
            memory.detach()
            total_loss += float(loss) * batch.num_events
        dist.barrier()
        if rank == 0:
            ap, auc = evaluate(memory, gnn, link_pred, neighbor_loader, val_loader, data, assoc, device)
            print(f"Epoch {epoch:02d} loss {total_loss / train_data.num_events:.4f} val AP {ap:.4f} AUC {auc:.4f}")
        dist.barrier()
    dist.destroy_process_group()


@torch.no_grad()
def evaluate(memory, gnn, link_pred, neighbor_loader, loader, data, assoc, device):
    memory.eval()
    gnn.eval()
    link_pred.eval()
    aps, aucs = [], []
    for batch in loader:
        batch = batch.to(device)
        n_id, edge_index, e_id = neighbor_loader(batch.n_id)
        assoc[n_id] = torch.arange(n_id.size(0), device=device)
        z, last_update = memory(n_id)
        z = gnn(z, last_update, edge_index, data.t[e_id].to(device), data.msg[e_id].to(device))
        pos = link_pred(z[assoc[batch.src]], z[assoc[batch.dst]])
        neg = link_pred(z[assoc[batch.src]], z[assoc[batch.neg_dst]])
        y_pred = torch.cat([pos, neg], dim=0).sigmoid().cpu()
        y_true = torch.cat([torch.ones(pos.size(0)), torch.zeros(neg.size(0))], dim=0)
        aps.append(average_precision_score(y_true, y_pred))
        aucs.append(roc_auc_score(y_true, y_pred))
        memory.update_state(batch.src, batch.dst, batch.t, batch.msg)
        neighbor_loader.insert(batch.src, batch.dst)
    return float(torch.tensor(aps).mean()), float(torch.tensor(aucs).mean())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=200)
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    path = osp.join(osp.dirname(osp.realpath(__file__)), "..", "data", "JODIE")
    data = JODIEDataset(path, name="wikipedia")[0]
    world_size = torch.cuda.device_count()
    print(f"Let's use {world_size} GPUs!")
    mp.spawn(run, args=(world_size, args, data), nprocs=world_size, join=True)
