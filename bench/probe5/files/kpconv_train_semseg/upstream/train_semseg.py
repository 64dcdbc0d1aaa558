#
#      KPConv semantic segmentation training on S3DIS-style rooms.
#      Neighbourhoods and subsampling are precomputed on the CPU by the C++ wrappers in the
#      dataloader workers; the network runs on the first visible GPU.
#

import os
import sys
import time
import signal
from os import makedirs
from os.path import exists, join

import numpy as np
import torch
from torch.utils.data import DataLoader

from datasets.S3DIS import S3DISDataset, S3DISSampler, S3DISCollate
from models.architectures import KPFCNN
from utils.config import Config
from utils.metrics import IoU_from_confusions, fast_confusion


class S3DISConfig(Config):
    dataset = 'S3DIS'
    num_classes = None
    dataset_task = ''
    input_threads = 10
    architecture = ['simple', 'resnetb', 'resnetb_strided', 'resnetb', 'resnetb', 'resnetb_strided',
                    'resnetb', 'resnetb', 'resnetb_strided', 'resnetb_deformable', 'resnetb_deformable',
                    'resnetb_deformable_strided', 'resnetb_deformable', 'resnetb_deformable',
                    'nearest_upsample', 'unary', 'nearest_upsample', 'unary', 'nearest_upsample', 'unary',
                    'nearest_upsample', 'unary']
    in_radius = 1.5
    num_kernel_points = 15
    first_subsampling_dl = 0.03
    conv_radius = 2.5
    deform_radius = 5.0
    KP_extent = 1.2
    KP_influence = 'linear'
    aggregation_mode = 'sum'
    first_features_dim = 128
    in_features_dim = 5
    modulated = False
    use_batch_norm = True
    batch_norm_momentum = 0.02
    deform_fitting_mode = 'point2point'
    deform_fitting_power = 1.0
    deform_lr_factor = 0.1
    repulse_extent = 1.2
    max_epoch = 500
    learning_rate = 1e-2
    momentum = 0.98
    lr_decays = {i: 0.1 ** (1 / 150) for i in range(1, max_epoch)}
    grad_clip_norm = 100.0
    batch_num = 6
    epoch_steps = 500
    validation_size = 50
    checkpoint_gap = 50
    augment_scale_anisotropic = True
    augment_symmetries = [True, False, False]
    augment_rotation = 'vertical'
    augment_scale_min = 0.9
    augment_scale_max = 1.1
    augment_noise = 0.001
    augment_color = 0.8
    segloss_balance = 'none'
    saving = True
    saving_path = None


class ModelTrainer:

    def __init__(self, net, config, chkp_path=None, finetune=False, on_gpu=True):
        self.epoch = 0
        self.step = 0

        # deformable offsets learn with a smaller rate
        deform_params = [v for k, v in net.named_parameters() if 'offset' in k]
        other_params = [v for k, v in net.named_parameters() if 'offset' not in k]
        deform_lr = config.learning_rate * config.deform_lr_factor
        self.optimizer = torch.optim.SGD([{'params': other_params}, {'params': deform_params, 'lr': deform_lr}],
                                         lr=config.learning_rate, momentum=config.momentum,
                                         weight_decay=config.weight_decay)

        if on_gpu and torch.cuda.is_available():
            self.device = torch.device("cuda:0")
        else:
            self.device = torch.device("cpu")
        net.to(self.device)

        if chkp_path is not None:
            checkpoint = torch.load(chkp_path, map_location=self.device)
            net.load_state_dict(checkpoint['model_state_dict'])
            if not finetune:
                self.optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
                self.epoch = checkpoint['epoch']
            net.train()
            print("Model and training state restored.")

        if config.saving:
            if config.saving_path is None:
                config.saving_path = time.strftime('results/Log_%Y-%m-%d_%H-%M-%S', time.gmtime())
            if not exists(config.saving_path):
                makedirs(config.saving_path)
            config.save()

    def train(self, net, training_loader, val_loader, config):
        checkpoint_directory = join(config.saving_path, 'checkpoints') if config.saving else None
        if checkpoint_directory and not exists(checkpoint_directory):
            makedirs(checkpoint_directory)

        t0 = time.time()
        for epoch in range(config.max_epoch):
            if epoch == config.max_epoch - 1 and exists(join(config.saving_path, 'running_PID.txt')):
                os.remove(join(config.saving_path, 'running_PID.txt'))

            self.step = 0
            for batch in training_loader:
                if 'cuda' in self.device.type:
                    batch.to(self.device)

                self.optimizer.zero_grad()
                outputs = net(batch, config)
                loss = net.loss(outputs, batch.labels)
                acc = net.accuracy(outputs, batch.labels)
                loss.backward()

                if config.grad_clip_norm > 0:
                    torch.nn.utils.clip_grad_value_(net.parameters(), config.grad_clip_norm)
                self.optimizer.step()

                torch.cuda.empty_cache()
                torch.cuda.synchronize(self.device)

                if self.step % 50 == 0:
                    print('e{:03d}-i{:04d} => L={:.3f} acc={:3.0f}% / t={:.1f}s'.format(
                        self.epoch, self.step, loss.item(), 100 * acc, time.time() - t0))
                self.step += 1

            if self.epoch in config.lr_decays:
                for param_group in self.optimizer.param_groups:
                    param_group['lr'] *= config.lr_decays[self.epoch]
            self.epoch += 1

            if config.saving:
                save_dict = {'epoch': self.epoch, 'model_state_dict': net.state_dict(),
                             'optimizer_state_dict': self.optimizer.state_dict(), 'saving_path': config.saving_path}
                torch.save(save_dict, join(checkpoint_directory, 'current_chkp.tar'))
                if (self.epoch + 1) % config.checkpoint_gap == 0:
                    torch.save(save_dict, join(checkpoint_directory, 'chkp_{:04d}.tar'.format(self.epoch + 1)))

            net.eval()
            self.validation(net, val_loader, config)
            net.train()

    def validation(self, net, val_loader, config):
        softmax = torch.nn.Softmax(1)
        nc_model = config.num_classes
        confusions = []
        with torch.no_grad():
            for i, batch in enumerate(val_loader):
                if 'cuda' in self.device.type:  # validation batches too
                    batch.to(self.device)
                outputs = net(batch, config)
                stacked_probs = softmax(outputs).cpu().detach().numpy()
                labels = batch.labels.cpu().numpy()
                torch.cuda.synchronize(self.device)
                preds = val_loader.dataset.label_values[np.argmax(stacked_probs, axis=1)]
                confusions.append(fast_confusion(labels, preds, val_loader.dataset.label_values))
        C = np.sum(np.stack(confusions), axis=0).astype(np.float32)
        IoUs = IoU_from_confusions(C)
        print('validation mIoU = {:.1f}%'.format(100 * np.mean(IoUs)))


if __name__ == '__main__':

    GPU_ID = '0'
    os.environ['CUDA_VISIBLE_DEVICES'] = GPU_ID

    previous_training_path = ''
    chkp_idx = None
    chosen_chkp = None
    if previous_training_path:
        chkp_path = join('results', previous_training_path, 'checkpoints')
        chkps = [f for f in os.listdir(chkp_path) if f[:4] == 'chkp']
        chosen_chkp = 'current_chkp.tar' if chkp_idx is None else np.sort(chkps)[chkp_idx]
        chosen_chkp = join('results', previous_training_path, 'checkpoints', chosen_chkp)

    config = S3DISConfig()
    if previous_training_path:
        config.load(os.path.join('results', previous_training_path))
        config.saving_path = None
    if len(sys.argv) > 1:
        config.saving_path = sys.argv[1]

    training_dataset = S3DISDataset(config, set='training', use_potentials=True)
    test_dataset = S3DISDataset(config, set='validation', use_potentials=True)
    training_sampler = S3DISSampler(training_dataset)
    test_sampler = S3DISSampler(test_dataset)
    training_loader = DataLoader(training_dataset, batch_size=1, sampler=training_sampler, collate_fn=S3DISCollate,
                                 num_workers=config.input_threads, pin_memory=True)
    test_loader = DataLoader(test_dataset, batch_size=1, sampler=test_sampler, collate_fn=S3DISCollate,
                             num_workers=config.input_threads, pin_memory=True)

    # calibrate the batch limits and neighbour counts on the actual data
    training_sampler.calibration(training_loader, verbose=True)
    test_sampler.calibration(test_loader, verbose=True)

    net = KPFCNN(config, training_dataset.label_values, training_dataset.ignored_labels)
    trainer = ModelTrainer(net, config, chkp_path=chosen_chkp)
    print('Start training\n**************')
    trainer.train(net, training_loader, test_loader, config)
    os.kill(os.getpid(), signal.SIGINT)
