from __future__ import absolute_import
from __future__ import print_function

import argparse
import os
import re
import time
import json

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import TensorDataset, DataLoader

from mimic3benchmark.readers import InHospitalMortalityReader
from mimic3models import common_utils
from mimic3models import metrics
from mimic3models.in_hospital_mortality import utils
from mimic3models.preprocessing import Discretizer, Normalizer
from mimic3models.torch.lstm import LSTM
from mimic3models.torch.utils import EarlyStopping, count_parameters, batch_to_numpy


parser = argparse.ArgumentParser(description='PyTorch LSTM baseline for in-hospital mortality')
common_utils.add_common_arguments(parser)
parser.add_argument('--target_repl_coef', type=float, default=0.0)
parser.add_argument('--data', type=str, help='Path to the data of in-hospital mortality task',
                    default=os.path.join(os.path.dirname(__file__), '../../../data/in-hospital-mortality/'))
parser.add_argument('--output_dir', type=str, help='Directory relative which all output files are stored',
                    default='.')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training (useful for debugging on a laptop)')
parser.add_argument('--gpu', type=int, default=0, help='index of the GPU to train on')
parser.add_argument('--seed', type=int, default=42)
parser.add_argument('--num_workers', type=int, default=2)
parser.add_argument('--patience', type=int, default=8)
args = parser.parse_args()
print(args)

args.cuda = not args.no_cuda and torch.cuda.is_available()

np.random.seed(args.seed)
torch.manual_seed(args.seed)
if args.cuda:
    torch.cuda.manual_seed(args.seed)
    torch.cuda.set_device(args.gpu)
    torch.backends.cudnn.benchmark = True

if args.small_part:
    args.save_every = 2 ** 30

target_repl = (args.target_repl_coef > 0.0 and args.mode == 'train')

# Build readers, discretizers, normalizers
train_reader = InHospitalMortalityReader(dataset_dir=os.path.join(args.data, 'train'),
                                         listfile=os.path.join(args.data, 'train_listfile.csv'),
                                         period_length=48.0)

val_reader = InHospitalMortalityReader(dataset_dir=os.path.join(args.data, 'train'),
                                       listfile=os.path.join(args.data, 'val_listfile.csv'),
                                       period_length=48.0)

discretizer = Discretizer(timestep=float(args.timestep),
                          store_masks=True,
                          impute_strategy='previous',
                          start_time='zero')

discretizer_header = discretizer.transform(train_reader.read_example(0)["X"])[1].split(',')
cont_channels = [i for (i, x) in enumerate(discretizer_header) if x.find("->") == -1]

normalizer = Normalizer(fields=cont_channels)  # choose here which columns to standardize
normalizer_state = args.normalizer_state
if normalizer_state is None:
    normalizer_state = 'ihm_ts{}.input_str:{}.start_time:zero.normalizer'.format(args.timestep, args.imputation)
    normalizer_state = os.path.join(os.path.dirname(__file__), '..', normalizer_state)
normalizer.load_params(normalizer_state)

args_dict = dict(args._get_kwargs())
args_dict['header'] = discretizer_header
args_dict['task'] = 'ihm'
args_dict['target_repl'] = target_repl

# Build the model
print("==> using model {}".format(args.network))
model = LSTM(input_dim=len(discretizer_header),
             hidden_dim=args.dim,
             num_layers=args.depth,
             dropout=args.dropout,
             bidirectional=bool(args.rec_dropout == 0.0) and args.depth > 1,
             task='ihm',
             target_repl=target_repl,
             use_cuda=args.cuda)
suffix = ".bs{}{}{}.ts{}{}".format(args.batch_size,
                                   ".L1{}".format(args.l1) if args.l1 > 0 else "",
                                   ".L2{}".format(args.l2) if args.l2 > 0 else "",
                                   args.timestep,
                                   ".trc{}".format(args.target_repl_coef) if args.target_repl_coef > 0 else "")
model_name = "torch_lstm" + suffix
print("==> model.final_name:", model_name)
print("==> trainable parameters:", count_parameters(model))

if args.cuda:
    model.cuda()

optimizer = optim.Adam(model.parameters(), lr=args.lr, betas=(args.beta_1, 0.999),
                       weight_decay=args.l2)
criterion = nn.BCEWithLogitsLoss()

# Load model weights
n_trained_chunks = 0
if args.load_state != "":
    state = torch.load(args.load_state, map_location=lambda storage, loc: storage)
    model.load_state_dict(state['model'])
    n_trained_chunks = int(re.match(".*epoch([0-9]+).*", args.load_state).group(1))


def make_loader(raw, shuffle):
    X = torch.from_numpy(np.asarray(raw[0], dtype=np.float32))
    y = torch.from_numpy(np.asarray(raw[1], dtype=np.float32))
    dataset = TensorDataset(X, y)
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=shuffle,
                      num_workers=args.num_workers, pin_memory=args.cuda, drop_last=False)


def evaluate(model, loader, return_probs=False):
    model.eval()
    probs, labels = [], []
    with torch.no_grad():
        for x, y in loader:
            if args.cuda:
                x = x.cuda(non_blocking=True)
            logits = model(x)
            if isinstance(logits, tuple):
                logits = logits[0]
            probs.append(batch_to_numpy(torch.sigmoid(logits)))
            labels.append(y.numpy())
    probs = np.concatenate(probs).reshape(-1)
    labels = np.concatenate(labels).reshape(-1)
    ret = metrics.print_metrics_binary(labels, probs, verbose=0)
    if return_probs:
        return ret, probs, labels
    return ret


if args.mode == 'train':
    # Read data
    train_raw = utils.load_data(train_reader, discretizer, normalizer, args.small_part)
    val_raw = utils.load_data(val_reader, discretizer, normalizer, args.small_part)

    if target_repl:
        T = train_raw[0][0].shape[0]

        def extend_labels(data):
            data = list(data)
            labels = np.array(data[1])  # (B,)
            data[1] = [labels, None]
            data[1][1] = np.expand_dims(labels, axis=-1).repeat(T, axis=1)  # (B, T)
            data[1][1] = np.expand_dims(data[1][1], axis=-1)  # (B, T, 1)
            return data

        train_raw = extend_labels(train_raw)
        val_raw = extend_labels(val_raw)
        train_raw = (train_raw[0], train_raw[1][0])
        val_raw = (val_raw[0], val_raw[1][0])

    train_loader = make_loader(train_raw, shuffle=True)
    val_loader = make_loader(val_raw, shuffle=False)

    path = os.path.join(args.output_dir, 'torch_states/' + model_name + '.epoch{epoch}.test{val_loss}.state')
    dirname = os.path.dirname(path)
    if not os.path.exists(dirname):
        os.makedirs(dirname)

    stopper = EarlyStopping(patience=args.patience, mode='max')
    log_path = os.path.join(args.output_dir, 'torch_logs/' + model_name + '.csv')
    if not os.path.exists(os.path.dirname(log_path)):
        os.makedirs(os.path.dirname(log_path))
    log_f = open(log_path, 'a')
    log_f.write('epoch,train_loss,val_auroc,val_auprc,seconds\n')

    print("==> training")
    for epoch in range(n_trained_chunks, n_trained_chunks + args.epochs):
        model.train()
        t0 = time.time()
        running = 0.0
        n_seen = 0
        for batch_idx, (x, y) in enumerate(train_loader):
            if args.cuda:
                x, y = x.cuda(), y.cuda()
            optimizer.zero_grad()
            out = model(x)
            if target_repl:
                logits, seq_logits = out
                loss = criterion(logits.view(-1), y)
                seq_target = y.view(-1, 1, 1).expand_as(seq_logits)
                loss = (1 - args.target_repl_coef) * loss + \
                    args.target_repl_coef * criterion(seq_logits, seq_target)
            else:
                loss = criterion(out.view(-1), y)
            if args.l1 > 0:
                l1 = sum(p.abs().sum() for n, p in model.named_parameters() if 'weight' in n)
                loss = loss + args.l1 * l1
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()

            running += loss.item() * x.size(0)
            n_seen += x.size(0)
            if batch_idx % 100 == 0 and args.verbose:
                print('epoch {} [{}/{}] loss {:.4f}'.format(epoch, n_seen, len(train_loader.dataset),
                                                          running / max(n_seen, 1)))

        ret = evaluate(model, val_loader)
        elapsed = time.time() - t0
        print('==> epoch {} train loss {:.4f} | val AUROC {:.4f} AUPRC {:.4f} | {:.1f}s'.format(
            epoch, running / n_seen, ret['auroc'], ret['auprc'], elapsed))
        log_f.write('{},{:.5f},{:.5f},{:.5f},{:.1f}\n'.format(epoch, running / n_seen,
                                                             ret['auroc'], ret['auprc'], elapsed))
        log_f.flush()

        if (epoch + 1) % args.save_every == 0 or stopper.is_best(ret['auroc']):
            torch.save({'model': model.state_dict(),
                        'optimizer': optimizer.state_dict(),
                        'epoch': epoch,
                        'args': args_dict},
                       path.format(epoch=epoch, val_loss='{:.4f}'.format(ret['auroc'])))
        if stopper.step(ret['auroc']):
            print('==> early stopping at epoch {}'.format(epoch))
            break
    log_f.close()

elif args.mode == 'test':
    # ensure that the code uses test_reader
    del train_reader
    del val_reader

    test_reader = InHospitalMortalityReader(dataset_dir=os.path.join(args.data, 'test'),
                                            listfile=os.path.join(args.data, 'test_listfile.csv'),
                                            period_length=48.0)
    ret = utils.load_data(test_reader, discretizer, normalizer, args.small_part,
                          return_names=True)

    data = ret["data"][0]
    labels = ret["data"][1]
    names = ret["names"]

    test_loader = make_loader((data, labels), shuffle=False)
    ret, predictions, _ = evaluate(model, test_loader, return_probs=True)

    path = os.path.join(args.output_dir, "test_predictions", os.path.basename(args.load_state)) + ".csv"
    utils.save_results(names, predictions, labels, path)
    with open(path.replace('.csv', '.metrics.json'), 'w') as f:
        json.dump({k: float(v) for k, v in ret.items()}, f, indent=2)

else:
    raise ValueError("Wrong value for args.mode")
