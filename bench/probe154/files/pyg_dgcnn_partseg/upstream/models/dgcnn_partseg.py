"""DGCNN part segmentation on ShapeNet with PyG + torch_scatter.

Follows the structure of the PyG `dgcnn_segmentation.py` example but adds a
per-shape IoU evaluation, a cosine LR schedule and checkpointing.
"""
import argparse
import os
import os.path as osp
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn import Linear as Lin
from torch_cluster import knn_graph
from torch_scatter import scatter, scatter_max, scatter_mean

import torch_geometric.transforms as T
from torch_geometric.datasets import ShapeNet
from torch_geometric.loader import DataLoader
from torch_geometric.nn import MLP, DynamicEdgeConv
from torch_geometric.utils import intersection_and_union as i_and_u


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--category', type=str, default='Airplane')
    parser.add_argument('--k', type=int, default=30)
    parser.add_argument('--aggr', type=str, default='max')
    parser.add_argument('--epochs', type=int, default=31)
    parser.add_argument('--batch-size', type=int, default=12)
    parser.add_argument('--lr', type=float, default=0.001)
    parser.add_argument('--gpu', type=str, default='0',
                        help='which GPU(s) to expose to this process')
    parser.add_argument('--ckpt-dir', type=str, default='checkpoints/dgcnn')
    parser.add_argument('--seed', type=int, default=12345)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.deterministic = True


class LocalMaxFeature(torch.nn.Module):
    """Pools each point's k-NN neighbourhood (max over neighbours)."""

    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x, pos, batch):
        edge_index = knn_graph(pos, k=self.k, batch=batch, loop=True)
        row, col = edge_index
        out, argmax = scatter_max(x[col], row, dim=0, dim_size=x.size(0))
        return out


class Net(torch.nn.Module):
    def __init__(self, out_channels, k=30, aggr='max'):
        super().__init__()

        self.conv1 = DynamicEdgeConv(MLP([2 * 6, 64, 64]), k, aggr)
        self.conv2 = DynamicEdgeConv(MLP([2 * 64, 64, 64]), k, aggr)
        self.conv3 = DynamicEdgeConv(MLP([2 * 64, 64, 64]), k, aggr)
        self.local_pool = LocalMaxFeature(k=16)

        self.mlp = MLP([3 * 64 + 64, 1024, 256, 128, out_channels], dropout=0.5,
                       norm=None)
        self.shape_head = Lin(1024, 16)

    def forward(self, data):
        x, pos, batch = data.x, data.pos, data.batch
        x0 = torch.cat([x, pos], dim=-1)
        x1 = self.conv1(x0, batch)
        x2 = self.conv2(x1, batch)
        x3 = self.conv3(x2, batch)
        x4 = self.local_pool(x3, pos, batch)
        out = self.mlp(torch.cat([x1, x2, x3, x4], dim=1))
        return F.log_softmax(out, dim=1)


def train(model, optimizer, loader, device, epoch):
    model.train()

    total_loss = correct_nodes = total_nodes = 0
    for i, data in enumerate(loader):
        data = data.to(device)
        optimizer.zero_grad()
        out = model(data)
        loss = F.nll_loss(out, data.y)
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
        correct_nodes += out.argmax(dim=1).eq(data.y).sum().item()
        total_nodes += data.num_nodes

        if (i + 1) % 10 == 0:
            print(f'[{epoch}/{i + 1}/{len(loader)}] Loss: {total_loss / 10:.4f} '
                  f'Train Acc: {correct_nodes / total_nodes:.4f}')
            total_loss = correct_nodes = total_nodes = 0


@torch.no_grad()
def test(model, loader, device, num_classes):
    model.eval()

    ious, categories = [], []
    y_map = torch.empty(loader.dataset.num_classes, device=device).long()
    for data in loader:
        data = data.to(device)
        outs = model(data)

        sizes = (data.ptr[1:] - data.ptr[:-1]).tolist()
        for out, y, category in zip(outs.split(sizes), data.y.split(sizes),
                                    data.category.tolist()):
            category = list(ShapeNet.seg_classes.keys())[category]
            part = ShapeNet.seg_classes[category]
            part = torch.tensor(part, device=device)

            y_map[part] = torch.arange(part.size(0), device=device)

            iou = i_and_u(out[:, part].argmax(dim=-1), y_map[y],
                          part.size(0))
            ious.append(iou)

        categories.append(data.category)

    iou = torch.tensor(ious, device=device)
    category = torch.cat(categories, dim=0)

    mean_iou = scatter(iou, category, reduce='mean')  # Per-category IoU.
    per_shape = scatter_mean(iou, category, dim=0)
    return float(mean_iou.mean()), per_shape.cpu().numpy()


def main():
    args = get_args()
    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
    seed_everything(args.seed)

    path = osp.join(osp.dirname(osp.realpath(__file__)), '..', 'data', 'ShapeNet')
    transform = T.Compose([
        T.RandomJitter(0.01),
        T.RandomRotate(15, axis=0),
        T.RandomRotate(15, axis=1),
        T.RandomRotate(15, axis=2)
    ])
    pre_transform = T.NormalizeScale()
    train_dataset = ShapeNet(path, args.category, split='trainval',
                             transform=transform, pre_transform=pre_transform)
    test_dataset = ShapeNet(path, args.category, split='test',
                            pre_transform=pre_transform)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size,
                              shuffle=True, num_workers=6, pin_memory=True)
    test_loader = DataLoader(test_dataset, batch_size=args.batch_size,
                             shuffle=False, num_workers=6)

    device = torch.device('cuda:0')
    model = Net(train_dataset.num_classes, k=args.k, aggr=args.aggr).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.8)

    os.makedirs(args.ckpt_dir, exist_ok=True)
    best = 0.0
    for epoch in range(1, args.epochs):
        train(model, optimizer, train_loader, device, epoch)
        iou, _ = test(model, test_loader, device, train_dataset.num_classes)
        scheduler.step()
        print(f'Epoch: {epoch:02d}, Test IoU: {iou:.4f}')
        if iou > best:
            best = iou
            torch.save({'model': model.state_dict(), 'epoch': epoch, 'iou': iou},
                       osp.join(args.ckpt_dir, 'best.pth'))

    ckpt = torch.load(osp.join(args.ckpt_dir, 'best.pth'), map_location='cuda:0')
    model.load_state_dict(ckpt['model'])
    print(f'best IoU {best:.4f} @ epoch {ckpt["epoch"]}')


if __name__ == '__main__':
    main()
