"""
Evaluate the decoder at specified values of z
"""
import argparse
import os
import pprint
import logging
from datetime import datetime as dt

import numpy as np
import torch

from cryodrgn import config, mrc, utils
from cryodrgn.models import HetOnlyVAE
from cryodrgn.lattice import Lattice
from cryodrgn.source import write_mrc

logger = logging.getLogger(__name__)


def add_args(parser):
    parser.add_argument("weights", help="Model weights")
    parser.add_argument("-c", "--config", metavar="YAML", required=True, help="CryoDRGN config.yaml file")
    parser.add_argument("-o", type=os.path.abspath, required=True, help="Output .mrc or directory")
    parser.add_argument("--prefix", default="vol_", help="Prefix when writing out multiple .mrc files (default: %(default)s)")
    parser.add_argument("-v", "--verbose", action="store_true", help="Increase verbosity")
    parser.add_argument("--device", type=int, default=None, help="Optionally specify CUDA device")

    group = parser.add_argument_group("Specify z values")
    group.add_argument("-z", type=np.float32, nargs="*", help="Specify one z-value")
    group.add_argument("--z-start", type=np.float32, nargs="*", help="Specify a starting z-value")
    group.add_argument("--z-end", type=np.float32, nargs="*", help="Specify an ending z-value")
    group.add_argument("-n", type=int, default=10, help="Number of structures between [z_start, z_end]")
    group.add_argument("--zfile", help="Text file with z-values to evaluate")

    group = parser.add_argument_group("Volume arguments")
    group.add_argument("--Apix", type=float, default=1, help="Pixel size to add to .mrc header (default: %(default)s A/pix)")
    group.add_argument("--flip", action="store_true", help="Flip handedness of output volume")
    group.add_argument("--invert", action="store_true", help="Invert contrast of output volume")
    group.add_argument("-d", "--downsample", type=int, help="Downsample volumes to this box size (pixels)")
    group.add_argument("--vol-start-index", type=int, default=0, help="Default value of start index for volume generation (default: %(default)s)")
    group.add_argument("--batch-voxels", type=int, default=2**20,
                       help="Number of lattice points decoded per forward pass")
    return parser


def main(args):
    t1 = dt.now()

    # set the device
    if args.device is not None:
        device = torch.device(f"cuda:{args.device}")
    else:
        use_cuda = torch.cuda.is_available()
        device = torch.device("cuda" if use_cuda else "cpu")
        logger.info("Use cuda {}".format(use_cuda))
        if not use_cuda:
            logger.warning("WARNING: No GPUs detected")

    logger.info(args)
    cfg = config.overwrite_config(args.config, args)
    logger.info("Loaded configuration:")
    pprint.pprint(cfg)

    D = cfg["lattice_args"]["D"]  # image size + 1
    zdim = cfg["model_args"]["zdim"]
    norm = [float(x) for x in cfg["dataset_args"]["norm"]]

    if args.downsample:
        assert args.downsample % 2 == 0, "Boxsize must be even"
        assert args.downsample <= D - 1, "Must be smaller than original box size"

    model, lattice = HetOnlyVAE.load(cfg, args.weights, device=device)
    model.eval()

    # Multiple z
    if args.z_start or args.zfile:
        # Get z values
        if args.z_start:
            args.z_start = np.array(args.z_start)
            args.z_end = np.array(args.z_end)
            z = np.repeat(np.arange(args.n, dtype=np.float32), zdim).reshape((args.n, zdim))
            z *= (args.z_end - args.z_start) / (args.n - 1)
            z += args.z_start
        else:
            z = np.loadtxt(args.zfile).reshape(-1, zdim)

        if not os.path.exists(args.o):
            os.makedirs(args.o)

        logger.info(f"Generating {len(z)} volumes")
        for i, zz in enumerate(z, start=args.vol_start_index):
            logger.info(zz)
            vol = decode_volume(model, lattice, zz, norm, D, args.downsample, device,
                                batch_voxels=args.batch_voxels)
            out_mrc = "{}/{}{:03d}.mrc".format(args.o, args.prefix, i)
            if args.flip:
                vol = vol.flip([0])
            if args.invert:
                vol *= -1
            write_mrc(out_mrc, np.asarray(vol.cpu()).astype(np.float32), Apix=args.Apix)

    # Single z
    else:
        z = np.array(args.z)
        logger.info(z)
        vol = decode_volume(model, lattice, z, norm, D, args.downsample, device,
                            batch_voxels=args.batch_voxels)
        if args.flip:
            vol = vol.flip([0])
        if args.invert:
            vol *= -1
        write_mrc(args.o, np.asarray(vol.cpu()).astype(np.float32), Apix=args.Apix)

    td = dt.now() - t1
    logger.info("Finished in {}".format(td))


@torch.no_grad()
def decode_volume(model, lattice, z, norm, D, downsample, device, batch_voxels=2**20):
    """Decode a full volume slice-by-slice in Hartley space and inverse transform on the device."""
    extent = lattice.extent
    if downsample:
        D = downsample + 1
        extent = lattice.extent * (downsample / (lattice.D - 1))
    zt = torch.as_tensor(z, dtype=torch.float32, device=device).view(1, -1)
    coords = lattice.get_square_lattice(D, extent).to(device)   # (D*D, 3) for one slice
    zs = torch.linspace(-extent, extent, D, device=device)
    vol_f = torch.zeros((D, D, D), dtype=torch.float32, device=device)
    for i, dz in enumerate(zs):
        x = coords + torch.tensor([0, 0, dz], device=device)
        keep = x.pow(2).sum(dim=-1) <= extent**2
        y = torch.zeros(D * D, device=device)
        for start in range(0, int(keep.sum()), batch_voxels):
            pts = x[keep][start:start + batch_voxels]
            y[keep.nonzero().squeeze(1)[start:start + batch_voxels]] = model.decode(pts, zt).view(-1)
        vol_f[i] = y.view(D, D)
    vol_f = vol_f * norm[1] + norm[0]
    vol = torch.fft.fftshift(torch.fft.ifftn(torch.fft.ifftshift(vol_f[:-1, :-1, :-1])))
    vol = vol.real - vol.imag
    torch.cuda.synchronize()
    return vol


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    main(add_args(parser).parse_args())
