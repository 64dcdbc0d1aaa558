import os
import random
import warnings
from copy import deepcopy
from pathlib import Path

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import torch
import torchmetrics
from codecarbon import OfflineEmissionsTracker

from desed_task.data_augm import mixup, frame_shift, time_mask
from desed_task.nnet.atst.atst_feature import ATSTNorm
from desed_task.utils.scaler import TorchScaler
from torchaudio.transforms import AmplitudeToDB, MelSpectrogram

from .utils import batched_decode_preds, log_sedeval_metrics
from desed_task.evaluation.evaluation_measures import (
    compute_per_intersection_macro_f1,
    compute_psds_from_scores,
)


class UltraSEDTrainer(pl.LightningModule):
    """Stage-2 trainer of ATST-SED: the ATST-Frame encoder is unfrozen and fine-tuned
    together with the CRNN head using mean teacher + interpolation consistency.

    Two feature pipelines run in parallel: the 128-bin mel spectrogram for the CNN
    branch and the 64-bin ATST mel front end (normalised with ATSTNorm)."""

    def __init__(self, hparams, encoder, sed_student, opt=None, train_data=None, valid_data=None,
                 test_data=None, train_sampler=None, scheduler=None, fast_dev_run=False,
                 evaluation=False, sed_teacher=None):
        super().__init__()
        self.hparams.update(hparams)
        self.encoder = encoder
        self.sed_student = sed_student
        self.sed_teacher = deepcopy(sed_student) if sed_teacher is None else sed_teacher
        for param in self.sed_teacher.parameters():
            param.detach_()
        self.opt = opt
        self.train_data = train_data
        self.valid_data = valid_data
        self.test_data = test_data
        self.train_sampler = train_sampler
        self.scheduler = scheduler
        self.fast_dev_run = fast_dev_run
        self.evaluation = evaluation
        self.num_workers = 1 if fast_dev_run else self.hparams["training"]["num_workers"]

        feat_params = self.hparams["feats"]
        self.mel_spec = MelSpectrogram(
            sample_rate=feat_params["sample_rate"], n_fft=feat_params["n_window"],
            win_length=feat_params["n_window"], hop_length=feat_params["hop_length"],
            f_min=feat_params["f_min"], f_max=feat_params["f_max"], n_mels=feat_params["n_mels"],
            window_fn=torch.hamming_window, wkwargs={"periodic": False}, power=1,
        )
        self.atst_norm = ATSTNorm()
        self.scaler = TorchScaler("instance", self.hparams["scaler"]["normtype"], self.hparams["scaler"]["dims"])

        self.supervised_loss = torch.nn.BCELoss()
        self.selfsup_loss = torch.nn.MSELoss()
        self.get_weak_student_f1_seg_macro = torchmetrics.classification.f_beta.MultilabelF1Score(
            len(self.encoder.labels), average="macro")

        self.val_buffer_student_synth = {k: pd.DataFrame() for k in self.hparams["training"]["val_thresholds"]}
        test_n_thresholds = self.hparams["training"]["n_test_thresholds"]
        self.test_thresholds = np.arange(1 / (test_n_thresholds * 2), 1, 1 / test_n_thresholds)
        self.test_scores_postprocessed_buffer_student = {}
        self.test_scores_postprocessed_buffer_teacher = {}

    @property
    def exp_dir(self):
        try:
            return self.logger.log_dir
        except Exception:
            return self.hparams["log_dir"]

    def lr_scheduler_step(self, scheduler, metric):
        scheduler.step()

    def on_train_start(self):
        os.makedirs(os.path.join(self.exp_dir, "training_codecarbon"), exist_ok=True)
        self.tracker_train = OfflineEmissionsTracker(
            "ATST-SED STAGE2 TRAINING",
            output_dir=os.path.join(self.exp_dir, "training_codecarbon"),
            log_level="warning",
            country_iso_code="CHN",
        )
        self.tracker_train.start()

    def update_ema(self, alpha, global_step, model, ema_model):
        alpha = min(1 - 1 / (global_step + 1), alpha)
        for ema_params, params in zip(ema_model.parameters(), model.parameters()):
            ema_params.data.mul_(alpha).add_(params.data, alpha=1 - alpha)

    def take_log(self, mels):
        amp_to_db = AmplitudeToDB(stype="amplitude")
        amp_to_db.amin = 1e-5
        return amp_to_db(mels).clamp(min=-50, max=80)

    def detect(self, mel_feats, atst_feats, model):
        return model(self.scaler(self.take_log(mel_feats)), atst_feats)

    def training_step(self, batch, batch_indx):
        audio, atst_feats, labels, padded_indxs = batch
        indx_strong, indx_weak, indx_unlabelled = self.hparams["training"]["batch_size"]
        features = self.mel_spec(audio)
        atst_feats = self.atst_norm(atst_feats)

        batch_num = features.shape[0]
        strong_mask = torch.zeros(batch_num).to(features).bool()
        weak_mask = torch.zeros(batch_num).to(features).bool()
        strong_mask[:indx_strong] = 1
        weak_mask[indx_strong: indx_weak + indx_strong] = 1
        labels_weak = (torch.sum(labels[weak_mask], -1) > 0).float()

        # frame shift + time masking on both pipelines (same shift for both views)
        features, atst_feats, labels = frame_shift(features, atst_feats, labels,
                                                   net_pooling=self.encoder.net_pooling)
        features, atst_feats, labels = time_mask(features, atst_feats, labels,
                                                 net_pooling=self.encoder.net_pooling,
                                                 mask_ratios=self.hparams["training"]["time_mask_ratios"])

        if self.hparams["training"].get("mixup") and 0.5 > random.random():
            features[weak_mask], atst_feats[weak_mask], labels_weak = mixup(
                features[weak_mask], atst_feats[weak_mask], labels_weak)
            features[strong_mask], atst_feats[strong_mask], labels[strong_mask] = mixup(
                features[strong_mask], atst_feats[strong_mask], labels[strong_mask])

        strong_preds_student, weak_preds_student = self.detect(features, atst_feats, self.sed_student)
        loss_strong = self.supervised_loss(strong_preds_student[strong_mask], labels[strong_mask])
        loss_weak = self.supervised_loss(weak_preds_student[weak_mask], labels_weak)
        tot_loss_supervised = loss_strong + loss_weak

        with torch.no_grad():
            strong_preds_teacher, weak_preds_teacher = self.detect(features, atst_feats, self.sed_teacher)

        weight = self.hparams["training"]["const_max"] * self.scheduler["scheduler"]._get_scaling_factor()
        strong_self_sup_loss = self.selfsup_loss(strong_preds_student[indx_strong:],
                                                 strong_preds_teacher.detach()[indx_strong:])
        weak_self_sup_loss = self.selfsup_loss(weak_preds_student[indx_strong:],
                                               weak_preds_teacher.detach()[indx_strong:])
        tot_self_loss = (strong_self_sup_loss + weak_self_sup_loss) * weight
        tot_loss = tot_loss_supervised + tot_self_loss

        self.log("train/student/loss_strong", loss_strong)
        self.log("train/student/loss_weak", loss_weak)
        self.log("train/student/tot_self_loss", tot_self_loss, prog_bar=True)
        self.log("train/weight", weight)
        self.log("train/lr_head", self.opt.param_groups[-1]["lr"], prog_bar=True)
        self.log("train/lr_atst_top", self.opt.param_groups[0]["lr"])
        return tot_loss

    def on_before_zero_grad(self, *args, **kwargs):
        self.update_ema(self.hparams["training"]["ema_factor"], self.scheduler["scheduler"].step_num,
                        self.sed_student, self.sed_teacher)

    def validation_step(self, batch, batch_indx):
        audio, atst_feats, labels, padded_indxs, filenames = batch
        mels = self.mel_spec(audio)
        atst_feats = self.atst_norm(atst_feats)
        strong_preds_student, weak_preds_student = self.detect(mels, atst_feats, self.sed_student)

        mask_weak = torch.tensor([str(Path(x).parent) == str(Path(self.hparams["data"]["weak_folder"]))
                                  for x in filenames]).to(audio).bool()
        mask_synth = torch.tensor([str(Path(x).parent) == str(Path(self.hparams["data"]["synth_val_folder"]))
                                   for x in filenames]).to(audio).bool()

        if torch.any(mask_weak):
            labels_weak = (torch.sum(labels[mask_weak], -1) >= 1).float()
            self.log("val/weak/student/loss_weak",
                     self.supervised_loss(weak_preds_student[mask_weak], labels_weak))
            self.get_weak_student_f1_seg_macro(weak_preds_student[mask_weak], labels_weak.long())

        if torch.any(mask_synth):
            self.log("val/synth/student/loss_strong",
                     self.supervised_loss(strong_preds_student[mask_synth], labels[mask_synth]))
            filenames_synth = [x for x in filenames
                               if Path(x).parent == Path(self.hparams["data"]["synth_val_folder"])]
            _, _, decoded_student_strong = batched_decode_preds(
                strong_preds_student[mask_synth], filenames_synth, self.encoder,
                median_filter=self.hparams["training"]["median_window"],
                thresholds=list(self.val_buffer_student_synth.keys()),
            )
            for th in self.val_buffer_student_synth.keys():
                self.val_buffer_student_synth[th] = pd.concat(
                    [self.val_buffer_student_synth[th], decoded_student_strong[th]], ignore_index=True)

    def on_validation_epoch_end(self):
        weak_student_f1_macro = self.get_weak_student_f1_seg_macro.compute()
        intersection_f1_macro_student = compute_per_intersection_macro_f1(
            self.val_buffer_student_synth, self.hparams["data"]["synth_val_tsv"],
            self.hparams["data"]["synth_val_dur"])
        synth_student_event_macro = log_sedeval_metrics(
            self.val_buffer_student_synth[0.5], self.hparams["data"]["synth_val_tsv"])[0]

        obj_metric = torch.tensor(weak_student_f1_macro.item() + intersection_f1_macro_student)
        self.log("val/obj_metric", obj_metric, prog_bar=True)
        self.log("val/weak/student/macro_F1", weak_student_f1_macro)
        self.log("val/synth/student/intersection_f1_macro", intersection_f1_macro_student)
        self.log("val/synth/student/event_f1_macro", synth_student_event_macro)

        self.val_buffer_student_synth = {k: pd.DataFrame() for k in self.hparams["training"]["val_thresholds"]}
        self.get_weak_student_f1_seg_macro.reset()
        # the ATST encoder at 10 s x 250 frames leaves a lot of fragmented cache behind
        torch.cuda.empty_cache()
        return obj_metric

    def test_step(self, batch, batch_indx):
        audio, atst_feats, labels, padded_indxs, filenames = batch
        mels = self.mel_spec(audio)
        atst_feats = self.atst_norm(atst_feats)
        strong_preds_student, _ = self.detect(mels, atst_feats, self.sed_student)
        strong_preds_teacher, _ = self.detect(mels, atst_feats, self.sed_teacher)

        _, scores_post_student, _ = batched_decode_preds(
            strong_preds_student, filenames, self.encoder,
            median_filter=self.hparams["training"]["median_window"], thresholds=[])
        _, scores_post_teacher, _ = batched_decode_preds(
            strong_preds_teacher, filenames, self.encoder,
            median_filter=self.hparams["training"]["median_window"], thresholds=[])
        self.test_scores_postprocessed_buffer_student.update(scores_post_student)
        self.test_scores_postprocessed_buffer_teacher.update(scores_post_teacher)

    def on_test_epoch_end(self):
        save_dir = os.path.join(self.exp_dir, "metrics_test")
        for name, buf in [("student", self.test_scores_postprocessed_buffer_student),
                          ("teacher", self.test_scores_postprocessed_buffer_teacher)]:
            psds1 = compute_psds_from_scores(
                buf, self.hparams["data"]["test_tsv"], self.hparams["data"]["test_dur"],
                dtc_threshold=0.7, gtc_threshold=0.7, cttc_threshold=None,
                alpha_ct=0, alpha_st=1, save_dir=os.path.join(save_dir, name, "scenario1"))
            psds2 = compute_psds_from_scores(
                buf, self.hparams["data"]["test_tsv"], self.hparams["data"]["test_dur"],
                dtc_threshold=0.1, gtc_threshold=0.1, cttc_threshold=0.3,
                alpha_ct=0.5, alpha_st=1, save_dir=os.path.join(save_dir, name, "scenario2"))
            self.log(f"test/{name}/psds1_sed_scores_eval", psds1)
            self.log(f"test/{name}/psds2_sed_scores_eval", psds2)
            print(f"{name}: PSDS1 {psds1:.4f}  PSDS2 {psds2:.4f}")

        max_mem = torch.cuda.max_memory_allocated() / 1024 ** 3
        print(f"peak GPU memory during test: {max_mem:.2f} GiB")

    def on_train_end(self):
        self.tracker_train.stop()

    def configure_optimizers(self):
        return [self.opt], [self.scheduler]

    def train_dataloader(self):
        return torch.utils.data.DataLoader(self.train_data, batch_sampler=self.train_sampler,
                                           num_workers=self.num_workers, pin_memory=True)

    def val_dataloader(self):
        return torch.utils.data.DataLoader(self.valid_data, batch_size=self.hparams["training"]["batch_size_val"],
                                           num_workers=self.num_workers, shuffle=False, drop_last=False)

    def test_dataloader(self):
        return torch.utils.data.DataLoader(self.test_data, batch_size=self.hparams["training"]["batch_size_val"],
                                           num_workers=self.num_workers, shuffle=False, drop_last=False)
