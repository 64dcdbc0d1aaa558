import os, sys, time, shutil, tempfile, datetime, pathlib, subprocess
import logging
import numpy as np
from tqdm import trange, tqdm
from urllib.parse import urlparse
import tempfile
import cv2
from scipy.stats import mode
import fastremap
from . import transforms, dynamics, utils, plot, metrics, resnet_torch

import torch
from torch import nn
from torch.utils import mkldnn as mkldnn_utils
from torch.cuda.amp import autocast, GradScaler

from omnipose.gpu import use_gpu, assign_device, empty_cache, torch_GPU, torch_CPU, ARM
from omnipose.core import loss as omni_loss

TORCH_ENABLED = True
core_logger = logging.getLogger(__name__)
tqdm_out = utils.TqdmToLogger(core_logger, level=logging.INFO)

# automatic mixed precision is off by default; it helps on recent NVIDIA cards
# (tensor cores) but occasionally gives NaN flows with the 3D models
AMP = os.environ.get('OMNI_AMP', '0') == '1'


def parse_model_string(pretrained_model):
    if isinstance(pretrained_model, list):
        model_str = os.path.split(pretrained_model[0])[-1]
    else:
        model_str = os.path.split(pretrained_model)[-1]
    if len(model_str) > 3 and model_str[:4] == 'unet':
        cp = False
        nclasses = max(2, int(model_str[4]))
    elif len(model_str) > 7 and model_str[:8] == 'cellpose':
        cp = True
        nclasses = 3
    else:
        return True, True, False
    if 'residual' in model_str and 'style' in model_str and 'concatentation' in model_str:
        ostrs = model_str.split('_')[2::2]
        residual_on = ostrs[0] == 'on'
        style_on = ostrs[1] == 'on'
        concatenation = ostrs[2] == 'on'
        return residual_on, style_on, concatenation
    else:
        if cp:
            return True, True, False
        else:
            return False, False, True


class UnetModel():
    def __init__(self, gpu=False, pretrained_model=False,
                 diam_mean=30., net_avg=False, device=None,
                 residual_on=False, style_on=False, concatenation=True,
                 nclasses=3, nchan=2, dim=2, checkpoint=False, dropout=False,
                 kernel_size=2, scale_factor=2, allow_blank_masks=False):
        self.unet = True
        self.torch = True
        self.mkldnn = None
        if device is None:
            sdevice, gpu = assign_device(self.torch, gpu)
        self.device = device if device is not None else sdevice
        if device is not None:
            if ARM:
                device_gpu = self.device.type == 'mps'
            else:
                device_gpu = self.device.type == 'cuda'
        self.gpu = gpu if device is None else device_gpu
        if not self.gpu:
            self.mkldnn = check_mkl(True)
        self.pretrained_model = pretrained_model
        self.diam_mean = diam_mean
        self.dim = dim
        self.allow_blank_masks = allow_blank_masks
        self.checkpoint = checkpoint
        self.dropout = dropout
        self.kernel_size = kernel_size
        self.scale_factor = scale_factor

        if pretrained_model:
            params = parse_model_string(pretrained_model)
            if params is not None:
                residual_on, style_on, concatenation = params

        ostr = ['off', 'on']
        self.net_type = 'unet{}_residual_{}_style_{}_concatenation_{}'.format(
            nclasses, ostr[residual_on], ostr[style_on], ostr[concatenation])
        if pretrained_model:
            core_logger.info(f'u-net net type: {self.net_type}')
        # create network
        self.nclasses = nclasses
        self.nbase = [32, 64, 128, 256]
        self.nchan = nchan
        self.nbase = [nchan, 32, 64, 128, 256]
        self.net = resnet_torch.CPnet(self.nbase,
                                      self.nclasses,
                                      sz=3,
                                      residual_on=residual_on,
                                      style_on=style_on,
                                      concatenation=concatenation,
                                      mkldnn=self.mkldnn,
                                      dim=self.dim,
                                      checkpoint=self.checkpoint,
                                      dropout=self.dropout,
                                      kernel_size=self.kernel_size,
                                      scale_factor=self.scale_factor).to(self.device)

        if pretrained_model is not None and isinstance(pretrained_model, str):
            self.net.load_model(pretrained_model, device=self.device)

    def _to_device(self, x):
        X = torch.from_numpy(x).float().to(self.device)
        return X

    def _from_device(self, X):
        x = X.detach().cpu().numpy()
        return x

    def network(self, x, return_conv=False):
        """ convert imgs to torch and run network model and return numpy """
        X = self._to_device(x)
        self.net.eval()
        if self.mkldnn:
            self.net = mkldnn_utils.to_mkldnn(self.net)
        with torch.no_grad():
            with autocast(enabled=AMP and self.gpu):
                y, style = self.net(X)[:2]
        del X
        y = self._from_device(y)
        style = self._from_device(style)
        if return_conv:
            conv = self._from_device(conv)
            y = np.concatenate((y, conv), axis=1)
        return y, style

    def _set_optimizer(self, learning_rate, momentum, weight_decay, SGD):
        if SGD:
            self.optimizer = torch.optim.SGD(self.net.parameters(), lr=learning_rate,
                                             momentum=momentum, weight_decay=weight_decay)
        else:
            import torch_optimizer as optim  # for RADAM optimizer
            self.optimizer = optim.RAdam(self.net.parameters(), lr=learning_rate,
                                         betas=(0.95, 0.999), eps=1e-08,
                                         weight_decay=weight_decay)
            core_logger.info('>>> Using RAdam optimizer')
            self.optimizer.current_lr = learning_rate

    def _set_learning_rate(self, lr):
        for param_group in self.optimizer.param_groups:
            param_group['lr'] = lr

    def _set_criterion(self):
        if self.unet:
            if self.torch:
                criterion = nn.SoftMax2d()
                self.criterion = nn.NLLLoss()
        else:
            if self.torch:
                self.criterion = nn.MSELoss(reduction='mean')
                self.criterion2 = nn.BCEWithLogitsLoss(reduction='mean')

    def _train_step(self, x, lbl):
        X = self._to_device(x)
        self.optimizer.zero_grad()
        self.net.train()

        with autocast(enabled=AMP):
            y = self.net(X)[0]
            del X
            loss = self.loss_fn(lbl, y)

        if AMP:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()

        train_loss = loss.item()
        return train_loss

    def _test_eval(self, x, lbl):
        X = self._to_device(x)
        self.net.eval()
        with torch.no_grad():
            y, style = self.net(X)[:2]
            del X
            loss = self.loss_fn(lbl, y)
            test_loss = loss.item()
        return test_loss

    def _train_net(self, train_data, train_labels, train_links=None,
                   test_data=None, test_labels=None, test_links=None,
                   save_path=None, save_every=100, save_each=False,
                   learning_rate=0.2, n_epochs=500, momentum=0.9, weight_decay=0.00001,
                   SGD=True, batch_size=8, nimg_per_epoch=None, rescale=True,
                   affinity_field=False, netstr=None, do_autocast=False,
                   tyx=None, timing=False, do_rescale=True, num_workers=0,
                   dataloader=False):
        """ train function uses loss function self.loss_fn in models.py"""

        d = datetime.datetime.now()
        self.autocast = do_autocast
        self.n_epochs = n_epochs
        if isinstance(learning_rate, (list, np.ndarray)):
            if isinstance(learning_rate, np.ndarray) and learning_rate.ndim > 1:
                raise ValueError('learning_rate.ndim must equal 1')
            elif len(learning_rate) != n_epochs:
                raise ValueError('if learning_rate given as list or np.ndarray it must have length n_epochs')
            self.learning_rate = learning_rate
            self.learning_rate_const = mode(learning_rate)[0][0]
        else:
            self.learning_rate_const = learning_rate
            # set learning rate schedule
            if SGD:
                LR = np.linspace(0, self.learning_rate_const, 10)
                if self.n_epochs > 250:
                    LR = np.append(LR, self.learning_rate_const * np.ones(self.n_epochs - 100))
                    for i in range(10):
                        LR = np.append(LR, LR[-1] / 2 * np.ones(10))
                else:
                    LR = np.append(LR, self.learning_rate_const * np.ones(max(0, self.n_epochs - 10)))
            else:
                LR = self.learning_rate_const * np.ones(self.n_epochs)
            self.learning_rate = LR

        self.batch_size = batch_size
        self._set_optimizer(self.learning_rate[0], momentum, weight_decay, SGD)
        self._set_criterion()
        self.scaler = GradScaler(enabled=AMP)

        nimg = len(train_data)

        # compute average cell diameter
        if rescale:
            diam_train = np.array([utils.diameters(train_labels[k])[0] for k in range(len(train_labels))])
            diam_train_mean = diam_train[diam_train > 0].mean()
            self.diam_labels = diam_train_mean
            if rescale:
                diam_train[diam_train < 5] = 5.
                if test_data is not None:
                    diam_test = np.array([utils.diameters(test_labels[k][0])[0] for k in range(len(test_labels))])
                    diam_test[diam_test < 5] = 5.
                scale_range = 0.5
                core_logger.info('>>>> median diameter set to = %d' % self.diam_mean)
        else:
            scale_range = 1.0

        core_logger.info(f'>>>> mean of training label mask diameters (saved to model) {diam_train_mean:.3f}')
        self.net.diam_labels.data = torch.ones(1, device=self.device) * diam_train_mean

        nchan = train_data[0].shape[0]
        core_logger.info('>>>> training network with %d channel input <<<<' % nchan)
        core_logger.info('>>>> LR: %0.5f, batch_size: %d, weight_decay: %0.5f' % (self.learning_rate_const, self.batch_size, weight_decay))

        if test_data is not None:
            core_logger.info(f'>>>> ntrain = {nimg}, ntest = {len(test_data)}')
        else:
            core_logger.info(f'>>>> ntrain = {nimg}')

        tic = time.time()

        lavg, nsum = 0, 0

        if save_path is not None:
            _, file_label = os.path.split(save_path)
            file_path = os.path.join(save_path, 'models/')

            if not os.path.exists(file_path):
                os.makedirs(file_path)
        else:
            core_logger.warning('WARNING: no save_path given, model not saving')

        ksave = 0
        rsc = 1.0

        # cannot train with mkldnn
        self.net.mkldnn = False

        # get indices for each epoch for training
        np.random.seed(0)
        inds_all = np.zeros((0,), 'int32')
        if nimg_per_epoch is None or nimg > nimg_per_epoch:
            nimg_per_epoch = nimg
        core_logger.info(f'>>>> nimg_per_epoch = {nimg_per_epoch}')
        while len(inds_all) < n_epochs * nimg_per_epoch:
            rperm = np.random.permutation(nimg)
            inds_all = np.hstack((inds_all, rperm))

        for iepoch in range(self.n_epochs):
            if SGD:
                self._set_learning_rate(self.learning_rate[iepoch])
            inds = inds_all[iepoch * nimg_per_epoch:(iepoch + 1) * nimg_per_epoch]
            for ibatch in range(0, nimg_per_epoch, batch_size):
                inds_batch = inds[ibatch:ibatch + batch_size]
                rsc = diam_train[inds_batch] / self.diam_mean if rescale else np.ones(len(inds_batch), np.float32)
                imgi, lbl, scale = transforms.random_rotate_and_resize(
                    [train_data[i] for i in inds_batch],
                    Y=[train_labels[i] for i in inds_batch],
                    rescale=rsc, scale_range=scale_range, unet=self.unet,
                    tyx=tyx, dim=self.dim)
                if self.unet and lbl.shape[1] > 1 and rescale:
                    lbl[:, 1] /= (rsc * self.diam_mean)[:, np.newaxis, np.newaxis] ** 2
                train_loss = self._train_step(imgi, lbl)
                lavg += train_loss
                nsum += len(imgi)

            if iepoch % 10 == 0 or iepoch == 5:
                lavg = lavg / nsum
                if test_data is not None:
                    lavgt, nsum = 0., 0
                    np.random.seed(42)
                    rperm = np.arange(0, len(test_data), 1, int)
                    for ibatch in range(0, len(test_data), batch_size):
                        inds = rperm[ibatch:ibatch + batch_size]
                        rsc = diam_test[inds] / self.diam_mean if rescale else np.ones(len(inds), np.float32)
                        imgi, lbl, scale = transforms.random_rotate_and_resize(
                            [test_data[i] for i in inds], Y=[test_labels[i] for i in inds],
                            scale_range=0., rescale=rsc, unet=self.unet, tyx=tyx, dim=self.dim)
                        test_loss = self._test_eval(imgi, lbl)
                        lavgt += test_loss
                        nsum += len(imgi)

                    core_logger.info('Epoch %d, Time %4.1fs, Loss %2.4f, Loss Test %2.4f, LR %2.4f' %
                                     (iepoch, time.time() - tic, lavg, lavgt / nsum, self.learning_rate[iepoch]))
                else:
                    core_logger.info('Epoch %d, Time %4.1fs, Loss %2.4f, LR %2.4f' %
                                     (iepoch, time.time() - tic, lavg, self.learning_rate[iepoch]))

                lavg, nsum = 0, 0

            if save_path is not None:
                if iepoch == self.n_epochs - 1 or iepoch % save_every == 1:
                    # save model at the end
                    if save_each:  # separate files as model progresses
                        if netstr is None:
                            file_name = '{}_{}_{}_{}'.format(self.net_type, file_label,
                                                             d.strftime("%Y_%m_%d_%H_%M_%S.%f"),
                                                             'epoch_' + str(iepoch))
                        else:
                            file_name = '{}_{}'.format(netstr, 'epoch_' + str(iepoch))
                    else:
                        if netstr is None:
                            file_name = '{}_{}_{}'.format(self.net_type, file_label,
                                                          d.strftime("%Y_%m_%d_%H_%M_%S.%f"))
                        else:
                            file_name = netstr
                    file_name = os.path.join(file_path, file_name)
                    ksave += 1
                    core_logger.info(f'saving network parameters to {file_name}')
                    self.net.save_model(file_name)
                    # free cached blocks after writing big checkpoints
                    empty_cache()
            else:
                file_name = save_path

        # reset to mkldnn if available
        self.net.mkldnn = self.mkldnn
        return file_name


def check_mkl(istorch=True):
    mkl_enabled = torch.backends.mkldnn.is_available()
    if mkl_enabled:
        mkl_enabled = True
    else:
        core_logger.info('WARNING: MKL version on torch not working/installed - CPU version will be slightly slower.')
    return mkl_enabled
