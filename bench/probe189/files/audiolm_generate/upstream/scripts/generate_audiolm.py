"""
Generate audio with a trained AudioLM stack (hubert + kmeans, soundstream, semantic / coarse / fine transformers)

    python scripts/generate_audiolm.py \
        --hubert ./hubert/hubert_base_ls960.pt \
        --kmeans ./hubert/hubert_base_ls960_L9_km500.bin \
        --soundstream ./results/soundstream.400000.pt \
        --semantic ./results/semantic.transformer.200000.pt \
        --coarse ./results/coarse.transformer.200000.pt \
        --fine ./results/fine.transformer.200000.pt \
        --batch-size 4 --output ./samples/audiolm
"""

import os
import time
import argparse
from pathlib import Path

import torch
import torchaudio

from audiolm_pytorch import (
    AudioLM,
    SoundStream,
    HubertWithKmeans,
    SemanticTransformer,
    CoarseTransformer,
    FineTransformer
)

def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hubert', type = str, required = True)
    parser.add_argument('--kmeans', type = str, required = True)
    parser.add_argument('--soundstream', type = str, required = True)
    parser.add_argument('--semantic', type = str, required = True)
    parser.add_argument('--coarse', type = str, required = True)
    parser.add_argument('--fine', type = str, required = True)
    parser.add_argument('--prime-wave', type = str, default = None, help = 'optional audio file to continue from')
    parser.add_argument('--batch-size', type = int, default = 1)
    parser.add_argument('--max-length', type = int, default = 2048)
    parser.add_argument('--device', type = str, default = 'cuda')
    parser.add_argument('--seed', type = int, default = None)
    parser.add_argument('--output', type = str, default = './samples/audiolm')
    return parser.parse_args()

def load_stack(args, device):
    wav2vec = HubertWithKmeans(
        checkpoint_path = args.hubert,
        kmeans_path = args.kmeans
    )

    soundstream = SoundStream.init_and_load_from(args.soundstream)

    semantic_transformer = SemanticTransformer(
        num_semantic_tokens = wav2vec.codebook_size,
        dim = 1024,
        depth = 6,
        flash_attn = True
    )
    semantic_transformer.load(args.semantic)

    coarse_transformer = CoarseTransformer(
        num_semantic_tokens = wav2vec.codebook_size,
        codebook_size = 1024,
        num_coarse_quantizers = 3,
        dim = 512,
        depth = 6,
        flash_attn = True
    )
    coarse_transformer.load(args.coarse)

    fine_transformer = FineTransformer(
        num_coarse_quantizers = 3,
        num_fine_quantizers = 5,
        codebook_size = 1024,
        dim = 512,
        depth = 6,
        flash_attn = True
    )
    fine_transformer.load(args.fine)

    audiolm = AudioLM(
        wav2vec = wav2vec,
        codec = soundstream,
        semantic_transformer = semantic_transformer,
        coarse_transformer = coarse_transformer,
        fine_transformer = fine_transformer
    )

    return audiolm.to(device).eval(), soundstream.target_sample_hz

def main():
    args = parse_args()

    if args.seed is not None:
        torch.manual_seed(args.seed)

    device = torch.device(args.device)

    # bf16 on ampere and newer, otherwise fp16

    major, _ = torch.cuda.get_device_capability(device)
    amp_dtype = torch.bfloat16 if major >= 8 else torch.float16

    audiolm, sample_hz = load_stack(args, device)

    prime_wave = None
    if args.prime_wave is not None:
        prime_wave, prime_sr = torchaudio.load(args.prime_wave)
        prime_wave = torchaudio.functional.resample(prime_wave, prime_sr, sample_hz).to(device)

    out_dir = Path(args.output).parent
    out_dir.mkdir(parents = True, exist_ok = True)

    torch.cuda.synchronize()
    start = time.time()

    with torch.inference_mode(), torch.autocast('cuda', dtype = amp_dtype):
        generated_wav = audiolm(
            batch_size = args.batch_size,
            prime_wave = prime_wave,
            max_length = args.max_length
        )

    torch.cuda.synchronize()
    elapsed = time.time() - start

    print(f'generated {args.batch_size} sample(s) in {elapsed:.2f}s, peak memory {torch.cuda.max_memory_allocated(device) / 2 ** 30:.2f} GiB')

    for ind, wav in enumerate(generated_wav.float().cpu()):
        path = f'{args.output}_{ind}.wav'
        torchaudio.save(path, rearrange_to_channels_first(wav), sample_hz)
        print(f'saved {path}')

def rearrange_to_channels_first(wav):
    return wav.unsqueeze(0) if wav.ndim == 1 else wav

if __name__ == '__main__':
    main()
