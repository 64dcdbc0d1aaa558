"""
STARK-Lightning tracker running the exported ONNX graphs with onnxruntime (optionally the TensorRT EP).

The network is split into two graphs:
    backbone_bottleneck_pe.onnx  : template branch (run once per sequence)
    complete.onnx                : search branch + transformer + corner head (run every frame)
Both were exported by tracking/ORT_lightning_X_trt.py.
"""
import os

import cv2
import numpy as np
import onnxruntime
import torch

from lib.test.tracker.basetracker import BaseTracker
from lib.test.tracker.stark_utils import PreprocessorX_onnx
from lib.train.data.processing_utils import sample_target
from lib.utils.box_ops import clip_box


def get_providers(use_trt=False, gpu_id=0, fp16=True):
    """Execution providers in priority order for onnxruntime-gpu."""
    cuda_options = {
        "device_id": gpu_id,
        "arena_extend_strategy": "kNextPowerOfTwo",
        "cudnn_conv_algo_search": "EXHAUSTIVE",
        "do_copy_in_default_stream": True,
    }
    providers = [("CUDAExecutionProvider", cuda_options), "CPUExecutionProvider"]
    if use_trt:
        trt_options = {
            "device_id": gpu_id,
            "trt_fp16_enable": fp16,
            "trt_engine_cache_enable": True,
            "trt_engine_cache_path": "./trt_cache",
        }
        providers.insert(0, ("TensorrtExecutionProvider", trt_options))
    return providers


class STARK_LightningXtrt(BaseTracker):
    def __init__(self, params, dataset_name):
        super(STARK_LightningXtrt, self).__init__(params)
        self.use_trt = getattr(params, "use_trt", False)
        gpu_id = int(os.environ.get("LOCAL_RANK", 0))
        providers = get_providers(self.use_trt, gpu_id)

        sess_options = onnxruntime.SessionOptions()
        sess_options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.ort_sess_z = onnxruntime.InferenceSession("backbone_bottleneck_pe.onnx", sess_options,
                                                       providers=providers)
        self.ort_sess_x = onnxruntime.InferenceSession("complete.onnx", sess_options,
                                                       providers=providers)
        if "CUDAExecutionProvider" not in self.ort_sess_x.get_providers():
            print("WARNING: onnxruntime fell back to %s" % self.ort_sess_x.get_providers())

        self.preprocessor = PreprocessorX_onnx()
        self.state = None
        # for debug
        self.debug = False
        self.frame_id = 0
        if self.debug:
            self.save_dir = "debug"
            if not os.path.exists(self.save_dir):
                os.makedirs(self.save_dir)
        self.ort_outs_z = []

        # io binding keeps the template features on the device between frames
        self.io_binding = self.ort_sess_x.io_binding()
        self.device_type = "cuda"

    def initialize(self, image, info: dict):
        # forward the template once
        z_patch_arr, _, z_amask_arr = sample_target(image, info['init_bbox'], self.params.template_factor,
                                                    output_sz=self.params.template_size)
        template, template_mask = self.preprocessor.process(z_patch_arr, z_amask_arr)
        # forward the template once
        ort_inputs = {'img_z': template, 'mask_z': template_mask}
        self.ort_outs_z = self.ort_sess_z.run(None, ort_inputs)

        # keep the template memory on the GPU so that every frame re-uses it without a host copy
        self.feat_z = onnxruntime.OrtValue.ortvalue_from_numpy(self.ort_outs_z[0], self.device_type, 0)
        self.mask_z = onnxruntime.OrtValue.ortvalue_from_numpy(self.ort_outs_z[1], self.device_type, 0)
        self.pos_z = onnxruntime.OrtValue.ortvalue_from_numpy(self.ort_outs_z[2], self.device_type, 0)

        # save states
        self.state = info['init_bbox']
        self.frame_id = 0

    def track(self, image, info: dict = None):
        H, W, _ = image.shape
        self.frame_id += 1
        x_patch_arr, resize_factor, x_amask_arr = sample_target(image, self.state, self.params.search_factor,
                                                                output_sz=self.params.search_size)  # (x1, y1, w, h)
        search, search_mask = self.preprocessor.process(x_patch_arr, x_amask_arr)

        self.io_binding.bind_cpu_input('img_x', search)
        self.io_binding.bind_cpu_input('mask_x', search_mask)
        self.io_binding.bind_ortvalue_input('feat_vec_z', self.feat_z)
        self.io_binding.bind_ortvalue_input('mask_vec_z', self.mask_z)
        self.io_binding.bind_ortvalue_input('pos_vec_z', self.pos_z)
        self.io_binding.bind_output('outputs_coord')
        self.ort_sess_x.run_with_iobinding(self.io_binding)
        outputs_coord = self.io_binding.copy_outputs_to_cpu()[0]

        pred_boxes = torch.from_numpy(outputs_coord).view(-1, 4)
        # Baseline: Take the mean of all pred boxes as the final result
        pred_box = (pred_boxes.mean(dim=0) * self.params.search_size / resize_factor).tolist()  # (cx, cy, w, h) [0,1]
        # get the final box result
        self.state = clip_box(self.map_box_back(pred_box, resize_factor), H, W, margin=10)

        # for debug
        if self.debug:
            x1, y1, w, h = self.state
            image_BGR = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
            cv2.rectangle(image_BGR, (int(x1), int(y1)), (int(x1 + w), int(y1 + h)), color=(0, 0, 255), thickness=2)
            save_path = os.path.join(self.save_dir, "%04d.jpg" % self.frame_id)
            cv2.imwrite(save_path, image_BGR)
        return {"target_bbox": self.state}

    def map_box_back(self, pred_box: list, resize_factor: float):
        cx_prev, cy_prev = self.state[0] + 0.5 * self.state[2], self.state[1] + 0.5 * self.state[3]
        cx, cy, w, h = pred_box
        half_side = 0.5 * self.params.search_size / resize_factor
        cx_real = cx + (cx_prev - half_side)
        cy_real = cy + (cy_prev - half_side)
        return [cx_real - 0.5 * w, cy_real - 0.5 * h, w, h]


def get_tracker_class():
    return STARK_LightningXtrt
