# Copyright (c) MONAI Consortium
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#     http://www.apache.org/licenses/LICENSE-2.0
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
BraTS tumour segmentation (SegResNet) with MONAI workflows (SupervisedTrainer / SupervisedEvaluator) and
PyTorch DistributedDataParallel, one process per GPU.

Main steps to set up the distributed training:

- Execute `torchrun` to create processes on every node for every GPU.
  It receives parameters as below:
  `--nproc_per_node=NUM_GPUS_PER_NODE`
  `--nnodes=NUM_NODES`
  `--node_rank=INDEX_CURRENT_NODE`
  For more details, refer to https://pytorch.org/docs/stable/elastic/run.html.
- Use `init_process_group` to initialize every process, every GPU runs in a separate process with unique rank.
  Here we use `NVIDIA NCCL` as the backend and must set `init_method="env://"` if use `torchrun`.
- Wrap the model with `DistributedDataParallel` after moving to expected device.
- Partition dataset before training, so every rank process will only handle its own data partition.

Example script to execute this program on a single node with 4 GPUs:
    torchrun --nproc_per_node=4 brats_training_workflows_ddp.py -d /workspace/data/medical/brats2018

Note:
    Suggest setting exactly the same software environment for every node, especially `PyTorch`, `nccl`, etc.
    A good practice is to use the same MONAI docker image for all nodes directly.
"""

import argparse
import logging
import os
import sys

import torch
import torch.distributed as dist
from ignite.metrics import Accuracy
from torch.nn.parallel import DistributedDataParallel

import monai
from monai.apps import DecathlonDataset
from monai.data import DataLoader, partition_dataset
from monai.engines import SupervisedEvaluator, SupervisedTrainer
from monai.handlers import (
    CheckpointSaver,
    LrScheduleHandler,
    MeanDice,
    StatsHandler,
    ValidationHandler,
    from_engine,
)
from monai.inferers import SimpleInferer, SlidingWindowInferer
from monai.losses import DiceLoss
from monai.networks.nets import SegResNet
from monai.transforms import (
    Activationsd,
    AsDiscreted,
    Compose,
    ConvertToMultiChannelBasedOnBratsClassesd,
    EnsureChannelFirstd,
    LoadImaged,
    NormalizeIntensityd,
    Orientationd,
    RandFlipd,
    RandScaleIntensityd,
    RandShiftIntensityd,
    RandSpatialCropd,
    Spacingd,
    ToDeviced,
)
from monai.utils import set_determinism


def train(args):
    local_rank = int(os.environ["LOCAL_RANK"])
    # disable logging for processes except 0 on every node
    if local_rank != 0:
        f = open(os.devnull, "w")
        sys.stdout = sys.stderr = f

    # initialize the distributed training process, every GPU runs in a process
    dist.init_process_group(backend="nccl", init_method="env://")
    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    # the metric all_reduce needs tensors on the communication device: GPU for nccl, CPU for gloo
    metric_device = device if dist.get_backend() == "nccl" else torch.device("cpu")

    train_transforms = Compose(
        [
            LoadImaged(keys=["image", "label"]),
            EnsureChannelFirstd(keys="image"),
            ConvertToMultiChannelBasedOnBratsClassesd(keys="label"),
            Orientationd(keys=["image", "label"], axcodes="RAS"),
            Spacingd(keys=["image", "label"], pixdim=(1.0, 1.0, 1.0), mode=("bilinear", "nearest")),
            # move to the local GPU early, the random crops/flips below then run there
            ToDeviced(keys=["image", "label"], device=device),
            RandSpatialCropd(keys=["image", "label"], roi_size=[224, 224, 144], random_size=False),
            RandFlipd(keys=["image", "label"], prob=0.5, spatial_axis=0),
            RandFlipd(keys=["image", "label"], prob=0.5, spatial_axis=1),
            RandFlipd(keys=["image", "label"], prob=0.5, spatial_axis=2),
            NormalizeIntensityd(keys="image", nonzero=True, channel_wise=True),
            RandScaleIntensityd(keys="image", factors=0.1, prob=1.0),
            RandShiftIntensityd(keys="image", offsets=0.1, prob=1.0),
        ]
    )
    val_transforms = Compose(
        [
            LoadImaged(keys=["image", "label"]),
            EnsureChannelFirstd(keys="image"),
            ConvertToMultiChannelBasedOnBratsClassesd(keys="label"),
            Orientationd(keys=["image", "label"], axcodes="RAS"),
            Spacingd(keys=["image", "label"], pixdim=(1.0, 1.0, 1.0), mode=("bilinear", "nearest")),
            NormalizeIntensityd(keys="image", nonzero=True, channel_wise=True),
        ]
    )

    # every rank caches only its own shard of the training data
    train_ds = DecathlonDataset(
        root_dir=args.dir, task="Task01_BrainTumour", transform=train_transforms, section="training",
        download=False, cache_rate=0.0, num_workers=4,
    )
    train_ds.data = partition_dataset(train_ds.data, num_partitions=dist.get_world_size(), shuffle=True,
                                      even_divisible=True)[dist.get_rank()]
    val_ds = DecathlonDataset(
        root_dir=args.dir, task="Task01_BrainTumour", transform=val_transforms, section="validation",
        download=False, cache_rate=0.0, num_workers=4,
    )
    val_ds.data = partition_dataset(val_ds.data, num_partitions=dist.get_world_size(), shuffle=False,
                                    even_divisible=False)[dist.get_rank()]
    # ToDeviced already placed the data on the GPU, so no worker processes / pinning for training
    train_loader = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=0)
    val_loader = DataLoader(val_ds, batch_size=1, shuffle=False, num_workers=4, pin_memory=True)

    # create network, loss function and optimizer
    net = SegResNet(
        blocks_down=[1, 2, 2, 4], blocks_up=[1, 1, 1], init_filters=16, in_channels=4, out_channels=3,
        dropout_prob=0.2,
    ).to(device)
    loss = DiceLoss(smooth_nr=0, smooth_dr=1e-5, squared_pred=True, to_onehot_y=False, sigmoid=True)
    opt = torch.optim.Adam(net.parameters(), 1e-4 * dist.get_world_size(), weight_decay=1e-5, amsgrad=True)
    lr_scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    # wrap the model with DistributedDataParallel module
    net = DistributedDataParallel(net, device_ids=[device])

    post_transforms = Compose(
        [
            Activationsd(keys="pred", sigmoid=True),
            AsDiscreted(keys="pred", threshold=0.5),
        ]
    )
    val_handlers = [StatsHandler(output_transform=lambda x: None)] if dist.get_rank() == 0 else None
    evaluator = SupervisedEvaluator(
        device=device,
        val_data_loader=val_loader,
        network=net,
        inferer=SlidingWindowInferer(roi_size=(240, 240, 160), sw_batch_size=4, overlap=0.5),
        postprocessing=post_transforms,
        key_val_metric={
            "val_mean_dice": MeanDice(
                include_background=True,
                output_transform=from_engine(["pred", "label"]),
                device=metric_device,
            )
        },
        val_handlers=val_handlers,
        # if no FP16 support in GPU or PyTorch version < 1.6, will not enable AMP evaluation
        amp=True,
    )

    train_handlers = [
        LrScheduleHandler(lr_scheduler=lr_scheduler, print_lr=True),
        ValidationHandler(validator=evaluator, interval=args.val_interval, epoch_level=True),
    ]
    if dist.get_rank() == 0:
        logging.basicConfig(stream=sys.stdout, level=logging.INFO)
        train_handlers.extend(
            [
                StatsHandler(tag_name="train_loss", output_transform=from_engine(["loss"], first=True)),
                CheckpointSaver(save_dir="./runs/", save_dict={"net": net, "opt": opt}, save_interval=2),
            ]
        )

    trainer = SupervisedTrainer(
        device=device,
        max_epochs=args.epochs,
        train_data_loader=train_loader,
        network=net,
        optimizer=opt,
        loss_function=loss,
        inferer=SimpleInferer(),
        # if no FP16 support in GPU or PyTorch version < 1.6, will not enable AMP evaluation
        amp=True,
        key_train_metric={"train_acc": Accuracy(output_transform=from_engine(["pred", "label"]), device=metric_device)},
        train_handlers=train_handlers,
    )
    trainer.run()
    if dist.get_rank() == 0:
        print(f"peak memory on rank 0: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-d", "--dir", default="./testdata", type=str, help="directory of Brain Tumor dataset.")
    parser.add_argument("--epochs", default=300, type=int, metavar="N", help="number of total epochs to run")
    parser.add_argument("-b", "--batch_size", default=1, type=int, help="mini-batch size of every GPU.")
    parser.add_argument("--val_interval", type=int, default=10)
    parser.add_argument("--seed", default=None, type=int, help="seed for initializing training.")
    args = parser.parse_args()

    if args.seed is not None:
        set_determinism(seed=args.seed)

    train(args=args)


# usage example (refer to https://pytorch.org/docs/stable/elastic/run.html):

# torchrun --standalone --nnodes=1 --nproc_per_node=NUM_GPUS_PER_NODE
#        brats_training_workflows_ddp.py -d DIR_OF_TESTDATA

if __name__ == "__main__":
    main()
