# Copyright (c) 2021 PaddlePaddle Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""Static-graph predictor used by EISeg for the EdgeFlow / HRNet / HRNet-OCR click models."""

import os
import os.path as osp

import numpy as np
import paddle
import paddle.inference as paddle_infer

from eiseg.util import logger
from eiseg.inference.transforms import ZoomIn, SigmoidForPred, LimitLongestSide


def get_device():
    # EISeg runs on whatever Paddle build is installed; GPU builds are preferred
    if paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0:
        return "gpu"
    return "cpu"


class StaticPredictor(object):
    def __init__(self,
                 model_path,
                 param_path,
                 with_flip=False,
                 net_clicks_limit=None,
                 zoom_in_params=None,
                 max_size=800,
                 use_gpu=None,
                 with_mask=True,
                 enable_mkldnn=True,
                 cpu_threads=8):
        self.with_flip = with_flip
        self.net_clicks_limit = net_clicks_limit
        self.with_mask = with_mask
        self.original_image = None
        self.prev_prediction = None

        if use_gpu is None:
            use_gpu = get_device() == "gpu"
        self.use_gpu = use_gpu

        config = paddle_infer.Config(model_path, param_path)
        if self.use_gpu:
            # 500 MB initial memory pool on card 0
            config.enable_use_gpu(500, 0)
            config.switch_ir_optim(True)
        else:
            config.disable_gpu()
            if enable_mkldnn:
                config.enable_mkldnn()
                config.set_mkldnn_cache_capacity(10)
            config.set_cpu_math_library_num_threads(cpu_threads)
        config.enable_memory_optim()
        config.disable_glog_info()
        self.predictor = paddle_infer.create_predictor(config)
        logger.info(f"EISeg static predictor on {'GPU' if self.use_gpu else 'CPU'}: {osp.basename(model_path)}")

        self.transforms = []
        if zoom_in_params is not None:
            self.transforms.append(ZoomIn(**zoom_in_params))
        if max_size is not None:
            self.transforms.append(LimitLongestSide(max_size=max_size))
        self.transforms.append(SigmoidForPred())

    def set_input_image(self, image):
        image_nd = image.astype("float32") / 255.0
        image_nd = image_nd.transpose((2, 0, 1))[np.newaxis]
        for transform in self.transforms:
            transform.reset()
        self.original_image = image_nd
        self.prev_prediction = np.zeros_like(self.original_image[:, :1, :, :])

    def get_prediction(self, clicker, prev_mask=None):
        clicks_list = clicker.get_clicks()
        input_image = self.original_image
        if prev_mask is None:
            prev_mask = self.prev_prediction
        if self.with_mask:
            input_image = np.concatenate([input_image, prev_mask], axis=1)

        image_nd, clicks_lists, is_image_changed = self.apply_transforms(input_image, [clicks_list])
        pred_logits = self._get_prediction(image_nd, clicks_lists)

        prediction = pred_logits
        for t in reversed(self.transforms):
            prediction = t.inv_transform(prediction)

        self.prev_prediction = prediction
        return prediction[0, 0]

    def _get_prediction(self, image_nd, clicks_lists):
        points_nd = self.get_points_nd(clicks_lists)

        input_names = self.predictor.get_input_names()
        image_handle = self.predictor.get_input_handle(input_names[0])
        points_handle = self.predictor.get_input_handle(input_names[1])

        image_handle.reshape(image_nd.shape)
        image_handle.copy_from_cpu(image_nd.astype("float32"))
        points_handle.reshape(points_nd.shape)
        points_handle.copy_from_cpu(points_nd.astype("int32"))

        self.predictor.run()
        output_names = self.predictor.get_output_names()
        output_handle = self.predictor.get_output_handle(output_names[0])
        return output_handle.copy_to_cpu()

    def apply_transforms(self, image_nd, clicks_lists):
        is_image_changed = False
        for t in self.transforms:
            image_nd, clicks_lists = t.transform(image_nd, clicks_lists)
            is_image_changed |= t.image_changed
        return image_nd, clicks_lists, is_image_changed

    def get_points_nd(self, clicks_lists):
        total_clicks = []
        num_pos_clicks = [sum(x.is_positive for x in clicks_list) for clicks_list in clicks_lists]
        num_neg_clicks = [len(clicks_list) - num_pos for clicks_list, num_pos in zip(clicks_lists, num_pos_clicks)]
        num_max_points = max(num_pos_clicks + num_neg_clicks)
        if self.net_clicks_limit is not None:
            num_max_points = min(self.net_clicks_limit, num_max_points)
        num_max_points = max(1, num_max_points)

        for clicks_list in clicks_lists:
            clicks_list = clicks_list[:self.net_clicks_limit]
            pos_clicks = [click.coords_and_indx for click in clicks_list if click.is_positive]
            pos_clicks = pos_clicks + (num_max_points - len(pos_clicks)) * [(-1, -1, -1)]

            neg_clicks = [click.coords_and_indx for click in clicks_list if not click.is_positive]
            neg_clicks = neg_clicks + (num_max_points - len(neg_clicks)) * [(-1, -1, -1)]
            total_clicks.append(pos_clicks + neg_clicks)

        return np.array(total_clicks)

    def get_states(self):
        return {"prev_prediction": self.prev_prediction.copy()}

    def set_states(self, states):
        self.prev_prediction = states["prev_prediction"]
