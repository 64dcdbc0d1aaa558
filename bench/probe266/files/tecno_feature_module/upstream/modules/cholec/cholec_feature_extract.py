import logging
import pickle
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import pytorch_lightning as pl
from pycm import ConfusionMatrix
from torch.utils.data import DataLoader
from torchmetrics import Accuracy, F1Score

log = logging.getLogger(__name__)


class FeatureExtraction(pl.LightningModule):
    """Frame-level phase + tool classifier used as the first TeCNO stage.

    Trained on all 25 fps-subsampled frames of the Cholec80 training videos, then run once over every
    video to dump 2048-d features per frame (used by the TCN stage).
    """

    def __init__(self, hparams, model, dataset):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.model = model
        self.dataset = dataset
        self.num_tasks = self.hparams.num_tasks  # output stage + tool head
        self.log_vid_mean_metrics = self.hparams.log_vid_mean_metrics
        self.batch_size = self.hparams.batch_size
        self.current_video_idx = self.dataset.df["test"].video_idx.min()
        self.init_metrics()

        # store model
        self.current_stems = []
        self.current_video_features = []
        self.current_video_phase_preds = []
        self.current_video_phase_labels = []
        self.current_video_tool_preds = []
        self.current_video_tool_labels = []
        self.len_test_data = len(self.dataset.data["test"])

        # class weights come precomputed from the dataset (median frequency balancing)
        self.weights_train = np.asarray(self.dataset.weights["train"])
        self.ce_loss = nn.CrossEntropyLoss(weight=torch.from_numpy(self.weights_train).float())
        self.sig_f = nn.Sigmoid()
        self.bce_loss = nn.BCEWithLogitsLoss()

    def init_metrics(self):
        self.train_acc_phase = Accuracy(task="multiclass", num_classes=self.hparams.out_features)
        self.val_acc_phase = Accuracy(task="multiclass", num_classes=self.hparams.out_features)
        self.max_acc_last_stage = {"epoch": 0, "acc": 0}
        self.max_acc_global = {"epoch": 0, "acc": 0, "stage": 0, "last_stage_max_acc_is_global": False}
        self.train_f1_tool = F1Score(task="multilabel", num_labels=7)
        self.val_f1_tool = F1Score(task="multilabel", num_labels=7)

    def set_export_pickle_path(self):
        self.pickle_path = Path(self.hparams.output_path) / "cholec80_pickle_export"
        self.pickle_path.mkdir(exist_ok=True)
        log.info(f"setting export_pickle_path: {self.pickle_path}")

    # ---------------------
    # TRAINING
    # ---------------------
    def forward(self, x):
        stem, phase, tool = self.model.forward(x)
        return stem, phase, tool

    def loss_phase_tool(self, p_phase, p_tool, labels_phase, labels_tool, num_tasks):
        loss_phase = self.ce_loss(p_phase, labels_phase)
        if num_tasks == 1:
            return loss_phase
        labels_tool = torch.stack(labels_tool, dim=1)
        loss_tools = self.bce_loss(p_tool, labels_tool.data.float())
        # make loss tools and loss phase equally weighted
        return loss_phase + loss_tools

    def training_step(self, batch, batch_idx):
        x, y_phase, y_tool = batch
        _, p_phase, p_tool = self.forward(x)
        loss = self.loss_phase_tool(p_phase, p_tool, y_phase, y_tool, self.num_tasks)
        self.train_acc_phase(p_phase, y_phase)
        self.log("train_loss", loss, prog_bar=True, logger=True)
        self.log("train_acc_phase", self.train_acc_phase, on_epoch=True, on_step=True)
        if self.num_tasks == 2:
            self.train_f1_tool(p_tool, torch.stack(y_tool, dim=1))
            self.log("train_f1_tool", self.train_f1_tool, on_epoch=True, on_step=False)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y_phase, y_tool = batch
        _, p_phase, p_tool = self.forward(x)
        loss = self.loss_phase_tool(p_phase, p_tool, y_phase, y_tool, self.num_tasks)
        self.val_acc_phase(p_phase, y_phase)
        self.log("val_loss", loss, sync_dist=True)
        self.log("val_acc_phase", self.val_acc_phase, on_epoch=True, on_step=False, sync_dist=True)
        if self.num_tasks == 2:
            self.val_f1_tool(p_tool, torch.stack(y_tool, dim=1))
            self.log("val_f1_tool", self.val_f1_tool, on_epoch=True, on_step=False, sync_dist=True)

    def on_validation_epoch_end(self):
        val_acc = self.val_acc_phase.compute().item()
        if val_acc > self.max_acc_last_stage["acc"]:
            self.max_acc_last_stage = {"epoch": self.current_epoch, "acc": val_acc}
        self.log("val_acc_max", self.max_acc_last_stage["acc"])

    # ---------------------
    # TEST (feature export)
    # ---------------------
    def get_phase_acc(self, true_label, pred):
        pred = torch.FloatTensor(pred)
        pred_phase = torch.softmax(pred, dim=1)
        labels_pred = torch.argmax(pred_phase, dim=1).cpu().numpy()
        cm = ConfusionMatrix(actual_vector=true_label, predict_vector=labels_pred)
        return cm.Overall_ACC, cm.PPV, cm.TPR, cm.classes, cm.F1_Macro

    def save_to_drive(self, vid_index):
        acc, ppv, tpr, keys, f1 = self.get_phase_acc(self.current_video_phase_labels,
                                                      self.current_video_phase_preds)
        save_path = self.pickle_path / f"{self.hparams.fps_sampling_test}fps"
        save_path.mkdir(exist_ok=True)
        save_path_txt = save_path / f"video_{vid_index}_{self.hparams.fps_sampling_test}fps_acc.txt"
        save_path_vid = save_path / f"video_{vid_index}_{self.hparams.fps_sampling_test}fps.pkl"

        with open(save_path_txt, "w") as f:
            f.write(f"vid: {vid_index}; acc: {acc}; ppv: {ppv}; tpr: {tpr}; keys: {keys}; f1: {f1}")
            self.test_acc_per_video[vid_index] = acc
            print(f"save video {vid_index} | acc: {acc:.4f} | f1: {f1}")
        with open(save_path_vid, "wb") as f:
            pickle.dump(
                [
                    np.asarray(self.current_stems),
                    np.asarray(self.current_video_phase_preds),
                    np.asarray(self.current_video_phase_labels),
                    np.asarray(self.current_video_tool_preds),
                    np.asarray(self.current_video_tool_labels),
                ],
                f,
            )

    def on_test_epoch_start(self):
        self.set_export_pickle_path()
        self.test_acc_per_video = {}

    def test_step(self, batch, batch_idx):
        x, y_phase, y_tool, (vid_idx, img_index, tool_gt, img_file) = batch
        vid_idx_raw = vid_idx.cpu().numpy()
        with torch.no_grad():
            stem, y_hat, p_tool = self.forward(x)
        self.test_acc_phase_step = (y_hat.argmax(dim=1) == y_phase).float().mean()
        vid_idxs, indexes = np.unique(vid_idx_raw, return_index=True)
        vid_idxs = [int(x) for x in vid_idxs]
        index_next = len(vid_idx) if len(vid_idxs) == 1 else indexes[1]
        for i in range(len(vid_idxs)):
            vid_idx = vid_idxs[i]
            index = indexes[i]
            if vid_idx != self.current_video_idx:
                self.save_to_drive(self.current_video_idx)
                self.current_stems = []
                self.current_video_phase_preds = []
                self.current_video_phase_labels = []
                self.current_video_tool_preds = []
                self.current_video_tool_labels = []
                self.current_video_idx = vid_idx
                if i == len(vid_idxs) - 1:
                    index_next = len(vid_idx_raw)
                else:
                    index_next = indexes[i + 1]
            y_hat_numpy = np.asarray(y_hat.cpu()).squeeze()
            self.current_stems.extend(stem[index:index_next, :].cpu().detach().numpy().tolist())
            self.current_video_phase_preds.extend(y_hat_numpy[index:index_next, :].tolist())
            self.current_video_phase_labels.extend(y_phase[index:index_next].cpu().numpy().tolist())
            if self.num_tasks == 2:
                self.current_video_tool_preds.extend(
                    self.sig_f(p_tool[index:index_next, :]).cpu().detach().numpy().tolist())
                self.current_video_tool_labels.extend(tool_gt[index:index_next].cpu().numpy().tolist())
        if (batch_idx + 1) * self.batch_size >= self.len_test_data:
            self.save_to_drive(vid_idx)
            print(f"Finished extracting all videos...")
        self.log("test_acc_phase_step", self.test_acc_phase_step, on_epoch=True, on_step=False)

    def on_test_epoch_end(self):
        self.log("test_acc_train", np.mean(np.asarray([self.test_acc_per_video[x] for x in
                                                          self.dataset.vids_for_training])))
        self.log("test_acc_val", np.mean(np.asarray([self.test_acc_per_video[x] for x in
                                                        self.dataset.vids_for_val])))
        self.log("test_acc_test", np.mean(np.asarray([self.test_acc_per_video[x] for x in
                                                         self.dataset.vids_for_test])))
        # features for 40 videos are ~6 GB of activations kept around; give the cache back
        torch.cuda.empty_cache()

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)
        return [optimizer]

    def __dataloader(self, split=None):
        dataset = self.dataset.data[split]
        should_shuffle = split == "train"
        worker_init_fn = None if not self.hparams.num_workers else (lambda wid: np.random.seed(wid))
        return DataLoader(
            dataset=dataset,
            batch_size=self.hparams.batch_size,
            shuffle=should_shuffle,
            num_workers=self.hparams.num_workers,
            pin_memory=True,
            worker_init_fn=worker_init_fn,
        )

    def train_dataloader(self):
        dataloader = self.__dataloader(split="train")
        log.info(f"training data loader called - size: {len(dataloader.dataset)}")
        return dataloader

    def val_dataloader(self):
        dataloader = self.__dataloader(split="val")
        log.info(f"validation data loader called - size: {len(dataloader.dataset)}")
        return dataloader

    def test_dataloader(self):
        dataloader = self.__dataloader(split="test")
        log.info(f"test data loader called - size: {len(dataloader.dataset)}")
        return dataloader

    @staticmethod
    def add_module_specific_args(parser):  # pragma: no cover
        cholec_fe_specific_args = parser.add_argument_group(title="cholec_fe specific args options")
        cholec_fe_specific_args.add_argument("--learning_rate", default=0.001, type=float)
        cholec_fe_specific_args.add_argument("--optimizer_name", default="adam", type=str)
        cholec_fe_specific_args.add_argument("--batch_size", default=32, type=int)
        cholec_fe_specific_args.add_argument("--num_tasks", default=1, type=int, choices=[1, 2])
        cholec_fe_specific_args.add_argument("--log_vid_mean_metrics", action="store_true")
        return parser
