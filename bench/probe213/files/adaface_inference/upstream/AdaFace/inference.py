"""Embed every face image under a folder with a pretrained AdaFace model and print the
pairwise cosine-similarity matrix.

    python inference.py --arch ir_101 --image_dir face_alignment/test_images
"""
import argparse
import os

import numpy as np
import torch
from PIL import Image

import net
from face_alignment import mtcnn

adaface_models = {
    'ir_50': "pretrained/adaface_ir50_ms1mv2.ckpt",
    'ir_101': "pretrained/adaface_ir101_webface12m.ckpt",
}

_mtcnn_model = None


def get_aligner():
    # MTCNN runs its P/R/O-nets on the GPU; build it once and reuse it
    global _mtcnn_model
    if _mtcnn_model is None:
        _mtcnn_model = mtcnn.MTCNN(device='cuda:0', crop_size=(112, 112))
    return _mtcnn_model


def get_aligned_face(image_path, rgb_pil_image=None):
    if rgb_pil_image is None:
        img = Image.open(image_path).convert('RGB')
    else:
        assert isinstance(rgb_pil_image, Image.Image), 'Face alignment module requires PIL image or path to the image'
        img = rgb_pil_image
    # find face
    try:
        bboxes, faces = get_aligner().align_multi(img, limit=1)
        face = faces[0]
    except Exception as e:
        print('Face detection Failed due to error.')
        print(e)
        face = None

    return face


def load_pretrained_model(architecture='ir_50', device='cpu'):
    # load model and pretrained statedict
    assert architecture in adaface_models.keys()
    model = net.build_model(architecture)
    statedict = torch.load(adaface_models[architecture], map_location='cpu')['state_dict']
    model_statedict = {key[6:]: val for key, val in statedict.items() if key.startswith('model.')}
    model.load_state_dict(model_statedict)
    model.eval()
    return model.to(device)


def to_input(pil_rgb_image):
    np_img = np.array(pil_rgb_image)
    brg_img = ((np_img[:, :, ::-1] / 255.) - 0.5) / 0.5
    tensor = torch.tensor(np.array([brg_img.transpose(2, 0, 1)])).float()
    return tensor


@torch.no_grad()
def embed_folder(model, image_dir, device, batch_size=32):
    names, inputs = [], []
    for fname in sorted(os.listdir(image_dir)):
        if not fname.lower().endswith(('.jpg', '.jpeg', '.png', '.bmp')):
            continue
        aligned = get_aligned_face(os.path.join(image_dir, fname))
        if aligned is None:
            print('skip (no face):', fname)
            continue
        names.append(fname)
        inputs.append(to_input(aligned))

    features, norms = [], []
    for i in range(0, len(inputs), batch_size):
        batch = torch.cat(inputs[i:i + batch_size], dim=0).to(device, non_blocking=True)
        feature, norm = model(batch)
        features.append(feature.cpu())
        norms.append(norm.cpu())
    if not features:
        return names, None, None
    return names, torch.cat(features, dim=0), torch.cat(norms, dim=0)


def main():
    parser = argparse.ArgumentParser(description='AdaFace folder inference')
    parser.add_argument('--arch', default='ir_50', choices=list(adaface_models.keys()))
    parser.add_argument('--image_dir', default='face_alignment/test_images')
    parser.add_argument('--batch_size', default=32, type=int)
    parser.add_argument('--save', default='', help='optional .npz to store names/features/norms')
    args = parser.parse_args()

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    print('running on', device)

    model = load_pretrained_model(args.arch, device=device)
    names, features, norms = embed_folder(model, args.image_dir, device, args.batch_size)
    if features is None:
        print('no faces found under', args.image_dir)
        return

    similarity_scores = features @ features.T
    np.set_printoptions(precision=3, suppress=True, linewidth=160)
    print('images:', names)
    print('feature norms (quality proxy):', norms.squeeze(-1).numpy())
    print(similarity_scores.numpy())

    if args.save:
        np.savez(args.save, names=np.array(names), features=features.numpy(), norms=norms.numpy())
        print('saved to', args.save)


if __name__ == '__main__':
    main()
