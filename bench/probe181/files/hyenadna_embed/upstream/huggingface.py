#@title Huggingface Pretrained Wrapper
"""
This is script is a simple HuggingFace wrapper around a HyenaDNA model, to enable a one click example
of how to load the pretrained weights and get embeddings.

It will instantiate a HyenaDNA model (model class is in the `standalone_hyenadna.py`), and handle the downloading of pretrained weights from HuggingFace.

Check out the colab notebook for a simpler and more complete walk through of how to use HyenaDNA with pretrained weights.

Extended here with a batch embedding mode for FASTA files (--fasta), which writes one .npy per record.
"""

import argparse
import json
import os
import re
import subprocess
import time

import numpy as np
import torch
import torch.nn as nn
from transformers import PreTrainedModel

from standalone_hyenadna import HyenaDNAModel
from standalone_hyenadna import CharacterTokenizer


# helper 1
def inject_substring(orig_str):
    """Hack to handle matching keys between models trained with and without
    gradient checkpointing."""

    # modify for mixer keys
    pattern = r"\.mixer"
    injection = ".mixer.layer"

    modified_string = re.sub(pattern, injection, orig_str)

    # modify for mlp keys
    pattern = r"\.mlp"
    injection = ".mlp.layer"

    modified_string = re.sub(pattern, injection, modified_string)

    return modified_string


# helper 2
def load_weights(scratch_dict, pretrained_dict, checkpointing=False):
    """Loads pretrained (backbone only) weights into the scratch state dict."""

    # loop thru state dict of scratch
    # find the corresponding weights in the loaded model, and set it

    # need to do some state dict "surgery"
    for key, value in scratch_dict.items():
        if "backbone" in key:
            # the state dicts differ by one prefix, '.model', so we add that
            key_loaded = "model." + key
            # breakpoint()
            # need to add an extra ".layer" in key
            if checkpointing:
                key_loaded = inject_substring(key_loaded)
            try:
                scratch_dict[key] = pretrained_dict[key_loaded]
            except:
                raise Exception("key mismatch in the state dicts!")

    # scratch_dict has been updated
    return scratch_dict


class HyenaDNAPreTrainedModel(PreTrainedModel):
    """
    An abstract class to handle weights initialization and a simple interface for downloading and loading pretrained
    models.
    """

    base_model_prefix = "hyenadna"

    def __init__(self, config):
        pass

    def forward(self, input_ids, **kwargs):
        return self.model(input_ids, **kwargs)

    @classmethod
    def from_pretrained(cls,
                        path,
                        model_name,
                        download=False,
                        config=None,
                        device="cpu",
                        use_head=False,
                        n_classes=2,
                        ):
        # first check if it is a local path
        pretrained_model_name_or_path = os.path.join(path, model_name)
        if os.path.isdir(pretrained_model_name_or_path) and download == False:
            if config is None:
                config = json.load(open(os.path.join(pretrained_model_name_or_path, "config.json")))
        else:
            hf_url = f"https://huggingface.co/LongSafari/{model_name}"

            subprocess.run(f"rm -rf {pretrained_model_name_or_path}", shell=True)
            command = f"mkdir -p {path} && cd {path} && git lfs install && git clone {hf_url}"
            subprocess.run(command, shell=True)

            if config is None:
                config = json.load(open(os.path.join(pretrained_model_name_or_path, "config.json")))

        scratch_model = HyenaDNAModel(**config, use_head=use_head, n_classes=n_classes)  # the new model format
        loaded_ckpt = torch.load(
            os.path.join(pretrained_model_name_or_path, "weights.ckpt"),
            map_location=torch.device(device),
        )

        # need to load weights slightly different if using gradient checkpointing
        if config.get("checkpoint_mixer", False):
            checkpointing = config["checkpoint_mixer"] == True or config["checkpoint_mixer"] == True
        else:
            checkpointing = False

        # grab state dict from both and load weights
        state_dict = load_weights(scratch_model.state_dict(), loaded_ckpt["state_dict"], checkpointing=checkpointing)

        # scratch model has now been updated
        scratch_model.load_state_dict(state_dict)
        print("Loaded pretrained weights ok!")
        return scratch_model


# ---------------------------------------------------------------------------------------------
# inference helpers
# ---------------------------------------------------------------------------------------------

MAX_LENGTHS = {
    "hyenadna-tiny-1k-seqlen": 1024,
    "hyenadna-small-32k-seqlen": 32768,
    "hyenadna-medium-160k-seqlen": 160000,
    "hyenadna-medium-450k-seqlen": 450000,  # T4 up to here
    "hyenadna-large-1m-seqlen": 1_000_000,  # only A100 (paid tier)
}


def read_fasta(path):
    name, chunks = None, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith(">"):
                if name is not None:
                    yield name, "".join(chunks)
                name, chunks = line[1:].split()[0], []
            else:
                chunks.append(line.upper())
    if name is not None:
        yield name, "".join(chunks)


def embed_records(model, tokenizer, records, device, max_length, out_dir, fp16=False):
    os.makedirs(out_dir, exist_ok=True)
    n, t0 = 0, time.time()
    for name, seq in records:
        seq = seq[:max_length]
        tok_seq = tokenizer(seq)["input_ids"]
        tok_seq = torch.LongTensor(tok_seq).unsqueeze(0).cuda()
        with torch.inference_mode(), torch.cuda.amp.autocast(enabled=fp16):
            embeddings = model(tok_seq)
        # mean-pool over positions -> (d_model,)
        emb = embeddings[0].float().mean(dim=0).cpu().numpy()
        np.save(os.path.join(out_dir, f"{name}.npy"), emb)
        n += 1
    torch.cuda.synchronize()
    print(f"embedded {n} records in {time.time() - t0:.1f}s")


def inference_single(pretrained_model_name="hyenadna-small-32k-seqlen", fasta=None, out_dir="embeddings", fp16=False):
    """
    this selects which backbone to use, and grabs weights/ config from HF
    4 options:
      'hyenadna-tiny-1k-seqlen'   # fine-tune on colab ok
      'hyenadna-small-32k-seqlen'
      'hyenadna-medium-160k-seqlen'  # inference only on colab
      'hyenadna-medium-450k-seqlen'  # inference only on colab
      'hyenadna-large-1m-seqlen'  # inference only on colab
    """

    # you only need to select which model to use here, we'll do the rest!
    max_length = MAX_LENGTHS[pretrained_model_name]

    # data settings:
    use_padding = True
    rc_aug = False  # reverse complement augmentation
    add_eos = False  # add end of sentence token

    # we need these for the decoder head, if using
    use_head = False
    n_classes = 2  # not used for embeddings only

    # you can override with your own backbone config here if you want,
    # otherwise we'll load the HF one in None
    backbone_cfg = None

    device = "cuda" if torch.cuda.is_available() else "cpu"
    print("Using device:", device)

    # instantiate the model (pretrained here)
    if pretrained_model_name in MAX_LENGTHS:
        # use the pretrained Huggingface wrapper instead
        model = HyenaDNAPreTrainedModel.from_pretrained(
            "./checkpoints",
            pretrained_model_name,
            download=True,
            config=backbone_cfg,
            device=device,
            use_head=use_head,
            n_classes=n_classes,
        )

    # from scratch
    elif pretrained_model_name is None:
        model = HyenaDNAModel(**backbone_cfg, use_head=use_head, n_classes=n_classes)

    # create tokenizer
    tokenizer = CharacterTokenizer(
        characters=["A", "C", "G", "T", "N"],  # add DNA characters, N is uncertain
        model_max_length=max_length + 2,  # to account for special tokens, like EOS
        add_special_tokens=False,  # we handle special tokens elsewhere
        padding_side="left",  # since HyenaDNA is causal, we pad on the left
    )

    model.to(device)
    model.eval()

    if fasta is not None:
        embed_records(model, tokenizer, read_fasta(fasta), device, max_length, out_dir, fp16=fp16)
        return

    #### Single embedding example ####

    # create a sample 450k long, prepare
    sequence = "ACTG" * int(max_length / 4)
    tok_seq = tokenizer(sequence)
    tok_seq = tok_seq["input_ids"]  # grab ids

    # place on device, convert to tensor
    tok_seq = torch.LongTensor(tok_seq).unsqueeze(0)  # unsqueeze for batch dim
    tok_seq = tok_seq.to(device)

    # prep model and forward
    with torch.inference_mode():
        embeddings = model(tok_seq)

    print(embeddings.shape)  # embeddings here!
    if device == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="hyenadna-small-32k-seqlen", choices=list(MAX_LENGTHS))
    parser.add_argument("--fasta", default=None, help="optional FASTA file to embed record by record")
    parser.add_argument("--out_dir", default="embeddings")
    parser.add_argument("--fp16", action="store_true", help="autocast to fp16 on the GPU")
    args = parser.parse_args()
    inference_single(args.model, fasta=args.fasta, out_dir=args.out_dir, fp16=args.fp16)
