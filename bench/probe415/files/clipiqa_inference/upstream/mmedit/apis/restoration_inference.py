# Copyright (c) OpenMMLab. All rights reserved.
import mmcv
import numpy as np
import torch
from mmcv.parallel import collate, scatter

from mmedit.datasets.pipelines import Compose


def restoration_inference(model, img, ref=None, return_attributes=False):
    """Inference image with the model.

    Args:
        model (nn.Module): The loaded model.
        img (str): File path of input image.
        ref (str | None): File path of reference image. Default: None.
        return_attributes (bool): Whether to also return the per-attribute
            scores (CLIP-IQA). Default: False.

    Returns:
        Tensor: The predicted restoration result (or quality score).
    """
    cfg = model.cfg
    device = next(model.parameters()).device  # model device
    # remove gt from test_pipeline
    keys_to_remove = ['gt', 'gt_path']
    for key in keys_to_remove:
        for pipeline in list(cfg.test_pipeline):
            if 'key' in pipeline and key == pipeline['key']:
                cfg.test_pipeline.remove(pipeline)
            if 'keys' in pipeline and key in pipeline['keys']:
                pipeline['keys'].remove(key)
                if len(pipeline['keys']) == 0:
                    cfg.test_pipeline.remove(pipeline)
            if 'meta_keys' in pipeline and key in pipeline['meta_keys']:
                pipeline['meta_keys'].remove(key)
    # build the data pipeline
    test_pipeline = Compose(cfg.test_pipeline)
    # prepare data
    if ref:  # Ref-SR
        data = dict(lq_path=img, ref_path=ref)
    else:  # SISR
        data = dict(lq_path=img)
    data = test_pipeline(data)
    data = collate([data], samples_per_gpu=1)
    if 'cuda' in str(device):
        data = scatter(data, [device])[0]
    # forward the model
    with torch.no_grad():
        result = model(test_mode=True, **data)

    if return_attributes:
        return result['output'], result['attributes']
    return result['output']


def restoration_inference_batch(model, img_list, batch_size=8):
    """Batched CLIP-IQA inference over a list of image paths."""
    cfg = model.cfg
    device = next(model.parameters()).device
    test_pipeline = Compose(cfg.test_pipeline)
    outputs = []
    for start in range(0, len(img_list), batch_size):
        batch = [test_pipeline(dict(lq_path=p)) for p in img_list[start:start + batch_size]]
        data = collate(batch, samples_per_gpu=len(batch))
        data['lq'] = data['lq'].data[0].to(device)
        data['meta'] = data['meta'].data[0]
        with torch.no_grad():
            result = model(test_mode=True, **data)
        outputs.append(result['output'].cpu())
    return torch.cat(outputs, dim=0)
