from lib.trainer import Trainer
import os, torch, time
from tqdm import tqdm
import numpy as np
from lib.benchmark_utils import ransac_pose_estimation, random_sample, get_angle_deviation, to_o3d_pcd, to_array
import open3d as o3d

# Modelnet part
from common.misc import prepare_logger
from common.math_torch import se3
from common.math.so3 import dcm2euler
from common.misc import prepare_logger
from collections import defaultdict
import coloredlogs


class IndoorTester(Trainer):
    """
    3DMatch tester
    """

    def __init__(self, args):
        Trainer.__init__(self, args)

    def test(self):
        print('Start to evaluate on test datasets...')
        os.makedirs(f'{self.snapshot_dir}/{self.config.benchmark}', exist_ok=True)

        num_iter = int(len(self.loader['test'].dataset) // self.loader['test'].batch_size)
        c_loader_iter = self.loader['test'].__iter__()
        self.model.eval()
        with torch.no_grad():
            for idx in tqdm(range(num_iter)):  # loop through this epoch
                inputs = next(c_loader_iter)
                ##################################
                # load inputs to device.
                for k, v in inputs.items():
                    if type(v) == list:
                        inputs[k] = [item.to(self.device) for item in v]
                    else:
                        inputs[k] = v.to(self.device)
                ###############################################
                # forward pass
                feats, scores_overlap, scores_saliency = self.model(inputs)  # [N1, C1], [N2, C2]
                pcd = inputs['points'][0]
                len_src = inputs['stack_lengths'][0][0]
                c_rot, c_trans = inputs['rot'], inputs['trans']
                correspondence = inputs['correspondences']

                src_pcd, tgt_pcd = pcd[:len_src], pcd[len_src:]
                src_feats, tgt_feats = feats[:len_src], feats[len_src:]

                data = dict()
                data['pcd'] = pcd.cpu()
                data['feats'] = feats.detach().cpu()
                data['overlaps'] = scores_overlap.detach().cpu()
                data['saliency'] = scores_saliency.detach().cpu()
                data['len_src'] = len_src
                data['rot'] = c_rot.cpu()
                data['trans'] = c_trans.cpu()

                torch.save(data, f'{self.snapshot_dir}/{self.config.benchmark}/{idx}.pth')


class KITTITester(Trainer):
    """
    KITTI tester
    """

    def __init__(self, args):
        Trainer.__init__(self, args)

    def test(self):
        print('Start to evaluate on test datasets...')
        tsfm_est = []
        num_iter = int(len(self.loader['test'].dataset) // self.loader['test'].batch_size)
        c_loader_iter = self.loader['test'].__iter__()

        self.model.eval()
        rot_gt, trans_gt = [], []
        runtimes = []
        with torch.no_grad():
            for _ in tqdm(range(num_iter)):  # loop through this epoch
                inputs = next(c_loader_iter)
                ###############################################
                # forward pass
                for k, v in inputs.items():
                    if type(v) == list:
                        inputs[k] = [item.to(self.device) for item in v]
                    else:
                        inputs[k] = v.to(self.device)

                torch.cuda.synchronize()
                start = time.time()
                feats, scores_overlap, scores_saliency = self.model(inputs)  # [N1, C1], [N2, C2]
                torch.cuda.synchronize()  # forward pass is asynchronous
                runtimes.append(time.time() - start)

                scores_overlap = scores_overlap.detach().cpu()
                scores_saliency = scores_saliency.detach().cpu()

                len_src = inputs['stack_lengths'][0][0]
                c_rot, c_trans = inputs['rot'], inputs['trans']
                rot_gt.append(c_rot.cpu().numpy())
                trans_gt.append(c_trans.cpu().numpy())
                src_feats, tgt_feats = feats[:len_src], feats[len_src:]
                src_pcd, tgt_pcd = inputs['src_pcd_raw'], inputs['tgt_pcd_raw']
                src_overlap, tgt_overlap = scores_overlap[:len_src], scores_overlap[len_src:]
                src_saliency, tgt_saliency = scores_saliency[:len_src], scores_saliency[len_src:]

                n_points = 5000
                ########################################
                # run probabilistic sampling
                src_scores = src_overlap * src_saliency
                tgt_scores = tgt_overlap * tgt_saliency

                if src_pcd.size(0) > n_points:
                    idx = np.arange(src_pcd.size(0))
                    probs = (src_scores / src_scores.sum()).numpy().flatten()
                    idx = np.random.choice(idx, size=n_points, replace=False, p=probs)
                    src_pcd, src_feats = src_pcd[idx], src_feats[idx]
                if tgt_pcd.size(0) > n_points:
                    idx = np.arange(tgt_pcd.size(0))
                    probs = (tgt_scores / tgt_scores.sum()).numpy().flatten()
                    idx = np.random.choice(idx, size=n_points, replace=False, p=probs)
                    tgt_pcd, tgt_feats = tgt_pcd[idx], tgt_feats[idx]

                ########################################
                # run ransac
                distance_threshold = 0.3
                ts_est = ransac_pose_estimation(src_pcd, tgt_pcd, src_feats, tgt_feats, mutual=False,
                                                distance_threshold=distance_threshold, ransac_n=4)
                tsfm_est.append(ts_est)

                # KITTI pairs are large, release the cached blocks between pairs
                torch.cuda.empty_cache()

        tsfm_est = np.array(tsfm_est)
        rot_est = tsfm_est[:, :3, :3]
        trans_est = tsfm_est[:, :3, 3]
        rot_gt = np.array(rot_gt)
        trans_gt = np.array(trans_gt)[:, :, 0]

        np.savez(f'{self.snapshot_dir}/results', rot_est=rot_est, rot_gt=rot_gt, trans_est=trans_est,
                 trans_gt=trans_gt)

        r_deviation = get_angle_deviation(rot_est, rot_gt)
        translation_errors = np.linalg.norm(trans_est - trans_gt, axis=-1)

        flag_1 = r_deviation < 5
        flag_2 = translation_errors < 2
        correct = (flag_1 & flag_2).sum()
        precision = correct / rot_gt.shape[0]

        message = f'\n Registration recall: {precision:.3f}\n'

        r_deviation = r_deviation[flag_1]
        translation_errors = translation_errors[flag_2]

        errors = dict()
        errors['rot_mean'] = round(np.mean(r_deviation), 3)
        errors['rot_median'] = round(np.median(r_deviation), 3)
        errors['trans_rmse'] = round(np.mean(translation_errors), 3)
        errors['trans_rmedse'] = round(np.median(translation_errors), 3)
        errors['rot_std'] = round(np.std(r_deviation), 3)
        errors['trans_std'] = round(np.std(translation_errors), 3)
        errors['runtime_ms'] = round(1000 * float(np.mean(runtimes)), 1)

        message += str(errors)
        print(message)
        self.logger.write(message + '\n')


def get_trainer(config):
    if config.dataset == 'indoor':
        return IndoorTester(config)
    elif config.dataset == 'kitti':
        return KITTITester(config)
    else:
        raise NotImplementedError
