"""Generate handwriting for a text line with a trained synthesis network.

    python generate.py --checkpoint checkpoints/best_model.pt --text "hello world" --bias 1.0
    python generate.py --checkpoint checkpoints/best_model.pt --text_file lines.txt --out_dir samples/

Optionally primes the network with a real stroke sequence to imitate a writer's style
(--prime_strokes / --prime_text).
"""
import argparse
import os

import numpy as np
import torch

from model import HandwritingSynthesisNetwork, one_hot
from utils.plot import plot_stroke, strokes_to_svg


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--text", default=None)
    p.add_argument("--text_file", default=None)
    p.add_argument("--bias", type=float, default=0.5, help="sampling bias; higher = neater")
    p.add_argument("--max_steps", type=int, default=1500)
    p.add_argument("--prime_strokes", default=None, help=".npy of (T, 3) strokes of the style to imitate")
    p.add_argument("--prime_text", default=None)
    p.add_argument("--out_dir", default="samples")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--cpu", action="store_true", help="force CPU even if a GPU is available")
    return p.parse_args()


def encode_text(text, vocab):
    ids = [vocab.get(c, vocab.get(" ")) for c in text]
    return torch.LongTensor(ids).unsqueeze(0)


def load_model(path, device):
    state = torch.load(path, map_location="cpu")
    cfg = state["config"]
    vocab = state["vocab"]
    model = HandwritingSynthesisNetwork(len(vocab), hidden_size=cfg["hidden_size"],
                                        num_window_mixtures=cfg["window_mixtures"],
                                        num_output_mixtures=cfg["output_mixtures"])
    sd = state["model"]
    if next(iter(sd)).startswith("module."):
        sd = {k[len("module."):]: v for k, v in sd.items()}
    model.load_state_dict(sd)
    model.to(device)
    model.eval()
    return model, vocab


@torch.no_grad()
def prime(model, prime_strokes, prime_text, vocab, device):
    """Run the network over a real sample so that the hidden state carries its style."""
    strokes = torch.from_numpy(prime_strokes).float().unsqueeze(0).to(device)
    chars = one_hot(encode_text(prime_text, vocab).to(device), len(vocab))
    mask = torch.ones(chars.shape[:2], device=device)
    _, hidden, _ = model(strokes, chars, mask)
    return hidden


@torch.no_grad()
def generate(model, text, vocab, device, bias, max_steps, hidden=None):
    chars = one_hot(encode_text(text, vocab).to(device), len(vocab))
    mask = torch.ones(chars.shape[:2], device=device)
    if hidden is None:
        return model.sample(chars, mask, max_steps=max_steps, bias=bias)
    # primed sampling: continue from the given hidden state
    x = torch.zeros(1, 1, 3, device=device)
    strokes = []
    for _ in range(max_steps):
        params, hidden, phi = model(x, chars, mask, hidden=hidden, bias=bias)
        eos, pi, mu1, mu2, s1, s2, rho = [p[:, -1] for p in params]
        k = torch.multinomial(pi, 1).item()
        mean = [mu1[0, k].item(), mu2[0, k].item()]
        c = rho[0, k].item() * s1[0, k].item() * s2[0, k].item()
        cov = [[s1[0, k].item() ** 2, c], [c, s2[0, k].item() ** 2]]
        dx, dy = np.random.multivariate_normal(mean, cov)
        pen = float(np.random.rand() < eos[0, 0].item())
        strokes.append([dx, dy, pen])
        x = torch.tensor([[[dx, dy, pen]]], device=device, dtype=torch.float32)
        if phi[0, -1, -1] > 0.5:
            break
    return np.array(strokes, dtype=np.float32)


def main():
    args = parse_args()
    if args.seed is not None:
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)

    device = "cuda" if torch.cuda.is_available() and not args.cpu else "cpu"
    model, vocab = load_model(args.checkpoint, device)

    lines = []
    if args.text:
        lines.append(args.text)
    if args.text_file:
        with open(args.text_file) as f:
            lines += [l.rstrip("\n") for l in f if l.strip()]
    if not lines:
        raise SystemExit("give --text or --text_file")

    hidden = None
    if args.prime_strokes:
        assert args.prime_text, "--prime_text is required with --prime_strokes"
        hidden = prime(model, np.load(args.prime_strokes), args.prime_text, vocab, device)

    os.makedirs(args.out_dir, exist_ok=True)
    for i, line in enumerate(lines):
        strokes = generate(model, line, vocab, device, args.bias, args.max_steps, hidden=hidden)
        np.save(os.path.join(args.out_dir, "line_%03d.npy" % i), strokes)
        plot_stroke(strokes, os.path.join(args.out_dir, "line_%03d.png" % i))
        strokes_to_svg(strokes, os.path.join(args.out_dir, "line_%03d.svg" % i))
        print("[%d/%d] %r -> %d points" % (i + 1, len(lines), line, len(strokes)))


if __name__ == "__main__":
    main()
