import os
import sys
from argparse import ArgumentParser
from typing import List

import h5py
import numpy as np
import torch
from astropy.table import Table
from tqdm import tqdm

sys.path.append("../..")

from astroclip.env import format_with_env
from astroclip.models import AstroClipModel, Moco_v2, SpecFormer
from astroclip.models.astrodino import AstroDINO_ViT

ASTROCLIP_ROOT = format_with_env("{ASTROCLIP_ROOT}")


def _get_device(gpu: int = 0):
    """Pick the GPU to embed on; embedding 200k galaxies on CPU takes ~a day."""
    if torch.cuda.is_available():
        return torch.device(f"cuda:{gpu}")
    print("WARNING: CUDA not available, embedding on CPU will be very slow")
    return torch.device("cpu")


def get_embeddings(
    image_models: dict,
    spectrum_models: dict,
    images: torch.Tensor,
    spectra: torch.Tensor,
    batch_size: int = 512,
    device: torch.device = None,
) -> dict:
    """Get embeddings for images and spectra using the provided models"""
    model_embeddings = {key: [] for key in image_models.keys()}
    im_batch, sp_batch = [], []

    assert len(images) == len(spectra)
    for image, spectrum in tqdm(zip(images, spectra), total=len(images)):
        # Load images, already preprocessed
        im_batch.append(torch.tensor(image, dtype=torch.float32)[None, :, :, :])
        sp_batch.append(torch.tensor(spectrum, dtype=torch.float32)[None, :, :])

        # Get embeddings for batch
        if len(im_batch) == batch_size:
            with torch.no_grad():
                spectra, images = torch.cat(sp_batch).cuda(), torch.cat(im_batch).cuda()

                for key in image_models.keys():
                    model_embeddings[key].append(image_models[key](images))

                for key in spectrum_models.keys():
                    model_embeddings[key].append(spectrum_models[key](spectra))

            im_batch, sp_batch = [], []

    # Get embeddings for last batch
    if len(im_batch) > 0:
        with torch.no_grad():
            images, spectra = torch.cat(im_batch).cuda(), torch.cat(sp_batch).cuda()

            # Get embeddings
            for key in image_models.keys():
                model_embeddings[key].append(image_models[key](images))

            for key in spectrum_models.keys():
                model_embeddings[key].append(spectrum_models[key](spectra))

    model_embeddings = {
        key: np.concatenate(model_embeddings[key]) for key in model_embeddings.keys()
    }
    return model_embeddings


def embed_provabgs(
    provabgs_file_train: str,
    provabgs_file_test: str,
    pretrained_dir: str,
    batch_size: int = 512,
    gpu: int = 0,
):
    device = _get_device(gpu)

    # Get directories
    astroclip_model_path = os.path.join(pretrained_dir, "astroclip.ckpt")
    stein_model_path = os.path.join(pretrained_dir, "stein.ckpt")
    astrodino_model_path = os.path.join(pretrained_dir, "astrodino.ckpt")
    specformer_model_path = os.path.join(pretrained_dir, "specformer.ckpt")

    # Set up AstroCLIP
    astroclip = AstroClipModel.load_from_checkpoint(
        checkpoint_path=astroclip_model_path,
    )

    # Set up Stein, et al. model
    stein = Moco_v2.load_from_checkpoint(
        checkpoint_path=stein_model_path,
    ).encoder_q

    # Set up AstroDINO model
    astrodino = AstroDINO_ViT.load_from_checkpoint(astrodino_model_path)

    # Set up SpecFormer model
    checkpoint = torch.load(specformer_model_path)
    specformer = SpecFormer(**checkpoint["hyper_parameters"])
    specformer.load_state_dict(checkpoint["state_dict"])
    specformer.cuda()

    # Set up model dict
    image_models = {
        "astroclip_image": lambda x: astroclip(x, input_type="image").cpu().numpy(),
        "stein": lambda x: stein(x).cpu().numpy(),
        "astrodino": lambda x: astrodino(x).cpu().numpy(),
    }

    spectrum_models = {
        "astroclip_spectrum": lambda x: astroclip(x, input_type="spectrum")
        .cpu()
        .numpy(),
        "specformer": lambda x: np.mean(
            specformer(x)["embedding"].cpu().numpy(), axis=1
        ),
    }
    for model in (astroclip, stein, astrodino):
        model.to(device)
        model.eval()
    specformer.eval()
    print("Models are correctly set up!")

    # Load data
    files = [provabgs_file_test, provabgs_file_train]
    for f in files:
        provabgs = Table.read(f)
        images, spectra = provabgs["image"], provabgs["spectrum"]

        # Get embeddings
        embeddings = get_embeddings(
            image_models, spectrum_models, images, spectra, batch_size, device=device
        )

        # Remove images and replace with embeddings
        provabgs.remove_column("image")
        provabgs.remove_column("spectrum")
        for key in embeddings.keys():
            assert len(embeddings[key]) == len(provabgs), "Embeddings incorrect length"
            provabgs[f"{key}_embeddings"] = embeddings[key]

        # Save embeddings
        provabgs.write(f.replace(".hdf5", "_embeddings.hdf5"), overwrite=True)

    # free GPU memory before the next catalog
    del astroclip, stein, astrodino, specformer
    torch.cuda.empty_cache()


def save_embeddings_h5(path: str, embeddings: dict, target_ids: List[int]):
    """Alternative output format used for the redshift / PROVABGS regression notebooks."""
    with h5py.File(path, "w") as f:
        f.create_dataset("targetid", data=np.asarray(target_ids))
        for key, value in embeddings.items():
            f.create_dataset(key, data=value, compression="gzip")


if __name__ == "__main__":
    parser = ArgumentParser()
    parser.add_argument(
        "--provabgs_file_train",
        type=str,
        default=f"{ASTROCLIP_ROOT}/datasets/provabgs/provabgs_paired_train.hdf5",
    )
    parser.add_argument(
        "--provabgs_file_test",
        type=str,
        default=f"{ASTROCLIP_ROOT}/datasets/provabgs/provabgs_paired_test.hdf5",
    )
    parser.add_argument(
        "--pretrained_dir",
        type=str,
        default=f"{ASTROCLIP_ROOT}/pretrained/",
    )
    parser.add_argument("--batch_size", type=int, default=512)
    parser.add_argument("--gpu", type=int, default=0, help="which CUDA device to use")
    args = parser.parse_args()

    embed_provabgs(
        args.provabgs_file_train,
        args.provabgs_file_test,
        args.pretrained_dir,
        args.batch_size,
        args.gpu,
    )
