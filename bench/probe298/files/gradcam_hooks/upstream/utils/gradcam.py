"""Minimal Grad-CAM for multi-label chest X-ray classifiers.

No dependency on pytorch-grad-cam: forward/backward hooks on a target layer, then
weights = spatial mean of the gradients, cam = ReLU(sum_k w_k * A_k), upsampled to the input.
Used by the evaluation notebook and by heatmap.py to produce the localisation figures.
"""
import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class _Hooks(object):
    """Stores the activations and gradients of one module."""

    def __init__(self, module):
        self.activations = None
        self.gradients = None
        self._fwd = module.register_forward_hook(self._save_activation)
        self._bwd = module.register_full_backward_hook(self._save_gradient)

    def _save_activation(self, module, inputs, output):
        self.activations = output.detach()

    def _save_gradient(self, module, grad_input, grad_output):
        # grad_output is a tuple with one tensor for conv / norm layers
        self.gradients = grad_output[0].detach()

    def remove(self):
        self._fwd.remove()
        self._bwd.remove()


class GradCam(object):
    def __init__(self, model, target_layer, use_cuda=True):
        self.model = model
        self.model.eval()
        self.cuda = use_cuda
        if self.cuda:
            self.model = model.cuda()
        self.hooks = _Hooks(target_layer)

    def __del__(self):
        try:
            self.hooks.remove()
        except Exception:
            pass

    def _forward(self, input_img):
        if self.cuda:
            input_img = input_img.cuda()
        input_img.requires_grad_(True)
        return self.model(input_img)

    def __call__(self, input_img, target_category=None):
        output = self._forward(input_img)
        if isinstance(output, (list, tuple)):
            # CheXpert-style models return (logits, logit_maps)
            output = output[0]
            if isinstance(output, (list, tuple)):
                output = torch.cat(output, dim=1)

        if target_category is None:
            target_category = int(torch.argmax(output[0]).item())

        one_hot = np.zeros((1, output.size()[-1]), dtype=np.float32)
        one_hot[0][target_category] = 1
        one_hot = torch.from_numpy(one_hot).requires_grad_(True)
        if self.cuda:
            one_hot = one_hot.cuda()
        one_hot = torch.sum(one_hot * output)

        self.model.zero_grad()
        one_hot.backward(retain_graph=True)

        grads_val = self.hooks.gradients.cpu().numpy()
        target = self.hooks.activations.cpu().numpy()[0, :]

        weights = np.mean(grads_val, axis=(2, 3))[0, :]
        cam = np.zeros(target.shape[1:], dtype=np.float32)

        for i, w in enumerate(weights):
            cam += w * target[i, :, :]

        cam = np.maximum(cam, 0)
        cam = cv2.resize(cam, input_img.shape[2:][::-1])
        cam = cam - np.min(cam)
        cam = cam / (np.max(cam) + 1e-8)
        return cam, target_category


class GradCamTorch(nn.Module):
    """Batched, fully on-device variant used when generating CAMs for a whole test set."""

    def __init__(self, model, target_layer):
        super(GradCamTorch, self).__init__()
        self.model = model
        self.hooks = _Hooks(target_layer)

    def forward(self, x, class_idx):
        x = x.requires_grad_(True)
        logits = self.model(x)
        if isinstance(logits, (list, tuple)):
            logits = logits[0]
            if isinstance(logits, (list, tuple)):
                logits = torch.cat(logits, dim=1)
        score = logits.gather(1, class_idx.view(-1, 1).to(logits.device)).sum()
        self.model.zero_grad(set_to_none=True)
        score.backward()
        grads = self.hooks.gradients
        acts = self.hooks.activations
        weights = grads.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * acts).sum(dim=1, keepdim=True))
        cam = F.interpolate(cam, size=x.shape[-2:], mode='bilinear', align_corners=False)
        b = cam.shape[0]
        flat = cam.view(b, -1)
        lo = flat.min(dim=1, keepdim=True)[0]
        hi = flat.max(dim=1, keepdim=True)[0]
        cam = ((flat - lo) / (hi - lo + 1e-8)).view_as(cam)
        return cam.squeeze(1), torch.sigmoid(logits).detach()


def show_cam_on_image(img, mask, alpha=0.5):
    """img: HxWx3 float in [0, 1]; mask: HxW float in [0, 1]."""
    heatmap = cv2.applyColorMap(np.uint8(255 * mask), cv2.COLORMAP_JET)
    heatmap = np.float32(heatmap) / 255
    heatmap = heatmap[..., ::-1]  # BGR -> RGB
    cam = alpha * heatmap + (1 - alpha) * np.float32(img)
    cam = cam / np.max(cam)
    return np.uint8(255 * cam)


def bounding_box_from_cam(cam, threshold=0.5):
    """Largest connected component above ``threshold`` -> (x, y, w, h) in pixels."""
    binary = (cam >= threshold).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8)
    if n <= 1:
        return None
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = stats[largest, :4]
    return int(x), int(y), int(w), int(h)
