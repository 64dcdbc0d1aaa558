import json
import logging
import os
import warnings
from abc import ABC, abstractmethod
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

import numpy as np
import obspy
import torch
import torch.nn as nn
from packaging import version

import seisbench
import seisbench.util as util

logger = logging.getLogger(__name__)


def _cache_path():
    return seisbench.cache_model_root


class SeisBenchModel(nn.Module):
    """
    Base SeisBench model interface for processing waveforms.

    Models are plain :py:class:`torch.nn.Module` objects. To run a model on a GPU,
    move it there as usual, e.g. ``model.cuda()`` or ``model.to("cuda:1")``.
    All annotate/classify functions pick up the device from the model parameters.

    :param citation: Citation reference, defaults to None.
    """

    def __init__(self, citation=None):
        super().__init__()
        self._citation = citation
        self._weights_docstring = None
        self._weights_version = None
        self._weights_metadata = None

    def __str__(self):
        return f"SeisBench model\t\t{self.name}\n\n{super().__str__()}"

    @property
    def name(self):
        return self._name_internal()

    @classmethod
    def _name_internal(cls):
        return cls.__name__

    @property
    def citation(self):
        return self._citation

    @property
    def weights_docstring(self):
        return self._weights_docstring

    @property
    def device(self):
        # Parameters always live on a single device for SeisBench models
        return next(self.parameters()).device

    def to_preferred_device(self, verbose: bool = False):
        """
        Move the model to the fastest available device.
        CUDA is preferred, then Apple MPS, otherwise the model stays on the CPU.

        :param verbose: If true, logs the chosen device.
        """
        if torch.cuda.is_available():
            self.cuda()
        elif torch.backends.mps.is_available():
            self.to("mps")

        if verbose:
            logger.info(f"Model {self.name} on device {self.device}")

        return self

    @classmethod
    def _model_path(cls):
        return Path(_cache_path(), cls._name_internal().lower())

    @classmethod
    def _remote_path(cls):
        return os.path.join(seisbench.remote_model_root, cls._name_internal().lower())

    @classmethod
    def _pretrained_path(cls, name, version_str=""):
        if version_str != "":
            version_str = ".v" + version_str
        weight_path = cls._model_path() / f"{name}.pt{version_str}"
        metadata_path = cls._model_path() / f"{name}.json{version_str}"
        return weight_path, metadata_path

    @classmethod
    def from_pretrained(cls, name, version_str="latest", update=False, force=False, wait_for_file=False):
        """
        Load pretrained model with weights.

        A pretrained model weights allow for the model to be used in direct application
        without prior training. The weights are stored on the CPU; move the model to a
        GPU afterwards if one is available.

        :param name: Model name prefix.
        :param version_str: Version of the weights to load. "latest" loads the newest local
                            version (or the newest remote one if update is true).
        :param update: If true, download the newest version of the weights.
        :param force: Force execution of download callback, defaults to False
        :param wait_for_file: Whether to wait on partially downloaded files
        :return: Model instance
        """
        name = name.lower()
        if version_str == "latest":
            versions = cls.list_versions(name, remote=update)
            if len(versions) == 0:
                raise ValueError(f"No version for weight '{name}' available.")
            version_str = max(versions, key=version.parse)

        weight_path, metadata_path = cls._pretrained_path(name, version_str)

        def download_callback(files):
            weight_path, metadata_path = files
            seisbench.logger.info(f"Weight file {weight_path.name} not in cache. Downloading...")
            weight_path.parent.mkdir(exist_ok=True, parents=True)
            remote_weight_name = f"{name}.pt.v{version_str}"
            remote_metadata_name = f"{name}.json.v{version_str}"
            remote_weight_path = f"{cls._remote_path()}/{remote_weight_name}"
            remote_metadata_path = f"{cls._remote_path()}/{remote_metadata_name}"
            util.download_http(remote_weight_path, weight_path)
            util.download_http(remote_metadata_path, metadata_path, progress_bar=False)

        seisbench.util.callback_if_uncached(
            [weight_path, metadata_path],
            download_callback,
            force=force,
            wait_for_file=wait_for_file,
        )

        return cls.load(weight_path.with_suffix(""), version_str=version_str)

    @classmethod
    def list_versions(cls, name, remote=True):
        name = name.lower()
        versions = []
        for path in cls._model_path().glob(f"{name}.json*"):
            suffix = path.name[len(name) + len(".json"):]
            if suffix.startswith(".v"):
                versions.append(suffix[2:])
            elif suffix == "":
                versions.append("1")
        return sorted(set(versions))

    def save(self, path, weights_docstring="", version_str=None):
        path = Path(path)
        path.parent.mkdir(exist_ok=True, parents=True)
        model_args = self.get_model_args()
        model_args["model_class"] = self.__class__.__name__
        metadata = {
            "docstring": weights_docstring,
            "model_args": model_args,
            "seisbench_requirement": seisbench.__version__,
            "default_args": getattr(self, "default_args", {}),
        }
        suffix = "" if version_str is None else f".v{version_str}"
        with open(path.with_suffix(".json" + suffix), "w") as f:
            json.dump(metadata, f, indent=2)
        # Always store CPU tensors so the weights can be loaded without a GPU
        state = {k: v.detach().cpu() for k, v in self.state_dict().items()}
        torch.save(state, path.with_suffix(".pt" + suffix))

    @classmethod
    def load(cls, path, version_str=None):
        path = Path(path)
        suffix = "" if version_str in (None, "1") else f".v{version_str}"
        path_json = path.with_suffix(".json" + suffix)
        path_pt = path.with_suffix(".pt" + suffix)

        with open(path_json, "r") as f:
            weights_metadata = json.load(f)

        model_args = weights_metadata.get("model_args", {})
        model_args.pop("model_class", None)
        model = cls(**model_args)
        model._weights_metadata = weights_metadata
        model._weights_docstring = weights_metadata.get("docstring", "")
        model._weights_version = version_str

        model.load_state_dict(torch.load(path_pt, map_location=torch.device("cpu")))
        model._post_loading_correct_default_args()
        return model

    def _post_loading_correct_default_args(self):
        if self._weights_metadata is None:
            return
        for key, value in self._weights_metadata.get("default_args", {}).items():
            if hasattr(self, "default_args"):
                self.default_args[key] = value

    def get_model_args(self):
        return {}


class WaveformModel(SeisBenchModel, ABC):
    """
    Abstract interface for models processing waveforms.

    :param component_order: Order of the input components, e.g. "ZNE"
    :param sampling_rate: Sampling rate in Hz the model expects
    :param in_samples: Number of input samples
    :param output_type: "point" or "array"
    :param pred_sample: Sample(s) to which the output refers
    :param labels: Labels of the output classes
    """

    _annotate_args = {
        "batch_size": ("Batch size for the model", 256),
        "overlap": ("Overlap between prediction windows in samples", 0),
        "stacking": ("Stacking method for overlapping windows (only for window prediction models)", "avg"),
    }

    def __init__(self, component_order=None, sampling_rate=None, output_type=None,
                 default_args=None, in_samples=None, pred_sample=0, labels=None,
                 filter_args=None, filter_kwargs=None, grouping="instrument", **kwargs):
        super().__init__(**kwargs)
        self._component_order = component_order
        self.sampling_rate = sampling_rate
        self.output_type = output_type
        self.default_args = {} if default_args is None else default_args
        self.in_samples = in_samples
        self.pred_sample = pred_sample
        self.labels = labels
        self.filter_args = filter_args
        self.filter_kwargs = filter_kwargs
        self._grouping = grouping

    @property
    def component_order(self):
        return self._component_order

    def _argdict_get_with_default(self, argdict, key):
        return argdict.get(key, self._annotate_args.get(key)[1])

    def annotate(self, stream, copy=True, **kwargs):
        """
        Annotates an obspy stream using the model based on the configuration of the WaveformModel superclass.

        The model is evaluated on whatever device its parameters are on. For large
        continuous data sets, move the model to a GPU first (``model.cuda()``) and
        increase ``batch_size``.

        :param stream: Obspy stream to annotate
        :param copy: If true, copies the input stream. Otherwise the input stream is modified in place.
        :param kwargs: Further arguments, see _annotate_args
        :return: Obspy stream of annotations
        """
        argdict = self.default_args.copy()
        argdict.update(kwargs)
        self._verify_argdict(argdict)

        if copy:
            stream = stream.copy()
        stream.merge(-1)

        self.annotate_stream_pre(stream, argdict)
        groups = self.group_stream(stream)

        output = obspy.Stream()
        for group in groups:
            times, data = self.stream_to_array(group, argdict)
            pred_times, pred_rates, preds = self._predict_and_postprocess_windows(argdict, data, times)
            output += self._predictions_to_stream(pred_rates, pred_times, preds, group[0])

        return self.annotate_stream_post(output, argdict)

    def classify(self, stream, **kwargs):
        annotations = self.annotate(stream, **kwargs)
        return self.classify_aggregate(annotations, kwargs)

    @abstractmethod
    def classify_aggregate(self, annotations, argdict):
        pass

    def annotate_stream_pre(self, stream, argdict):
        if self.filter_args is not None or self.filter_kwargs is not None:
            stream.filter(*(self.filter_args or ()), **(self.filter_kwargs or {}))
        stream.resample(self.sampling_rate, no_filter=True) if self.sampling_rate else None
        return stream

    def annotate_stream_post(self, stream, argdict):
        return stream

    def group_stream(self, stream):
        groups = defaultdict(list)
        for trace in stream:
            key = trace.id[:-1]
            groups[key].append(trace)
        return [obspy.Stream(traces) for traces in groups.values()]

    def stream_to_array(self, stream, argdict):
        t0 = min(trace.stats.starttime for trace in stream)
        t1 = max(trace.stats.endtime for trace in stream)
        sampling_rate = stream[0].stats.sampling_rate
        length = int((t1 - t0) * sampling_rate) + 1
        data = np.zeros((len(self.component_order), length), dtype=np.float32)
        for trace in stream:
            comp = trace.stats.channel[-1]
            if comp not in self.component_order:
                continue
            idx = self.component_order.index(comp)
            offset = int((trace.stats.starttime - t0) * sampling_rate)
            data[idx, offset:offset + len(trace.data)] = trace.data[: length - offset]
        return [t0], [data]

    def _predict_and_postprocess_windows(self, argdict, data, times):
        batch_size = self._argdict_get_with_default(argdict, "batch_size")
        overlap = self._argdict_get_with_default(argdict, "overlap")
        pred_times, pred_rates, full_preds = [], [], []

        for t0, block in zip(times, data):
            starts = np.arange(0, block.shape[-1] - self.in_samples + 1, self.in_samples - overlap)
            if len(starts) == 0:
                continue
            windows = np.stack([block[:, s:s + self.in_samples] for s in starts], axis=0)

            preds = []
            self.eval()
            with torch.no_grad():
                for i in range(0, len(windows), batch_size):
                    batch = torch.from_numpy(windows[i:i + batch_size]).to(self.device)
                    batch = self.annotate_batch_pre(batch, argdict)
                    out = self(batch)
                    out = self.annotate_batch_post(out, None, argdict)
                    preds.append(self._recursive_torch_to_numpy(out))

            preds = np.concatenate(preds, axis=0)
            stacked = self._stack_predictions(preds, starts, block.shape[-1], argdict)
            pred_times.append(t0)
            pred_rates.append(self.sampling_rate)
            full_preds.append(stacked)

        return pred_times, pred_rates, full_preds

    def _stack_predictions(self, preds, starts, length, argdict):
        stacking = self._argdict_get_with_default(argdict, "stacking")
        n_classes = preds.shape[-1]
        out = np.zeros((length, n_classes), dtype=np.float32)
        count = np.zeros((length, 1), dtype=np.float32)
        for p, s in zip(preds, starts):
            if stacking == "max":
                out[s:s + len(p)] = np.maximum(out[s:s + len(p)], p)
            else:
                out[s:s + len(p)] += p
            count[s:s + len(p)] += 1
        if stacking == "avg":
            out = out / np.maximum(count, 1)
        return out

    def _predictions_to_stream(self, pred_rates, pred_times, preds, trace):
        output = obspy.Stream()
        for rate, t0, pred in zip(pred_rates, pred_times, preds):
            for i, label in enumerate(self.labels):
                tr = obspy.Trace(pred[:, i], header={
                    "starttime": t0,
                    "sampling_rate": rate,
                    "network": trace.stats.network,
                    "station": trace.stats.station,
                    "location": trace.stats.location,
                    "channel": f"{self.__class__.__name__}_{label}",
                })
                output.append(tr)
        return output

    def annotate_batch_pre(self, batch: torch.Tensor, argdict: dict[str, Any]) -> torch.Tensor:
        return batch

    def annotate_batch_post(self, batch: torch.Tensor, piggyback: Any, argdict: dict[str, Any]) -> torch.Tensor:
        return batch

    @staticmethod
    def _recursive_torch_to_numpy(x):
        if isinstance(x, torch.Tensor):
            return x.cpu().numpy()
        elif isinstance(x, list):
            return [WaveformModel._recursive_torch_to_numpy(y) for y in x]
        elif isinstance(x, tuple):
            return tuple(WaveformModel._recursive_torch_to_numpy(y) for y in x)
        return x

    def _verify_argdict(self, argdict):
        for key in argdict:
            if key not in self._annotate_args:
                warnings.warn(f"Unknown argument '{key}' will be ignored.")


def check_torch_version(min_version="1.10.0"):
    if version.parse(torch.__version__.split("+")[0]) < version.parse(min_version):
        raise ImportError(f"SeisBench requires torch>={min_version}, found {torch.__version__}")


def get_model_device_summary(model: Optional[SeisBenchModel] = None):
    """Small helper used in the tutorials to print where a model lives."""
    info = {
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "mps_available": torch.backends.mps.is_available(),
    }
    if model is not None:
        info["model_device"] = str(model.device)
    return info
