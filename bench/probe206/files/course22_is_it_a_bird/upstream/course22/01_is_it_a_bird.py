#!/usr/bin/env python
# coding: utf-8

# # Is it a bird? Creating a model from your own data
# Exported from the "Practical Deep Learning for Coders" 2022 lesson 1 notebook.
#
# In 2015 the idea of creating a computer system that could recognise birds was
# considered so outrageously challenging that it was the basis of an XKCD joke.
# Today we can do exactly that in a few minutes, using entirely free resources!
#
# The basic steps we'll take are:
# 1. Use DuckDuckGo to search for images of "bird photos"
# 2. Use DuckDuckGo to search for images of "forest photos"
# 3. Fine-tune a pretrained neural network to recognise these two groups
# 4. Try running this model on a picture of a bird and see if it works.

import os
import sys
import time
import argparse

iskaggle = os.environ.get('KAGGLE_KERNEL_RUN_TYPE', '')

from duckduckgo_search import ddg_images
from fastcore.all import *
from fastdownload import download_url
from fastai.vision.all import *


def search_images(term, max_images=30):
    print(f"Searching for '{term}'")
    return L(ddg_images(term, max_results=max_images)).itemgot('image')


def check_gpu():
    "Make sure we are actually running on a GPU (Kaggle: Settings -> Accelerator -> GPU T4 x2)"
    if not torch.cuda.is_available():
        print("No GPU found! Training will be very slow.")
        return torch.device('cpu')
    props = torch.cuda.get_device_properties(0)
    print(f"Using {props.name} with {props.total_memory/1024**3:.1f} GB")
    return torch.device('cuda:0')


def pick_batch_size(default=32):
    "Smaller cards (e.g. K80 / 8GB) need a smaller batch"
    if not torch.cuda.is_available(): return 16
    gb = torch.cuda.get_device_properties(0).total_memory / 1024**3
    return 64 if gb > 14 else default


def download_images_for(searches, path, n_per_term=30):
    for o in searches:
        dest = (path/o)
        dest.mkdir(exist_ok=True, parents=True)
        download_images(dest, urls=search_images(f'{o} photo', max_images=n_per_term))
        time.sleep(10)  # Pause between searches to avoid over-loading server
        download_images(dest, urls=search_images(f'{o} sun photo', max_images=n_per_term))
        time.sleep(10)
        download_images(dest, urls=search_images(f'{o} shade photo', max_images=n_per_term))
        time.sleep(10)
        resize_images(path/o, max_size=400, dest=path/o)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--path', default='bird_or_not')
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--arch', default='resnet18')
    parser.add_argument('--skip-download', action='store_true')
    args = parser.parse_args()

    device = check_gpu()
    bs = pick_batch_size()

    # ## Step 1: Download images of birds and non-birds
    urls = search_images('bird photos', max_images=1)
    dest = 'bird.jpg'
    download_url(urls[0], dest, show_progress=False)
    im = Image.open(dest)
    im.to_thumb(256, 256)

    download_url(search_images('forest photos', max_images=1)[0], 'forest.jpg', show_progress=False)
    Image.open('forest.jpg').to_thumb(256, 256)

    searches = 'forest', 'bird'
    path = Path(args.path)
    if not args.skip_download: download_images_for(searches, path)

    # Some photos might not download correctly which could cause our model training to fail, so we'll remove them:
    failed = verify_images(get_image_files(path))
    failed.map(Path.unlink)
    print(f"removed {len(failed)} broken images")

    # ## Step 2: Train our model
    # To train a model, we'll need `DataLoaders`, which is an object that contains a *training set*
    # (the images used to create a model) and a *validation set* (the images used to check the accuracy
    # of a model -- not used during training).
    dls = DataBlock(
        blocks=(ImageBlock, CategoryBlock),
        get_items=get_image_files,
        splitter=RandomSplitter(valid_pct=0.2, seed=42),
        get_y=parent_label,
        item_tfms=[Resize(192, method='squish')]
    ).dataloaders(path, bs=bs, device=device)

    dls.show_batch(max_n=6)

    # Now we're ready to train our model. The fastest widely used computer vision model is `resnet18`.
    # You can train this in a few minutes, even on a CPU! (On a GPU, it generally takes under 10 seconds...)
    learn = vision_learner(dls, getattr(models, args.arch), metrics=error_rate)

    # Mixed precision only pays off on cards with tensor cores (Volta and newer)
    if torch.cuda.get_device_capability()[0] >= 7:
        learn = learn.to_fp16()

    learn.fine_tune(args.epochs)

    # ## Step 3: Use our model (and build your own!)
    is_bird,_,probs = learn.predict(PILImage.create('bird.jpg'))
    print(f"This is a: {is_bird}.")
    print(f"Probability it's a bird: {probs[0]:.4f}")

    learn.export('bird_or_not.pkl')
    if not iskaggle:
        print(torch.cuda.memory_summary(device=device, abbreviated=True))


if __name__ == '__main__':
    main()
