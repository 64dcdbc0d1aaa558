import os
import time
import json
import argparse

import numpy as np
import torch
from torch.utils.data import DataLoader
from torchvision.transforms import ToTensor, Normalize, Compose

from net.network import CSPNet, CSPNet_mod
from config import Config
from dataloader.loader import CityPersons
from util.functions import parse_det_offset
from eval_city.eval_script.eval_demo import validate


def parse_args():
    parser = argparse.ArgumentParser(description='CSP evaluation on CityPersons val')
    parser.add_argument('--ckpt', default='./ckpt/CSPNet-150.pth.tea', type=str,
                        help='student (.pth) or mean-teacher (.pth.tea) weights')
    parser.add_argument('--gpu', default='0', type=str, help='gpu id to run on')
    parser.add_argument('--score', default=0.1, type=float)
    parser.add_argument('--nms', default=0.5, type=float)
    parser.add_argument('--out', default='./_temp_val.json', type=str)
    parser.add_argument('--vis_dir', default='', type=str, help='save the first 50 visualisations here')
    parser.add_argument('--flip', action='store_true', help='horizontal flip test-time augmentation')
    parser.add_argument('--multiscale', action='store_true', help='0.75/1.0/1.25 test scales')
    parser.add_argument('--timing', action='store_true', help='report pure forward time per image')
    return parser.parse_args()


args = parse_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu

config = Config()
config.test_path = './data/citypersons'
config.size_test = (1024, 2048)
config.offset = True

testtransform = Compose(
    [ToTensor(), Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
testdataset = CityPersons(path=config.test_path, type='val', config=config,
                          transform=testtransform, preloaded=True)
testloader = DataLoader(testdataset, batch_size=1)

net = CSPNet().cuda()
net.load_state_dict(torch.load(args.ckpt))
net.eval()


def flip_forward(inputs):
    pos, height, offset = net(inputs)
    pos_f, height_f, offset_f = net(torch.flip(inputs, [3]))
    pos = (pos + torch.flip(pos_f, [3])) / 2.0
    height = (height + torch.flip(height_f, [3])) / 2.0
    # the x offset changes sign when the image is mirrored
    offset_f = torch.flip(offset_f, [3])
    offset_f[:, 1, :, :] = 1.0 - offset_f[:, 1, :, :]
    offset = (offset + offset_f) / 2.0
    return pos, height, offset


def multiscale_forward(inputs, scales=(0.75, 1.0, 1.25)):
    """Average the center heat map over a few input scales; height and offset
    are taken from the 1.0 pass (the heads are not scale invariant)."""
    base_h, base_w = inputs.shape[2], inputs.shape[3]
    pos_acc = None
    height = offset = None
    for s in scales:
        if s == 1.0:
            x = inputs
        else:
            x = torch.nn.functional.interpolate(inputs, scale_factor=s, mode='bilinear',
                                                align_corners=False)
        pos, h, o = net(x)
        if s != 1.0:
            pos = torch.nn.functional.interpolate(pos, size=(base_h // 4, base_w // 4),
                                                  mode='bilinear', align_corners=False)
        else:
            height, offset = h, o
        pos_acc = pos if pos_acc is None else pos_acc + pos
    return pos_acc / len(scales), height, offset


def save_vis(data, boxes, path, score_thr=0.4):
    """Undo the normalisation of the input tensor and draw boxes (x, y, w, h, s)."""
    import cv2
    img = data[0].numpy().transpose(1, 2, 0)
    img = img * np.array([0.229, 0.224, 0.225]) + np.array([0.485, 0.456, 0.406])
    img = np.ascontiguousarray((img * 255.0).clip(0, 255).astype(np.uint8)[:, :, ::-1])
    for box in boxes:
        if box[4] < score_thr:
            continue
        x, y, w, h = [int(v) for v in box[:4]]
        cv2.rectangle(img, (x, y), (x + w, y + h), (0, 255, 0), 2)
    cv2.imwrite(path, img)


def val():
    num_imgs = len(testloader)
    res = []
    forward_time = 0.0
    t3 = time.time()
    for i, data in enumerate(testloader, 0):
        inputs = data.cuda()
        if args.timing:
            torch.cuda.synchronize()  # make sure the H2D copy is done
        t_fw = time.time()
        with torch.no_grad():
            if args.flip:
                pos, height, offset = flip_forward(inputs)
            elif args.multiscale:
                pos, height, offset = multiscale_forward(inputs)
            else:
                pos, height, offset = net(inputs)
        if args.timing:
            torch.cuda.synchronize()
            forward_time += time.time() - t_fw

        boxes = parse_det_offset(pos.cpu().numpy(), height.cpu().numpy(), offset.cpu().numpy(),
                                 config.size_test, score=args.score, down=4, nms_thresh=args.nms)
        if len(boxes) > 0:
            boxes[:, [2, 3]] -= boxes[:, [0, 1]]

            if args.vis_dir and i < 50:
                os.makedirs(args.vis_dir, exist_ok=True)
                save_vis(data, boxes, os.path.join(args.vis_dir, '%04d.jpg' % i))
            for box in boxes:
                temp = dict()
                temp['image_id'] = i + 1
                temp['category_id'] = 1
                temp['bbox'] = box[:4].tolist()
                temp['score'] = float(box[4])
                res.append(temp)

        print('\r%d/%d' % (i + 1, num_imgs), end='')
    t4 = time.time()
    print('\nValidation time used: %.3f' % (t4 - t3))
    if args.timing:
        print('Forward only: %.1f ms / image' % (forward_time / num_imgs * 1000))

    with open(args.out, 'w') as f:
        json.dump(res, f)

    MRs = validate('./eval_city/val_gt.json', args.out)
    print('Summerize: [Reasonable: %.2f%%], [Bare: %.2f%%], [Partial: %.2f%%], [Heavy: %.2f%%]'
          % (MRs[0] * 100, MRs[1] * 100, MRs[2] * 100, MRs[3] * 100))
    return MRs


if __name__ == '__main__':
    val()
