"""Detect and crop faces for gaze / head-pose datasets with RetinaFace.

Based on biubug6/Pytorch_Retinaface detect.py; writes one crop per detected
face plus a CSV with boxes and the 5 landmarks.

    python retinaface/detect.py --network resnet50 -m weights/Resnet50_Final.pth \
        --input_dir data/frames --output_dir data/faces
"""
from __future__ import print_function
import os
import csv
import glob
import argparse
import time

import numpy as np
import cv2
import torch
import torch.backends.cudnn as cudnn
import torchvision

from data import cfg_mnet, cfg_re50
from layers.functions.prior_box import PriorBox
from utils.nms.py_cpu_nms import py_cpu_nms
from models.retinaface import RetinaFace
from utils.box_utils import decode, decode_landm
from utils.timer import Timer

parser = argparse.ArgumentParser(description='Retinaface')

parser.add_argument('-m', '--trained_model', default='./weights/Resnet50_Final.pth',
                    type=str, help='Trained state_dict file path to open')
parser.add_argument('--network', default='resnet50', help='Backbone network mobile0.25 or resnet50')
parser.add_argument('--cpu', action="store_true", default=False, help='Use cpu inference')
parser.add_argument('--gpu_nms', action="store_true", default=False, help='run NMS on the GPU with torchvision')
parser.add_argument('--confidence_threshold', default=0.02, type=float, help='confidence_threshold')
parser.add_argument('--top_k', default=5000, type=int, help='top_k')
parser.add_argument('--nms_threshold', default=0.4, type=float, help='nms_threshold')
parser.add_argument('--keep_top_k', default=750, type=int, help='keep_top_k')
parser.add_argument('--vis_thres', default=0.6, type=float, help='visualization_threshold')
parser.add_argument('--input_dir', default='./data/frames', type=str)
parser.add_argument('--output_dir', default='./data/faces', type=str)
parser.add_argument('--margin', default=0.2, type=float, help='relative margin added around each box')
parser.add_argument('--crop_size', default=224, type=int)
args = parser.parse_args()


def check_keys(model, pretrained_state_dict):
    ckpt_keys = set(pretrained_state_dict.keys())
    model_keys = set(model.state_dict().keys())
    used_pretrained_keys = model_keys & ckpt_keys
    unused_pretrained_keys = ckpt_keys - model_keys
    missing_keys = model_keys - ckpt_keys
    print('Missing keys:{}'.format(len(missing_keys)))
    print('Unused checkpoint keys:{}'.format(len(unused_pretrained_keys)))
    print('Used keys:{}'.format(len(used_pretrained_keys)))
    assert len(used_pretrained_keys) > 0, 'load NONE from pretrained checkpoint'
    return True


def remove_prefix(state_dict, prefix):
    ''' Old style model is stored with all names of parameters sharing common prefix 'module.' '''
    print('remove prefix \'{}\''.format(prefix))
    f = lambda x: x.split(prefix, 1)[-1] if x.startswith(prefix) else x
    return {f(key): value for key, value in state_dict.items()}


def load_model(model, pretrained_path, load_to_cpu):
    print('Loading pretrained model from {}'.format(pretrained_path))
    if load_to_cpu:
        pretrained_dict = torch.load(pretrained_path, map_location=lambda storage, loc: storage)
    else:
        device = torch.cuda.current_device()
        pretrained_dict = torch.load(pretrained_path, map_location=lambda storage, loc: storage.cuda(device))
    if "state_dict" in pretrained_dict.keys():
        pretrained_dict = remove_prefix(pretrained_dict['state_dict'], 'module.')
    else:
        pretrained_dict = remove_prefix(pretrained_dict, 'module.')
    check_keys(model, pretrained_dict)
    model.load_state_dict(pretrained_dict, strict=False)
    return model


def expand_box(b, w, h, margin):
    bw, bh = b[2] - b[0], b[3] - b[1]
    x1 = max(0, int(b[0] - margin * bw))
    y1 = max(0, int(b[1] - margin * bh))
    x2 = min(w, int(b[2] + margin * bw))
    y2 = min(h, int(b[3] + margin * bh))
    return x1, y1, x2, y2


def detect_one(net, img_raw, cfg, device, resize=1):
    img = np.float32(img_raw)

    im_height, im_width, _ = img.shape
    scale = torch.Tensor([img.shape[1], img.shape[0], img.shape[1], img.shape[0]])
    img -= (104, 117, 123)
    img = img.transpose(2, 0, 1)
    img = torch.from_numpy(img).unsqueeze(0)
    img = img.to(device)
    scale = scale.to(device)

    loc, conf, landms = net(img)  # forward pass

    priorbox = PriorBox(cfg, image_size=(im_height, im_width))
    priors = priorbox.forward()
    priors = priors.to(device)
    prior_data = priors.data
    boxes = decode(loc.data.squeeze(0), prior_data, cfg['variance'])
    boxes = boxes * scale / resize
    scores_t = conf.squeeze(0).data[:, 1]
    landms = decode_landm(landms.data.squeeze(0), prior_data, cfg['variance'])
    scale1 = torch.Tensor([img.shape[3], img.shape[2], img.shape[3], img.shape[2],
                           img.shape[3], img.shape[2], img.shape[3], img.shape[2],
                           img.shape[3], img.shape[2]])
    scale1 = scale1.to(device)
    landms = landms * scale1 / resize

    # ignore low scores
    inds = torch.where(scores_t > args.confidence_threshold)[0]
    boxes, landms, scores_t = boxes[inds], landms[inds], scores_t[inds]

    # keep top-K before NMS
    order = scores_t.argsort(descending=True)[:args.top_k]
    boxes, landms, scores_t = boxes[order], landms[order], scores_t[order]

    # do NMS
    if args.gpu_nms and boxes.is_cuda:
        keep = torchvision.ops.nms(boxes, scores_t, args.nms_threshold).cpu().numpy()
        boxes, landms, scores = boxes.cpu().numpy(), landms.cpu().numpy(), scores_t.cpu().numpy()
        dets = np.hstack((boxes, scores[:, np.newaxis])).astype(np.float32, copy=False)
    else:
        boxes, landms, scores = boxes.cpu().numpy(), landms.cpu().numpy(), scores_t.cpu().numpy()
        dets = np.hstack((boxes, scores[:, np.newaxis])).astype(np.float32, copy=False)
        keep = py_cpu_nms(dets, args.nms_threshold)
    dets = dets[keep, :]
    landms = landms[keep]

    # keep top-K faster NMS
    dets = dets[:args.keep_top_k, :]
    landms = landms[:args.keep_top_k, :]

    return np.concatenate((dets, landms), axis=1)


if __name__ == '__main__':
    torch.set_grad_enabled(False)
    cfg = None
    if args.network == "mobile0.25":
        cfg = cfg_mnet
    elif args.network == "resnet50":
        cfg = cfg_re50
    # net and model
    net = RetinaFace(cfg=cfg, phase='test')
    net = load_model(net, args.trained_model, args.cpu)
    net.eval()
    print('Finished loading model!')
    cudnn.benchmark = True
    device = torch.device("cpu" if args.cpu else "cuda")
    net = net.to(device)

    os.makedirs(args.output_dir, exist_ok=True)
    files = sorted(glob.glob(os.path.join(args.input_dir, '*.jpg')) + glob.glob(os.path.join(args.input_dir, '*.png')))
    _t = {'forward_pass': Timer(), 'misc': Timer()}

    with open(os.path.join(args.output_dir, 'faces.csv'), 'w', newline='') as fcsv:
        writer = csv.writer(fcsv)
        writer.writerow(['image', 'face_id', 'x1', 'y1', 'x2', 'y2', 'score'] +
                        ['lm%d_%s' % (i, c) for i in range(5) for c in 'xy'])
        for i, image_path in enumerate(files):
            img_raw = cv2.imread(image_path, cv2.IMREAD_COLOR)
            h, w = img_raw.shape[:2]

            _t['forward_pass'].tic()
            dets = detect_one(net, img_raw, cfg, device)
            if device.type == 'cuda':
                torch.cuda.synchronize()
            _t['forward_pass'].toc()

            _t['misc'].tic()
            stem = os.path.splitext(os.path.basename(image_path))[0]
            n = 0
            for b in dets:
                if b[4] < args.vis_thres:
                    continue
                x1, y1, x2, y2 = expand_box(b, w, h, args.margin)
                crop = cv2.resize(img_raw[y1:y2, x1:x2], (args.crop_size, args.crop_size))
                cv2.imwrite(os.path.join(args.output_dir, '%s_%02d.jpg' % (stem, n)), crop)
                writer.writerow([os.path.basename(image_path), n] + [float(v) for v in b[:4]] +
                                [float(b[4])] + [float(v) for v in b[5:15]])
                n += 1
            _t['misc'].toc()

            if i % 50 == 0:
                print('im_detect: {:d}/{:d} forward_pass_time: {:.4f}s misc: {:.4f}s'.format(
                    i + 1, len(files), _t['forward_pass'].average_time, _t['misc'].average_time))
