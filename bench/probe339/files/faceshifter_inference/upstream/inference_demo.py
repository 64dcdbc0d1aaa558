import sys
sys.path.append('./face_modules/')
import os
import argparse
import time
import torch
import torch.nn.functional as F
import torchvision.transforms as transforms
from face_modules.model import Backbone, Arcface, MobileFaceNet, Am_softmax, l2_norm
from network.AEI_Net import *
from face_modules.mtcnn import *
import cv2
import PIL.Image as Image
import numpy as np


parser = argparse.ArgumentParser(description='FaceShifter stage-1 (AEI-Net) inference')
parser.add_argument('--source', type=str, required=True, help='image providing the identity')
parser.add_argument('--target', type=str, required=True, help='image or folder providing pose/expression/background')
parser.add_argument('--output', type=str, default='./results')
parser.add_argument('--G_path', type=str, default='./saved_models/G_latest.pth')
parser.add_argument('--arcface_path', type=str, default='./face_modules/model_ir_se50.pth')
parser.add_argument('--blend', action='store_true', help='paste the swapped face back with a soft mask')
args = parser.parse_args()

detector = MTCNN()
device = torch.device('cuda')
G = AEI_Net(c_id=512)
G.eval()
G.load_state_dict(torch.load(args.G_path, map_location=torch.device('cpu')))
G = G.cuda()

arcface = Backbone(50, 0.6, 'ir_se').to(device)
arcface.eval()
arcface.load_state_dict(torch.load(args.arcface_path, map_location=device), strict=False)

test_transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
])


def align(img_bgr):
    faces = detector.align_multi(Image.fromarray(img_bgr[:, :, ::-1]), limit=10, min_face_size=30, crop_size=(256, 256))
    if faces is None or len(faces[0]) == 0:
        return None, None
    return faces


def get_mask(size=256):
    mask = np.zeros([size, size], dtype=np.float32)
    cv2.ellipse(mask, (size // 2, size // 2 + 10), (size // 3, size // 2 - 20), 0, 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (31, 31), 0)
    return mask[:, :, None]


@torch.no_grad()
def identity_embedding(Xs_img):
    Xs = test_transform(Xs_img)
    Xs = Xs.unsqueeze(0).cuda()
    embeds = arcface(F.interpolate(Xs[:, :, 19:237, 19:237], (112, 112), mode='bilinear', align_corners=True))
    return embeds


@torch.no_grad()
def swap_one(embeds, Xt_raw):
    faces = align(Xt_raw)
    if faces[0] is None:
        return Xt_raw
    Xt_list, trans_inv_list = faces
    result = Xt_raw.astype(np.float32)
    for Xt_img, trans_inv in zip(Xt_list, trans_inv_list):
        Xt = test_transform(Xt_img)
        Xt = Xt.unsqueeze(0).to(device)
        st = time.time()
        Yt, _ = G(Xt, embeds)
        Yt = Yt.squeeze().detach().cpu().numpy().transpose([1, 2, 0]) * 0.5 + 0.5
        Yt = Yt[:, :, ::-1]
        print('swap time: %.3fs' % (time.time() - st))
        Yt_trans_inv = cv2.warpAffine(Yt, trans_inv, (np.size(Xt_raw, 1), np.size(Xt_raw, 0)), borderValue=(0, 0, 0))
        if args.blend:
            mask = get_mask()
            mask_inv = cv2.warpAffine(mask, trans_inv, (np.size(Xt_raw, 1), np.size(Xt_raw, 0)), borderValue=(0, 0, 0))
            mask_inv = mask_inv[:, :, None] if mask_inv.ndim == 2 else mask_inv
            result = mask_inv * Yt_trans_inv * 255 + (1 - mask_inv) * result
        else:
            result = Yt_trans_inv * 255
    return result.clip(0, 255).astype(np.uint8)


if __name__ == '__main__':
    os.makedirs(args.output, exist_ok=True)
    Xs_raw = cv2.imread(args.source)
    Xs_faces = detector.align(Image.fromarray(Xs_raw[:, :, ::-1]), crop_size=(256, 256))
    embeds = identity_embedding(Xs_faces)

    if os.path.isdir(args.target):
        targets = sorted(os.path.join(args.target, f) for f in os.listdir(args.target)
                         if f.lower().endswith(('.jpg', '.jpeg', '.png')))
    else:
        targets = [args.target]

    for path in targets:
        Xt_raw = cv2.imread(path)
        out = swap_one(embeds, Xt_raw)
        save_to = os.path.join(args.output, os.path.basename(path))
        cv2.imwrite(save_to, out)
        print('saved', save_to)
