import argparse
import os

import torch

parser = argparse.ArgumentParser("RDED")
"""Architecture and Dataset"""
parser.add_argument(
    "--arch-name",
    type=str,
    default="resnet18",
    help="arch name from pretrained torchvision models",
)
parser.add_argument(
    "--subsample-ipc",
    type=int,
    default=0,
)
parser.add_argument(
    "--stud-name",
    type=str,
    default="resnet18",
    help="arch name from torchvision models",
)
parser.add_argument(
    "--workers",
    default=8,
    type=int,
)
parser.add_argument(
    "--classes",
    type=list,
    help="number of classes for synthesis",
)
parser.add_argument(
    "--temperature",
    type=float,
    help="temperature for distillation loss",
)
parser.add_argument(
    "--train-dir",
    type=str,
    default="../data/imagenet/train/",
    help="path to training dataset",
)
parser.add_argument(
    "--val-dir",
    type=str,
    default="../data/imagenet/val/",
    help="path to validation dataset",
)
parser.add_argument(
    "--teacher-path", type=str, default=None, help="path to the squeeze-stage teacher (.pth)"
)
parser.add_argument("--mipc", type=int, default=300, help="number of pre-loaded images per class")
parser.add_argument("--ipc", type=int, default=50, help="number of images per class")
parser.add_argument("--subset", type=str, default="imagenet-1k")
parser.add_argument("--input-size", default=224, type=int, metavar="S")
parser.add_argument("--nclass", type=int, default=1000)
parser.add_argument("--phase", type=int, default=0)
"""Data save flags"""
parser.add_argument("--exp-name", type=str, default=None, help="name of the experiment, subfolder under syn_data_path")
parser.add_argument("--syn-data-path", type=str, default="./syn_data", help="where to store synthetic data")
"""Synthesis"""
parser.add_argument("--factor", default=2, type=int)
parser.add_argument("--num-crop", default=5, type=int)
parser.add_argument("--batch-size", default=100, type=int, help="teacher batch size while scoring candidate patches")
"""Validation"""
parser.add_argument("--re-batch-size", default=0, type=int, help="batch size for training the student")
parser.add_argument("--re-accum-steps", type=int, default=1, help="gradient accumulation steps for small gpu memory")
parser.add_argument("--mix-type", default="cutmix", type=str, choices=["mixup", "cutmix", None], help="mixup or cutmix or None")
parser.add_argument("--cutmix", type=float, default=1.0, help="cutmix alpha, cutmix enabled if > 0. (default: 1.0)")
parser.add_argument("--re-epochs", default=300, type=int)
parser.add_argument("--sgd-lr", type=float, default=0.2)
parser.add_argument("--adamw-lr", type=float, default=0.001, help="adamw learning rate")
parser.add_argument("--adamw-weight-decay", type=float, default=0.01, help="adamw weight decay")
parser.add_argument("--momentum", type=float, default=0.9)
parser.add_argument("--weight-decay", type=float, default=1e-4)
parser.add_argument("--val-ipc", type=int, default=50)
"""Runtime"""
parser.add_argument("--gpu-device", default="-1", type=str, help="e.g. '0' or '0,1'; -1 keeps the current visibility")
parser.add_argument("--seed", default=0, type=int)
parser.add_argument("--amp", action="store_true", help="bf16 autocast for the student (A100/H100 only)")
args = parser.parse_args()

if args.gpu_device != "-1":
    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu_device)

args.device = "cuda" if torch.cuda.is_available() else "cpu"
args.world_size = max(torch.cuda.device_count(), 1)

if args.amp and not torch.cuda.is_bf16_supported():
    print("bf16 is not supported on this GPU, disabling --amp")
    args.amp = False

if args.subset == "imagenet-1k":
    args.nclass = 1000
    args.classes = range(args.nclass)
    args.val_ipc = 50
    args.input_size = 224
    args.mean_norm = [0.485, 0.456, 0.406]
    args.std_norm = [0.229, 0.224, 0.225]

elif args.subset == "imagenet-100":
    args.nclass = 100
    args.classes = range(args.nclass)
    args.val_ipc = 50
    args.input_size = 224
    args.mean_norm = [0.485, 0.456, 0.406]
    args.std_norm = [0.229, 0.224, 0.225]

elif args.subset == "imagenet-woof":
    args.nclass = 10
    args.classes = range(args.nclass)
    args.val_ipc = 50
    args.input_size = 224
    args.mean_norm = [0.485, 0.456, 0.406]
    args.std_norm = [0.229, 0.224, 0.225]

elif args.subset == "tinyimagenet":
    args.nclass = 200
    args.classes = range(args.nclass)
    args.val_ipc = 50
    args.input_size = 64
    args.mean_norm = [0.4802, 0.4481, 0.3975]
    args.std_norm = [0.2302, 0.2265, 0.2262]

elif args.subset == "cifar10":
    args.nclass = 10
    args.classes = range(args.nclass)
    args.val_ipc = 1000
    args.input_size = 32
    args.mean_norm = [0.4914, 0.4822, 0.4465]
    args.std_norm = [0.2023, 0.1994, 0.2010]

elif args.subset == "cifar100":
    args.nclass = 100
    args.classes = range(args.nclass)
    args.val_ipc = 100
    args.input_size = 32
    args.mean_norm = [0.5071, 0.4865, 0.4409]
    args.std_norm = [0.2673, 0.2564, 0.2762]

args.nclass = len(args.classes)

# set up batch size
if args.re_batch_size == 0:
    if args.ipc == 100:
        args.re_batch_size = 100
        args.workers = 8
    elif args.ipc == 50:
        args.re_batch_size = 100
        args.workers = 4
    elif args.ipc in [30, 40]:
        args.re_batch_size = 100
        args.workers = 4
    elif args.ipc in [10, 20]:
        args.re_batch_size = 50
        args.workers = 4
    elif args.ipc == 1:
        args.re_batch_size = 10
        args.workers = 4

    if args.nclass == 10:
        args.re_batch_size *= 1
    if args.nclass == 100:
        args.re_batch_size *= 2
    if args.nclass == 1000:
        args.re_batch_size *= 2

    if args.subset in ["cifar10", "cifar100"]:
        args.re_batch_size = min(args.re_batch_size, 50)

# result dir for saving
args.exp_name = f"{args.subset}_{args.arch_name}_f{args.factor}_mipc{args.mipc}_ipc{args.ipc}_cr{args.num_crop}"
if not os.path.exists(f"./exp/{args.exp_name}"):
    os.makedirs(f"./exp/{args.exp_name}")
args.syn_data_path = os.path.join("./exp/" + args.exp_name, "syn_data")
