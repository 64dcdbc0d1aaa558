"""Functions for predicting keypoints on labeled datasets and unlabeled videos."""

import datetime
import os
import time
from typing import List, Optional, Tuple, Union

import lightning.pytorch as pl
import numpy as np
import pandas as pd
import torch
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm
from typeguard import typechecked

from lightning_pose.data.dali import LitDaliWrapper, PrepareDALI
from lightning_pose.data.datamodules import BaseDataModule, UnlabeledDataModule
from lightning_pose.data.datasets import BaseTrackingDataset, HeatmapDataset
from lightning_pose.data.utils import count_frames
from lightning_pose.models import ALLOWED_MODELS
from lightning_pose.utils import pretty_print_str

# to ignore imports for sphix-autoapidoc
__all__ = [
    "PredictionHandler",
    "predict_dataset",
    "predict_single_video",
    "make_pred_arr_undo_resize",
    "get_model_class",
    "load_model_from_checkpoint",
]


class PredictionHandler:
    """Turns the per-batch outputs of `trainer.predict` into a DLC-style dataframe."""

    def __init__(
        self,
        cfg: DictConfig,
        data_module: Optional[pl.LightningDataModule] = None,
        video_file: Optional[str] = None,
    ) -> None:
        """

        Args
            cfg: hydra config
            data_module: data module that contains dataloaders for train, val, test splits
            video_file: absolute path to video file for which predictions will be made

        """
        self.cfg = cfg
        self.data_module = data_module
        if data_module is None and video_file is None:
            raise ValueError("must pass data_module to constructor if predicting on a dataset")
        self.video_file = video_file

    @property
    def frame_count(self) -> int:
        """Returns the number of frames in the video or the labeled dataset"""
        if self.video_file is not None:
            return count_frames(self.video_file)
        else:
            return len(self.data_module.dataset)

    @property
    def keypoint_names(self):
        return list(self.cfg.data.keypoint_names)

    @property
    def do_context(self):
        return self.cfg.model.model_type == "heatmap_mhcrnn"

    def unpack_preds(
        self, preds: List[Tuple[torch.Tensor, torch.Tensor]]
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """unpack list of preds coming out from pl.trainer.predict, confs tuples into tensors.
        It still returns unnecessary final rows, which should be discarded at the dataframe
        stage. This works for the output of predict_loader, suitable for
        batch_size=1, sequence_length=16, step=16
        """
        # stack the predictions into rows.
        # loop over the batches, and stack
        stacked_preds = torch.vstack([pred[0] for pred in preds])
        stacked_confs = torch.vstack([pred[1] for pred in preds])

        if self.video_file is not None:  # dealing with dali loaders
            # first we chop off the last few rows that are not part of the video
            num_rows_to_discard = stacked_preds.shape[0] - self.frame_count
            if num_rows_to_discard > 0:
                stacked_preds = stacked_preds[:-num_rows_to_discard]
                stacked_confs = stacked_confs[:-num_rows_to_discard]

            if self.do_context:
                # fix shifts in the context model
                stacked_preds = self.fix_context_preds_confs(stacked_preds)
                stacked_confs = self.fix_context_preds_confs(stacked_confs, zero_pad_confidence=True)

        return stacked_preds, stacked_confs

    def fix_context_preds_confs(
        self, stacked_preds: torch.Tensor, zero_pad_confidence: bool = False
    ) -> torch.Tensor:
        """
        In the context model, ind=0 is associated with image[2], and ind=1 is associated
        with image[3], so we need to shift the predictions and confidences by two and
        eliminate the edges.
        """
        # first pad the first two rows for which we have no valid preds.
        preds_1 = torch.tile(stacked_preds[0], (2, 1))  # copying twice the prediction for image[2]
        preds_2 = stacked_preds[0:-2]  # throw out the last two rows.
        preds_combined = torch.vstack([preds_1, preds_2])
        # repat the last one twice
        if preds_combined.shape[0] == self.frame_count:
            # i.e., after concat this has the length of the data.
            preds_combined[-2:, :] = torch.tile(stacked_preds[-1], (2, 1))
        # else:
        # e.g., BaseTrackingDataset case, we don't need to do that, just fill zeros.
        if zero_pad_confidence:
            # zeroing out those first and last two rows (after we've shifted everything above)
            preds_combined[:2, :] = 0.0
            preds_combined[-2:, :] = 0.0
        return preds_combined

    def make_dlc_pandas_index(self) -> pd.MultiIndex:
        xyl_labels = ["x", "y", "likelihood"]
        pdindex = pd.MultiIndex.from_product(
            [["%s_tracker" % self.cfg.model.model_type], self.keypoint_names, xyl_labels],
            names=["scorer", "bodyparts", "coords"],
        )
        return pdindex

    def add_split_indices_to_df(self, df: pd.DataFrame) -> pd.DataFrame:
        """Add split indices to the dataframe."""
        df["set"] = np.array(["unused"] * df.shape[0])

        dataset_split_indices = {
            "train": self.data_module.train_dataset.indices,
            "validation": self.data_module.val_dataset.indices,
            "test": self.data_module.test_dataset.indices,
        }

        for key, val in dataset_split_indices.items():
            df.loc[val, ("set", "", "")] = np.repeat(key, len(val))
        return df

    def __call__(self, preds: List[Tuple[torch.Tensor, torch.Tensor]]) -> pd.DataFrame:
        """
        Call this function to get a pandas dataframe of the predictions for a single video.
        Assuming you've already run trainer.predict(), and have a list of Tuple predictions.
        Args:
            preds: list of tuples of (predictions, confidences)
        Returns:
            pd.DataFrame: index is (frame, bodypart, x, y, likelihood)
        """
        stacked_preds, stacked_confs = self.unpack_preds(preds=preds)
        num_keypoints = len(self.keypoint_names)
        pred_arr = make_pred_arr_undo_resize(
            keypoints_np=stacked_preds.cpu().numpy(),
            confidence_np=stacked_confs.cpu().numpy(),
            num_keypoints=num_keypoints,
            resize_h=self.cfg.data.image_resize_dims.height,
            resize_w=self.cfg.data.image_resize_dims.width,
            orig_h=self.cfg.data.image_orig_dims.height,
            orig_w=self.cfg.data.image_orig_dims.width,
        )
        pdindex = self.make_dlc_pandas_index()
        df = pd.DataFrame(pred_arr, columns=pdindex)
        if self.video_file is None:
            # specify which image is train/test/val/unused
            df = self.add_split_indices_to_df(df)
            df.index = self.data_module.dataset.image_names

        return df


@typechecked
def predict_dataset(
    cfg: DictConfig,
    data_module: BaseDataModule,
    preds_file: str,
    ckpt_file: Optional[str] = None,
    trainer: Optional[pl.Trainer] = None,
    model: Optional[pl.LightningModule] = None,
) -> None:
    """Save predicted keypoints for a labeled dataset.

    Args:
        cfg: hydra config
        data_module: data module that contains dataloaders for train, val, test splits
        preds_file: absolute filename for the predictions .csv file
        ckpt_file: absolute path to the checkpoint of your trained model; requires .ckpt
            suffix
        trainer: pl.Trainer object
        model: Lightning Module

    """
    delete_model = False
    if model is None:
        model = load_model_from_checkpoint(
            cfg=cfg, ckpt_file=ckpt_file, eval=True, data_module=data_module
        )
        delete_model = True

    delete_trainer = False
    if trainer is None:
        trainer = pl.Trainer(accelerator="gpu", devices=1)
        delete_trainer = True

    labeled_preds = trainer.predict(
        model=model,
        dataloaders=data_module.full_labeled_dataloader(),
        return_predictions=True,
    )

    pred_handler = PredictionHandler(cfg=cfg, data_module=data_module, video_file=None)
    labeled_preds_df = pred_handler(preds=labeled_preds)
    labeled_preds_df.to_csv(preds_file)

    # clear up memory
    if delete_model:
        del model
    if delete_trainer:
        del trainer
    torch.cuda.empty_cache()


def predict_single_video(
    video_file: str,
    ckpt_file: Optional[str],
    cfg_file: Union[str, DictConfig],
    preds_file: str,
    data_module: Optional[Union[BaseDataModule, UnlabeledDataModule]] = None,
    trainer: Optional[pl.Trainer] = None,
    model: Optional[pl.LightningModule] = None,
) -> pd.DataFrame:
    """Make predictions for a single video, loading frame sequences using DALI.

    This function initializes a DALI pipeline, prepares a dataloader, and passes it on to
    _make_predictions().

    Args:
        video_file: absolute path to a single video you want to get predictions for
        ckpt_file: absolute path to the checkpoint of your trained model
        cfg_file: either a hydra config or a path pointing to one, with all the model
            specs
        preds_file: absolute filename for the predictions .csv file
        data_module: contains keypoint info for later processing
        trainer: pl.Trainer object
        model: Lightning Module

    Returns:
        pandas dataframe with predictions

    """
    cfg = get_cfg_file(cfg_file=cfg_file)

    pretty_print_str(f"Predicting video: {video_file}")
    t_start = time.time()

    delete_model = False
    if model is None:
        model = load_model_from_checkpoint(
            cfg=cfg, ckpt_file=ckpt_file, eval=True, data_module=data_module,
            skip_data_module=True,
        )
        delete_model = True

    delete_trainer = False
    if trainer is None:
        trainer = pl.Trainer(accelerator="gpu", devices=1, logger=False)
        delete_trainer = True

    model_type = "context" if cfg.model.model_type == "heatmap_mhcrnn" else "base"
    vid_pred_class = PrepareDALI(
        train_stage="predict",
        model_type=model_type,
        dali_config=cfg.dali,
        filenames=[video_file],
        resize_dims=[cfg.data.image_resize_dims.height, cfg.data.image_resize_dims.width],
    )
    # get loader
    predict_loader = vid_pred_class()
    # predict
    preds = trainer.predict(model=model, dataloaders=predict_loader, return_predictions=True)

    pred_handler = PredictionHandler(cfg=cfg, data_module=data_module, video_file=video_file)
    preds_df = pred_handler(preds=preds)
    os.makedirs(os.path.dirname(preds_file), exist_ok=True)
    preds_df.to_csv(preds_file)

    t_end = time.time()
    elapsed = datetime.timedelta(seconds=round(t_end - t_start))
    n_frames = pred_handler.frame_count
    pretty_print_str(
        f"Predicted {n_frames} frames in {elapsed} ({n_frames / (t_end - t_start):.1f} FPS)"
    )

    # clear up memory
    if delete_model:
        del model
    if delete_trainer:
        del trainer
    del predict_loader
    torch.cuda.empty_cache()  # release the DALI decoder buffers

    return preds_df


def make_pred_arr_undo_resize(
    keypoints_np: np.ndarray,
    confidence_np: np.ndarray,
    num_keypoints: int,
    resize_h: int,
    resize_w: int,
    orig_h: int,
    orig_w: int,
) -> np.ndarray:
    """Resize keypoint predictions into the original image dimensions.

    Args:
        keypoints_np: shape (samples, num_keypoints * 2)
        confidence_np: shape (samples, num_keypoints)
        num_keypoints: number of keypoints
        resize_h: height of resized/reshaped frames
        resize_w: width of resized/reshaped frames
        orig_h: height of original frames
        orig_w: width of original frames

    Returns:
        array of shape (samples, 3 * num_keypoints), with (x, y, likelihood) triplets

    """
    assert keypoints_np.shape[0] == confidence_np.shape[0]  # check num frames in the dataset
    assert keypoints_np.shape[1] == (confidence_np.shape[1] * 2)  # check we have two (x,y) coordinates and a single likelihood value

    num_samples = keypoints_np.shape[0]
    tmp = keypoints_np.reshape(num_samples, -1, 2)
    tmp[:, :, 0] *= orig_w / resize_w
    tmp[:, :, 1] *= orig_h / resize_h
    predictions = np.zeros((num_samples, num_keypoints * 3))
    predictions[:, 0::3] = tmp[:, :, 0]
    predictions[:, 1::3] = tmp[:, :, 1]
    predictions[:, 2::3] = confidence_np
    return predictions


def get_cfg_file(cfg_file: Union[str, DictConfig]) -> DictConfig:
    """Load yaml configuration files."""
    if isinstance(cfg_file, str):
        # load configuration file
        with open(cfg_file, "r") as f:
            cfg = OmegaConf.load(f)
    elif isinstance(cfg_file, DictConfig):
        cfg = cfg_file
    else:
        raise ValueError("cfg_file must be str or DictConfig, not %s!" % type(cfg_file))
    return cfg


def get_model_class(map_type: str, semi_supervised: bool):
    """[summary]

    Args:
        map_type (str): "regression" | "heatmap"
        semi_supervised (bool): True if you want to use unlabeled videos

    Returns:
        a ptl model class to be initialized outside of this function.

    """
    if not semi_supervised:
        if map_type == "regression":
            from lightning_pose.models.regression_tracker import RegressionTracker as Model
        elif map_type == "heatmap":
            from lightning_pose.models.heatmap_tracker import HeatmapTracker as Model
        elif map_type == "heatmap_mhcrnn":
            from lightning_pose.models.heatmap_tracker_mhcrnn import HeatmapTrackerMHCRNN as Model
        else:
            raise NotImplementedError(
                "%s is an invalid model_type for a fully supervised model" % map_type
            )
    else:
        if map_type == "regression":
            from lightning_pose.models.regression_tracker import SemiSupervisedRegressionTracker as Model
        elif map_type == "heatmap":
            from lightning_pose.models.heatmap_tracker import SemiSupervisedHeatmapTracker as Model
        elif map_type == "heatmap_mhcrnn":
            from lightning_pose.models.heatmap_tracker_mhcrnn import SemiSupervisedHeatmapTrackerMHCRNN as Model
        else:
            raise NotImplementedError(
                "%s is an invalid model_type for a semi-supervised model" % map_type
            )

    return Model


@typechecked
def load_model_from_checkpoint(
    cfg: DictConfig,
    ckpt_file: str,
    eval: bool = False,
    data_module: Optional[Union[BaseDataModule, UnlabeledDataModule]] = None,
    skip_data_module: bool = False,
) -> pl.LightningModule:
    """Load Lightning Pose model from checkpoint file.

    Args:
        cfg: model config
        ckpt_file: absolute path to model checkpoint
        eval: True to call `model.eval()` on the model
        data_module: used to initialize unsupervised losses
        skip_data_module: if `data_module=None` and `skip_data_module=True`, the loss
            factories are built without a data module (no pca losses)

    Returns:
        model as a Lightning Module

    """
    from lightning_pose.utils.io import ckpt_path_from_base_path
    from lightning_pose.utils.scripts import get_loss_factories

    # get loss factories
    delete_extras = False
    if not data_module and not skip_data_module:
        raise ValueError("must pass data_module or set skip_data_module=True")
    loss_factories = get_loss_factories(cfg=cfg, data_module=data_module)

    # pick the right model class
    semi_supervised = len(cfg.model.losses_to_use) > 0 and cfg.model.losses_to_use[0] != ""
    ModelClass = get_model_class(map_type=cfg.model.model_type, semi_supervised=semi_supervised)

    # initialize a model instance, with weights loaded from .ckpt file
    if semi_supervised:
        model = ModelClass.load_from_checkpoint(
            ckpt_file,
            loss_factory=loss_factories["supervised"],
            loss_factory_unsupervised=loss_factories["unsupervised"],
            strict=False,
            map_location="cpu",
        )
    else:
        model = ModelClass.load_from_checkpoint(
            ckpt_file,
            loss_factory=loss_factories["supervised"],
            strict=False,
            map_location="cpu",
        )

    if eval:
        model.eval()

    return model
