import os
import glob
import torch
import torchsummary
import pytorch_lightning as pl
from argparse import ArgumentParser

from microtcn.tcn import TCNModel
from microtcn.lstm import LSTMModel
from microtcn.data import SignalTrainLA2ADataset

parser = ArgumentParser()

# add PROGRAM level args
parser.add_argument('--model_type', type=str, default='tcn', help='tcn or lstm')
parser.add_argument('--root_dir', type=str, default='./data')
parser.add_argument('--preload', action="store_true")
parser.add_argument('--sample_rate', type=int, default=44100)
parser.add_argument('--shuffle', type=bool, default=True)
parser.add_argument('--train_subset', type=str, default='train')
parser.add_argument('--val_subset', type=str, default='val')
parser.add_argument('--train_length', type=int, default=32768)
parser.add_argument('--train_fraction', type=float, default=1.0)
parser.add_argument('--eval_length', type=int, default=262144)
parser.add_argument('--batch_size', type=int, default=32)
parser.add_argument('--num_workers', type=int, default=16)

# parse them args
temp_args, _ = parser.parse_known_args()

# let the model add what it wants
if temp_args.model_type == 'tcn':
    parser = TCNModel.add_model_specific_args(parser)
elif temp_args.model_type == 'lstm':
    parser = LSTMModel.add_model_specific_args(parser)

# add all the available trainer options to argparse
parser = pl.Trainer.add_argparse_args(parser)

# parse them args
args = parser.parse_args()

# init the trainer and model
if args.model_type == 'tcn':
    specifier =  f"{args.model_type}-{args.nblocks}-{args.dilation_growth}"
    specifier += f"-{args.kernel_size}-{args.channel_width}"
    specifier += f"-{args.train_loss}-{args.train_fraction}"
    if args.causal: specifier += "-causal"
elif args.model_type == 'lstm':
    specifier =  f"{args.model_type}-{args.num_layers}-{args.hidden_size}"
    specifier += f"-{args.train_loss}-{args.train_fraction}"

args.default_root_dir = os.path.join("lightning_logs", "bulk", specifier)
print(args.default_root_dir)
trainer = pl.Trainer.from_argparse_args(args)

# setup the dataloaders
train_dataset = SignalTrainLA2ADataset(args.root_dir,
                                       subset=args.train_subset,
                                       fraction=args.train_fraction,
                                       half=True if args.precision == 16 else False,
                                       preload=args.preload,
                                       length=args.train_length)

train_dataloader = torch.utils.data.DataLoader(train_dataset,
                                               shuffle=args.shuffle,
                                               batch_size=args.batch_size,
                                               num_workers=args.num_workers,
                                               pin_memory=True)

val_dataset = SignalTrainLA2ADataset(args.root_dir,
                                     preload=args.preload,
                                     half=True if args.precision == 16 else False,
                                     subset=args.val_subset,
                                     length=args.eval_length)

val_dataloader = torch.utils.data.DataLoader(val_dataset,
                                             shuffle=False,
                                             batch_size=2,
                                             num_workers=args.num_workers)

# create the model with args
dict_args = vars(args)
dict_args["nparams"] = 2

if args.model_type == 'tcn':
    model = TCNModel(**dict_args)
elif args.model_type == 'lstm':
    model = LSTMModel(**dict_args)

# summary
torchsummary.summary(model, [(1, args.train_length), (1, 2)], device="cpu")

# train!
trainer.fit(model, train_dataloader, val_dataloader)
