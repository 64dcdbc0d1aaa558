import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
import numpy as np


def create_var(tensor, requires_grad=None):
    if requires_grad is None:
        return Variable(tensor).cuda()
    else:
        return Variable(tensor, requires_grad=requires_grad).cuda()


def index_select_ND(source, dim, index):
    index_size = index.size()
    suffix_dim = source.size()[1:]
    final_size = index_size + suffix_dim
    target = source.index_select(dim, index.view(-1))
    return target.view(final_size)


def avg_pool(all_vecs, scope, dim):
    size = create_var(torch.Tensor([le for _, le in scope]))
    return all_vecs.sum(dim=dim) / size.unsqueeze(-1)


def stack_pad_tensor(tensor_list):
    max_len = max([t.size(0) for t in tensor_list])
    for i, tensor in enumerate(tensor_list):
        pad_len = max_len - tensor.size(0)
        tensor_list[i] = F.pad(tensor, (0, 0, 0, pad_len))
    return torch.stack(tensor_list, dim=0)


def flatten_tensor(tensor, scope):
    """ flat a tensor """
    assert tensor.size(0) == len(scope)
    tlist = []
    for i, (le, _) in enumerate(scope):
        tlist.append(tensor[i, 0:le])
    return torch.cat(tlist, dim=0)


def inflate_tensor(tensor, scope):
    """ inflate a tensor """
    max_len = max([le for _, le in scope])
    batch_vecs = []
    for st, le in scope:
        cur_vecs = tensor[st: st + le]
        cur_vecs = F.pad(cur_vecs, (0, 0, 0, max_len - le))
        batch_vecs.append(cur_vecs)

    return torch.stack(batch_vecs, dim=0)


def GRU(x, h_nei, W_z, W_r, U_r, W_h):
    hidden_size = x.size()[-1]
    sum_h = h_nei.sum(dim=1)
    z_input = torch.cat([x, sum_h], dim=1)
    z = torch.sigmoid(W_z(z_input))

    r_1 = W_r(x).view(-1, 1, hidden_size)
    r_2 = U_r(h_nei)
    r = torch.sigmoid(r_1 + r_2)

    gated_h = r * h_nei
    sum_gated_h = gated_h.sum(dim=1)
    h_input = torch.cat([x, sum_gated_h], dim=1)
    pre_h = torch.tanh(W_h(h_input))
    new_h = (1.0 - z) * sum_h + z * pre_h
    return new_h


def MPL(x, cur_x_nei, cur_fmess_nei, W_g, U_g):
    """ Message passing layer for bonds. """
    z_input = torch.cat([x, cur_x_nei, cur_fmess_nei], dim=1)
    z = F.relu(W_g(z_input))
    new_h = F.relu(U_g(torch.cat([x, z], dim=1)))
    return new_h


def get_mess_graph(fmess_graph, agraph, bgraph):
    """Pairs every directed bond message with the neighbouring messages it aggregates."""
    mess_nei = index_select_ND(fmess_graph, 0, bgraph)
    atom_nei = index_select_ND(fmess_graph, 0, agraph)
    return mess_nei, atom_nei


def make_cuda(tensors):
    tree_tensors, graph_tensors = tensors
    make_tensor = lambda x: x if type(x) is torch.Tensor else torch.tensor(x)
    tree_tensors = [make_tensor(x).cuda().long() for x in tree_tensors[:-1]] + [tree_tensors[-1]]
    graph_tensors = [make_tensor(x).cuda().long() for x in graph_tensors[:-1]] + [graph_tensors[-1]]
    return tree_tensors, graph_tensors


def get_likelihood(scores, labels, mask=None):
    """Bernoulli log-likelihood of binary center labels (atoms / bonds)."""
    log_p = F.logsigmoid(scores)
    log_not_p = F.logsigmoid(-scores)
    ll = labels * log_p + (1 - labels) * log_not_p
    if mask is not None:
        ll = ll * mask
    return ll


def get_accuracy_bin(scores, labels):
    preds = torch.ge(scores, 0).long()
    acc = torch.eq(preds, labels).float()
    return torch.sum(acc) / labels.nelement()


def get_accuracy(scores, labels):
    _, preds = torch.max(scores, dim=-1)
    acc = torch.eq(preds, labels).float()
    return torch.sum(acc) / labels.nelement()


def get_accuracy_sym(scores, labels):
    max_scores, max_idx = torch.max(scores, dim=-1)
    lab_scores = scores[torch.arange(len(scores), device=scores.device), labels]
    acc = torch.eq(lab_scores, max_scores).float()
    return torch.sum(acc) / labels.nelement()


def get_sparse_mask(idx, length, device=None):
    mask = torch.zeros(length, dtype=torch.bool, device=device)
    if len(idx) > 0:
        mask[torch.as_tensor(idx, device=device)] = True
    return mask


def topk_indices(scores, k, scope):
    """Top-k candidates inside each molecule of a batch (scope = [(start, len)])."""
    out = []
    for st, le in scope:
        cur = scores[st: st + le]
        kk = min(k, le)
        _, idx = torch.topk(cur, kk)
        out.append((idx + st).tolist())
    return out


def set_seed(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
