import webdataset as wds
from PIL import Image
import io
import matplotlib.pyplot as plt
import os
import json
import argparse

from warnings import filterwarnings


# os.environ["CUDA_VISIBLE_DEVICES"] = "0"    # choose GPU if you are on a multi GPU server
import numpy as np
import torch
import pytorch_lightning as pl
import torch.nn as nn
from torchvision import datasets, transforms
import tqdm

from os.path import join
from datasets import load_dataset
import pandas as pd
from torch.utils.data import Dataset, DataLoader
import json

import clip


from PIL import Image, ImageFile


#####  This script will predict the aesthetic score for this image file:

img_path = "test.jpg"


# if you changed the MLP architecture during training, change it also here:
class MLP(pl.LightningModule):
    def __init__(self, input_size, xcol='emb', ycol='avg_rating'):
        super().__init__()
        self.input_size = input_size
        self.xcol = xcol
        self.ycol = ycol
        self.layers = nn.Sequential(
            nn.Linear(self.input_size, 1024),
            #nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(1024, 128),
            #nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(128, 64),
            #nn.ReLU(),
            nn.Dropout(0.1),

            nn.Linear(64, 16),
            #nn.ReLU(),

            nn.Linear(16, 1)
        )

    def forward(self, x):
        return self.layers(x)

    def training_step(self, batch, batch_idx):
            x = batch[self.xcol]
            y = batch[self.ycol].reshape(-1, 1)
            x_hat = self.layers(x)
            loss = F.mse_loss(x_hat, y)
            return loss

    def validation_step(self, batch, batch_idx):
        x = batch[self.xcol]
        y = batch[self.ycol].reshape(-1, 1)
        x_hat = self.layers(x)
        loss = F.mse_loss(x_hat, y)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        return optimizer

def normalized(a, axis=-1, order=2):
    import numpy as np  # pylint: disable=import-outside-toplevel

    l2 = np.atleast_1d(np.linalg.norm(a, order, axis))
    l2[l2 == 0] = 1
    return a / np.expand_dims(l2, axis)


class FolderImages(Dataset):
    """All images of a folder, preprocessed for CLIP; used by --folder mode."""
    def __init__(self, folder, preprocess):
        exts = (".jpg", ".jpeg", ".png", ".webp")
        self.paths = sorted(join(folder, f) for f in os.listdir(folder) if f.lower().endswith(exts))
        self.preprocess = preprocess

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        try:
            img = Image.open(self.paths[i]).convert("RGB")
        except Exception:
            img = Image.new("RGB", (224, 224))
        return self.preprocess(img), self.paths[i]


parser = argparse.ArgumentParser()
parser.add_argument("--image", default=img_path)
parser.add_argument("--folder", default=None, help="score every image in this folder instead")
parser.add_argument("--checkpoint", default="sac+logos+ava1-l14-linearMSE.pth")
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--out", default="aesthetic_scores.jsonl")
args = parser.parse_args()


model = MLP(768)  # CLIP embedding dim is 768 for CLIP ViT L 14

s = torch.load(args.checkpoint)   # load the model you trained previously or the model available in this repo

model.load_state_dict(s)

model.to("cuda")
model.eval()


device = "cuda" if torch.cuda.is_available() else "cpu"
model2, preprocess = clip.load("ViT-L/14", device=device)  #RN50x64


if args.folder is None:
    pil_image = Image.open(args.image)

    image = preprocess(pil_image).unsqueeze(0).to(device)

    with torch.no_grad():
       image_features = model2.encode_image(image)

    im_emb_arr = normalized(image_features.cpu().detach().numpy() )

    prediction = model(torch.from_numpy(im_emb_arr).to(device).type(torch.cuda.FloatTensor))

    print( "Aesthetic score predicted by the model:")
    print( prediction )
else:
    loader = DataLoader(FolderImages(args.folder, preprocess), batch_size=args.batch_size,
                        num_workers=8, pin_memory=True)
    scores = []
    with open(args.out, "w") as fout, torch.no_grad():
        for images, paths in tqdm.tqdm(loader):
            images = images.cuda(non_blocking=True)
            image_features = model2.encode_image(images)
            im_emb_arr = normalized(image_features.cpu().detach().numpy())
            emb = torch.from_numpy(im_emb_arr).type(torch.cuda.FloatTensor)
            preds = model(emb).squeeze(1).cpu().tolist()
            for p, sc in zip(paths, preds):
                fout.write(json.dumps({"path": p, "aesthetic": sc}) + "\n")
            scores.extend(preds)
    print(f"scored {len(scores)} images, mean aesthetic {np.mean(scores):.3f}")
