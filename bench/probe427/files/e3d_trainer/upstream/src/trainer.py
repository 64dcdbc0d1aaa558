import argparse
import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter

from dataset import get_loaders
from e3d_lstm import E3DLSTM


class TaxiBJTrainer(nn.Module):
    def __init__(self, args):
        super().__init__()

        self.args = args
        self.device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        self.dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor

        self.train_loader, self.valid_loader = get_loaders(
            args.data_root, args.batch_size, num_workers=args.num_workers,
            window=args.input_length, horizon=args.output_length)

        self.input_time_window = args.input_length
        self.output_time_horizon = args.output_length
        self.temporal_stride = 1
        self.temporal_frames = 2
        self.time_steps = (self.input_time_window - self.temporal_frames + 1) // self.temporal_stride

        # Initiate the network
        # CxT×H×W
        input_shape = (1, self.temporal_frames, 64, 64)
        output_shape = (1, self.output_time_horizon, 64, 64)

        self.tau = 2
        hidden_size = 64
        kernel = (2, 5, 5)
        lstm_layers = 4

        self.encoder = E3DLSTM(input_shape, hidden_size, lstm_layers, kernel, self.tau).type(self.dtype)
        self.decoder = nn.Conv3d(
            hidden_size * self.time_steps, output_shape[0], kernel, padding=(0, 2, 2)
        ).type(self.dtype)
        # self.decoder = nn.Sequential(
        #   nn.Conv3d(hidden_size * self.time_steps, output_shape[0], kernel, padding=(0, 2, 2)),
        #   nn.Sigmoid()
        # )

        self.to(self.device)

        # Setup optimizer
        params = self.parameters(recurse=True)
        # TODO learning rate scheduler
        # Weight decay stands for L2 regularization
        self.optimizer = torch.optim.Adam(params, lr=args.lr, weight_decay=0)

        self.apply(weights_init())

    def forward(self, input_seq):
        return self.decoder(self.encoder(input_seq))

    def loss(self, input_seq, target):
        output = self(input_seq)

        l2_loss = F.mse_loss(output * 255, target * 255)
        l1_loss = F.l1_loss(output * 255, target * 255)

        return l1_loss + l2_loss

    def unfold_frames(self, frames):
        # (B, T, C, H, W) -> (time_steps, B, C, temporal_frames, H, W)
        frames = frames.permute(1, 0, 2, 3, 4)
        windows = [
            frames[i:i + self.temporal_frames].permute(1, 2, 0, 3, 4)
            for i in range(0, self.input_time_window - self.temporal_frames + 1, self.temporal_stride)
        ]
        return torch.stack(windows, dim=0)

    def validate(self):
        self.eval()
        sum_loss = 0
        n = 0
        with torch.no_grad():
            for input, target in self.valid_loader:
                input = self.unfold_frames(input.type(self.dtype))
                target = target.type(self.dtype).permute(0, 2, 1, 3, 4)
                sum_loss += self.loss(input, target).item()
                n += 1
        self.train()
        return sum_loss / max(n, 1)

    def resume_train(self, ckpt_path=None, resume=False):
        # 2 weeks / 30min time step = 672 timestamps
        if resume:
            self.load_state_dict(torch.load(ckpt_path))
            print("loaded checkpoint {}".format(ckpt_path))

        writer = SummaryWriter(log_dir=self.args.log_dir)
        global_step = 0
        for epoch in range(self.args.epochs):
            t0 = time.time()
            for i, (input, target) in enumerate(self.train_loader):
                input = self.unfold_frames(input.type(self.dtype))
                target = target.type(self.dtype).permute(0, 2, 1, 3, 4)

                self.optimizer.zero_grad()
                loss = self.loss(input, target)
                loss.backward()
                nn.utils.clip_grad_norm_(self.parameters(), max_norm=self.args.clip)
                self.optimizer.step()

                if global_step % self.args.log_interval == 0:
                    writer.add_scalar("train/loss", loss.item(), global_step)
                    print("epoch {} iter {} loss {:.4f} ({:.1f}s)".format(
                        epoch, i, loss.item(), time.time() - t0))
                global_step += 1

            val_loss = self.validate()
            writer.add_scalar("valid/loss", val_loss, global_step)
            print("epoch {} validation loss {:.4f}".format(epoch, val_loss))
            torch.save(self.state_dict(), os.path.join(self.args.ckpt_dir, "e3d_lstm_{:03d}.pt".format(epoch)))
        writer.close()


def weights_init():
    def init_fn(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.xavier_normal_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    return init_fn


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_root", default="./data")
    parser.add_argument("--log_dir", default="./runs")
    parser.add_argument("--ckpt_dir", default="./checkpoints")
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--input_length", type=int, default=10)
    parser.add_argument("--output_length", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--clip", type=float, default=3.0)
    parser.add_argument("--log_interval", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", default="")
    args = parser.parse_args()

    os.makedirs(args.ckpt_dir, exist_ok=True)
    set_seed(args.seed)
    torch.backends.cudnn.benchmark = True

    trainer = TaxiBJTrainer(args)
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
    trainer.resume_train(args.resume, resume=bool(args.resume))


if __name__ == "__main__":
    main()
