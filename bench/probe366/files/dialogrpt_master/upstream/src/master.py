# author: Xiang Gao at Microsoft Research AI NLP Group

import torch, os, pdb, time, sys, warnings
import numpy as np
from feeder import Feeder
from model import Scorer, JointScorer
import matplotlib.pyplot as plt


class Master:

    def __init__(self, opt):
        self.opt = opt
        if opt.path_load is not None and (opt.path_load.endswith('.yaml') or opt.path_load.endswith('.yml')):
            self._model = JointScorer(opt)
        else:
            self._model = Scorer(opt)
            if opt.path_load is not None:
                self._model.load(opt.path_load)
        self.parallel()

        if opt.task != 'play':
            if opt.fld_data is not None:
                self.feeder = Feeder(opt)

        if opt.task == 'train':
            opt.save()
            os.makedirs(opt.fld_out + '/ckpt', exist_ok=True)
            self.path_log = self.opt.fld_out + '/log.txt'
        else:
            self.path_log = self.opt.fld_out + '/log_infer.txt'


    def print(self, s=''):
        try:
            print(s)
        except UnicodeEncodeError:
            print('[UnicodeEncodeError]')
            pass
        with open(self.path_log, 'a', encoding='utf-8') as f:
            f.write(s+'\n')


    def parallel(self):
        if self.opt.cuda:
            self._model = self._model.cuda()
        n_gpu = torch.cuda.device_count()
        if self.opt.cuda and n_gpu > 1:
            print('paralleling on %i GPU'%n_gpu)
            self.model = torch.nn.DataParallel(self._model)
            # after DataParallel, warpped model self.model.device_ids = [0, 1, ...]
            # and self.model.output_device = 0 (i.e. cuda:0)
        else:
            self.model = self._model


    def train(self):
        vali_loss, best_acc = self.vali()
        best_trained = 0
        step = 0
        n_trained = 0
        t0 = time.time()

        list_trainable = []
        for i, (name, param) in enumerate(self._model.named_parameters()):
            if param.requires_grad:
                list_trainable.append(param)
        optimizer = torch.optim.Adam(list_trainable, lr=self.opt.lr)

        acc_history = []
        while step < self.opt.step_max:
            self.model.train()
            optimizer.zero_grad()
            batch = self.feeder.get_batch(self.opt.batch)
            pred = self.model.forward(batch)
            loss = - torch.log(pred).mean()
            loss.backward()
            optimizer.step()

            acc = (pred > 0.5).float().mean().item()
            acc_history.append(acc)
            step += 1
            n_trained += self.opt.batch
            info = 'step %i trained %.3f best %.2f'%(step, n_trained/1e6, best_acc)

            if step % self.opt.step_print == 0:
                speed = (n_trained - best_trained) / (time.time() - t0)
                ss = [
                    info,
                    'loss %.4f' % loss.item(),
                    'acc %.3f' % np.mean(acc_history[-self.opt.step_print:]),
                    'speed %.1f ex/s' % speed,
                ]
                if self.opt.cuda:
                    ss.append('GPU mem %.1fG' % (torch.cuda.max_memory_allocated() / 1e9))
                self.print(', '.join(ss))

            if step % self.opt.step_vali == 0:
                vali_loss, vali_acc = self.vali(info)
                if vali_acc > best_acc:
                    self.save(self.opt.fld_out + '/ckpt/best.pth')
                    best_acc = vali_acc
                    best_trained = n_trained
                sys.stdout.flush()

            if step % self.opt.step_save == 0:
                self.save(self.opt.fld_out + '/ckpt/last.pth')


    def loss(self, batch):
        pred = self.model.forward(batch)
        loss = - torch.log(pred).mean()
        return loss, pred


    def vali(self, info=''):
        n_print = min(self.opt.batch, self.opt.vali_print)
        self.model.eval()
        loss = 0
        acc = 0
        hr_gap = 0
        n_batch = int(self.opt.vali_size/self.opt.batch)
        self.feeder.reset('vali')

        for _ in range(n_batch):
            batch = self.feeder.get_batch(self.opt.batch, sub='vali',
                min_score_gap=self.opt.min_score_gap, min_rank_gap=self.opt.min_rank_gap)
            with torch.no_grad():
                _loss, pred = self.loss(batch)
            loss += _loss.item()
            acc += (pred > 0.5).float().mean().item()
            hr_gap += np.nanmean(batch['hr_gap'])

        loss /= n_batch
        acc /= n_batch
        hr_gap /= n_batch
        s = '%s hr_gap %.3f vali_loss %.4f vali_acc %.3f'%(info, hr_gap, loss, acc)
        self.print(s)
        return loss, acc


    def save(self, path):
        torch.save(self._model.state_dict(), path)
        self.print('saved to '+path)
