import argparse
import copy
import os.path as osp
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm

import torch_geometric
import torch_geometric.typing
from torch_geometric.datasets import Reddit
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv

parser = argparse.ArgumentParser()
parser.add_argument('--epochs', type=int, default=10)
parser.add_argument('--batch_size', type=int, default=1024)
parser.add_argument('--num_workers', type=int, default=4)
parser.add_argument('--hidden_channels', type=int, default=256)
parser.add_argument('--compile', action='store_true',
                    help='Wrap the model with torch.compile (PyTorch >= 2.0)')
parser.add_argument('--amp', action='store_true',
                    help='Use automatic mixed precision on the GPU')
args = parser.parse_args()

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
path = osp.join(osp.dirname(osp.realpath(__file__)), '..', 'data', 'Reddit')
dataset = Reddit(path)

# Keep features in (pinned) host memory; mini-batches are moved to the GPU in
# the training loop:
data = dataset[0]

if not torch_geometric.typing.WITH_PYG_LIB and not \
        torch_geometric.typing.WITH_TORCH_SPARSE:
    raise ImportError("'NeighborLoader' requires either 'pyg-lib' or "
                      "'torch-sparse' to be installed")

kwargs = {
    'batch_size': args.batch_size,
    'num_workers': args.num_workers,
    'persistent_workers': args.num_workers > 0,
}
train_loader = NeighborLoader(data, input_nodes=data.train_mask,
                              num_neighbors=[25, 10], shuffle=True,
                              pin_memory=True, **kwargs)

subgraph_loader = NeighborLoader(copy.copy(data), input_nodes=None,
                                 num_neighbors=[-1], shuffle=False, **kwargs)

# No need to maintain these features during evaluation:
del subgraph_loader.data.x, subgraph_loader.data.y
# Add global node index information.
subgraph_loader.data.num_nodes = data.num_nodes
subgraph_loader.data.n_id = torch.arange(data.num_nodes)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=0.5, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x_all, subgraph_loader):
        pbar = tqdm(total=len(subgraph_loader.dataset) * len(self.convs))
        pbar.set_description('Evaluating')

        # Compute representations of nodes layer by layer, using *all*
        # available edges. This leads to faster computation in contrast to
        # immediately computing the final representations of each batch:
        for i, conv in enumerate(self.convs):
            xs = []
            for batch in subgraph_loader:
                x = x_all[batch.n_id.to(x_all.device)].to(device)
                x = conv(x, batch.edge_index.to(device))
                if i < len(self.convs) - 1:
                    x = x.relu_()
                xs.append(x[:batch.batch_size].cpu())
                pbar.update(batch.batch_size)
            x_all = torch.cat(xs, dim=0)
        pbar.close()
        return x_all


model = SAGE(dataset.num_features, args.hidden_channels,
             dataset.num_classes).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

if args.compile:
    model = torch.compile(model, dynamic=True)


def train(epoch):
    model.train()

    pbar = tqdm(total=int(len(train_loader.dataset)))
    pbar.set_description(f'Epoch {epoch:02d}')

    total_loss = total_correct = total_examples = 0
    for batch in train_loader:
        batch = batch.to(device, non_blocking=True)
        optimizer.zero_grad()
        y = batch.y[:batch.batch_size]
        with torch.autocast(device_type='cuda', dtype=torch.float16,
                            enabled=args.amp):
            y_hat = model(batch.x, batch.edge_index)[:batch.batch_size]
            loss = F.cross_entropy(y_hat, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

        total_loss += float(loss) * batch.batch_size
        total_correct += int((y_hat.argmax(dim=-1) == y).sum())
        total_examples += batch.batch_size
        pbar.update(batch.batch_size)
    pbar.close()

    return total_loss / total_examples, total_correct / total_examples


@torch.no_grad()
def test():
    model.eval()
    y_hat = model.inference(data.x, subgraph_loader).argmax(dim=-1)
    y = data.y.to(y_hat.device)

    accs = []
    for mask in [data.train_mask, data.val_mask, data.test_mask]:
        accs.append(int((y_hat[mask] == y[mask]).sum()) / int(mask.sum()))
    return accs


times = []
for epoch in range(1, args.epochs + 1):
    start = time.time()
    loss, acc = train(epoch)
    print(f'Epoch {epoch:02d}, Loss: {loss:.4f}, Approx. Train: {acc:.4f}')
    train_acc, val_acc, test_acc = test()
    print(f'Epoch: {epoch:02d}, Train: {train_acc:.4f}, Val: {val_acc:.4f}, '
          f'Test: {test_acc:.4f}')
    if torch.cuda.is_available():
        print(f'Peak GPU memory: '
              f'{torch.cuda.max_memory_allocated() / 1024**3:.2f} GB')
        torch.cuda.reset_peak_memory_stats()
    times.append(time.time() - start)
print(f"Median time per epoch: {torch.tensor(times).median():.4f}s")
