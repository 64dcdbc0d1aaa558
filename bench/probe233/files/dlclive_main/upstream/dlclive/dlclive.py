"""
DeepLabCut Toolbox (deeplabcut.org)
© A. & M. Mathis Labs

Licensed under GNU Lesser General Public License v3.0
"""
from __future__ import annotations

import glob
import os
import time
import typing
from pathlib import Path
from typing import Any, List, Optional, Tuple

import numpy as np
import torch

import dlclive.factory as factory
import dlclive.utils as utils
from dlclive.core.runner import BaseRunner
from dlclive.display import Display
from dlclive.exceptions import DLCLiveError
from dlclive.processor import Processor


class DLCLive:
    """
    Object that loads a DLC network and performs inference on single images (e.g.
    images captured from a camera feed)

    Parameters
    -----------

    model_path: Path
        Full path to exported model (created when `deeplabcut.export_model(...)` was
        called). For PyTorch models, this is a single model file. For TensorFlow
        models, this is a directory containing the model snapshots.

    model_type: string, optional
        Which model to use. For the PyTorch engine, options are [`pytorch`, `onnx`].
        For the TensorFlow engine, options are [`base`, `tensorrt`, `lite`].

    precision: string, optional
        Precision of model weights, for model_type "pytorch" and "tensorrt". Options
        are, for different model_types:
            "pytorch": {"FP32", "FP16"}
            "tensorrt": {"FP32", "FP16", "INT8"}

    device: str, optional
        The device on which to run inference for PyTorch models, e.g. "cpu", "cuda"
        or "cuda:0". Defaults to the first GPU when one is available.

    top_down_config: dict, optional
        Only for top-down PyTorch models: configuration of the detector.

    cropping: list of int
        Cropping parameters in pixel number: [x1, x2, y1, y2]

    dynamic: triple containing (state, detectiontreshold, margin)
        If the state is true, then dynamic cropping will be performed. That means that
        if an object is detected (i.e. any body part > detectiontreshold), then object
        boundaries are computed according to the smallest/largest x position and
        smallest/largest y position of all body parts. This  window is expanded by the
        margin and from then on only the posture within this crop is analyzed (until the
        object is lost, i.e. <detectiontreshold). The current position is utilized for
        updating the crop window for the next frame (this is why the margin is important
        and should be set large enough given the movement of the animal)

    resize: float, optional
        Factor to resize the image.
        For example, resize=0.5 will downsize both the height and width of the image by
        a factor of 2.

    processor: dlc pose processor object, optional
        User-defined processor object. Must contain two methods: process and save.
        The 'process' method takes in a pose, performs some processing, and returns
        the processed pose.
        The 'save' method saves any valuable data created by or used by the processor
        Processors can be used for two main purposes:
        i) to run a forward predicting model that will predict the future pose from
        past history of poses (history can be stored in the processor object, but is
        not stored in this DLCLive object)
        ii) to trigger external hardware based on pose estimation (e.g. see
        'TeensyLaser' processor)

    convert2rgb: bool, optional
        boolean flag to convert frames from BGR to RGB color scheme

    display: bool, optional
        Display frames with DeepLabCut labels?
        This is useful for testing model accuracy and cropping parameters, but it is
        very slow.

    pcutoff: float, default=0.5
        Only display body parts with a confidence greater than pcutoff.

    display_radius: int, default=3
        Radius for circles drawn on the displayed frames.

    display_cmap: str, default="bmy"
        String indicating the Matplotlib colormap to use.
    """

    PARAMETERS = (
        "path",
        "model_type",
        "precision",
        "cropping",
        "dynamic",
        "resize",
        "processor",
    )

    def __init__(
        self,
        model_path: str | Path,
        model_type: str = "pytorch",
        precision: str = "FP32",
        tf_config: Any | None = None,
        single_animal: bool = True,
        device: str | None = None,
        top_down_config: dict | None = None,
        cropping: Optional[List[int]] = None,
        dynamic: Tuple[bool, float, float] = (False, 0.5, 10),
        resize: Optional[float] = None,
        convert2rgb: bool = True,
        processor: Optional["Processor"] = None,
        display: typing.Union[bool, Display] = False,
        pcutoff: float = 0.5,
        display_radius: int = 3,
        display_cmap: str = "bmy",
    ):
        self.path = Path(model_path)
        self.model_type = model_type
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device

        self.runner: BaseRunner = factory.build_runner(
            model_type,
            model_path,
            device=self.device,
            precision=precision,
            single_animal=single_animal,
            dynamic=dynamic,
            resize=resize,
            top_down_config=top_down_config,
            tf_config=tf_config,
        )
        self.is_initialized = False

        self.cropping = cropping
        self.dynamic = dynamic
        self.dynamic_cropping = None
        self.resize = resize
        self.processor = processor
        self.convert2rgb = convert2rgb

        if isinstance(display, Display):
            self.display = display
        elif display:
            self.display = Display(
                pcutoff=pcutoff, radius=display_radius, cmap=display_cmap
            )
        else:
            self.display = None

        # inference timing, reported by `benchmark_videos`
        self._inference_times: list[float] = []
        self.pose: np.ndarray | None = None

    @property
    def cfg(self) -> dict | None:
        return self.runner.cfg

    def read_config(self) -> None:
        """Reads configuration yaml file

        Raises
        ------
        FileNotFoundError
            error thrown if pose configuration file does not exist
        """
        self.runner.read_config()

    @property
    def parameterization(self) -> dict:
        """
        Return
        Returns
        -------
        """
        params = {param: getattr(self, param) for param in self.PARAMETERS}
        params["device"] = self.device
        return params

    def process_frame(self, frame: np.ndarray) -> np.ndarray:
        """
        Crops an image according to the object's cropping and dynamic properties.

        Parameters
        -----------
        frame :class:`numpy.ndarray`
            image as a numpy array

        Returns
        ----------
        frame :class:`numpy.ndarray`
            processed frame: convert type, crop, convert color
        """
        if frame.dtype != np.uint8:
            frame = utils.convert_to_ubyte(frame)

        if self.cropping:
            frame = frame[
                self.cropping[2] : self.cropping[3], self.cropping[0] : self.cropping[1]
            ]

        if self.resize is not None and self.resize != 1:
            frame = utils.resize_frame(frame, self.resize)

        if self.convert2rgb:
            frame = utils.img_to_rgb(frame)

        return frame

    def init_inference(self, frame=None, **kwargs) -> np.ndarray:
        """
        Load model and get initial pose prediction

        Parameters
        ----------
        frame :class:`numpy.ndarray`
            image with dimensions (x, y, 3) or (x, y)
        kwargs: dict
            Processor parameters

        Returns
        --------
        pose :class:`numpy.ndarray`
            the pose estimated by DeepLabCut for the input image
        """
        if frame is None:
            raise DLCLiveError("No frame provided to initialize inference.")

        # Process frame
        processed_frame = self.process_frame(frame)

        # Initialize the model; the first forward pass is slow (cudnn autotuning,
        # allocator warm-up) so we run it here rather than on the first live frame
        pose = self.runner.init_inference(processed_frame)
        self.is_initialized = True

        if self.processor:
            pose = self.processor.process(pose, **kwargs)

        self.pose = pose
        return pose

    def get_pose(self, frame: np.ndarray | None = None, **kwargs) -> np.ndarray:
        """
        Get the pose of an image

        Parameters
        ----------
        frame :class:`numpy.ndarray`
            image with dimensions (x, y, 3) or (x, y)

        Returns
        --------
        pose :class:`numpy.ndarray`
            the pose estimated by DeepLabCut for the input image
        """
        if frame is None:
            raise DLCLiveError("No frame provided for live pose estimation")

        if not self.is_initialized:
            return self.init_inference(frame, **kwargs)

        frame = self.process_frame(frame)
        t0 = time.perf_counter()
        pose = self.runner.get_pose(frame)
        self._inference_times.append(time.perf_counter() - t0)

        if self.processor:
            pose = self.processor.process(pose, **kwargs)

        if self.display is not None:
            self.display.display_frame(frame, pose)

        self.pose = pose
        return pose

    def close(self) -> None:
        """Releases the model and the display window"""
        self.runner.close()
        if self.display is not None:
            self.display.destroy()
        if "cuda" in str(self.device):
            torch.cuda.empty_cache()


def get_available_models(model_dir: str | Path) -> list[str]:
    """Lists the exported models in a directory (PyTorch .pt files)"""
    return sorted(glob.glob(os.path.join(str(model_dir), "*.pt")))
