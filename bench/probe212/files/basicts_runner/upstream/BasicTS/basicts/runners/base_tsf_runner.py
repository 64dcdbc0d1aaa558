import math
import os
import time
import json
from typing import Dict, Optional, Tuple, Union

import numpy as np
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm
from easydict import EasyDict

from ..metrics import masked_mae, masked_mape, masked_rmse, masked_mse
from ..utils import get_logger, get_local_rank, get_world_size, is_master, load_pkl, master_only
from ..data import BaseDataset


class BaseTimeSeriesForecastingRunner:
    """Runner shared by all forecasting baselines (STID, D2STGNN, GWNet, ...).

    Handles: dataset / dataloader construction, GPU placement, (optional) DDP, mixed
    precision, the train / val / test loops, checkpointing and metric bookkeeping.
    """

    def __init__(self, cfg: EasyDict):
        self.cfg = cfg
        self.model_name = cfg.MODEL.NAME
        self.dataset_name = cfg.DATASET.NAME
        self.logger = get_logger('BasicTS')
        self.ckpt_save_dir = os.path.join(cfg.TRAIN.CKPT_SAVE_DIR, '{}_{}'.format(self.model_name, self.dataset_name))
        os.makedirs(self.ckpt_save_dir, exist_ok=True)

        self.use_gpu = cfg.get('GPU_NUM', 0) > 0
        if self.use_gpu:
            self.device = torch.device('cuda', torch.cuda.current_device())
        else:
            self.device = torch.device('cpu')

        # metrics
        self.metrics = cfg.get('METRICS', {'MAE': masked_mae, 'RMSE': masked_rmse, 'MAPE': masked_mape})
        self.target_metrics = cfg.get('TARGET_METRICS', 'MAE')
        self.null_val = cfg.get('NULL_VAL', np.nan)
        self.evaluation_horizons = [h - 1 for h in cfg.TEST.get('EVALUATION_HORIZONS', range(1, 13))]

        # training
        self.num_epochs = cfg.TRAIN.NUM_EPOCHS
        self.clip_grad_param = cfg.TRAIN.get('CLIP_GRAD_PARAM', None)
        self.cl_param = cfg.TRAIN.get('CL', None)
        self.forward_features = cfg.MODEL.get('FORWARD_FEATURES', None)
        self.target_features = cfg.MODEL.get('TARGET_FEATURES', None)
        self.val_interval = cfg.get('VAL', EasyDict()).get('INTERVAL', 1)
        self.test_interval = cfg.get('TEST', EasyDict()).get('INTERVAL', 1)

        # mixed precision (off by default, most graph models are small)
        self.use_amp = cfg.TRAIN.get('AMP', EasyDict()).get('ENABLED', False)
        self.amp_dtype = torch.bfloat16 if cfg.TRAIN.get('AMP', EasyDict()).get('DTYPE', 'fp16') == 'bf16' else torch.float16
        self.grad_scaler = torch.cuda.amp.GradScaler(enabled=self.use_amp and self.amp_dtype == torch.float16)

        self.model = self.build_model(cfg)
        self.optim = None
        self.scheduler = None
        self.best_metric = math.inf
        self.epoch = 0
        self.iter_per_epoch = None

    # ------------------------------------------------------------------ setup
    def init_logger(self, logger_name: str = None, log_file_name: str = None):
        if logger_name is not None:
            log_file = os.path.join(self.ckpt_save_dir, '{}_{}.log'.format(log_file_name, time.strftime('%Y%m%d%H%M%S')))
            self.logger = get_logger(logger_name, log_file)

    def to_running_device(self, src: Union[torch.Tensor, nn.Module]):
        """Move a tensor / module to the GPU used by this process."""
        if self.use_gpu:
            return src.cuda(non_blocking=True) if isinstance(src, torch.Tensor) else src.cuda()
        return src

    def build_model(self, cfg: EasyDict) -> nn.Module:
        model = cfg.MODEL.ARCH(**cfg.MODEL.PARAM)
        model = self.to_running_device(model)
        world_size = get_world_size()
        if world_size > 1:
            model = DDP(model, device_ids=[torch.cuda.current_device()],
                        find_unused_parameters=cfg.MODEL.get('DDP_FIND_UNUSED_PARAMETERS', False))
        self.logger.info('Number of parameters: {}'.format(sum(p.numel() for p in model.parameters() if p.requires_grad)))
        return model

    def build_dataset(self, cfg: EasyDict, mode: str) -> Dataset:
        dataset_cfg = cfg.DATASET
        return dataset_cfg.TYPE(mode=mode, **dataset_cfg.PARAM)

    def build_dataloader(self, cfg: EasyDict, mode: str) -> DataLoader:
        section = {'train': cfg.TRAIN, 'valid': cfg.VAL, 'test': cfg.TEST}[mode]
        dataset = self.build_dataset(cfg, mode)
        sampler = None
        shuffle = section.DATA.get('SHUFFLE', mode == 'train')
        if get_world_size() > 1 and mode == 'train':
            sampler = DistributedSampler(dataset, num_replicas=get_world_size(), rank=get_local_rank(), shuffle=shuffle)
            shuffle = False
        return DataLoader(dataset,
                          batch_size=section.DATA.BATCH_SIZE,
                          shuffle=shuffle,
                          sampler=sampler,
                          num_workers=section.DATA.get('NUM_WORKERS', 0),
                          pin_memory=section.DATA.get('PIN_MEMORY', False),
                          drop_last=False)

    def build_optim(self, cfg: EasyDict):
        optim_type = cfg.TRAIN.OPTIM.TYPE
        optim_param = dict(cfg.TRAIN.OPTIM.PARAM)
        optim_cls = getattr(torch.optim, optim_type)
        self.optim = optim_cls(self.model.parameters(), **optim_param)
        if cfg.TRAIN.get('LR_SCHEDULER', None) is not None:
            sched_cls = getattr(torch.optim.lr_scheduler, cfg.TRAIN.LR_SCHEDULER.TYPE)
            self.scheduler = sched_cls(self.optim, **cfg.TRAIN.LR_SCHEDULER.PARAM)

    # ------------------------------------------------------------------ data helpers
    def preprocessing(self, data: torch.Tensor) -> torch.Tensor:
        """Scale inputs; BasicTS keeps the raw-scale target for metric computation."""
        return data

    def postprocessing(self, prediction: torch.Tensor) -> torch.Tensor:
        return prediction

    def select_input_features(self, data: torch.Tensor) -> torch.Tensor:
        if self.forward_features is not None:
            data = data[:, :, :, self.forward_features]
        return data

    def select_target_features(self, data: torch.Tensor) -> torch.Tensor:
        return data[:, :, :, self.target_features]

    def curriculum_learning(self, epoch: int = None) -> int:
        if self.cl_param is None or epoch is None:
            return None
        epoch -= 1
        if epoch < self.cl_param.WARM_EPOCHS:
            return self.cl_param.PREDICTION_LENGTH
        cl_length = (epoch - self.cl_param.WARM_EPOCHS) // self.cl_param.CL_EPOCHS + 1
        return min(cl_length * self.cl_param.STEP_SIZE, self.cl_param.PREDICTION_LENGTH)

    # ------------------------------------------------------------------ forward
    def forward(self, data: Tuple[torch.Tensor], epoch: int = None, iter_num: int = None, train: bool = True) -> Dict:
        future_data, history_data = data
        history_data = self.to_running_device(history_data)      # B, L, N, C
        future_data = self.to_running_device(future_data)        # B, L, N, C
        batch_size, length, num_nodes, _ = future_data.shape

        history_data = self.select_input_features(history_data)
        if train:
            future_data_4_dec = self.select_input_features(future_data)
        else:
            future_data_4_dec = self.select_input_features(future_data)
            future_data_4_dec[..., 0] = torch.empty_like(future_data_4_dec[..., 0])

        prediction = self.model(history_data=history_data, future_data=future_data_4_dec,
                                batch_seen=iter_num, epoch=epoch, train=train)
        assert list(prediction.shape)[:3] == [batch_size, length, num_nodes], \
            'error shape of the output, edit the forward function to reshape it to [B, L, N, C]'
        return {'prediction': self.select_target_features(prediction),
                'target': self.select_target_features(future_data),
                'inputs': self.select_target_features(history_data)}

    def metric_forward(self, metric_func, args: Dict) -> torch.Tensor:
        return metric_func(args['prediction'], args['target'], null_val=self.null_val)

    # ------------------------------------------------------------------ loops
    def train_iters(self, epoch: int, iter_index: int, data) -> torch.Tensor:
        iter_num = (epoch - 1) * self.iter_per_epoch + iter_index
        with torch.cuda.amp.autocast(enabled=self.use_amp, dtype=self.amp_dtype):
            forward_return = self.forward(data=data, epoch=epoch, iter_num=iter_num, train=True)
            if self.cl_param:
                cl_length = self.curriculum_learning(epoch=epoch)
                forward_return['prediction'] = forward_return['prediction'][:, :cl_length, :, :]
                forward_return['target'] = forward_return['target'][:, :cl_length, :, :]
            loss = self.metric_forward(self.cfg.TRAIN.LOSS, forward_return)
        return loss

    def backward(self, loss: torch.Tensor):
        self.optim.zero_grad()
        self.grad_scaler.scale(loss).backward()
        if self.clip_grad_param is not None:
            self.grad_scaler.unscale_(self.optim)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), **self.clip_grad_param)
        self.grad_scaler.step(self.optim)
        self.grad_scaler.update()

    def train(self, cfg: EasyDict):
        train_loader = self.build_dataloader(cfg, 'train')
        val_loader = self.build_dataloader(cfg, 'valid')
        test_loader = self.build_dataloader(cfg, 'test')
        self.iter_per_epoch = len(train_loader)
        self.build_optim(cfg)

        for epoch in range(self.epoch + 1, self.num_epochs + 1):
            self.model.train()
            if isinstance(train_loader.sampler, DistributedSampler):
                train_loader.sampler.set_epoch(epoch)
            epoch_start = time.time()
            losses = []
            loop = tqdm(train_loader) if is_master() else train_loader
            for iter_index, data in enumerate(loop):
                loss = self.train_iters(epoch, iter_index, data)
                self.backward(loss)
                losses.append(loss.item())
            if self.scheduler is not None:
                self.scheduler.step()
            train_time = time.time() - epoch_start
            self.logger.info('Epoch {:d} / {:d} | train loss {:.4f} | {:.1f}s'.format(
                epoch, self.num_epochs, float(np.mean(losses)), train_time))
            self.log_gpu_memory(epoch)

            if epoch % self.val_interval == 0:
                val_metric = self.validate(val_loader, epoch)
                if val_metric < self.best_metric:
                    self.best_metric = val_metric
                    self.save_model(epoch, best=True)
            if epoch % self.test_interval == 0:
                self.test(test_loader)
            self.save_model(epoch, best=False)
            torch.cuda.empty_cache()

    @master_only
    def log_gpu_memory(self, epoch: int):
        if self.use_gpu:
            mem = torch.cuda.max_memory_allocated() / (1024 ** 3)
            self.logger.info('Epoch {:d} | max GPU memory {:.2f} GB'.format(epoch, mem))

    @torch.no_grad()
    def validate(self, val_loader: DataLoader, epoch: int) -> float:
        self.model.eval()
        preds, targets = [], []
        for data in val_loader:
            forward_return = self.forward(data=data, epoch=epoch, iter_num=None, train=False)
            preds.append(forward_return['prediction'].detach().cpu())
            targets.append(forward_return['target'].detach().cpu())
        results = {'prediction': torch.cat(preds, dim=0), 'target': torch.cat(targets, dim=0)}
        metrics = {name: self.metric_forward(fn, results).item() for name, fn in self.metrics.items()}
        self.logger.info('Validate | ' + ', '.join('{}: {:.4f}'.format(k, v) for k, v in metrics.items()))
        return metrics[self.target_metrics]

    @torch.no_grad()
    def test(self, test_loader: DataLoader, save_results: bool = False) -> Dict:
        self.model.eval()
        preds, targets, inputs = [], [], []
        if self.use_gpu:
            torch.cuda.synchronize()
        start = time.time()
        for data in test_loader:
            forward_return = self.forward(data=data, epoch=None, iter_num=None, train=False)
            preds.append(forward_return['prediction'].detach().cpu())
            targets.append(forward_return['target'].detach().cpu())
            inputs.append(forward_return['inputs'].detach().cpu())
        if self.use_gpu:
            torch.cuda.synchronize(self.device)
        self.logger.info('Test inference time: {:.2f}s'.format(time.time() - start))
        prediction = torch.cat(preds, dim=0)
        target = torch.cat(targets, dim=0)

        all_metrics = {}
        for h in self.evaluation_horizons:
            step = {'prediction': prediction[:, h, :, :], 'target': target[:, h, :, :]}
            line = []
            for name, fn in self.metrics.items():
                val = self.metric_forward(fn, step).item()
                all_metrics['{}@{}'.format(name, h + 1)] = val
                line.append('{}: {:.4f}'.format(name, val))
            self.logger.info('Horizon {:d} | '.format(h + 1) + ', '.join(line))
        overall = {'prediction': prediction, 'target': target}
        for name, fn in self.metrics.items():
            all_metrics['{}@overall'.format(name)] = self.metric_forward(fn, overall).item()
        if save_results:
            np.savez(os.path.join(self.ckpt_save_dir, 'test_results.npz'),
                     prediction=prediction.numpy(), target=target.numpy(), inputs=torch.cat(inputs, 0).numpy())
        return all_metrics

    def test_pipeline(self, cfg: EasyDict, save_metrics: bool = False, save_results: bool = False):
        test_loader = self.build_dataloader(cfg, 'test')
        metrics = self.test(test_loader, save_results=save_results)
        if save_metrics:
            with open(os.path.join(self.ckpt_save_dir, 'test_metrics.json'), 'w') as f:
                json.dump(metrics, f, indent=4)

    # ------------------------------------------------------------------ checkpoints
    @master_only
    def save_model(self, epoch: int, best: bool = False):
        model = self.model.module if isinstance(self.model, DDP) else self.model
        ckpt = {'epoch': epoch, 'model_state_dict': model.state_dict(),
                'optim_state_dict': self.optim.state_dict() if self.optim is not None else None,
                'best_metric': self.best_metric}
        name = '{}_best_val_{}.pt'.format(self.model_name, self.target_metrics) if best else \
            '{}_{:03d}.pt'.format(self.model_name, epoch)
        torch.save(ckpt, os.path.join(self.ckpt_save_dir, name))

    def load_model(self, ckpt_path: Optional[str] = None, strict: bool = True):
        if ckpt_path is None:
            ckpt_path = os.path.join(self.ckpt_save_dir, '{}_best_val_{}.pt'.format(self.model_name, self.target_metrics))
        if self.use_gpu:
            checkpoint = torch.load(ckpt_path, map_location='cuda:{}'.format(get_local_rank()))
        else:
            checkpoint = torch.load(ckpt_path, map_location='cpu')
        model = self.model.module if isinstance(self.model, DDP) else self.model
        model.load_state_dict(checkpoint['model_state_dict'], strict=strict)
        self.epoch = checkpoint.get('epoch', 0)
        self.logger.info('Loaded checkpoint {} (epoch {})'.format(ckpt_path, self.epoch))
