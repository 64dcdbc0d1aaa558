#
#  Copyright 2019 The FATE Authors. All Rights Reserved.
#
#  Licensed under the Apache License, Version 2.0 (the "License");
#  you may not use this file except in compliance with the License.
#  You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
#  Unless required by applicable law or agreed to in writing, software
#  distributed under the License is distributed on an "AS IS" BASIS,
#  WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
#  See the License for the specific language governing permissions and
#  limitations under the License.
#
import os
import typing

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from federatedml.framework.homo.aggregator.secure_aggregator import SecureAggregatorClient as SecureAggClient
from federatedml.framework.homo.aggregator.secure_aggregator import SecureAggregatorServer as SecureAggServer
from federatedml.nn.backend.utils import distributed_util
from federatedml.nn.backend.utils.common import global_seed
from federatedml.nn.dataset.base import Dataset
from federatedml.nn.homo.trainer.trainer_base import TrainerBase
from federatedml.util import LOGGER, consts


class FedAVGTrainer(TrainerBase):
    """
    Parameters
    ----------
    epochs: int >0, epochs to train
    batch_size: int, -1 means full batch
    secure_aggregate: bool, default is True, whether to use secure aggregation. if enabled, will add random number
                            mask to local models. These random number masks will eventually cancel out to get 0.
    weighted_aggregation: bool, whether add weight to each local model when doing aggregation.
                         if True, According to origin paper, weight of a client is: n_local / n_global, where n_local
                         is the sample number locally and n_global is the sample number of all clients.
                         if False, simply averaging these models.
    early_stop: None, 'diff' or 'abs'. if None, disable early stop; if 'diff', use the loss difference between
                two epochs as early stop condition, if differences < tol, stop training ; if 'abs', if loss < tol,
                stop training
    tol: float, tol value for early stop
    aggregate_every_n_epoch: None or int. if None, aggregate model on the end of every epoch, if int, aggregate
                             every n epochs.
    cuda: None, int or list of int. if None, use cpu; if int, use the {int} device, if list of int, use the
                 This trainier will automatically detect use DataParallel for multi GPU training, the first index will
                 be the main device and the output device.
    pin_memory: bool, for pytorch DataLoader
    shuffle: bool, for pytorch DataLoader
    data_loader_worker: int, for pytorch DataLoader, number of workers when loading data
    validation_freqs: None or int. if int, validate your model and send validate results to fate-board every n epoch.
                      if is binary classification task, will use metrics 'auc', 'ks', 'gain', 'lift', 'precision'
                      if is multi classification task, will use metrics 'precision', 'recall', 'accuracy'
                      if is regression task, will use metrics 'mse', 'mae', 'rmse', 'explained_variance', 'r2_score'
    checkpoint_save_freqs: save model every n epoch, if None, will not save checkpoint.
    task_type: str, 'auto', 'binary', 'multi', 'regression',
               this option decides the return format of this trainer, and the evaluation type when running validation.
               if auto, will automatically infer your task type from labels and predict results.
    save_to_local_dir: bool, if True, a dictionary containing the model, optimizer, and metadata will be saved to a local directory.
                The path is structured as follows: fateflow/jobs/${jobid}/${party}/${party_id}/${your_nn_component}.
                If set to False, the model will not be saved to the FATE framework in protobuf format.
    use_amp: bool, train in fp16 with torch.cuda.amp (autocast + GradScaler); recommended for LLM fine-tuning.
    """

    def __init__(self, epochs=10, batch_size=512,  # training parameter
                 early_stop=None, tol=0.0001,  # early stop parameters
                 secure_aggregate=True, weighted_aggregation=True, aggregate_every_n_epoch=None,  # federation
                 cuda=None,
                 pin_memory=True, shuffle=True, data_loader_worker=0,  # GPU & dataloader
                 validation_freqs=None,  # validation configuration
                 checkpoint_save_freqs=None,  # checkpoint configuration
                 task_type='auto',  # task type
                 save_to_local_dir=False,  # save model to local path
                 collate_fn=None,
                 collate_fn_params=None,
                 use_amp=False,
                 grad_clip=1.0,
                 ):

        TrainerBase.__init__(self)

        # training parameters
        self.epochs = epochs
        self.tol = tol
        self.validation_freq = validation_freqs
        self.save_freq = checkpoint_save_freqs
        self.save_to_local_dir = save_to_local_dir

        self.task_type = task_type.lower()
        task_type_allow = [
            consts.BINARY,
            consts.REGRESSION,
            consts.MULTY,
            consts.CAUSAL_LM,
            consts.SEQ_2_SEQ_LM,
            'auto']
        assert self.task_type in task_type_allow, 'task type must in {}'.format(task_type_allow)

        # aggregation param
        self.secure_aggregate = secure_aggregate
        self.weighted_aggregation = weighted_aggregation
        self.aggregate_every_n_epoch = aggregate_every_n_epoch

        # GPU, check cuda setting
        self.cuda = cuda
        self.cuda_main_device = None
        self.data_parallel = False
        self.parallel_model = None

        if not torch.cuda.is_available() and self.cuda is not None:
            raise ValueError('Cuda is not available on this machine')
        if isinstance(self.cuda, int):
            self.cuda_main_device = self.cuda
        elif isinstance(self.cuda, list):
            for i in self.cuda:
                assert isinstance(i, int), 'cuda device must be int, but got {}'.format(self.cuda)
            self.cuda_main_device = self.cuda[0]
            if len(self.cuda) > 1:
                self.data_parallel = True
                LOGGER.info('Using DataParallel in Pytorch')

        # data loader
        self.batch_size = batch_size
        self.pin_memory = pin_memory
        self.shuffle = shuffle
        self.data_loader_worker = data_loader_worker
        self.data_loader = None
        self.collate_fn = collate_fn
        self.collate_fn_params = collate_fn_params if collate_fn_params is not None else dict()

        self.early_stop = early_stop
        early_stop_type = ['diff', 'abs']
        if early_stop is not None:
            assert early_stop in early_stop_type, 'early stop type must be in {}, bug got {}' \
                .format(early_stop_type, early_stop)

        # mixed precision
        self.use_amp = use_amp
        self.grad_clip = grad_clip
        self.scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

        # communicate suffix
        self.comm_suffix = 'fedavg'

        # check param correctness
        self.check_trainer_param([self.epochs, self.validation_freq, self.save_freq,
                                  self.aggregate_every_n_epoch],
                                 ['epochs', 'validation_freq', 'save_freq', 'aggregate_every_n_epoch'],
                                 self.is_pos_int,
                                 '{} is not a positive int')
        self.check_trainer_param([self.secure_aggregate, self.weighted_aggregation, self.pin_memory, self.use_amp],
                                 ['secure_aggregate', 'weighted_aggregation', 'pin_memory', 'use_amp'],
                                 self.is_bool,
                                 '{} is not a bool')
        self.check_trainer_param([self.tol], ['tol'], self.is_float, '{} is not a float')

    def _init_aggregator(self, train_set):
        # compute round to aggregate
        cur_agg_round = 0
        if self.aggregate_every_n_epoch is not None:
            aggregate_round = self.epochs // self.aggregate_every_n_epoch
        else:
            aggregate_round = self.epochs

        # initialize fed avg client
        if self.fed_mode:
            if self.weighted_aggregation:
                sample_num = len(train_set)
            else:
                sample_num = 1.0

            if not distributed_util.is_distributed() or distributed_util.is_rank_0():
                client_agg = SecureAggClient(
                    True, aggregate_weight=sample_num, communicate_match_suffix=self.comm_suffix)
            else:
                client_agg = None
        else:
            client_agg = None

        return client_agg, aggregate_round

    def set_model(self, model: torch.nn.Module):
        if not issubclass(type(model), torch.nn.Module):
            raise ValueError('model must be a subclass of pytorch nn.Module')
        self.model = model
        if self.cuda is not None:
            self.model = self.model.cuda(self.cuda_main_device)
            if self.data_parallel:
                self.parallel_model = torch.nn.DataParallel(model, device_ids=self.cuda, output_device=self.cuda_main_device)

    def _select_model(self):
        if self.data_parallel:
            return self.parallel_model
        else:
            return self.model

    def to_cuda(self, var, device=0):
        if hasattr(var, 'cuda'):
            return var.cuda(device)
        elif isinstance(var, dict):
            return {k: self.to_cuda(v, device) for k, v in var.items()}
        elif isinstance(var, list):
            return [self.to_cuda(i, device) for i in var]
        elif isinstance(var, tuple):
            return tuple(self.to_cuda(i, device) for i in var)
        else:
            return var

    def _get_train_data_loader(self, train_set):
        collate_fn = self._get_collate_fn(train_set)
        if not distributed_util.is_distributed() or distributed_util.get_num_workers() <= 1:
            data_loader = DataLoader(
                train_set,
                batch_size=self.batch_size,
                pin_memory=self.pin_memory,
                shuffle=self.shuffle,
                num_workers=self.data_loader_worker,
                collate_fn=collate_fn
            )
        else:
            train_sampler = DistributedSampler(
                train_set,
                num_replicas=dist.get_world_size(),
                rank=dist.get_rank()
            )
            data_loader = DataLoader(
                train_set,
                batch_size=self.batch_size,
                pin_memory=self.pin_memory,
                num_workers=self.data_loader_worker,
                collate_fn=collate_fn,
                sampler=train_sampler
            )
        return data_loader

    def _get_collate_fn(self, dataset):
        if not self.collate_fn and not hasattr(dataset, 'collate_fn'):
            return None
        if self.collate_fn:
            return self.collate_fn
        return dataset.collate_fn

    def train_an_epoch(self, epoch_idx, model, train_set, optimizer, loss):
        epoch_loss = 0.0
        batch_idx = 0
        acc_num = 0

        if isinstance(self.data_loader.sampler, DistributedSampler):
            self.data_loader.sampler.set_epoch(epoch_idx)

        dl = self.data_loader
        total_batch_len = len(dl)
        LOGGER.info('total batch len is {}'.format(total_batch_len))

        for _batch_iter in dl:
            _batch_iter = self._decode(_batch_iter)
            if isinstance(_batch_iter, list):
                batch_data, batch_label = _batch_iter
            else:
                batch_data, batch_label = _batch_iter, None

            if self.cuda is not None:
                batch_data = self.to_cuda(batch_data, self.cuda_main_device)
                if batch_label is not None:
                    batch_label = self.to_cuda(batch_label, self.cuda_main_device)

            if not distributed_util.is_distributed() or distributed_util.is_rank_0():
                optimizer.zero_grad()
            else:
                model.zero_grad()

            with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=torch.float16):
                pred = model(batch_data)
                if not loss and hasattr(pred, "loss"):
                    batch_loss = pred.loss
                elif loss is not None:
                    if batch_label is None:
                        raise ValueError(
                            "When loss is set, please provide label to calculate loss"
                        )
                    if not isinstance(pred, torch.Tensor) and hasattr(pred, "logits"):
                        pred = pred.logits
                    batch_loss = loss(pred, batch_label)
                else:
                    raise ValueError(
                        'FedAVGTrainer requires a loss function, but got None, please specify loss function in the'
                        ' job configuration')

            self.scaler.scale(batch_loss).backward()
            if self.grad_clip is not None:
                self.scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.grad_clip)
            self.scaler.step(optimizer)
            self.scaler.update()

            batch_loss_np = np.array(batch_loss.detach().tolist()) if self.cuda is None \
                else np.array(batch_loss.cpu().detach().tolist())

            if acc_num + self.batch_size > len(train_set):
                batch_len = len(train_set) - acc_num
            else:
                batch_len = self.batch_size

            epoch_loss += batch_loss_np * batch_len
            batch_idx += 1

            if distributed_util.is_distributed() and not distributed_util.is_rank_0():
                self.sync_gradient_and_loss(batch_loss_np)

        epoch_loss = epoch_loss / len(train_set)
        return epoch_loss

    def _decode(self, data):
        return data

    def on_loop_begin_callback(self, model):
        if self.cuda is not None:
            torch.cuda.reset_peak_memory_stats(self.cuda_main_device)

    def on_loop_end_callback(self, model, epoch_idx):
        if self.cuda is not None:
            peak = torch.cuda.max_memory_allocated(self.cuda_main_device) / 1024 ** 3
            LOGGER.info('epoch {} peak gpu memory {:.2f} GiB'.format(epoch_idx, peak))
            torch.cuda.empty_cache()

    def _predict_to_numpy(self, pred):
        if isinstance(pred, torch.Tensor):
            return pred.detach().cpu().numpy()
        return np.array(pred)

    def set_seed(self, seed):
        global_seed(seed)
        if self.cuda is not None:
            torch.cuda.manual_seed_all(seed)

    def local_save_path(self, job_id: str, party: str, party_id: int, component: str) -> str:
        return os.path.join(os.environ.get("FATE_PROJECT_BASE", "."), "jobs", job_id, party, str(party_id), component)

    def server_aggregate_procedure(self, extra_data={}):
        # converge status
        check_converge = False
        converge_func = None
        if self.early_stop:
            check_converge = True
            converge_func = self.early_stop
        server_agg = SecureAggServer(self.secure_aggregate, communicate_match_suffix=self.comm_suffix)
        return server_agg, check_converge, converge_func

    @staticmethod
    def summarize_types(batch) -> typing.Dict[str, str]:
        if isinstance(batch, dict):
            return {k: str(getattr(v, "dtype", type(v))) for k, v in batch.items()}
        return {"batch": str(getattr(batch, "dtype", type(batch)))}
