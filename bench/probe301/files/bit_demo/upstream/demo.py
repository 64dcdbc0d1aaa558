from argparse import ArgumentParser

import utils
import torch
from models.basic_model import CDEvaluator

import os

"""
quick start

sample files in ./samples

save prediction files in the ./samples/predict

"""


def get_args():
    # ------------
    # args
    # ------------
    parser = ArgumentParser()
    parser.add_argument('--gpu_ids', type=str, default='0', help='gpu ids: e.g. 0  0,1,2, 0,2. use -1 for CPU')
    parser.add_argument('--project_name', default='BIT_LEVIR', type=str)
    parser.add_argument('--checkpoint_root', default='checkpoints', type=str)
    parser.add_argument('--output_folder', default='samples/predict', type=str)

    # data
    parser.add_argument('--num_workers', default=0, type=int)
    parser.add_argument('--dataset', default='CDDataset', type=str)
    parser.add_argument('--data_name', default='quick_start', type=str)

    parser.add_argument('--batch_size', default=1, type=int)
    parser.add_argument('--split', default="demo", type=str)
    parser.add_argument('--img_size', default=256, type=int)

    # model
    parser.add_argument('--n_class', default=2, type=int)
    parser.add_argument('--net_G', default='base_transformer_pos_s4_dd8_dedim8', type=str,
                        help='base_resnet18 | base_transformer_pos_s4_dd8 | base_transformer_pos_s4_dd8_dedim8|')
    parser.add_argument('--checkpoint_name', default='best_ckpt.pt', type=str)
    parser.add_argument('--large_tile', action='store_true',
                        help='run sliding-window inference on full scenes in samples/A, samples/B')
    parser.add_argument('--tile', default=256, type=int)
    parser.add_argument('--overlap', default=32, type=int)

    args = parser.parse_args()
    return args


if __name__ == '__main__':

    args = get_args()
    utils.get_device(args)
    device = torch.device("cuda:%s" % args.gpu_ids[0]
                          if torch.cuda.is_available() and len(args.gpu_ids) > 0
                          else "cpu")
    args.checkpoint_dir = os.path.join(args.checkpoint_root, args.project_name)
    os.makedirs(args.output_folder, exist_ok=True)

    log_path = os.path.join(args.output_folder, 'log_vis.txt')

    data_loader = utils.get_loader(args.data_name, img_size=args.img_size,
                                   batch_size=args.batch_size,
                                   split=args.split, is_train=False)

    model = CDEvaluator(args)
    model.load_checkpoint(args.checkpoint_name)
    model.eval()

    if args.large_tile:
        import numpy as np
        from PIL import Image
        from misc.imutils import save_image
        scene_dir = os.path.join('samples')
        for name in sorted(os.listdir(os.path.join(scene_dir, 'A'))):
            img_a = np.asarray(Image.open(os.path.join(scene_dir, 'A', name)).convert('RGB'), dtype=np.float32)
            img_b = np.asarray(Image.open(os.path.join(scene_dir, 'B', name)).convert('RGB'), dtype=np.float32)
            # same normalisation as CDDataset: [0, 255] -> [-1, 1]
            ta = torch.from_numpy(img_a / 127.5 - 1.0).permute(2, 0, 1).contiguous()
            tb = torch.from_numpy(img_b / 127.5 - 1.0).permute(2, 0, 1).contiguous()
            pred = model.predict_large_tile(ta, tb, tile=args.tile, overlap=args.overlap)
            save_image(pred, os.path.join(args.output_folder, name.replace('.jpg', '.png')))
            print('process: %s (%dx%d)' % (name, pred.shape[0], pred.shape[1]))
    else:
        for i, batch in enumerate(data_loader):
            name = batch['name']
            print('process: %s' % name)
            score_map = model._forward_pass(batch)
            model._save_predictions()
