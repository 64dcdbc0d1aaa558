import argparse
import os
from copy import deepcopy
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import torch
import torchaudio
import yaml
from tqdm import tqdm

from desed_task.dataio.datasets import read_audio
from desed_task.utils.download import download_from_url
from local.beats.BEATs import BEATs, BEATsConfig

parser = argparse.ArgumentParser("Extract Embeddings with Audioset Pretrained Models")


class WavDataset(torch.utils.data.Dataset):
    def __init__(
        self,
        folder,
        pad_to=10,
        fs=16000,
        feats_pipeline=None,
    ):
        self.fs = fs
        self.pad_to = pad_to * fs if pad_to is not None else None
        self.examples = sorted(
            [str(x) for x in Path(folder).rglob("*.wav")]
        )
        self.feats_pipeline = feats_pipeline

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, item):
        c_ex = self.examples[item]

        mixture, _, _, padded_indx = read_audio(
            c_ex, False, False, self.pad_to
        )

        if self.feats_pipeline is not None:
            mixture = self.feats_pipeline(mixture)
        return mixture, Path(c_ex).stem


def extract(
    batch_size, folder, dset_name, torch_dset, embedding_model, use_gpu=True
):
    Path(folder).mkdir(parents=True, exist_ok=True)
    f = h5py.File(os.path.join(folder, "{}.hdf5".format(dset_name)), "w")
    if embedding_model.__class__.__name__ == "Cnn14_16k":
        global_embeddings = f.create_dataset(
            "global_embeddings", (len(torch_dset), 2048), dtype=np.float32
        )
        frame_embeddings = f.create_dataset(
            "frame_embeddings", (len(torch_dset), 2048, 31), dtype=np.float32
        )
    elif embedding_model.__class__.__name__ == "BEATs":
        global_embeddings = f.create_dataset(
            "global_embeddings", (len(torch_dset), 768), dtype=np.float32
        )
        frame_embeddings = f.create_dataset(
            "frame_embeddings", (len(torch_dset), 768, 496), dtype=np.float32
        )
    else:
        raise NotImplementedError

    filenames_emb = f.create_dataset(
        "filenames",
        data=["example_00.wav"] * len(torch_dset),
        dtype=h5py.string_dtype(encoding="utf-8"),
    )

    dloader = torch.utils.data.DataLoader(
        torch_dset, batch_size=batch_size, drop_last=False, num_workers=4
    )
    global_index = 0
    for i, batch in enumerate(tqdm(dloader)):
        feats, filenames = batch
        if use_gpu:
            feats = feats.cuda()

        with torch.inference_mode():
            emb = embedding_model(feats)
            c_glob_emb = emb["global"]
            c_frame_emb = emb["frame"]
        # enumerate, convert to numpy and write to h5py
        bsz = feats.shape[0]
        for b_indx in range(bsz):
            global_embeddings[global_index] = (
                c_glob_emb[b_indx].detach().cpu().numpy()
            )
            frame_embeddings[global_index] = (
                c_frame_emb[b_indx].detach().cpu().numpy()
            )
            filenames_emb[global_index] = filenames[b_indx]
            global_index += 1

    f.close()


class BEATsWrapper(torch.nn.Module):
    """Returns the pooled (global) and per-frame BEATs embeddings."""

    def __init__(self, beats):
        super().__init__()
        self.beats = beats

    def forward(self, waveform):
        padding_mask = torch.zeros_like(waveform).bool()
        frame_emb, _ = self.beats.extract_features(waveform, padding_mask=padding_mask)
        # frame_emb: (B, T, 768) -> (B, 768, T)
        frame_emb = frame_emb.transpose(1, 2)
        return {"global": frame_emb.mean(-1), "frame": frame_emb}


if __name__ == "__main__":
    parser.add_argument(
        "--output_dir",
        default="./embeddings",
        help="Output directory",
    )
    parser.add_argument(
        "--conf_file",
        default="./confs/pretrained.yaml",
        help="The configuration file with all the experiment parameters.",
    )
    parser.add_argument(
        "--pretrained_model",
        default="beats",
        help="The pretrained model to use," "choose between panns and beats",
    )
    parser.add_argument(
        "--use_gpu",
        default="1",
        help="0 does not use GPU, 1 use GPU",
    )
    parser.add_argument(
        "--batch_size",
        default="8",
        help="Batch size for model inference, used to speed up the feature extraction.",
    )

    args = parser.parse_args()
    with open(args.conf_file, "r") as f:
        config = yaml.safe_load(f)

    output_dir = os.path.join(args.output_dir, args.pretrained_model)
    # loading model
    if args.pretrained_model == "panns":
        from local.panns.models import Cnn14_16k

        ckpt_path = os.path.join(torch.hub.get_dir(), "Cnn14_16k_mAP%3D0.438.pth")
        if not os.path.exists(ckpt_path):
            download_from_url(
                "https://zenodo.org/record/3987831/files/Cnn14_16k_mAP%3D0.438.pth?download=1",
                ckpt_path,
            )
        embedding_model = Cnn14_16k()
        embedding_model.load_state_dict(
            torch.load(ckpt_path, map_location="cpu")["model"]
        )
    elif args.pretrained_model == "beats":
        # need to download pre-trained checkpoint
        ckpt_path = os.path.join(torch.hub.get_dir(), "BEATs_iter3_plus_AS2M.pt")
        if not os.path.exists(ckpt_path):
            download_from_url(
                "https://valle.blob.core.windows.net/share/BEATs/BEATs_iter3_plus_AS2M.pt",
                ckpt_path,
            )
        checkpoint = torch.load(ckpt_path)
        cfg = BEATsConfig(checkpoint["cfg"])
        beats = BEATs(cfg)
        beats.load_state_dict(checkpoint["model"])
        embedding_model = BEATsWrapper(beats)
    else:
        raise NotImplementedError

    use_gpu = int(args.use_gpu)
    if use_gpu:
        embedding_model = embedding_model.cuda()
    embedding_model.eval()

    batch_size = int(args.batch_size)
    config["data"]["audio_max_len"] = 10

    train_set = {
        "synth_train": config["data"]["synth_folder"],
        "weak_train": config["data"]["weak_folder"],
        "unlabeled_train": config["data"]["unlabeled_folder"],
        "synth_val": config["data"]["synth_val_folder"],
        "devtest": config["data"]["test_folder"],
    }
    if config["data"].get("strong_folder"):
        train_set["strong_train"] = config["data"]["strong_folder"]

    for k, folder in train_set.items():
        print(f"Extracting embeddings for {k} from {folder}")
        dset = WavDataset(
            folder,
            pad_to=config["data"]["audio_max_len"],
            fs=config["data"]["fs"],
        )
        extract(
            batch_size,
            output_dir,
            k,
            dset,
            embedding_model,
            use_gpu,
        )
