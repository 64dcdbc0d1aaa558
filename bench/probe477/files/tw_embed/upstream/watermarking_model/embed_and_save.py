"""Embed a watermark into every wav of a folder with a trained Timbre-watermarking
checkpoint, save the watermarked audio and check the bit accuracy right away.

    python embed_and_save.py -c results/ckpt/pth/none-conv2_ep_20.pth.tar -i data/LibriTTS/test -o out/wm
"""
import os
import glob
import yaml
import torch
import argparse
import logging
import numpy as np
import soundfile
import torchaudio
from rich.progress import track

from model.conv2_mel_modules import Encoder, Decoder

logging.basicConfig(level=logging.INFO, format='%(message)s')


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("-p", "--process_config", type=str, default="config/process.yaml")
    parser.add_argument("-m", "--model_config", type=str, default="config/model.yaml")
    parser.add_argument("-t", "--train_config", type=str, default="config/train.yaml")
    parser.add_argument("-c", "--ckpt", type=str, required=True)
    parser.add_argument("-i", "--input_dir", type=str, required=True)
    parser.add_argument("-o", "--output_dir", type=str, required=True)
    parser.add_argument("--msg", type=str, default=None, help="bit string; random if omitted")
    parser.add_argument("--gpu", type=int, default=0)
    return parser.parse_args()


def main():
    args = parse_args()
    device = torch.device(f"cuda:{args.gpu}")
    process_config = yaml.load(open(args.process_config, "r"), Loader=yaml.FullLoader)
    model_config = yaml.load(open(args.model_config, "r"), Loader=yaml.FullLoader)
    train_config = yaml.load(open(args.train_config, "r"), Loader=yaml.FullLoader)

    msg_length = train_config["watermark"]["length"]
    win_dim = process_config["audio"]["win_len"]
    embedding_dim = model_config["dim"]["embedding"]
    nlayers_encoder = model_config["layer"]["nlayers_encoder"]
    nlayers_decoder = model_config["layer"]["nlayers_decoder"]
    attention_heads_encoder = model_config["layer"]["attention_heads_encoder"]
    attention_heads_decoder = model_config["layer"]["attention_heads_decoder"]

    encoder = Encoder(process_config, model_config, msg_length, win_dim, embedding_dim,
                      nlayers_encoder=nlayers_encoder, attention_heads=attention_heads_encoder).to(device)
    decoder = Decoder(process_config, model_config, msg_length, win_dim, embedding_dim,
                      nlayers_decoder=nlayers_decoder, attention_heads=attention_heads_decoder).to(device)
    ckpt = torch.load(args.ckpt, map_location=device)
    encoder.load_state_dict(ckpt["encoder"])
    decoder.load_state_dict(ckpt["decoder"], strict=False)
    encoder.eval()
    decoder.eval()

    if args.msg is None:
        msg = np.random.choice([0, 1], [1, 1, msg_length])
    else:
        assert len(args.msg) == msg_length
        msg = np.array([[[int(c) for c in args.msg]]])
    logging.info("message: {}".format("".join(str(b) for b in msg.flatten())))
    msg = torch.from_numpy(msg).float() * 2 - 1
    msg = msg.to(device)

    os.makedirs(args.output_dir, exist_ok=True)
    sr = process_config["audio"]["sample_rate"]
    files = sorted(glob.glob(os.path.join(args.input_dir, "**", "*.wav"), recursive=True))
    accs, snrs = [], []
    with torch.no_grad():
        for path in track(files):
            wav, file_sr = torchaudio.load(path)
            if file_sr != sr:
                wav = torchaudio.functional.resample(wav, file_sr, sr)
            wav = wav[:1].unsqueeze(0).to(device)  # 1 x 1 x T
            encoded, _ = encoder.test_forward(wav, msg)
            decoded = decoder.test_forward(encoded)
            acc = (decoded >= 0).eq(msg >= 0).sum().float() / msg.numel()
            snr = 10 * torch.log10(torch.mean(wav ** 2) / torch.mean((wav - encoded) ** 2))
            accs.append(acc.item())
            snrs.append(snr.item())
            out_path = os.path.join(args.output_dir, os.path.relpath(path, args.input_dir))
            os.makedirs(os.path.dirname(out_path), exist_ok=True)
            soundfile.write(out_path, encoded.squeeze().cpu().numpy(), sr)

    logging.info("files: {} | mean acc: {:.4f} | mean snr: {:.2f} dB".format(len(files), np.mean(accs), np.mean(snrs)))


if __name__ == "__main__":
    main()
