"""Gym-style environment wrapping Berkeley ABC for synthesis-flow RL.

Each step applies one ABC transformation to the current AIG, maps it to the
standard-cell library and reads delay/area from `print_stats` / `stime`.
Pure CPU; the policy network lives in agent.py and may run on a GPU.
"""
import os
import re
import shutil
import subprocess
import tempfile
import logging

import numpy as np

logger = logging.getLogger(__name__)

ACTIONS = [
    "rewrite",
    "rewrite -z",
    "refactor",
    "refactor -z",
    "resub",
    "resub -z",
    "balance",
]

_STATS_RE = re.compile(r"and\s*=\s*(\d+).*lev\s*=\s*(\d+)")
_IO_RE = re.compile(r"i/o\s*=\s*(\d+)\s*/\s*(\d+)")
_STIME_RE = re.compile(r"Area\s*=\s*([\d.]+).*Delay\s*=\s*([\d.]+)")


class AbcError(RuntimeError):
    pass


def run_abc(abc_bin, commands, timeout=600):
    cmd = [abc_bin, "-c", "; ".join(commands)]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=timeout, check=False, universal_newlines=True)
    except subprocess.TimeoutExpired:
        raise AbcError("ABC timed out after %ds: %s" % (timeout, " ".join(cmd)))
    if proc.returncode != 0:
        raise AbcError("ABC failed (%d):\n%s" % (proc.returncode, proc.stdout[-2000:]))
    return proc.stdout


class AbcSynthesisEnv(object):
    """One design, episodic: `max_steps` transformations per episode."""

    def __init__(self, design, liberty, abc_bin="yosys-abc", max_steps=20,
                 history=4, delay_weight=0.7, area_weight=0.3, workdir=None):
        self.design = os.path.abspath(design)
        self.liberty = os.path.abspath(liberty)
        self.abc_bin = shutil.which(abc_bin) or abc_bin
        self.max_steps = max_steps
        self.history = history
        self.w_delay = delay_weight
        self.w_area = area_weight
        self.workdir = workdir or tempfile.mkdtemp(prefix="abcrl_")
        self.cur_aig = os.path.join(self.workdir, "cur.aig")
        self.num_actions = len(ACTIONS)
        self.state_dim = 6 + history * self.num_actions
        self._baseline = None
        self.reset()

    # ------------------------------------------------------------------
    def _read_stats(self, aig):
        out = run_abc(self.abc_bin, [
            "read %s" % aig,
            "strash",
            "print_stats",
            "read_lib %s" % self.liberty,
            "map",
            "topo",
            "stime",
        ])
        m = _STATS_RE.search(out)
        io = _IO_RE.search(out)
        t = _STIME_RE.search(out)
        if m is None or t is None:
            raise AbcError("cannot parse ABC output:\n%s" % out[-2000:])
        ands, lev = int(m.group(1)), int(m.group(2))
        pis, pos = (int(io.group(1)), int(io.group(2))) if io else (0, 0)
        area, delay = float(t.group(1)), float(t.group(2))
        return {"ands": ands, "levels": lev, "pis": pis, "pos": pos, "area": area, "delay": delay}

    def _state(self):
        b = self._baseline
        s = self.stats
        feat = [
            s["ands"] / max(b["ands"], 1),
            s["levels"] / max(b["levels"], 1),
            s["area"] / max(b["area"], 1e-6),
            s["delay"] / max(b["delay"], 1e-6),
            self.steps / float(self.max_steps),
            np.log1p(b["ands"]) / 20.0,
        ]
        hist = np.zeros((self.history, self.num_actions), dtype=np.float32)
        for i, a in enumerate(self.actions[-self.history:]):
            hist[i, a] = 1.0
        return np.concatenate([np.array(feat, dtype=np.float32), hist.ravel()])

    # ------------------------------------------------------------------
    def reset(self):
        shutil.copyfile(self.design, self.cur_aig)
        self.steps = 0
        self.actions = []
        self.stats = self._read_stats(self.cur_aig)
        if self._baseline is None:
            self._baseline = dict(self.stats)
            logger.info("baseline %s: %s", os.path.basename(self.design), self._baseline)
        return self._state()

    def step(self, action):
        assert 0 <= action < self.num_actions
        nxt = os.path.join(self.workdir, "next.aig")
        run_abc(self.abc_bin, [
            "read %s" % self.cur_aig,
            "strash",
            ACTIONS[action],
            "write %s" % nxt,
        ])
        os.replace(nxt, self.cur_aig)
        prev = self.stats
        self.stats = self._read_stats(self.cur_aig)
        self.steps += 1
        self.actions.append(action)

        d_delay = (prev["delay"] - self.stats["delay"]) / max(self._baseline["delay"], 1e-6)
        d_area = (prev["area"] - self.stats["area"]) / max(self._baseline["area"], 1e-6)
        reward = self.w_delay * d_delay + self.w_area * d_area
        # small penalty for no-op transformations so the agent does not stall
        if self.stats["ands"] == prev["ands"] and self.stats["levels"] == prev["levels"]:
            reward -= 0.01
        done = self.steps >= self.max_steps
        info = dict(self.stats)
        info["recipe"] = "; ".join(ACTIONS[a] for a in self.actions)
        return self._state(), float(reward), done, info

    def close(self):
        shutil.rmtree(self.workdir, ignore_errors=True)

    # ------------------------------------------------------------------
    def evaluate_recipe(self, recipe):
        """QoR of a full recipe from the original design (used for reporting)."""
        cmds = ["read %s" % self.design, "strash"] + list(recipe) + [
            "read_lib %s" % self.liberty, "map", "topo", "stime"]
        out = run_abc(self.abc_bin, cmds)
        t = _STIME_RE.search(out)
        return {"area": float(t.group(1)), "delay": float(t.group(2))}


def make_env(design, liberty, seed=0, **kwargs):
    np.random.seed(seed)
    env = AbcSynthesisEnv(design, liberty, **kwargs)
    return env
