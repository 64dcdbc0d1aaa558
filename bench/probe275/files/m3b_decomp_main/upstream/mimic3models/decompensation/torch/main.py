from __future__ import absolute_import
from __future__ import print_function

import argparse
import os
import time

import numpy as np
import torch
import torch.optim as optim
from torch.autograd import Variable

from mimic3benchmark.readers import DecompensationReader
from mimic3models import common_utils
from mimic3models import metrics
from mimic3models.decompensation import utils
from mimic3models.preprocessing import Discretizer, Normalizer
from mimic3models.torch.lstm import LSTM, masked_bce_with_logits
from mimic3models.torch.utils import get_device, print_gpu_memory, EarlyStopping


parser = argparse.ArgumentParser()
common_utils.add_common_arguments(parser)
parser.add_argument('--deep_supervision', dest='deep_supervision', action='store_true')
parser.set_defaults(deep_supervision=False)
parser.add_argument('--data', type=str, help='Path to the data of decompensation task',
                    default=os.path.join(os.path.dirname(__file__), '../../../data/decompensation/'))
parser.add_argument('--output_dir', type=str, help='Directory relative which all output files are stored',
                    default='.')
parser.add_argument('--cuda', action='store_true', help='use GPU')
parser.add_argument('--gpu_id', type=int, default=0)
parser.add_argument('--steps_per_epoch', type=int, default=None,
                    help='limit the number of generator steps per epoch (the full set is ~3M samples)')
args = parser.parse_args()
print(args)

if args.small_part:
    args.save_every = 2**30

device = get_device(args.cuda, args.gpu_id)
dtype = torch.cuda.FloatTensor if args.cuda else torch.FloatTensor
print("==> running on", device)

# Build readers, discretizers, normalizers
if args.deep_supervision:
    train_data_loader = common_utils.DeepSupervisionDataLoader(dataset_dir=os.path.join(args.data, 'train'),
                                                               listfile=os.path.join(args.data, 'train_listfile.csv'),
                                                               small_part=args.small_part)
    val_data_loader = common_utils.DeepSupervisionDataLoader(dataset_dir=os.path.join(args.data, 'train'),
                                                             listfile=os.path.join(args.data, 'val_listfile.csv'),
                                                             small_part=args.small_part)
else:
    train_reader = DecompensationReader(dataset_dir=os.path.join(args.data, 'train'),
                                        listfile=os.path.join(args.data, 'train_listfile.csv'))
    val_reader = DecompensationReader(dataset_dir=os.path.join(args.data, 'train'),
                                      listfile=os.path.join(args.data, 'val_listfile.csv'))

discretizer = Discretizer(timestep=args.timestep,
                          store_masks=True,
                          impute_strategy='previous',
                          start_time='zero')

if args.deep_supervision:
    discretizer_header = discretizer.transform(train_data_loader._data["X"][0])[1].split(',')
else:
    discretizer_header = discretizer.transform(train_reader.read_example(0)["X"])[1].split(',')
cont_channels = [i for (i, x) in enumerate(discretizer_header) if x.find("->") == -1]

normalizer = Normalizer(fields=cont_channels)  # choose here which columns to standardize
normalizer_state = args.normalizer_state
if normalizer_state is None:
    normalizer_state = 'decomp_ts{}.input_str:previous.n1e5.start_time:zero.normalizer'.format(args.timestep)
    normalizer_state = os.path.join(os.path.dirname(__file__), '..', normalizer_state)
normalizer.load_params(normalizer_state)

model = LSTM(input_dim=len(discretizer_header), hidden_dim=args.dim, num_layers=args.depth,
             dropout=args.dropout, bidirectional=True, task='decomp',
             deep_supervision=args.deep_supervision, use_cuda=args.cuda)
model = model.to(device)
optimizer = optim.Adam(model.parameters(), lr=args.lr, betas=(args.beta_1, 0.999))

model_name = "torch_lstm.n{}.d{}.dep{}{}".format(args.dim, args.dropout, args.depth,
                                                ".ds" if args.deep_supervision else "")

n_trained_chunks = 0
if args.load_state != "":
    ckpt = torch.load(args.load_state, map_location=device)
    model.load_state_dict(ckpt['state_dict'])
    n_trained_chunks = ckpt.get('epoch', 0) + 1


def to_var(arr, requires_grad=False):
    return Variable(torch.from_numpy(np.asarray(arr)).type(dtype), requires_grad=requires_grad)


def run_epoch(gen, n_steps, train=True):
    model.train(train)
    losses = []
    all_y, all_p = [], []
    for step in range(n_steps):
        batch = next(gen)
        if args.deep_supervision:
            (X, mask), y = batch
            X, mask, y = to_var(X), to_var(mask), to_var(y)
            logits = model(X)
            loss = masked_bce_with_logits(logits, y, mask)
            probs = torch.sigmoid(logits)[mask > 0]
            y_flat = y[mask > 0]
        else:
            X, y = batch
            X, y = to_var(X), to_var(y)
            logits = model(X)[:, -1]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
            probs = torch.sigmoid(logits)
            y_flat = y
        if train:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
        all_p.append(probs.detach().cpu().numpy())
        all_y.append(y_flat.detach().cpu().numpy())
        if args.verbose and step % 500 == 0:
            print("\t{}/{} loss={:.4f}".format(step, n_steps, np.mean(losses)))
    ret = metrics.print_metrics_binary(np.concatenate(all_y), np.concatenate(all_p), verbose=0)
    ret['loss'] = float(np.mean(losses))
    return ret


if args.mode == 'train':
    train_gen = utils.BatchGen(reader=train_reader if not args.deep_supervision else train_data_loader,
                               discretizer=discretizer,
                               normalizer=normalizer,
                               batch_size=args.batch_size,
                               steps=args.steps_per_epoch,
                               shuffle=True,
                               deep_supervision=args.deep_supervision)
    val_gen = utils.BatchGen(reader=val_reader if not args.deep_supervision else val_data_loader,
                             discretizer=discretizer,
                             normalizer=normalizer,
                             batch_size=args.batch_size,
                             steps=None if args.steps_per_epoch is None else args.steps_per_epoch // 4,
                             shuffle=False,
                             deep_supervision=args.deep_supervision)

    save_dir = os.path.join(args.output_dir, 'torch_states')
    os.makedirs(save_dir, exist_ok=True)
    stopper = EarlyStopping(patience=4, mode='max')

    print("==> training")
    for epoch in range(n_trained_chunks, n_trained_chunks + args.epochs):
        t0 = time.time()
        tr = run_epoch(train_gen, train_gen.steps, train=True)
        with torch.no_grad():
            va = run_epoch(val_gen, val_gen.steps, train=False)
        if args.cuda:
            torch.cuda.synchronize()
        print("epoch {:3d} | train loss {:.4f} auroc {:.4f} | val loss {:.4f} auroc {:.4f} | {:.0f}s".format(
            epoch, tr['loss'], tr['auroc'], va['loss'], va['auroc'], time.time() - t0))
        print_gpu_memory(prefix="after epoch {}".format(epoch))

        fname = os.path.join(save_dir, "{}.epoch{}.val{:.4f}.pt".format(model_name, epoch, va['auroc']))
        if stopper.is_best(va['auroc']) or (epoch + 1) % args.save_every == 0:
            torch.save({'state_dict': model.state_dict(), 'epoch': epoch}, fname)
        if stopper.step(va['auroc']):
            break
        if args.cuda:
            torch.cuda.empty_cache()

elif args.mode == 'test':
    del train_reader
    del val_reader
    test_reader = DecompensationReader(dataset_dir=os.path.join(args.data, 'test'),
                                       listfile=os.path.join(args.data, 'test_listfile.csv'))
    test_gen = utils.BatchGen(reader=test_reader,
                              discretizer=discretizer,
                              normalizer=normalizer,
                              batch_size=args.batch_size,
                              steps=None,
                              shuffle=False,
                              return_names=True,
                              deep_supervision=False)

    names, ts, labels, predictions = [], [], [], []
    model.eval()
    with torch.no_grad():
        for i in range(test_gen.steps):
            if args.verbose:
                print("predicting {} / {}".format(i, test_gen.steps), end='\r')
            ret = test_gen.next(return_y_true=True)
            (x, y) = ret["data"]
            cur_names = ret["names"]
            cur_ts = ret["ts"]
            x = torch.from_numpy(np.array(x, dtype=np.float32)).to(device)
            pred = torch.sigmoid(model(x)[:, -1]).cpu().numpy()
            predictions += list(pred)
            labels += list(y)
            names += list(cur_names)
            ts += list(cur_ts)

    metrics.print_metrics_binary(labels, predictions)
    path = os.path.join(args.output_dir, 'test_predictions', os.path.basename(args.load_state)) + '.csv'
    utils.save_results(names, ts, predictions, labels, path)

else:
    raise ValueError("Wrong value for args.mode")
