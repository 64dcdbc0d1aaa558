import argparse
import time

import dgl
import numpy as np
import torch
import torch.nn.functional as F

from dataset import Dataset
from model import BWGNN, BWGNN_Hetero, MLP
from utils import set_random_seed, split_dataset, get_best_f1, evaluate, delete_edges, log_memory


def train(model, g, args, masks, device):
    features = g.ndata['feature']
    labels = g.ndata['label']
    train_mask, val_mask, test_mask = masks
    print('train/dev/test samples: ', train_mask.sum().item(), val_mask.sum().item(), test_mask.sum().item())

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    best_f1, best_state = 0., None
    final = (0., 0., 0., 0., 0.)

    weight = (1 - labels[train_mask]).sum().item() / labels[train_mask].sum().item()
    print('cross entropy weight: ', weight)
    class_weight = torch.tensor([1., weight]).cuda()

    labels_np = labels.cpu().numpy()
    torch.cuda.synchronize()
    time_start = time.time()
    for e in range(args.epoch):
        model.train()
        logits = model(features)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask], weight=class_weight)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            probs = logits.softmax(1).cpu().numpy()
        f1, thres = get_best_f1(labels_np[val_mask.cpu().numpy()], probs[val_mask.cpu().numpy()])
        tmask = test_mask.cpu().numpy()
        rec, pre, mf1, auc, prc = evaluate(labels_np[tmask], probs[tmask], thres)

        if best_f1 < f1:
            best_f1 = f1
            final = (rec, pre, mf1, auc, prc)
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if e % args.log_every == 0:
            print('Epoch {}, loss: {:.4f}, val mf1: {:.4f}, (best {:.4f})'.format(e, loss, f1, best_f1))

    torch.cuda.synchronize(device)
    time_end = time.time()
    print('time cost: ', time_end - time_start, 's')
    rec, pre, mf1, auc, prc = final
    print('Test: REC {:.2f} PRE {:.2f} MF1 {:.2f} AUC {:.2f} PRC {:.2f}'.format(
        rec * 100, pre * 100, mf1 * 100, auc * 100, prc * 100))
    if best_state is not None:
        model.load_state_dict(best_state)
    return mf1, auc


def build_model(name, in_feats, h_feats, graph, homo, order):
    if name == 'MLP':
        return MLP(in_feats, h_feats, 2, graph)
    if homo:
        return BWGNN(in_feats, h_feats, 2, graph, d=order)
    return BWGNN_Hetero(in_feats, h_feats, 2, graph, d=order)


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='GHRN')
    parser.add_argument("--dataset", type=str, default="amazon",
                        help="Dataset for this model (yelp/amazon/tfinance/tsocial)")
    parser.add_argument("--model", type=str, default="BWGNN", help="BWGNN / MLP")
    parser.add_argument("--train_ratio", type=float, default=0.4, help="Training ratio")
    parser.add_argument("--hid_dim", type=int, default=64, help="Hidden layer dimension")
    parser.add_argument("--order", type=int, default=2, help="Order C in Beta Wavelet")
    parser.add_argument("--homo", type=int, default=1, help="1 for BWGNN(Homo) and 0 for BWGNN(Hetero)")
    parser.add_argument("--epoch", type=int, default=100, help="The max number of epochs")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--del_ratio", type=float, default=0.015, help="Ratio of heterophilic edges to delete")
    parser.add_argument("--run", type=int, default=1, help="Running times")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gpu", type=int, default=0, help="GPU id")
    parser.add_argument("--log_every", type=int, default=10)

    args = parser.parse_args()
    print(args)

    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda:%d' % args.gpu)

    graph = Dataset(args.dataset, args.homo).graph
    graph = graph.to(device)
    in_feats = graph.ndata['feature'].shape[1]
    masks = split_dataset(graph.ndata['label'], args.dataset, args.train_ratio)
    masks = tuple(m.to(device) for m in masks)

    mf1s, aucs = [], []
    for tt in range(args.run):
        set_random_seed(args.seed + tt)

        # stage 1: train the backbone on the original graph
        model = build_model(args.model, in_feats, args.hid_dim, graph, args.homo, args.order).to(device)
        train(model, graph, args, masks, device)
        log_memory('stage1', device)

        # stage 2: prune heterophilic edges and retrain from scratch
        model.eval()
        with torch.no_grad():
            logits = model(graph.ndata['feature'])
        new_graph = delete_edges(graph, logits, graph.ndata['label'], masks[0], args.del_ratio, homo=args.homo)
        print('edges: {} -> {}'.format(graph.num_edges(), new_graph.num_edges()))

        model = build_model(args.model, in_feats, args.hid_dim, new_graph, args.homo, args.order).to(device)
        mf1, auc = train(model, new_graph, args, masks, device)
        log_memory('stage2', device)
        mf1s.append(mf1)
        aucs.append(auc)

        del model, new_graph
        torch.cuda.empty_cache()

    mf1s, aucs = np.array(mf1s), np.array(aucs)
    print('MF1-mean: {:.2f}, MF1-std: {:.2f}, AUC-mean: {:.2f}, AUC-std: {:.2f}'.format(
        100 * np.mean(mf1s), 100 * np.std(mf1s), 100 * np.mean(aucs), 100 * np.std(aucs)))
