# WavTokenizer: reconstruct a folder of wavs and write the token ids next to them.
import argparse
import os
import time

import torch
import torchaudio

from encoder.utils import convert_audio
from decoder.pretrained import WavTokenizer

os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0")

device1 = torch.device('cuda:0')
# device1 = torch.device('cpu')


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config_path", default="./configs/wavtokenizer_smalldata_frame40_3s_nq1_code4096_dim512_kmeans200_attn.yaml")
    parser.add_argument("--model_path", default="./result/train/wavtokenizer/lightning_logs/version_0/checkpoints/last.ckpt")
    parser.add_argument("--input_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--bandwidth_id", type=int, default=0)
    parser.add_argument("--half", action="store_true", help="fp16 inference on GPU")
    return parser.parse_args()


def main():
    args = parse_args()
    wavtokenizer = WavTokenizer.from_pretrained0802(args.config_path, args.model_path)
    wavtokenizer = wavtokenizer.to(device1)
    if args.half:
        wavtokenizer = wavtokenizer.half()
    os.makedirs(args.output_dir, exist_ok=True)

    bandwidth_id = torch.tensor([args.bandwidth_id])
    files = sorted(f for f in os.listdir(args.input_dir) if f.endswith(".wav"))
    features_all = []
    total_audio = 0.0
    start = time.time()
    for name in files:
        wav, sr = torchaudio.load(os.path.join(args.input_dir, name))
        wav = convert_audio(wav, sr, 24000, 1)
        total_audio += wav.shape[-1] / 24000
        wav = wav.to(device1)
        if args.half:
            wav = wav.half()
        features, discrete_code = wavtokenizer.encode_infer(wav, bandwidth_id=bandwidth_id.cuda())
        features_all.append(features)
        torch.save(discrete_code.cpu(), os.path.join(args.output_dir, name.replace(".wav", ".codes.pt")))

    for name, features in zip(files, features_all):
        audio_out = wavtokenizer.decode(features, bandwidth_id=bandwidth_id.to(device1))
        torchaudio.save(os.path.join(args.output_dir, name), audio_out.float().cpu(),
                        sample_rate=24000, encoding='PCM_S', bits_per_sample=16)
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print(f"{len(files)} files, RTF {elapsed / max(total_audio, 1e-6):.4f}")


if __name__ == "__main__":
    main()
