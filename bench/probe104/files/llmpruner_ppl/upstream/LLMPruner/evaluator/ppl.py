import torch
import numpy as np
from tqdm import tqdm

from LLMPruner.datasets.ppl_dataset import get_loaders

def PPLMetric(model, tokenizer, datasets, seq_len=128, batch_size = 4, device="cuda"):
    metric = {}
    for dataset in datasets:
        _, test_loader = get_loaders(dataset, tokenizer, seq_len=seq_len, batch_size = batch_size)
        ppl = llama_eval(model, test_loader, device)
        metric[dataset] = ppl
        print(metric)
    return metric

@torch.no_grad()
def llama_eval(model, test_lodaer, device):
    nlls = []
    n_samples = 0
    for batch in tqdm(test_lodaer):
        batch = batch.to(device)
        output = model(batch)
        lm_logits = output.logits
    
        shift_logits = lm_logits[:, :-1, :].contiguous()
        shift_labels = batch[:, 1:].contiguous()
        
        loss_fct = torch.nn.CrossEntropyLoss(reduction="none")
        loss = loss_fct(shift_logits.reshape(-1, shift_logits.size(-1)), shift_labels.view(-1))
        nlls.append(loss)
    #print(torch.cat(nlls, dim=-1).mean())
    ppl = np.exp(torch.cat(nlls, dim=-1).mean().item())
    return ppl.item()


def PPLMetricSliding(model, tokenizer, dataset_name, max_length=2048, stride=512, device="cuda:0"):
    """Sliding-window perplexity (HF docs recipe) used for the long-context tables.

    Unlike ``PPLMetric`` this does not chunk the corpus into disjoint windows but reuses
    ``max_length - stride`` tokens of context for every scored token.
    """
    from datasets import load_dataset

    if dataset_name == 'wikitext2':
        test = load_dataset('wikitext', 'wikitext-2-raw-v1', split='test')
        encodings = tokenizer("\n\n".join(test['text']), return_tensors='pt')
    elif dataset_name == 'ptb':
        test = load_dataset('ptb_text_only', 'penn_treebank', split='test')
        encodings = tokenizer(" ".join(test['sentence']), return_tensors='pt')
    else:
        raise NotImplementedError(dataset_name)

    seq_len = encodings.input_ids.size(1)
    nlls = []
    prev_end_loc = 0
    for begin_loc in tqdm(range(0, seq_len, stride)):
        end_loc = min(begin_loc + max_length, seq_len)
        trg_len = end_loc - prev_end_loc
        input_ids = encodings.input_ids[:, begin_loc:end_loc].to(device)
        target_ids = input_ids.clone()
        target_ids[:, :-trg_len] = -100

        with torch.no_grad():
            outputs = model(input_ids, labels=target_ids)
            neg_log_likelihood = outputs.loss

        nlls.append(neg_log_likelihood)
        prev_end_loc = end_loc
        if end_loc == seq_len:
            break

    ppl = torch.exp(torch.stack(nlls).mean())
    return ppl.item()


def measure_latency(model, tokenizer, prompt="Once upon a time", max_new_tokens=128, warmup=3, repeat=10):
    """Report generation latency (ms/token) of the pruned model on the current GPU."""
    input_ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
    for _ in range(warmup):
        model.generate(input_ids=input_ids, max_new_tokens=8, do_sample=False)
    torch.cuda.synchronize()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []
    for _ in range(repeat):
        starter.record()
        out = model.generate(input_ids=input_ids, max_new_tokens=max_new_tokens, do_sample=False, min_new_tokens=max_new_tokens)
        ender.record()
        torch.cuda.synchronize()  # wait for the generation to finish
        timings.append(starter.elapsed_time(ender) / (out.shape[1] - input_ids.shape[1]))
    return float(np.mean(timings)), float(np.std(timings))
