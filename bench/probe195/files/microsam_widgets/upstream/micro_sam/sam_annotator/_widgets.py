"""Implements the widgets used in the annotation plugins.
"""

import json
import multiprocessing as mp
import os
import pickle
from pathlib import Path
from typing import Optional

import elf.parallel
import h5py
import numpy as np
import zarr
import z5py

from magicgui import magic_factory
from magicgui.widgets import ComboBox, Container, create_widget
from napari.qt.threading import thread_worker
from napari.utils import progress
from qtpy import QtWidgets
from qtpy.QtCore import QObject, Signal
from superqt import QCollapsible

import torch

from ._state import AnnotatorState
from . import util as vutil
from .. import instance_segmentation, util
from ..multi_dimensional_segmentation import segment_mask_in_volume, merge_instance_segmentation_3d, PROJECTION_MODES

try:
    from napari_skimage_regionprops import add_table
except ImportError:
    add_table = None


class _WidgetBase(QtWidgets.QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)

    def _add_boolean_param(self, name, value, title=None, tooltip=None):
        checkbox = QtWidgets.QCheckBox(name if title is None else title)
        checkbox.setChecked(value)
        checkbox.stateChanged.connect(lambda val: setattr(self, name, val))
        if tooltip:
            checkbox.setToolTip(tooltip)
        return checkbox

    def _add_string_param(self, name, value, title=None, placeholder=None, layout=None, tooltip=None):
        if layout is None:
            layout = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel(title or name)
        if tooltip:
            label.setToolTip(tooltip)
        layout.addWidget(label)
        param = QtWidgets.QLineEdit()
        param.setText(value)
        if placeholder is not None:
            param.setPlaceholderText(placeholder)
        param.textChanged.connect(lambda val: setattr(self, name, val))
        if tooltip:
            param.setToolTip(tooltip)
        layout.addWidget(param)
        return param, layout

    def _add_int_param(self, name, value, min_val, max_val, title=None, step=1, layout=None, tooltip=None):
        if layout is None:
            layout = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel(title or name)
        if tooltip:
            label.setToolTip(tooltip)
        layout.addWidget(label)
        param = QtWidgets.QSpinBox()
        param.setRange(min_val, max_val)
        param.setValue(value)
        param.setSingleStep(step)
        param.valueChanged.connect(lambda val: setattr(self, name, val))
        if tooltip:
            param.setToolTip(tooltip)
        layout.addWidget(param)
        return param, layout

    def _add_choice_param(self, name, value, options, title=None, layout=None, update=None, tooltip=None):
        if layout is None:
            layout = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel(title or name)
        if tooltip:
            label.setToolTip(tooltip)
        layout.addWidget(label)

        # Create the dropdown menu via QComboBox, set the available values.
        dropdown = QtWidgets.QComboBox()
        dropdown.addItems(options)
        if update is None:
            dropdown.currentIndexChanged.connect(lambda index: setattr(self, name, options[index]))
        else:
            dropdown.currentIndexChanged.connect(update)

        # Set the correct value for the value.
        dropdown.setCurrentIndex(dropdown.findText(value))

        if tooltip:
            dropdown.setToolTip(tooltip)

        layout.addWidget(dropdown)
        return dropdown, layout


def _get_device_options():
    """Devices shown in the embedding widget: 'auto' plus everything torch can actually use."""
    options = ["auto"] + util._available_devices()
    # show cuda:0, cuda:1, ... if there is more than one GPU
    n_gpus = torch.cuda.device_count()
    if n_gpus > 1:
        options += [f"cuda:{i}" for i in range(n_gpus)]
    return options


class EmbeddingWidget(_WidgetBase):
    def __init__(self, parent=None):
        super().__init__(parent)

        # Create a nested layout for the sections.
        # Section 1: Image and Model.
        section1_layout = QtWidgets.QHBoxLayout()
        section1_layout.addLayout(self._create_image_section())
        section1_layout.addLayout(self._create_model_section())

        # Section 2: Settings (collapsible).
        section2_layout = QtWidgets.QVBoxLayout()

        collapsible = QCollapsible("Embedding Settings", self)
        collapsible.addWidget(self._create_settings_widget())
        section2_layout.addWidget(collapsible)

        # Section 3: The button to trigger the embedding computation.
        self.run_button = QtWidgets.QPushButton("Compute Embeddings")
        self.run_button.clicked.connect(self.__call__)
        self.run_button.setToolTip("Compute embeddings for the image (runs on the selected device).")

        layout = QtWidgets.QVBoxLayout()
        layout.addLayout(section1_layout)
        layout.addLayout(section2_layout)
        layout.addWidget(self.run_button)
        self.setLayout(layout)

    def _create_image_section(self):
        image_section = QtWidgets.QVBoxLayout()
        image_layer_widget = create_widget(annotation="napari.layers.Image", label="image")
        self.image_selection = image_layer_widget
        image_section.addWidget(QtWidgets.QLabel("Image Layer:"))
        image_section.addWidget(image_layer_widget.native)
        return image_section

    def _update_model(self, index):
        self.model_type = self.model_options[index]

    def _create_model_section(self):
        self.model_type = util._DEFAULT_MODEL
        self.model_options = list(util.models().urls.keys())
        # Filter out the decoders from the model list.
        self.model_options = [model for model in self.model_options if not model.endswith("decoder")]

        layout = QtWidgets.QVBoxLayout()
        self.model_dropdown, layout = self._add_choice_param(
            "model_type", self.model_type, self.model_options, title="Model:", layout=layout,
            update=self._update_model, tooltip="Select the Segment Anything model (vit_t is fastest, vit_h best).",
        )
        return layout

    def _create_settings_widget(self):
        setting_values = QtWidgets.QWidget()
        setting_values.setLayout(QtWidgets.QVBoxLayout())

        # Create the UI for choosing the device.
        self.device = "auto"
        device_options = _get_device_options()

        self.device_dropdown, layout = self._add_choice_param(
            "device", self.device, device_options,
            tooltip="Device used to compute the embeddings. 'auto' picks a GPU when one is present.",
        )
        setting_values.layout().addLayout(layout)

        # Create UI for the tile shape.
        self.tile_x, self.tile_y = 0, 0
        self.tile_x_param, self.tile_y_param, layout = self._add_shape_param(
            ("tile_x", "tile_y"), (self.tile_x, self.tile_y), min_val=0, max_val=2048, step=16,
            tooltip="Tile shape for large images. Use tiling if you run out of GPU memory.",
        )
        setting_values.layout().addLayout(layout)

        # Create UI for the halo.
        self.halo_x, self.halo_y = 0, 0
        self.halo_x_param, self.halo_y_param, layout = self._add_shape_param(
            ("halo_x", "halo_y"), (self.halo_x, self.halo_y), min_val=0, max_val=512,
        )
        setting_values.layout().addLayout(layout)

        self.embeddings_save_path = None

        # Create UI for the batch size.
        self.batch_size = 1
        self.batch_size_param, layout = self._add_int_param(
            "batch_size", self.batch_size, min_val=1, max_val=32,
            tooltip="How many tiles are embedded at once. Larger values need more GPU memory.",
        )
        setting_values.layout().addLayout(layout)
        return setting_values

    def _add_shape_param(self, names, values, min_val, max_val, step=1, tooltip=None):
        layout = QtWidgets.QHBoxLayout()
        x_param, _ = self._add_int_param(names[0], values[0], min_val, max_val, step=step, layout=layout, tooltip=tooltip)
        y_param, _ = self._add_int_param(names[1], values[1], min_val, max_val, step=step, layout=layout, tooltip=tooltip)
        return x_param, y_param, layout

    def _validate_inputs(self):
        if self.image_selection.value is None:
            vutil._generate_message("error", "Please select an image layer first.")
            return True
        return False

    def __call__(self, skip_validate=False):
        # Validate user inputs.
        if not skip_validate and self._validate_inputs():
            return

        # For now, we use the default model to compute the embeddings.
        image = self.image_selection.value

        # Get the image data.
        image_data = image.data
        ndim = image_data.ndim if image.rgb is False else image_data.ndim - 1
        state = AnnotatorState()
        state.reset_state()

        # Initialize the model.
        device = util.get_device(self.device)
        state.initialize_predictor(
            image_data, model_type=self.model_type, save_path=self.embeddings_save_path, ndim=ndim,
            device=device,
            tile_shape=None if self.tile_x == 0 else (self.tile_x, self.tile_y),
            halo=None if self.halo_x == 0 else (self.halo_x, self.halo_y),
            prefer_decoder=True,
        )

        @thread_worker
        def compute_image_embedding():

            def pbar_init(total, description):
                self.pbar = progress(total=total, desc=description)

            def pbar_update(update):
                self.pbar.update(update)

            state.compute_embeddings(
                image_data, pbar_init=pbar_init, pbar_update=pbar_update,
                batch_size=self.batch_size,
            )
            self.pbar.close()

            # give back the memory of the image encoder activations to other napari plugins
            if str(device).startswith("cuda"):
                torch.cuda.empty_cache()

        worker = compute_image_embedding()
        worker.returned.connect(lambda _: vutil._generate_message("info", "Embeddings computed."))
        worker.start()
        return worker


@magic_factory(
    call_button="Segment All Objects",
    pred_iou_thresh={"min": 0.0, "max": 1.0, "step": 0.01},
    stability_score_thresh={"min": 0.0, "max": 1.0, "step": 0.01},
    min_object_size={"min": 0, "max": 10000},
)
def _instance_segmentation_impl(
    viewer: "napari.viewer.Viewer",
    pred_iou_thresh: float = 0.88,
    stability_score_thresh: float = 0.95,
    min_object_size: int = 100,
    with_background: bool = True,
) -> None:
    state = AnnotatorState()
    if state.amg is None:
        is_tiled = state.image_embeddings["input_size"] is None
        state.amg = instance_segmentation.get_amg(state.predictor, is_tiled)

    shape = state.image_shape
    if not state.amg.is_initialized:
        state.amg.initialize(state.image_embeddings, verbose=True)

    seg = state.amg.generate(pred_iou_thresh=pred_iou_thresh, stability_score_thresh=stability_score_thresh)
    seg = instance_segmentation.mask_data_to_segmentation(
        seg, with_background=with_background, min_object_size=min_object_size
    )
    assert isinstance(seg, np.ndarray)

    viewer.layers["auto_segmentation"].data = seg
    viewer.layers["auto_segmentation"].refresh()
