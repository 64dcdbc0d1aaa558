# Copyright (c) Facebook, Inc. and its affiliates.

import os, sys
import os.path as osp
import numpy as np
import cv2
import torch
import torchvision.transforms as transforms
from PIL import Image

import mocap_utils.general_utils as gnu

# Type 1: 3rd person view hand detector (hand-only detector trained on 100DOH, detectron2 based)
from detectron2.config import get_cfg
from detectron2.engine import DefaultPredictor

# Type 2: Ego-centric hand detector
# Code from https://github.com/ddshan/hand_object_detector
sys.path.append("detectors/hand_object_detector/lib")
from model.utils.config import cfg as cfgg
from model.rpn.bbox_transform import clip_boxes
from model.roi_layers import nms  # might raise segmentation fault at the end of program
from model.rpn.bbox_transform import bbox_transform_inv
from model.faster_rcnn.resnet import resnet

# Body pose estimator used to find the wrists (lightweight openpose)
sys.path.append("detectors/body_pose_estimator")
from pose2d_models.with_mobilenet import PoseEstimationWithMobileNet
from modules.load_state import load_state
from val import normalize, pad_width
from modules.pose import Pose, track_poses
from modules.keypoints import extract_keypoints, group_keypoints


class BodyPoseEstimator(object):
    """
    Hand Detector for third-view input.
    It combines a body pose estimator (https://github.com/jhugestar/lightweight-human-pose-estimation.pytorch.git)
    """
    def __init__(self):
        print("Loading Body Pose Estimator")
        self.__load_body_estimator()

    def __load_body_estimator(self):
        net = PoseEstimationWithMobileNet()
        pose2d_checkpoint = "./extra_data/body_module/pretrained_weights/body_pose_estimator/checkpoint_iter_370000.pth"
        checkpoint = torch.load(pose2d_checkpoint, map_location='cpu')
        load_state(net, checkpoint)
        net = net.eval()
        net = net.cuda()
        self.model = net

    #Code from https://github.com/Daniil-Osokin/lightweight-human-pose-estimation.pytorch/demo.py
    def __infer_fast(self, img, input_height_size, stride, upsample_ratio,
                     cpu=False, pad_value=(0, 0, 0), img_mean=(128, 128, 128), img_scale=1 / 256):
        height, width, _ = img.shape
        scale = input_height_size / height

        scaled_img = cv2.resize(img, (0, 0), fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
        scaled_img = normalize(scaled_img, img_mean, img_scale)
        min_dims = [input_height_size, max(scaled_img.shape[1], input_height_size)]
        padded_img, pad = pad_width(scaled_img, stride, pad_value, min_dims)

        tensor_img = torch.from_numpy(padded_img).permute(2, 0, 1).unsqueeze(0).float()
        if not cpu:
            tensor_img = tensor_img.cuda()

        stages_output = self.model(tensor_img)

        stage2_heatmaps = stages_output[-2]
        heatmaps = np.transpose(stage2_heatmaps.squeeze().cpu().data.numpy(), (1, 2, 0))
        heatmaps = cv2.resize(heatmaps, (0, 0), fx=upsample_ratio, fy=upsample_ratio, interpolation=cv2.INTER_CUBIC)

        stage2_pafs = stages_output[-1]
        pafs = np.transpose(stage2_pafs.squeeze().cpu().data.numpy(), (1, 2, 0))
        pafs = cv2.resize(pafs, (0, 0), fx=upsample_ratio, fy=upsample_ratio, interpolation=cv2.INTER_CUBIC)

        return heatmaps, pafs, scale, pad

    def detect_body_pose(self, img):
        """
        Output:
            current_bbox: BBOX_XYWH
        """
        stride = 8
        upsample_ratio = 4
        orig_img = img.copy()

        # forward
        heatmaps, pafs, scale, pad = self.__infer_fast(img, 256, stride, upsample_ratio)

        total_keypoints_num = 0
        all_keypoints_by_type = []
        num_keypoints = Pose.num_kpts
        for kpt_idx in range(num_keypoints):  # 19th for bg
            total_keypoints_num += extract_keypoints(heatmaps[:, :, kpt_idx], all_keypoints_by_type, total_keypoints_num)

        pose_entries, all_keypoints = group_keypoints(all_keypoints_by_type, pafs, demo=True)
        for kpt_id in range(all_keypoints.shape[0]):
            all_keypoints[kpt_id, 0] = (all_keypoints[kpt_id, 0] * stride / upsample_ratio - pad[1]) / scale
            all_keypoints[kpt_id, 1] = (all_keypoints[kpt_id, 1] * stride / upsample_ratio - pad[0]) / scale

        '''
        # print(len(pose_entries))
        if len(pose_entries)>1:
            pose_entries = pose_entries[:1]
            print("We only support one person currently")
            # assert len(pose_entries) == 1, "We only support one person currently"
        '''

        current_poses, current_bbox = list(), list()
        for n in range(len(pose_entries)):
            if len(pose_entries[n]) == 0:
                continue
            pose_keypoints = np.ones((num_keypoints, 2), dtype=np.int32) * -1
            for kpt_id in range(num_keypoints):
                if pose_entries[n][kpt_id] != -1.0:  # keypoint was found
                    pose_keypoints[kpt_id, 0] = int(all_keypoints[int(pose_entries[n][kpt_id]), 0])
                    pose_keypoints[kpt_id, 1] = int(all_keypoints[int(pose_entries[n][kpt_id]), 1])
            pose = Pose(pose_keypoints, pose_entries[n][18])
            current_poses.append(pose.keypoints)
            current_bbox.append(np.array(pose.bbox))

        # enlarge the bbox
        for i, bbox in enumerate(current_bbox):
            x, y, w, h = bbox
            margin = 0.05
            x_margin = int(w * margin)
            y_margin = int(h * margin)
            x0 = max(x - x_margin, 0)
            y0 = max(y - y_margin, 0)
            x1 = min(x + w + x_margin, orig_img.shape[1])
            y1 = min(y + h + y_margin, orig_img.shape[0])
            current_bbox[i] = np.array((x0, y0, x1 - x0, y1 - y0)).astype(np.int32)

        return current_poses, current_bbox


class Third_View_Detector(BodyPoseEstimator):
    """
    Hand Detector for third-view input.
    It combines a body pose estimator (https://github.com/jhugestar/lightweight-human-pose-estimation.pytorch.git)
    and a type-agnostic hand detector (https://github.com/ddshan/hand_detector.d2)
    """
    def __init__(self):
        super(Third_View_Detector, self).__init__()
        print("Loading Third View Hand Detector")
        self.__load_hand_detector()

    def __load_hand_detector(self):
        # load cfg and model
        cfg = get_cfg()
        cfg.merge_from_file("detectors/hand_only_detector/faster_rcnn_X_101_32x8d_FPN_3x_100DOH.yaml")
        cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = 0.3  # 0.3 , use low thresh to increase recall
        cfg.MODEL.WEIGHTS = 'extra_data/hand_module/hand_detector/model_0529999.pth'
        self.hand_detector = DefaultPredictor(cfg)

    def __get_raw_hand_bbox(self, img):
        bbox_tensor = self.hand_detector(img)['instances'].pred_boxes
        bboxes = bbox_tensor.tensor.cpu().numpy()
        return bboxes

    def detect_hand_bbox(self, img):
        '''
        output:
            body_bbox: [min_x, min_y, width, height]
            hand_bbox: [x0, y0, x1, y1]
        Note:
            len(body_bbox) == len(hand_bbox), where hand_bbox can be None if not valid
        '''
        # get body pose
        body_pose_list, body_bbox_list = self.detect_body_pose(img)
        # assert len(body_pose_list) == 1, "Current version only supports one person"

        # get raw hand bboxes
        raw_hand_bboxes = self.__get_raw_hand_bbox(img)
        hand_bbox_list = [None, ] * len(body_pose_list)
        num_bbox = raw_hand_bboxes.shape[0]

        if num_bbox > 0:
            for idx, body_pose in enumerate(body_pose_list):
                # By default, we use distance to ankle to distinguish left/right,
                # if ankle is unavailable, use elbow, then use shoulder.
                # The joints used by two arms should exactly the same)
                dist_left_arm = np.ones((num_bbox,)) * float('inf')
                dist_right_arm = np.ones((num_bbox,)) * float('inf')
                hand_bboxes = dict(
                    left_hand=None,
                    right_hand=None
                )
                # left arm
                if body_pose[7][0] > 0 and body_pose[6][0] > 0:
                    # distance between elbow and wrist
                    dist_wrist_elbow = np.linalg.norm(body_pose[7] - body_pose[6])
                    for i in range(num_bbox):
                        bbox = raw_hand_bboxes[i]
                        c_x = (bbox[0] + bbox[2]) / 2
                        c_y = (bbox[1] + bbox[3]) / 2
                        center = np.array([c_x, c_y])
                        dist_bbox_ankle = np.linalg.norm(center - body_pose[7])
                        if dist_bbox_ankle < dist_wrist_elbow * 1.5:
                            dist_left_arm[i] = np.linalg.norm(center - body_pose[7])
                # right arm
                if body_pose[4][0] > 0 and body_pose[3][0] > 0:
                    # distance between elbow and wrist
                    dist_wrist_elbow = np.linalg.norm(body_pose[3] - body_pose[4])
                    for i in range(num_bbox):
                        bbox = raw_hand_bboxes[i]
                        c_x = (bbox[0] + bbox[2]) / 2
                        c_y = (bbox[1] + bbox[3]) / 2
                        center = np.array([c_x, c_y])
                        dist_bbox_ankle = np.linalg.norm(center - body_pose[4])
                        if dist_bbox_ankle < dist_wrist_elbow * 1.5:
                            dist_right_arm[i] = np.linalg.norm(center - body_pose[4])

                # assign bboxes
                # hand_bboxes = dict()
                left_id = np.argmin(dist_left_arm)
                right_id = np.argmin(dist_right_arm)

                if dist_left_arm[left_id] < float('inf'):
                    hand_bboxes['left_hand'] = raw_hand_bboxes[left_id].copy()
                if dist_right_arm[right_id] < float('inf'):
                    hand_bboxes['right_hand'] = raw_hand_bboxes[right_id].copy()

                hand_bbox_list[idx] = hand_bboxes

        assert len(body_bbox_list) == len(hand_bbox_list)
        return body_pose_list, body_bbox_list, hand_bbox_list, raw_hand_bboxes


class Ego_Centric_Detector(BodyPoseEstimator):
    """
    Hand Detector for ego-centric input.
    It uses type-aware hand detector:
    (https://github.com/ddshan/hand_object_detector)
    """
    def __init__(self):
        super(Ego_Centric_Detector, self).__init__()
        print("Loading Ego Centric Hand Detector")
        self.__load_hand_detector()

    # part of the code comes from https://github.com/ddshan/hand_object_detector
    def __load_hand_detector(self):
        classes = np.asarray(['__background__', 'targetobject', 'hand'])
        fasterRCNN = resnet(classes, 101, pretrained=False, class_agnostic=False)
        fasterRCNN.create_architecture()
        self.classes = classes

        checkpoint_path = "extra_data/hand_module/hand_detector/faster_rcnn_1_8_132028.pth"
        checkpoint = torch.load(checkpoint_path)
        assert osp.exists(checkpoint_path), "Hand checkpoint does not exist"
        fasterRCNN.load_state_dict(checkpoint['model'])
        if 'pooling_mode' in checkpoint.keys():
            cfgg.POOLING_MODE = checkpoint['pooling_mode']
        # the vendored faster-rcnn reads this flag to decide where its anchors live
        cfgg.CUDA = True

        fasterRCNN.cuda()
        fasterRCNN.eval()
        self.hand_detector = fasterRCNN

    def __get_image_blob(self, im):
        """
        Converts an image into a network input.
        Arguments:
          im (ndarray): a color image in BGR order
        Returns:
          blob (ndarray): a data blob holding an image pyramid
          im_scale_factors (list): list of image scales (relative to im) used
            in the image pyramid
        """
        im_orig = im.astype(np.float32, copy=True)
        im_orig -= cfgg.PIXEL_MEANS

        im_shape = im_orig.shape
        im_size_min = np.min(im_shape[0:2])
        im_size_max = np.max(im_shape[0:2])

        processed_ims = []
        im_scale_factors = []

        for target_size in cfgg.TEST.SCALES:
            im_scale = float(target_size) / float(im_size_min)
            # Prevent the biggest axis from being more than MAX_SIZE
            if np.round(im_scale * im_size_max) > cfgg.TEST.MAX_SIZE:
                im_scale = float(cfgg.TEST.MAX_SIZE) / float(im_size_max)
            im = cv2.resize(im_orig, None, None, fx=im_scale, fy=im_scale, interpolation=cv2.INTER_LINEAR)
            im_scale_factors.append(im_scale)
            processed_ims.append(im)

        # Create a blob to hold the input images
        max_shape = np.array([im.shape for im in processed_ims]).max(axis=0)
        num_images = len(processed_ims)
        blob = np.zeros((num_images, max_shape[0], max_shape[1], 3), dtype=np.float32)
        for i in range(num_images):
            im = processed_ims[i]
            blob[i, 0:im.shape[0], 0:im.shape[1], :] = im

        return blob, np.array(im_scale_factors)

    def __get_raw_hand_bbox(self, img):
        with torch.no_grad():
            im_data = torch.FloatTensor(1).cuda()
            im_info = torch.FloatTensor(1).cuda()
            num_boxes = torch.LongTensor(1).cuda()
            gt_boxes = torch.FloatTensor(1).cuda()
            box_info = torch.FloatTensor(1)

            im_blob, im_scales = self.__get_image_blob(img)
            im_info_np = np.array([[im_blob.shape[1], im_blob.shape[2], im_scales[0]]], dtype=np.float32)
            im_data_pt = torch.from_numpy(im_blob).permute(0, 3, 1, 2)
            im_info_pt = torch.from_numpy(im_info_np)

            im_data.resize_(im_data_pt.size()).copy_(im_data_pt)
            im_info.resize_(im_info_pt.size()).copy_(im_info_pt)
            gt_boxes.resize_(1, 1, 5).zero_()
            num_boxes.resize_(1).zero_()
            box_info.resize_(1, 1, 5).zero_()

            rois, cls_prob, bbox_pred, \
                rpn_loss_cls, rpn_loss_box, \
                RCNN_loss_cls, RCNN_loss_bbox, \
                rois_label, loss_list = self.hand_detector(im_data, im_info, gt_boxes, num_boxes, box_info)

            scores = cls_prob.data
            boxes = rois.data[:, :, 1:5]

            # extact predicted params
            contact_vector = loss_list[0][0]  # hand contact state info
            offset_vector = loss_list[1][0].detach()  # offset vector (factored into a unit vector and a magnitude)
            lr_vector = loss_list[2][0].detach()  # hand side info (left/right)

            # get hand contact
            _, contact_indices = torch.max(contact_vector, 2)
            contact_indices = contact_indices.squeeze(0).unsqueeze(-1).float()

            # get hand side
            lr = torch.sigmoid(lr_vector) > 0.5
            lr = lr.squeeze(0).float()

            # Apply bounding-box regression deltas
            box_deltas = bbox_pred.data
            box_deltas = box_deltas.view(-1, 4) * torch.FloatTensor(cfgg.TRAIN.BBOX_NORMALIZE_STDS).cuda() \
                + torch.FloatTensor(cfgg.TRAIN.BBOX_NORMALIZE_MEANS).cuda()
            box_deltas = box_deltas.view(1, -1, 4 * len(self.classes))
            pred_boxes = bbox_transform_inv(boxes, box_deltas, 1)
            pred_boxes = clip_boxes(pred_boxes, im_info.data, 1)
            pred_boxes /= im_scales[0]

            scores = scores.squeeze()
            pred_boxes = pred_boxes.squeeze()

            thresh_hand = 0.5
            j = 2
            inds = torch.nonzero(scores[:, j] > thresh_hand).view(-1)
            if inds.numel() > 0:
                cls_scores = scores[:, j][inds]
                _, order = torch.sort(cls_scores, 0, True)
                cls_boxes = pred_boxes[inds][:, j * 4:(j + 1) * 4]

                cls_dets = torch.cat((cls_boxes, cls_scores.unsqueeze(1), contact_indices[inds], offset_vector.squeeze(0)[inds], lr[inds]), 1)
                cls_dets = cls_dets[order]
                keep = nms(cls_boxes[order, :], cls_scores[order], cfgg.TEST.NMS)
                cls_dets = cls_dets[keep.view(-1).long()]
                hand_dets = cls_dets.cpu().numpy()
            else:
                hand_dets = None
        return hand_dets

    def detect_hand_bbox(self, img):
        '''
        output:
            body_bbox: [min_x, min_y, width, height]
            hand_bbox: [x0, y0, x1, y1]
        Note:
            len(body_bbox) == len(hand_bbox), where hand_bbox can be None if not valid
        '''
        # get body pose
        body_pose_list, body_bbox_list = self.detect_body_pose(img)
        hand_dets = self.__get_raw_hand_bbox(img)
        hand_bbox_list = [dict(left_hand=None, right_hand=None)] if hand_dets is not None else [None]
        if hand_dets is not None:
            for det in hand_dets:
                x0, y0, x1, y1 = det[:4]
                is_right = det[-1] > 0.5
                key = 'right_hand' if is_right else 'left_hand'
                hand_bbox_list[0][key] = np.array([x0, y0, x1 - x0, y1 - y0], dtype=np.float32)
        if len(body_bbox_list) < 1:
            body_bbox_list = [None]
        return body_pose_list, body_bbox_list, hand_bbox_list, hand_dets


class HandBboxDetector(object):
    def __init__(self, view_type, device):
        """
        args:
            view_type: third_view or ego_centric.
        """
        self.view_type = view_type

        if view_type == "ego_centric":
            self.model = Ego_Centric_Detector()
        elif view_type == "third_view":
            self.model = Third_View_Detector()
        else:
            print("Invalid view_type")
            assert False

    def detect_body_bbox(self, img_bgr):
        return self.model.detect_body_pose(img_bgr)

    def detect_hand_bbox(self, img_bgr):
        """
        args:
            img_bgr: Raw image with BGR order (cv2 default). Currently assumes BGR
        output:
            body_pose_list: body poses
            bbox_bbox_list: list of bboxes. Each bbox has XHWH form (min_x, min_y, width, height)
            hand_bbox_list: each element is
            dict(
                left_hand = None / [min_x, min_y, width, height]
                right_hand = None / [min_x, min_y, width, height]
            )
            raw_hand_bboxes: list of raw hand detection, each element is [min_x, min_y, width, height]
        """
        output = self.model.detect_hand_bbox(img_bgr)
        body_pose_list, body_bbox_list, hand_bbox_list, raw_hand_bboxes = output

        # convert raw_hand_bboxes from (x0, y0, x1, y1) to (x0, y0, w, h)
        if raw_hand_bboxes is not None:
            for i in range(raw_hand_bboxes.shape[0]):
                bbox = raw_hand_bboxes[i]
                x0, y0, x1, y1 = bbox[:4]
                raw_hand_bboxes[i][:4] = np.array([x0, y0, x1 - x0, y1 - y0])

        # convert hand_bbox_list from (x0, y0, x1, y1) to (x0, y0, w, h)
        for hand_bbox in hand_bbox_list:
            if hand_bbox is not None:
                for hand_type in hand_bbox:
                    bbox = hand_bbox[hand_type]
                    if bbox is not None:
                        x0, y0, x1, y1 = bbox[:4]
                        hand_bbox[hand_type] = np.array([x0, y0, x1 - x0, y1 - y0])

        return body_pose_list, body_bbox_list, hand_bbox_list, raw_hand_bboxes
