import os
import random
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import roc_auc_score, accuracy_score

from models import F3Net
from utils import evaluate, get_dataset, FFDataset, setup_logger

# GPUs are selected from the shell, e.g. CUDA_VISIBLE_DEVICES=0,1 python train.py
osenvs = len(os.environ['CUDA_VISIBLE_DEVICES'].split(','))

# config
dataset_path = '/data/yike/FF++_std_c40_300frames/'
pretrained_path = 'pretrained/xception-b5690688.pth'
batch_size = 12
gpu_ids = [*range(osenvs)]
max_epoch = 5
loss_freq = 40
mode = 'FAD'  # ['Original', 'FAD', 'LFS', 'Both', 'Mix']
ckpt_dir = '/data/yike/checkpoints/F3Net'
ckpt_name = 'FAD4_bz128'


def initModel(mod, gpu_ids):
    mod = mod.to(f'cuda:{gpu_ids[0]}')
    mod = nn.DataParallel(mod, gpu_ids)
    return mod


class Trainer():
    def __init__(self, gpu_ids, mode, pretrained_path):
        self.device = torch.device(f'cuda:{gpu_ids[0]}') if gpu_ids else torch.device('cpu')
        self.model = F3Net(mode=mode, device=self.device)
        self.model = initModel(self.model, gpu_ids)
        self.loss_fn = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, self.model.parameters()),
                                          lr=0.0002, betas=(0.9, 0.999))
        # self.optimizer = optim.SGD(filter(lambda p: p.requires_grad, self.model.parameters()),
        #                             lr=0.001, momentum=0.9, weight_decay=0)

    def set_input(self, input, label):
        self.input = input.to(self.device)
        self.label = label.to(self.device)

    def forward(self, x):
        fea, out = self.model(x)
        return out

    def optimize_weight(self):
        stu_fea, stu_cla = self.model(self.input)

        self.loss_cla = self.loss_fn(stu_cla.squeeze(1), self.label)  # classify loss
        self.loss = self.loss_cla

        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        return self.loss

    def save(self, path):
        torch.save(self.model.state_dict(), path)

    def load(self, path):
        self.model.load_state_dict(torch.load(path))


def seed_everything(seed=1234):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)


if __name__ == '__main__':
    seed_everything()
    dataset = FFDataset(dataset_root=os.path.join(dataset_path, 'train', 'real'), size=299, frame_num=300, augment=True)
    dataloader_real = torch.utils.data.DataLoader(
        dataset=dataset,
        batch_size=batch_size // 2,
        shuffle=True,
        num_workers=8)

    len_dataloader = dataloader_real.__len__()

    dataset_img, total_len = get_dataset(name='train', size=299, root=dataset_path, frame_num=300, augment=True)
    dataloader_fake = torch.utils.data.DataLoader(
        dataset=dataset_img,
        batch_size=batch_size // 2,
        shuffle=True,
        num_workers=8
    )

    # init checkpoint and logger
    ckpt_path = os.path.join(ckpt_dir, ckpt_name)
    logger = setup_logger(ckpt_path, 'result.log', 'logger')
    best_val = 0.
    ckpt_model_name = 'best.pkl'

    # train
    model = Trainer(gpu_ids, mode, pretrained_path)
    model.total_steps = 0
    epoch = 0

    while epoch < max_epoch:

        fake_iter = iter(dataloader_fake)
        real_iter = iter(dataloader_real)

        logger.debug(f'No {epoch}')
        i = 0

        while i < len_dataloader:

            i += 1
            model.total_steps += 1

            try:
                data_real, label_real = real_iter.next()
                data_fake, label_fake = fake_iter.next()
            except StopIteration:
                break
            # -------------------------------------------------

            if data_real.shape[0] != data_fake.shape[0]:
                continue

            bz = data_real.shape[0]

            data = torch.cat([data_real, data_fake], dim=0)
            label = torch.cat([label_real, label_fake], dim=0)

            # manually shuffle
            idx = list(range(data.shape[0]))
            random.shuffle(idx)
            data = data[idx]
            label = label[idx]

            data = data.detach()
            label = label.detach()

            model.set_input(data, label)
            loss = model.optimize_weight()

            if model.total_steps % loss_freq == 0:
                logger.debug(f'loss: {loss} at step: {model.total_steps}')

            if i % int(len_dataloader / 10) == 0:
                model.model.eval()
                auc, r_acc, f_acc = evaluate(model, dataset_path, mode='valid')
                logger.debug(f'(Val @ epoch {epoch}) auc: {auc}, r_acc: {r_acc}, f_acc:{f_acc}')
                auc, r_acc, f_acc = evaluate(model, dataset_path, mode='test')
                logger.debug(f'(Test @ epoch {epoch}) auc: {auc}, r_acc: {r_acc}, f_acc:{f_acc}')
                model.model.train()
                if auc > best_val:
                    best_val = auc
                    model.save(path=os.path.join(ckpt_path, ckpt_model_name))
                torch.cuda.empty_cache()
        epoch = epoch + 1

    model.model.eval()
    auc, r_acc, f_acc = evaluate(model, dataset_path, mode='test')
    logger.debug(f'(Test @ epoch {epoch}) auc: {auc}, r_acc: {r_acc}, f_acc:{f_acc}')
