"""
Copyright © 2023 Howard Hughes Medical Institute, Authored by Carsen Stringer and Marius Pachitariu.
"""
import os, time
from pathlib import Path
import logging

import numpy as np
import torch
from tqdm import trange

from . import transforms, dynamics, utils, plot
from .resnet_torch import CPnet
from .core import assign_device, check_mkl, run_net, run_3D

_MODEL_URL = "https://www.cellpose.org/models"
_MODEL_DIR_ENV = os.environ.get("CELLPOSE_LOCAL_MODELS_PATH")
_MODEL_DIR_DEFAULT = Path.home().joinpath(".cellpose", "models")
MODEL_DIR = Path(_MODEL_DIR_ENV) if _MODEL_DIR_ENV else _MODEL_DIR_DEFAULT

MODEL_NAMES = ["cyto3", "nuclei", "cyto2_cp3", "tissuenet_cp3", "livecell_cp3",
               "yeast_PhC_cp3", "yeast_BF_cp3", "bact_phase_cp3", "bact_fluor_cp3",
               "deepbacs_cp3", "cyto2", "cyto", "CPx"]

models_logger = logging.getLogger(__name__)


def model_path(model_type, model_index=0):
    torch_str = "torch"
    if model_type == "cyto" or model_type == "cyto2" or model_type == "nuclei":
        basename = "%s%s_%d" % (model_type, torch_str, model_index)
    else:
        basename = model_type
    return cache_model_path(basename)


def cache_model_path(basename):
    MODEL_DIR.mkdir(parents=True, exist_ok=True)
    url = f"{_MODEL_URL}/{basename}"
    cached_file = os.fspath(MODEL_DIR.joinpath(basename))
    if not os.path.exists(cached_file):
        models_logger.info('Downloading: "{}" to {}\n'.format(url, cached_file))
        utils.download_url_to_file(url, cached_file, progress=True)
    return cached_file


class CellposeModel():
    """
    Class representing a Cellpose model.

    Attributes:
        diam_mean (float): Mean "diameter" value for the model.
        builtin (bool): Whether the model is a built-in model or not.
        device (torch device): Device used for model running / training.
        nclasses (int): Number of classes in the model.
        nbase (list): List of base values for the model.
        net (CPnet): Cellpose network.
    """

    def __init__(self, gpu=False, pretrained_model=False, model_type=None,
                 diam_mean=30., device=None, nchan=2, backbone="default"):
        self.diam_mean = diam_mean
        builtin = True

        if model_type is not None or (pretrained_model and not os.path.exists(pretrained_model)):
            pretrained_model_string = model_type if model_type is not None else "cyto"
            if ~np.any([pretrained_model_string == s for s in MODEL_NAMES]):
                builtin = False
            pretrained_model = model_path(pretrained_model_string)
        else:
            builtin = False

        # assign network device
        self.mkldnn = None
        if device is None:
            sdevice, gpu = assign_device(use_torch=True, gpu=gpu)
        self.device = device if device is not None else sdevice
        if device is not None:
            device_gpu = self.device.type == "cuda"
        self.gpu = gpu if device is None else device_gpu
        if not self.gpu:
            self.mkldnn = check_mkl(True)

        # create network
        self.nchan = nchan
        self.nclasses = 3
        nbase = [32, 64, 128, 256]
        self.nbase = [nchan, *nbase]

        self.net = CPnet(self.nbase, self.nclasses, sz=3, mkldnn=self.mkldnn,
                         max_pool=True, diam_mean=diam_mean).to(self.device)

        self.pretrained_model = pretrained_model
        if self.pretrained_model:
            models_logger.info(f">>>> loading model {pretrained_model}")
            self.net.load_model(self.pretrained_model, device=self.device)
            if not builtin:
                self.diam_mean = self.net.diam_mean.data.cpu().numpy()[0]
            self.diam_labels = self.net.diam_labels.data.cpu().numpy()[0]
        else:
            self.diam_labels = self.diam_mean

        self.net_type = f"cellpose_{backbone}"

    def eval(self, x, batch_size=8, resample=True, channels=None, channel_axis=None,
             z_axis=None, normalize=True, invert=False, rescale=None, diameter=None,
             flow_threshold=0.4, cellprob_threshold=0.0, do_3D=False, anisotropy=None,
             stitch_threshold=0.0, min_size=15, niter=None, augment=False, tile_overlap=0.1,
             bsize=224, interp=True, compute_masks=True, progress=None):
        """Segmentation of list of images or a single image (see cellpose.io)."""
        if isinstance(x, list) or x.squeeze().ndim == 5:
            masks, styles, flows = [], [], []
            tqdm_out = utils.TqdmToLogger(models_logger, level=logging.INFO)
            nimg = len(x)
            iterator = trange(nimg, file=tqdm_out, mininterval=30) if nimg > 1 else range(nimg)
            for i in iterator:
                maski, flowi, stylei = self.eval(
                    x[i], batch_size=batch_size,
                    channels=channels[i] if channels is not None and len(channels) == len(x) else channels,
                    channel_axis=channel_axis, z_axis=z_axis, normalize=normalize,
                    invert=invert, rescale=rescale[i] if isinstance(rescale, (list, np.ndarray)) else rescale,
                    diameter=diameter[i] if isinstance(diameter, (list, np.ndarray)) else diameter,
                    do_3D=do_3D, anisotropy=anisotropy, augment=augment, tile_overlap=tile_overlap,
                    bsize=bsize, resample=resample, interp=interp, flow_threshold=flow_threshold,
                    cellprob_threshold=cellprob_threshold, compute_masks=compute_masks,
                    min_size=min_size, stitch_threshold=stitch_threshold, progress=progress,
                    niter=niter)
                masks.append(maski)
                flows.append(flowi)
                styles.append(stylei)
            return masks, flows, styles

        x = transforms.convert_image(x, channels, channel_axis=channel_axis, z_axis=z_axis,
                                     do_3D=(do_3D or stitch_threshold > 0), nchan=self.nchan)
        if x.ndim < 4:
            x = x[np.newaxis, ...]
        self.batch_size = batch_size

        if diameter is not None and diameter > 0:
            rescale = self.diam_mean / diameter
        elif rescale is None:
            diameter = self.diam_labels
            rescale = self.diam_mean / diameter

        masks, styles, dP, cellprob, p = self._run_cp(
            x, compute_masks=compute_masks, normalize=normalize, invert=invert,
            rescale=rescale, resample=resample, augment=augment, tile_overlap=tile_overlap,
            bsize=bsize, flow_threshold=flow_threshold, cellprob_threshold=cellprob_threshold,
            interp=interp, min_size=min_size, do_3D=do_3D, anisotropy=anisotropy, niter=niter,
            stitch_threshold=stitch_threshold)

        flows = [plot.dx_to_circ(dP), dP, cellprob, p]
        return masks, flows, styles

    def _run_cp(self, x, compute_masks=True, normalize=True, invert=False, niter=None,
                rescale=1.0, resample=True, augment=False, tile_overlap=0.1,
                cellprob_threshold=0.0, bsize=224, flow_threshold=0.4, min_size=15,
                interp=True, anisotropy=1.0, do_3D=False, stitch_threshold=0.0):
        tic = time.time()
        shape = x.shape
        nimg = shape[0]

        if do_3D:
            img = np.asarray(x)
            if normalize or invert:
                img = transforms.normalize_img(img, invert=invert, axis=-1)
            yf, styles = run_3D(self.net, img, rsz=rescale, anisotropy=anisotropy,
                                augment=augment, tile_overlap=tile_overlap)
            cellprob = yf[0][-1] + yf[1][-1] + yf[2][-1]
            dP = np.stack((yf[1][0] + yf[2][0], yf[0][0] + yf[2][1], yf[0][1] + yf[1][1]),
                          axis=0)
            del yf
        else:
            img = np.asarray(x)
            if normalize or invert:
                img = transforms.normalize_img(img, invert=invert, axis=-1)
            if rescale != 1.0:
                img = transforms.resize_image(img, rsz=rescale)
            yf, styles = run_net(self.net, img, bsize=bsize, augment=augment,
                                 tile_overlap=tile_overlap)
            if resample:
                yf = transforms.resize_image(yf, shape[1], shape[2])
            cellprob = yf[..., 2]
            dP = yf[..., :2].transpose((3, 0, 1, 2))

        styles = styles.squeeze()
        net_time = time.time() - tic
        if nimg > 1:
            models_logger.info("network run in %2.2fs" % (net_time))

        if compute_masks:
            tic = time.time()
            niter0 = 200 if (do_3D and not resample) else (1 / rescale * 200)
            niter = niter0 if niter is None or niter == 0 else niter
            if do_3D:
                masks, p = dynamics.resize_and_compute_masks(
                    dP, cellprob, niter=niter, cellprob_threshold=cellprob_threshold,
                    flow_threshold=flow_threshold, interp=interp, do_3D=do_3D,
                    min_size=min_size, resize=None,
                    device=self.device if self.gpu else None)
            else:
                masks, p = [], []
                resize = [shape[1], shape[2]] if (not resample and rescale != 1) else None
                for i in trange(nimg):
                    outputs = dynamics.resize_and_compute_masks(
                        dP[:, i], cellprob[i], niter=niter,
                        cellprob_threshold=cellprob_threshold,
                        flow_threshold=flow_threshold, interp=interp, resize=resize,
                        min_size=min_size if stitch_threshold == 0 or nimg == 1 else -1,
                        device=self.device if self.gpu else None)
                    masks.append(outputs[0])
                    p.append(outputs[1])
                masks = np.array(masks)
                p = np.array(p)
            if stitch_threshold > 0 and nimg > 1:
                masks = utils.stitch3D(masks, stitch_threshold=stitch_threshold)
            flow_time = time.time() - tic
            if nimg > 1:
                models_logger.info("masks created in %2.2fs" % (flow_time))
            masks, dP, cellprob, p = masks.squeeze(), dP.squeeze(), cellprob.squeeze(), p.squeeze()
        else:
            masks, p = np.zeros(0), np.zeros(0)
        if self.gpu:
            torch.cuda.empty_cache()
        return masks, styles, dP, cellprob, p
