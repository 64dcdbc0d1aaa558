"""
napari dock widget that runs a Cellpose / StarDist style segmentation model on the active image layer.

The heavy lifting runs in a napari ``thread_worker`` so the viewer stays responsive; results are
pushed back as a Labels layer.
"""
from typing import TYPE_CHECKING, Optional
import time
import logging

import numpy as np
from magicgui import magic_factory, magicgui
from magicgui.widgets import ComboBox, Container, Label, PushButton, SpinBox, FloatSpinBox, CheckBox
from napari.qt.threading import thread_worker
from napari.utils.notifications import show_info, show_warning

import torch

if TYPE_CHECKING:
    import napari

from ._models import load_model, MODEL_REGISTRY
from ._tiling import tile_iterator, stitch_tiles

logger = logging.getLogger(__name__)


def _available_devices():
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] + devices
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.insert(0, "mps")
    return devices


def _device_label(device: str) -> str:
    if device == "cpu":
        return "CPU (slow for large images)"
    return f"accelerator: {device}"


class SegmentationWidget(Container):
    """Dock widget: choose model + device, run tiled inference, add a Labels layer."""

    def __init__(self, napari_viewer: "napari.viewer.Viewer"):
        super().__init__()
        self.viewer = napari_viewer
        self._worker = None

        devices = _available_devices()
        self.model_box = ComboBox(label="model", choices=sorted(MODEL_REGISTRY), value="cyto3")
        self.device_box = ComboBox(label="device", choices=devices, value=devices[0])
        self.device_info = Label(value=_device_label(devices[0]))
        self.diameter = FloatSpinBox(label="diameter (px)", value=30.0, min=0.0, max=500.0)
        self.tile = SpinBox(label="tile size", value=512, min=128, max=4096, step=64)
        self.overlap = FloatSpinBox(label="tile overlap", value=0.1, min=0.0, max=0.5, step=0.05)
        self.half = CheckBox(label="half precision (GPU)", value=True)
        self.run_btn = PushButton(text="Run")
        self.status = Label(value="idle")

        self.device_box.changed.connect(self._on_device_changed)
        self.run_btn.clicked.connect(self._run)
        self.extend([self.model_box, self.device_box, self.device_info, self.diameter,
                     self.tile, self.overlap, self.half, self.run_btn, self.status])

    def _on_device_changed(self, value: str):
        self.device_info.value = _device_label(value)

    def _active_image(self):
        layer = self.viewer.layers.selection.active
        if layer is None or layer.__class__.__name__ != "Image":
            show_warning("Select an image layer first")
            return None
        return layer

    def _run(self):
        layer = self._active_image()
        if layer is None:
            return
        device = torch.device(self.device_box.value)
        use_half = self.half.value and device.type == "cuda"
        params = dict(model_name=self.model_box.value, device=device, use_half=use_half,
                      diameter=self.diameter.value, tile=self.tile.value,
                      overlap=self.overlap.value)
        self.run_btn.enabled = False
        self.status.value = "running..."
        self._worker = _segment(np.asarray(layer.data), **params)
        self._worker.returned.connect(lambda res: self._on_done(res, layer.name))
        self._worker.errored.connect(self._on_error)
        self._worker.start()

    def _on_done(self, result, name):
        labels, elapsed = result
        self.viewer.add_labels(labels, name=f"{name}_masks")
        self.status.value = f"done in {elapsed:.1f} s ({labels.max()} objects)"
        self.run_btn.enabled = True
        show_info(self.status.value)

    def _on_error(self, err):
        self.run_btn.enabled = True
        self.status.value = f"error: {err}"
        if isinstance(err, torch.cuda.OutOfMemoryError):
            show_warning("GPU out of memory - reduce the tile size")


@thread_worker
def _segment(image, model_name, device, use_half, diameter, tile, overlap):
    t0 = time.perf_counter()
    model = load_model(model_name, device=device)
    model.eval()
    if use_half:
        model.half()
    scale = model.diam_mean / diameter if diameter > 0 else 1.0

    img = image.astype(np.float32)
    lo, hi = np.percentile(img, (1, 99.8))
    img = (img - lo) / max(hi - lo, 1e-6)

    outputs = []
    with torch.inference_mode():
        for tile_arr, slc in tile_iterator(img, tile=tile, overlap=overlap, scale=scale):
            x = torch.from_numpy(tile_arr)[None, None].to(device, non_blocking=True)
            if use_half:
                x = x.half()
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=use_half):
                y = model(x)
            outputs.append((y.float().cpu().numpy()[0], slc))
    flows = stitch_tiles(outputs, img.shape)
    labels = model.flows_to_masks(flows, device=device)

    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
    return labels.astype(np.uint32), time.perf_counter() - t0


@magic_factory(call_button="Quick segment", device={"choices": _available_devices})
def quick_segment(image: "napari.layers.Image", model_name: str = "cyto3",
                  device: str = "cpu") -> "napari.types.LabelsData":
    """Single-shot widget (no tiling) for small 2-D images."""
    dev = torch.device(device)
    model = load_model(model_name, device=dev)
    x = torch.from_numpy(np.asarray(image.data, dtype=np.float32))[None, None].to(dev)
    with torch.inference_mode():
        y = model(x)
    return model.flows_to_masks(y[0].cpu().numpy(), device=dev)
