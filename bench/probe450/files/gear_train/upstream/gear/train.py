import os
import random
import argparse
import datetime

import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import TensorDataset, DataLoader

from utils import load_bert_features_claim, correct_prediction
from models import GEAR

parser = argparse.ArgumentParser()
parser.add_argument('--seed', type=int, default=314, help='Random seed.')
parser.add_argument('--epochs', type=int, default=1000, help='Number of epochs to train.')
parser.add_argument('--patience', type=int, default=20, help='Patience')
parser.add_argument('--lr', type=float, default=0.005, help='Initial learning rate.')
parser.add_argument('--weight_decay', type=float, default=5e-4, help='Weight decay (L2 loss on parameters).')
parser.add_argument('--dropout', type=float, default=0.6, help='Dropout rate (1 - keep probability).')
parser.add_argument('--batch_size', type=int, default=256, help='Batch size.')
parser.add_argument('--evi_num', type=int, default=5, help='Evidence num.')
parser.add_argument('--layer', type=int, default=1, help='Graph Layer.')
parser.add_argument('--pool', type=str, default='att', help='Aggregating method: top, max, mean, concat, att, sum')
parser.add_argument('--cuda', type=int, default=0, help='Which GPU to run on (-1 for CPU).')
parser.add_argument('--train_features', default='../data/bert/bert-nli-train-sr-set.tsv')
parser.add_argument('--dev_features', default='../data/bert/bert-nli-dev-sr-set.tsv')
parser.add_argument('--outdir', default='../output/')
args = parser.parse_args()

dir_path = args.outdir + 'gear-%devi-%dlayer-%s-%dseed-001' % (args.evi_num, args.layer, args.pool, args.seed)
if not os.path.exists(dir_path):
    os.makedirs(dir_path)

random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)
use_cuda = args.cuda >= 0 and torch.cuda.is_available()
if use_cuda:
    torch.cuda.set_device(args.cuda)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

print('Start loading BERT features at %s' % datetime.datetime.now())
train_features, train_claims, train_labels = load_bert_features_claim(args.train_features, args.evi_num)
dev_features, dev_claims, dev_labels = load_bert_features_claim(args.dev_features, args.evi_num)
print('Finished loading features at %s' % datetime.datetime.now())

feature_num = train_features[0].shape[1]

train_dataset = TensorDataset(train_features, train_claims, train_labels)
dev_dataset = TensorDataset(dev_features, dev_claims, dev_labels)
train_dataloader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True)
dev_dataloader = DataLoader(dev_dataset, batch_size=args.batch_size, shuffle=False)

model = GEAR(nfeat=feature_num, nins=args.evi_num, nclass=3, nlayer=args.layer, pool=args.pool)
optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

if use_cuda:
    model.cuda()

best_accuracy = 0.0
patience_counter = 0
best_epoch = 0
fout = open(dir_path + '/train_log.txt', 'w')

for epoch in range(args.epochs):
    model.train()
    train_loss = 0.0
    train_tqdm_iterator = train_dataloader
    for index, data in enumerate(train_tqdm_iterator):
        feature_batch, claim_batch, label_batch = data
        if use_cuda:
            feature_batch = feature_batch.cuda()
            claim_batch = claim_batch.cuda()
            label_batch = label_batch.cuda()

        optimizer.zero_grad()
        outputs = model(feature_batch, claim_batch)
        loss = F.nll_loss(outputs, label_batch)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()

    train_loss /= len(train_dataloader)

    model.eval()
    dev_correct = 0
    with torch.no_grad():
        for index, data in enumerate(dev_dataloader):
            if use_cuda:
                data = [t.cuda() for t in data]
            feature_batch, claim_batch, label_batch = data
            outputs = model(feature_batch, claim_batch)
            dev_correct += correct_prediction(outputs, label_batch)
    dev_accuracy = float(dev_correct) / len(dev_dataset)

    line = 'Epoch: %d, train loss: %.6f, dev accuracy: %.4f' % (epoch, train_loss, dev_accuracy)
    print(line)
    fout.write(line + '\n')

    if dev_accuracy > best_accuracy:
        best_accuracy = dev_accuracy
        best_epoch = epoch
        patience_counter = 0
        torch.save({'epoch': epoch,
                    'model': model.state_dict(),
                    'best_accuracy': best_accuracy}, dir_path + '/best.pth.tar')
        print('Saved best model at epoch %d (dev acc %.4f)' % (epoch, best_accuracy))
    else:
        patience_counter += 1

    if patience_counter > args.patience:
        print('Early stopping at epoch %d, best epoch %d' % (epoch, best_epoch))
        break

fout.write('Best epoch: %d, best dev accuracy: %.4f\n' % (best_epoch, best_accuracy))
fout.close()
