"""
Copyright © 2023 Howard Hughes Medical Institute, Authored by Carsen Stringer and Marius Pachitariu.
"""

import os, sys, time, datetime, argparse
from pathlib import Path
import numpy as np
from tqdm import trange
import fastremap

import torch
from torch import nn
from torch.nn.functional import conv2d, interpolate

import logging

denoise_logger = logging.getLogger(__name__)

from cellpose import transforms, utils, io
from cellpose.core import run_net, assign_device
from cellpose.resnet_torch import CPnet
from cellpose.models import CellposeModel, model_path, normalize_default

MODEL_NAMES = []
for ctype in ["cyto3", "cyto2", "nuclei"]:
    for ntype in ["denoise", "deblur", "upsample", "oneclick"]:
        MODEL_NAMES.append(f"{ntype}_{ctype}")
        if ctype != "cyto3":
            for ltype in ["per", "seg", "rec"]:
                MODEL_NAMES.append(f"{ntype}_{ltype}_{ctype}")


def deterministic(seed=0):
    """ set random seeds to create test data """
    import random
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)  # if you are using multi-GPU.
    np.random.seed(seed)  # Numpy module.
    random.seed(seed)  # Python random module.
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


def loss_fn_rec(lbl, y):
    """ loss function between true labels lbl and prediction y """
    loss = 80. * ((y - lbl)**2).mean()
    return loss


def loss_fn_seg(lbl, y):
    """ loss function between true labels lbl and prediction y """
    criterion = nn.MSELoss(reduction="mean")
    criterion2 = nn.BCEWithLogitsLoss(reduction="mean")
    veci = 5. * lbl[:, 1:]
    lbl = (lbl[:, 0] > .5).float()
    loss = criterion(y[:, :2], veci)
    loss /= 2.
    loss2 = criterion2(y[:, 2], lbl)
    loss = loss + loss2
    return loss


def get_sigma(Tdown):
    """ Calculates the correlation matrices across channels for the perceptual loss.

    Args:
        Tdown (list): List of tensors output by each downsampling block of network.

    Returns:
        list: List of correlations for each input tensor.
    """
    lst = []
    for t in Tdown:
        nimg, nc = t.shape[:2]
        t = t.reshape(nimg, nc, -1)
        t = t - t.mean(axis=-1, keepdims=True)
        sig = (t @ t.transpose(2, 1)) / t.shape[-1]
        lst.append(sig)
    return lst


def imstats(X, net1):
    """
    Calculates the image correlation matrices for the perceptual loss.
    """
    _, _, Tdown = net1(X)
    sig = get_sigma(Tdown)
    sig = [s.detach() for s in sig]
    return sig


def loss_fn_per(img, net1, yl):
    """
    Calculates the perceptual loss function for image restoration.
    """
    sig0 = imstats(img, net1)
    sd = get_sigma(yl)
    rerr = 0
    for k in range(len(sig0)):
        rerr = rerr + (sd[k] - sig0[k]).pow(2).mean() / sig0[k].pow(2).mean()
    return rerr


def train_loss(net0, X, net1=None, img=None, lbl=None, lam=[1., 1.5, 0.]):
    """
    Calculates the train loss for image restoration tasks.
    """
    net0.train()
    if net1 is not None:
        net1.eval()
    loss, loss_per = torch.zeros(1, device=X.device), torch.zeros(1, device=X.device)

    img_dn = net0(X)[0]
    if lam[2] > 0.:
        loss += lam[2] * loss_fn_rec(img, img_dn)
    if lam[1] > 0. or lam[0] > 0.:
        y, _, ydown = net1(img_dn)
    if lam[1] > 0.:
        loss += lam[1] * loss_fn_seg(lbl, y)
    if lam[0] > 0.:
        loss_per = loss_fn_per(img, net1, ydown)
        loss += lam[0] * loss_per
    return loss, loss_per


def img_norm(imgi):
    """
    Normalizes the input image by subtracting the 1st percentile and dividing by the difference between the 99th and 1st percentiles.
    """
    shape = imgi.shape
    imgi = imgi.reshape(imgi.shape[0], imgi.shape[1], -1)
    perc = torch.quantile(imgi, torch.tensor([0.01, 0.99], device=imgi.device), dim=-1,
                          keepdim=True)
    for k in range(imgi.shape[1]):
        hask = (perc[1, :, k, 0] - perc[0, :, k, 0]) > 1e-3
        imgi[hask, k] -= perc[0, hask, k]
        imgi[hask, k] /= (perc[1, hask, k] - perc[0, hask, k])
    imgi = imgi.reshape(shape)
    return imgi


def add_noise(lbl, alpha=4, beta=0.7, poisson=0.7, blur=0.7, gblur=1.0, downsample=0.7,
              ds_max=7, diams=None, pscale=None, iso=True, sigma0=None, sigma1=None,
              ds=None, uniform_blur=False, partial_blur=False):
    """Adds blur, downsampling and poisson noise to the (nimg, nchan, Ly, Lx) tensor lbl."""
    device = lbl.device
    imgi = torch.zeros_like(lbl)
    Ly, Lx = lbl.shape[-2:]

    diams = diams if diams is not None else 30. * torch.ones(len(lbl), device=device)
    ds = ds_max * torch.ones(
        (len(lbl),), device=device, dtype=torch.int) if ds is None else ds * torch.ones(
            (len(lbl),), device=device, dtype=torch.int)
    # downsample
    ii = []
    idownsample = np.random.rand(len(lbl)) < downsample
    if (ds is None and idownsample.sum() > 0.) or not iso:
        ds = torch.ones(len(lbl), dtype=torch.long, device=device)
        ds[idownsample] = torch.randint(2, ds_max + 1, size=(idownsample.sum(),),
                                        device=device)
        ii = torch.nonzero(ds > 1).flatten()
    elif ds is not None and (ds > 1).sum():
        ii = torch.nonzero(ds > 1).flatten()

    # add gaussian blur
    iblur = torch.rand(len(lbl), device=device) < blur
    iblur[ii] = True
    if iblur.sum() > 0:
        if sigma0 is None:
            if uniform_blur and iso:
                xr = torch.rand(len(lbl), device=device)
                if len(ii) > 0:
                    xr[ii] = ds[ii].float() / 2. / gblur
                sigma0 = diams[iblur] / 30. * gblur * (1 / gblur + (1 - 1 / gblur) * xr[iblur])
                sigma1 = sigma0.clone()
            elif not iso:
                xr = torch.rand(len(lbl), device=device)
                if len(ii) > 0:
                    xr[ii] = (ds[ii].float()) / gblur
                    xr[ii] = xr[ii] + torch.rand(len(ii), device=device) * 0.7 - 0.35
                    xr[ii] = torch.clip(xr[ii], 0.05, 1.5)
                sigma0 = diams[iblur] / 30. * gblur * xr[iblur]
                sigma1 = sigma0.clone() / 10.
            else:
                xrand = np.random.exponential(1, size=iblur.sum())
                xrand = np.clip(xrand * 0.5, 0.1, 1.0)
                xrand *= gblur
                sigma0 = diams[iblur] / 30. * 5. * torch.from_numpy(xrand).float().to(
                    device)
                sigma1 = sigma0.clone()
        else:
            sigma0 = sigma0 * torch.ones((iblur.sum(),), device=device)
            sigma1 = sigma1 * torch.ones((iblur.sum(),), device=device)

        # create gaussian filter
        xr = max(8, sigma0.max().long() * 2)
        gfilt0 = torch.exp(-torch.arange(-xr + 1, xr, device=device)**2 /
                           (2 * sigma0.unsqueeze(-1)**2))
        gfilt0 /= gfilt0.sum(axis=-1, keepdims=True)
        gfilt1 = torch.zeros_like(gfilt0)
        gfilt1[sigma1 == sigma0] = gfilt0[sigma1 == sigma0]
        gfilt1[sigma1 != sigma0] = torch.exp(
            -torch.arange(-xr + 1, xr, device=device)**2 /
            (2 * sigma1[sigma1 != sigma0].unsqueeze(-1)**2))
        gfilt1[sigma1 == 0] = 0.
        gfilt1[sigma1 == 0, xr] = 1.
        gfilt1 /= gfilt1.sum(axis=-1, keepdims=True)
        gfilt = torch.einsum("ck,cl->ckl", gfilt0, gfilt1)
        gfilt /= gfilt.sum(axis=(1, 2), keepdims=True)

        lbl_blur = conv2d(lbl[iblur].transpose(1, 0), gfilt.unsqueeze(1),
                          padding=gfilt.shape[-1] // 2,
                          groups=gfilt.shape[0]).transpose(1, 0)
        if partial_blur:
            imgi[iblur] = lbl_blur[:, :, :Ly, :Lx]
        else:
            imgi[iblur] = lbl_blur

    imgi[~iblur] = lbl[~iblur]

    # apply downsample
    for k in ii:
        i0 = imgi[k:k + 1, :, ::ds[k], ::ds[k]] if iso else imgi[k:k + 1, :, ::ds[k]]
        imgi[k] = interpolate(i0, size=lbl[k].shape[-2:], mode="bilinear")

    # add poisson noise
    ipoisson = np.random.rand(len(lbl)) < poisson
    if ipoisson.sum() > 0:
        if pscale is None:
            pscale = torch.zeros(len(lbl))
            m = torch.distributions.gamma.Gamma(alpha, beta)
            pscale = torch.clamp(m.rsample(sample_shape=(ipoisson.sum(),)), 1.)
            #pscale = torch.clamp(20 * (torch.rand(size=(len(lbl),), device=lbl.device)), 1.5)
            pscale = pscale.unsqueeze(-1).unsqueeze(-1).unsqueeze(-1).to(device)
        else:
            pscale = pscale * torch.ones((ipoisson.sum(), 1, 1, 1), device=device)
        imgi[ipoisson] = torch.poisson(pscale * imgi[ipoisson])
    imgi[~ipoisson] = imgi[~ipoisson]

    # renormalize
    imgi = img_norm(imgi)

    return imgi


def one_chan_cellpose(device, model_type="cyto2", pretrained_model=None):
    """
    Creates a Cellpose network with a single input channel.
    """
    if pretrained_model is not None and not os.path.exists(pretrained_model):
        model_type = pretrained_model
        pretrained_model = None
    nbase = [32, 64, 128, 256]
    nchan = 1
    net1 = CPnet([nchan, *nbase], nout=3, sz=3).to(device)
    filename = model_path(model_type,
                          0) if pretrained_model is None else pretrained_model
    weights = torch.load(filename, weights_only=True)
    zp = 0
    print(filename)
    for name in net1.state_dict():
        if ("res_down_0.conv.conv_0" not in name and
                "res_down_0.proj" not in name and name != "diam_mean" and
                name != "diam_labels"):
            net1.state_dict()[name].copy_(weights[name])
        elif "res_down_0" in name:
            if len(weights[name].shape) > 0:
                new_weight = torch.zeros_like(net1.state_dict()[name])
                if weights[name].shape[0] == 2:
                    new_weight[:] = weights[name][0]
                elif len(weights[name].shape) > 1 and weights[name].shape[1] == 2:
                    new_weight[:, zp] = weights[name][:, 0]
                else:
                    new_weight = weights[name]
            else:
                new_weight = weights[name]
            net1.state_dict()[name].copy_(new_weight)
    return net1


class DenoiseModel():
    """Image restoration model (denoise / deblur / upsample) with a Cellpose U-Net."""

    def __init__(self, gpu=False, pretrained_model=False, nchan=1, model_type=None,
                 chan2=False, diam_mean=30., device=None):
        self.nchan = nchan
        if pretrained_model and (not isinstance(pretrained_model, str) and
                                 not isinstance(pretrained_model, Path)):
            raise ValueError("pretrained_model must be a string or path")

        self.diam_mean = diam_mean
        builtin = True
        if model_type is not None or (pretrained_model and
                                      not os.path.exists(pretrained_model)):
            pretrained_model_string = model_type if model_type is not None else "denoise_cyto3"
            if ~np.any([pretrained_model_string == s for s in MODEL_NAMES]):
                pretrained_model_string = "denoise_cyto3"
            pretrained_model = model_path(pretrained_model_string)
            if (pretrained_model and not os.path.exists(pretrained_model)):
                denoise_logger.warning("pretrained model has incorrect path")
            denoise_logger.info(f">> {pretrained_model_string} << model set to be used")
            self.diam_mean = 17. if "nuclei" in pretrained_model_string else 30.
        else:
            if pretrained_model:
                builtin = False
                pretrained_model_string = pretrained_model
                denoise_logger.info(f">>>> loading model {pretrained_model_string}")

        # assign network device
        if device is None:
            sdevice, gpu = assign_device(use_torch=True, gpu=gpu)
        self.device = device if device is not None else sdevice
        if device is not None:
            device_gpu = self.device.type == "cuda"
        self.gpu = gpu if device is None else device_gpu

        # create network
        self.nchan = nchan
        self.nclasses = 1
        nbase = [32, 64, 128, 256]
        self.nchan = nchan
        self.nbase = [nchan, *nbase]

        self.net = CPnet(self.nbase, self.nclasses, sz=3,
                         max_pool=True, diam_mean=diam_mean).to(self.device)

        self.pretrained_model = pretrained_model
        self.net_chan2 = None
        if self.pretrained_model:
            self.net.load_model(self.pretrained_model, device=self.device)
            denoise_logger.info(
                f">>>> model diam_mean = {self.diam_mean: .3f} (ROIs rescaled to this size during training)"
            )
            if chan2 and builtin:
                chan2_path = model_path(
                    os.path.split(self.pretrained_model)[-1].split("_")[0] + "_nuclei")
                print(f"loading model for chan2: {os.path.split(str(chan2_path))[-1]}")
                self.net_chan2 = CPnet(self.nbase, self.nclasses, sz=3,
                                       max_pool=True,
                                       diam_mean=17.).to(self.device)
                self.net_chan2.load_model(chan2_path, device=self.device)
        self.net_type = "cellpose_denoise"

    def eval(self, x, batch_size=8, channels=None, channel_axis=None, z_axis=None,
             normalize=True, rescale=None, diameter=None, tile=True, do_3D=False,
             tile_overlap=0.1, bsize=224):
        """
        Restore array or list of images using the image restoration model, and then segment.
        """
        if isinstance(x, list):
            imgs = []
            for i in trange(len(x)):
                imgi = self.eval(
                    x[i], batch_size=batch_size,
                    channels=channels[i] if channels is not None and
                    ((len(channels) == len(x) and
                      (isinstance(channels[i], list) or
                       isinstance(channels[i], np.ndarray)) and len(channels[i]) == 2))
                    else channels, channel_axis=channel_axis, z_axis=z_axis,
                    normalize=normalize, do_3D=do_3D,
                    rescale=rescale[i] if isinstance(rescale, list) or
                    isinstance(rescale, np.ndarray) else rescale,
                    diameter=diameter[i] if isinstance(diameter, list) or
                    isinstance(diameter, np.ndarray) else diameter,
                    tile_overlap=tile_overlap, bsize=bsize)
                imgs.append(imgi)
            return imgs

        x = transforms.convert_image(x, channels, channel_axis=channel_axis,
                                     z_axis=z_axis, do_3D=do_3D, nchan=None)
        if x.ndim < 4:
            x = x[np.newaxis, ...]
        if diameter is not None and diameter > 0:
            rescale = self.diam_mean / diameter
        elif rescale is None:
            rescale = 1.0

        imgs = np.zeros((*x.shape[:-1], self.nchan), "float32")
        for i in range(len(x)):
            img = transforms.normalize_img(x[i], normalize=True, axis=-1)
            if rescale != 1.0:
                img = transforms.resize_image(img, rsz=rescale)
            y, _ = run_net(self.net, img[np.newaxis, ..., :1], batch_size=batch_size,
                           augment=False, tile_overlap=tile_overlap, bsize=bsize)
            if rescale != 1.0:
                y = transforms.resize_image(y, x.shape[1], x.shape[2])
            imgs[i, ..., 0] = y[0, ..., 0]
        return imgs.squeeze()


def train(net, train_data=None, train_labels=None, train_files=None,
          test_data=None, test_labels=None, test_files=None, train_probs=None,
          test_probs=None, lam=[1., 1.5, 0.], scale_range=0.5, seg_model_type="cyto2",
          save_path=None, save_every=100, save_each=False, poisson=0.7, beta=0.7,
          blur=0.7, gblur=1.0, iso=True, uniform_blur=False, downsample=0.,
          ds_max=7, learning_rate=0.005, n_epochs=500, weight_decay=0.00001,
          batch_size=8, nimg_per_epoch=None, nimg_test_per_epoch=None, model_name=None):

    # net properties
    device = net.device
    nchan = net.nchan
    diam_mean = net.diam_mean.item()

    args = np.array([poisson, beta, blur, gblur, downsample])
    if args.ndim == 1:
        args = args[:, np.newaxis]
    poisson, beta, blur, gblur, downsample = args
    nnoise = len(poisson)

    d = datetime.datetime.now()
    if save_path is not None:
        if model_name is None:
            filename = ""
            lstrs = ["per", "seg", "rec"]
            for k, (l, s) in enumerate(zip(lam, lstrs)):
                filename += f"{s}_{l:.2f}_"
            filename += d.strftime("%Y_%m_%d_%H_%M_%S.%f")
        else:
            filename = model_name
        filename = os.path.join(save_path, filename)
        print(filename)

    # initialize the segmentation network used for the perceptual loss
    net1 = one_chan_cellpose(device=device, pretrained_model=seg_model_type)

    learning_rate_const = learning_rate
    LR = np.linspace(0, learning_rate_const, 10)
    LR = np.append(LR, learning_rate_const * np.ones(n_epochs - 100))
    for i in range(10):
        LR = np.append(LR, LR[-1] / 2 * np.ones(10))
    learning_rate = LR

    batch_size = 8
    optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate[0],
                                  weight_decay=weight_decay)
    nimg = len(train_data)
    nimg_per_epoch = nimg if nimg_per_epoch is None else nimg_per_epoch
    lavg, lavg_per, nsum = 0, 0, 0
    tic = time.time()
    for iepoch in range(n_epochs):
        np.random.seed(iepoch)
        rperm = np.random.choice(np.arange(0, nimg), size=(nimg_per_epoch,),
                                 p=train_probs)
        torch.manual_seed(iepoch)
        np.random.seed(iepoch)
        for param_group in optimizer.param_groups:
            param_group["lr"] = learning_rate[iepoch]
        for k in range(0, nimg_per_epoch, batch_size):
            kend = min(k + batch_size, nimg_per_epoch)
            inds = rperm[k:kend]
            imgs = [train_data[i][:nchan] for i in inds]
            lbls = [train_labels[i] for i in inds]
            imgi, lbl, scale = transforms.random_rotate_and_resize(
                imgs, Y=lbls, rescale=np.ones(len(inds)), scale_range=scale_range,
                xy=(256, 256))
            lbl = torch.from_numpy(lbl).to(device)
            img = torch.from_numpy(imgi).to(device)
            X = add_noise(img, poisson=poisson[0], beta=beta[0], blur=blur[0],
                          gblur=gblur[0], downsample=downsample[0], iso=iso,
                          uniform_blur=uniform_blur, ds_max=ds_max)
            optimizer.zero_grad()
            loss, loss_per = train_loss(net, X[:, :nchan], net1=net1, img=img,
                                        lbl=lbl, lam=lam)
            loss.backward()
            optimizer.step()
            lavg += loss.item() * img.shape[0]
            lavg_per += loss_per.item() * img.shape[0]
            nsum += len(img)

        if iepoch % 10 == 0 or iepoch < 10:
            lavg = lavg / nsum
            lavg_per = lavg_per / nsum
            print(f"{iepoch}, train_loss={lavg:.4f}, per={lavg_per:.4f}, LR={learning_rate[iepoch]:.6f}, time {time.time()-tic:.2f}s")
            lavg, lavg_per, nsum = 0, 0, 0

        if save_path is not None:
            if iepoch == n_epochs - 1 or (iepoch % save_every == 0 and iepoch != 0):
                if save_each:
                    filename0 = str(filename) + f"_epoch_{iepoch:%04d}"
                else:
                    filename0 = filename
                print(f"saving network parameters to {filename0}")
                net.save_model(filename0)
        else:
            filename = save_path

    return filename
