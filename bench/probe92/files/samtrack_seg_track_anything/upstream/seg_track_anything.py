import os
import gc
import json
from argparse import ArgumentParser

import cv2
import numpy as np
import torch
import imageio
from PIL import Image
from scipy.ndimage import binary_dilation

from SegTracker import SegTracker
from aot_tracker import _palette


# ---------------------------------------------------------------------------------------------
# default arguments (model_args.py in the web demo)
# ---------------------------------------------------------------------------------------------
aot_args = {
    'phase': 'PRE_YTB_DAV',
    'model': 'r50_deaotl',
    'model_path': 'ckpt/R50_DeAOTL_PRE_YTB_DAV.pth',
    'long_term_mem_gap': 9999,
    'max_len_long_term': 9999,
    'gpu_id': 0,
}
sam_args = {
    'sam_checkpoint': "ckpt/sam_vit_b_01ec64.pth",
    'model_type': "vit_b",
    'generator_args': {
        'points_per_side': 16,
        'pred_iou_thresh': 0.8,
        'stability_score_thresh': 0.9,
        'crop_n_layers': 1,
        'crop_n_points_downscale_factor': 2,
        'min_mask_region_area': 200,
    },
    'gpu_id': 0,
}
segtracker_args = {
    'sam_gap': 10,  # the interval to run sam to segment new objects
    'min_area': 200,  # minimal mask area to add a new mask as a new object
    'max_obj_num': 255,  # maximal object number to track in a video
    'min_new_obj_iou': 0.8,  # the background area ratio of a new object should > 80%
}


def save_prediction(pred_mask, output_dir, file_name):
    save_mask = Image.fromarray(pred_mask.astype(np.uint8))
    save_mask = save_mask.convert(mode='P')
    save_mask.putpalette(_palette)
    save_mask.save(os.path.join(output_dir, file_name))


def colorize_mask(pred_mask):
    save_mask = Image.fromarray(pred_mask.astype(np.uint8))
    save_mask = save_mask.convert(mode='P')
    save_mask.putpalette(_palette)
    save_mask = save_mask.convert(mode='RGB')
    return np.array(save_mask)


def draw_mask(img, mask, alpha=0.5, id_countour=False):
    img_mask = np.zeros_like(img)
    img_mask = img
    if id_countour:
        # very slow ~ 1s per image
        obj_ids = np.unique(mask)
        obj_ids = obj_ids[obj_ids != 0]

        for id in obj_ids:
            # Overlay color on  binary mask
            if id <= 255:
                color = _palette[id * 3:id * 3 + 3]
            else:
                color = [0, 0, 0]
            foreground = img * (1 - alpha) + np.ones_like(img) * alpha * np.array(color)
            binary_mask = (mask == id)

            # Compose image
            img_mask[binary_mask] = foreground[binary_mask]

            countours = binary_dilation(binary_mask, iterations=1) ^ binary_mask
            img_mask[countours, :] = 0
    else:
        binary_mask = (mask != 0)
        countours = binary_dilation(binary_mask, iterations=1) ^ binary_mask
        foreground = img * (1 - alpha) + colorize_mask(mask) * alpha
        img_mask[binary_mask] = foreground[binary_mask]
        img_mask[countours, :] = 0

    return img_mask.astype(img.dtype)


def parse_args():
    parser = ArgumentParser()
    parser.add_argument('--video', required=True)
    parser.add_argument('--output_dir', default='./tracking_results')
    parser.add_argument('--sam_gap', type=int, default=segtracker_args['sam_gap'])
    parser.add_argument('--gpu', type=int, default=0, help='card index used by both SAM and DeAOT')
    parser.add_argument('--save_gif', action='store_true')
    return parser.parse_args()


def main():
    args = parse_args()
    segtracker_args['sam_gap'] = args.sam_gap
    sam_args['gpu_id'] = args.gpu
    aot_args['gpu_id'] = args.gpu

    video_name = os.path.splitext(os.path.basename(args.video))[0]
    io_args = {
        'input_video': args.video,
        'output_mask_dir': os.path.join(args.output_dir, video_name + '_masks'),
        'output_video': os.path.join(args.output_dir, video_name + '_seg.mp4'),
        'output_gif': os.path.join(args.output_dir, video_name + '_seg.gif'),
    }
    os.makedirs(io_args['output_mask_dir'], exist_ok=True)

    # source video to segment
    cap = cv2.VideoCapture(io_args['input_video'])
    fps = cap.get(cv2.CAP_PROP_FPS)
    # output masks
    output_dir = io_args['output_mask_dir']
    pred_list = []
    masked_pred_list = []

    torch.cuda.empty_cache()  # start from a clean allocator
    gc.collect()
    sam_gap = segtracker_args['sam_gap']
    frame_idx = 0
    segtracker = SegTracker(segtracker_args, sam_args, aot_args)
    segtracker.restart_tracker()

    with torch.cuda.amp.autocast():
        while cap.isOpened():
            ret, frame = cap.read()
            if not ret:
                break
            frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)

            if frame_idx == 0:
                pred_mask = segtracker.seg(frame)
                torch.cuda.empty_cache()  # drop SAM everything-mode activations
                gc.collect()
                segtracker.add_reference(frame, pred_mask)
            elif (frame_idx % sam_gap) == 0:
                seg_mask = segtracker.seg(frame)
                torch.cuda.empty_cache()  # same, before the tracker runs
                gc.collect()
                track_mask = segtracker.track(frame)
                # find new objects, and update tracker with new objects
                new_obj_mask = segtracker.find_new_objs(track_mask, seg_mask)
                save_prediction(new_obj_mask, output_dir, str(frame_idx) + '_new.png')
                pred_mask = track_mask + new_obj_mask
                # segtracker.restart_tracker()
                segtracker.add_reference(frame, pred_mask)
            else:
                pred_mask = segtracker.track(frame, update_memory=True)
            torch.cuda.empty_cache()
            gc.collect()

            save_prediction(pred_mask, output_dir, str(frame_idx) + '.png')
            # masked_frame = draw_mask(frame,pred_mask)
            # masked_pred_list.append(masked_frame)
            # plt.imshow(masked_frame)
            # plt.show()

            pred_list.append(pred_mask)

            print("processed frame {}, obj_num {}".format(frame_idx, segtracker.get_obj_num()), end='\r')
            frame_idx += 1
        cap.release()
        print('\nfinished')

    # draw pred mask on frame and save as a video
    cap = cv2.VideoCapture(io_args['input_video'])
    fps = cap.get(cv2.CAP_PROP_FPS)
    width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
    height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    fourcc = cv2.VideoWriter_fourcc(*"mp4v")
    out = cv2.VideoWriter(io_args['output_video'], fourcc, fps, (width, height))

    frame_idx = 0
    while cap.isOpened():
        ret, frame = cap.read()
        if not ret:
            break
        frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        pred_mask = pred_list[frame_idx]
        masked_frame = draw_mask(frame, pred_mask)
        masked_pred_list.append(masked_frame)
        masked_frame = cv2.cvtColor(masked_frame, cv2.COLOR_RGB2BGR)
        out.write(masked_frame)
        print('frame {} writed'.format(frame_idx), end='\r')
        frame_idx += 1
    out.release()
    cap.release()
    print("\n{} saved".format(io_args['output_video']))
    print('\nfinished')

    if args.save_gif:
        # save colorized masks as a gif
        imageio.mimsave(io_args['output_gif'], masked_pred_list, fps=fps)
        print("{} saved".format(io_args['output_gif']))

    # manually release memory (after cuda out of memory)
    del segtracker
    torch.cuda.empty_cache()  # release what the tracker still holds
    gc.collect()


if __name__ == '__main__':
    main()
