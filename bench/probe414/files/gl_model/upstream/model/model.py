import math
import os
import os.path as osp
import random
import sys
import time
from datetime import datetime

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data as tordata

from .network import GaitGL, TripletLoss
from .utils import TripletSampler

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Model:
    def __init__(self, lr, num_workers, batch_size, restore_iter, total_iter, save_name,
                 train_pid_num, frame_num, model_name, train_source, test_source,
                 dataset='CASIA-B', margin=0.2, img_size=64):
        self.save_name = save_name
        self.train_pid_num = train_pid_num
        self.train_source = train_source
        self.test_source = test_source
        self.lr = lr
        self.margin = margin
        self.frame_num = frame_num
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.model_name = model_name
        self.P, self.M = batch_size
        self.restore_iter = restore_iter
        self.total_iter = total_iter
        self.img_size = img_size
        self.dataset = dataset

        self.encoder = GaitGL(class_num=train_pid_num, dataset=dataset)
        self.encoder = nn.DataParallel(self.encoder)
        self.encoder = self.encoder.to(device)

        self.triplet_loss = TripletLoss(self.P * self.M, self.margin).to(device)
        self.ce_loss = nn.CrossEntropyLoss().to(device)

        self.optimizer = optim.Adam([
            {'params': self.encoder.parameters()},
        ], lr=self.lr, weight_decay=5e-4)
        self.scheduler = optim.lr_scheduler.MultiStepLR(self.optimizer, milestones=[70000], gamma=0.1)

        self.triplet_loss_metric = []
        self.ce_loss_metric = []
        self.sample_type = 'all'

    def collate_fn(self, batch):
        batch_size = len(batch)
        seqs = [batch[i][0] for i in range(batch_size)]
        frame_sets = [batch[i][1] for i in range(batch_size)]
        view = [batch[i][2] for i in range(batch_size)]
        seq_type = [batch[i][3] for i in range(batch_size)]
        label = [batch[i][4] for i in range(batch_size)]

        def select_frame(index):
            sample = seqs[index][0]
            frame_set = frame_sets[index]
            if self.sample_type == 'random':
                if len(frame_set) >= self.frame_num:
                    start = random.randint(0, len(frame_set) - self.frame_num)
                    frame_id_list = sorted(frame_set)[start:start + self.frame_num]
                else:
                    frame_id_list = sorted(random.choices(frame_set, k=self.frame_num))
                return sample.loc[frame_id_list].values
            return sample.values

        seqs = [select_frame(i) for i in range(batch_size)]
        if self.sample_type == 'random':
            seqs = np.asarray(seqs)
        return seqs, view, seq_type, label

    def fit(self):
        if self.restore_iter != 0:
            self.load(self.restore_iter)

        self.encoder.train()
        self.sample_type = 'random'
        triplet_sampler = TripletSampler(self.train_source, self.batch_size)
        train_loader = tordata.DataLoader(
            dataset=self.train_source,
            batch_sampler=triplet_sampler,
            collate_fn=self.collate_fn,
            num_workers=self.num_workers,
            pin_memory=True)

        train_label_set = sorted(list(self.train_source.label_set))

        _time1 = datetime.now()
        for seq, view, seq_type, label in train_loader:
            self.restore_iter += 1
            self.optimizer.zero_grad()

            seq = torch.from_numpy(seq).float().to(device, non_blocking=True)
            target_label = torch.tensor([train_label_set.index(l) for l in label]).long().to(device)

            feature, logits = self.encoder(seq)  # [n, p, c], [n, p, class_num]

            triplet_feature = feature.permute(1, 0, 2).contiguous()
            triplet_label = target_label.unsqueeze(0).repeat(triplet_feature.size(0), 1)
            trip_loss, mean_dist, loss_num = self.triplet_loss(triplet_feature, triplet_label)

            ce_label = target_label.unsqueeze(1).repeat(1, logits.size(1)).view(-1)
            ce_loss = self.ce_loss(logits.view(-1, logits.size(-1)), ce_label)

            loss = trip_loss.mean() + 0.1 * ce_loss
            self.triplet_loss_metric.append(trip_loss.mean().item())
            self.ce_loss_metric.append(ce_loss.item())

            if loss > 1e-9:
                loss.backward()
                self.optimizer.step()
                self.scheduler.step()

            if self.restore_iter % 1000 == 0:
                print(datetime.now() - _time1)
                _time1 = datetime.now()

            if self.restore_iter % 100 == 0:
                print('iter {}: triplet={:.6f}, ce={:.6f}, lr={:.6f}'.format(
                    self.restore_iter, np.mean(self.triplet_loss_metric), np.mean(self.ce_loss_metric),
                    self.optimizer.param_groups[0]['lr']))
                sys.stdout.flush()
                self.triplet_loss_metric = []
                self.ce_loss_metric = []

            if self.restore_iter % 10000 == 0:
                self.save()

            if self.restore_iter == self.total_iter:
                break

    def transform(self, flag, batch_size=1):
        self.encoder.eval()
        source = self.test_source if flag == 'test' else self.train_source
        self.sample_type = 'all'
        data_loader = tordata.DataLoader(
            dataset=source,
            batch_size=batch_size,
            sampler=tordata.sampler.SequentialSampler(source),
            collate_fn=self.collate_fn,
            num_workers=self.num_workers)

        feature_list, view_list, seq_type_list, label_list = [], [], [], []
        total_time = 0.
        with torch.no_grad():
            for i, (seq, view, seq_type, label) in enumerate(data_loader):
                seq = torch.from_numpy(np.asarray(seq)).float().to(device)
                torch.cuda.synchronize()
                t0 = time.time()
                feature, _ = self.encoder(seq)
                torch.cuda.synchronize()  # forward done
                total_time += time.time() - t0
                n = feature.size(0)
                feature_list.append(feature.view(n, -1).data.cpu().numpy())
                view_list += view
                seq_type_list += seq_type
                label_list += label
                if i % 1000 == 0:
                    torch.cuda.empty_cache()
        print('average forward time per sequence: {:.2f} ms'.format(1000 * total_time / max(1, len(label_list))))
        return np.concatenate(feature_list, 0), view_list, seq_type_list, label_list

    def save(self):
        os.makedirs(osp.join('checkpoint', self.model_name), exist_ok=True)
        torch.save({'encoder': self.encoder.state_dict(),
                    'optimizer': self.optimizer.state_dict(),
                    'scheduler': self.scheduler.state_dict(),
                    'iter': self.restore_iter},
                   osp.join('checkpoint', self.model_name,
                            '{}-{:0>5}.ptm'.format(self.save_name, self.restore_iter)))

    def load(self, restore_iter):
        ckpt = torch.load(osp.join('checkpoint', self.model_name,
                                   '{}-{:0>5}.ptm'.format(self.save_name, restore_iter)),
                          map_location=device)
        self.encoder.load_state_dict(ckpt['encoder'])
        if 'optimizer' in ckpt:
            self.optimizer.load_state_dict(ckpt['optimizer'])
            self.scheduler.load_state_dict(ckpt['scheduler'])
