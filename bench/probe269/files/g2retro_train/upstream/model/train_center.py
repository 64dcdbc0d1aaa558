import os
import sys
import math
import time
import random
import argparse
import pickle

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.optim.lr_scheduler as lr_scheduler
from torch.utils.data import DataLoader

from mol_tree import MolTree
from vocab import Vocab, common_atom_vocab
from molcenter import MolCenter
from datautils import MolTreeFolder, PairTreeFolder
from nnutils import set_seed

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

parser = argparse.ArgumentParser()
parser.add_argument('--train', type=str, default="../data/tensors/", help='data path to training data')
parser.add_argument('--vocab', type=str, default="../data/vocab.txt", help='data path to substructure vocabulary')
parser.add_argument('--save_dir', type=str, default="../result/", help='data path to the directory used to save trained models')
parser.add_argument('--load_epoch', type=int, default=-1, help='an interger used to control the loaded model (i.e., if load_epoch==1000, '+\
                    'the model save_dir+1000.pkl would be loaded)')
parser.add_argument('--ncpu', type=int, default=10, help='the number of cpus')

parser.add_argument('--size', type=int, default=70000, help='size of training data')
parser.add_argument('--hidden_size', type=int, default=512, help='the dimension of hidden layers')
parser.add_argument('--batch_size', type=int, default=32, help='the number of molecule pairs in each batch')
parser.add_argument('--latent_size', type=int, default=32, help='the dimention of latent embeddings')
parser.add_argument('--embed_size', type=int, default=32, help='the dimention of substructure embedding')
parser.add_argument('--depthG', type=int, default=5, help='the depth of message passing in graph encoder')
parser.add_argument('--depthT', type=int, default=3, help='the depth of message passing in tree encoder')
parser.add_argument('--use_atomic', action="store_true", help='whether to use atomic number as feature (default value is True)')
parser.add_argument('--use_class', action='store_true', help='whether the reaction types are known')
parser.add_argument('--use_brics', action='store_true', help='whether to use brics substructures')
parser.add_argument('--use_feature', action='store_true', help='whether to use the wiener index')

parser.add_argument('--lr', type=float, default=1e-3, help='learning rate')
parser.add_argument('--clip_norm', type=float, default=20.0, help='')
parser.add_argument('--epoch', type=int, default=150, help='the number of epochs')
parser.add_argument('--anneal_rate', type=float, default=0.9, help='the anneal rate of learning rate')
parser.add_argument('--print_iter', type=int, default=20, help='the number of iterations to print')
parser.add_argument('--save_iter', type=int, default=3000, help='the number of iterations to save model')
parser.add_argument('--seed', type=int, default=2022)

args = parser.parse_args()
print(args)
set_seed(args.seed)

with open(args.vocab) as f:
    vocab = [x.strip("\r\n ") for x in f]
vocab = Vocab(vocab)
avocab = common_atom_vocab

model = MolCenter(vocab, avocab, args).to(device)
print(model)

if torch.cuda.device_count() > 1:
    model = nn.DataParallel(model)
module = model.module if isinstance(model, nn.DataParallel) else model

for param in model.parameters():
    if param.dim() == 1:
        nn.init.constant_(param, 0)
    else:
        nn.init.xavier_normal_(param)

optimizer = optim.Adam(model.parameters(), lr=args.lr, fused=True)
scheduler = lr_scheduler.ExponentialLR(optimizer, args.anneal_rate)

if args.load_epoch >= 0:
    model.load_state_dict(torch.load(args.save_dir + "/model_center_" + str(args.load_epoch) + ".pkl"))
    print("load model from %s" % (args.save_dir + "/model_center_" + str(args.load_epoch) + ".pkl"))

print("Model #Params: %dK" % (sum([x.nelement() for x in model.parameters()]) / 1000,))

param_norm = lambda m: math.sqrt(sum([p.norm().item() ** 2 for p in m.parameters()]))
grad_norm = lambda m: math.sqrt(sum([p.grad.norm().item() ** 2 for p in m.parameters() if p.grad is not None]))

total_step = 0
beta = 0.0
meters = np.zeros(8)
os.makedirs(args.save_dir, exist_ok=True)

for epoch in range(args.load_epoch + 1, args.epoch):
    loader = PairTreeFolder(args.train, vocab, avocab, args.batch_size, num_workers=args.ncpu,
                            use_atomic=args.use_atomic, use_class=args.use_class,
                            use_feature=args.use_feature, use_brics=args.use_brics)
    t0 = time.time()
    for batch in loader:
        total_step += 1
        model.zero_grad()
        loss, bond_change_loss, atom_charge_loss, center_loss, \
            bond_change_acc, atom_charge_acc, center_acc, center_acc_all = model(*batch)
        loss = loss.mean()

        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
        optimizer.step()

        meters = meters + np.array([
            loss.item(), bond_change_loss.mean().item(), atom_charge_loss.mean().item(),
            center_loss.mean().item(), bond_change_acc.mean().item() * 100,
            atom_charge_acc.mean().item() * 100, center_acc.mean().item() * 100,
            center_acc_all.mean().item() * 100])

        if total_step % args.print_iter == 0:
            meters /= args.print_iter
            print("[%d] Loss: %.3f, bond: %.3f, charge: %.3f, center: %.3f | acc bond %.2f charge %.2f center %.2f all %.2f, "
                  "PNorm: %.2f, GNorm: %.2f, %.1fs" % (
                      total_step, meters[0], meters[1], meters[2], meters[3], meters[4], meters[5], meters[6],
                      meters[7], param_norm(module), grad_norm(module), time.time() - t0))
            sys.stdout.flush()
            meters *= 0
            t0 = time.time()

        if total_step % args.save_iter == 0:
            torch.save(model.state_dict(), args.save_dir + "/model_center_iter_" + str(total_step) + ".pkl")

    scheduler.step()
    print("learning rate: %.6f" % scheduler.get_last_lr()[0])
    torch.save(model.state_dict(), args.save_dir + "/model_center_" + str(epoch) + ".pkl")
