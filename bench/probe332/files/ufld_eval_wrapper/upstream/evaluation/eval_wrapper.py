from data.dataloader import get_test_loader
from evaluation.tusimple.lane2 import LaneEval
from utils.dist_utils import is_main_process, dist_print, get_rank, get_world_size, dist_tqdm, synchronize
import os, json, torch, scipy
import numpy as np
import platform
from scipy.optimize import leastsq
from data.constant import culane_col_anchor, culane_row_anchor


def generate_lines(out, out_ext, shape, names, output_path, griding_num, localization_type='abs', flip_updown=False):

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
                            fp.write('%d %d ' % (int(out_j[k, i] * col_sample_w * 1640 / 800) - 1, int(590 - k * 20) - 1))
                    fp.write('\n')


def generate_lines_local(dataset, imgs, names, output_path, mode='normal', row_anchor=None, col_anchor=None):
    batch_size, num_grid_row, num_cls_row, num_lane_row = imgs['loc_row'].shape
    batch_size, num_grid_col, num_cls_col, num_lane_col = imgs['loc_col'].shape

    max_indices_row = imgs['loc_row'].argmax(1).cpu()
    # n , num_cls, num_lanes
    valid_row = imgs['exist_row'].argmax(1).cpu()
    # n, num_cls, num_lanes

    max_indices_col = imgs['loc_col'].argmax(1).cpu()
    # n , num_cls, num_lanes
    valid_col = imgs['exist_col'].argmax(1).cpu()
    # n, num_cls, num_lanes

    imgs['loc_row'] = imgs['loc_row'].cpu()
    imgs['loc_col'] = imgs['loc_col'].cpu()
    row_lane_idx = [1, 2]
    col_lane_idx = [0, 3]
    local_width = 1

    for batch_idx in range(batch_size):

        name = names[batch_idx]
        line_save_path = os.path.join(output_path, name.replace('jpg', 'lines.txt'))
        save_dir, _ = os.path.split(line_save_path)
        if not os.path.exists(save_dir):
            os.makedirs(save_dir)
        with open(line_save_path, 'w') as fp:
            for row_lane in row_lane_idx:
                if valid_row[batch_idx, :, row_lane].sum() > num_cls_row / 2:
                    for cls_idx in range(num_cls_row):
                        if valid_row[batch_idx, cls_idx, row_lane]:
                            all_ind = torch.tensor(list(range(max(0, max_indices_row[batch_idx, cls_idx, row_lane] - local_width), min(num_grid_row - 1, max_indices_row[batch_idx, cls_idx, row_lane] + local_width) + 1)))
                            out_tmp = (imgs['loc_row'][batch_idx, all_ind, cls_idx, row_lane].softmax(0) * all_ind.float()).sum() + 0.5
                            out_tmp = out_tmp / (num_grid_row - 1) * 1640
                            fp.write('%.3f %.3f ' % (out_tmp, row_anchor[cls_idx] * 590))
                    fp.write('\n')

            for col_lane in col_lane_idx:
                if valid_col[batch_idx, :, col_lane].sum() > num_cls_col / 4:
                    for cls_idx in range(num_cls_col):
                        if valid_col[batch_idx, cls_idx, col_lane]:
                            all_ind = torch.tensor(list(range(max(0, max_indices_col[batch_idx, cls_idx, col_lane] - local_width), min(num_grid_col - 1, max_indices_col[batch_idx, cls_idx, col_lane] + local_width) + 1)))
                            out_tmp = (imgs['loc_col'][batch_idx, all_ind, cls_idx, col_lane].softmax(0) * all_ind.float()).sum() + 0.5
                            out_tmp = out_tmp / (num_grid_col - 1) * 590
                            fp.write('%.3f %.3f ' % (col_anchor[cls_idx] * 1640, out_tmp))
                    fp.write('\n')


def generate_lines_local_curve_combine(dataset, pred, shape, names, output_path, row_anchor=None, col_anchor=None):
    # CurveLanes images come in several resolutions; the evaluator rescales to 224x224,
    # so we write normalised coordinates scaled to the 2560x1440 reference frame.
    batch_size, num_grid_row, num_cls_row, num_lane_row = pred['loc_row'].shape
    batch_size, num_grid_col, num_cls_col, num_lane_col = pred['loc_col'].shape

    max_indices_row = pred['loc_row'].argmax(1).cpu()
    valid_row = pred['exist_row'].argmax(1).cpu()
    max_indices_col = pred['loc_col'].argmax(1).cpu()
    valid_col = pred['exist_col'].argmax(1).cpu()

    for batch_idx in range(batch_size):
        name = names[batch_idx]
        line_save_path = os.path.join(output_path, name.replace('jpg', 'lines.txt'))
        save_dir, _ = os.path.split(line_save_path)
        if not os.path.exists(save_dir):
            os.makedirs(save_dir)
        with open(line_save_path, 'w') as fp:
            for lane_idx in range(num_lane_row):
                if valid_row[batch_idx, :, lane_idx].sum() > num_cls_row / 4:
                    for cls_idx in range(num_cls_row):
                        if valid_row[batch_idx, cls_idx, lane_idx]:
                            x = (max_indices_row[batch_idx, cls_idx, lane_idx].item() + 0.5) / (num_grid_row - 1) * 2560
                            fp.write('%.3f %.3f ' % (x, row_anchor[cls_idx] * 1440))
                    fp.write('\n')
            for lane_idx in range(num_lane_col):
                if valid_col[batch_idx, :, lane_idx].sum() > num_cls_col / 4:
                    for cls_idx in range(num_cls_col):
                        if valid_col[batch_idx, cls_idx, lane_idx]:
                            y = (max_indices_col[batch_idx, cls_idx, lane_idx].item() + 0.5) / (num_grid_col - 1) * 1440
                            fp.write('%.3f %.3f ' % (col_anchor[cls_idx] * 2560, y))
                    fp.write('\n')


def run_test(dataset, net, data_root, exp_name, work_dir, distributed, crop_ratio, train_width, train_height, batch_size=8, row_anchor=None, col_anchor=None):
    # torch.backends.cudnn.benchmark = True
    output_path = os.path.join(work_dir, exp_name)
    if not os.path.exists(output_path) and is_main_process():
        os.mkdir(output_path)
    synchronize()
    loader = get_test_loader(batch_size, data_root, dataset, distributed, crop_ratio, train_width, train_height)
    # import pdb;pdb.set_trace()
    for i, data in enumerate(dist_tqdm(loader)):
        imgs, names = data
        imgs = imgs.cuda()
        with torch.no_grad():
            pred = net(imgs)

        if dataset == "CULane":
            generate_lines_local(dataset, pred, names, output_path, 'normal', row_anchor=row_anchor, col_anchor=col_anchor)
        elif dataset == 'CurveLanes':
            generate_lines_local_curve_combine(dataset, pred, imgs.shape, names, output_path, row_anchor=row_anchor, col_anchor=col_anchor)
        else:
            raise NotImplementedError


def generate_tusimple_lines(row_out, row_ext, col_out, col_ext, row_anchor=None, col_anchor=None, mode='2row2col'):
    tusimple_h_sample = np.linspace(160, 710, 56)
    row_num_grid, row_num_cls, row_num_lane = row_out.shape
    row_max_indices = row_out.argmax(0).cpu()
    # num_cls, num_lane
    row_valid = row_ext.argmax(0).cpu()
    # num_cls, num_lane
    row_out = row_out.cpu()

    col_num_grid, col_num_cls, col_num_lane = col_out.shape
    col_max_indices = col_out.argmax(0).cpu()
    # num_cls, num_lane
    col_valid = col_ext.argmax(0).cpu()
    # num_cls, num_lane
    col_out = col_out.cpu()

    if mode == 'normal' or mode == '2row2col':
        row_lane_list = [1, 2]
        col_lane_list = [0, 3]
    elif mode == '4row':
        row_lane_list = range(row_num_lane)
        col_lane_list = []
    elif mode == '4col':
        row_lane_list = []
        col_lane_list = range(col_num_lane)
    else:
        raise NotImplementedError

    local_width_row = 14
    local_width_col = 14
    min_lanepts_row = 3
    min_lanepts_col = 3

    all_lanes = []

    for row_lane_idx in row_lane_list:
        if row_valid[:, row_lane_idx].sum() > min_lanepts_row:
            cur_lane = []
            for row_cls_idx in range(row_num_cls):
                if row_valid[row_cls_idx, row_lane_idx]:
                    all_ind = torch.tensor(list(range(max(0, row_max_indices[row_cls_idx, row_lane_idx] - local_width_row), min(row_num_grid - 1, row_max_indices[row_cls_idx, row_lane_idx] + local_width_row) + 1)))
                    coord = (row_out[all_ind, row_cls_idx, row_lane_idx].softmax(0) * all_ind.float()).sum() + 0.5
                    coord_x = coord / (row_num_grid - 1) * 1280
                    coord_y = row_anchor[row_cls_idx] * 720
                    cur_lane.append(int(coord_x))
                else:
                    cur_lane.append(-2)
                    # cur_lane.append((coord_x, coord_y))
            # cur_lane = np.array(cur_lane)
            # p = np.polyfit(cur_lane[:,1], cur_lane[:,0], deg = 2)
            # top_lim = min(cur_lane[:,1])
            # # all_lane_interps.append((p, top_lim))
            # lanes_on_tusimple = np.polyval(p, tusimple_h_sample)
            # lanes_on_tusimple = np.round(lanes_on_tusimple)
            # lanes_on_tusimple = lanes_on_tusimple.astype(int)
            # lanes_on_tusimple[lanes_on_tusimple < 0] = -2
            # lanes_on_tusimple[lanes_on_tusimple > 1280] = -2
            # lanes_on_tusimple[tusimple_h_sample < top_lim] = -2
            # all_lanes.append(lanes_on_tusimple.tolist())
            all_lanes.append(cur_lane)
        else:
            # all_lanes.append([-2]*56)
            pass

    for col_lane_idx in col_lane_list:
        if col_valid[:, col_lane_idx].sum() > min_lanepts_col:
            cur_lane = []
            for col_cls_idx in range(col_num_cls):
                if col_valid[col_cls_idx, col_lane_idx]:
                    all_ind = torch.tensor(list(range(max(0, col_max_indices[col_cls_idx, col_lane_idx] - local_width_col), min(col_num_grid - 1, col_max_indices[col_cls_idx, col_lane_idx] + local_width_col) + 1)))
                    coord = (col_out[all_ind, col_cls_idx, col_lane_idx].softmax(0) * all_ind.float()).sum() + 0.5
                    coord_y = coord / (col_num_grid - 1) * 720
                    coord_x = col_anchor[col_cls_idx] * 1280
                    cur_lane.append((coord_x, coord_y))
            cur_lane = np.array(cur_lane)
            top_lim = min(cur_lane[:, 1])
            bot_lim = max(cur_lane[:, 1])

            p = np.polyfit(cur_lane[:, 1], cur_lane[:, 0], deg=2)
            lanes_on_tusimple = np.polyval(p, tusimple_h_sample)

            lanes_on_tusimple = np.round(lanes_on_tusimple)
            lanes_on_tusimple = lanes_on_tusimple.astype(int)
            lanes_on_tusimple[lanes_on_tusimple < 0] = -2
            lanes_on_tusimple[lanes_on_tusimple > 1280] = -2
            lanes_on_tusimple[tusimple_h_sample < top_lim] = -2
            lanes_on_tusimple[tusimple_h_sample > bot_lim] = -2
            all_lanes.append(lanes_on_tusimple.tolist())
        else:
            # all_lanes.append([-2]*56)
            pass
    # import pdb; pdb.set_trace()
    return all_lanes


def run_test_tusimple(net, data_root, work_dir, exp_name, distributed, crop_ratio, train_width, train_height, batch_size=8, row_anchor=None, col_anchor=None):
    output_path = os.path.join(work_dir, exp_name + '.%d.txt' % get_rank())
    fp = open(output_path, 'w')
    loader = get_test_loader(batch_size, data_root, 'Tusimple', distributed, crop_ratio, train_width, train_height)
    for data in dist_tqdm(loader):
        imgs, names = data
        imgs = imgs.cuda(non_blocking=True)
        with torch.no_grad():
            pred = net(imgs)
        for b_idx, name in enumerate(names):
            tmp_dict = {}
            tmp_dict['lanes'] = generate_tusimple_lines(pred['loc_row'][b_idx], pred['exist_row'][b_idx], pred['loc_col'][b_idx], pred['exist_col'][b_idx], row_anchor=row_anchor, col_anchor=col_anchor, mode='4row')
            tmp_dict['h_samples'] = [160, 170, 180, 190, 200, 210, 220, 230, 240, 250, 260, 270, 280, 290, 300, 310, 320, 330, 340, 350, 360, 370, 380, 390, 400, 410, 420, 430, 440, 450, 460,
                                     470, 480, 490, 500, 510, 520, 530, 540, 550, 560, 570, 580, 590, 600, 610, 620, 630, 640, 650, 660, 670, 680, 690, 700, 710]
            tmp_dict['raw_file'] = name
            tmp_dict['run_time'] = 10
            json_str = json.dumps(tmp_dict)

            fp.write(json_str + '\n')
    fp.close()


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


def eval_lane(net, cfg, ep=None, logger=None):
    net.eval()
    if cfg.dataset == 'CurveLanes':
        if not cfg.tta:
            run_test(cfg.dataset, net, cfg.data_root, 'curvelanes_eval_tmp', cfg.test_work_dir, cfg.distributed, cfg.crop_ratio, cfg.train_width, cfg.train_height, row_anchor=cfg.row_anchor, col_anchor=cfg.col_anchor)
        else:
            raise NotImplementedError('TTA is only implemented for CULane')
        synchronize()   # wait for all results
        if is_main_process():
            res = call_curvelane_eval(cfg.data_root, 'curvelanes_eval_tmp', cfg.test_work_dir)
            TP, FP, FN = 0, 0, 0
            for k, v in res.items():
                val = float(v['Fmeasure']) if 'nan' not in v['Fmeasure'] else 0
                val_tp, val_fp, val_fn = int(v['tp']), int(v['fp']), int(v['fn'])
                val_p, val_r, val_f1 = float(v['precision']), float(v['recall']), float(v['Fmeasure'])
                TP += val_tp
                FP += val_fp
                FN += val_fn
                dist_print(k, val)
                if logger is not None:
                    if k == 'res_cross':
                        logger.add_scalar('CuEval_cls/' + k, val_fp, global_step=ep)
                        continue
                    logger.add_scalar('CuEval_cls/' + k, val, global_step=ep)
            if TP + FP == 0:
                P = 0
                print("nearly no results!")
            else:
                P = TP * 1.0 / (TP + FP)
            if TP + FN == 0:
                R = 0
                print("nearly no results!")
            else:
                R = TP * 1.0 / (TP + FN)
            if (P + R) == 0:
                F = 0
            else:
                F = 2 * P * R / (P + R)
            dist_print(F)
            if logger is not None:
                logger.add_scalar('CuEval/total', F, global_step=ep)
                logger.add_scalar('CuEval/P', P, global_step=ep)
                logger.add_scalar('CuEval/R', R, global_step=ep)

        synchronize()
        if is_main_process():
            return F
        else:
            return None
    elif cfg.dataset == 'CULane':
        run_test(cfg.dataset, net, cfg.data_root, 'culane_eval_tmp', cfg.test_work_dir, cfg.distributed, cfg.crop_ratio, cfg.train_width, cfg.train_height, row_anchor=cfg.row_anchor, col_anchor=cfg.col_anchor)
        synchronize()    # wait for all results
        if is_main_process():
            res = call_culane_eval(cfg.data_root, 'culane_eval_tmp', cfg.test_work_dir)
            TP, FP, FN = 0, 0, 0
            for k, v in res.items():
                val = float(v['Fmeasure']) if 'nan' not in v['Fmeasure'] else 0
                val_tp, val_fp, val_fn = int(v['tp']), int(v['fp']), int(v['fn'])
                TP += val_tp
                FP += val_fp
                FN += val_fn
                dist_print(k, val)
                if logger is not None:
                    if k == 'res_cross':
                        logger.add_scalar('CuEval_cls/' + k, val_fp, global_step=ep)
                        continue
                    logger.add_scalar('CuEval_cls/' + k, val, global_step=ep)
            if TP + FP == 0:
                P = 0
                print("nearly no results!")
            else:
                P = TP * 1.0 / (TP + FP)
            if TP + FN == 0:
                R = 0
                print("nearly no results!")
            else:
                R = TP * 1.0 / (TP + FN)
            if (P + R) == 0:
                F = 0
            else:
                F = 2 * P * R / (P + R)
            dist_print(F)
            if logger is not None:
                logger.add_scalar('CuEval/total', F, global_step=ep)
                logger.add_scalar('CuEval/P', P, global_step=ep)
                logger.add_scalar('CuEval/R', R, global_step=ep)

        synchronize()
        if is_main_process():
            return F
        else:
            return None
    elif cfg.dataset == 'Tusimple':
        exp_name = 'tusimple_eval_tmp'
        run_test_tusimple(net, cfg.data_root, cfg.test_work_dir, exp_name, cfg.distributed, cfg.crop_ratio, cfg.train_width, cfg.train_height, row_anchor=cfg.row_anchor, col_anchor=cfg.col_anchor)
        synchronize()  # wait for all results
        if is_main_process():
            combine_tusimple_test(cfg.test_work_dir, exp_name)
            res = LaneEval.bench_one_submit(os.path.join(cfg.test_work_dir, exp_name + '.txt'), os.path.join(cfg.data_root, 'test_label.json'))
            res = json.loads(res)
            for r in res:
                dist_print(r['name'], r['value'])
                if logger is not None:
                    logger.add_scalar('TuEval/' + r['name'], r['value'], global_step=ep)
        synchronize()
        if is_main_process():
            for r in res:
                if r['name'] == 'F1':
                    return r['value']
        else:
            return None


def read_helper(path):
    lines = open(path, 'r').readlines()[1:]
    lines = ' '.join(lines)
    values = lines.split(' ')[1::2]
    keys = lines.split(' ')[0::2]
    keys = [key[:-1] for key in keys]
    res = {k: v for k, v in zip(keys, values)}
    return res


def call_culane_eval(data_dir, exp_name, output_path):
    if data_dir[-1] != '/':
        data_dir = data_dir + '/'
    detect_dir = os.path.join(output_path, exp_name) + '/'

    w_lane = 30
    iou = 0.5  # Set iou to 0.3 or 0.5
    im_w = 1640
    im_h = 590
    frame = 1
    list0 = os.path.join(data_dir, 'list/test_split/test0_normal.txt')
    list1 = os.path.join(data_dir, 'list/test_split/test1_crowd.txt')
    list2 = os.path.join(data_dir, 'list/test_split/test2_hlight.txt')
    list3 = os.path.join(data_dir, 'list/test_split/test3_shadow.txt')
    list4 = os.path.join(data_dir, 'list/test_split/test4_noline.txt')
    list5 = os.path.join(data_dir, 'list/test_split/test5_arrow.txt')
    list6 = os.path.join(data_dir, 'list/test_split/test6_curve.txt')
    list7 = os.path.join(data_dir, 'list/test_split/test7_cross.txt')
    list8 = os.path.join(data_dir, 'list/test_split/test8_night.txt')
    if not os.path.exists(os.path.join(output_path, 'txt')):
        os.mkdir(os.path.join(output_path, 'txt'))
    out0 = os.path.join(output_path, 'txt', 'out0_normal.txt')
    out1 = os.path.join(output_path, 'txt', 'out1_crowd.txt')
    out2 = os.path.join(output_path, 'txt', 'out2_hlight.txt')
    out3 = os.path.join(output_path, 'txt', 'out3_shadow.txt')
    out4 = os.path.join(output_path, 'txt', 'out4_noline.txt')
    out5 = os.path.join(output_path, 'txt', 'out5_arrow.txt')
    out6 = os.path.join(output_path, 'txt', 'out6_curve.txt')
    out7 = os.path.join(output_path, 'txt', 'out7_cross.txt')
    out8 = os.path.join(output_path, 'txt', 'out8_night.txt')

    eval_cmd = './evaluation/culane/culane_evaluator'
    if platform.system() == 'Windows':
        eval_cmd = eval_cmd.replace('/', os.sep)

    lists = [list0, list1, list2, list3, list4, list5, list6, list7, list8]
    outs = [out0, out1, out2, out3, out4, out5, out6, out7, out8]
    for lst, out in zip(lists, outs):
        os.system('%s -a %s -d %s -i %s -l %s -w %s -t %s -c %s -r %s -f %s -o %s' % (eval_cmd, data_dir, detect_dir, data_dir, lst, w_lane, iou, im_w, im_h, frame, out))
    res_all = {}
    res_all['res_normal'] = read_helper(out0)
    res_all['res_crowd'] = read_helper(out1)
    res_all['res_night'] = read_helper(out8)
    res_all['res_noline'] = read_helper(out4)
    res_all['res_shadow'] = read_helper(out3)
    res_all['res_arrow'] = read_helper(out5)
    res_all['res_hlight'] = read_helper(out2)
    res_all['res_curve'] = read_helper(out6)
    res_all['res_cross'] = read_helper(out7)
    return res_all


def call_curvelane_eval(data_dir, exp_name, output_path):
    if data_dir[-1] != '/':
        data_dir = data_dir + '/'
    detect_dir = os.path.join(output_path, exp_name) + '/'

    w_lane = 5
    iou = 0.5  # Set iou to 0.3 or 0.5
    im_w = 224
    im_h = 224
    x_factor = 224 / 2560
    y_factor = 224 / 1440
    frame = 1
    list0 = os.path.join(data_dir, 'valid', 'valid_for_culane_style.txt')
    if not os.path.exists(os.path.join(output_path, 'txt')):
        os.mkdir(os.path.join(output_path, 'txt'))
    out0 = os.path.join(output_path, 'txt', 'out0_curve.txt')

    eval_cmd = './evaluation/culane/culane_evaluator_curvelanes'
    if platform.system() == 'Windows':
        eval_cmd = eval_cmd.replace('/', os.sep)

    os.system('%s -s -a %s -d %s -i %s -l %s -w %s -t %s -c %s -r %s -f %s -o %s -x %s -y %s' % (eval_cmd, data_dir, detect_dir, data_dir, list0, w_lane, iou, im_w, im_h, frame, out0, x_factor, y_factor))
    res_all = {}
    res_all['res_curve'] = read_helper(out0)
    return res_all
