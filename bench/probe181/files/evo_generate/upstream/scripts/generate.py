import argparse
import os
import sys
import time

import torch

from evo import Evo, generate


def main():

    # Parse command-line arguments.
    parser = argparse.ArgumentParser(description='Generate sequences using the Evo model.')

    parser.add_argument('--model-name', type=str, default='evo-1-131k-base', help='Evo model name')
    parser.add_argument('--prompt', type=str, default='ACGT', help='Prompt for generation')
    parser.add_argument('--prompt-file', type=str, default=None, help='FASTA/plain text file with one prompt per line')
    parser.add_argument('--n-samples', type=int, default=3, help='Number of sequences to sample at once')
    parser.add_argument('--n-tokens', type=int, default=100, help='Number of tokens to generate')
    parser.add_argument('--temperature', type=float, default=1.0, help='Temperature during sampling')
    parser.add_argument('--top-k', type=int, default=4, help='Top K during sampling')
    parser.add_argument('--top-p', type=float, default=1., help='Top P during sampling')
    parser.add_argument('--cached-generation', type=bool, default=True, help='Use KV caching during generation')
    parser.add_argument('--batched', type=bool, default=True, help='Use batched generation')
    parser.add_argument('--prepend-bos', type=bool, default=False, help='Prepend BOS token')
    parser.add_argument('--device', type=str, default='cuda:0', help='Device for generation')
    parser.add_argument('--seed', type=int, default=1, help='Random seed')
    parser.add_argument('--out', type=str, default=None, help='Write generated sequences to this FASTA')
    parser.add_argument('--verbose', type=int, default=1, help='Verbosity level')

    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)

    # Make sure the 7B model actually fits before we spend minutes loading it.
    if args.device.startswith('cuda'):
        torch.cuda.set_device(args.device)
        total_gb = torch.cuda.get_device_properties(args.device).total_memory / 1e9
        if total_gb < 40:
            print(f'Warning: {total_gb:.0f} GB GPU detected, Evo 7B in bf16 needs ~40 GB for long prompts.',
                  file=sys.stderr)

    # Load model.

    evo_model = Evo(args.model_name)
    model, tokenizer = evo_model.model, evo_model.tokenizer

    model.to(args.device)
    model.eval()

    # Sample sequences.

    if args.prompt_file is not None:
        with open(args.prompt_file) as f:
            prompts = [line.strip() for line in f if line.strip() and not line.startswith('>')]
    else:
        prompts = [args.prompt] * args.n_samples

    t0 = time.time()
    output_seqs, output_scores = generate(
        prompts,
        model,
        tokenizer,
        n_tokens=args.n_tokens,
        temperature=args.temperature,
        top_k=args.top_k,
        top_p=args.top_p,
        cached_generation=args.cached_generation,
        batched=args.batched,
        prepend_bos=args.prepend_bos,
        device=args.device,
        verbose=args.verbose,
    )
    torch.cuda.synchronize()
    elapsed = time.time() - t0

    print('Generated sequences:')
    for output_seq, output_score in zip(output_seqs, output_scores):
        print(f'{output_score:.4f}\t{output_seq}')
    print(f'{len(output_seqs) * args.n_tokens / elapsed:.1f} tokens/s, '
          f'peak memory {torch.cuda.max_memory_allocated() / 1e9:.1f} GB')

    if args.out is not None:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as f:
            for i, (seq, score) in enumerate(zip(output_seqs, output_scores)):
                f.write(f'>sample_{i} score={score:.4f}\n{seq}\n')


if __name__ == '__main__':
    main()
