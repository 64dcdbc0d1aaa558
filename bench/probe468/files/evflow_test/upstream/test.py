import os
import time

import cv2
import numpy as np
import torch
from torch.utils.data import DataLoader

from config import configs
from data_loader import EventData, GroundTruthFlow
from model import EVFlowNet
from vis_utils import flow_viz_np


def flow_error_dense(flow_gt, flow_pred, event_img):
    """Average endpoint error and % outliers (AEE > 3px and > 5% of the gt magnitude),
    computed only at pixels with at least one event, as in the paper."""
    max_row = flow_gt.shape[1]
    event_mask = event_img > 0
    flow_masked_gt = flow_gt[:, event_mask]
    flow_masked_pred = flow_pred[:, event_mask]
    n_points = flow_masked_gt.shape[1]
    if n_points == 0:
        return 0.0, 0.0, 0
    ee = np.linalg.norm(flow_masked_gt - flow_masked_pred, axis=0)
    aee = np.mean(ee)
    gt_mag = np.linalg.norm(flow_masked_gt, axis=0)
    outliers = np.logical_and(ee > 3.0, ee > 0.05 * gt_mag)
    percent_outliers = np.sum(outliers) / float(n_points)
    return aee, percent_outliers, n_points


def test():
    args = configs()
    if args.load_path is None:
        raise ValueError('Please pass --load_path to a trained checkpoint')

    device = torch.device('cuda:0' if args.cuda else 'cpu')
    print('Running on', torch.cuda.get_device_name(0))

    model = EVFlowNet(args).cuda()
    state = torch.load(args.load_path, map_location='cuda:0')
    model.load_state_dict(state)
    model.eval()

    test_dataset = EventData(args.data_path, args.test_sequence, args, train=False)
    test_loader = DataLoader(test_dataset, batch_size=1, shuffle=False, num_workers=args.num_workers)
    gt = GroundTruthFlow(args.data_path, args.test_sequence)

    if args.save_test_output:
        out_dir = os.path.join('results', args.test_sequence)
        os.makedirs(out_dir, exist_ok=True)

    aees, outliers, timings = [], [], []
    with torch.no_grad():
        for i, (event_volume, prev_image, next_image, dt) in enumerate(test_loader):
            event_volume = event_volume.to(device)

            t0 = time.time()
            flow_dict = model(event_volume)
            torch.cuda.synchronize()
            timings.append(time.time() - t0)

            pred = flow_dict['flow3'][0].cpu().numpy()
            event_img = event_volume[0, :2].sum(0).cpu().numpy()

            idx = test_dataset._indices[i]
            t_start = test_dataset._image_ts[idx]
            t_end = test_dataset._image_ts[idx + test_dataset._skip]
            gt_x, gt_y = gt.flow_at(t_start, t_end)
            h, w = pred.shape[1:]
            y0 = (gt_x.shape[0] - h) // 2
            x0 = (gt_x.shape[1] - w) // 2
            flow_gt = np.stack([gt_x[y0:y0 + h, x0:x0 + w], gt_y[y0:y0 + h, x0:x0 + w]], axis=0)

            aee, outlier, n = flow_error_dense(flow_gt, pred, event_img)
            if n > 0:
                aees.append(aee)
                outliers.append(outlier)

            if args.save_test_output:
                np.save(os.path.join(out_dir, 'flow_{:06d}.npy'.format(i)), pred)
            if args.test_plot:
                vis = np.concatenate([flow_viz_np(pred), flow_viz_np(flow_gt)], axis=1)
                cv2.imshow('pred | gt', vis[..., ::-1])
                cv2.waitKey(1)

    print('Sequence: {}'.format(args.test_sequence))
    print('AEE: {:.3f}  outliers: {:.2f}%'.format(np.mean(aees), 100 * np.mean(outliers)))
    print('Mean inference time: {:.2f} ms'.format(1000 * np.mean(timings[5:])))


if __name__ == '__main__':
    test()
