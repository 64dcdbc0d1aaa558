import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torchvision import transforms


normalize = {
    "mean": [0.485, 0.456, 0.406],
    "std": [0.229, 0.224, 0.225],
}

transform_pil = transforms.Compose([
    transforms.ToPILImage(),
])


def direct_val(imgs):
    normalize_dict = normalize
    transform = transforms.Compose([
        transforms.ToTensor(),
        transforms.Normalize(normalize_dict["mean"], normalize_dict["std"]),
    ])
    imgs = [transform(img) for img in imgs]
    imgs = torch.stack(imgs, dim=0)
    return imgs


def run_model(model, inputs):
    output = model(inputs)
    return output


def inference_single(img, model, th=0):
    model.eval()
    with torch.no_grad():
        img = img.reshape((-1, img.shape[-3], img.shape[-2], img.shape[-1]))
        img = direct_val(img)
        img = img.cuda()
        _, seg = run_model(model, img)
        seg = torch.sigmoid(seg).detach().cpu()
        if torch.isnan(seg).any() or torch.isinf(seg).any():
            max_score = 0.0
        else:
            max_score = torch.max(seg).numpy()
        seg = [np.array(transform_pil(seg[i])) for i in range(len(seg))]

        if len(seg) != 1:
            pdb_msg = "batch inference is not supported, got %d masks" % len(seg)
            raise ValueError(pdb_msg)
        else:
            fake_seg = seg[0]
        if th == 0:
            return fake_seg, max_score
        fake_seg = 255.0 * (fake_seg > 255 * th)
        fake_seg = fake_seg.astype(np.uint8)

    return fake_seg, max_score


def resize_to_multiple(img, multiple=32):
    h, w = img.shape[:2]
    nh = int(np.ceil(h / multiple) * multiple)
    nw = int(np.ceil(w / multiple) * multiple)
    if nh == h and nw == w:
        return img
    return cv2.resize(img, (nw, nh))


def batch_to_device(batch, device):
    # kept generic on purpose: callers pass whatever device the model lives on
    return [b.to(device, non_blocking=True) if torch.is_tensor(b) else b for b in batch]


def upsample_like(pred, ref):
    return F.interpolate(pred, size=ref.shape[-2:], mode='bilinear', align_corners=False)
