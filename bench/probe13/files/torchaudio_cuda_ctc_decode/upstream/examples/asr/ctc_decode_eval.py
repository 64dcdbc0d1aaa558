"""Evaluate a wav2vec2 CTC model on LibriSpeech test-other with torchaudio's CUDA CTC beam search.

    python ctc_decode_eval.py --root /data/librispeech --beam-size 10
"""
import argparse
import time

import torch
import torchaudio
from torchaudio.models.decoder import cuda_ctc_decoder, download_pretrained_files
from torchaudio.pipelines import WAV2VEC2_ASR_BASE_960H


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--subset", default="test-other")
    p.add_argument("--beam-size", type=int, default=10)
    p.add_argument("--blank-skip-threshold", type=float, default=0.95)
    p.add_argument("--batch-size", type=int, default=8)
    return p.parse_args()


def collate(batch):
    wavs = [b[0].squeeze(0) for b in batch]
    lens = torch.tensor([w.shape[0] for w in wavs])
    wavs = torch.nn.utils.rnn.pad_sequence(wavs, batch_first=True)
    texts = [b[2] for b in batch]
    return wavs, lens, texts


def main():
    args = parse_args()
    device = torch.device("cuda")

    bundle = WAV2VEC2_ASR_BASE_960H
    model = bundle.get_model().to(device).eval()
    labels = bundle.get_labels()
    tokens = ["<blk>" if t == "-" else t for t in labels]
    tokens = [" " if t == "|" else t for t in tokens]

    decoder = cuda_ctc_decoder(tokens, nbest=1, beam_size=args.beam_size, blank_skip_threshold=args.blank_skip_threshold)

    dataset = torchaudio.datasets.LIBRISPEECH(args.root, url=args.subset, download=False)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, collate_fn=collate, num_workers=4, pin_memory=True)

    total_err, total_words, total_time = 0, 0, 0.0
    for wavs, lens, texts in loader:
        wavs = wavs.to(device, non_blocking=True)
        lens = lens.to(device)
        with torch.inference_mode():
            emissions, out_lens = model(wavs, lens)
            log_probs = torch.log_softmax(emissions, dim=-1)
            torch.cuda.synchronize()  # emissions ready
            t0 = time.perf_counter()
            results = decoder(log_probs, out_lens.to(torch.int32))
            torch.cuda.synchronize()
            total_time += time.perf_counter() - t0
        for hyp, ref in zip(results, texts):
            words = "".join(hyp[0].tokens_to_words(tokens) if hasattr(hyp[0], "tokens_to_words") else
                            [tokens[t] for t in hyp[0].tokens]).split()
            ref_words = ref.split()
            total_err += torchaudio.functional.edit_distance(ref_words, words)
            total_words += len(ref_words)

    print(f"WER: {100.0 * total_err / total_words:.2f}%  decode time: {total_time:.1f}s")


if __name__ == "__main__":
    main()
