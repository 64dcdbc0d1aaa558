###############
#generic
import torch
from torch import nn
import pytorch_lightning as lp
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger

import torchvision
import os
import argparse
from pathlib import Path
import numpy as np
import pandas as pd

#################
#specific
from clinical_ts.timeseries_utils import *
from clinical_ts.ecg_utils import *
from clinical_ts.eval_utils_cafa import eval_scores
from clinical_ts.s4_model import S4

from functools import partial
from sklearn.metrics import roc_auc_score


def _freeze_bn_stats(model, freeze=True):
    for m in model.modules():
        if(isinstance(m, nn.BatchNorm1d)):
            if(freeze):
                m.eval()
            else:
                m.train()


class S4Model(nn.Module):
    """12-lead ECG classifier: linear encoder + stack of (bidirectional) S4 layers + pooling head."""

    def __init__(self, d_input, d_output=10, d_model=512, n_layers=4, dropout=0.2, prenorm=False, l_max=1024, d_state=64, bidirectional=True):
        super().__init__()
        self.prenorm = prenorm
        self.encoder = nn.Conv1d(d_input, d_model, 1)
        self.s4_layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        self.dropouts = nn.ModuleList()
        for _ in range(n_layers):
            self.s4_layers.append(S4(d_model=d_model, l_max=l_max, bidirectional=bidirectional, postact='glu', dropout=dropout, transposed=True, d_state=d_state))
            self.norms.append(nn.LayerNorm(d_model))
            self.dropouts.append(nn.Dropout2d(dropout))
        self.decoder = nn.Linear(d_model, d_output)

    def forward(self, x):
        x = self.encoder(x)  # B, d_model, L
        for layer, norm, dropout in zip(self.s4_layers, self.norms, self.dropouts):
            z = x
            if self.prenorm:
                z = norm(z.transpose(-1, -2)).transpose(-1, -2)
            z, _ = layer(z)
            z = dropout(z)
            x = z + x
            if not self.prenorm:
                x = norm(x.transpose(-1, -2)).transpose(-1, -2)
        x = x.mean(dim=-1)
        return self.decoder(x)


class Main_ECG(lp.LightningModule):

    def __init__(self, hparams):
        super(Main_ECG, self).__init__()
        self.save_hyperparameters(hparams)
        self.lr = self.hparams.lr

        if(hparams.finetune_dataset == "thew"):
            num_classes = 5
        elif(hparams.finetune_dataset == "ribeiro_train"):
            num_classes = 6
        elif(hparams.finetune_dataset == "ptbxl_super"):
            num_classes = 5
        elif(hparams.finetune_dataset == "ptbxl_all"):
            num_classes = 71
        elif(hparams.finetune_dataset.startswith("segrhythm")):
            num_classes = int(hparams.finetune_dataset[9:])
        else:
            num_classes = 44  # chapman

        self.criterion = F.cross_entropy if hparams.finetune_dataset == "thew" else F.binary_cross_entropy_with_logits

        self.model = S4Model(d_input=hparams.input_channels, d_output=num_classes, l_max=self.hparams.input_size,
                             d_state=self.hparams.d_state, d_model=self.hparams.d_model, n_layers=self.hparams.n_layers,
                             bidirectional=not self.hparams.causal)

    def forward(self, x):
        return self.model(x)

    def _step(self, data_batch, batch_idx, train, test=False, freeze_bn=False):
        preds = self.forward(data_batch[0])
        loss = self.criterion(preds, data_batch[1])
        self.log("train_loss" if train else ("test_loss" if test else "val_loss"), loss)
        return {'loss': loss, "preds": preds.detach(), "targs": data_batch[1]}

    def training_step(self, train_batch, batch_idx):
        if(self.hparams.linear_eval):
            _freeze_bn_stats(self)
        return self._step(train_batch, batch_idx, True)

    def validation_step(self, val_batch, batch_idx, dataloader_idx=0):
        return self._step(val_batch, batch_idx, False, test=(dataloader_idx == 1))

    def validation_epoch_end(self, outputs_all):
        for dataloader_idx, outputs in enumerate(outputs_all):  # multiple val dataloaders
            preds_all = torch.sigmoid(torch.cat([x['preds'] for x in outputs])).cpu().numpy()
            targs_all = torch.cat([x['targs'] for x in outputs]).cpu().numpy()
            preds_all_agg, targs_all_agg = aggregate_predictions(preds_all, targs_all, self.test_idmaps[dataloader_idx], aggregate_fn=np.mean)
            res_agg = eval_scores(targs_all_agg, preds_all_agg, classes=self.lbl_itos)
            self.log_dict({"macro_auc_agg" + str(dataloader_idx): res_agg["label_AUC"]["macro"]})

    def setup(self, stage):
        rhythm = self.hparams.finetune_dataset.startswith("segrhythm")
        if(rhythm):
            target_fs = 100
        else:
            target_fs = 250 if self.hparams.finetune_dataset != "ptbxl_all" and self.hparams.finetune_dataset != "ptbxl_super" else 100

        chunkify_train = self.hparams.chunkify_train
        chunk_length_train = int(self.hparams.chunk_length_train * target_fs) if chunkify_train else 0
        stride_train = int(self.hparams.stride_fraction_train * self.hparams.input_size)

        chunkify_valtest = True
        chunk_length_valtest = self.hparams.input_size if chunkify_valtest else 0
        stride_valtest = chunk_length_valtest // 2

        train_datasets = []
        val_datasets = []
        test_datasets = []

        self.ds_mean = None
        self.ds_std = None
        self.lbl_itos = None

        for i, target_folder in enumerate(list(self.hparams.data.split(","))):
            target_folder = Path(target_folder)

            df_mapped, lbl_itos, mean, std = load_dataset(target_folder)
            # always use PTB-XL stats
            self.ds_mean = np.array([-0.00184586, -0.00130277, 0.00017031, -0.00091313, -0.00148835, -0.00174687, -0.00077071, -0.00207407, 0.00054329, 0.00155546, -0.00114379, -0.00035649])
            self.ds_std = np.array([0.16401004, 0.1647168, 0.23374124, 0.33767231, 0.33362807, 0.30583013, 0.2731171, 0.27554379, 0.17128962, 0.14030828, 0.14606956, 0.14656108])

            self.lbl_itos = lbl_itos
            if(self.hparams.finetune_dataset.startswith("ptbxl")):
                lbl_itos = np.array(lbl_itos[self.hparams.finetune_dataset[6:]])
                df_mapped["label"] = df_mapped[self.hparams.finetune_dataset[6:] + "_filtered_numeric"].apply(lambda x: multihot_encode(x, len(lbl_itos)))
                self.lbl_itos = lbl_itos

            tfms_ptb_xl_cpc = ToTensor() if self.hparams.normalize is False else transforms.Compose([Normalize(self.ds_mean, self.ds_std), ToTensor()])

            max_fold_id = df_mapped.strat_fold.max()  # unfortunately 1-based for PTB-XL; sometimes 100 (Ribeiro)
            df_train = df_mapped[df_mapped.strat_fold < (max_fold_id - 1 if self.hparams.finetune_dataset.startswith("ptbxl") else max_fold_id)]
            df_val = df_mapped[df_mapped.strat_fold == (max_fold_id - 1 if self.hparams.finetune_dataset.startswith("ptbxl") else max_fold_id)]
            df_test = df_mapped[df_mapped.strat_fold == max_fold_id]

            train_datasets.append(TimeseriesDatasetCrops(df_train, self.hparams.input_size, num_classes=len(lbl_itos), data_folder=target_folder, chunk_length=chunk_length_train, min_chunk_length=self.hparams.input_size, stride=stride_train, transforms=tfms_ptb_xl_cpc, annotation=False, col_lbl="label", memmap_filename=target_folder / ("memmap.npy")))
            val_datasets.append(TimeseriesDatasetCrops(df_val, self.hparams.input_size, num_classes=len(lbl_itos), data_folder=target_folder, chunk_length=chunk_length_valtest, min_chunk_length=self.hparams.input_size, stride=stride_valtest, transforms=tfms_ptb_xl_cpc, annotation=False, col_lbl="label", memmap_filename=target_folder / ("memmap.npy")))
            test_datasets.append(TimeseriesDatasetCrops(df_test, self.hparams.input_size, num_classes=len(lbl_itos), data_folder=target_folder, chunk_length=chunk_length_valtest, min_chunk_length=self.hparams.input_size, stride=stride_valtest, transforms=tfms_ptb_xl_cpc, annotation=False, col_lbl="label", memmap_filename=target_folder / ("memmap.npy")))

        self.train_dataset = train_datasets[0] if len(train_datasets) == 1 else ConcatDatasetTimeseriesDatasetCrops(train_datasets)
        self.val_dataset = val_datasets[0] if len(val_datasets) == 1 else ConcatDatasetTimeseriesDatasetCrops(val_datasets)
        self.test_dataset = test_datasets[0] if len(test_datasets) == 1 else ConcatDatasetTimeseriesDatasetCrops(test_datasets)
        self.test_idmaps = [self.val_dataset.get_id_mapping(), self.test_dataset.get_id_mapping()]

    def train_dataloader(self):
        return DataLoader(self.train_dataset, batch_size=self.hparams.batch_size, num_workers=4, shuffle=True, drop_last=True, pin_memory=True)

    def val_dataloader(self):
        return [DataLoader(self.val_dataset, batch_size=self.hparams.batch_size, num_workers=4, pin_memory=True),
                DataLoader(self.test_dataset, batch_size=self.hparams.batch_size, num_workers=4, pin_memory=True)]

    def configure_optimizers(self):
        # S4 convention: no weight decay and smaller lr for the SSM parameters (A, B, dt)
        params_ssm = [p for n, p in self.named_parameters() if any(k in n for k in ["log_dt", "B", "P", "log_w_real", "w_imag"])]
        params_rest = [p for n, p in self.named_parameters() if not any(k in n for k in ["log_dt", "B", "P", "log_w_real", "w_imag"])]
        return torch.optim.AdamW([{"params": params_rest, "weight_decay": self.hparams.weight_decay},
                                  {"params": params_ssm, "weight_decay": 0.0, "lr": min(self.lr, 1e-3)}], self.lr)


#####################################################################################################
#ARGPARSERS
#####################################################################################################
def add_model_specific_args(parser):
    parser.add_argument("--input-channels", type=int, default=12)
    parser.add_argument("--input-size", dest="input_size", type=int, default=250)
    parser.add_argument("--d-state", dest="d_state", type=int, default=8)
    parser.add_argument("--d-model", dest="d_model", type=int, default=512)
    parser.add_argument("--n-layers", dest="n_layers", type=int, default=4)
    parser.add_argument("--causal", action="store_true", help="unidirectional S4 layers")
    parser.add_argument("--linear-eval", action="store_true", help="linear evaluation instead of full finetuning", default=False)
    return parser


def add_default_args():
    parser = argparse.ArgumentParser(description='PyTorch Lightning ECG Training')
    parser.add_argument('--data', metavar='DIR', type=str,
                        help='path(s) to dataset', action='append')
    parser.add_argument('--epochs', default=30, type=int, metavar='N',
                        help='number of total epochs to run')
    parser.add_argument('--batch-size', default=64, type=int,
                        metavar='N',
                        help='mini-batch size (default: 256), this is the total '
                             'batch size of all GPUs on the current node when '
                             'using Data Parallel or Distributed Data Parallel')
    parser.add_argument('--lr', '--learning-rate', default=1e-3, type=float,
                        metavar='LR', help='initial learning rate', dest="lr")
    parser.add_argument('--wd', '--weight-decay', default=1e-3, type=float,
                        metavar='W', help='weight decay (default: 0.)',
                        dest='weight_decay')
    parser.add_argument('--resume', default='', type=str, metavar='PATH',
                        help='path to latest checkpoint (default: none)')
    parser.add_argument('--pretrained', default='', type=str, metavar='PATH',
                        help='path to pretrained checkpoint (default: none)')
    parser.add_argument('--output-path', default='.', type=str, dest="output_path",
                        help='output path')

    parser.add_argument("--gpus", type=int, default=1, help="number of gpus")
    parser.add_argument("--num-nodes", dest="num_nodes", type=int, default=1, help="number of compute nodes")
    parser.add_argument("--precision", type=int, default=16, help="16/32")
    parser.add_argument("--distributed-backend", dest="distributed_backend", type=str, default=None, help="None/ddp")
    parser.add_argument("--accumulate", type=int, default=1, help="accumulate grad batches (total-bs=accumulate-batches*bs)")

    parser.add_argument("--finetune-dataset", type=str, help="thew/ptbxl_super/ptbxl_all", default="ptbxl_all")
    parser.add_argument("--chunkify-train", action='store_true')
    parser.add_argument("--chunk-length-train", type=float, default=1.)
    parser.add_argument("--stride-fraction-train", type=float, default=1.)
    parser.add_argument("--normalize", action='store_true', help='Normalize input using dataset stats')
    parser.add_argument("--lr-find", action="store_true", help="run lr finder before training run", default=False)
    parser.add_argument("--refresh-rate", default=0, type=int, help="progress bar refresh rate")
    return parser


###################################################################################################
#MAIN
###################################################################################################
if __name__ == '__main__':
    parser = add_default_args()
    parser = add_model_specific_args(parser)
    hparams = parser.parse_args()
    hparams.executable = "main_ecg_lightning"
    hparams.data = ",".join(hparams.data)

    if not os.path.exists(hparams.output_path):
        os.makedirs(hparams.output_path)

    model = Main_ECG(hparams)

    if(hparams.pretrained != ""):
        print("Loading pretrained weights from", hparams.pretrained)
        model.load_weights_from_checkpoint(hparams.pretrained)

    logger = TensorBoardLogger(
        save_dir=hparams.output_path,
        name="")
    print("Output directory:", logger.log_dir)
    checkpoint_callback = ModelCheckpoint(
        dirpath=os.path.join(logger.log_dir, "best_model"),
        filename="best_model",
        save_top_k=1,
        save_last=True,
        verbose=True,
        monitor='macro_auc_agg0',
        mode='max')
    lr_monitor = LearningRateMonitor()

    if(hparams.gpus > 0):
        print("Training on", torch.cuda.device_count(), "GPU(s):", torch.cuda.get_device_name(0))

    trainer = lp.Trainer(
        auto_lr_find=hparams.lr_find,
        accumulate_grad_batches=hparams.accumulate,
        max_epochs=hparams.epochs,
        min_epochs=hparams.epochs,

        default_root_dir=hparams.output_path,

        num_sanity_val_steps=0,

        logger=logger,
        callbacks=[checkpoint_callback, lr_monitor],
        benchmark=True,

        gpus=hparams.gpus,
        num_nodes=hparams.num_nodes,
        precision=hparams.precision,
        strategy=hparams.distributed_backend,

        progress_bar_refresh_rate=hparams.refresh_rate,
        weights_summary='top',
        resume_from_checkpoint=None if hparams.resume == "" else hparams.resume)

    if(hparams.lr_find):  # lr find
        trainer.tune(model)

    trainer.fit(model)
