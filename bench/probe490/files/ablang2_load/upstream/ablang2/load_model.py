import os
import json
import argparse
import warnings

import torch
import requests

from .models.ablang2.ablang import AbLang as AbLang2Paired
from .models.ablang2.tokenizers import ABtokenizer as AbLang2PairedTokenizer
from .models.ablang1.model import AbLang as AbLang1
from .models.ablang1.tokenizers import ABtokenizer as AbLang1Tokenizer


DOWNLOAD_ROOT = "https://zenodo.org/records/10185169/files"

MODEL_ARCHIVES = {
    "ablang1-heavy": "ablang1-heavy.tar.gz",
    "ablang1-light": "ablang1-light.tar.gz",
    "ablang2-paired": "ablang2-weights.tar.gz",
    "tcrlang-paired": "tcrlang-weights.tar.gz",
}


def _resolve_device(device):
    """Accepts 'cpu', 'cuda', 'cuda:1', an int, or a torch.device."""
    if isinstance(device, torch.device):
        return device
    if isinstance(device, int):
        return torch.device(f"cuda:{device}")
    if device == "cuda" and not torch.cuda.is_available():
        warnings.warn("CUDA requested but no GPU is visible; AbLang2 will run on the CPU.")
        return torch.device("cpu")
    return torch.device(device)


def load_model(model_to_use="ablang2-paired", random_init=False, device='cpu'):
    device = _resolve_device(device)

    if model_to_use in ("ablang1-heavy", "ablang1-light"):
        AbLang, tokenizer, hparams = fetch_ablang1(model_to_use, random_init=random_init, device=device)
    elif model_to_use in ("ablang2-paired", "tcrlang-paired"):
        AbLang, tokenizer, hparams = fetch_ablang2(model_to_use, random_init=random_init, device=device)
    else:
        assert False, f"The selected model to use ({model_to_use}) does not exist.\
        Please select a valid model."

    return AbLang, tokenizer, hparams


def _download(model_to_use, model_folder):
    archive = MODEL_ARCHIVES[model_to_use]
    url = f"{DOWNLOAD_ROOT}/{archive}?download=1"
    tmp_file = os.path.join(model_folder, "tmp.tar.gz")

    print(f"Downloading {model_to_use} weights from {url} ...")
    with open(tmp_file, 'wb') as f:
        f.write(requests.get(url).content)

    os.system(f"tar -zxvf {tmp_file} -C {model_folder}")
    os.remove(tmp_file)


def fetch_ablang1(model_to_use, random_init=False, device='cpu'):
    chain = model_to_use.split("-")[-1]
    local_model_dir = os.path.join(os.path.dirname(__file__), "model-weights-{}".format(model_to_use))
    os.makedirs(local_model_dir, exist_ok=True)

    if not os.path.isfile(os.path.join(local_model_dir, "amodel.pt")):
        _download(model_to_use, local_model_dir)

    with open(os.path.join(local_model_dir, 'hparams.json'), 'r', encoding='utf-8') as f:
        hparams = argparse.Namespace(**json.load(f))

    AbLang = AbLang1(hparams)
    if not random_init:
        state = torch.load(os.path.join(local_model_dir, 'amodel.pt'), map_location=device)
        AbLang.load_state_dict(state)

    tokenizer = AbLang1Tokenizer(os.path.join(local_model_dir, 'vocab.json'))

    AbLang.to(device)
    hparams.chain = chain
    return AbLang, tokenizer, hparams


def fetch_ablang2(model_to_use, random_init=False, device='cpu'):
    local_model_dir = os.path.join(os.path.dirname(__file__), "model-weights-{}".format(model_to_use))
    os.makedirs(local_model_dir, exist_ok=True)

    if not os.path.isfile(os.path.join(local_model_dir, "model.pt")):
        _download(model_to_use, local_model_dir)

    with open(os.path.join(local_model_dir, 'hparams.json'), 'r', encoding='utf-8') as f:
        hparams = argparse.Namespace(**json.load(f))

    AbLang = AbLang2Paired(
        vocab_size=hparams.vocab_size,
        hidden_embed_size=hparams.hidden_embed_size,
        n_attn_heads=hparams.n_attn_heads,
        n_encoder_blocks=hparams.n_encoder_blocks,
        padding_tkn=hparams.pad_tkn,
        mask_tkn=hparams.mask_tkn,
        layer_norm_eps=hparams.layer_norm_eps,
        a_fn=hparams.a_fn,
        dropout=hparams.dropout,
    )

    if not random_init:
        # Weights were saved from a GPU run; map them onto the requested device directly.
        state = torch.load(os.path.join(local_model_dir, 'model.pt'), map_location=device)
        AbLang.load_state_dict(state)

    tokenizer = AbLang2PairedTokenizer(vocab_dir=os.path.join(local_model_dir, 'vocab.json'))

    AbLang.to(device)
    return AbLang, tokenizer, hparams
