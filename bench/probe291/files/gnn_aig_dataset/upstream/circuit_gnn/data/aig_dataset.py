"""AIG graph dataset for QoR prediction of synthesis recipes.

Each sample is (AIG of a design, synthesis recipe, normalised delay/area after
running the recipe in ABC). Graphs are built once from the .bench dumps of
`abc -c "read design.aig; strash; write_bench"` and cached with dgl.save_graphs.

Node features (one-hot): PI, PO, AND, plus the normalised logic level.
Edge feature: 1 if the fanin edge is complemented.
"""
import os
import re
import json
import logging
from collections import defaultdict

import numpy as np
import torch
import dgl
from dgl.data import DGLDataset
from dgl.data.utils import save_graphs, load_graphs, save_info, load_info

logger = logging.getLogger(__name__)

NODE_TYPES = {"PI": 0, "PO": 1, "AND": 2}
SYNTH_OPS = ["refactor", "refactor -z", "rewrite", "rewrite -z", "resub", "resub -z", "balance"]

_AND_RE = re.compile(r"^(\S+)\s*=\s*AND\((\S+),\s*(\S+)\)")
_NOT_RE = re.compile(r"^(\S+)\s*=\s*NOT\((\S+)\)")
_BUF_RE = re.compile(r"^(\S+)\s*=\s*BUFF?\((\S+)\)")


def parse_bench(path):
    """Parse an ABC strashed .bench file into (node types, fanin edges, inversions)."""
    inputs, outputs = [], []
    gates = {}
    nots = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("INPUT("):
                inputs.append(line[6:-1])
            elif line.startswith("OUTPUT("):
                outputs.append(line[7:-1])
            else:
                m = _AND_RE.match(line)
                if m:
                    gates[m.group(1)] = (m.group(2), m.group(3))
                    continue
                m = _NOT_RE.match(line)
                if m:
                    nots[m.group(1)] = m.group(2)
                    continue
                m = _BUF_RE.match(line)
                if m:
                    nots[m.group(1)] = ("BUF", m.group(2))

    name2id = {}
    ntype = []
    for n in inputs:
        name2id[n] = len(ntype)
        ntype.append(NODE_TYPES["PI"])
    for n in gates:
        name2id[n] = len(ntype)
        ntype.append(NODE_TYPES["AND"])

    def resolve(sig):
        inv = 0
        while sig in nots:
            v = nots[sig]
            if isinstance(v, tuple):
                sig = v[1]
            else:
                inv ^= 1
                sig = v
        return sig, inv

    src, dst, inv = [], [], []
    for n, (a, b) in gates.items():
        for x in (a, b):
            s, i = resolve(x)
            if s not in name2id:
                raise ValueError("dangling signal %s in %s" % (s, path))
            src.append(name2id[s])
            dst.append(name2id[n])
            inv.append(i)
    for o in outputs:
        oid = len(ntype)
        ntype.append(NODE_TYPES["PO"])
        s, i = resolve(o)
        src.append(name2id[s])
        dst.append(oid)
        inv.append(i)
    return np.array(ntype), np.array(src), np.array(dst), np.array(inv)


def logic_levels(num_nodes, src, dst):
    """Topological level of every node (PIs are level 0)."""
    fanin = defaultdict(list)
    indeg = np.zeros(num_nodes, dtype=np.int64)
    for s, d in zip(src, dst):
        fanin[d].append(s)
        indeg[d] += 1
    fanout = defaultdict(list)
    for s, d in zip(src, dst):
        fanout[s].append(d)
    level = np.zeros(num_nodes, dtype=np.int64)
    frontier = [n for n in range(num_nodes) if indeg[n] == 0]
    while frontier:
        nxt = []
        for n in frontier:
            for d in fanout[n]:
                level[d] = max(level[d], level[n] + 1)
                indeg[d] -= 1
                if indeg[d] == 0:
                    nxt.append(d)
        frontier = nxt
    return level


def build_graph(bench_path):
    ntype, src, dst, inv = parse_bench(bench_path)
    g = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=len(ntype))
    lvl = logic_levels(len(ntype), src, dst)
    onehot = torch.nn.functional.one_hot(torch.from_numpy(ntype), num_classes=len(NODE_TYPES)).float()
    lvl_t = torch.from_numpy(lvl).float().unsqueeze(1)
    g.ndata["feat"] = torch.cat([onehot, lvl_t / max(lvl.max(), 1)], dim=1)
    g.ndata["level"] = torch.from_numpy(lvl)
    g.edata["inv"] = torch.from_numpy(inv).float().unsqueeze(1)
    return g


def encode_recipe(recipe, max_len=20):
    """Map 'b; rw; rf -z; ...' style recipes to a fixed-length index tensor (0 = pad)."""
    alias = {"b": "balance", "rw": "rewrite", "rwz": "rewrite -z", "rf": "refactor",
             "rfz": "refactor -z", "rs": "resub", "rsz": "resub -z"}
    ids = []
    for step in recipe.split(";"):
        step = step.strip()
        if not step:
            continue
        step = alias.get(step.replace(" ", ""), step)
        ids.append(SYNTH_OPS.index(step) + 1)
    ids = ids[:max_len] + [0] * (max_len - len(ids))
    return torch.tensor(ids, dtype=torch.long)


class AIGQoRDataset(DGLDataset):
    """Graphs of all designs + (design, recipe, qor) samples."""

    def __init__(self, root, split="train", use_uva=False, force_reload=False, verbose=False):
        self.root = root
        self.split = split
        self.use_uva = use_uva
        super().__init__(name="aig_qor_" + split, raw_dir=root, save_dir=os.path.join(root, "processed"),
                         force_reload=force_reload, verbose=verbose)

    def process(self):
        with open(os.path.join(self.root, "splits.json")) as f:
            designs = json.load(f)[self.split]
        self.graphs = []
        self.design_index = {}
        for d in designs:
            bench = os.path.join(self.root, "bench", d + ".bench")
            logger.info("building graph for %s", d)
            self.design_index[d] = len(self.graphs)
            self.graphs.append(build_graph(bench))
        self.samples = []
        with open(os.path.join(self.root, "qor.csv")) as f:
            next(f)
            for line in f:
                design, recipe, delay, area = line.rstrip("\n").split(",")
                if design not in self.design_index:
                    continue
                self.samples.append((self.design_index[design], recipe, float(delay), float(area)))

    def save(self):
        save_graphs(os.path.join(self.save_path, "graphs.bin"), self.graphs)
        save_info(os.path.join(self.save_path, "info.pkl"),
                  {"design_index": self.design_index, "samples": self.samples})

    def load(self):
        self.graphs, _ = load_graphs(os.path.join(self.save_path, "graphs.bin"))
        info = load_info(os.path.join(self.save_path, "info.pkl"))
        self.design_index = info["design_index"]
        self.samples = info["samples"]
        if self.use_uva:
            # keep the (large) design graphs in page-locked host memory so the
            # GPU kernels can gather from them directly through UVA
            for g in self.graphs:
                g.create_formats_()
                g.pin_memory_()

    def has_cache(self):
        return os.path.exists(os.path.join(self.save_path, "graphs.bin"))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        gi, recipe, delay, area = self.samples[idx]
        target = torch.tensor([delay, area], dtype=torch.float32)
        return self.graphs[gi], encode_recipe(recipe), target


def collate(batch):
    graphs, recipes, targets = map(list, zip(*batch))
    return dgl.batch(graphs), torch.stack(recipes), torch.stack(targets)
