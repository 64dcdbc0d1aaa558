"""Train an E3D-LSTM on TaxiBJ crowd-flow sequences.

PyTorch re-implementation of "Eidetic 3D LSTM: A Model for Video Prediction
and Beyond" (Wang et al., ICLR 2019).  Tested on 1x V100 and 4x 2080Ti.
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from dataset import SlidingWindowDataset
from e3d_lstm import E3DLSTM
from utils import h5_virtual_file, window, weights_init

# All tensors of the model are kept in fp32 on the GPU.
dtype = torch.cuda.FloatTensor


def parse_args():
    parser = argparse.ArgumentParser(description='E3D-LSTM TaxiBJ trainer')
    parser.add_argument('--data_root', default='./data/TaxiBJ', type=str)
    parser.add_argument('--epochs', default=100, type=int)
    parser.add_argument('--batch_size', default=32, type=int)
    parser.add_argument('--lr', default=1e-3, type=float)
    parser.add_argument('--gpu_ids', default='0', type=str,
                        help='e.g. "0,1,2,3" to train with DataParallel on four GPUs')
    parser.add_argument('--num_workers', default=4, type=int)
    parser.add_argument('--log_dir', default='./runs/e3d_taxibj', type=str)
    parser.add_argument('--ckpt', default='', type=str, help='resume from checkpoint')
    parser.add_argument('--seed', default=1234, type=int)
    return parser.parse_args()


class TaxiBJTrainer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.num_epoch = args.epochs
        self.batch_size = args.batch_size
        self.input_time_window = 4
        self.output_time_horizon = 1
        self.temporal_stride = 1
        self.temporal_frames = 2
        self.time_steps = (self.input_time_window - self.temporal_frames + 1) // self.temporal_stride

        # Initiate the network
        # CxT×H×W
        input_shape = (2, self.temporal_frames, 32, 32)
        output_shape = (2, self.output_time_horizon, 32, 32)

        self.tau = 2
        hidden_size = 64
        kernel = (2, 5, 5)
        lstm_layers = 4

        self.encoder = E3DLSTM(input_shape, hidden_size, lstm_layers, kernel, self.tau).type(dtype)
        self.decoder = nn.Conv3d(hidden_size * self.time_steps, output_shape[0], kernel, padding=(0, 2, 2)).type(dtype)

        self.apply(weights_init())
        self.optimizer = torch.optim.Adam(self.parameters(), lr=args.lr)

    def forward(self, input_seq):
        return self.decoder(self.encoder(input_seq))

    def loss(self, input_seq, target):
        output = self(input_seq)
        l2_loss = F.mse_loss(output * 255, target * 255)
        l1_loss = F.l1_loss(output * 255, target * 255)
        return l1_loss, l2_loss

    def get_trainloader(self, raw_data, shuffle=True):
        # NOTE note we do simple transformation, only approx within [0,1]
        dataset = SlidingWindowDataset(raw_data,
                                       self.input_time_window,
                                       self.output_time_horizon,
                                       lambda t: t / 255,
                                       self.temporal_stride,
                                       self.temporal_frames)
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=shuffle,
                          num_workers=self.args.num_workers, pin_memory=True, drop_last=True)

    def validate(self, model, val_dataloader):
        model.eval()
        sum_l1_loss = 0
        sum_l2_loss = 0
        with torch.no_grad():
            for i, (input, target) in enumerate(val_dataloader):
                frames_seq = []
                for indices in window(range(self.input_time_window), self.temporal_frames, self.temporal_stride):
                    # batch x channels x time x window x height
                    frames_seq.append(input[:, :, indices[0]: indices[-1] + 1])
                input = torch.stack(frames_seq, dim=0).type(dtype)
                target = target.type(dtype)
                l1_loss, l2_loss = self.loss(input, target)
                sum_l1_loss += l1_loss
                sum_l2_loss += l2_loss
        print(f"Validation L1:{sum_l1_loss / (i + 1)}; L2: {sum_l2_loss / (i + 1)}")
        return sum_l2_loss / (i + 1)

    def resume_train(self, ckpt_path, resume=False):
        # 2 weeks / 30min time step = 672
        train_dataloader, val_dataloader = self.prepare_data(672)
        if resume:
            checkpoint = torch.load(ckpt_path)
            self.load_state_dict(checkpoint['state_dict'])
            self.optimizer.load_state_dict(checkpoint['optimizer'])
            print('Resumed from', ckpt_path)
        self.train_loop(train_dataloader, val_dataloader)

    def prepare_data(self, test_size):
        taxibj_dir = os.path.join(self.args.data_root, '')
        # Let's use only 2014-2016 for training, as reported in the paper
        f = h5_virtual_file(
            [
                f"{taxibj_dir}BJ14_M32x32_T30_InOut.h5",
                f"{taxibj_dir}BJ15_M32x32_T30_InOut.h5",
                f"{taxibj_dir}BJ16_M32x32_T30_InOut.h5",
            ]
        )
        data = f.get("data")
        train_dataloader = self.get_trainloader(data[:-test_size])
        val_dataloader = self.get_trainloader(data[-test_size:], False)
        return train_dataloader, val_dataloader

    def train_loop(self, train_dataloader, val_dataloader):
        gpu_ids = [int(g) for g in self.args.gpu_ids.split(',')]
        model = self
        if len(gpu_ids) > 1:
            model = nn.DataParallel(self, device_ids=gpu_ids)
        writer = SummaryWriter(self.args.log_dir)
        best_val = float('inf')
        step = 0

        for epoch in range(self.num_epoch):
            model.train()
            tic = time.time()
            for i, (input, target) in enumerate(train_dataloader):
                frames_seq = []

                for indices in window(range(self.input_time_window), self.temporal_frames, self.temporal_stride):
                    # batch x channels x time x window x height
                    frames_seq.append(input[:, :, indices[0]: indices[-1] + 1])

                input = torch.stack(frames_seq, dim=0).type(dtype)
                target = target.type(dtype)

                self.optimizer.zero_grad()
                output = model(input)
                l2_loss = F.mse_loss(output * 255, target * 255)
                l1_loss = F.l1_loss(output * 255, target * 255)
                loss = l1_loss + l2_loss
                loss.backward()
                self.optimizer.step()

                if i % 10 == 0:
                    writer.add_scalar('train/l1', l1_loss.item(), step)
                    writer.add_scalar('train/l2', l2_loss.item(), step)
                    print("Epoch: {}/{}, step: {}/{}, mse: {:.4f}, {:.2f}s/it".format(
                        epoch, self.num_epoch, i, len(train_dataloader), l2_loss.item(),
                        (time.time() - tic) / (i + 1)))
                step += 1

            torch.cuda.empty_cache()
            val_loss = self.validate(model, val_dataloader)
            writer.add_scalar('val/l2', float(val_loss), epoch)
            state = {'epoch': epoch, 'state_dict': self.state_dict(), 'optimizer': self.optimizer.state_dict()}
            torch.save(state, os.path.join(self.args.log_dir, 'last.pt'))
            if val_loss < best_val:
                best_val = val_loss
                torch.save(state, os.path.join(self.args.log_dir, 'best.pt'))


if __name__ == '__main__':
    args = parse_args()
    os.makedirs(args.log_dir, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(int(args.gpu_ids.split(',')[0]))

    trainer = TaxiBJTrainer(args)
    trainer.resume_train(args.ckpt, resume=bool(args.ckpt))
