"""GraphSAGE on Reddit with Quiver's GPU sampler and GPU feature cache.

Compared with examples/reddit.py in PyG this replaces
  * torch_geometric.loader.NeighborSampler  ->  quiver.pyg.GraphSageSampler
  * x[n_id].to(device)                      ->  quiver.Feature[n_id]
which moves both graph sampling and feature collection onto the GPU.

    python3 examples/pyg/reddit_quiver.py --mode UVA --cache 4G
"""
import argparse
import os.path as osp
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm

from torch_geometric.datasets import Reddit
from torch_geometric.loader import NeighborSampler
from torch_geometric.nn import SAGEConv

import quiver

parser = argparse.ArgumentParser(description='Reddit (Quiver)')
parser.add_argument('--mode', type=str, default='UVA',
                    choices=['GPU', 'UVA', 'CPU'],
                    help='where quiver samples the graph: GPU memory, '
                    'pinned host memory via UVA, or CPU')
parser.add_argument('--cache', type=str, default='4G',
                    help='GPU feature cache size per device')
parser.add_argument('--epochs', type=int, default=10)
parser.add_argument('--batch_size', type=int, default=1024)
args = parser.parse_args()

root = osp.join(osp.dirname(osp.realpath(__file__)), '../..', 'data', 'Reddit')
dataset = Reddit(root)
data = dataset[0]

train_idx = data.train_mask.nonzero(as_tuple=False).view(-1)
train_loader = torch.utils.data.DataLoader(train_idx,
                                           batch_size=args.batch_size,
                                           shuffle=True,
                                           drop_last=True)

########################################
# Step 1: Build the CSR topology once  #
########################################
csr_topo = quiver.CSRTopo(data.edge_index)

##############################################
# Step 2: GPU/UVA neighbour sampler (quiver) #
##############################################
quiver_sampler = quiver.pyg.GraphSageSampler(csr_topo, sizes=[25, 10],
                                             device=0, mode=args.mode)

subgraph_loader = NeighborSampler(data.edge_index, node_idx=None, sizes=[-1],
                                  batch_size=1024, shuffle=False,
                                  num_workers=12)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super(SAGE, self).__init__()

        self.num_layers = 2

        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def reset_parameters(self):
        for conv in self.convs:
            conv.reset_parameters()

    def forward(self, x, adjs):
        for i, (edge_index, _, size) in enumerate(adjs):
            x_target = x[:size[1]]  # Target nodes are always placed first.
            x = self.convs[i]((x, x_target), edge_index)
            if i != self.num_layers - 1:
                x = F.relu(x)
                x = F.dropout(x, p=0.5, training=self.training)
        return x.log_softmax(dim=-1)

    def inference(self, x_all):
        pbar = tqdm(total=x_all.size(0) * self.num_layers)
        pbar.set_description('Evaluating')

        for i in range(self.num_layers):
            xs = []
            for batch_size, n_id, adj in subgraph_loader:
                edge_index, _, size = adj.to(device)
                x = x_all[n_id].to(device)
                x_target = x[:size[1]]
                x = self.convs[i]((x, x_target), edge_index)
                if i != self.num_layers - 1:
                    x = F.relu(x)
                xs.append(x.cpu())

                pbar.update(batch_size)

            x_all = torch.cat(xs, dim=0)

        pbar.close()

        return x_all


torch.cuda.set_device(0)
device = torch.device('cuda:0')
model = SAGE(dataset.num_features, 256, dataset.num_classes)
model = model.to(device)

x = data.x
#######################################################
# Step 3: replicate hot features in every GPU's cache #
#######################################################
quiver_feature = quiver.Feature(rank=0, device_list=[0],
                                device_cache_size=args.cache,
                                cache_policy="device_replicate",
                                csr_topo=csr_topo)
quiver_feature.from_cpu_tensor(x)

y = data.y.squeeze().to(device)


def train(epoch):
    model.train()

    pbar = tqdm(total=int(data.train_mask.sum()))
    pbar.set_description(f'Epoch {epoch:02d}')

    total_loss = total_correct = 0
    for seeds in train_loader:
        n_id, batch_size, adjs = quiver_sampler.sample(seeds)
        # `adjs` holds a list of `(edge_index, e_id, size)` tuples.
        adjs = [adj.to(device) for adj in adjs]

        optimizer.zero_grad()
        out = model(quiver_feature[n_id], adjs)
        loss = F.nll_loss(out, y[n_id[:batch_size]])
        loss.backward()
        optimizer.step()

        total_loss += float(loss)
        total_correct += int(out.argmax(dim=-1).eq(y[n_id[:batch_size]]).sum())
        pbar.update(batch_size)

    pbar.close()

    loss = total_loss / len(train_loader)
    approx_acc = total_correct / int(data.train_mask.sum())

    return loss, approx_acc


@torch.no_grad()
def test():
    model.eval()

    out = model.inference(x)

    y_true = y.cpu().unsqueeze(-1)
    y_pred = out.argmax(dim=-1, keepdim=True)

    results = []
    for mask in [data.train_mask, data.val_mask, data.test_mask]:
        results += [int(y_pred[mask].eq(y_true[mask]).sum()) / int(mask.sum())]

    return results


optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

for epoch in range(1, args.epochs + 1):
    t0 = time.time()
    loss, acc = train(epoch)
    print(f'Epoch {epoch:02d}, Loss: {loss:.4f}, Approx. Train: {acc:.4f}, '
          f'Epoch Time: {time.time() - t0:.2f}s')

    if epoch % 5 == 0:
        train_acc, val_acc, test_acc = test()
        print(f'Train: {train_acc:.4f}, Val: {val_acc:.4f}, '
              f'test: {test_acc:.4f}')
