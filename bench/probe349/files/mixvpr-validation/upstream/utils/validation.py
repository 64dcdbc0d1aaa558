import numpy as np
import torch
import torch.nn.functional as F
import faiss
import faiss.contrib.torch_utils
from prettytable import PrettyTable


def _recalls_from_predictions(predictions, gt, k_values):
    """predictions: (num_queries, max(k_values)) indices into the reference set."""
    correct_at_k = np.zeros(len(k_values))
    for q_idx, pred in enumerate(predictions):
        for i, n in enumerate(k_values):
            # a hit in the top-n is also a hit for every larger n
            if np.any(np.in1d(pred[:n], gt[q_idx])):
                correct_at_k[i:] += 1
                break
    return correct_at_k / len(predictions)


def _print_table(k_values, correct_at_k, dataset_name):
    print()
    table = PrettyTable()
    table.field_names = ['K'] + [str(k) for k in k_values]
    table.add_row(['Recall@K'] + [f'{100 * v:.2f}' for v in correct_at_k])
    print(table.get_string(title=f"Performance on {dataset_name}"))


def get_validation_recalls(r_list, q_list, k_values, gt, print_results=True, faiss_gpu=False,
                           dataset_name='dataset without name ?'):
    """Exact L2 kNN of the queries against the references (both given as CPU tensors or arrays)."""
    embed_size = r_list.shape[1]
    if faiss_gpu:
        res = faiss.StandardGpuResources()
        flat_config = faiss.GpuIndexFlatConfig()
        flat_config.useFloat16 = True
        flat_config.device = 0
        faiss_index = faiss.GpuIndexFlatL2(res, embed_size, flat_config)
    else:
        faiss_index = faiss.IndexFlatL2(embed_size)

    faiss_index.add(r_list)
    _, predictions = faiss_index.search(q_list, max(k_values))
    if torch.is_tensor(predictions):
        predictions = predictions.numpy()

    correct_at_k = _recalls_from_predictions(predictions, gt, k_values)
    d = {k: v for (k, v) in zip(k_values, correct_at_k)}

    if print_results:
        _print_table(k_values, correct_at_k, dataset_name)
    return d


@torch.no_grad()
def get_validation_recalls_torch(r_list, q_list, k_values, gt, print_results=True, device='cuda',
                                 chunk_size=4096, dataset_name='dataset without name ?'):
    """Same as get_validation_recalls but brute-force on the accelerator with a matmul, useful when
    faiss is not installed. Descriptors are assumed L2-normalised, so the largest dot product is the
    nearest neighbour."""
    refs = torch.as_tensor(r_list).float().to(device)
    refs = F.normalize(refs, p=2, dim=-1)
    max_k = max(k_values)
    all_preds = []
    for start in range(0, len(q_list), chunk_size):
        q = torch.as_tensor(q_list[start:start + chunk_size]).float().to(device)
        q = F.normalize(q, p=2, dim=-1)
        sims = q @ refs.T
        all_preds.append(sims.topk(max_k, dim=1).indices.cpu())
    predictions = torch.cat(all_preds).numpy()

    correct_at_k = _recalls_from_predictions(predictions, gt, k_values)
    d = {k: v for (k, v) in zip(k_values, correct_at_k)}
    if print_results:
        _print_table(k_values, correct_at_k, dataset_name)
    return d
