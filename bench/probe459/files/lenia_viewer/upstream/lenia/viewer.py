"""Interactive viewer for (multi-channel) Lenia.

    python -m lenia.viewer --animal data/animals.json --name "Orbium bicaudatus" --size 512

Keys:  space  pause / resume       r  reseed          +/-  zoom the colormap
       s      save a screenshot    c  cycle colormap   q  quit

The simulation runs on the GPU when available; only the displayed frame is
copied to the host. On Volta or newer cards the convolution path can run in
half precision (``--half``), which roughly doubles the frame rate at 1024^2.
"""
import argparse
import json
import os
import time

import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "TkAgg"))
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from lenia.systems.lenia_torch import LeniaStepConv2d, LeniaStepFFT, lenia_parameters_from_code  # noqa: E402
from lenia.utils.kernels import ORBIUM, gaussian_blob, random_patch  # noqa: E402

COLORMAPS = ["viridis", "magma", "jet", "twilight", "gray"]


def pick_device(requested):
    if requested != "auto":
        return torch.device(requested)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def max_world_size(device, bytes_per_cell=64):
    """Largest square world that comfortably fits next to the FFT workspace."""
    if device.type != "cuda":
        return 1024
    total = torch.cuda.get_device_properties(device).total_memory
    side = int(np.sqrt(total * 0.25 / bytes_per_cell))
    return int(2 ** np.floor(np.log2(side)))


def load_animal(path, name):
    if path is None or not os.path.exists(path):
        return dict(ORBIUM), None
    with open(path) as f:
        animals = json.load(f)
    for a in animals:
        if a.get("name") == name:
            params = lenia_parameters_from_code(a["params"])
            cells = np.asarray(a["cells"], dtype=np.float32) if "cells" in a else None
            return params, cells
    raise KeyError("animal %r not found in %s" % (name, path))


class Viewer:
    def __init__(self, args):
        self.args = args
        self.device = pick_device(args.device)
        limit = max_world_size(self.device)
        if args.size > limit:
            print("world size %d too large for this device, using %d" % (args.size, limit))
            args.size = limit
        self.size = args.size
        self.params, self.cells = load_animal(args.animal, args.name)
        if args.scale != 1.0:
            self.params["R"] = int(round(self.params["R"] * args.scale))

        self.use_half = False
        if args.half and self.device.type == "cuda":
            major, _ = torch.cuda.get_device_capability(self.device)
            self.use_half = major >= 7

        p = self.params
        if args.mode == "fft":
            self.step_fn = LeniaStepFFT(self.size, self.size, p["R"], p["T"], p["b"], p["m"], p["s"],
                                        kn=p.get("kn", 0), gn=p.get("gn", 1), device=self.device)
            self.dtype = self.step_fn.dtype
        else:
            self.step_fn = LeniaStepConv2d(p["R"], p["T"], p["b"], p["m"], p["s"],
                                           kn=p.get("kn", 0), gn=p.get("gn", 1), device=self.device)
            self.dtype = torch.float32
            if self.use_half:
                self.step_fn = self.step_fn.half()
                self.dtype = torch.float16

        self.cmap_idx = 0
        self.vmax = 1.0
        self.paused = False
        self.frame = 0
        self.fps = 0.0
        self.reseed()

    def reseed(self):
        if self.cells is not None:
            world = np.zeros((self.size, self.size), dtype=np.float32)
            h, w = self.cells.shape
            y0, x0 = (self.size - h) // 2, (self.size - w) // 2
            world[y0 : y0 + h, x0 : x0 + w] = self.cells
        elif self.args.init == "blob":
            world = gaussian_blob(self.size, self.params["R"] * 1.5).astype(np.float32)
        else:
            world = random_patch(self.size, max(8, self.params["R"] * 4)).astype(np.float32)
        self.world = torch.from_numpy(world)[None, None].to(self.device, dtype=self.dtype)
        self.frame = 0

    def step(self, n=1):
        with torch.no_grad():
            for _ in range(n):
                self.world = self.step_fn(self.world)
        self.frame += n

    def host_frame(self):
        return self.world[0, 0].float().cpu().numpy()

    # -------------------------------------------------------------- UI glue
    def on_key(self, event):
        if event.key == " ":
            self.paused = not self.paused
        elif event.key == "r":
            self.reseed()
        elif event.key == "c":
            self.cmap_idx = (self.cmap_idx + 1) % len(COLORMAPS)
            self.im.set_cmap(COLORMAPS[self.cmap_idx])
        elif event.key in ("+", "="):
            self.vmax = max(0.1, self.vmax - 0.1)
            self.im.set_clim(0, self.vmax)
        elif event.key == "-":
            self.vmax = min(2.0, self.vmax + 0.1)
            self.im.set_clim(0, self.vmax)
        elif event.key == "s":
            fn = "lenia_%06d.png" % self.frame
            plt.imsave(fn, self.host_frame(), cmap=COLORMAPS[self.cmap_idx], vmin=0, vmax=self.vmax)
            print("saved", fn)
        elif event.key == "q":
            plt.close(self.fig)

    def run(self):
        self.fig, ax = plt.subplots(figsize=(7, 7))
        ax.axis("off")
        self.im = ax.imshow(self.host_frame(), cmap=COLORMAPS[self.cmap_idx], vmin=0, vmax=self.vmax,
                            interpolation="nearest")
        self.title = ax.set_title("")
        self.fig.canvas.mpl_connect("key_press_event", self.on_key)
        plt.ion()
        plt.show()
        t_last = time.time()
        while plt.fignum_exists(self.fig.number):
            if not self.paused:
                self.step(self.args.steps_per_frame)
                if self.device.type == "cuda":
                    torch.cuda.synchronize()
                now = time.time()
                self.fps = 0.9 * self.fps + 0.1 * (self.args.steps_per_frame / max(now - t_last, 1e-6))
                t_last = now
                self.im.set_data(self.host_frame())
                mass = float(self.world.float().sum())
                self.title.set_text("%s  t=%d  mass=%.1f  %.0f steps/s  [%s%s]" % (
                    self.params.get("name", self.args.name), self.frame, mass, self.fps,
                    self.device, ", fp16" if self.use_half else ""))
            self.fig.canvas.draw_idle()
            self.fig.canvas.flush_events()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--animal", type=str, default="data/animals.json")
    parser.add_argument("--name", type=str, default="Orbium bicaudatus")
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--scale", type=float, default=1.0, help="scale the kernel radius")
    parser.add_argument("--mode", type=str, default="fft", choices=["fft", "conv"])
    parser.add_argument("--init", type=str, default="animal", choices=["animal", "blob", "noise"])
    parser.add_argument("--steps-per-frame", type=int, default=1)
    parser.add_argument("--device", type=str, default="auto")
    parser.add_argument("--half", action="store_true")
    args = parser.parse_args()
    Viewer(args).run()


if __name__ == "__main__":
    main()
