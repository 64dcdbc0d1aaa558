#
# DeepLabCut Toolbox (deeplabcut.org)
# © A. & M.W. Mathis Labs
# https://github.com/DeepLabCut/DeepLabCut
#
# Please see AUTHORS for contributors.
# https://github.com/DeepLabCut/DeepLabCut/blob/main/AUTHORS
#
# Licensed under GNU Lesser General Public License v3.0
#
"""Video analysis with the PyTorch engine (``deeplabcut.analyze_videos``)"""
from __future__ import annotations

import logging
import pickle
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from deeplabcut.core.engine import Engine
from deeplabcut.pose_estimation_pytorch.apis.utils import (
    build_predictions_dataframe,
    describe_device,
    get_inference_runners,
    get_model_snapshots,
)
from deeplabcut.pose_estimation_pytorch.runners import DynamicCropper, InferenceRunner
from deeplabcut.pose_estimation_pytorch.task import Task
from deeplabcut.utils import auxiliaryfunctions, VideoReader


class VideoIterator(VideoReader):
    """A class to iterate over videos, with possible added context"""

    def __init__(
        self, video_path: str | Path, context: list[dict[str, Any]] | None = None
    ) -> None:
        super().__init__(str(video_path))
        self._context = context
        self._index = 0

    def get_context(self) -> list[dict[str, Any]] | None:
        if self._context is None:
            return None
        return self._context

    def set_context(self, context: list[dict[str, Any]] | None) -> None:
        if context is None:
            self._context = None
            return
        self._context = context

    def __iter__(self):
        return self

    def __next__(self) -> np.ndarray | tuple[str, dict[str, Any]]:
        frame = self.read_frame()
        if frame is None:
            self._index = 0
            self.reset()
            raise StopIteration

        # Otherwise ValueError: At least one stride in the given numpy array is negative,
        # and tensors with negative strides are not currently supported. (You can probably
        # work around this by making a copy of your array  with array.copy().)
        frame = frame.copy()
        if self._context is None:
            self._index += 1
            return frame

        context = self._context[self._index]
        self._index += 1
        return frame, context

    def __len__(self) -> int:
        return self.get_n_frames()


def video_inference(
    video: str | Path | VideoIterator,
    pose_runner: InferenceRunner,
    detector_runner: InferenceRunner | None = None,
    cropping: list[int] | None = None,
) -> list[dict[str, np.ndarray]]:
    """Runs inference on a video"""
    if not isinstance(video, VideoIterator):
        video = VideoIterator(str(video))

    n_frames = video.get_n_frames()
    vid_w, vid_h = video.dimensions
    logging.info(
        f"Starting to analyze {video.video_path}\n"
        f"Video metadata: \n"
        f"  Overall # of frames:    {n_frames}\n"
        f"  Duration of video [s]:  {n_frames / max(1, video.fps):.2f}\n"
        f"  fps:                    {video.fps}\n"
        f"  resolution:             w={vid_w}, h={vid_h}\n"
    )

    if cropping is not None:
        video.set_crop(*cropping)

    if detector_runner is not None:
        logging.info(f"Running detector with batch size {detector_runner.batch_size}")
        bbox_predictions = detector_runner.inference(images=tqdm(video))
        video.set_context(bbox_predictions)

    logging.info(f"Running pose prediction with batch size {pose_runner.batch_size}")
    predictions = pose_runner.inference(images=tqdm(video))

    if len(predictions) != n_frames:
        tip_url = "https://deeplabcut.github.io/DeepLabCut/docs/recipes/io.html"
        header = "#tips-on-video-re-encoding-and-preprocessing"
        logging.warning(
            f"The video metadata indicates that there {n_frames} in the video, but "
            f"only {len(predictions)} were able to be processed. This can happen if "
            "the video is corrupted. You can try to fix the issue by re-encoding your "
            f"video (tips on how to do that: {tip_url}{header})"
        )

    return predictions


def analyze_videos(
    config: str,
    videos: str | list[str],
    videotype: str | None = None,
    shuffle: int = 1,
    trainingsetindex: int = 0,
    save_as_csv: bool = False,
    in_random_order: bool = True,
    snapshot_index: int | str | None = None,
    detector_snapshot_index: int | str | None = None,
    gputouse: int | None = None,
    device: str | None = None,
    destfolder: str | None = None,
    batch_size: int | None = None,
    detector_batch_size: int | None = None,
    dynamic: tuple[bool, float, int] = (False, 0.5, 10),
    modelprefix: str = "",
    use_shelve: bool = False,
    robust_nframes: bool = False,
    auto_track: bool | None = True,
    identity_only: bool | None = False,
    overwrite: bool = False,
    cropping: list[int] | None = None,
) -> str:
    """Makes prediction based on a trained network.

    The index of the trained network is specified by parameters in the config file
    (in particular the variable 'snapshotindex').

    Args:
        config: full path of the config.yaml file for the project
        videos: a str (or list of strings) containing the full paths to videos for
            analysis or a path to the directory, where all the videos with same
            extension are stored.
        videotype: checks for the extension of the video in case the input to the
            video is a directory. Only videos with this extension are analyzed.
        shuffle: An integer specifying the shuffle index of the training dataset used
            for training the network.
        trainingsetindex: Integer specifying which TrainingsetFraction to use.
        save_as_csv: For multi-animal projects and when `auto_track=True`, passed
            along to the `stitch_tracklets` method to save tracks as CSV.
        in_random_order: Whether or not to analyze videos in a random order. This is
            only relevant when specifying a video directory in `videos`.
        snapshot_index: index (starting at 0) of the snapshot to use to analyze the
            videos. To evaluate the last one, use -1.
        detector_snapshot_index: Only for TD models. If defined, uses the detector
            with the given index for pose estimation.
        gputouse: the index of the GPU to run inference on (kept for compatibility
            with the TensorFlow engine). Ignored if ``device`` is given.
        device: the device to use for video analysis (e.g. "cpu", "cuda:1")
        destfolder: specifies the destination folder for analysis data. If None,
            the path of the video is used. Note that for subsequent analysis this
            folder also needs to be passed
        batch_size: the batch size to use for inference. Takes the value from the
            project config as a default.
        detector_batch_size: the batch size to use for detector inference. Takes the
            value from the project config as a default.
        dynamic: (state, detectiontreshold, margin) triplet. If the state is true,
            then dynamic cropping will be performed.
        modelprefix: directory containing the deeplabcut models to use when evaluating
            the network. By default, the models are assumed to exist in the project
            folder.
        use_shelve: By default, data are dumped in a pickle file at the end of the
            video analysis. Otherwise, data are written to disk on the fly using a
            "shelf"; i.e., a pickle-based, persistent, database-like object by default,
            resulting in constant memory footprint.
        robust_nframes: Evaluate a video's number of frames in a robust manner.
        auto_track: By default, tracking and stitching are automatically performed,
            producing the final h5 data file.
        identity_only: sub-call for auto_track. If ``True`` and animal identity was
            learned by the model, assembly and tracking rely exclusively on identity
            prediction.
        overwrite: Overwrite existing analysis files for the same video.
        cropping: List of cropping coordinates as [x1, x2, y1, y2].

    Returns:
        The scorer used to analyze the videos
    """
    if device is None and gputouse is not None:
        device = f"cuda:{gputouse}"

    # Create the output folder
    _validate_destfolder(destfolder)

    # Load the project configuration
    cfg = auxiliaryfunctions.read_config(config)
    project_path = Path(cfg["project_path"])
    train_fraction = cfg["TrainingFraction"][trainingsetindex]
    model_folder = project_path / auxiliaryfunctions.get_model_folder(
        train_fraction,
        shuffle,
        cfg,
        modelprefix=modelprefix,
        engine=Engine.PYTORCH,
    )
    train_folder = model_folder / "train"

    # Read the inference configuration, load the model
    model_cfg_path = train_folder / Engine.PYTORCH.pose_cfg_name
    model_cfg = auxiliaryfunctions.read_plainconfig(model_cfg_path)
    pose_task = Task(model_cfg["method"])

    if snapshot_index is None:
        snapshot_index = cfg["snapshotindex"]
    snapshots = get_model_snapshots(train_folder, pose_task)
    snapshot = snapshots[snapshot_index]
    logging.info(f"Analyzing videos with {snapshot.path}")

    detector_path = None
    if pose_task == Task.TOP_DOWN:
        if detector_snapshot_index is None:
            detector_snapshot_index = cfg.get("detector_snapshotindex", -1)
        detector_path = get_model_snapshots(train_folder, Task.DETECT)[
            detector_snapshot_index
        ].path

    if batch_size is None:
        batch_size = cfg.get("batch_size", 1)
    if detector_batch_size is None:
        detector_batch_size = cfg.get("detector_batch_size", 1)

    dynamic_cropper = None
    if dynamic[0]:
        dynamic_cropper = DynamicCropper(
            threshold=dynamic[1], margin=dynamic[2], min_hq_keypoints=2, bbox_from_hq=True
        )

    individuals = model_cfg["metadata"]["individuals"]
    bodyparts = model_cfg["metadata"]["bodyparts"]
    unique_bodyparts = model_cfg["metadata"]["unique_bodyparts"]
    with_identity = model_cfg["metadata"].get("with_identity", False)

    pose_runner, detector_runner = get_inference_runners(
        model_config=model_cfg,
        snapshot_path=snapshot.path,
        max_individuals=len(individuals),
        num_bodyparts=len(bodyparts),
        num_unique_bodyparts=len(unique_bodyparts),
        batch_size=batch_size,
        device=device,
        with_identity=with_identity,
        detector_batch_size=detector_batch_size,
        detector_path=detector_path,
        dynamic=dynamic_cropper,
    )
    logging.info(f"Running on {describe_device(str(pose_runner.device))}")

    dlc_scorer = auxiliaryfunctions.get_scorer_name(
        cfg,
        shuffle,
        train_fraction,
        trainingsiterations=snapshot.epochs or "best",
        modelprefix=modelprefix,
        engine=Engine.PYTORCH,
    )

    videos = auxiliaryfunctions.get_list_of_videos(videos, videotype, in_random_order)
    for video in videos:
        output_path = Path(destfolder or Path(video).parent)
        output_prefix = f"{Path(video).stem}{dlc_scorer}"
        output_h5 = output_path / f"{output_prefix}.h5"
        if output_h5.exists() and not overwrite:
            logging.info(f"Video {video} already analyzed at {output_h5}!")
            continue

        start = time.time()
        predictions = video_inference(
            video=video,
            pose_runner=pose_runner,
            detector_runner=detector_runner,
            cropping=cropping,
        )
        runtime = time.time() - start
        logging.info(f"Inference took {runtime:.1f}s ({len(predictions) / runtime:.1f} fps)")

        df = _predictions_to_dataframe(dlc_scorer, predictions, bodyparts, individuals)
        df.to_hdf(output_h5, key="df_with_missing", format="table", mode="w")
        if save_as_csv:
            df.to_csv(output_h5.with_suffix(".csv"))

        metadata = {
            "data": {
                "start": start,
                "stop": time.time(),
                "run_duration": runtime,
                "Scorer": dlc_scorer,
                "pytorch-config": model_cfg,
                "device": str(pose_runner.device),
                "nframes": len(predictions),
                "cropping": cropping is not None,
            }
        }
        with open(output_path / f"{output_prefix}_meta.pickle", "wb") as f:
            pickle.dump(metadata, f, pickle.HIGHEST_PROTOCOL)

        # the frames of long videos can fill up the caching allocator
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    return dlc_scorer


def _predictions_to_dataframe(
    scorer: str,
    predictions: list[dict[str, np.ndarray]],
    bodyparts: list[str],
    individuals: list[str],
) -> pd.DataFrame:
    poses = np.stack([p["bodyparts"][..., :3] for p in predictions])
    n_frames = poses.shape[0]
    columns = pd.MultiIndex.from_product(
        [[scorer], individuals, bodyparts, ["x", "y", "likelihood"]],
        names=["scorer", "individuals", "bodyparts", "coords"],
    )
    return pd.DataFrame(poses.reshape(n_frames, -1), columns=columns)


def _validate_destfolder(destfolder: str | None) -> None:
    """Checks that the destfolder for video analysis is valid"""
    if destfolder is not None and destfolder != "":
        output_folder = Path(destfolder)
        if not output_folder.exists():
            logging.info(f"Creating the output folder {output_folder}")
            output_folder.mkdir(parents=True)

        if not output_folder.is_dir():
            raise ValueError(
                f"The destination folder for video analysis must be a directory. "
                f"Found {output_folder} when calling analyze_videos."
            )
