import argparse
import glob
import os
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import torch
import torchaudio
import yaml
from tqdm import tqdm

from local.beats.BEATs import BEATs, BEATsConfig
from desed_task.dataio.datasets import read_audio

parser = argparse.ArgumentParser("Extract BEATs embeddings for the DCASE 2024 Task 4 data")
parser.add_argument(
    "--output_dir",
    default="./embeddings",
    help="Output directory in which the embeddings (h5 files) will be saved",
)
parser.add_argument(
    "--conf_file",
    default="./confs/pretrained.yaml",
    help="The configuration file with all the experiment parameters.",
)
parser.add_argument(
    "--pretrained_model",
    default="beats",
    help="The pretrained model to use for extracting the embeddings. Only beats is supported.",
)
parser.add_argument(
    "--use_gpu",
    default="1",
    help="0 does not use GPU, 1 use GPU",
)
parser.add_argument(
    "--batch_size",
    default=32,
    type=int,
    help="Batch size for model inference, used to speed up the feature extraction.",
)


class WavDataset(torch.utils.data.Dataset):
    def __init__(self, folder, pad_to=10, fs=16000, feats_pipeline=None):
        self.fs = fs
        self.pad_to = pad_to * fs if pad_to is not None else None
        self.examples = sorted(glob.glob(os.path.join(folder, "*.wav")))
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


class BEATsModel(torch.nn.Module):
    def __init__(self, cfg_path="./pretrained_models/BEATS_iter3_plus_AS2M.pt"):
        super().__init__()
        checkpoint = torch.load(cfg_path)
        cfg = BEATsConfig(checkpoint["cfg"])
        self.model = BEATs(cfg)
        self.model.load_state_dict(checkpoint["model"])
        self.model.eval()
        for param in self.model.parameters():
            param.requires_grad = False

    def forward(self, x, padding_mask=None):
        # BEATs returns (features, padding_mask); we keep frame-level features
        # and also a mean-pooled global embedding
        frame_feats, _ = self.model.extract_features(x, padding_mask=padding_mask)
        global_feats = frame_feats.mean(1)
        return global_feats, frame_feats.transpose(1, 2)


def extract(batch_size, folder, dset_name, torch_dset, embedding_model, device):
    Path(folder).mkdir(parents=True, exist_ok=True)
    f = h5py.File(os.path.join(folder, "{}.hdf5".format(dset_name)), "w")
    if type(embedding_model).__name__ == "BEATsModel":
        global_embeddings = f.create_dataset(
            "global_embeddings", (len(torch_dset), 527), dtype=np.float32
        )
        frame_embeddings = f.create_dataset(
            "frame_embeddings", (len(torch_dset), 768, 496), dtype=np.float32
        )
    else:
        raise NotImplementedError

    filenames_emb = f.create_dataset(
        "filenames", data=["example_00.wav"] * len(torch_dset), dtype=h5py.special_dtype(vlen=str)
    )
    dloader = torch.utils.data.DataLoader(
        torch_dset, batch_size=batch_size, drop_last=False, num_workers=4, pin_memory=True
    )
    global_index = 0
    for i_batch, batch in enumerate(tqdm(dloader)):
        feats, filenames = batch
        feats = feats.to(device)

        with torch.inference_mode():
            emb_global, emb_frame = embedding_model(feats)
            global_embeddings[global_index : global_index + len(filenames)] = (
                emb_global.detach().cpu().numpy()
            )
            frame_embeddings[global_index : global_index + len(filenames)] = (
                emb_frame.detach().cpu().numpy()
            )
            filenames_emb[global_index : global_index + len(filenames)] = filenames

        global_index += len(filenames)

    f.close()


if __name__ == "__main__":
    args = parser.parse_args()
    with open(args.conf_file, "r") as f:
        config = yaml.safe_load(f)

    output_dir = os.path.join(args.output_dir, args.pretrained_model)
    # loading model
    if args.pretrained_model == "beats":
        # need to download it
        ckpt = "./pretrained_models/BEATS_iter3_plus_AS2M.pt"
        if not os.path.exists(ckpt):
            raise FileNotFoundError(
                "BEATs checkpoint not found, download BEATS_iter3_plus_AS2M.pt from the "
                "unilm repository and place it in ./pretrained_models"
            )
        embedding_model = BEATsModel(cfg_path=ckpt)
    else:
        raise NotImplementedError

    if int(args.use_gpu):
        embedding_model = embedding_model.cuda()
        device = "cuda"
    else:
        device = "cpu"

    embedding_model.eval()
    print(f"Extracting {args.pretrained_model} embeddings on {device}")

    for k in ["synth_folder", "weak_folder", "strong_folder", "unlabeled_folder",
              "synth_val_folder", "test_folder"]:
        if not os.path.exists(config["data"][k]):
            print(f"Skipping {k}, folder {config['data'][k]} does not exist.")
            continue
        c_dset = WavDataset(
            config["data"][k],
            pad_to=config["data"]["audio_max_len"],
            fs=config["data"]["fs"],
        )
        print(f"Extracting embeddings for {k} ({len(c_dset)} files)")
        extract(
            args.batch_size,
            output_dir,
            k.replace("_folder", ""),
            c_dset,
            embedding_model,
            device,
        )
        if device == "cuda":
            torch.cuda.empty_cache()
