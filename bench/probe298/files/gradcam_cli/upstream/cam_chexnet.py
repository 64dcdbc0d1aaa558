"""Class activation maps for a CheXNet-style DenseNet-121 with pytorch-grad-cam.

    python cam_chexnet.py --image-path examples/00000003_000.png \
        --ckpt checkpoints/chexnet_densenet121.pth --method gradcam++ --use-cuda

Writes <stem>_<method>_<class>.jpg next to --output-dir for the requested classes
(default: the three highest-scoring findings).
"""
import argparse
import os

import cv2
import numpy as np
import torch
import torchvision
from pytorch_grad_cam import (AblationCAM, EigenCAM, FullGrad, GradCAM, GradCAMPlusPlus, HiResCAM, LayerCAM,
                              ScoreCAM, XGradCAM)
from pytorch_grad_cam.utils.image import preprocess_image, show_cam_on_image
from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

CLASS_NAMES = ['Atelectasis', 'Cardiomegaly', 'Effusion', 'Infiltration', 'Mass', 'Nodule', 'Pneumonia',
               'Pneumothorax', 'Consolidation', 'Edema', 'Emphysema', 'Fibrosis', 'Pleural_Thickening', 'Hernia']

METHODS = {
    "gradcam": GradCAM,
    "hirescam": HiResCAM,
    "scorecam": ScoreCAM,
    "gradcam++": GradCAMPlusPlus,
    "ablationcam": AblationCAM,
    "xgradcam": XGradCAM,
    "eigencam": EigenCAM,
    "layercam": LayerCAM,
    "fullgrad": FullGrad,
}


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--use-cuda', action='store_true', default=False,
                        help='Use NVIDIA GPU acceleration')
    parser.add_argument('--image-path', type=str, required=True, help='Input chest X-ray')
    parser.add_argument('--ckpt', type=str, required=True, help='DenseNet-121 state_dict')
    parser.add_argument('--classes', type=str, nargs='*', default=None)
    parser.add_argument('--topk', type=int, default=3)
    parser.add_argument('--aug-smooth', action='store_true',
                        help='Apply test time augmentation to smooth the CAM')
    parser.add_argument('--eigen-smooth', action='store_true',
                        help='Reduce noise by taking the first principle componenet of cam_weights*activations')
    parser.add_argument('--method', type=str, default='gradcam', choices=list(METHODS.keys()))
    parser.add_argument('--output-dir', type=str, default='cam_output')
    args = parser.parse_args()
    args.use_cuda = args.use_cuda and torch.cuda.is_available()
    if args.use_cuda:
        print('Using GPU for acceleration')
    else:
        print('Using CPU for computation')

    return args


def build_model(ckpt_path):
    model = torchvision.models.densenet121(weights=None)
    model.classifier = torch.nn.Linear(model.classifier.in_features, len(CLASS_NAMES))
    state = torch.load(ckpt_path, map_location='cpu')
    if 'state_dict' in state:
        state = state['state_dict']
    # strip the DataParallel prefix and the CheXNet wrapper name
    state = {k.replace('module.', '').replace('densenet121.', ''): v for k, v in state.items()}
    state = {k.replace('classifier.0.', 'classifier.'): v for k, v in state.items()}
    model.load_state_dict(state, strict=False)
    return model.eval()


if __name__ == '__main__':
    args = get_args()
    os.makedirs(args.output_dir, exist_ok=True)

    model = build_model(args.ckpt)
    if args.use_cuda:
        model = model.cuda()
    # last dense block's final norm layer; works better than features.denseblock4 for CXRs
    target_layers = [model.features[-1]]

    rgb_img = cv2.imread(args.image_path, 1)[:, :, ::-1]
    rgb_img = cv2.resize(rgb_img, (224, 224))
    rgb_img = np.float32(rgb_img) / 255
    input_tensor = preprocess_image(rgb_img, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])

    with torch.no_grad():
        logits = model(input_tensor.cuda() if args.use_cuda else input_tensor)
        probs = torch.sigmoid(logits)[0].cpu().numpy()

    if args.classes:
        class_ids = [CLASS_NAMES.index(c) for c in args.classes]
    else:
        class_ids = list(np.argsort(-probs)[:args.topk])

    cam_algorithm = METHODS[args.method]
    with cam_algorithm(model=model, target_layers=target_layers, use_cuda=args.use_cuda) as cam:
        # AblationCAM and ScoreCAM have batched implementations; bigger batch = faster on GPU
        cam.batch_size = 32
        stem = os.path.splitext(os.path.basename(args.image_path))[0]
        for cid in class_ids:
            targets = [ClassifierOutputTarget(int(cid))]
            grayscale_cam = cam(input_tensor=input_tensor, targets=targets,
                                aug_smooth=args.aug_smooth, eigen_smooth=args.eigen_smooth)
            grayscale_cam = grayscale_cam[0, :]
            cam_image = show_cam_on_image(rgb_img, grayscale_cam, use_rgb=True)
            cam_image = cv2.cvtColor(cam_image, cv2.COLOR_RGB2BGR)
            out = os.path.join(args.output_dir, f'{stem}_{args.method}_{CLASS_NAMES[cid]}.jpg')
            cv2.imwrite(out, cam_image)
            print(f'{CLASS_NAMES[cid]:>20s}  p={probs[cid]:.3f}  -> {out}')
