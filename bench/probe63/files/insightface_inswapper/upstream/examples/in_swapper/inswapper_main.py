import argparse
import datetime
import glob
import os
import os.path as osp

import cv2
import numpy as np
import onnxruntime
import insightface
from insightface.app import FaceAnalysis
from insightface.data import get_image as ins_get_image

assert insightface.__version__ >= '0.7'

PROVIDERS = ['CUDAExecutionProvider', 'CPUExecutionProvider']


def parse_args():
    parser = argparse.ArgumentParser(description='inswapper_128 face swapping demo')
    parser.add_argument('--source', type=str, default='t1', help='source face image (or insightface sample name)')
    parser.add_argument('--target', type=str, default=None, help='target image or folder; default: sample image')
    parser.add_argument('--output', type=str, default='./swapped_outputs')
    parser.add_argument('--model', type=str, default='inswapper_128.onnx')
    parser.add_argument('--det-size', type=int, default=640)
    parser.add_argument('--ctx-id', type=int, default=0, help='gpu id, -1 for cpu')
    parser.add_argument('--all-faces', action='store_true', help='swap every detected face, not just the largest')
    parser.add_argument('--paste-back', type=int, default=1)
    return parser.parse_args()


def load_image(path_or_name):
    if osp.isfile(path_or_name):
        img = cv2.imread(path_or_name)
        if img is None:
            raise ValueError(f'cannot read {path_or_name}')
        return img
    return ins_get_image(path_or_name)


def build_models(args):
    available = onnxruntime.get_available_providers()
    print('onnxruntime', onnxruntime.__version__, 'device', onnxruntime.get_device(), 'providers', available)
    if 'CUDAExecutionProvider' not in available:
        print('WARNING: onnxruntime-gpu not found, falling back to CPU (this will be slow)')

    app = FaceAnalysis(name='buffalo_l', providers=PROVIDERS)
    app.prepare(ctx_id=args.ctx_id, det_size=(args.det_size, args.det_size))
    swapper = insightface.model_zoo.get_model(args.model, download=True, download_zip=True,
                                              providers=PROVIDERS)
    return app, swapper


def largest_face(faces):
    return sorted(faces, key=lambda f: (f.bbox[2] - f.bbox[0]) * (f.bbox[3] - f.bbox[1]))[-1]


def swap_one(app, swapper, source_face, img, all_faces=False, paste_back=True):
    faces = app.get(img)
    if len(faces) == 0:
        return img, 0
    faces = sorted(faces, key=lambda x: x.bbox[0])
    targets = faces if all_faces else [largest_face(faces)]
    res = img.copy()
    for face in targets:
        res = swapper.get(res, face, source_face, paste_back=paste_back)
    return res, len(targets)


def crop_strip(app, swapper, source_face, img):
    faces = app.get(img)
    strip = []
    for face in faces:
        _img, _ = swapper.get(img, face, source_face, paste_back=False)
        strip.append(_img)
    if not strip:
        return None
    return np.concatenate(strip, axis=1)


def iter_targets(target):
    if target is None:
        yield 't1', ins_get_image('t1')
        return
    if osp.isdir(target):
        for p in sorted(glob.glob(osp.join(target, '*'))):
            if p.lower().endswith(('.jpg', '.jpeg', '.png', '.bmp')):
                yield osp.splitext(osp.basename(p))[0], cv2.imread(p)
    else:
        yield osp.splitext(osp.basename(target))[0], load_image(target)


def main():
    args = parse_args()
    os.makedirs(args.output, exist_ok=True)
    app, swapper = build_models(args)

    source_img = load_image(args.source)
    source_faces = app.get(source_img)
    if len(source_faces) == 0:
        raise SystemExit('no face found in source image')
    source_face = largest_face(source_faces)

    t0 = datetime.datetime.now()
    n_imgs, n_faces = 0, 0
    for name, img in iter_targets(args.target):
        res, k = swap_one(app, swapper, source_face, img, all_faces=args.all_faces,
                          paste_back=bool(args.paste_back))
        cv2.imwrite(osp.join(args.output, f'{name}_swapped.jpg'), res)
        strip = crop_strip(app, swapper, source_face, img)
        if strip is not None:
            cv2.imwrite(osp.join(args.output, f'{name}_swapped_crops.jpg'), strip)
        n_imgs += 1
        n_faces += k
    dt = (datetime.datetime.now() - t0).total_seconds()
    print(f'swapped {n_faces} faces in {n_imgs} images in {dt:.2f}s')


if __name__ == '__main__':
    main()
