import argparse
import time

import numpy as np
from PIL import Image

import cv2
import torch
import torch.nn as nn
import torchvision.transforms as transforms

from src.models.modnet import MODNet


parser = argparse.ArgumentParser(description='MODNet real-time webcam portrait matting')
parser.add_argument('--ckpt', type=str, default='./pretrained/modnet_webcam_portrait_matting.ckpt')
parser.add_argument('--camera', type=int, default=0, help='index passed to cv2.VideoCapture')
parser.add_argument('--width', type=int, default=1280)
parser.add_argument('--height', type=int, default=720)
parser.add_argument('--half', action='store_true', help='fp16 inference (GPU only)')
parser.add_argument('--background', type=str, default=None, help='optional background image; white if omitted')
args = parser.parse_args()


torch_transforms = transforms.Compose(
    [
        transforms.ToTensor(),
        transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    ]
)

print('Load pre-trained MODNet...')
pretrained_ckpt = args.ckpt
modnet = MODNet(backbone_pretrained=False)
modnet = nn.DataParallel(modnet)

GPU = True if torch.cuda.device_count() > 0 else False
if GPU:
    print('Use GPU...')
    modnet = modnet.cuda()
    modnet.load_state_dict(torch.load(pretrained_ckpt))
    if args.half:
        modnet = modnet.half()
else:
    print('Use CPU...')
    modnet.load_state_dict(torch.load(pretrained_ckpt, map_location=torch.device('cpu')))

modnet.eval()

print('Init WebCam...')
cap = cv2.VideoCapture(args.camera)
cap.set(cv2.CAP_PROP_FRAME_WIDTH, args.width)
cap.set(cv2.CAP_PROP_FRAME_HEIGHT, args.height)

background_np = None
if args.background is not None:
    background_np = np.asarray(Image.open(args.background).convert('RGB').resize((672, 512)), dtype=np.float32)

print('Start matting...')
frame_times = []
while(True):
    t0 = time.time()
    _, frame_np = cap.read()
    frame_np = cv2.cvtColor(frame_np, cv2.COLOR_BGR2RGB)
    frame_np = cv2.resize(frame_np, (910, 512), cv2.INTER_AREA)
    frame_np = frame_np[:, 120:792, :]
    frame_np = cv2.flip(frame_np, 1)

    frame_PIL = Image.fromarray(frame_np)
    frame_tensor = torch_transforms(frame_PIL)
    frame_tensor = frame_tensor[None, :, :, :]
    if GPU:
        frame_tensor = frame_tensor.cuda()
        if args.half:
            frame_tensor = frame_tensor.half()

    with torch.no_grad():
        _, _, matte_tensor = modnet(frame_tensor, True)

    matte_tensor = matte_tensor.float().repeat(1, 3, 1, 1)
    matte_np = matte_tensor[0].data.cpu().numpy().transpose(1, 2, 0)
    if background_np is None:
        fg_np = matte_np * frame_np + (1 - matte_np) * np.full(frame_np.shape, 255.0)
    else:
        fg_np = matte_np * frame_np + (1 - matte_np) * background_np
    view_np = np.uint8(np.concatenate((frame_np, fg_np), axis=1))
    view_np = cv2.cvtColor(view_np, cv2.COLOR_RGB2BGR)

    frame_times.append(time.time() - t0)
    if len(frame_times) > 30:
        frame_times.pop(0)
    fps = len(frame_times) / sum(frame_times)
    cv2.putText(view_np, '{:.1f} FPS ({})'.format(fps, 'GPU' if GPU else 'CPU'), (10, 30),
                cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 255, 0), 2)

    cv2.imshow('MODNet - WebCam [Press \'Q\' To Exit]', view_np)
    if cv2.waitKey(1) & 0xFF == ord('q'):
        break

cap.release()
cv2.destroyAllWindows()
print('Exit...')
