'''
Inference for Composition-1k Dataset, plus a single-image demo.

Run (benchmark):
python inference.py \
    --config-dir path/to/config \
    --checkpoint-dir path/to/checkpoint \
    --inference-dir path/to/inference \
    --data-dir path/to/data

Run (one image):
python inference.py --one-image \
    --model vitmatte-s \
    --checkpoint-dir path/to/checkpoint \
    --image-dir demo/retriever_rgb.png \
    --trimap-dir demo/retriever_trimap.png \
    --output-dir demo/result.png
'''
import os
import torch
import numpy as np
from PIL import Image
from tqdm import tqdm
from torch.utils.data import Dataset, DataLoader
from os.path import join as opj
from torchvision.transforms import functional as F
from detectron2.engine import default_argument_parser
from detectron2.config import LazyConfig, instantiate
from detectron2.checkpoint import DetectionCheckpointer

import warnings
warnings.filterwarnings('ignore')


# Dataset and Dataloader
def collate_fn(batched_inputs):
    rets = dict()
    for k in batched_inputs[0].keys():
        rets[k] = torch.stack([_[k] for _ in batched_inputs])
    return rets


class Composition_1k(Dataset):
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.file_names = sorted(os.listdir(opj(self.data_dir, 'merged')))

    def __len__(self):
        return len(self.file_names)

    def __getitem__(self, idx):
        phas = Image.open(opj(self.data_dir, 'alpha_copy', self.file_names[idx]))
        tris = Image.open(opj(self.data_dir, 'trimaps', self.file_names[idx]))
        imgs = Image.open(opj(self.data_dir, 'merged', self.file_names[idx]))
        sample = {
            'phas': F.to_tensor(phas).unsqueeze(0),
            'trimap': F.to_tensor(tris).unsqueeze(0),
            'image': F.to_tensor(imgs).unsqueeze(0),
            'image_name': self.file_names[idx]
        }
        return sample


# model and output
def matting_inference(
    config_dir='',
    checkpoint_dir='',
    inference_dir='',
    data_dir='',
):
    # initializing model
    cfg = LazyConfig.load(config_dir)
    model = instantiate(cfg.model)
    model.to(cfg.train.device)
    model.eval()
    DetectionCheckpointer(model).load(checkpoint_dir)

    # initializing dataset
    composition_1k_dataloader = DataLoader(
        dataset=Composition_1k(data_dir=data_dir),
        shuffle=False,
        batch_size=1,
        # collate_fn = collate_fn,
    )

    # inferencing
    os.makedirs(inference_dir, exist_ok=True)

    for data in tqdm(composition_1k_dataloader):
        with torch.no_grad():
            for k in data.keys():
                if k == 'image_name':
                    continue
                else:
                    data[k].to(model.device)
            output = model(data)['phas'].flatten(0, 2)
            output = F.to_pil_image(output)
            output.save(opj(inference_dir, data['image_name'][0]))
            torch.cuda.empty_cache()


# ---------------------------------------------------------------- single image demo
def init_model(model, checkpoint, device):
    """
    Initialize ViTMatte from the common model config.
    Args:
        model: 'vitmatte-s' or 'vitmatte-b'
        checkpoint: path to a trained checkpoint
        device: torch device string
    """
    assert model in ['vitmatte-s', 'vitmatte-b']
    if model == 'vitmatte-s':
        config = 'configs/common/model.py'
        cfg = LazyConfig.load(config)
        model = instantiate(cfg.model)
        model.to(device)
        model.eval()
        DetectionCheckpointer(model).load(checkpoint)
    elif model == 'vitmatte-b':
        config = 'configs/common/model.py'
        cfg = LazyConfig.load(config)
        cfg.model.backbone.embed_dim = 768
        cfg.model.backbone.num_heads = 12
        cfg.model.decoder.in_chans = 768
        model = instantiate(cfg.model)
        model.to(device)
        model.eval()
        DetectionCheckpointer(model).load(checkpoint)
    return model


def get_data(image_dir, trimap_dir):
    """
    Get the data of one image.
    Input:
        image_dir: the directory of the image
        trimap_dir: the directory of the trimap
    """
    image = Image.open(image_dir).convert('RGB')
    image = F.to_tensor(image).unsqueeze(0)
    trimap = Image.open(trimap_dir).convert('L')
    trimap = F.to_tensor(trimap).unsqueeze(0)

    return {
        'image': image,
        'trimap': trimap
    }


def infer_one_image(model, input, save_dir=None):
    """
    Infer the alpha matte of one image.
    Input:
        model: the trained model
        image: the input image
        trimap: the input trimap
    """
    output = model(input)['phas'].flatten(0, 2)
    output = F.to_pil_image(output)
    output.save(opj(save_dir))

    return None


# ---------------------------------------------------------------- metrics
def _to_gpu64(x):
    # metrics are accumulated in float64 to match the official MATLAB evaluation
    return torch.from_numpy(np.asarray(x, dtype=np.float64)).cuda()


def compute_sad_mse(pred, target, trimap):
    """SAD (/1000) and MSE over the unknown region of the trimap; inputs are uint8 HxW arrays."""
    pred, target, trimap = _to_gpu64(pred) / 255., _to_gpu64(target) / 255., _to_gpu64(trimap)
    unknown = (trimap == 128).double()
    sad = (torch.abs(pred - target) * unknown).sum() / 1000.
    mse = (((pred - target) ** 2) * unknown).sum() / (unknown.sum() + 1e-8)
    return sad.item(), mse.item()


def compute_gradient_error(pred, target, trimap, sigma=1.4):
    """Gradient error with gaussian-derivative filters (Rhemann et al.), evaluated on the unknown region."""
    pred, target, trimap = _to_gpu64(pred) / 255., _to_gpu64(target) / 255., _to_gpu64(trimap)
    ksize = int(2 * np.ceil(3 * sigma) + 1)
    ax = torch.arange(ksize, dtype=torch.float64, device=pred.device) - ksize // 2
    g = torch.exp(-ax ** 2 / (2 * sigma ** 2))
    dg = -ax * g / (sigma ** 2)
    kx = (g[:, None] * dg[None, :])
    kx = kx / torch.sqrt((kx ** 2).sum())
    ky = kx.t()

    def grad_mag(x):
        x = x[None, None]
        gx = torch.nn.functional.conv2d(x, kx[None, None], padding=ksize // 2)
        gy = torch.nn.functional.conv2d(x, ky[None, None], padding=ksize // 2)
        return torch.sqrt(gx ** 2 + gy ** 2)[0, 0]

    unknown = (trimap == 128).double()
    err = ((grad_mag(pred) - grad_mag(target)) ** 2 * unknown).sum() / 1000.
    return err.item()


def evaluate_folder(pred_dir, data_dir):
    sad_all, mse_all, grad_all = [], [], []
    for name in tqdm(sorted(os.listdir(pred_dir))):
        pred = np.array(Image.open(opj(pred_dir, name)).convert('L'))
        gt = np.array(Image.open(opj(data_dir, 'alpha_copy', name)).convert('L'))
        tri = np.array(Image.open(opj(data_dir, 'trimaps', name)).convert('L'))
        sad, mse = compute_sad_mse(pred, gt, tri)
        sad_all.append(sad)
        mse_all.append(mse)
        grad_all.append(compute_gradient_error(pred, gt, tri))
    print('SAD: {:.2f}  MSE: {:.4f}  Grad: {:.2f}'.format(
        np.mean(sad_all), np.mean(mse_all) * 1000, np.mean(grad_all)))


def merge_new_bg(image_dir, bg_dir, alpha_dir):
    image = Image.open(image_dir).convert('RGB')
    bg = Image.open(bg_dir).convert('RGB').resize(image.size)
    alpha = Image.open(alpha_dir).convert('L')
    image = np.array(image).astype(np.float32)
    bg = np.array(bg).astype(np.float32)
    alpha = np.array(alpha).astype(np.float32)[..., None] / 255.
    return Image.fromarray((image * alpha + bg * (1 - alpha)).astype(np.uint8))


if __name__ == '__main__':
    # add argument we need:
    parser = default_argument_parser()
    parser.add_argument('--config-dir', type=str, default='configs/ViTMatte_S_100ep.py')
    parser.add_argument('--checkpoint-dir', type=str, required=True)
    parser.add_argument('--inference-dir', type=str, default='output_of_inference')
    parser.add_argument('--data-dir', type=str, default='data/Composition-1k-testset')
    parser.add_argument('--one-image', action='store_true')
    parser.add_argument('--model', type=str, default='vitmatte-s')
    parser.add_argument('--image-dir', type=str, default=None)
    parser.add_argument('--trimap-dir', type=str, default=None)
    parser.add_argument('--output-dir', type=str, default='result.png')
    parser.add_argument('--device', type=str, default='cuda')
    parser.add_argument('--eval', action='store_true', help='compute SAD/MSE/Grad after inference')

    args = parser.parse_args()
    if args.one_image:
        model = init_model(args.model, args.checkpoint_dir, args.device)
        data = get_data(args.image_dir, args.trimap_dir)
        with torch.no_grad():
            infer_one_image(model, data, args.output_dir)
    else:
        matting_inference(
            config_dir=args.config_dir,
            checkpoint_dir=args.checkpoint_dir,
            inference_dir=args.inference_dir,
            data_dir=args.data_dir,
        )
        if args.eval:
            evaluate_folder(args.inference_dir, args.data_dir)
