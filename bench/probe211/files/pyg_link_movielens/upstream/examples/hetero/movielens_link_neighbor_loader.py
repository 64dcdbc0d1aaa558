"""Link prediction on MovieLens with mini-batch neighbour sampling.

Trains a heterogeneous GraphSAGE encoder (via ``to_hetero``) with a dot-product
decoder on the ``(user, rates, movie)`` edges, sampling mini-batches of
supervision edges with :class:`LinkNeighborLoader`.

    python movielens_link_neighbor_loader.py --device 0 --amp
"""
import argparse
import os.path as osp
import time

import torch
import torch.nn.functional as F
import tqdm
from sklearn.metrics import roc_auc_score
from torch import Tensor

import torch_geometric.transforms as T
from torch_geometric.data import HeteroData
from torch_geometric.datasets import MovieLens
from torch_geometric.loader import LinkNeighborLoader
from torch_geometric.nn import SAGEConv, to_hetero

parser = argparse.ArgumentParser()
parser.add_argument('--device', type=int, default=0,
                    help='CUDA device ordinal (ignored if no GPU is present)')
parser.add_argument('--epochs', type=int, default=6)
parser.add_argument('--batch_size', type=int, default=128)
parser.add_argument('--hidden_channels', type=int, default=64)
parser.add_argument('--num_workers', type=int, default=6)
parser.add_argument('--amp', action='store_true',
                    help='Enable torch.cuda.amp mixed precision')
parser.add_argument('--compile', action='store_true')
parser.add_argument('--seed', type=int, default=42)
args = parser.parse_args()


def seed_everything(seed: int) -> None:
    import random

    import numpy as np
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


seed_everything(args.seed)

if torch.cuda.is_available():
    device = torch.device(f'cuda:{args.device}')
    torch.backends.cudnn.benchmark = True
else:
    device = torch.device('cpu')
print(f'Device: {device}')

path = osp.join(osp.dirname(osp.realpath(__file__)), '../../data/MovieLens')
dataset = MovieLens(path, model_name='all-MiniLM-L6-v2')
data = dataset[0]

# Add user node features for message passing:
data['user'].x = torch.eye(data['user'].num_nodes)
del data['user'].num_nodes

# Add a reverse ('movie', 'rev_rates', 'user') relation for message passing:
data = T.ToUndirected()(data)
del data['movie', 'rev_rates', 'user'].edge_label  # Remove "reverse" label.

# Perform a link-level split into training, validation, and test edges:
train_data, val_data, test_data = T.RandomLinkSplit(
    num_val=0.1,
    num_test=0.1,
    disjoint_train_ratio=0.3,
    neg_sampling_ratio=2.0,
    add_negative_train_samples=False,
    edge_types=('user', 'rates', 'movie'),
    rev_edge_types=('movie', 'rev_rates', 'user'),
)(data)

edge_label_index = train_data['user', 'rates', 'movie'].edge_label_index
edge_label = train_data['user', 'rates', 'movie'].edge_label
train_loader = LinkNeighborLoader(
    data=train_data,
    num_neighbors=[20, 10],
    neg_sampling_ratio=2.0,
    edge_label_index=(('user', 'rates', 'movie'), edge_label_index),
    edge_label=edge_label,
    batch_size=args.batch_size,
    shuffle=True,
    num_workers=args.num_workers,
    pin_memory=torch.cuda.is_available(),
    persistent_workers=True,
)

val_edge_label_index = val_data['user', 'rates', 'movie'].edge_label_index
val_edge_label = val_data['user', 'rates', 'movie'].edge_label
val_loader = LinkNeighborLoader(
    data=val_data,
    num_neighbors=[20, 10],
    edge_label_index=(('user', 'rates', 'movie'), val_edge_label_index),
    edge_label=val_edge_label,
    batch_size=3 * args.batch_size,
    shuffle=False,
)


class GNN(torch.nn.Module):
    def __init__(self, hidden_channels):
        super().__init__()

        self.conv1 = SAGEConv(hidden_channels, hidden_channels)
        self.conv2 = SAGEConv(hidden_channels, hidden_channels)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = F.relu(self.conv1(x, edge_index))
        x = self.conv2(x, edge_index)
        return x


# Our final classifier applies the dot-product between source and destination
# node embeddings to derive edge-level predictions:
class Classifier(torch.nn.Module):
    def forward(self, x_user: Tensor, x_movie: Tensor,
                edge_label_index: Tensor) -> Tensor:
        # Convert node embeddings to edge-level representations:
        edge_feat_user = x_user[edge_label_index[0]]
        edge_feat_movie = x_movie[edge_label_index[1]]

        # Apply dot-product to get a prediction per supervision edge:
        return (edge_feat_user * edge_feat_movie).sum(dim=-1)


class Model(torch.nn.Module):
    def __init__(self, hidden_channels, metadata):
        super().__init__()
        # Since the dataset does not come with rich features, we also learn
        # embedding matrices for users and movies:
        self.movie_lin = torch.nn.Linear(384, hidden_channels)
        self.user_emb = torch.nn.Embedding(data['user'].num_nodes,
                                           hidden_channels)
        self.movie_emb = torch.nn.Embedding(data['movie'].num_nodes,
                                            hidden_channels)

        # Instantiate homogeneous GNN:
        self.gnn = GNN(hidden_channels)

        # Convert GNN model into a heterogeneous variant:
        self.gnn = to_hetero(self.gnn, metadata=metadata)

        self.classifier = Classifier()

    def forward(self, data: HeteroData) -> Tensor:
        x_dict = {
            'user': self.user_emb(data['user'].node_id),
            'movie': self.movie_lin(data['movie'].x) +
            self.movie_emb(data['movie'].node_id),
        }

        # `x_dict` holds feature matrices of all node types
        # `edge_index_dict` holds all edge indices of all edge types
        x_dict = self.gnn(x_dict, data.edge_index_dict)
        pred = self.classifier(
            x_dict['user'],
            x_dict['movie'],
            data['user', 'rates', 'movie'].edge_label_index,
        )
        return pred


for store in (train_data, val_data, test_data):
    store['user'].node_id = torch.arange(store['user'].num_nodes)
    store['movie'].node_id = torch.arange(store['movie'].num_nodes)

model = Model(hidden_channels=args.hidden_channels,
              metadata=data.metadata()).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.001,
                              weight_decay=1e-4, fused=True)
scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

if args.compile:
    model = torch.compile(model, mode='max-autotune', dynamic=True)


def train():
    model.train()
    total_loss = total_examples = 0
    for batch in tqdm.tqdm(train_loader):
        batch = batch.to(device)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=args.amp):
            pred = model(batch)
            ground_truth = batch['user', 'rates', 'movie'].edge_label
            loss = F.binary_cross_entropy_with_logits(pred, ground_truth)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total_loss += float(loss) * pred.numel()
        total_examples += pred.numel()
    return total_loss / total_examples


@torch.no_grad()
def test(loader):
    model.eval()
    preds = []
    ground_truths = []
    for batch in tqdm.tqdm(loader):
        batch = batch.to(device)
        preds.append(model(batch))
        ground_truths.append(batch['user', 'rates', 'movie'].edge_label)
    pred = torch.cat(preds, dim=0).float().cpu().numpy()
    ground_truth = torch.cat(ground_truths, dim=0).cpu().numpy()
    return roc_auc_score(ground_truth, pred)


for epoch in range(1, args.epochs + 1):
    t0 = time.time()
    loss = train()
    auc = test(val_loader)
    print(f'Epoch: {epoch:03d}, Loss: {loss:.4f}, Val AUC: {auc:.4f}, '
          f'Time: {time.time() - t0:.2f}s')

torch.save(model.state_dict(), 'movielens_sage.pt')
