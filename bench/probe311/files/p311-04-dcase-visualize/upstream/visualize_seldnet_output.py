#
# Loads a trained SELDnet and plots its ACCDOA output against the reference for one recording.
# Also used to dump the eval-set CSVs for the challenge submission (--dump_eval).
#
import os
import sys
import argparse
import numpy as np
import torch
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plot

import cls_data_generator
import cls_feature_class
import parameters
import seldnet_model
from seld import get_accdoa_labels, get_multi_accdoa_labels
from cls_compute_seld_results import reshape_3Dto2D


def collect_classwise_data(_in_dict):
    _out_dict = {}
    for _key in _in_dict.keys():
        for _seld in _in_dict[_key]:
            if _seld[0] not in _out_dict:
                _out_dict[_seld[0]] = []
            _out_dict[_seld[0]].append([_key, _seld[0], _seld[1], _seld[2], _seld[3]])
    return _out_dict


def plot_func(plot_data, hop_len_s, ind, plot_x_ax=False, plot_y_ax=False):
    cmap = ['b', 'r', 'g', 'y', 'k', 'c', 'm', 'b', 'r', 'g', 'y', 'k', 'c', 'm']
    for class_ind in plot_data.keys():
        time_ax = np.array(plot_data[class_ind])[:, 0] * hop_len_s
        y_ax = np.array(plot_data[class_ind])[:, ind]
        plot.plot(time_ax, y_ax, marker='.', color=cmap[class_ind], linestyle='None', markersize=4)
    plot.grid()
    plot.xlim([0, 60])
    if not plot_x_ax:
        plot.gca().axes.set_xticklabels([])

    if not plot_y_ax:
        plot.gca().axes.set_yticklabels([])


def parse_args(argv):
    parser = argparse.ArgumentParser(description='Visualise / dump SELDnet predictions')
    parser.add_argument('checkpoint', help='path to <unique_name>_model.h5')
    parser.add_argument('--task_id', default='3')
    parser.add_argument('--gpu', type=int, default=0, help='GPU index to run inference on (-1 for CPU)')
    parser.add_argument('--dump_eval', action='store_true', help='write DCASE csv files for the eval split')
    parser.add_argument('--out_dir', default='results_vis')
    parser.add_argument('--max_files', type=int, default=0)
    return parser.parse_args(argv)


def pick_device(gpu):
    if gpu >= 0 and torch.cuda.is_available():
        return torch.device('cuda:{}'.format(gpu))
    return torch.device('cpu')


def main(argv):
    args = parse_args(argv[1:])
    params = parameters.get_params(args.task_id)
    params['batch_size'] = 1
    device = pick_device(args.gpu)
    print('Running inference on {}'.format(device))

    # load the test data generator
    data_gen_test = cls_data_generator.DataGenerator(
        params=params, split=[4] if not args.dump_eval else None, shuffle=False, is_eval=args.dump_eval, per_file=True
    )
    data_in, data_out = data_gen_test.get_data_sizes()
    dump_figures = True

    # CHOOSE THE MODEL WHOSE OUTPUT YOU WANT TO VISUALIZE
    model = seldnet_model.SeldModel(data_in, data_out, params)
    checkpoint = torch.load(args.checkpoint, map_location='cuda:{}'.format(args.gpu) if device.type == 'cuda' else 'cpu')
    model.load_state_dict(checkpoint)
    model = model.to(device)
    model.eval()

    os.makedirs(args.out_dir, exist_ok=True)
    if dump_figures:
        dump_folder = os.path.join(args.out_dir, 'dump_dir', os.path.basename(args.checkpoint).split('.')[0])
        os.makedirs(dump_folder, exist_ok=True)

    test_filelist = data_gen_test.get_filelist()
    feat_cls = cls_feature_class.FeatureClass(params)
    file_cnt = 0
    with torch.no_grad():
        for data, target in data_gen_test.generate():
            data = torch.tensor(data, dtype=torch.float32).to(device)
            output = model(data)

            if params['multi_accdoa'] is True:
                sed_pred0, doa_pred0, sed_pred1, doa_pred1, sed_pred2, doa_pred2 = get_multi_accdoa_labels(
                    output.detach().cpu().numpy(), params['unique_classes'])
                sed_pred = reshape_3Dto2D(sed_pred0) + reshape_3Dto2D(sed_pred1) + reshape_3Dto2D(sed_pred2)
                doa_pred = reshape_3Dto2D(doa_pred0)
            else:
                sed_pred, doa_pred = get_accdoa_labels(output.detach().cpu().numpy(), params['unique_classes'])
                sed_pred = reshape_3Dto2D(sed_pred)
                doa_pred = reshape_3Dto2D(doa_pred)

            output_dict = {}
            for frame_cnt in range(sed_pred.shape[0]):
                for class_cnt in range(sed_pred.shape[1]):
                    if sed_pred[frame_cnt][class_cnt] > 0.5:
                        if frame_cnt not in output_dict:
                            output_dict[frame_cnt] = []
                        output_dict[frame_cnt].append([class_cnt,
                                                       doa_pred[frame_cnt][class_cnt],
                                                       doa_pred[frame_cnt][class_cnt + params['unique_classes']],
                                                       doa_pred[frame_cnt][class_cnt + 2 * params['unique_classes']]])

            out_csv = os.path.join(args.out_dir, test_filelist[file_cnt].replace('.npy', '.csv'))
            data_gen_test.write_output_format_file(out_csv, output_dict)

            if dump_figures and not args.dump_eval:
                ref_file = os.path.join(params['dataset_dir'], 'metadata_dev', test_filelist[file_cnt].replace('.npy', '.csv'))
                ref_dict_polar = feat_cls.load_output_format_file(ref_file)
                ref_dict = feat_cls.convert_output_format_polar_to_cartesian(ref_dict_polar)
                ref_data = collect_classwise_data(ref_dict)
                pred_data = collect_classwise_data(output_dict)

                nb_classes = len(feat_cls.get_classes())
                plot.figure(figsize=(20, 15))
                plot.subplot(321), plot.title('reference - x'), plot_func(ref_data, params['label_hop_len_s'], ind=2)
                plot.subplot(322), plot.title('prediction - x'), plot_func(pred_data, params['label_hop_len_s'], ind=2)
                plot.subplot(323), plot.title('reference - y'), plot_func(ref_data, params['label_hop_len_s'], ind=3)
                plot.subplot(324), plot.title('prediction - y'), plot_func(pred_data, params['label_hop_len_s'], ind=3)
                plot.subplot(325), plot.title('reference - z'), plot_func(ref_data, params['label_hop_len_s'], ind=4, plot_x_ax=True)
                plot.subplot(326), plot.title('prediction - z'), plot_func(pred_data, params['label_hop_len_s'], ind=4, plot_x_ax=True)
                ax0 = plot.subplot(321)
                ax0.legend([str(c) for c in range(nb_classes)], loc='upper right', fontsize=6)
                fig_name = '{}'.format(os.path.join(dump_folder, '{}.jpg'.format(test_filelist[file_cnt].split('.')[0])))
                print('saving figure : {}'.format(fig_name))
                plot.savefig(fig_name, dpi=100)
                plot.close()

            file_cnt += 1
            if args.max_files and file_cnt >= args.max_files:
                break

    if device.type == 'cuda':
        torch.cuda.empty_cache()
    print('Wrote {} files to {}'.format(file_cnt, args.out_dir))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
