import math

import cv2
import numpy as np
import pretrainedmodels as pm
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

from ..utils.bbox import Toolbox
from .modules import shared_conv
from .modules.crnn import CRNN
from .keys import keys


class ROIRotate(nn.Module):
    """RoIRotate from FOTS: crops every (rotated) text region out of the shared
    feature map and warps it to a fixed height so the CRNN branch can read it.

    The affine matrices are computed on the host with OpenCV and then applied on
    the GPU with affine_grid + grid_sample (bilinear).
    """

    def __init__(self, height=8):
        '''
        :param height: height of feature map after affine transformation
        '''
        super().__init__()
        self.height = height

    def forward(self, feature_map, boxes, mapping):
        '''

        :param feature_map:  N * 128 * 128 * 32
        :param boxes: M * 8
        :param mapping: mapping for image
        :return: N * H * W * C
        '''

        max_width = 0
        boxes_width = []
        matrixes = []
        images = []

        for img_index, box in zip(mapping, boxes):
            feature = feature_map[img_index]  # B * H * W * C
            images.append(feature)

            x1, y1, x2, y2, x3, y3, x4, y4 = box / 4  # 521 -> 128

            # show_box(feature, box / 4, 'ffffff', isFeaturemap=True)

            rotated_rect = cv2.minAreaRect(np.array([[x1, y1], [x2, y2], [x3, y3], [x4, y4]]))
            box_w, box_h = rotated_rect[1][0], rotated_rect[1][1]

            width = feature.shape[2]
            height = feature.shape[1]

            if box_w <= box_h:
                box_w, box_h = box_h, box_w

            mapped_x1, mapped_y1 = (0, 0)
            mapped_x4, mapped_y4 = (0, self.height)

            width_box = math.ceil(self.height * box_w / box_h)
            width_box = min(width_box, width)  # not to exceed feature map's width
            max_width = width_box if width_box > max_width else max_width

            mapped_x2, mapped_y2 = (width_box, 0)

            src_pts = np.float32([(x1, y1), (x2, y2), (x4, y4)])
            dst_pts = np.float32([
                (mapped_x1, mapped_y1), (mapped_x2, mapped_y2), (mapped_x4, mapped_y4)
            ])

            affine_matrix = cv2.getAffineTransform(src_pts.astype(np.float32), dst_pts.astype(np.float32))
            affine_matrix = ROIRotate.param2theta(affine_matrix, width, height)

            affine_matrix *= 1e20  # cancel the error when type conversion
            affine_matrix = torch.tensor(affine_matrix, device=feature.device, dtype=torch.float)
            affine_matrix /= 1e20

            matrixes.append(affine_matrix)
            boxes_width.append(width_box)

        matrixes = torch.stack(matrixes)
        images = torch.stack(images)
        grid = nn.functional.affine_grid(matrixes, images.size())
        feature_rotated = nn.functional.grid_sample(images, grid)

        channels = feature_rotated.shape[1]
        cropped_images_padded = torch.zeros((len(feature_rotated), channels, self.height, max_width),
                                            dtype=feature_rotated.dtype,
                                            device=feature_rotated.device)

        for i in range(feature_rotated.shape[0]):
            w = boxes_width[i]
            if max_width == w:
                cropped_images_padded[i] = feature_rotated[i, :, 0:self.height, 0:w]
            else:
                padded_part = torch.zeros((channels, self.height, max_width - w),
                                          dtype=feature_rotated.dtype,
                                          device=feature_rotated.device)
                cropped_images_padded[i] = torch.cat([feature_rotated[i, :, 0:self.height, 0: w], padded_part], dim=-1)

        lengths = np.array(boxes_width)
        indices = np.argsort(lengths)  # sort images by its width cause pack padded tensor needs it
        indices = indices[::-1].copy()  # descending order
        lengths = lengths[indices]
        cropped_images_padded = cropped_images_padded[indices]

        return cropped_images_padded, lengths, indices

    @staticmethod
    def param2theta(param, w, h):
        param = np.vstack([param, [0, 0, 1]])
        param = np.linalg.inv(param)

        theta = np.zeros([2, 3])
        theta[0, 0] = param[0, 0]
        theta[0, 1] = param[0, 1] * h / w
        theta[0, 2] = param[0, 2] * 2 / w + theta[0, 0] + theta[0, 1] - 1
        theta[1, 0] = param[1, 0] * w / h
        theta[1, 1] = param[1, 1]
        theta[1, 2] = param[1, 2] * 2 / h + theta[1, 0] + theta[1, 1] - 1
        return theta


class RoIRotateLegacy(nn.Module):
    """Older per-box implementation kept for the ICDAR-2015 reproduction
    scripts (eval_legacy.py). Builds the theta batch directly as a CUDA tensor."""

    def __init__(self, height=8, expand_w=60):
        super().__init__()
        self.height = height
        self.expand_w = expand_w

    def forward(self, feature_map, boxes, mapping):
        n = len(boxes)
        theta = torch.cuda.FloatTensor(n, 2, 3).zero_()
        widths = []
        for i, (img_index, box) in enumerate(zip(mapping, boxes)):
            pts = np.asarray(box, dtype=np.float32).reshape(4, 2) / 4.0
            w = np.linalg.norm(pts[1] - pts[0])
            h = np.linalg.norm(pts[3] - pts[0])
            new_w = int(min(max(math.ceil(self.height * w / max(h, 1e-6)), 1), self.expand_w))
            widths.append(new_w)
            src = np.float32([pts[0], pts[1], pts[3]])
            dst = np.float32([(0, 0), (new_w, 0), (0, self.height)])
            m = cv2.getAffineTransform(src, dst)
            fh, fw = feature_map.shape[2], feature_map.shape[3]
            theta_np = ROIRotate.param2theta(m, fw, fh)
            theta[i] = torch.from_numpy(theta_np).float().cuda()

        feats = feature_map[torch.as_tensor(mapping, dtype=torch.long).cuda()]
        grid = F.affine_grid(theta, feats.size(), align_corners=False)
        rotated = F.grid_sample(feats, grid, mode='bilinear', align_corners=False)
        max_w = max(widths)
        out = rotated[:, :, :self.height, :max_w].contiguous()
        lengths = torch.IntTensor(widths)
        return out, lengths


class FOTSModel:

    def __init__(self, config):

        self.mode = config['model']['mode']

        bbNet = pm.__dict__['resnet50'](pretrained='imagenet')  # resnet50 in paper
        self.sharedConv = shared_conv.SharedConv(bbNet, config)

        nclass = len(keys) + 1
        self.recognizer = Recognizer(nclass, config)
        self.detector = Detector(config)
        self.roirotate = ROIRotate()

    def parallelize(self):
        self.sharedConv = torch.nn.DataParallel(self.sharedConv)
        self.recognizer = torch.nn.DataParallel(self.recognizer)
        self.detector = torch.nn.DataParallel(self.detector)
        # self.roirotate = torch.nn.DataParallel(self.roirotate)

    def to(self, device):
        self.sharedConv = self.sharedConv.to(device)
        self.detector = self.detector.to(device)
        self.recognizer = self.recognizer.to(device)

    def summary(self):
        self.sharedConv.summary()
        self.detector.summary()
        self.recognizer.summary()

    def optimize(self, optimizer_type, params):
        optimizer = getattr(optim, optimizer_type)(
            [
                {'params': self.sharedConv.parameters()},
                {'params': self.detector.parameters()},
                {'params': self.recognizer.parameters()},
            ],
            **params
        )
        return optimizer

    def train(self):
        self.sharedConv.train()
        self.detector.train()
        self.recognizer.train()

    def eval(self):
        self.sharedConv.eval()
        self.detector.eval()
        self.recognizer.eval()

    def state_dict(self):
        sd = {
            '0': self.sharedConv.state_dict(),
            '1': self.detector.state_dict(),
            '2': self.recognizer.state_dict()
        }
        return sd

    def load_state_dict(self, sd):
        self.sharedConv.load_state_dict(sd['0'])
        self.detector.load_state_dict(sd['1'])
        self.recognizer.load_state_dict(sd['2'])

    @property
    def training(self):
        return self.sharedConv.training and self.detector.training and self.recognizer.training

    def forward(self, *input):
        '''

        :param input:
        :return:
        '''
        image, boxes, mapping = input

        if image.is_cuda:
            device = image.get_device()
        else:
            device = torch.device('cpu')

        feature_map = self.sharedConv.forward(image)

        score_map, geo_map = self.detector(feature_map)

        if self.training:
            rois, lengths, indices = self.roirotate(feature_map, boxes[:, :8], mapping)
            pred_mapping = mapping
            pred_boxes = boxes
        else:
            score = score_map.permute(0, 2, 3, 1)
            geometry = geo_map.permute(0, 2, 3, 1)
            score = score.detach().cpu().numpy()
            geometry = geometry.detach().cpu().numpy()

            timer = {'net': 0, 'restore': 0, 'nms': 0}

            pred_boxes = []
            pred_mapping = []
            for i in range(score.shape[0]):
                s = score[i, :, :, 0]
                g = geometry[i, :, :, ]
                bb, _ = Toolbox.detect(score_map=s, geo_map=g, timer=timer)
                bb_size = bb.shape[0]

                if len(bb) > 0:
                    pred_mapping.append(np.array([i] * bb_size))
                    pred_boxes.append(bb)

            if len(pred_mapping) > 0:
                pred_boxes = np.concatenate(pred_boxes)
                pred_mapping = np.concatenate(pred_mapping)
                rois, lengths, indices = self.roirotate(feature_map, pred_boxes[:, :8], pred_mapping)
            else:
                return score_map, geo_map, (None, None), pred_boxes, pred_mapping, None

        lengths = torch.tensor(lengths).to(device)
        preds = self.recognizer(rois, lengths)
        preds = preds.permute(1, 0, 2)  # B, T, C -> T, B, C

        return score_map, geo_map, (preds, lengths), pred_boxes, pred_mapping, indices


class Recognizer(nn.Module):

    def __init__(self, nclass, config):
        super().__init__()
        self.crnn = CRNN(8, 32, nclass, 256)

    def forward(self, rois, lengths):
        return self.crnn(rois, lengths)


class Detector(nn.Module):

    def __init__(self, config):
        super().__init__()
        self.scoreMap = nn.Conv2d(32, 1, kernel_size=1)
        self.geoMap = nn.Conv2d(32, 4, kernel_size=1)
        self.angleMap = nn.Conv2d(32, 1, kernel_size=1)

    def forward(self, *input):
        final, = input

        score = self.scoreMap(final)
        score = torch.sigmoid(score)

        geoMap = self.geoMap(final)
        # 出来的是 normalise 到 0 -1 的值是到上下左右的距离，但是图像他都缩放到  512 * 512 了，但是 gt 里是算的绝对数值来的
        geoMap = torch.sigmoid(geoMap) * 512

        angleMap = self.angleMap(final)
        angleMap = (torch.sigmoid(angleMap) - 0.5) * math.pi / 2

        geometry = torch.cat([geoMap, angleMap], dim=1)

        return score, geometry
