import os
import os.path as osp
import time
import sys

import cv2
import numpy as np
import torch
from loguru import logger

sys.path.append(os.path.abspath('.') + "/demo/libs/")
from yolox.data.data_augment import preproc
from yolox.exp import get_exp
from yolox.utils import fuse_model, get_model_info, postprocess
from yolox.utils.visualize import plot_tracking, plot_track
from yolox.tracker.byte_tracker import BYTETracker
from yolox.tracking_utils.timer import Timer

# ByteTrack (YOLOX-x, MOT17 mix) is used to produce per-person tracklets
# that are later cut into silhouettes for gait recognition.
track_cfgs = {
    "exp_file": "./demo/checkpoints/bytetrack_model/yolox_x_mix_det.py",
    "ckpt": "./demo/checkpoints/bytetrack_model/bytetrack_x_mot17.pth.tar",
    "fps": 30,
    "track_thresh": 0.5,
    "track_buffer": 30,
    "match_thresh": 0.8,
    "aspect_ratio_thresh": 1.6,
    "min_box_area": 10,
    "mot20": False,
}

exp = get_exp(track_cfgs["exp_file"], None)
exp.test_conf = 0.1
exp.nmsthre = 0.7
exp.test_size = (800, 1440)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
fp16 = True


class Predictor(object):
    def __init__(
        self,
        model,
        exp,
        trt_file=None,
        decoder=None,
        device=torch.device("cpu"),
        fp16=False
    ):
        self.model = model
        self.decoder = decoder
        self.num_classes = exp.num_classes
        self.confthre = exp.test_conf
        self.nmsthre = exp.nmsthre
        self.test_size = exp.test_size
        self.device = device
        self.fp16 = fp16
        if trt_file is not None:
            from torch2trt import TRTModule

            model_trt = TRTModule()
            model_trt.load_state_dict(torch.load(trt_file))

            x = torch.ones((1, 3, exp.test_size[0], exp.test_size[1]), device=device)
            self.model(x)
            self.model = model_trt
        self.rgb_means = (0.485, 0.456, 0.406)
        self.std = (0.229, 0.224, 0.225)

    def inference(self, img, timer):
        img_info = {"id": 0}
        if isinstance(img, str):
            img_info["file_name"] = osp.basename(img)
            img = cv2.imread(img)
        else:
            img_info["file_name"] = None

        height, width = img.shape[:2]
        img_info["height"] = height
        img_info["width"] = width
        img_info["raw_img"] = img

        img, ratio = preproc(img, self.test_size, self.rgb_means, self.std)
        img_info["ratio"] = ratio
        img = torch.from_numpy(img).unsqueeze(0).float().to(self.device)
        if self.fp16:
            img = img.half()  # to FP16

        with torch.no_grad():
            timer.tic()
            outputs = self.model(img)
            if self.decoder is not None:
                outputs = self.decoder(outputs, dtype=outputs.type())
            outputs = postprocess(
                outputs, self.num_classes, self.confthre, self.nmsthre
            )
        return outputs, img_info


def loadckpt():
    model = exp.get_model().to(device)
    logger.info("Model Summary: {}".format(get_model_info(model, exp.test_size)))
    model.eval()
    ckpt_file = track_cfgs["ckpt"]
    logger.info("loading checkpoint")
    ckpt = torch.load(ckpt_file, map_location="cpu")
    # load the model state dict
    model.load_state_dict(ckpt["model"])
    logger.info("loaded checkpoint done.")
    model = fuse_model(model)
    if fp16:
        model = model.half()  # to FP16
    trt_file = None
    decoder = None
    predictor = Predictor(model, exp, trt_file, decoder, device, fp16)
    return predictor


class TrackArgs:
    def __init__(self, cfgs):
        self.track_thresh = cfgs["track_thresh"]
        self.track_buffer = cfgs["track_buffer"]
        self.match_thresh = cfgs["match_thresh"]
        self.aspect_ratio_thresh = cfgs["aspect_ratio_thresh"]
        self.min_box_area = cfgs["min_box_area"]
        self.mot20 = cfgs["mot20"]


def track(video_path, video_save_folder):
    """Run ByteTrack over a video and return {track_id: [[frame_id, tlwh], ...]}."""
    predictor = loadckpt()
    cap = cv2.VideoCapture(video_path)
    width = cap.get(cv2.CAP_PROP_FRAME_WIDTH)  # float
    height = cap.get(cv2.CAP_PROP_FRAME_HEIGHT)  # float
    fps = cap.get(cv2.CAP_PROP_FPS)
    os.makedirs(video_save_folder, exist_ok=True)
    save_video_name = video_path.split("/")[-1]
    save_video_path = osp.join(video_save_folder, save_video_name)
    logger.info(f"video save_path is {save_video_path}")
    vid_writer = cv2.VideoWriter(
        save_video_path, cv2.VideoWriter_fourcc(*"mp4v"), fps, (int(width), int(height))
    )
    tracker = BYTETracker(TrackArgs(track_cfgs), frame_rate=track_cfgs["fps"])
    timer = Timer()
    frame_id = 0
    results = []
    track_results = {}
    while True:
        if frame_id % 20 == 0:
            logger.info('Processing frame {} ({:.2f} fps)'.format(frame_id, 1. / max(1e-5, timer.average_time)))
        ret_val, frame = cap.read()
        if not ret_val:
            break
        outputs, img_info = predictor.inference(frame, timer)
        if outputs[0] is not None:
            online_targets = tracker.update(outputs[0], [img_info['height'], img_info['width']], exp.test_size)
            online_tlwhs = []
            online_ids = []
            online_scores = []
            for t in online_targets:
                tlwh = t.tlwh
                tid = t.track_id
                vertical = tlwh[2] / tlwh[3] > track_cfgs["aspect_ratio_thresh"]
                if tlwh[2] * tlwh[3] > track_cfgs["min_box_area"] and not vertical:
                    online_tlwhs.append(tlwh)
                    online_ids.append(tid)
                    online_scores.append(t.score)
                    track_results.setdefault(tid, []).append([frame_id, *tlwh])
                    results.append(
                        f"{frame_id},{tid},{tlwh[0]:.2f},{tlwh[1]:.2f},{tlwh[2]:.2f},{tlwh[3]:.2f},{t.score:.2f},-1,-1,-1\n"
                    )
            timer.toc()
            online_im = plot_tracking(
                img_info['raw_img'], online_tlwhs, online_ids, frame_id=frame_id + 1, fps=1. / timer.average_time
            )
        else:
            timer.toc()
            online_im = img_info['raw_img']
        vid_writer.write(online_im)
        frame_id += 1
    cap.release()
    vid_writer.release()
    return track_results
