"""
Train a VAE for heterogeneous reconstruction with known pose
"""
import argparse
import os
import pickle
import sys
import contextlib
import logging
from datetime import datetime as dt

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

import cryodrgn
from cryodrgn import __version__, ctf, dataset
from cryodrgn import utils
from cryodrgn.beta_schedule import get_beta_schedule
from cryodrgn.lattice import Lattice
from cryodrgn.models import HetOnlyVAE, unparallelize
from cryodrgn.pose import PoseTracker

logger = logging.getLogger(__name__)


def add_args(parser):
    parser.add_argument("particles", type=os.path.abspath, help="Input particles (.mrcs, .star, .cs, or .txt)")
    parser.add_argument("-o", "--outdir", type=os.path.abspath, required=True, help="Output directory to save model")
    parser.add_argument("--zdim", type=int, required=True, help="Dimension of latent variable")
    parser.add_argument("--poses", type=os.path.abspath, required=True, help="Image poses (.pkl)")
    parser.add_argument("--ctf", metavar="pkl", type=os.path.abspath, help="CTF parameters (.pkl)")
    parser.add_argument("--load", metavar="WEIGHTS.PKL", help="Initialize training from a checkpoint")
    parser.add_argument("--checkpoint", type=int, default=1, help="Checkpointing interval in N_EPOCHS (default: %(default)s)")
    parser.add_argument("--log-interval", type=int, default=1000, help="Logging interval in N_IMGS (default: %(default)s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="Increase verbosity")
    parser.add_argument("--seed", type=int, default=np.random.randint(0, 100000), help="Random seed")

    group = parser.add_argument_group("Dataset loading")
    group.add_argument("--uninvert-data", dest="invert_data", action="store_false")
    group.add_argument("--no-window", dest="window", action="store_false")
    group.add_argument("--window-r", type=float, default=0.85)
    group.add_argument("--datadir", type=os.path.abspath)
    group.add_argument("--lazy", action="store_true", help="Lazy loading if full dataset is too large to fit in memory")
    group.add_argument("--max-threads", type=int, default=16)

    group = parser.add_argument_group("Training parameters")
    group.add_argument("-n", "--num-epochs", type=int, default=20)
    group.add_argument("-b", "--batch-size", type=int, default=8)
    group.add_argument("--wd", type=float, default=0)
    group.add_argument("--lr", type=float, default=1e-4)
    group.add_argument("--beta", default=None)
    group.add_argument("--beta-control", type=float)
    group.add_argument("--norm", type=float, nargs=2, default=None)
    group.add_argument("--no-amp", action="store_false", dest="amp",
                       help="Do not use mixed-precision training")
    group.add_argument("--multigpu", action="store_true",
                       help="Parallelize training across all detected GPUs")

    group = parser.add_argument_group("Network Architecture")
    group.add_argument("--enc-layers", dest="qlayers", type=int, default=3)
    group.add_argument("--enc-dim", dest="qdim", type=int, default=1024)
    group.add_argument("--dec-layers", dest="players", type=int, default=3)
    group.add_argument("--dec-dim", dest="pdim", type=int, default=1024)
    group.add_argument("--pe-type", choices=("geom_ft", "geom_full", "geom_lowf", "geom_nohighf",
                                             "linear_lowf", "gaussian", "none"), default="gaussian")
    group.add_argument("--feat-sigma", type=float, default=0.5)
    group.add_argument("--domain", choices=("hartley", "fourier"), default="fourier")
    group.add_argument("--activation", choices=("relu", "leaky_relu"), default="relu")
    return parser


def train_batch(model, lattice, y, ntilts, rot, trans, optim, beta, beta_control=None,
                ctf_params=None, yr=None, use_amp=False, scaler=None):
    optim.zero_grad()
    model.train()
    if trans is not None:
        y = preprocess_input(y, lattice, trans)
    amp_mode = torch.cuda.amp.autocast() if use_amp else contextlib.nullcontext()
    with amp_mode:
        z_mu, z_logvar, z, y_recon, mask = run_batch(model, lattice, y, rot, ntilts, ctf_params, yr)
        loss, gen_loss, kld = loss_function(z_mu, z_logvar, y, ntilts, y_recon, mask, beta,
                                            beta_control)
    if use_amp:
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()
    else:
        loss.backward()
        optim.step()
    return loss.item(), gen_loss.item(), kld.item()


def preprocess_input(y, lattice, trans):
    # center the image
    B = y.size(0)
    D = lattice.D
    y = lattice.translate_ht(y.view(B, -1), trans.unsqueeze(1)).view(B, D, D)
    return y


def run_batch(model, lattice, y, rot, ntilts, ctf_params=None, yr=None):
    use_ctf = ctf_params is not None
    B = y.size(0)
    D = lattice.D
    c = None
    if use_ctf:
        freqs = lattice.freqs2d.unsqueeze(0).expand(B, *lattice.freqs2d.shape) / ctf_params[:, 0].view(B, 1, 1)
        c = ctf.compute_ctf(freqs, *torch.split(ctf_params[:, 1:], 1, 1)).view(B, D, D)

    # encode
    input_ = (y,) if yr is None else (yr,)
    if c is not None:
        input_ = (x * c.sign() for x in input_)  # phase flip by the ctf
    _model = unparallelize(model)
    z_mu, z_logvar = _model.encode(*input_)
    z = _model.reparameterize(z_mu, z_logvar)

    # decode
    mask = lattice.get_circular_mask(D // 2)  # restrict to circular mask
    y_recon = model(lattice.coords[mask] / lattice.extent / 2 @ rot, z).view(B, -1)
    if c is not None:
        y_recon *= c.view(B, -1)[:, mask]
    return z_mu, z_logvar, z, y_recon, mask


def loss_function(z_mu, z_logvar, y, ntilts, y_recon, mask, beta, beta_control=None):
    B = y.size(0)
    gen_loss = F.mse_loss(y_recon, y.view(B, -1)[:, mask])
    kld = torch.mean(-0.5 * torch.sum(1 + z_logvar - z_mu.pow(2) - z_logvar.exp(), dim=1), dim=0)
    if beta_control is None:
        loss = gen_loss + beta * kld / mask.sum().float()
    else:
        loss = gen_loss + beta_control * (beta - kld) ** 2 / mask.sum().float()
    return loss, gen_loss, kld


def save_checkpoint(model, optim, epoch, z_mu, z_logvar, out_weights, out_z, scaler=None):
    """Save model weights, latent encoding z, and decoder volumes"""
    torch.save({
        "epoch": epoch,
        "model_state_dict": unparallelize(model).state_dict(),
        "optimizer_state_dict": optim.state_dict(),
        "scaler": scaler.state_dict() if scaler is not None else None,
    }, out_weights)
    with open(out_z, "wb") as f:
        pickle.dump(z_mu, f)
        pickle.dump(z_logvar, f)


def main(args):
    t1 = dt.now()
    if not os.path.exists(args.outdir):
        os.makedirs(args.outdir)
    logging.getLogger().addHandler(logging.FileHandler(f"{args.outdir}/run.log"))
    logger.info(" ".join(sys.argv))
    logger.info(f"cryoDRGN {__version__}")
    logger.info(args)

    # set the random seed
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    # set the device
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    logger.info("Use cuda {}".format(use_cuda))
    if use_cuda:
        torch.set_default_tensor_type(torch.cuda.FloatTensor)
    else:
        logger.warning("WARNING: No GPUs detected")

    # load the particles
    data = dataset.ImageDataset(mrcfile=args.particles, norm=args.norm, invert_data=args.invert_data,
                                window=args.window, datadir=args.datadir, window_r=args.window_r,
                                max_threads=args.max_threads, lazy=args.lazy)
    Nimg = data.N
    D = data.D

    lattice = Lattice(D, extent=0.5, device=device)
    posetracker = PoseTracker.load(args.poses, Nimg, D, None, None, device=device)

    if args.ctf is not None:
        logger.info("Loading ctf params from {}".format(args.ctf))
        ctf_params = ctf.load_ctf_for_training(D - 1, args.ctf)
        ctf_params = torch.tensor(ctf_params, device=device)
    else:
        ctf_params = None

    # instantiate model
    model = HetOnlyVAE(lattice, args.qlayers, args.qdim, args.players, args.pdim, D * D,
                       args.zdim, encode_mode="resid", enc_mask=None, enc_type=args.pe_type,
                       enc_dim=None, domain=args.domain, activation=nn.ReLU,
                       feat_sigma=args.feat_sigma)
    model.to(device)
    logger.info(model)

    optim = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.wd)

    # Mixed precision training
    scaler = None
    if args.amp:
        if args.batch_size % 8 != 0:
            logger.warning(f"Batch size {args.batch_size} not divisible by 8 and thus not optimal for AMP training")
        if (D - 1) % 8 != 0:
            logger.warning(f"Image size {D - 1} not divisible by 8 and thus not optimal for AMP training")
        if args.pdim % 8 != 0:
            logger.warning(f"Decoder hidden layer dimension {args.pdim} not divisible by 8")
        if args.qdim % 8 != 0:
            logger.warning(f"Encoder hidden layer dimension {args.qdim} not divisible by 8")
        scaler = torch.cuda.amp.GradScaler()

    # restart from checkpoint
    if args.load:
        logger.info("Loading checkpoint from {}".format(args.load))
        checkpoint = torch.load(args.load, map_location=torch.device("cuda:0"))
        model.load_state_dict(checkpoint["model_state_dict"])
        optim.load_state_dict(checkpoint["optimizer_state_dict"])
        if scaler is not None and checkpoint.get("scaler") is not None:
            scaler.load_state_dict(checkpoint["scaler"])
        start_epoch = checkpoint["epoch"] + 1
    else:
        start_epoch = 0

    # parallelize
    if args.multigpu and torch.cuda.device_count() > 1:
        args.batch_size *= torch.cuda.device_count()
        logger.info(f"Increasing batch size to {args.batch_size}")
        model = nn.DataParallel(model)

    # train
    data_generator = DataLoader(data, batch_size=args.batch_size, shuffle=True,
                                num_workers=0, pin_memory=False)
    num_epochs = args.num_epochs
    Z_DIM = args.zdim
    beta_schedule = get_beta_schedule(args.beta if args.beta is not None else 1.0 / Z_DIM)
    global_it = 0
    for epoch in range(start_epoch, num_epochs):
        t2 = dt.now()
        gen_loss_accum = 0
        loss_accum = 0
        kld_accum = 0
        batch_it = 0
        for minibatch in data_generator:
            ind = minibatch[-1].to(device)
            y = minibatch[0].to(device)
            B = len(ind)
            batch_it += B
            global_it += B
            beta = beta_schedule(global_it)
            yr = None
            rot, tran = posetracker.get_pose(ind)
            ctf_param = ctf_params[ind] if ctf_params is not None else None
            loss, gen_loss, kld = train_batch(model, lattice, y, None, rot, tran, optim, beta,
                                              args.beta_control, ctf_params=ctf_param, yr=yr,
                                              use_amp=args.amp, scaler=scaler)
            gen_loss_accum += gen_loss * B
            kld_accum += kld * B
            loss_accum += loss * B
            if batch_it % args.log_interval == 0:
                logger.info("# [Train Epoch: {}/{}] [{}/{} images] gen loss={:.6f}, kld={:.6f}, beta={:.6f}, loss={:.6f}".format(
                    epoch + 1, num_epochs, batch_it, Nimg, gen_loss, kld, beta, loss))
        logger.info("# =====> Epoch: {} Average gen loss = {:.6}, KLD = {:.6f}, total loss = {:.6f}; Finished in {}".format(
            epoch + 1, gen_loss_accum / Nimg, kld_accum / Nimg, loss_accum / Nimg, dt.now() - t2))
        if args.checkpoint and epoch % args.checkpoint == 0:
            out_weights = "{}/weights.{}.pkl".format(args.outdir, epoch)
            out_z = "{}/z.{}.pkl".format(args.outdir, epoch)
            model.eval()
            with torch.no_grad():
                z_mu, z_logvar = eval_z(model, lattice, data, args.batch_size, device,
                                        use_amp=args.amp)
                save_checkpoint(model, optim, epoch, z_mu, z_logvar, out_weights, out_z, scaler)
    logger.info("Finished in {} ({} per epoch)".format(dt.now() - t1, (dt.now() - t1) / (num_epochs - start_epoch)))
    logger.info("Max GPU memory allocated: {:.2f} GB".format(torch.cuda.max_memory_allocated() / 1e9))


def eval_z(model, lattice, data, batch_size, device, use_amp=False):
    assert not model.training
    z_mu_all = []
    z_logvar_all = []
    data_generator = DataLoader(data, batch_size=batch_size, shuffle=False)
    for minibatch in data_generator:
        y = minibatch[0].to(device)
        with torch.autocast("cuda", enabled=use_amp):
            z_mu, z_logvar = unparallelize(model).encode(y)
        z_mu_all.append(z_mu.detach().cpu().numpy())
        z_logvar_all.append(z_logvar.detach().cpu().numpy())
    return np.vstack(z_mu_all), np.vstack(z_logvar_all)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    main(add_args(parser).parse_args())
