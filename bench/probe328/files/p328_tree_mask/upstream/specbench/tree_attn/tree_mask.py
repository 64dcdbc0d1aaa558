"""Token-tree bookkeeping for SpecInfer-style verification.

A token tree is given by `parents`: parents[i] is the index of node i's parent, -1 for
children of the root (the last verified token). Nodes are topologically ordered
(parents come before children), which every draft generator here guarantees.
"""
from typing import List, Sequence, Tuple

import torch


def tree_depths(parents: Sequence[int]) -> List[int]:
    depth = []
    for i, p in enumerate(parents):
        assert p < i, "parents must be topologically ordered"
        depth.append(0 if p < 0 else depth[p] + 1)
    return depth


def build_tree_mask(parents: Sequence[int], device="cuda", dtype=torch.bool) -> torch.Tensor:
    """Dense [N, N] ancestor mask: mask[i, j] = True iff j is i or an ancestor of i."""
    n = len(parents)
    mask = torch.eye(n, dtype=torch.bool)
    for i, p in enumerate(parents):
        if p >= 0:
            mask[i] |= mask[p]
    return mask.to(device=device, dtype=dtype)


def build_position_ids(parents: Sequence[int], prefix_len: int, device) -> torch.Tensor:
    return torch.tensor(tree_depths(parents), dtype=torch.long, device=device) + prefix_len


def additive_mask(tree_mask: torch.Tensor, prefix_len: int, dtype: torch.dtype) -> torch.Tensor:
    """[1, 1, N, prefix_len + N] float mask with 0 for visible and -inf (finfo.min) for hidden."""
    n = tree_mask.shape[0]
    out = torch.zeros(n, prefix_len + n, dtype=dtype, device=tree_mask.device)
    out[:, prefix_len:].masked_fill_(~tree_mask.bool(), torch.finfo(dtype).min)
    return out[None, None]


def retrieve_paths(parents: Sequence[int]) -> List[List[int]]:
    """Root-to-leaf node lists, one per leaf (ordered by leaf index)."""
    n = len(parents)
    has_child = [False] * n
    for p in parents:
        if p >= 0:
            has_child[p] = True
    paths = []
    for leaf in range(n):
        if has_child[leaf]:
            continue
        path = []
        cur = leaf
        while cur >= 0:
            path.append(cur)
            cur = parents[cur]
        paths.append(path[::-1])
    return paths


def retrieve_indices(parents: Sequence[int], device, pad: int = -1) -> torch.Tensor:
    paths = retrieve_paths(parents)
    width = max(len(p) for p in paths)
    out = torch.full((len(paths), width), pad, dtype=torch.long)
    for r, p in enumerate(paths):
        out[r, : len(p)] = torch.tensor(p, dtype=torch.long)
    return out.to(device)


def merge_token_trees(trees: List[Tuple[List[int], List[int]]]) -> Tuple[List[int], List[int]]:
    """SpecInfer tree merging: union of several (tokens, parents) trees from different SSMs.

    Nodes with the same token under the same (merged) parent are shared.
    """
    merged_tokens: List[int] = []
    merged_parents: List[int] = []
    index = {}
    for tokens, parents in trees:
        remap = {}
        for i, (tok, par) in enumerate(zip(tokens, parents)):
            mp = -1 if par < 0 else remap[par]
            key = (mp, tok)
            if key not in index:
                index[key] = len(merged_tokens)
                merged_tokens.append(tok)
                merged_parents.append(mp)
            remap[i] = index[key]
    return merged_tokens, merged_parents


def greedy_accept(tree_tokens: torch.Tensor, target_argmax: torch.Tensor, parents: Sequence[int]):
    """Longest root-to-node path whose tokens all equal the target's greedy choice at their parent.

    tree_tokens:   [N] draft tokens
    target_argmax: [N + 1] greedy target token *after* the root (index 0) and after each tree node (1..N)
    Returns (accepted node list, bonus token).
    """
    tokens = tree_tokens.tolist()
    greedy = target_argmax.tolist()
    best: List[int] = []
    ok = [False] * len(tokens)
    for i, p in enumerate(parents):
        expect = greedy[0] if p < 0 else greedy[p + 1]
        ok[i] = tokens[i] == expect and (p < 0 or ok[p])
    for i in range(len(tokens)):
        if ok[i]:
            path = []
            cur = i
            while cur >= 0:
                path.append(cur)
                cur = parents[cur]
            if len(path) > len(best):
                best = path[::-1]
    bonus = greedy[best[-1] + 1] if best else greedy[0]
    return best, bonus


def pack_tree_inputs(tokens: List[int], parents: List[int], prefix_len: int, dtype, device):
    """Everything the target forward needs for one verification step."""
    t = torch.tensor(tokens, dtype=torch.long, device=device)[None]
    tm = build_tree_mask(parents, device=device)
    return {
        "input_ids": t,
        "position_ids": build_position_ids(parents, prefix_len, device)[None],
        "tree_mask": tm,
        "attention_mask": additive_mask(tm, prefix_len, dtype),
        "retrieve_indices": retrieve_indices(parents, device),
    }
