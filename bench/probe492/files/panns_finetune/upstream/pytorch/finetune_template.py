"""Fine-tune a pretrained PANNs Cnn14 on a small species dataset.

The AudioSet-pretrained backbone is loaded from `Cnn14_mAP=0.431.pth` (the
released checkpoint) and a new linear head is trained on top of it. Clips are
expected as 32 kHz mono wav files listed in a CSV with `filename,species`.
"""
import os
import sys
sys.path.insert(1, os.path.join(sys.path[0], '../utils'))
import numpy as np
import argparse
import csv
import logging
import random
import time

import librosa
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import Dataset, DataLoader

from utilities import create_folder, get_filename, create_logging
from models import *
from pytorch_utils import move_data_to_device, do_mixup
import config


class Transfer_Cnn14(nn.Module):
    def __init__(self, sample_rate, window_size, hop_size, mel_bins, fmin,
        fmax, classes_num, freeze_base):
        """Classifier for a new task using pretrained Cnn14 as a sub module.
        """
        super(Transfer_Cnn14, self).__init__()
        audioset_classes_num = 527

        self.base = Cnn14(sample_rate, window_size, hop_size, mel_bins, fmin,
            fmax, audioset_classes_num)

        # Transfer to another task layer
        self.fc_transfer = nn.Linear(2048, classes_num, bias=True)

        if freeze_base:
            # Freeze AudioSet pretrained layers
            for param in self.base.parameters():
                param.requires_grad = False

        self.init_weights()

    def init_weights(self):
        init_layer(self.fc_transfer)

    def load_from_pretrain(self, pretrained_checkpoint_path):
        checkpoint = torch.load(pretrained_checkpoint_path)
        self.base.load_state_dict(checkpoint['model'])

    def forward(self, input, mixup_lambda=None):
        """Input: (batch_size, data_length)
        """
        output_dict = self.base(input, mixup_lambda)
        embedding = output_dict['embedding']

        clipwise_output = torch.log_softmax(self.fc_transfer(embedding), dim=-1)
        output_dict['clipwise_output'] = clipwise_output

        return output_dict


class SpeciesClipDataset(Dataset):
    def __init__(self, csv_path, audio_dir, species, sample_rate, clip_samples):
        self.audio_dir = audio_dir
        self.sample_rate = sample_rate
        self.clip_samples = clip_samples
        self.lb_to_idx = {lb: idx for idx, lb in enumerate(species)}
        with open(csv_path, 'r') as f:
            reader = csv.DictReader(f)
            self.meta = [(row['filename'], row['species']) for row in reader]

    def __len__(self):
        return len(self.meta)

    def __getitem__(self, index):
        filename, species = self.meta[index]
        audio_path = os.path.join(self.audio_dir, filename)
        (waveform, _) = librosa.core.load(audio_path, sr=self.sample_rate, mono=True)
        waveform = self._pad_or_crop(waveform)
        target = self.lb_to_idx[species]
        return {'audio_name': filename, 'waveform': waveform.astype(np.float32),
            'target': target}

    def _pad_or_crop(self, waveform):
        if len(waveform) >= self.clip_samples:
            start = random.randint(0, len(waveform) - self.clip_samples)
            return waveform[start : start + self.clip_samples]
        return np.concatenate((waveform, np.zeros(self.clip_samples - len(waveform))))


def collate_fn(list_data_dict):
    np_data_dict = {}
    for key in list_data_dict[0].keys():
        np_data_dict[key] = np.array([data_dict[key] for data_dict in list_data_dict])
    return np_data_dict


def nll_loss(output_dict, target):
    return F.nll_loss(output_dict['clipwise_output'], target)


def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for batch_data_dict in loader:
            waveform = move_data_to_device(batch_data_dict['waveform'], device)
            target = move_data_to_device(batch_data_dict['target'], device)
            output = model(waveform, None)['clipwise_output']
            correct += (output.argmax(dim=-1) == target).sum().item()
            total += len(target)
    model.train()
    return correct / max(total, 1)


def train(args):

    # Arugments & parameters
    sample_rate = args.sample_rate
    window_size = args.window_size
    hop_size = args.hop_size
    mel_bins = args.mel_bins
    fmin = args.fmin
    fmax = args.fmax
    model_type = args.model_type
    pretrained_checkpoint_path = args.pretrained_checkpoint_path
    freeze_base = args.freeze_base
    device = 'cuda' if (args.cuda and torch.cuda.is_available()) else 'cpu'

    species = [line.strip() for line in open(args.species_list) if line.strip()]
    classes_num = len(species)
    pretrain = True if pretrained_checkpoint_path else False

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)

    logs_dir = os.path.join(args.workspace, 'logs', get_filename(__file__))
    create_logging(logs_dir, filemode='w')
    logging.info(args)

    # Model
    Model = eval(model_type)
    model = Model(sample_rate, window_size, hop_size, mel_bins, fmin, fmax,
        classes_num, freeze_base)

    # Load pretrained model
    if pretrain:
        logging.info('Load pretrained model from {}'.format(pretrained_checkpoint_path))
        model.load_from_pretrain(pretrained_checkpoint_path)

    train_set = SpeciesClipDataset(args.train_csv, args.audio_dir, species,
        sample_rate, config.clip_samples)
    valid_set = SpeciesClipDataset(args.valid_csv, args.audio_dir, species,
        sample_rate, config.clip_samples)

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
        collate_fn=collate_fn, num_workers=args.num_workers, drop_last=True)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, shuffle=False,
        collate_fn=collate_fn, num_workers=args.num_workers)

    optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()),
        lr=args.learning_rate, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.)

    # Parallel
    print('GPU number: {}'.format(torch.cuda.device_count()))
    model = torch.nn.DataParallel(model)

    if 'cuda' in device:
        model.to(device)

    checkpoints_dir = os.path.join(args.workspace, 'checkpoints', get_filename(__file__))
    create_folder(checkpoints_dir)

    iteration = 0
    best_acc = 0.
    for epoch in range(args.epochs):
        time1 = time.time()
        for batch_data_dict in train_loader:
            waveform = move_data_to_device(batch_data_dict['waveform'], device)
            target = move_data_to_device(batch_data_dict['target'], device)

            output_dict = model(waveform, None)
            loss = nll_loss(output_dict, target)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if iteration % 50 == 0:
                logging.info('epoch {} iteration {} loss {:.4f}'.format(
                    epoch, iteration, loss.item()))
            iteration += 1

        acc = evaluate(model, valid_loader, device)
        logging.info('epoch {} valid acc {:.4f}, time {:.1f} s'.format(
            epoch, acc, time.time() - time1))

        if acc > best_acc:
            best_acc = acc
            torch.save({'model': model.module.state_dict(), 'species': species,
                'epoch': epoch}, os.path.join(checkpoints_dir, 'best.pth'))


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Example of parser. ')
    subparsers = parser.add_subparsers(dest='mode')

    # Train
    parser_train = subparsers.add_parser('train')
    parser_train.add_argument('--workspace', type=str, required=True)
    parser_train.add_argument('--audio_dir', type=str, required=True)
    parser_train.add_argument('--train_csv', type=str, required=True)
    parser_train.add_argument('--valid_csv', type=str, required=True)
    parser_train.add_argument('--species_list', type=str, required=True)
    parser_train.add_argument('--sample_rate', type=int, default=32000)
    parser_train.add_argument('--window_size', type=int, default=1024)
    parser_train.add_argument('--hop_size', type=int, default=320)
    parser_train.add_argument('--mel_bins', type=int, default=64)
    parser_train.add_argument('--fmin', type=int, default=50)
    parser_train.add_argument('--fmax', type=int, default=14000)
    parser_train.add_argument('--model_type', type=str, default='Transfer_Cnn14')
    parser_train.add_argument('--pretrained_checkpoint_path', type=str)
    parser_train.add_argument('--freeze_base', action='store_true', default=False)
    parser_train.add_argument('--batch_size', type=int, default=32)
    parser_train.add_argument('--learning_rate', type=float, default=1e-4)
    parser_train.add_argument('--epochs', type=int, default=30)
    parser_train.add_argument('--num_workers', type=int, default=4)
    parser_train.add_argument('--seed', type=int, default=1234)
    parser_train.add_argument('--cuda', action='store_true', default=False)

    args = parser.parse_args()

    if args.mode == 'train':
        train(args)

    else:
        raise Exception('Error argument!')
