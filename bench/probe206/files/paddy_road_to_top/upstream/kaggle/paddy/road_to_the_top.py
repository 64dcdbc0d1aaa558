#!/usr/bin/env python
# coding: utf-8
# Road to the Top, part 2/3 -- Paddy Doctor: Paddy Disease Classification
# (exported from the Kaggle notebook; "!" cells turned into subprocess calls)

import os, gc, subprocess
from pathlib import Path

iskaggle = os.environ.get('KAGGLE_KERNEL_RUN_TYPE', '')
creds = ''

from fastkaggle import *
from fastai.vision.all import *
import timm

comp = 'paddy-disease-classification'
path = setup_comp(comp, install='fastai "timm>=0.6.2.dev0"')
set_seed(42)

# On Kaggle we get two T4s; pin this notebook to the first one so the second one
# stays free for the other kernel running the large models.
os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')

tst_files = get_image_files(path/'test_images').sorted()
trn_path = path/'train_images'


def report_gpu():
    "Show what's using the GPU, and free up what we can"
    print(torch.cuda.list_gpu_processes())
    gc.collect()
    torch.cuda.empty_cache()


def nvidia_smi():
    try: print(subprocess.run(['nvidia-smi'], capture_output=True, text=True).stdout)
    except FileNotFoundError: print("nvidia-smi not found")


# ## Going faster
# First we'll repeat the steps we used last time to access the data and ensure
# all the latest libraries are installed, and we'll also grab the files we'll
# need for the test set. The train function is the same as before, except that
# we now support gradient accumulation.

def train(arch, size, item=Resize(480, method='squish'), accum=1, finetune=True, epochs=12):
    dls = ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, item_tfms=item,
        batch_tfms=aug_transforms(size=size, min_scale=0.75), bs=64//accum, device='cuda')
    cbs = GradientAccumulation(64) if accum else []
    learn = vision_learner(dls, arch, metrics=error_rate, cbs=cbs).to_fp16()
    if finetune:
        learn.fine_tune(epochs, 0.01)
        return learn.tta(dl=dls.test_dl(tst_files))
    else:
        learn.unfreeze()
        learn.fit_one_cycle(epochs, 0.01)


# ## Checking memory use
# We'll now check the memory use for each of the architectures and sizes we'll be
# training later, to ensure they all fit in 16GB RAM.

def check_memory(arch, size, accum=1, item=Resize(480, method='squish')):
    torch.cuda.reset_peak_memory_stats()
    train(arch, size, item=item, accum=accum, finetune=False, epochs=1)
    peak = torch.cuda.max_memory_allocated() / 1e9
    print(f"{arch:<35} size={size} accum={accum}: peak {peak:.2f} GB")
    report_gpu()
    return peak


def memory_survey():
    res = {}
    res['convnext_small_in22k'] = check_memory('convnext_small_in22k', 128, accum=4)
    res['vit_large_patch16_224'] = check_memory('vit_large_patch16_224', 224, accum=4)
    res['swinv2_large_window12_192_22k'] = check_memory('swinv2_large_window12_192_22k', 192, accum=4)
    res['swin_large_patch4_window7_224'] = check_memory('swin_large_patch4_window7_224', 224, accum=4)
    return res


# ## Running the models
# Here's the list of models we'll be training, and the image sizes / augmentation
# for each. We'll just use the default settings for everything else.

res = 640, 480

models = {
    'convnext_large_in22k': {
        (Resize(res), (320, 224)),
    }, 'vit_large_patch16_224': {
        (Resize(480, method='squish'), 224),
        (Resize(res), 224),
    }, 'swinv2_large_window12_192_22k': {
        (Resize(480, method='squish'), 192),
        (Resize(res), 192),
    }, 'swin_large_patch4_window7_224': {
        (Resize(res), 224),
    }
}

tta_res = []


def run_all(models):
    for arch, details in models.items():
        for item, size in details:
            print('---', arch)
            print(size)
            print(item.name)
            tta_res.append(train(arch, size, item=item, accum=2))  #, epochs=1))
            gc.collect(); torch.cuda.empty_cache()
            save_pickle('tta_res.pkl', tta_res)


# ## Ensembling
# Since this has taken quite a while to run, we save the results, just in case
# something goes wrong!

def ensemble(tta_res):
    tta_prs = first(zip(*tta_res))
    # vit models get double weight since they did better on the validation set
    tta_prs += tta_prs[2:4]
    avg_pr = torch.stack(tta_prs).mean(0)
    return avg_pr


def make_submission(avg_pr, dls):
    idxs = avg_pr.argmax(dim=1)
    vocab = np.array(dls.vocab)
    ss = pd.read_csv(path/'sample_submission.csv')
    ss['label'] = vocab[idxs]
    ss.to_csv('subm.csv', index=False)
    if not iskaggle:
        from kaggle import api
        api.competition_submit_cli('subm.csv', 'part 3 v2', comp)


if __name__ == '__main__':
    nvidia_smi()
    if not iskaggle: memory_survey()
    run_all(models)
    avg_pr = ensemble(tta_res)
    dls = ImageDataLoaders.from_folder(trn_path, valid_pct=0.2, item_tfms=Resize(480, method='squish'),
        batch_tfms=aug_transforms(size=224, min_scale=0.75))
    make_submission(avg_pr, dls)
    if not iskaggle:
        push_notebook('jhoward', 'multi-target-road-to-the-top-part-4',
                      title='Multi-target: Road to the Top, Part 4',
                      file='10-multi-target.ipynb',
                      competition=comp, private=False, gpu=True)
