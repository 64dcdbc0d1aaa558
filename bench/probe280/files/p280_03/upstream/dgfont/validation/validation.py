import torch.nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
import torchvision.utils as vutils
import torch.nn.functional as F

import numpy as np

try:
    from tqdm import tqdm
except ImportError:
    # If not tqdm is not available, provide a mock version of it
    def tqdm(x):
        return x

from scipy import linalg

from tools.utils import *


def validateUN(data_loader, networks, epoch, args, additional=None):
    # set nets
    D = networks['D']
    G = networks['G'] if not args.distributed else networks['G'].module
    C = networks['C'] if not args.distributed else networks['C'].module
    C_EMA = networks['C_EMA'] if not args.distributed else networks['C_EMA'].module
    G_EMA = networks['G_EMA'] if not args.distributed else networks['G_EMA'].module
    # switch to train mode
    D.eval()
    G.eval()
    C.eval()
    C_EMA.eval()
    G_EMA.eval()
    # data loader
    val_dataset = data_loader['TRAINSET'] if args.dataset in ['animal_faces', 'lsun_car', 'ffhq'] else data_loader['VALSET']
    val_loader = data_loader['VAL']

    x_each_cls = []
    with torch.no_grad():
        val_tot_tars = torch.tensor(val_dataset.targets)
        for cls_idx in range(len(args.att_to_use)):
            tmp_cls_set = (val_tot_tars == args.att_to_use[cls_idx]).nonzero()[-args.val_num:]
            tmp_ds = torch.utils.data.Subset(val_dataset, tmp_cls_set)
            tmp_dl = torch.utils.data.DataLoader(tmp_ds, batch_size=args.val_num, shuffle=False,
                                                 num_workers=0, pin_memory=True, drop_last=False)
            tmp_iter = iter(tmp_dl)
            tmp_sample = None
            for sample_idx in range(len(tmp_iter)):
                imgs, _ = next(tmp_iter)
                x_ = imgs
                if tmp_sample is None:
                    tmp_sample = x_.clone()
                else:
                    tmp_sample = torch.cat((tmp_sample, x_), 0)
            x_each_cls.append(tmp_sample)

    if epoch >= args.fid_start:
        # Reference guided
        with torch.no_grad():
            # Just a buffer image ( to make a grid )
            ones = torch.ones(1, x_each_cls[0].size(1), x_each_cls[0].size(2), x_each_cls[0].size(3)).cuda(args.gpu, non_blocking=True)
            for src_idx in range(len(args.att_to_use)):
                x_src = x_each_cls[src_idx][:args.val_batch, :, :, :].cuda(args.gpu, non_blocking=True)
                rnd_idx = torch.randperm(x_each_cls[src_idx].size(0))[:args.val_batch]
                x_src_rnd = x_each_cls[src_idx][rnd_idx].cuda(args.gpu, non_blocking=True)
                for ref_idx in range(len(args.att_to_use)):
                    x_res_ema = torch.cat((ones, x_src), 0)
                    x_rnd_ema = torch.cat((ones, x_src_rnd), 0)
                    x_ref = x_each_cls[ref_idx][:args.val_batch, :, :, :].cuda(args.gpu, non_blocking=True)
                    rnd_idx = torch.randperm(x_each_cls[ref_idx].size(0))[:args.val_batch]
                    x_ref_rnd = x_each_cls[ref_idx][rnd_idx].cuda(args.gpu, non_blocking=True)
                    for sample_idx in range(args.val_batch):
                        x_ref_tmp = x_ref[sample_idx: sample_idx + 1].repeat((args.val_batch, 1, 1, 1))

                        c_src, skip1, skip2 = G_EMA.cnt_encoder(x_src)
                        s_ref = C_EMA(x_ref_tmp, sty=True)
                        x_res_ema_tmp, _ = G_EMA.decode(c_src, s_ref, skip1, skip2)

                        x_ref_tmp = x_ref_rnd[sample_idx: sample_idx + 1].repeat((args.val_batch, 1, 1, 1))

                        c_src, skip1, skip2 = G_EMA.cnt_encoder(x_src_rnd)
                        s_ref = C_EMA(x_ref_tmp, sty=True)
                        x_rnd_ema_tmp, _ = G_EMA.decode(c_src, s_ref, skip1, skip2)

                        x_res_ema_tmp = torch.cat((x_ref[sample_idx: sample_idx + 1], x_res_ema_tmp), 0)
                        x_res_ema = torch.cat((x_res_ema, x_res_ema_tmp), 0)

                        x_rnd_ema_tmp = torch.cat((x_ref_rnd[sample_idx: sample_idx + 1], x_rnd_ema_tmp), 0)
                        x_rnd_ema = torch.cat((x_rnd_ema, x_rnd_ema_tmp), 0)

                    vutils.save_image(x_res_ema, os.path.join(args.res_dir, '{}_EMA_{}_{}{}.jpg'.format(
                        args.gpu, epoch + 1, src_idx, ref_idx)), normalize=True, nrow=(x_res_ema.size(0) // (x_src.size(0) + 2) + 1))
                    vutils.save_image(x_rnd_ema, os.path.join(args.res_dir, '{}_RNDEMA_{}_{}{}.jpg'.format(
                        args.gpu, epoch + 1, src_idx, ref_idx)), normalize=True, nrow=(x_res_ema.size(0) // (x_src.size(0) + 2) + 1))

    torch.cuda.empty_cache()

    if epoch >= args.fid_start and args.gpu == 0:
        fid_value = calc_fid_by_class(x_each_cls, networks, args)
        add_logs(args, additional['logger'], 'FID/EMA', fid_value, epoch)
        print("FID (EMA) at epoch {}: {:.3f}".format(epoch + 1, fid_value))


def calc_fid_by_class(x_each_cls, networks, args, max_cls=20):
    """Average FID between real and translated glyphs over the first `max_cls` fonts.

    The InceptionV3 feature extractor lives on the same GPU as the generator; the
    statistics are accumulated on the host in float64 with numpy.
    """
    inceptionNet = networks['inceptionNet']
    inceptionNet.eval()
    G_EMA = networks['G_EMA'] if not args.distributed else networks['G_EMA'].module
    C_EMA = networks['C_EMA'] if not args.distributed else networks['C_EMA'].module

    fid_values = []
    n_cls = min(max_cls, len(x_each_cls))
    with torch.no_grad():
        for cls_idx in tqdm(range(n_cls)):
            x_real = x_each_cls[cls_idx].cuda(args.gpu, non_blocking=True)
            src_cls = (cls_idx + 1) % len(x_each_cls)
            x_src = x_each_cls[src_cls][:x_real.size(0)].cuda(args.gpu, non_blocking=True)

            s_ref = C_EMA(x_real, sty=True)
            c_src, skip1, skip2 = G_EMA.cnt_encoder(x_src)
            x_fake, _ = G_EMA.decode(c_src, s_ref, skip1, skip2)

            act_real = get_activations(x_real, inceptionNet, args)
            act_fake = get_activations(x_fake, inceptionNet, args)

            mu_r, sig_r = np.mean(act_real, axis=0), np.cov(act_real, rowvar=False)
            mu_f, sig_f = np.mean(act_fake, axis=0), np.cov(act_fake, rowvar=False)
            fid_values.append(calculate_frechet_distance(mu_r, sig_r, mu_f, sig_f))

    return float(np.mean(fid_values))


def get_activations(images, model, args, batch_size=50):
    """images: (N, 3, H, W) in [-1, 1]; returns (N, dims) numpy array."""
    n = images.size(0)
    pred_arr = np.empty((n, args.dims))
    for start in range(0, n, batch_size):
        end = min(start + batch_size, n)
        batch = (images[start:end] + 1.0) / 2.0
        if batch.size(1) == 1:
            batch = batch.repeat(1, 3, 1, 1)
        pred = model(batch)[0]
        if pred.size(2) != 1 or pred.size(3) != 1:
            pred = F.adaptive_avg_pool2d(pred, output_size=(1, 1))
        pred_arr[start:end] = pred.cpu().data.numpy().reshape(end - start, -1)
    return pred_arr


def calculate_frechet_distance(mu1, sigma1, mu2, sigma2, eps=1e-6):
    mu1 = np.atleast_1d(mu1)
    mu2 = np.atleast_1d(mu2)

    sigma1 = np.atleast_2d(sigma1)
    sigma2 = np.atleast_2d(sigma2)

    assert mu1.shape == mu2.shape, 'Training and test mean vectors have different lengths'
    assert sigma1.shape == sigma2.shape, 'Training and test covariances have different dimensions'

    diff = mu1 - mu2

    # Product might be almost singular
    covmean, _ = linalg.sqrtm(sigma1.dot(sigma2), disp=False)
    if not np.isfinite(covmean).all():
        msg = ('fid calculation produces singular product; '
               'adding %s to diagonal of cov estimates') % eps
        print(msg)
        offset = np.eye(sigma1.shape[0]) * eps
        covmean = linalg.sqrtm((sigma1 + offset).dot(sigma2 + offset))

    # Numerical error might give slight imaginary component
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            m = np.max(np.abs(covmean.imag))
            raise ValueError('Imaginary component {}'.format(m))
        covmean = covmean.real

    tr_covmean = np.trace(covmean)

    return (diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * tr_covmean)
