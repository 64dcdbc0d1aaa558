import os
import sys
import argparse
import time

import cv2
import numpy as np
import torch

sys.path.insert(0, '../lib')
sys.path.insert(0, '../model')
from utils import misc_utils, visual_utils, nms_utils


def select_device(requested):
    """Pick the device for the demo. Falls back to CPU when no GPU is visible,
    which is slow (the ROIAlign layer has a CPU path) but handy for debugging."""
    if requested.startswith('cuda') and torch.cuda.is_available():
        return torch.device(requested)
    if requested.startswith('cuda'):
        print('CUDA requested but not available, running the demo on CPU')
    return torch.device('cpu')


def sync(device):
    # make the forward timing honest on GPU, kernels are launched asynchronously
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


def inference(args, config, network):
    # model_path
    misc_utils.ensure_dir('outputs')
    saveDir = os.path.join('../model', args.model_dir, config.model_dir)
    model_file = os.path.join(saveDir,
            'dump-{}.pth'.format(args.resume_weights))
    assert os.path.exists(model_file)
    device = select_device(args.device)
    # build network
    net = network()
    net.eval()
    check_point = torch.load(model_file, map_location=torch.device('cpu'))
    net.load_state_dict(check_point['state_dict'])
    net.to(device)
    # get data
    image, resized_img, im_info = get_data(
            args.img_path, config.eval_image_short_size, config.eval_image_max_size)
    resized_img = resized_img.to(device)
    im_info = im_info.to(device)
    sync(device)
    tic = time.time()
    with torch.no_grad():
        pred_boxes = net(resized_img, im_info)
    sync(device)
    print('forward time: {:.1f} ms'.format((time.time() - tic) * 1000))
    pred_boxes = pred_boxes.cpu().numpy()
    if config.test_nms_method == 'set_nms':
        assert pred_boxes.shape[-1] > 6, "Not EMD Network! Using normal_nms instead."
        assert pred_boxes.shape[-1] % 6 == 0, "Prediction dim Error!"
        top_k = pred_boxes.shape[-1] // 6
        n = pred_boxes.shape[0]
        pred_boxes = pred_boxes.reshape(-1, 6)
        idents = np.tile(np.arange(n)[:, None], (1, top_k)).reshape(-1, 1)
        pred_boxes = np.hstack((pred_boxes, idents))
        keep = pred_boxes[:, 4] > args.thresh
        pred_boxes = pred_boxes[keep]
        keep = nms_utils.set_cpu_nms(pred_boxes, 0.5)
        pred_boxes = pred_boxes[keep]
    elif config.test_nms_method == 'normal_nms':
        assert pred_boxes.shape[-1] % 6 == 0, "Prediction dim Error!"
        pred_boxes = pred_boxes.reshape(-1, 6)
        keep = pred_boxes[:, 4] > args.thresh
        pred_boxes = pred_boxes[keep]
        keep = nms_utils.cpu_nms(pred_boxes, config.test_nms)
        pred_boxes = pred_boxes[keep]
    elif config.test_nms_method == 'none':
        assert pred_boxes.shape[-1] % 6 == 0, "Prediction dim Error!"
        pred_boxes = pred_boxes.reshape(-1, 6)
        keep = pred_boxes[:, 4] > args.thresh
        pred_boxes = pred_boxes[keep]
    else:
        raise ValueError('Unknown NMS method.')
    # if pred_boxes.shape[0] > config.detection_per_image and \
    #     config.test_nms_method != 'none':
    #     order = np.argsort(-pred_boxes[:, 4])
    #     order = order[:config.detection_per_image]
    #     pred_boxes = pred_boxes[order]
    # recovery the scale
    pred_boxes[:, :4] /= im_info[0, 2].item()
    num_tag = config.num_classes - 1
    target_tag = 1
    pred_tags = pred_boxes[:, 5].astype(np.int32).flatten()
    pred_tags_name = np.array(config.class_names)[pred_tags]
    keep = pred_tags == target_tag
    pred_boxes = pred_boxes[keep]
    pred_tags_name = pred_tags_name[keep]
    fpath = 'outputs/{}.png'.format(os.path.basename(args.img_path).split('.')[0])
    image = visual_utils.draw_boxes(
            image,
            pred_boxes[:, :4],
            scores=pred_boxes[:, 4],
            tags=pred_tags_name,
            line_thick=1, line_color='white')
    cv2.imwrite(fpath, image)
    print('{} boxes (tag {} of {}) written to {}'.format(
        len(pred_boxes), target_tag, num_tag, fpath))


def get_data(img_path, short_size, max_size):
    image = cv2.imread(img_path, cv2.IMREAD_COLOR)
    resized_img, scale = resize_img(
            image, short_size, max_size)

    original_height, original_width = image.shape[0:2]
    height, width = resized_img.shape[0:2]
    resized_img = resized_img.transpose(2, 0, 1)
    im_info = np.array([height, width, scale, original_height, original_width, 0])
    return image, torch.tensor([resized_img]).float(), torch.tensor([im_info])


def resize_img(image, short_size, max_size):
    height = image.shape[0]
    width = image.shape[1]
    im_size_min = np.min([height, width])
    im_size_max = np.max([height, width])
    scale = (short_size + 0.0) / im_size_min
    if scale * im_size_max > max_size:
        scale = (max_size + 0.0) / im_size_max
    t_height, t_width = int(round(height * scale)), int(
        round(width * scale))
    resized_image = cv2.resize(
            image, (t_width, t_height), interpolation=cv2.INTER_LINEAR)
    return resized_image, scale


def inference_folder(args, config, network):
    """Run the demo over every image of a folder (e.g. extracted video frames)
    and write one visualisation per frame into outputs/<folder name>/."""
    img_dir = args.img_path
    names = sorted(n for n in os.listdir(img_dir)
                   if n.lower().endswith(('.jpg', '.jpeg', '.png')))
    out_dir = os.path.join('outputs', os.path.basename(os.path.normpath(img_dir)))
    misc_utils.ensure_dir(out_dir)
    for name in names:
        args_one = argparse.Namespace(**vars(args))
        args_one.img_path = os.path.join(img_dir, name)
        inference(args_one, config, network)
        produced = 'outputs/{}.png'.format(name.split('.')[0])
        if os.path.exists(produced):
            os.replace(produced, os.path.join(out_dir, name.split('.')[0] + '.png'))
    print('{} frames written to {}'.format(len(names), out_dir))


def run_inference():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model_dir', '-md', default=None, required=True, type=str)
    parser.add_argument('--resume_weights', '-r', default=None, required=True, type=str)
    parser.add_argument('--img_path', '-i', default=None, required=True, type=str)
    parser.add_argument('--thresh', '-t', default=0.3, type=float)
    parser.add_argument('--device', default='cuda:0', type=str,
                        help="'cuda:N' or 'cpu'")
    args = parser.parse_args()
    # import libs
    model_root_dir = os.path.join('../model/', args.model_dir)
    sys.path.insert(0, model_root_dir)
    from config import config
    from network import Network
    if os.path.isdir(args.img_path):
        inference_folder(args, config, Network)
    else:
        inference(args, config, Network)


if __name__ == '__main__':
    run_inference()
