# Copyright (c) Open-CD. All rights reserved.
from argparse import ArgumentParser

from mmengine.model import revert_sync_batchnorm

from opencd.apis import inference_model, init_model, show_result_pyplot


def main():
    parser = ArgumentParser()
    parser.add_argument('img_from', help='Image file of the first timestamp')
    parser.add_argument('img_to', help='Image file of the second timestamp')
    parser.add_argument('config', help='Config file')
    parser.add_argument('checkpoint', help='Checkpoint file')
    parser.add_argument('--out-file', default=None, help='Path to output file')
    parser.add_argument(
        '--device', default='cuda:0', help='Device used for inference')
    parser.add_argument(
        '--opacity',
        type=float,
        default=0.5,
        help='Opacity of painted change map (0, 1].')
    parser.add_argument(
        '--with-labels',
        action='store_true',
        default=False,
        help='Whether to display the class labels.')
    parser.add_argument(
        '--title', default='result', help='The image identifier.')
    args = parser.parse_args()

    # build the model from a config file and a checkpoint file
    model = init_model(args.config, args.checkpoint, device=args.device)
    if args.device == 'cpu':
        model = revert_sync_batchnorm(model)
    # test a pair of images
    result = inference_model(model, [args.img_from, args.img_to])
    # show the results
    show_result_pyplot(
        model, args.img_from,
        result,
        title=args.title,
        opacity=args.opacity,
        withLabels=args.with_labels,
        draw_gt=False,
        show=False if args.out_file is not None else True,
        out_file=args.out_file)


if __name__ == '__main__':
    main()
