"""
FCG dataset: one JSON file per sample, produced by tools/extract_fcg.py
(radare2 for PE/ELF, androguard for APK). Layout on disk:

    root/
      raw/
        index.csv            sha256,label,family,split
        graphs/<sha256>.json {"nodes": [{"name":..., "ops": {...}, "api": "kernel32!CreateFileW"}],
                              "edges": [[src, dst], ...]}
      processed/             written by PyG on first use

Node features are a normalised histogram over OPCODE_GROUPS plus a handful of
structural scalars (in/out degree, #basic blocks, is_import).
"""
import csv
import json
import os
import os.path as osp
from collections import Counter

import numpy as np
import torch
from torch_geometric.data import Data, InMemoryDataset

OPCODE_GROUPS = [
    "mov", "push", "pop", "call", "ret", "jmp", "jcc", "cmp", "test", "add", "sub", "mul", "div",
    "and", "or", "xor", "not", "shl", "shr", "rol", "ror", "lea", "nop", "int", "syscall",
    "fpu", "simd", "string", "stack", "other",
]
OPCODE_INDEX = {op: i for i, op in enumerate(OPCODE_GROUPS)}

API_CATEGORIES = ["file", "registry", "network", "process", "memory", "crypto", "service", "ui", "sync", "misc"]

API_CATEGORY_HINTS = {
    "file": ("CreateFile", "ReadFile", "WriteFile", "DeleteFile", "FindFirstFile", "CopyFile", "MoveFile"),
    "registry": ("RegOpenKey", "RegSetValue", "RegQueryValue", "RegCreateKey", "RegDeleteKey"),
    "network": ("socket", "connect", "send", "recv", "InternetOpen", "HttpSendRequest", "WSAStartup", "URLDownload"),
    "process": ("CreateProcess", "OpenProcess", "TerminateProcess", "CreateRemoteThread", "ShellExecute"),
    "memory": ("VirtualAlloc", "VirtualProtect", "WriteProcessMemory", "HeapAlloc", "MapViewOfFile"),
    "crypto": ("Crypt", "BCrypt", "CertOpen"),
    "service": ("OpenSCManager", "CreateService", "StartService"),
    "ui": ("MessageBox", "CreateWindow", "GetAsyncKeyState", "SetWindowsHook"),
    "sync": ("CreateMutex", "WaitForSingleObject", "CreateEvent"),
}

STRUCT_FEATS = ["in_deg", "out_deg", "n_blocks", "is_import"]

NODE_DIM = len(OPCODE_GROUPS) + len(API_CATEGORIES) + len(STRUCT_FEATS)


def api_category(name):
    if not name:
        return None
    fn = name.split("!")[-1]
    for cat, hints in API_CATEGORY_HINTS.items():
        if any(fn.startswith(h) for h in hints):
            return cat
    return "misc"


def node_vector(node, in_deg, out_deg):
    v = np.zeros(NODE_DIM, dtype=np.float32)
    ops = node.get("ops", {})
    total = float(sum(ops.values())) or 1.0
    for op, cnt in ops.items():
        v[OPCODE_INDEX.get(op, OPCODE_INDEX["other"])] += cnt / total
    cat = api_category(node.get("api"))
    if cat is not None:
        v[len(OPCODE_GROUPS) + API_CATEGORIES.index(cat)] = 1.0
    base = len(OPCODE_GROUPS) + len(API_CATEGORIES)
    v[base + 0] = np.log1p(in_deg)
    v[base + 1] = np.log1p(out_deg)
    v[base + 2] = np.log1p(node.get("n_blocks", 0))
    v[base + 3] = 1.0 if node.get("api") else 0.0
    return v


class APIVocab(object):
    """Maps imported API names to ids; id 0 is reserved for internal functions."""

    def __init__(self, min_count=5):
        self.min_count = min_count
        self.counter = Counter()
        self.itos = ["<internal>", "<rare>"]
        self.stoi = {}

    def observe(self, name):
        if name:
            self.counter[name.lower()] += 1

    def finalize(self):
        for name, c in self.counter.most_common():
            if c < self.min_count:
                break
            self.itos.append(name)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        return self

    def __call__(self, name):
        if not name:
            return 0
        return self.stoi.get(name.lower(), 1)

    def __len__(self):
        return len(self.itos)


def read_index(path):
    rows = []
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            rows.append(r)
    return rows


def load_graph_json(path, vocab=None, max_nodes=20000):
    with open(path) as fh:
        g = json.load(fh)
    nodes = g["nodes"][:max_nodes]
    n = len(nodes)
    edges = [(s, d) for s, d in g.get("edges", []) if s < n and d < n]
    in_deg = np.zeros(n, dtype=np.int64)
    out_deg = np.zeros(n, dtype=np.int64)
    for s, d in edges:
        out_deg[s] += 1
        in_deg[d] += 1
    x = np.stack([node_vector(nd, in_deg[i], out_deg[i]) for i, nd in enumerate(nodes)]) if n else \
        np.zeros((1, NODE_DIM), dtype=np.float32)
    if edges:
        edge_index = torch.tensor(edges, dtype=torch.long).t().contiguous()
    else:
        edge_index = torch.zeros((2, 0), dtype=torch.long)
    api_id = torch.tensor([vocab(nd.get("api")) if vocab else 0 for nd in nodes] or [0], dtype=torch.long)
    return torch.from_numpy(x), edge_index, api_id


class FCGDataset(InMemoryDataset):
    def __init__(self, root, split="train", task="binary", max_nodes=20000, transform=None, pre_transform=None):
        self.split = split
        self.task = task
        self.max_nodes = max_nodes
        super().__init__(root, transform, pre_transform)
        path = self.processed_paths[["train", "val", "test"].index(split)]
        self.data, self.slices = torch.load(path)
        meta = torch.load(osp.join(self.processed_dir, f"meta_{task}.pt"))
        self.families = meta["families"]
        self.api_vocab_size = meta["api_vocab_size"]

    @property
    def raw_file_names(self):
        return ["index.csv"]

    @property
    def processed_file_names(self):
        return [f"{s}_{self.task}.pt" for s in ("train", "val", "test")]

    def download(self):
        raise RuntimeError("FCG graphs must be extracted locally with tools/extract_fcg.py")

    def process(self):
        rows = read_index(osp.join(self.raw_dir, "index.csv"))
        families = sorted({r["family"] for r in rows if r["label"] == "1"})
        fam_idx = {f: i + 1 for i, f in enumerate(families)}  # 0 = benign

        vocab = APIVocab()
        for r in rows:
            if r["split"] != "train":
                continue
            with open(osp.join(self.raw_dir, "graphs", r["sha256"] + ".json")) as fh:
                for nd in json.load(fh)["nodes"][: self.max_nodes]:
                    vocab.observe(nd.get("api"))
        vocab.finalize()

        for split_i, split in enumerate(["train", "val", "test"]):
            data_list = []
            for r in rows:
                if r["split"] != split:
                    continue
                gpath = osp.join(self.raw_dir, "graphs", r["sha256"] + ".json")
                if not osp.exists(gpath):
                    continue
                x, edge_index, api_id = load_graph_json(gpath, vocab, self.max_nodes)
                if self.task == "binary":
                    y = int(r["label"])
                else:
                    y = fam_idx.get(r["family"], 0) if r["label"] == "1" else 0
                d = Data(x=x, edge_index=edge_index, y=torch.tensor([y]), api_id=api_id)
                d.sha256 = r["sha256"]
                if self.pre_transform is not None:
                    d = self.pre_transform(d)
                data_list.append(d)
            torch.save(self.collate(data_list), self.processed_paths[split_i])
        torch.save({"families": ["benign"] + families, "api_vocab_size": len(vocab)},
                   osp.join(self.processed_dir, f"meta_{self.task}.pt"))

    @property
    def num_classes_task(self):
        return 2 if self.task == "binary" else len(self.families)


def class_weights(dataset):
    y = dataset.data.y.view(-1).numpy()
    counts = np.bincount(y, minlength=dataset.num_classes_task).astype(np.float64)
    counts[counts == 0] = 1.0
    w = counts.sum() / (len(counts) * counts)
    return torch.tensor(w, dtype=torch.float32)
