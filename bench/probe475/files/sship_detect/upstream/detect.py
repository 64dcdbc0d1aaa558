# YOLOv5 🚀 by Ultralytics, GPL-3.0 license
"""
Run ship detection on SAR chips or full scenes (Sentinel-1 GRD, Gaofen-3).

Usage:
    $ python detect.py --weights runs/train/exp/weights/best.pt --source data/images/ --img 512
    $ python detect.py --weights best.pt --source S1A_IW_GRDH_scene.tif --tile 1024 --device 0
"""

import argparse
import os
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.backends.cudnn as cudnn

FILE = Path(__file__).resolve()
ROOT = FILE.parents[0]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
ROOT = Path(os.path.relpath(ROOT, Path.cwd()))

from models.experimental import attempt_load
from utils.datasets import LoadImages, letterbox
from utils.general import LOGGER, check_img_size, colorstr, increment_path, non_max_suppression, scale_coords
from utils.torch_utils import select_device, time_sync


def sar_to_uint8(img, low_db=-25.0, high_db=0.0):
    """Convert a calibrated sigma0 (linear) image to 8 bit with a dB stretch."""
    img = np.clip(10 * np.log10(np.maximum(img, 1e-6)), low_db, high_db)
    return ((img - low_db) / (high_db - low_db) * 255).astype(np.uint8)


def tile_scene(img, tile, overlap=64):
    """Yield (x0, y0, chip) tiles covering a large scene."""
    h, w = img.shape[:2]
    step = tile - overlap
    for y0 in range(0, max(1, h - overlap), step):
        for x0 in range(0, max(1, w - overlap), step):
            yield x0, y0, img[y0:y0 + tile, x0:x0 + tile]


@torch.no_grad()
def run(weights=ROOT / 'weights/best.pt', source=ROOT / 'data/images', imgsz=512, conf_thres=0.25,
        iou_thres=0.45, max_det=1000, device='', view_img=False, save_txt=False, classes=None,
        agnostic_nms=False, project=ROOT / 'runs/detect', name='exp', exist_ok=False, half=False,
        tile=0, line_thickness=2):
    source = str(source)
    save_dir = increment_path(Path(project) / name, exist_ok=exist_ok)
    (save_dir / 'labels' if save_txt else save_dir).mkdir(parents=True, exist_ok=True)

    # Load model
    device = select_device(device)
    model = attempt_load(weights, map_location=device)
    stride = int(model.stride.max())
    names = model.module.names if hasattr(model, 'module') else model.names
    half &= device.type != 'cpu'  # half precision only supported on CUDA
    if half:
        model.half()
    imgsz = check_img_size(imgsz, s=stride)

    cudnn.benchmark = True  # set True to speed up constant image size inference

    # Run inference
    if device.type != 'cpu':
        model(torch.zeros(1, 1, imgsz, imgsz).to(device).type_as(next(model.parameters())))  # warmup

    dataset = LoadImages(source, img_size=imgsz, stride=stride, auto=True)
    dt, seen = [0.0, 0.0, 0.0], 0
    for path, im, im0s, vid_cap, s in dataset:
        t1 = time_sync()
        if im0s.dtype != np.uint8:
            im0s = sar_to_uint8(im0s)
        chips = list(tile_scene(im0s, tile)) if tile else [(0, 0, im0s)]
        det_all = []
        for x0, y0, chip in chips:
            im = letterbox(chip, imgsz, stride=stride, auto=True)[0]
            im = np.ascontiguousarray(im[None] if im.ndim == 2 else im.transpose((2, 0, 1))[:1])
            im = torch.from_numpy(im).to(device)
            im = im.half() if half else im.float()
            im /= 255
            if len(im.shape) == 3:
                im = im[None]
            t2 = time_sync()
            dt[0] += t2 - t1

            pred = model(im, augment=False)[0]
            t3 = time_sync()
            dt[1] += t3 - t2

            pred = non_max_suppression(pred, conf_thres, iou_thres, classes, agnostic_nms, max_det=max_det)
            dt[2] += time_sync() - t3

            det = pred[0]
            if len(det):
                det[:, :4] = scale_coords(im.shape[2:], det[:, :4], chip.shape).round()
                det[:, [0, 2]] += x0
                det[:, [1, 3]] += y0
                det_all.append(det.cpu())

        seen += 1
        p = Path(path)
        save_path = str(save_dir / p.name)
        txt_path = str(save_dir / 'labels' / p.stem)
        annotated = cv2.cvtColor(im0s, cv2.COLOR_GRAY2BGR) if im0s.ndim == 2 else im0s.copy()
        det = torch.cat(det_all) if det_all else torch.zeros((0, 6))
        for *xyxy, conf, cls in reversed(det.tolist()):
            c = int(cls)
            if save_txt:
                with open(txt_path + '.txt', 'a') as f:
                    f.write(('%g ' * 6).rstrip() % (c, *xyxy, conf) + '\n')
            p1, p2 = (int(xyxy[0]), int(xyxy[1])), (int(xyxy[2]), int(xyxy[3]))
            cv2.rectangle(annotated, p1, p2, (0, 0, 255), line_thickness)
            cv2.putText(annotated, f'{names[c]} {conf:.2f}', (p1[0], p1[1] - 2), 0, 0.4, (0, 0, 255), 1)
        cv2.imwrite(save_path, annotated)
        LOGGER.info(f'{s}{len(det)} ships, done. ({t3 - t2:.3f}s)')

    t = tuple(x / seen * 1E3 for x in dt)  # speeds per image
    LOGGER.info(f'Speed: %.1fms pre-process, %.1fms inference, %.1fms NMS per image at shape {(1, 1, imgsz, imgsz)}' % t)
    LOGGER.info(f"Results saved to {colorstr('bold', save_dir)}")


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument('--weights', nargs='+', type=str, default=ROOT / 'weights/best.pt', help='model path(s)')
    parser.add_argument('--source', type=str, default=ROOT / 'data/images', help='file/dir/URL/glob')
    parser.add_argument('--imgsz', '--img', '--img-size', type=int, default=512, help='inference size (pixels)')
    parser.add_argument('--conf-thres', type=float, default=0.25, help='confidence threshold')
    parser.add_argument('--iou-thres', type=float, default=0.45, help='NMS IoU threshold')
    parser.add_argument('--max-det', type=int, default=1000, help='maximum detections per image')
    parser.add_argument('--device', default='', help='cuda device, i.e. 0 or 0,1,2,3 or cpu')
    parser.add_argument('--save-txt', action='store_true', help='save results to *.txt')
    parser.add_argument('--classes', nargs='+', type=int, help='filter by class: --classes 0, or --classes 0 2 3')
    parser.add_argument('--agnostic-nms', action='store_true', help='class-agnostic NMS')
    parser.add_argument('--project', default=ROOT / 'runs/detect', help='save results to project/name')
    parser.add_argument('--name', default='exp', help='save results to project/name')
    parser.add_argument('--exist-ok', action='store_true', help='existing project/name ok, do not increment')
    parser.add_argument('--half', action='store_true', help='use FP16 half-precision inference')
    parser.add_argument('--tile', type=int, default=0, help='tile size for full SAR scenes (0 = no tiling)')
    parser.add_argument('--line-thickness', default=2, type=int, help='bounding box thickness (pixels)')
    return parser.parse_args()


def main(opt):
    run(**vars(opt))


if __name__ == "__main__":
    opt = parse_opt()
    main(opt)
