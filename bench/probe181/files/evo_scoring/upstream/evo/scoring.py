import numpy as np
import torch
from typing import List, Tuple

from stripedhyena.model import StripedHyena
from stripedhyena.tokenizer import CharLevelTokenizer


def prepare_batch(
    seqs: List[str],
    tokenizer: CharLevelTokenizer,
    prepend_bos: bool = True,
    device: str = 'cuda:0'
) -> Tuple[torch.Tensor, List[int]]:
    """
    Takes in a list of sequences, tokenizes them, and puts them in a tensor batch.
    If the sequences have differing lengths, then pad up to the maximum sequence length.
    """
    seq_lengths = [ len(seq) for seq in seqs ]
    max_seq_length = max(seq_lengths)

    input_ids = []
    for seq in seqs:
        padding = [tokenizer.pad_id] * (max_seq_length - len(seq))
        input_ids.append(
            torch.tensor(
                ([tokenizer.eod_id] * int(prepend_bos)) + tokenizer.tokenize(seq) + padding,
                dtype=torch.long,
            ).to(device).unsqueeze(0)
        )
    input_ids = torch.cat(input_ids, dim=0)

    return input_ids, seq_lengths


def logits_to_logprobs(
    logits: torch.Tensor,
    input_ids: torch.Tensor,
    trim_bos: bool = True,
) -> torch.Tensor:
    """
    Takes in a tensor of logits of dimension (batch, length, vocab).
    Computes the log-likelihoods using a softmax along the vocab dimension.
    Uses the `input_ids` to index into the log-likelihoods and returns the likelihood
    of the provided sequence at each position with dimension (batch, length).
    """
    softmax_logprobs = torch.log_softmax(logits, dim=-1)
    if trim_bos:
        softmax_logprobs = softmax_logprobs[:, :-1]
        input_ids = input_ids[:, 1:]
    assert(softmax_logprobs.shape[1] == input_ids.shape[1])

    logprobs = torch.gather(
        softmax_logprobs,       # Gather likelihoods...
        2,                      # along the vocab dimension...
        input_ids.unsqueeze(-1) # using the token ids to index.
    ).squeeze(-1)

    return logprobs


def score_sequences(
    seqs: List[str],
    model: StripedHyena,
    tokenizer: CharLevelTokenizer,
    reduce_method: str = 'mean',
    device: str = 'cuda:0',
) -> List[float]:
    """
    Computes the model log-likelihood scores for sequences in `seqs`.
    Uses `reduce_method` to take the mean or sum across the likelihoods at each
    position (default: `'mean'`).

    Returns a list of scalar scores corresponding to the reduced log-likelihoods for
    each sequence.
    """
    input_ids, seq_lengths = prepare_batch(seqs, tokenizer, device=device, prepend_bos=False)
    assert(len(seq_lengths) == input_ids.shape[0])

    with torch.inference_mode():
        logits, _ = model(input_ids) # (batch, length, vocab)

    logprobs = logits_to_logprobs(logits, input_ids, trim_bos=True)
    logprobs = logprobs.float().cpu().numpy()

    if reduce_method == 'sum':
        reduce_func = np.sum
    elif reduce_method == 'mean':
        reduce_func = np.mean
    else:
        raise ValueError(f'Invalid reduce_method {reduce_method}')

    return [
        reduce_func(logprobs[idx][:seq_lengths[idx]]) for idx in range(len(seq_lengths))
    ]


def score_sequences_rc(
    seqs: List[str],
    model: StripedHyena,
    tokenizer: CharLevelTokenizer,
    reduce_method: str = 'mean',
    device: str = "cuda:0",
    batch_size: int = 8,
) -> List[float]:
    """
    Like `score_sequences`, but averages the score of each sequence with the score of its
    reverse complement. Processes `batch_size` sequences at a time to bound GPU memory
    (Evo 7B at 131k context does not fit more than a handful of long sequences on an 80GB card).
    """
    complement = str.maketrans('ACGTacgt', 'TGCAtgca')
    rc_seqs = [ seq.translate(complement)[::-1] for seq in seqs ]

    scores, rc_scores = [], []
    for start in range(0, len(seqs), batch_size):
        scores += score_sequences(seqs[start:start + batch_size], model, tokenizer, reduce_method, device)
        rc_scores += score_sequences(rc_seqs[start:start + batch_size], model, tokenizer, reduce_method, device)
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    return [ (s + r) / 2. for s, r in zip(scores, rc_scores) ]


def positional_entropies(
    seqs: List[str],
    model: StripedHyena,
    tokenizer: CharLevelTokenizer,
) -> List[np.ndarray]:
    """
    Computes the positional entropy of the model's next-token distribution for each sequence,
    a proxy for per-position conservation. Runs under bf16 autocast because the poles and
    residues are kept in fp32 (see `to_bfloat16_except_poles_residues`).
    """
    input_ids, seq_lengths = prepare_batch(seqs, tokenizer, prepend_bos=True)
    with torch.inference_mode(), torch.autocast(device_type='cuda', dtype=torch.bfloat16):
        logits, _ = model(input_ids)
    probs = torch.softmax(logits.float(), dim=-1)
    entropy = -(probs * torch.log(probs.clamp(min=1e-12))).sum(-1)
    entropy = entropy.cpu().numpy()
    return [ entropy[idx][:seq_lengths[idx] + 1] for idx in range(len(seq_lengths)) ]
