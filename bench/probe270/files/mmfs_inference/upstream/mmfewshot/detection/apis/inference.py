# Copyright (c) OpenMMLab. All rights reserved.
import copy
from typing import List, Optional

import mmcv
import numpy as np
import torch
import torch.nn as nn
from mmcv.ops import RoIPool
from mmcv.parallel import collate, scatter
from mmcv.runner import load_checkpoint
from mmdet.core import get_classes
from mmdet.datasets import replace_ImageToTensor
from mmdet.datasets.pipelines import Compose

from mmfewshot.detection.models import QuerySupportDetector, build_detector


def init_detector(config: mmcv.ConfigDict,
                  checkpoint: Optional[str] = None,
                  device: str = 'cuda:0',
                  cfg_options: Optional[dict] = None) -> nn.Module:
    """Prepare a detector from config file.

    Args:
        config (str | :obj:`mmcv.Config`): Config file path or the config
            object.
        checkpoint (str | None): Checkpoint path. If left as None, the model
            will not load any weights.
        device (str): Runtime device. Default: 'cuda:0'.
        cfg_options (dict): Options to override some settings in the
            used config.

    Returns:
        nn.Module: The constructed detector.
    """
    if isinstance(config, str):
        config = mmcv.Config.fromfile(config)
    elif not isinstance(config, mmcv.Config):
        raise TypeError('config must be a filename or Config object, '
                        f'but got {type(config)}')
    if cfg_options is not None:
        config.merge_from_dict(cfg_options)
    elif 'init_cfg' in config.model.backbone:
        config.model.backbone.init_cfg = None
    config.model.pretrained = None
    model = build_detector(config.model)
    if checkpoint is not None:
        map_loc = 'cpu' if device == 'cpu' else None
        checkpoint = load_checkpoint(model, checkpoint, map_location=map_loc)
        if 'CLASSES' in checkpoint.get('meta', {}):
            model.CLASSES = checkpoint['meta']['CLASSES']
        else:
            model.CLASSES = get_classes('coco')
    # save the config in the model for convenience in later use
    model.cfg = config
    model.to(device)
    model.eval()
    return model


def inference_detector(model: nn.Module, imgs):
    """Inference images with the detector.

    Args:
        model (nn.Module): The loaded detector.
        imgs (str | ndarray | Sequence[str/ndarray]):
           Either image files or loaded images.

    Returns:
        If imgs is a list or tuple, the same length list type results
        will be returned, otherwise return the detection results directly.
    """
    if isinstance(imgs, (list, tuple)):
        is_batch = True
    else:
        imgs = [imgs]
        is_batch = False

    cfg = model.cfg
    device = next(model.parameters()).device  # model device

    if isinstance(imgs[0], np.ndarray):
        cfg = cfg.copy()
        # set loading pipeline type
        cfg.data.test.pipeline[0].type = 'LoadImageFromWebcam'

    cfg.data.test.pipeline = replace_ImageToTensor(cfg.data.test.pipeline)
    test_pipeline = Compose(cfg.data.test.pipeline)

    datas = []
    for img in imgs:
        # prepare data
        if isinstance(img, np.ndarray):
            # directly add img
            data = dict(img=img)
        else:
            # add information into dict
            data = dict(img_info=dict(filename=img), img_prefix=None)
        # build the data pipeline
        data = test_pipeline(data)
        datas.append(data)

    data = collate(datas, samples_per_gpu=len(imgs))
    # just get the actual data from DataContainer
    data['img_metas'] = [img_metas.data[0] for img_metas in data['img_metas']]
    data['img'] = [img.data[0] for img in data['img']]
    if next(model.parameters()).is_cuda:
        # scatter to specified GPU
        data = scatter(data, [device])[0]
    else:
        for m in model.modules():
            assert not isinstance(
                m, RoIPool
            ), 'CPU inference with RoIPool is not supported currently.'

    # forward the model
    with torch.no_grad():
        results = model(mode='test', rescale=True, **data)

    if not is_batch:
        return results[0]
    else:
        return results


def process_support_images(model: nn.Module, support_imgs: List[str],
                           support_labels: List[List[str]],
                           support_bboxes: Optional[List[List[float]]] = None,
                           classes: Optional[List[str]] = None) -> None:
    """Process support images for query support detector.

    Args:
        model (nn.Module): Detector.
        support_imgs (list[str]): Support image filenames.
        support_labels (list[list[str]]): Support labels of each bbox.
        support_bboxes (list[list[list[float]]] | None): Bbox for support
            images. Shape of each bbox is [x1, y1, x2, y2]. If it is None,
            the whole image will be used as bbox. Default: None.
        classes (list[str] | None): Classes of support labels. Default: None.
    """
    cfg = model.cfg.copy()
    device = next(model.parameters()).device  # model device
    # build the data pipeline
    pipeline = cfg.data.model_init.pipeline
    if isinstance(model, QuerySupportDetector):
        pipeline[0].type = 'LoadImageFromFile'
    test_pipeline = Compose(pipeline)
    model.CLASSES = classes
    # forward support images
    with torch.no_grad():
        for i in range(len(support_imgs)):
            img = support_imgs[i]
            labels = support_labels[i]
            height, width = mmcv.imread(img).shape[:2]
            bboxes = support_bboxes[i] if support_bboxes is not None else [[0, 0, width, height]]
            gt_labels = [classes.index(label) for label in labels]
            data = dict(
                img_info=dict(filename=img, height=height, width=width),
                img_prefix=None,
                ann_info=dict(
                    bboxes=np.array(bboxes, dtype=np.float32),
                    labels=np.array(gt_labels, dtype=np.int64)))
            data = test_pipeline(data)
            data = collate([data], samples_per_gpu=1)
            # just get the actual data from DataContainer
            data['img_metas'] = [i.data[0] for i in data['img_metas']]
            data['img'] = [i.data[0] for i in data['img']]
            data['gt_labels'] = [i.data[0] for i in data['gt_labels']]
            data['gt_bboxes'] = [i.data[0] for i in data['gt_bboxes']]
            if device.type == 'cuda':
                # scatter to specified GPU
                data = scatter(data, [device.index])[0]
            else:
                for m in model.modules():
                    assert not isinstance(m, RoIPool), \
                        'CPU inference with RoIPool is not supported currently.'
            model(mode='model_init', **data)
        model.model_init()


def show_result_pyplot(model: nn.Module,
                       img: str,
                       result: List,
                       score_thr: float = 0.3,
                       title: str = 'result',
                       wait_time: int = 0) -> None:
    """Visualize the detection results on the image.

    Args:
        model (nn.Module): The loaded detector.
        img (str | np.ndarray): Image filename or loaded image.
        result (tuple[list] | list): The detection result, can be either
            (bbox, segm) or just bbox.
        score_thr (float): The threshold to visualize the bboxes and masks.
        title (str): Title of the pyplot figure.
        wait_time (float): Value of waitKey param. Default: 0.
    """
    if hasattr(model, 'module'):
        model = model.module
    model.show_result(
        img,
        result,
        score_thr=score_thr,
        show=True,
        wait_time=wait_time,
        win_name=title,
        bbox_color=(72, 101, 241),
        text_color=(72, 101, 241))
