"""Gallery/probe face search built on insightface FaceAnalysis + an arcface_torch backbone.

Detection, 5-point alignment and the gender/age attributes come from the buffalo_l
ONNX pack (onnxruntime-gpu); embeddings are re-computed with our own PyTorch iresnet
checkpoint so that gallery features match what the training pipeline produces.

    python face_search.py --gallery data/gallery --probe data/probe --weights model.pt
"""
import argparse
import glob
import os
import os.path as osp
import sys

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from insightface.app import FaceAnalysis
from insightface.utils import face_align

sys.path.insert(0, osp.join(osp.dirname(__file__), '../../recognition/arcface_torch'))
from backbones import get_model  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description='face search demo')
    parser.add_argument('--gallery', required=True, help='folder of <identity>/<img>.jpg')
    parser.add_argument('--probe', required=True, help='folder of query images')
    parser.add_argument('--weights', required=True, help='arcface_torch model.pt')
    parser.add_argument('--network', default='r100')
    parser.add_argument('--det-size', default=640, type=int)
    parser.add_argument('--gpu', default=0, type=int, help='GPU id, -1 for CPU')
    parser.add_argument('--batch-size', default=64, type=int)
    parser.add_argument('--threshold', default=0.35, type=float, help='cosine threshold for a match')
    parser.add_argument('--half', action='store_true', help='fp16 embeddings')
    return parser.parse_args()


def build_analyzer(args):
    if args.gpu >= 0:
        providers = [('CUDAExecutionProvider', {'device_id': args.gpu}), 'CPUExecutionProvider']
    else:
        providers = ['CPUExecutionProvider']
    app = FaceAnalysis(name='buffalo_l', allowed_modules=['detection', 'genderage'], providers=providers)
    # ctx_id < 0 forces the CPU provider inside insightface
    app.prepare(ctx_id=args.gpu, det_size=(args.det_size, args.det_size))
    return app


class Embedder(object):
    def __init__(self, network, weights, device, half=False):
        self.device = device
        self.half = half
        model = get_model(network, fp16=False)
        state = torch.load(weights, map_location='cpu')
        if 'state_dict_backbone' in state:
            state = state['state_dict_backbone']
        model.load_state_dict(state)
        model.eval()
        if half:
            model = model.half()
        self.model = model.to(device)

    @torch.no_grad()
    def __call__(self, crops, batch_size=64):
        feats = []
        for i in range(0, len(crops), batch_size):
            batch = np.stack(crops[i:i + batch_size])[:, :, :, ::-1]  # BGR -> RGB
            batch = torch.from_numpy(batch.copy()).permute(0, 3, 1, 2).float()
            batch = batch.div_(255).sub_(0.5).div_(0.5)
            batch = batch.pin_memory().to(self.device, non_blocking=True)
            if self.half:
                batch = batch.half()
            out = self.model(batch)
            feats.append(F.normalize(out.float(), dim=1).cpu())
        if not feats:
            return torch.empty(0, 512)
        return torch.cat(feats, dim=0)


def detect_and_align(app, image_path):
    img = cv2.imread(image_path)
    if img is None:
        return [], []
    faces = app.get(img)
    crops = [face_align.norm_crop(img, landmark=f.kps, image_size=112) for f in faces]
    return faces, crops


def build_gallery(app, embedder, gallery_dir, batch_size):
    names, crops = [], []
    for person_dir in sorted(glob.glob(osp.join(gallery_dir, '*'))):
        if not osp.isdir(person_dir):
            continue
        person = osp.basename(person_dir)
        for path in sorted(glob.glob(osp.join(person_dir, '*.jpg'))):
            faces, face_crops = detect_and_align(app, path)
            if len(faces) != 1:
                print('[gallery] skip %s: %d faces' % (path, len(faces)))
                continue
            names.append(person)
            crops.append(face_crops[0])
    feats = embedder(crops, batch_size)
    print('[gallery] %d images, %d identities' % (len(names), len(set(names))))
    return names, feats


def search(app, embedder, gallery_names, gallery_feats, probe_dir, threshold, batch_size):
    results = []
    gallery_feats = gallery_feats.to(embedder.device)
    for path in sorted(glob.glob(osp.join(probe_dir, '*.jpg'))):
        faces, crops = detect_and_align(app, path)
        if not faces:
            results.append((path, None, 0.0, None))
            continue
        feats = embedder(crops, batch_size).to(embedder.device)
        sims = feats @ gallery_feats.T
        best_sim, best_idx = sims.max(dim=1)
        for face, sim, idx in zip(faces, best_sim.tolist(), best_idx.tolist()):
            who = gallery_names[idx] if sim >= threshold else 'unknown'
            attr = '%s/%d' % ('M' if face.gender == 1 else 'F', face.age)
            results.append((path, who, sim, attr))
    return results


def main():
    args = parse_args()
    device = torch.device('cuda:%d' % args.gpu if args.gpu >= 0 else 'cpu')
    if device.type == 'cuda':
        torch.backends.cudnn.benchmark = True
        print('using', torch.cuda.get_device_name(device))

    app = build_analyzer(args)
    embedder = Embedder(args.network, args.weights, device, half=args.half and args.gpu >= 0)

    gallery_names, gallery_feats = build_gallery(app, embedder, args.gallery, args.batch_size)
    if len(gallery_names) == 0:
        print('empty gallery, nothing to search')
        return

    results = search(app, embedder, gallery_names, gallery_feats, args.probe, args.threshold, args.batch_size)
    hits = 0
    for path, who, sim, attr in results:
        if who is None:
            print('%-40s  no face' % osp.basename(path))
            continue
        hits += who != 'unknown'
        print('%-40s  %-20s  %.3f  %s' % (osp.basename(path), who, sim, attr))
    print('matched %d / %d faces' % (hits, len(results)))


if __name__ == '__main__':
    main()
