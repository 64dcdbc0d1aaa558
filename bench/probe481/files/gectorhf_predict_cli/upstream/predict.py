import argparse
import os

import torch
from transformers import AutoTokenizer

from gector import GECToR, predict, load_verb_dict


def main(args):
    model = GECToR.from_pretrained(args.restore_dir)
    if torch.cuda.is_available():
        model.cuda()
        if args.fp16:
            model.half()
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(args.restore_dir)
    encode, decode = load_verb_dict(args.verb_file)
    srcs = open(args.input).read().rstrip().split('\n')
    final_corrected_sents = predict(
        model,
        tokenizer,
        srcs,
        encode,
        decode,
        keep_confidence=args.keep_confidence,
        min_error_prob=args.min_error_prob,
        n_iteration=args.n_iteration,
        batch_size=args.batch_size,
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, 'w') as f:
        f.write('\n'.join(final_corrected_sents))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--input', required=True)
    parser.add_argument('--restore_dir', required=True)
    parser.add_argument('--verb_file', default='data/verb-form-vocab.txt')
    parser.add_argument('--n_iteration', type=int, default=5)
    parser.add_argument('--batch_size', type=int, default=128)
    parser.add_argument('--keep_confidence', type=float, default=0.0)
    parser.add_argument('--min_error_prob', type=float, default=0.0)
    parser.add_argument('--fp16', action='store_true', help='cast the model to half on GPU')
    parser.add_argument('--out', default='out.txt')
    args = parser.parse_args()
    main(args)
