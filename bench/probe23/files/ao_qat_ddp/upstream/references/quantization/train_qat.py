"""Eager-mode quantization-aware training for MobileNetV2 (torch.ao.quantization).

Launch:
    torchrun --nproc_per_node=8 train_qat.py --data-path /data/imagenet

The network is trained with fake quantization on the GPUs and converted to a
real int8 model on the CPU (fbgemm) at the end of every epoch for evaluation.
"""
import argparse
import copy
import datetime
import os
import time

import torch
import torch.ao.quantization as tq
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.ao.nn.intrinsic import qat as nniqat
from torch.nn.parallel import DistributedDataParallel as DDP

from data import build_train_loader, build_val_loader  # local helper
from engine import evaluate, train_one_epoch  # local helper


def get_args():
    p = argparse.ArgumentParser("QAT training")
    p.add_argument("--data-path", required=True)
    p.add_argument("--backend", default="fbgemm", help="quantized engine for the final int8 model")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--num-observer-update-epochs", type=int, default=4)
    p.add_argument("--num-batch-norm-update-epochs", type=int, default=3)
    p.add_argument("--output-dir", default="./qat_out")
    p.add_argument("--dist-url", default="env://")
    return p.parse_args()


def init_distributed(args):
    if "RANK" not in os.environ:
        args.distributed = False
        args.gpu = 0
        return
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.gpu = int(os.environ["LOCAL_RANK"])
    args.distributed = True
    torch.cuda.set_device(args.gpu)
    dist.init_process_group(backend="nccl", init_method=args.dist_url,
                            world_size=args.world_size, rank=args.rank)
    dist.barrier()


def fuse_for_qat(model):
    """Fuse Conv+BN(+ReLU) so that BN folding is simulated during QAT."""
    for m in model.modules():
        if type(m) is torchvision.models.quantization.mobilenetv2.QuantizableInvertedResidual:
            for idx in range(len(m.conv)):
                if type(m.conv[idx]) is nn.Conv2d:
                    tq.fuse_modules_qat(m.conv, [str(idx), str(idx + 1)], inplace=True)
        elif type(m) is torchvision.ops.misc.Conv2dNormActivation:
            tq.fuse_modules_qat(m, [["0", "1", "2"]], inplace=True)
    return model


def main():
    args = get_args()
    init_distributed(args)
    device = torch.device("cuda")
    torch.backends.quantized.engine = args.backend

    train_loader, train_sampler = build_train_loader(args.data_path, args.batch_size, args.distributed)
    val_loader = build_val_loader(args.data_path, args.batch_size)

    model = torchvision.models.quantization.mobilenet_v2(weights="IMAGENET1K_V1", quantize=False)
    model.train()
    fuse_for_qat(model)
    model.qconfig = tq.get_default_qat_qconfig(args.backend)
    tq.prepare_qat(model, inplace=True)
    model.to(device)

    model_without_ddp = model
    if args.distributed:
        model = DDP(model, device_ids=[args.gpu])
        model_without_ddp = model.module

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)

    os.makedirs(args.output_dir, exist_ok=True)
    start = time.time()
    for epoch in range(args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, criterion, optimizer, train_loader, device, epoch, print_freq=50)
        scheduler.step()

        with torch.inference_mode():
            if epoch >= args.num_observer_update_epochs:
                print("Freezing quantizer parameters")
                model.apply(tq.disable_observer)
            if epoch >= args.num_batch_norm_update_epochs:
                print("Freezing BN statistics")
                model.apply(nniqat.freeze_bn_stats)

            # int8 evaluation runs on the host: quantized kernels are CPU-only
            quantized_eval_model = copy.deepcopy(model_without_ddp)
            quantized_eval_model.eval()
            quantized_eval_model.to(torch.device("cpu"))
            tq.convert(quantized_eval_model, inplace=True)
            acc = evaluate(quantized_eval_model, criterion, val_loader, device=torch.device("cpu"))
            print(f"epoch {epoch}: int8 top-1 {acc:.2f}")

        if not args.distributed or args.rank == 0:
            torch.save({"model": model_without_ddp.state_dict(), "epoch": epoch},
                       os.path.join(args.output_dir, f"qat_{epoch}.pth"))
            torch.save(quantized_eval_model.state_dict(),
                       os.path.join(args.output_dir, f"int8_{epoch}.pth"))

    print("Training time", str(datetime.timedelta(seconds=int(time.time() - start))))
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
