import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn

from datasets.get_datasets import get_dataset
from netscripts.get_network import get_network
from netscripts.get_optimizer import get_optimizer
from netscripts import modelio
from netscripts.epoch_feat import epoch_pass
from options import netsopts, expopts


def main(args):
    # Initialize randoms seeds
    torch.cuda.manual_seed_all(args.manual_seed)
    torch.manual_seed(args.manual_seed)
    np.random.seed(args.manual_seed)
    random.seed(args.manual_seed)

    start_epoch = 0
    datasets = []
    for dataset_name in args.dataset_names:
        dataset = get_dataset(args, base_path=args.base_path, dataset_name=dataset_name,
                              mode=args.mode, split=args.split)
        datasets.append(dataset)

    if args.mode == "train":
        loader = torch.utils.data.DataLoader(
            torch.utils.data.ConcatDataset(datasets),
            batch_size=args.batch_size,
            shuffle=True,
            num_workers=int(args.workers),
            drop_last=True,
            pin_memory=True,
        )
    else:
        loader = torch.utils.data.DataLoader(
            torch.utils.data.ConcatDataset(datasets),
            batch_size=args.batch_size,
            shuffle=False,
            num_workers=int(args.workers),
            drop_last=False,
            pin_memory=True,
        )

    model = get_network(args, num_frames_input=int(args.fps * args.t_buffer),
                        num_frames_output=int(args.fps * args.t_ant))

    if args.use_cuda and torch.cuda.is_available():
        print("Using {} GPUs !".format(torch.cuda.device_count()))
        model.cuda()
    # always wrapped: checkpoints are stored with the "module." prefix (see modelio.load_checkpoint)
    model = nn.DataParallel(model)

    if args.resume is not None:
        device = torch.device('cuda') if torch.cuda.is_available() and args.use_cuda else torch.device('cpu')
        start_epoch = modelio.load_checkpoint(model, resume_path=args.resume[0], strict=False, device=device)
        print("Loaded checkpoint from epoch {}, starting from there".format(start_epoch))

    if args.evaluate:
        args.epochs = start_epoch + 1
        traj_val_loss_avg = epoch_pass(loader, model, phase="val", optimizer=None, epoch=start_epoch,
                                       train=False, use_cuda=args.use_cuda, num_samples=args.num_samples)
        return

    optimizer, scheduler = get_optimizer(args, model=model, train_loader=loader)
    if args.resume is not None and args.resume_optimizer:
        modelio.load_optimizer(optimizer, resume_path=args.resume[0])

    for epoch in range(start_epoch, args.epochs):
        train_avg_meters = epoch_pass(loader, model, epoch=epoch, phase="train", optimizer=optimizer,
                                      train=True, use_cuda=args.use_cuda, scheduler=scheduler)

        if (epoch + 1) % args.snapshot == 0:
            print(f"save epoch {epoch + 1} checkpoint to {args.host_folder}")
            modelio.save_checkpoint(
                {
                    "epoch": epoch + 1,
                    "network": args.network,
                    "state_dict": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler,
                },
                checkpoint=args.host_folder,
                filename=f"checkpoint_{epoch + 1}.pth.tar")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="HOI Forecasting")
    netsopts.add_nets_opts(parser)
    netsopts.add_train_opts(parser)
    expopts.add_exp_opts(parser)
    args = parser.parse_args()

    if args.use_cuda and torch.cuda.device_count() > 1:
        args.batch_size = args.batch_size * torch.cuda.device_count()
        args.workers = args.workers * torch.cuda.device_count()

    if args.gpus is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(g) for g in args.gpus)

    print("batch size:", args.batch_size)
    print("workers:", args.workers)
    main(args)
