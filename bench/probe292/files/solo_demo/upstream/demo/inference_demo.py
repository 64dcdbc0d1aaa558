import argparse
import glob
import os
import os.path as osp

import mmcv
from mmdet.apis import init_detector, inference_detector, show_result_pyplot, show_result_ins


def parse_args():
    parser = argparse.ArgumentParser(description='SOLO / SOLOv2 image demo')
    parser.add_argument('--config', default='../configs/solov2/solov2_r101_fpn_8gpu_3x.py',
                        help='model config file')
    # download the checkpoint from model zoo and put it in `checkpoints/`
    parser.add_argument('--checkpoint', default='../checkpoints/SOLOv2_R101_3x.pth',
                        help='checkpoint file')
    parser.add_argument('--input', default='demo.jpg',
                        help='an image file or a directory of images')
    parser.add_argument('--out-dir', default='demo_out',
                        help='where to write the visualised results')
    parser.add_argument('--score-thr', type=float, default=0.25,
                        help='only draw instances above this score')
    parser.add_argument('--show', action='store_true',
                        help='show the result with matplotlib instead of writing it')
    return parser.parse_args()


def main():
    args = parse_args()

    # build the model from a config file and a checkpoint file
    model = init_detector(args.config, args.checkpoint, device='cuda:0')

    if osp.isdir(args.input):
        imgs = sorted(glob.glob(osp.join(args.input, '*.jpg')))
    else:
        imgs = [args.input]
    mmcv.mkdir_or_exist(args.out_dir)

    prog_bar = mmcv.ProgressBar(len(imgs))
    for img in imgs:
        # test a single image
        result = inference_detector(model, img)
        if args.show:
            img_show = show_result_ins(img, result, model.CLASSES, score_thr=args.score_thr)
            show_result_pyplot(img_show, result, model.CLASSES, score_thr=args.score_thr)
        else:
            out_file = osp.join(args.out_dir, osp.basename(img))
            show_result_ins(img, result, model.CLASSES, score_thr=args.score_thr, out_file=out_file)
        prog_bar.update()


if __name__ == '__main__':
    main()
