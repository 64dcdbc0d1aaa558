# Copyright (c) Person-in-WiFi 3D authors. All rights reserved.
import os.path as osp
import tempfile

import mmcv
import numpy as np
import scipy.io as scio
import torch
from mmdet.datasets import CustomDataset

from .builder import DATASETS


@DATASETS.register_module()
class WiFiPoseDataset(CustomDataset):
    """Multi-person 3D pose from WiFi CSI.

    Every sample is one CSI window recorded by three receivers (3 antennas,
    30 subcarriers each) together with the 3D keypoints of all people in the
    room, obtained from a synchronised multi-view camera system.

    Layout on disk::

        data_root/
            csi/XXXX.mat        # 'csi_amp' / 'csi_phase', (3, 3, 30, T)
            keypoint/XXXX.npy   # (num_person, 14, 3) in metres
            train_list.txt      # one sample id per line
    """

    CLASSES = ('person', )
    NUM_KEYPOINTS = 14
    # parents of the 14-joint skeleton used by the evaluator
    SKELETON = [(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 6), (0, 7),
                (7, 8), (8, 9), (8, 10), (10, 11), (8, 12), (12, 13)]

    def __init__(self, ann_file, pipeline, data_root=None, test_mode=False,
                 filter_empty_gt=True, max_person=5, **kwargs):
        self.max_person = max_person
        super().__init__(
            ann_file,
            pipeline,
            data_root=data_root,
            test_mode=test_mode,
            filter_empty_gt=filter_empty_gt,
            **kwargs)

    def load_annotations(self, ann_file):
        with open(ann_file) as f:
            ids = [ln.strip() for ln in f if ln.strip()]
        data_infos = []
        for sid in ids:
            data_infos.append(
                dict(
                    id=sid,
                    filename=osp.join(self.data_prefix or '', 'csi', sid + '.mat'),
                    kpt_file=osp.join(self.data_prefix or '', 'keypoint', sid + '.npy')))
        return data_infos

    def get_ann_info(self, idx):
        info = self.data_infos[idx]
        kpts = np.load(info['kpt_file']).astype(np.float32)
        if kpts.ndim == 2:
            kpts = kpts[None]
        kpts = kpts[:self.max_person]
        labels = np.zeros((kpts.shape[0], ), dtype=np.int64)
        return dict(keypoints=kpts, labels=labels, num_person=kpts.shape[0])

    def _filter_imgs(self, min_size=32):
        valid_inds = []
        for i, info in enumerate(self.data_infos):
            if osp.exists(info['filename']):
                valid_inds.append(i)
        return valid_inds

    def _set_group_flag(self):
        # no aspect-ratio grouping for CSI windows
        self.flag = np.zeros(len(self), dtype=np.uint8)

    def pre_pipeline(self, results):
        results['csi_prefix'] = self.data_prefix
        results['room'] = results['img_info']['id'].split('_')[0]

    def prepare_train_img(self, idx):
        img_info = self.data_infos[idx]
        ann_info = self.get_ann_info(idx)
        results = dict(img_info=img_info, ann_info=ann_info,
                       filename=img_info['filename'])
        self.pre_pipeline(results)
        return self.pipeline(results)

    def prepare_test_img(self, idx):
        img_info = self.data_infos[idx]
        results = dict(img_info=img_info, filename=img_info['filename'])
        self.pre_pipeline(results)
        return self.pipeline(results)

    # ------------------------------------------------------------------ eval
    @staticmethod
    def _match(pred, gt):
        """Greedy matching of predicted and ground-truth people by MPJPE."""
        if len(pred) == 0 or len(gt) == 0:
            return []
        cost = np.linalg.norm(pred[:, None] - gt[None], axis=-1).mean(-1)
        pairs = []
        used_p, used_g = set(), set()
        for flat in np.argsort(cost, axis=None):
            p, g = np.unravel_index(flat, cost.shape)
            if p in used_p or g in used_g:
                continue
            used_p.add(p)
            used_g.add(g)
            pairs.append((p, g, cost[p, g]))
        return pairs

    def evaluate(self, results, metric='mpjpe', logger=None, score_thr=0.3,
                 pck_thr=(0.05, 0.1, 0.15), **kwargs):
        metrics = metric if isinstance(metric, list) else [metric]
        errors, per_joint = [], []
        for i, res in enumerate(results):
            gt = self.get_ann_info(i)['keypoints']
            kpts, scores = res['keypoints'], res['scores']
            pred = kpts[scores > score_thr]
            for p, g, e in self._match(pred, gt):
                errors.append(e)
                per_joint.append(np.linalg.norm(pred[p] - gt[g], axis=-1))
        eval_results = {}
        errors = np.asarray(errors) if errors else np.zeros((1, ))
        per_joint = np.stack(per_joint) if per_joint else np.zeros((1, self.NUM_KEYPOINTS))
        if 'mpjpe' in metrics:
            eval_results['mpjpe'] = float(errors.mean())
        if 'pck' in metrics:
            for thr in pck_thr:
                eval_results[f'pck@{thr}'] = float((per_joint < thr).mean())
        mmcv.print_log(str(eval_results), logger=logger)
        return eval_results

    def format_results(self, results, jsonfile_prefix=None, **kwargs):
        if jsonfile_prefix is None:
            tmp_dir = tempfile.TemporaryDirectory()
            jsonfile_prefix = osp.join(tmp_dir.name, 'results')
        else:
            tmp_dir = None
        out = []
        for i, res in enumerate(results):
            out.append(dict(id=self.data_infos[i]['id'],
                            keypoints=res['keypoints'].tolist(),
                            scores=res['scores'].tolist()))
        mmcv.dump(out, jsonfile_prefix + '.keypoints.json')
        return jsonfile_prefix + '.keypoints.json', tmp_dir


def load_csi(path):
    """Read one CSI window, returning a float32 tensor (2*3*3*30, T)."""
    mat = scio.loadmat(path)
    amp = mat['csi_amp'].astype(np.float32)
    phase = mat['csi_phase'].astype(np.float32)
    x = np.concatenate([amp, phase], axis=0)
    return torch.from_numpy(x.reshape(-1, x.shape[-1]))
