"""Train DIN / DIEN on the Amazon Electronics (or Books) review dataset.

    python train.py --model din --dataset electronics --gpu 0
    python train.py --model dien --dataset books --gpu 1 --batch_size 256

The pickled dataset is produced by ``prepare_data.py`` (a port of the original
TensorFlow preprocessing from the DIN repo).
"""
import argparse
import os
import pickle
import random
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score
from torch.utils.data import DataLoader

from data import AmazonDataset, collate_fn
from model.din import DeepInterestNetwork
from model.dien import DeepInterestEvolutionNetwork


def parse_args():
    parser = argparse.ArgumentParser(description='DIN/DIEN on Amazon')
    parser.add_argument('--model', type=str, default='din', choices=['din', 'dien'])
    parser.add_argument('--dataset', type=str, default='electronics')
    parser.add_argument('--data_dir', type=str, default='./data')
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--eval_batch_size', type=int, default=1024)
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--lr', type=float, default=1.0)
    parser.add_argument('--embedding_dim', type=int, default=64)
    parser.add_argument('--max_len', type=int, default=100)
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--gpu', type=int, default=0, help='which GPU to use, -1 for CPU')
    parser.add_argument('--seed', type=int, default=1234)
    parser.add_argument('--eval_every', type=int, default=1000)
    parser.add_argument('--save_dir', type=str, default='./checkpoints')
    parser.add_argument('--benchmark', action='store_true', help='time the forward pass only')
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def load_dataset(args):
    path = os.path.join(args.data_dir, '{}_dataset.pkl'.format(args.dataset))
    with open(path, 'rb') as f:
        train_set = pickle.load(f)
        test_set = pickle.load(f)
        cate_list = pickle.load(f)
        user_count, item_count, cate_count = pickle.load(f)
    return train_set, test_set, cate_list, (user_count, item_count, cate_count)


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    preds, labels = [], []
    for batch in loader:
        uid, iid, cid, hist_iid, hist_cid, hist_len, label = [x.cuda(non_blocking=True) for x in batch]
        logits = model(uid, iid, cid, hist_iid, hist_cid, hist_len)
        preds.append(torch.sigmoid(logits).cpu().numpy())
        labels.append(label.cpu().numpy())
    model.train()
    preds = np.concatenate(preds)
    labels = np.concatenate(labels)
    return roc_auc_score(labels, preds)


def benchmark(model, loader, device, steps=200):
    model.eval()
    it = iter(loader)
    batch = [t.to(device) for t in next(it)]
    for _ in range(20):  # warm-up, lets cuDNN pick its GRU kernels
        model(*batch[:-1])
    torch.cuda.synchronize(device)
    start = time.time()
    for _ in range(steps):
        model(*batch[:-1])
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print('forward: {:.3f} ms/batch ({} samples)'.format(1000 * elapsed / steps, batch[0].size(0)))


def main():
    args = parse_args()
    set_seed(args.seed)

    if args.gpu >= 0:
        torch.cuda.set_device(args.gpu)
        device = torch.device('cuda:{}'.format(args.gpu))
        torch.backends.cudnn.benchmark = True
    else:
        device = torch.device('cpu')
    print('Using device:', device, '| torch', torch.__version__, '| CUDA', torch.version.cuda)

    train_set, test_set, cate_list, (user_count, item_count, cate_count) = load_dataset(args)
    cate_list = torch.LongTensor(cate_list)

    train_loader = DataLoader(AmazonDataset(train_set, args.max_len), batch_size=args.batch_size,
                              shuffle=True, num_workers=args.num_workers, collate_fn=collate_fn,
                              pin_memory=True, drop_last=True)
    test_loader = DataLoader(AmazonDataset(test_set, args.max_len, is_test=True),
                             batch_size=args.eval_batch_size, shuffle=False,
                             num_workers=args.num_workers, collate_fn=collate_fn, pin_memory=True)

    if args.model == 'din':
        model = DeepInterestNetwork(user_count, item_count, cate_count, cate_list, args.embedding_dim)
    else:
        model = DeepInterestEvolutionNetwork(user_count, item_count, cate_count, cate_list,
                                             args.embedding_dim, gru_type='AUGRU')
    model = model.cuda()

    if args.benchmark:
        benchmark(model, train_loader, device)
        return

    # the original DIN uses plain SGD with lr=1.0 and a step decay at 336k iterations
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    criterion = nn.BCEWithLogitsLoss()

    os.makedirs(args.save_dir, exist_ok=True)
    best_auc = 0.0
    global_step = 0
    for epoch in range(args.epochs):
        running_loss = 0.0
        t0 = time.time()
        for batch in train_loader:
            uid, iid, cid, hist_iid, hist_cid, hist_len, label = [t.cuda(non_blocking=True) for t in batch]
            logits = model(uid, iid, cid, hist_iid, hist_cid, hist_len)
            loss = criterion(logits, label.float())

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            running_loss += loss.item()
            global_step += 1
            if global_step == 336000:
                for g in optimizer.param_groups:
                    g['lr'] = 0.1

            if global_step % args.eval_every == 0:
                test_auc = evaluate(model, test_loader, device)
                print('epoch {} step {} | loss {:.4f} | test gauc {:.4f} | {:.1f}s | mem {:.0f}MB'.format(
                    epoch, global_step, running_loss / args.eval_every, test_auc, time.time() - t0,
                    torch.cuda.max_memory_allocated() / 2 ** 20))
                running_loss = 0.0
                if test_auc > best_auc:
                    best_auc = test_auc
                    torch.save({'model': model.state_dict(), 'step': global_step, 'auc': best_auc},
                               os.path.join(args.save_dir, '{}_{}_best.pt'.format(args.model, args.dataset)))
                t0 = time.time()

    print('best test auc: {:.4f}'.format(best_auc))


if __name__ == '__main__':
    main()
