import os
import traceback
import warnings
from pathlib import Path

import cv2
import joblib
import numpy as np
import torch
import torch.nn as nn
from detectron2 import model_zoo
from pycocotools import mask as mask_utils
from tqdm import tqdm

from phalp.configs.base import CACHE_DIR
from phalp.external.deep_sort import nn_matching
from phalp.external.deep_sort.detection import Detection
from phalp.external.deep_sort.tracker import Tracker
from phalp.models.hmar import HMAR
from phalp.models.predictor import Pose_transformer_v2
from phalp.utils import get_pylogger
from phalp.utils.io import IO_Manager
from phalp.utils.utils import (convert_pkl, get_prediction_interval,
                               progress_bar, smpl_to_pose_camera_vector)
from phalp.utils.utils_dataset import process_image, process_mask
from phalp.utils.utils_detectron2 import (DefaultPredictor_Lazy,
                                          DefaultPredictor_with_RPN)
from phalp.utils.utils_download import cache_url
from phalp.visualize.postprocessor import Postprocessor
from phalp.visualize.visualizer import Visualizer

log = get_pylogger(__name__)


class PHALP(nn.Module):

    def __init__(self, cfg):
        super(PHALP, self).__init__()

        self.cfg = cfg
        self.device = torch.device(self.cfg.device)

        # download wights and configs from Google Drive
        self.cached_download_from_drive()

        # setup HMR, and pose_predictor. Override this function to use your own model
        self.setup_hmr()

        # setup temporal pose predictor
        self.setup_predictor()

        # setup Detectron2, override this function to use your own model
        self.setup_detectron2()

        # move to device
        self.to(self.device)

        # train or eval
        self.train() if (self.cfg.train) else self.eval()

        # setup deepsort
        self.setup_deepsort()

        # setup visualizer
        self.setup_visualizer()

        # setup postprocessor
        self.setup_postprocessor()

        # setup io manager
        self.io_manager = IO_Manager(self.cfg)

        # set default device for the tracker
        self.default_setup()

    def setup_hmr(self):
        log.info("Loading HMAR model...")
        self.HMAR = HMAR(self.cfg)
        self.HMAR.load_weights(self.cfg.hmr.hmar_path)

    def setup_predictor(self):
        log.info("Loading Predictor model...")
        self.pose_predictor = Pose_transformer_v2(self.cfg, self)
        self.pose_predictor.load_weights(self.cfg.pose_predictor.weights_path)

    def setup_detectron2(self):
        log.info("Loading Detection model...")
        if self.cfg.phalp.detector == 'maskrcnn':
            self.detectron2_cfg = model_zoo.get_config('new_baselines/mask_rcnn_regnety_4gf_dds_FPN_400ep_LSJ.py', trained=True)
            self.detectron2_cfg.model.roi_heads.box_predictor.test_score_thresh = 0.5
            self.detectron2_cfg.model.roi_heads.box_predictor.test_nms_thresh = 0.4
            self.detector = DefaultPredictor_Lazy(self.detectron2_cfg)
            self.class_names = self.detector.metadata.get('thing_classes')
        elif self.cfg.phalp.detector == 'vitdet':
            from detectron2.config import LazyConfig
            import phalp
            cfg_path = Path(phalp.__file__).parent / 'configs' / 'cascade_mask_rcnn_vitdet_h_75ep.py'
            self.detectron2_cfg = LazyConfig.load(str(cfg_path))
            self.detectron2_cfg.train.init_checkpoint = 'https://dl.fbaipublicfiles.com/detectron2/ViTDet/COCO/cascade_mask_rcnn_vitdet_h/f328730692/model_final_f05665.pkl'
            for i in range(3):
                self.detectron2_cfg.model.roi_heads.box_predictors[i].test_score_thresh = 0.5
            self.detector = DefaultPredictor_Lazy(self.detectron2_cfg)
            self.class_names = self.detector.metadata.get('thing_classes')
        else:
            raise ValueError(f"Detector {self.cfg.phalp.detector} not supported")

        # for predicting masks with only bounding boxes, e.g. for running on ground truth tracks
        self.setup_detectron2_with_RPN()
        # TODO: make this work with DefaultPredictor_Lazy

    def setup_detectron2_with_RPN(self):
        from detectron2 import model_zoo
        from detectron2.config import get_cfg
        self.detectron2_cfg = get_cfg()
        self.detectron2_cfg.merge_from_file(model_zoo.get_config_file("COCO-InstanceSegmentation/mask_rcnn_X_101_32x8d_FPN_3x.yaml"))
        self.detectron2_cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = 0.4
        self.detectron2_cfg.MODEL.WEIGHTS = "https://dl.fbaipublicfiles.com/detectron2/COCO-InstanceSegmentation/mask_rcnn_X_101_32x8d_FPN_3x/139653917/model_final_2d9806.pkl"
        self.detectron2_cfg.MODEL.META_ARCHITECTURE = "GeneralizedRCNN_with_proposals"
        self.detector_x = DefaultPredictor_with_RPN(self.detectron2_cfg)

    def setup_deepsort(self):
        log.info("Setting up DeepSort...")
        metric = nn_matching.NearestNeighborDistanceMetric(self.cfg, self.cfg.phalp.hungarian_th, self.cfg.phalp.past_lookback)
        self.tracker = Tracker(self.cfg, metric, max_age=self.cfg.phalp.max_age_track, n_init=self.cfg.phalp.n_init, phalp_tracker=self, dims=[4096, 4096, 99])

    def setup_visualizer(self):
        log.info("Setting up Visualizer...")
        self.visualizer = Visualizer(self.cfg, self.HMAR)

    def setup_postprocessor(self):
        # by default this will not be initialized
        self.postprocessor = Postprocessor(self.cfg, self)

    def default_setup(self):
        # create subfolders for saving additional results
        try:
            os.makedirs(self.cfg.video.output_dir, exist_ok=True)
            os.makedirs(self.cfg.video.output_dir + '/results', exist_ok=True)
            os.makedirs(self.cfg.video.output_dir + '/results_tracks', exist_ok=True)
            os.makedirs(self.cfg.video.output_dir + '/_TMP', exist_ok=True)
            os.makedirs(self.cfg.video.output_dir + '/_DEMO', exist_ok=True)
        except Exception as e:
            log.error(e)

    def track(self):

        eval_keys = ['tracked_ids', 'tracked_bbox', 'tid', 'bbox', 'tracked_time']
        history_keys = ['appe', 'loca', 'pose', 'uv'] if self.cfg.render.enable else []
        prediction_keys = ['prediction_uv', 'prediction_pose', 'prediction_loca'] if self.cfg.render.enable else []
        extra_keys_1 = ['center', 'scale', 'size', 'img_path', 'img_name', 'class_name', 'conf', 'annotations']
        extra_keys_2 = ['smpl', 'camera', 'camera_bbox', '3d_joints', '2d_joints', 'mask', 'extra_data']
        history_keys = history_keys + extra_keys_1 + extra_keys_2
        visual_store_ = eval_keys + history_keys + prediction_keys
        tmp_keys_ = ['uv', 'prediction_uv', 'prediction_pose', 'prediction_loca']

        # process the source video and return a list of frames
        # source can be a video file, a youtube link or a image folder
        io_data = self.io_manager.get_frames_from_source()
        list_of_frames, additional_data = io_data['list_of_frames'], io_data['additional_data']
        self.cfg.video_seq = io_data['video_name']
        pkl_path = self.cfg.video.output_dir + '/results/' + self.cfg.track_dataset + "_" + str(self.cfg.video_seq) + '.pkl'
        video_path = self.cfg.video.output_dir + '/' + self.cfg.base_tracker + '_' + str(self.cfg.video_seq) + '.mp4'

        # check if the video is already processed
        if (not (self.cfg.overwrite) and os.path.isfile(pkl_path)):
            return 0

        # eval mode
        self.eval()

        # setup rendering, deep sort and directory structure
        self.setup_deepsort()
        self.default_setup()

        log.info("Saving tracks at : " + self.cfg.video.output_dir + '/results/' + str(self.cfg.video_seq))

        try:
            list_of_frames = list_of_frames if self.cfg.phalp.start_frame == -1 else list_of_frames[self.cfg.phalp.start_frame:self.cfg.phalp.end_frame]
            list_of_shots = self.get_list_of_shots(list_of_frames)

            tracked_frames = []
            final_visuals_dic = {}

            for t_, frame_name in progress_bar(enumerate(list_of_frames), description="Tracking : " + self.cfg.video_seq, total=len(list_of_frames), disable=False):

                image_frame = self.io_manager.read_frame(frame_name)
                img_height, img_width, _ = image_frame.shape
                new_image_size = max(img_height, img_width)
                top, left = (new_image_size - img_height) // 2, (new_image_size - img_width) // 2,
                measurments = [img_height, img_width, new_image_size, left, top]
                self.cfg.phalp.shot = 1 if t_ in list_of_shots else 0

                if (self.cfg.render.enable):
                    # reset the renderer
                    # TODO: add a flag for full resolution rendering
                    self.cfg.render.up_scale = int(self.cfg.render.output_resolution / self.cfg.render.res)
                    self.visualizer.reset_render(self.cfg.render.res * self.cfg.render.up_scale)

                ############ detection ##############
                pred_bbox, pred_bbox_pad, pred_masks, pred_scores, pred_classes, gt_tids, gt_annots = self.get_detections(image_frame, frame_name, t_, additional_data, measurments)

                ############ Run EXTRA models to attach to the detections ##############
                extra_data = self.run_additional_models(image_frame, pred_bbox, pred_masks, pred_scores, pred_classes, frame_name, t_, measurments, gt_tids, gt_annots)

                ############ HMAR ##############
                detections = self.get_human_features(image_frame, pred_masks, pred_bbox, pred_bbox_pad, pred_scores, frame_name, pred_classes, t_, measurments, gt_tids, gt_annots, extra_data)

                ############ tracking ##############
                self.tracker.predict()
                self.tracker.update(detections, t_, frame_name, self.cfg.phalp.shot)

                ############ record the results ##############
                final_visuals_dic.setdefault(frame_name, {'time': t_, 'shot': self.cfg.phalp.shot, 'frame_path': frame_name})
                if (self.cfg.render.enable): final_visuals_dic[frame_name]['frame'] = image_frame
                for key_ in visual_store_: final_visuals_dic[frame_name][key_] = []

                ############ save the video ##############
                if (self.cfg.render.enable and t_ >= self.cfg.phalp.n_init):
                    d_ = self.cfg.phalp.n_init + 1 if (t_ + 1 == len(list_of_frames)) else 1
                    for t__ in range(t_, t_ + d_):
                        frame_key = list_of_frames[t__ - self.cfg.phalp.n_init]
                        rendered_, f_size = self.visualizer.render_video(final_visuals_dic[frame_key])

                        # save the rendered frame
                        self.io_manager.save_video(video_path, rendered_, f_size, t=t__ - self.cfg.phalp.n_init)

                        # delete the frame after rendering it
                        del final_visuals_dic[frame_key]['frame']

                        # delete unnecessary keys
                        for tkey_ in tmp_keys_:
                            del final_visuals_dic[frame_key][tkey_]

            joblib.dump(final_visuals_dic, pkl_path, compress=3)
            self.io_manager.close_video()
            if (self.cfg.use_gt): joblib.dump(self.tracker.tracked_cost, self.cfg.video.output_dir + '/results/' + str(self.cfg.video_seq) + '_' + str(self.cfg.phalp.start_frame) + '_distance.pkl')

            return final_visuals_dic, pkl_path

        except Exception as e:
            print(e)
            print(traceback.format_exc())

    def get_human_features(self, image, seg_mask, bbox, bbox_pad, score, frame_name, cls_id, t_, measurments, gt=1, ann=None, extra_data=None):
        NPEOPLE = len(score)

        if (NPEOPLE == 0): return []

        img_height, img_width, new_image_size, left, top = measurments
        ratio = 1.0 / int(new_image_size) * self.cfg.render.res
        masked_image_list = []
        center_list = []
        scale_list = []
        rles_list = []
        selected_ids = []
        for p_ in range(NPEOPLE):
            if bbox[p_][2] - bbox[p_][0] < self.cfg.phalp.small_w or bbox[p_][3] - bbox[p_][1] < self.cfg.phalp.small_h:
                continue
            masked_image, center_, scale_, rles, center_pad, scale_pad = self.get_croped_image(image, bbox[p_], bbox_pad[p_], seg_mask[p_])
            masked_image_list.append(masked_image)
            center_list.append(center_pad)
            scale_list.append(scale_pad)
            rles_list.append(rles)
            selected_ids.append(p_)

        if (len(masked_image_list) == 0): return []

        masked_image_list = torch.stack(masked_image_list, dim=0)
        BS = masked_image_list.size(0)

        with torch.no_grad():
            extra_args = {}
            hmar_out = self.HMAR(masked_image_list.cuda(), **extra_args)
            uv_vector = hmar_out['uv_vector']
            appe_embedding = self.HMAR.autoencoder_hmar(uv_vector, en=True)
            appe_embedding = appe_embedding.view(appe_embedding.shape[0], -1)
            pred_smpl_params, pred_joints_2d, pred_joints, pred_cam = self.HMAR.get_3d_parameters(hmar_out['pose_smpl'], hmar_out['pred_cam'],
                                                                                               center=(np.array(center_list) + np.array([left, top])) * ratio,
                                                                                               img_size=self.cfg.render.res,
                                                                                               scale=np.max(np.array(scale_list), axis=1, keepdims=True) * ratio)
            pred_smpl_params = [{k: v[i].cpu().numpy() for k, v in pred_smpl_params.items()} for i in range(BS)]

            if (self.cfg.phalp.pose_distance == "joints"):
                pose_embedding = pred_joints.cpu().view(BS, -1)
            elif (self.cfg.phalp.pose_distance == "smpl"):
                pose_embedding = []
                for i in range(BS):
                    pose_embedding_ = smpl_to_pose_camera_vector(pred_smpl_params[i], pred_cam[i])
                    pose_embedding.append(torch.from_numpy(pose_embedding_[0]))
                pose_embedding = torch.stack(pose_embedding, dim=0)
            else:
                raise ValueError("Unknown pose distance")
            pred_joints_2d_ = pred_joints_2d.reshape(BS, -1) / self.cfg.render.res
            pred_cam_ = pred_cam.view(BS, -1)
            pred_joints_2d_.contiguous()
            pred_cam_.contiguous()
            loca_embedding = torch.cat((pred_joints_2d_, pred_cam_, pred_cam_, pred_cam_), 1)

        # keeping it here for legacy reasons (T3DP), but it is not used.
        full_embedding = torch.cat((appe_embedding.cpu(), pose_embedding, loca_embedding.cpu()), 1)

        detection_data_list = []
        for i, p_ in enumerate(selected_ids):
            detection_data = {
                "bbox": np.array([bbox[p_][0], bbox[p_][1], (bbox[p_][2] - bbox[p_][0]), (bbox[p_][3] - bbox[p_][1])]),
                "mask": rles_list[i],
                "conf": score[p_],

                "appe": appe_embedding[i].cpu().numpy(),
                "pose": pose_embedding[i].numpy(),
                "loca": loca_embedding[i].cpu().numpy(),
                "uv": uv_vector[i].cpu().numpy(),

                "embedding": full_embedding[i],
                "center": center_list[i],
                "scale": scale_list[i],
                "smpl": pred_smpl_params[i],
                "camera": pred_cam_[i].cpu().numpy(),
                "camera_bbox": hmar_out['pred_cam'][i].cpu().numpy(),
                "3d_joints": pred_joints[i].cpu().numpy(),
                "2d_joints": pred_joints_2d_[i].cpu().numpy(),
                "size": [img_height, img_width],
                "img_path": frame_name,
                "img_name": frame_name.split('/')[-1] if isinstance(frame_name, str) else None,
                "class_name": cls_id[p_],
                "time": t_,

                "ground_truth": gt[p_],
                "annotations": ann[p_],
                "extra_data": extra_data[p_] if extra_data is not None else None
            }
            detection_data_list.append(Detection(detection_data))

        return detection_data_list

    def forward_for_tracking(self, vectors, attibute="A", time=1):

        if (attibute == "P"):

            vectors_pose = vectors[0]
            vectors_data = vectors[1]
            vectors_time = vectors[2]

            en_pose = torch.from_numpy(vectors_pose)
            en_data = torch.from_numpy(vectors_data)
            en_time = torch.from_numpy(vectors_time)

            if (len(en_pose.shape) != 3):
                en_pose = en_pose.unsqueeze(0)  # (BS, 7, pose_dim)
                en_time = en_time.unsqueeze(0)  # (BS, 7)
                en_data = en_data.unsqueeze(0)  # (BS, 7, 6)

            with torch.no_grad():
                pose_pred = self.pose_predictor.predict_next(en_pose, en_data, en_time, time)

            return pose_pred.cpu()

        if (attibute == "L"):
            vectors_loca = vectors[0]
            vectors_time = vectors[1]
            vectors_conf = vectors[2]

            en_loca = torch.from_numpy(vectors_loca)
            en_time = torch.from_numpy(vectors_time)
            en_conf = torch.from_numpy(vectors_conf)
            time = torch.from_numpy(time)

            if (len(en_loca.shape) != 3):
                en_loca = en_loca.unsqueeze(0)
                en_time = en_time.unsqueeze(0)
            else:
                en_loca = en_loca.permute(0, 1, 2)

            BS = en_loca.size(0)
            t_ = en_loca.size(1)

            en_loca_xy = en_loca[:, :, :90]
            en_loca_xy = en_loca_xy.view(BS, t_, 45, 2)
            en_loca_n = en_loca[:, :, 90:]
            en_loca_n = en_loca_n.view(BS, t_, 3, 3)

            new_en_loca_n = []
            for bs in range(BS):
                x0_ = np.array(en_loca_xy[bs, :, 44, 0])
                y0_ = np.array(en_loca_xy[bs, :, 44, 1])
                n_ = np.log(np.array(en_loca_n[bs, :, 0, 2]))
                t_ = np.array(en_time[bs, :])

                loc_ = torch.diff(en_time[bs, :], dim=0) != 0
                if (self.cfg.phalp.distance_type == "EQ_020" or self.cfg.phalp.distance_type == "EQ_021"):
                    loc_ = 1
                else:
                    loc_ = loc_.shape[0] - torch.sum(loc_) + 1

                M = t_[:, np.newaxis] ** [0, 1]
                time_ = 48 if time[bs] > 48 else time[bs]

                clf = np.linalg.lstsq(M, x0_, rcond=None)[0]
                x_p = clf[0] + clf[1] * (t_[-1] + time_)
                clf = np.linalg.lstsq(M, y0_, rcond=None)[0]
                y_p = clf[0] + clf[1] * (t_[-1] + time_)
                clf = np.linalg.lstsq(M, n_, rcond=None)[0]
                n_p = clf[0] + clf[1] * (t_[-1] + time_)

                new_en_loca_n.append([x_p, y_p, np.exp(n_p), 0, 0, 0, 0, 0, 0])
                en_loca_xy[bs, -1, 44, 0] = x_p
                en_loca_xy[bs, -1, 44, 1] = y_p

            new_en_loca_n = torch.from_numpy(np.array(new_en_loca_n))
            xt = torch.cat((en_loca_xy[:, -1, :, :].view(BS, 90), (new_en_loca_n.float()).view(BS, 9)), 1)

        return xt

    def get_croped_image(self, image, bbox, bbox_pad, seg_mask):

        # Encode the mask for storing, borrowed from tao dataset
        # https://github.com/TAO-Dataset/tao/blob/master/scripts/detectors/detectron2_infer.py
        masks_decoded = np.array(np.expand_dims(seg_mask, 2), order='F', dtype=np.uint8)
        rles = mask_utils.encode(masks_decoded)
        for rle in rles:
            rle["counts"] = rle["counts"].decode("utf-8")

        seg_mask = seg_mask.astype(int) * 255
        if (len(seg_mask.shape) == 2):
            seg_mask = np.expand_dims(seg_mask, 2)
            seg_mask = np.repeat(seg_mask, 3, 2)

        center_ = np.array([(bbox[2] + bbox[0]) / 2, (bbox[3] + bbox[1]) / 2])
        scale_ = np.array([(bbox[2] - bbox[0]), (bbox[3] - bbox[1])])

        center_pad = np.array([(bbox_pad[2] + bbox_pad[0]) / 2, (bbox_pad[3] + bbox_pad[1]) / 2])
        scale_pad = np.array([(bbox_pad[2] - bbox_pad[0]), (bbox_pad[3] - bbox_pad[1])])
        mask_tmp = process_mask(seg_mask.astype(np.uint8), center_pad, 1.0 * np.max(scale_pad))
        image_tmp = process_image(image, center_pad, 1.0 * np.max(scale_pad))

        # bbox_ = expand_bbox_to_aspect_ratio(bbox, target_aspect_ratio=(192,256))
        # center_x = np.array([(bbox_[2] + bbox_[0])/2, (bbox_[3] + bbox_[1])/2])
        # scale_x = np.array([(bbox_[2] - bbox_[0]), (bbox_[3] - bbox_[1])])
        # mask_tmp = process_mask(seg_mask.astype(np.uint8), center_x, 1.0*np.max(scale_x))
        # image_tmp = process_image(image, center_x, 1.0*np.max(scale_x))

        masked_image = torch.cat((image_tmp, mask_tmp[:1, :, :]), 0)

        return masked_image, center_, scale_, rles, center_pad, scale_pad

    def cached_download_from_drive(self, additional_urls=None):
        """Download a file from Google Drive if it doesn't exist yet.
        :param url: the URL of the file to download
        :param path: the path to save the file to
        """
        # Create necessary directories
        os.makedirs(os.path.join(CACHE_DIR, "phalp"), exist_ok=True)
        os.makedirs(os.path.join(CACHE_DIR, "phalp/3D"), exist_ok=True)
        os.makedirs(os.path.join(CACHE_DIR, "phalp/weights"), exist_ok=True)
        os.makedirs(os.path.join(CACHE_DIR, "phalp/ava"), exist_ok=True)

        smpl_path = os.path.join(CACHE_DIR, "phalp/3D/models/smpl/SMPL_NEUTRAL.pkl")

        if not os.path.exists(smpl_path):
            # We are downloading the SMPL model here for convenience. Please accept the license
            # agreement on the SMPL website: https://smpl.is.tue.mpg.
            os.makedirs(os.path.join(CACHE_DIR, "phalp/3D/models/smpl"), exist_ok=True)
            log.warning("SMPL model not found. Please download it from https://smpl.is.tue.mpg.de/")

        additional_urls = additional_urls if additional_urls is not None else {}
        download_files = {
            "head_faces.npy": ["https://github.com/brjathu/PHALP/releases/download/v1.0/head_faces.npy", os.path.join(CACHE_DIR, "phalp/3D")],
            "mean_std.npy": ["https://github.com/brjathu/PHALP/releases/download/v1.0/mean_std.npy", os.path.join(CACHE_DIR, "phalp/3D")],
            "smpl_mean_params.npz": ["https://github.com/brjathu/PHALP/releases/download/v1.0/smpl_mean_params.npz", os.path.join(CACHE_DIR, "phalp/3D")],
            "hmar_v2_weights.pth": ["https://github.com/brjathu/PHALP/releases/download/v1.0/hmar_v2_weights.pth", os.path.join(CACHE_DIR, "phalp/weights")],
            "pose_predictor.pth": ["https://github.com/brjathu/PHALP/releases/download/v1.0/pose_predictor_40006.ckpt", os.path.join(CACHE_DIR, "phalp/weights")],
        } | additional_urls  # type: ignore

        for file_name, url in download_files.items():
            if not os.path.exists(os.path.join(url[1], file_name)):
                print("Downloading file: " + file_name)
                # output = gdown.cached_download(url[0], os.path.join(url[1], file_name), fuzzy=True)
                output = cache_url(url[0], os.path.join(url[1], file_name))
                assert os.path.exists(os.path.join(url[1], file_name)), f"{output} does not exist"
