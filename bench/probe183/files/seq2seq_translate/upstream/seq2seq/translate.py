"""Translate sentences with a trained attention seq2seq checkpoint.

    python seq2seq/translate.py --checkpoint checkpoints/tut3-model.pt \
        --vocab checkpoints/vocab.pt --input data/test.de --beam 5 --gpu 0

Greedy decoding is the default; --beam > 1 enables batched beam search.
Also reports BLEU against --reference if given.
"""
import argparse
import sys
import time
from typing import List, Tuple

import spacy
import torch
import torch.nn.functional as F
from torchtext.data.metrics import bleu_score

from model import Attention, Decoder, Encoder, Seq2Seq  # local module (same layout as train_attention.py)


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--vocab", required=True, help="torch.save'd dict with SRC/TRG vocab (itos/stoi)")
    p.add_argument("--input", required=True)
    p.add_argument("--reference", default=None)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--gpu", type=int, default=0, help="GPU id; -1 for CPU")
    p.add_argument("--half", action="store_true", help="fp16 inference")
    p.add_argument("--batch-size", type=int, default=32)
    return p.parse_args()


def load_model(path: str, vocab: dict, device: torch.device) -> Seq2Seq:
    # checkpoints are written on cuda:0 during training; remap to whatever we run on
    state = torch.load(path, map_location={"cuda:0": str(device)})
    attn = Attention(512, 512)
    enc = Encoder(len(vocab["src_itos"]), 256, 512, 512, 0.0)
    dec = Decoder(len(vocab["trg_itos"]), 256, 512, 512, 0.0, attn)
    model = Seq2Seq(enc, dec, vocab["src_stoi"]["<pad>"], device)
    model.load_state_dict(state)
    return model.to(device).eval()


def encode(sentences: List[str], nlp, vocab: dict, device) -> Tuple[torch.Tensor, torch.Tensor]:
    stoi = vocab["src_stoi"]
    unk = stoi["<unk>"]
    toks = [["<sos>"] + [t.text.lower() for t in nlp.tokenizer(s)] + ["<eos>"] for s in sentences]
    lens = torch.tensor([len(t) for t in toks], dtype=torch.long)
    max_len = int(lens.max())
    ids = torch.full((max_len, len(toks)), stoi["<pad>"], dtype=torch.long)
    for j, t in enumerate(toks):
        ids[: len(t), j] = torch.tensor([stoi.get(w, unk) for w in t])
    # sort by length for pack_padded_sequence (enforce_sorted=True in the encoder)
    lens, order = lens.sort(descending=True)
    return ids[:, order].cuda(device=device, non_blocking=True), lens, order


@torch.no_grad()
def greedy(model: Seq2Seq, src, src_len, vocab, max_len: int) -> List[List[str]]:
    sos = vocab["trg_stoi"]["<sos>"]
    eos = vocab["trg_stoi"]["<eos>"]
    enc_out, hidden = model.encoder(src, src_len)
    mask = model.create_mask(src)
    inp = torch.full((src.shape[1],), sos, dtype=torch.long, device=src.device)
    outs = []
    finished = torch.zeros(src.shape[1], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits, hidden, _ = model.decoder(inp, hidden, enc_out, mask)
        inp = logits.argmax(1)
        outs.append(inp)
        finished |= inp == eos
        if finished.all():
            break
    ids = torch.stack(outs, 1).tolist()
    itos = vocab["trg_itos"]
    res = []
    for row in ids:
        words = []
        for i in row:
            if i == eos:
                break
            words.append(itos[i])
        res.append(words)
    return res


@torch.no_grad()
def beam_search(model: Seq2Seq, src, src_len, vocab, beam: int, max_len: int) -> List[List[str]]:
    """Batched beam search: every source sentence keeps `beam` hypotheses."""
    sos = vocab["trg_stoi"]["<sos>"]
    eos = vocab["trg_stoi"]["<eos>"]
    batch = src.shape[1]
    enc_out, hidden = model.encoder(src, src_len)
    mask = model.create_mask(src)
    # expand encoder state to batch*beam
    enc_out = enc_out.repeat_interleave(beam, dim=1)
    hidden = hidden.repeat_interleave(beam, dim=0)
    mask = mask.repeat_interleave(beam, dim=0)
    scores = torch.zeros(batch, beam, device=src.device)
    scores[:, 1:] = -1e9
    tokens = torch.full((batch * beam, 1), sos, dtype=torch.long, device=src.device)
    done = torch.zeros(batch * beam, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits, hidden, _ = model.decoder(tokens[:, -1], hidden, enc_out, mask)
        logp = F.log_softmax(logits.float(), dim=-1)
        logp[done] = -1e9
        logp[done, eos] = 0.0
        vocab_size = logp.shape[-1]
        cand = (scores.view(-1, 1) + logp).view(batch, beam * vocab_size)
        top_scores, top_idx = cand.topk(beam, dim=1)
        beam_idx = top_idx // vocab_size
        word_idx = top_idx % vocab_size
        base = (torch.arange(batch, device=src.device) * beam).unsqueeze(1)
        select = (base + beam_idx).view(-1)
        tokens = torch.cat([tokens[select], word_idx.view(-1, 1)], dim=1)
        hidden = hidden[select]
        done = done[select] | (word_idx.view(-1) == eos)
        scores = top_scores
        if done.all():
            break
    best = scores.argmax(1)
    itos = vocab["trg_itos"]
    res = []
    for b in range(batch):
        row = tokens[b * beam + best[b], 1:].tolist()
        words = []
        for i in row:
            if i == eos:
                break
            words.append(itos[i])
        res.append(words)
    return res


def main():
    args = get_args()
    if args.gpu >= 0:
        assert torch.cuda.is_available(), "CUDA requested but not available"
        device = torch.device(f"cuda:{args.gpu}")
        torch.backends.cudnn.benchmark = True
    else:
        device = torch.device("cpu")

    vocab = torch.load(args.vocab)
    model = load_model(args.checkpoint, vocab, device)
    if args.half:
        model = model.half()
    nlp = spacy.blank("de")

    with open(args.input, encoding="utf-8") as f:
        sentences = [l.strip() for l in f if l.strip()]

    hyps: List[List[str]] = [None] * len(sentences)  # type: ignore
    start = time.time()
    for i in range(0, len(sentences), args.batch_size):
        chunk = sentences[i : i + args.batch_size]
        src, src_len, order = encode(chunk, nlp, vocab, device)
        if args.beam > 1:
            out = beam_search(model, src, src_len, vocab, args.beam, args.max_len)
        else:
            out = greedy(model, src, src_len, vocab, args.max_len)
        for k, j in enumerate(order.tolist()):
            hyps[i + j] = out[k]
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elapsed = time.time() - start

    for h in hyps:
        print(" ".join(h))
    print(f"translated {len(sentences)} sentences in {elapsed:.1f}s", file=sys.stderr)

    if args.reference:
        with open(args.reference, encoding="utf-8") as f:
            refs = [[l.strip().lower().split()] for l in f if l.strip()]
        print(f"BLEU = {bleu_score(hyps, refs) * 100:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
