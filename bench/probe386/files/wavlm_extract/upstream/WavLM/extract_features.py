# --------------------------------------------------------
# Dump layer-wise WavLM representations for a list of wav files (SUPERB-style
# feature pre-extraction, k-means target generation, probing experiments).
#
#   python extract_features.py --checkpoint WavLM-Large.pt --tsv data/train.tsv \
#       --out-dir feats/wavlm_large --layer 22 --fp16
# --------------------------------------------------------

import argparse
import logging
import os
import time

import numpy as np
import soundfile as sf
import torch
import torch.nn.functional as F
import tqdm

from WavLM import WavLM, WavLMConfig

logging.basicConfig(
    format="%(asctime)s | %(levelname)s | %(name)s | %(message)s",
    level=logging.INFO,
)
logger = logging.getLogger("wavlm.extract_features")


def get_parser():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkpoint", required=True, help="path to WavLM-*.pt")
    parser.add_argument("--tsv", required=True, help="fairseq-style manifest: root dir on line 1, then <rel path>\\t<frames>")
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--layer", type=int, default=None, help="1-based transformer layer; default = last")
    parser.add_argument("--max-chunk", type=int, default=1600000, help="max samples per forward pass")
    parser.add_argument("--device", default="cuda", help="device to run on, e.g. cuda, cuda:1 or cpu")
    parser.add_argument("--fp16", action="store_true", help="run the encoder in half precision")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--nshard", type=int, default=1)
    return parser


def read_manifest(tsv, rank, nshard):
    with open(tsv) as f:
        root = f.readline().rstrip()
        lines = [line.rstrip() for line in f]
    tot = len(lines)
    shard_size = (tot + nshard - 1) // nshard
    start, end = rank * shard_size, min((rank + 1) * shard_size, tot)
    logger.info(f"rank {rank} of {nshard}: lines [{start}, {end}) of {tot}")
    return root, lines[start:end]


class WavLMFeatureReader(object):
    def __init__(self, ckpt_path, layer, device, fp16=False, max_chunk=1600000):
        # checkpoints were written from the training job on GPU
        checkpoint = torch.load(ckpt_path)
        self.cfg = WavLMConfig(checkpoint["cfg"])
        model = WavLM(self.cfg)
        model.load_state_dict(checkpoint["model"])
        model.eval()
        self.device = device
        self.fp16 = fp16
        self.model = model.to(self.device)
        if fp16:
            self.model = self.model.half()
        self.layer = layer
        self.max_chunk = max_chunk
        logger.info(f"normalize={self.cfg.normalize} layers={self.cfg.encoder_layers}")
        logger.info(f"max_chunk = {self.max_chunk}")

    def read_audio(self, path):
        wav, sr = sf.read(path)
        assert sr == 16000, sr
        if wav.ndim == 2:
            wav = wav.mean(-1)
        return wav

    @torch.no_grad()
    def get_feats(self, path):
        x = self.read_audio(path)
        x = torch.from_numpy(x).float().to(self.device, non_blocking=True)
        if self.cfg.normalize:
            x = F.layer_norm(x, x.shape)
        x = x.view(1, -1)
        if self.fp16:
            x = x.half()

        feat = []
        for start in range(0, x.size(1), self.max_chunk):
            x_chunk = x[:, start: start + self.max_chunk]
            feat_chunk, _ = self.model.extract_features(
                source=x_chunk,
                padding_mask=None,
                mask=False,
                output_layer=self.layer,
            )
            feat.append(feat_chunk)
        return torch.cat(feat, 1).squeeze(0)


def main():
    args = get_parser().parse_args()

    device = torch.device(args.device if torch.cuda.is_available() else "cpu")
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        logger.info(f"using {torch.cuda.get_device_name(device)}")
    else:
        logger.warning("CUDA not available, extracting on CPU (this will be slow)")

    reader = WavLMFeatureReader(
        args.checkpoint, args.layer, device, fp16=args.fp16, max_chunk=args.max_chunk
    )
    root, lines = read_manifest(args.tsv, args.rank, args.nshard)

    os.makedirs(args.out_dir, exist_ok=True)
    split = os.path.splitext(os.path.basename(args.tsv))[0]
    feat_path = os.path.join(args.out_dir, f"{split}_{args.rank}_{args.nshard}.npy")
    leng_path = os.path.join(args.out_dir, f"{split}_{args.rank}_{args.nshard}.len")

    feats, lengs = [], []
    total_audio, t0 = 0.0, time.perf_counter()
    for line in tqdm.tqdm(lines):
        rel_path, nsample = line.split("\t")
        feat = reader.get_feats(os.path.join(root, rel_path))
        feats.append(feat.float().cpu().numpy())
        lengs.append(len(feat))
        total_audio += int(nsample) / 16000

    if device.type == "cuda":  # make sure all kernels finished before reading the clock
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
        logger.info(f"peak GPU memory {peak:.2f} GiB")
    elapsed = time.perf_counter() - t0
    logger.info(f"processed {total_audio / 3600:.2f} h of audio in {elapsed:.1f} s "
                f"(RTF {elapsed / max(total_audio, 1e-6):.4f})")

    np.save(feat_path, np.concatenate(feats, axis=0))
    with open(leng_path, "w") as f:
        f.write("\n".join(str(n) for n in lengs) + "\n")
    logger.info(f"wrote {feat_path}")


if __name__ == "__main__":
    main()
