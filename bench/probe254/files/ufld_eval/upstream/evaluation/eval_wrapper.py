import os
import json
import platform

import torch
import scipy.special
import numpy as np

from data.dataloader import get_test_loader
from evaluation.tusimple.lane import LaneEval
from utils.dist_utils import is_main_process, dist_print, get_rank, get_world_size, dist_tqdm, synchronize

# h_samples of the TuSimple benchmark (rows where x positions are reported)
TUSIMPLE_H_SAMPLES = list(range(160, 711, 10))


def generate_lines(out, shape, names, output_path, griding_num, localization_type='abs', flip_updown=False):
    """Write CULane .lines.txt files from row-anchor classification outputs."""
    col_sample = np.linspace(0, shape[1] - 1, griding_num)
    col_sample_w = col_sample[1] - col_sample[0]

    for j in range(out.shape[0]):
        out_j = out[j].data.cpu().numpy()
        if flip_updown:
            out_j = out_j[:, ::-1, :]
        if localization_type == 'abs':
            out_j = np.argmax(out_j, axis=0)
            out_j[out_j == griding_num] = -1
            out_j = out_j + 1
        elif localization_type == 'rel':
            prob = scipy.special.softmax(out_j[:-1, :, :], axis=0)
            idx = np.arange(griding_num) + 1
            idx = idx.reshape(-1, 1, 1)
            loc = np.sum(prob * idx, axis=0)
            out_j = np.argmax(out_j, axis=0)
            loc[out_j == griding_num] = 0
            out_j = loc
        else:
            raise NotImplementedError
        name = names[j]

        line_save_path = os.path.join(output_path, name[:-3] + 'lines.txt')
        save_dir, _ = os.path.split(line_save_path)
        if not os.path.exists(save_dir):
            os.makedirs(save_dir)
        with open(line_save_path, 'w') as fp:
            for i in range(out_j.shape[1]):
                if np.sum(out_j[:, i] != 0) > 2:
                    for k in range(out_j.shape[0]):
                        if out_j[k, i] > 0:
                            fp.write('%d %d ' %
                                     (int(out_j[k, i] * col_sample_w * 1640 / 800) - 1, int(590 - k * 20) - 1))
                    fp.write('\n')


def run_test(net, data_root, exp_name, work_dir, griding_num, use_aux, distributed, batch_size=8):
    output_path = os.path.join(work_dir, exp_name)
    if not os.path.exists(output_path) and is_main_process():
        os.mkdir(output_path)
    synchronize()
    loader = get_test_loader(batch_size, data_root, 'CULane', distributed)
    for i, data in enumerate(dist_tqdm(loader)):
        imgs, names = data
        imgs = imgs.cuda()
        with torch.no_grad():
            out = net(imgs)
        if len(out) == 2 and use_aux:
            out, seg_out = out

        generate_lines(out, imgs[0, 0].shape, names, output_path, griding_num, localization_type='rel',
                       flip_updown=True)


def generate_tusimple_lines(out, shape, griding_num, localization_type='rel'):
    out = out.data.cpu().numpy()
    out_loc = np.argmax(out, axis=0)

    if localization_type == 'rel':
        prob = scipy.special.softmax(out[:-1, :, :], axis=0)
        idx = np.arange(griding_num)
        idx = idx.reshape(-1, 1, 1)
        loc = np.sum(prob * idx, axis=0)
        loc[out_loc == griding_num] = griding_num
        out_loc = loc
    lanes = []
    for i in range(out_loc.shape[1]):
        out_i = out_loc[:, i]
        lane = [int(round((loc + 0.5) * 1280.0 / (griding_num - 1))) if loc != griding_num else -2 for loc in out_i]
        lanes.append(lane)
    return lanes


def run_test_tusimple(net, data_root, work_dir, exp_name, griding_num, use_aux, distributed, batch_size=8):
    output_path = os.path.join(work_dir, exp_name + '.%d.txt' % get_rank())
    fp = open(output_path, 'w')
    loader = get_test_loader(batch_size, data_root, 'Tusimple', distributed)
    for i, data in enumerate(dist_tqdm(loader)):
        imgs, names = data
        imgs = imgs.cuda(non_blocking=True)
        with torch.no_grad():
            out = net(imgs)
        if len(out) == 2 and use_aux:
            out = out[0]
        for i, name in enumerate(names):
            tmp_dict = {}
            tmp_dict['lanes'] = generate_tusimple_lines(out[i], imgs[0, 0].shape, griding_num)
            tmp_dict['h_samples'] = TUSIMPLE_H_SAMPLES
            tmp_dict['raw_file'] = name
            tmp_dict['run_time'] = 10
            json_str = json.dumps(tmp_dict)

            fp.write(json_str + '\n')
    fp.close()


def pred2coords(pred, row_anchor, col_anchor, local_width=1, original_image_width=1640, original_image_height=590):
    """Decode the hybrid (row + column) anchor outputs of the v2 models into image coordinates."""
    batch_size, num_grid_row, num_cls_row, num_lane_row = pred['loc_row'].shape
    batch_size, num_grid_col, num_cls_col, num_lane_col = pred['loc_col'].shape

    max_indices_row = pred['loc_row'].argmax(1).cpu()
    # n , num_cls, num_lanes
    valid_row = pred['exist_row'].argmax(1).cpu()
    # n, num_cls, num_lanes

    max_indices_col = pred['loc_col'].argmax(1).cpu()
    valid_col = pred['exist_col'].argmax(1).cpu()

    pred['loc_row'] = pred['loc_row'].cpu()
    pred['loc_col'] = pred['loc_col'].cpu()

    coords = []

    row_lane_idx = [1, 2]
    col_lane_idx = [0, 3]

    for i in row_lane_idx:
        tmp = []
        if valid_row[0, :, i].sum() > num_cls_row / 2:
            for k in range(valid_row.shape[1]):
                if valid_row[0, k, i]:
                    all_ind = torch.tensor(list(range(max(0, max_indices_row[0, k, i] - local_width),
                                                      min(num_grid_row - 1,
                                                          max_indices_row[0, k, i] + local_width) + 1)))

                    out_tmp = (pred['loc_row'][0, all_ind, k, i].softmax(0) * all_ind.float()).sum() + 0.5
                    out_tmp = out_tmp / (num_grid_row - 1) * original_image_width
                    tmp.append((int(out_tmp), int(row_anchor[k] * original_image_height)))
            coords.append(tmp)

    for i in col_lane_idx:
        tmp = []
        if valid_col[0, :, i].sum() > num_cls_col / 4:
            for k in range(valid_col.shape[1]):
                if valid_col[0, k, i]:
                    all_ind = torch.tensor(list(range(max(0, max_indices_col[0, k, i] - local_width),
                                                      min(num_grid_col - 1,
                                                          max_indices_col[0, k, i] + local_width) + 1)))

                    out_tmp = (pred['loc_col'][0, all_ind, k, i].softmax(0) * all_ind.float()).sum() + 0.5

                    out_tmp = out_tmp / (num_grid_col - 1) * original_image_height
                    tmp.append((int(col_anchor[k] * original_image_width), int(out_tmp)))
            coords.append(tmp)

    return coords


def run_test_curvelanes(net, data_root, exp_name, work_dir, row_anchor, col_anchor, distributed, batch_size=1):
    """CurveLanes has images of different sizes; decode per image with its own original size."""
    output_path = os.path.join(work_dir, exp_name)
    if not os.path.exists(output_path) and is_main_process():
        os.mkdir(output_path)
    synchronize()
    loader = get_test_loader(batch_size, data_root, 'CurveLanes', distributed)
    for data in dist_tqdm(loader):
        imgs, names, sizes = data
        with torch.no_grad():
            pred = net(imgs.cuda())
        for b, name in enumerate(names):
            single = {k: v[b:b + 1] for k, v in pred.items()}
            w, h = int(sizes[0][b]), int(sizes[1][b])
            coords = pred2coords(single, row_anchor, col_anchor, original_image_width=w, original_image_height=h)
            line_save_path = os.path.join(output_path, name.replace('.jpg', '.lines.txt'))
            os.makedirs(os.path.dirname(line_save_path), exist_ok=True)
            with open(line_save_path, 'w') as fp:
                for lane in coords:
                    for coord in lane:
                        fp.write('%d %d ' % coord)
                    fp.write('\n')


def combine_tusimple_test(work_dir, exp_name):
    size = get_world_size()
    all_res = []
    for i in range(size):
        output_path = os.path.join(work_dir, exp_name + '.%d.txt' % i)
        with open(output_path, 'r') as fp:
            res = fp.readlines()
        all_res.extend(res)
    names = set()
    all_res_no_dup = []
    for i, res in enumerate(all_res):
        pos = res.find('clips')
        name = res[pos:].split('\"')[0]
        if name not in names:
            names.add(name)
            all_res_no_dup.append(res)

    output_path = os.path.join(work_dir, exp_name + '.txt')
    with open(output_path, 'w') as fp:
        fp.writelines(all_res_no_dup)


def eval_lane(net, dataset, data_root, work_dir, griding_num, use_aux, distributed):
    """Returns the overall F1 (CULane) or accuracy (TuSimple) on rank 0, None elsewhere."""
    net.eval()
    result = None
    if dataset == 'CULane':
        run_test(net, data_root, 'culane_eval_tmp', work_dir, griding_num, use_aux, distributed)
        synchronize()  # wait for all results
        if is_main_process():
            res = call_culane_eval(data_root, 'culane_eval_tmp', work_dir)
            TP, FP, FN = 0, 0, 0
            for k, v in res.items():
                val = float(v['Fmeasure']) if 'nan' not in v['Fmeasure'] else 0
                val_tp, val_fp, val_fn = int(v['tp']), int(v['fp']), int(v['fn'])
                TP += val_tp
                FP += val_fp
                FN += val_fn
                dist_print(k, val)
            P = TP * 1.0 / (TP + FP)
            R = TP * 1.0 / (TP + FN)
            F = 2 * P * R / (P + R)
            dist_print(F)
            result = F
        synchronize()

    elif dataset == 'Tusimple':
        exp_name = 'tusimple_eval_tmp'
        run_test_tusimple(net, data_root, work_dir, exp_name, griding_num, use_aux, distributed)
        synchronize()  # wait for all results
        if is_main_process():
            combine_tusimple_test(work_dir, exp_name)
            res = LaneEval.bench_one_submit(os.path.join(work_dir, exp_name + '.txt'),
                                            os.path.join(data_root, 'test_label.json'))
            res = json.loads(res)
            for r in res:
                dist_print(r['name'], r['value'])
            result = res[0]['value']
        synchronize()
    return result


def read_helper(path):
    lines = open(path, 'r').readlines()[1:]
    lines = ' '.join(lines)
    values = lines.split(' ')[1::2]
    keys = lines.split(' ')[0::2]
    keys = [key[:-1] for key in keys]
    res = {k: v for k, v in zip(keys, values)}
    return res


CULANE_SPLITS = [
    ('normal', 'test0_normal.txt'),
    ('crowd', 'test1_crowd.txt'),
    ('hlight', 'test2_hlight.txt'),
    ('shadow', 'test3_shadow.txt'),
    ('noline', 'test4_noline.txt'),
    ('arrow', 'test5_arrow.txt'),
    ('curve', 'test6_curve.txt'),
    ('cross', 'test7_cross.txt'),
    ('night', 'test8_night.txt'),
]


def call_culane_eval(data_dir, exp_name, output_path):
    """Run the official C++ CULane evaluator (built with `make` in evaluation/culane) on every split."""
    if data_dir[-1] != '/':
        data_dir = data_dir + '/'
    detect_dir = os.path.join(output_path, exp_name) + '/'

    w_lane = 30
    iou = 0.5  # Set iou to 0.3 or 0.5
    im_w = 1640
    im_h = 590
    frame = 1

    if not os.path.exists(os.path.join(output_path, 'txt')):
        os.mkdir(os.path.join(output_path, 'txt'))

    eval_cmd = './evaluation/culane/evaluate'
    if platform.system() == 'Windows':
        eval_cmd = eval_cmd.replace('/', os.sep)

    res_all = {}
    for idx, (split, list_name) in enumerate(CULANE_SPLITS):
        list_file = os.path.join(data_dir, 'list/test_split', list_name)
        out_file = os.path.join(output_path, 'txt', 'out%d_%s.txt' % (idx, split))
        os.system('%s -a %s -d %s -i %s -l %s -w %s -t %s -c %s -r %s -f %s -o %s' %
                  (eval_cmd, data_dir, detect_dir, data_dir, list_file, w_lane, iou, im_w, im_h, frame, out_file))
        res_all['res_' + split] = read_helper(out_file)
    return res_all
