import os
import sys
from typing import Dict, List, Optional, Tuple

import numpy as np
import onnxruntime as ort
import pooch
from PIL import Image
from PIL.Image import Image as PILImage

# Execution providers we try, in order of preference. The first one that the
# installed onnxruntime build reports as available wins; CPU is always last.
PREFERRED_PROVIDERS = [
    "TensorrtExecutionProvider",
    "CUDAExecutionProvider",
    "DmlExecutionProvider",
    "CoreMLExecutionProvider",
    "CPUExecutionProvider",
]


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def _cuda_provider_options() -> Dict[str, object]:
    # Tuned for the u2net family: large activations, batch size 1.
    return {
        "device_id": _env_int("REMBG_GPU_ID", 0),
        "arena_extend_strategy": "kSameAsRequested",
        "cudnn_conv_algo_search": "EXHAUSTIVE",
        "do_copy_in_default_stream": True,
        "gpu_mem_limit": _env_int("REMBG_GPU_MEM_LIMIT", 4 * 1024 * 1024 * 1024),
    }


def resolve_providers(requested: Optional[List[str]] = None) -> Tuple[list, list]:
    """Return (providers, provider_options) for ort.InferenceSession."""
    available = ort.get_available_providers()

    if requested:
        chosen = [p for p in requested if p in available]
    elif ort.get_device() == "GPU" and "CUDAExecutionProvider" in available:
        chosen = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    else:
        chosen = [p for p in PREFERRED_PROVIDERS if p in available and p != "TensorrtExecutionProvider"]

    if not chosen:
        chosen = ["CPUExecutionProvider"]

    options = []
    for provider in chosen:
        if provider == "CUDAExecutionProvider":
            options.append(_cuda_provider_options())
        else:
            options.append({})
    return chosen, options


class BaseSession:
    """This is a base class for managing a session with a machine learning model."""

    def __init__(
        self,
        model_name: str,
        sess_opts: ort.SessionOptions,
        providers=None,
        *args,
        **kwargs,
    ):
        """Initialize an instance of the BaseSession class."""
        self.model_name = model_name

        self.providers, provider_options = resolve_providers(providers)

        self.inner_session = ort.InferenceSession(
            str(self.__class__.download_models(*args, **kwargs)),
            providers=self.providers,
            provider_options=provider_options,
            sess_options=sess_opts,
        )

    def normalize(
        self,
        img: PILImage,
        mean: Tuple[float, float, float],
        std: Tuple[float, float, float],
        size: Tuple[int, int],
        *args,
        **kwargs,
    ) -> Dict[str, np.ndarray]:
        im = img.convert("RGB").resize(size, Image.LANCZOS)

        im_ary = np.array(im)
        im_ary = im_ary / np.max(im_ary)

        tmp_img = np.zeros((im_ary.shape[0], im_ary.shape[1], 3))
        tmp_img[:, :, 0] = (im_ary[:, :, 0] - mean[0]) / std[0]
        tmp_img[:, :, 1] = (im_ary[:, :, 1] - mean[1]) / std[1]
        tmp_img[:, :, 2] = (im_ary[:, :, 2] - mean[2]) / std[2]

        tmp_img = tmp_img.transpose((2, 0, 1))

        return {
            self.inner_session.get_inputs()[0]
            .name: np.expand_dims(tmp_img, 0)
            .astype(np.float32)
        }

    def predict(self, img: PILImage, *args, **kwargs) -> List[PILImage]:
        raise NotImplementedError

    @property
    def uses_gpu(self) -> bool:
        # Only used for the log line printed by the CLI ("using CUDA ...").
        active = self.inner_session.get_providers()
        return any(p != "CPUExecutionProvider" for p in active)

    @classmethod
    def checksum_disabled(cls, *args, **kwargs):
        return os.getenv("MODEL_CHECKSUM_DISABLED", None) is not None

    @classmethod
    def u2net_home(cls, *args, **kwargs):
        return os.path.expanduser(
            os.getenv(
                "U2NET_HOME", os.path.join(os.getenv("XDG_DATA_HOME", "~"), ".u2net")
            )
        )

    @classmethod
    def download_models(cls, *args, **kwargs):
        url = cls.model_url(*args, **kwargs)
        fname = f"{cls.name(*args, **kwargs)}.onnx"
        pooch.retrieve(
            url,
            None if cls.checksum_disabled(*args, **kwargs) else cls.model_md5(*args, **kwargs),
            fname=fname,
            path=cls.u2net_home(*args, **kwargs),
            progressbar=True,
        )
        return os.path.join(cls.u2net_home(*args, **kwargs), fname)

    @classmethod
    def model_url(cls, *args, **kwargs) -> str:
        raise NotImplementedError

    @classmethod
    def model_md5(cls, *args, **kwargs) -> str:
        raise NotImplementedError

    @classmethod
    def name(cls, *args, **kwargs):
        raise NotImplementedError


def new_session(model_name: str = "u2net", providers=None, *args, **kwargs) -> BaseSession:
    """Create a new session object based on the specified model name."""
    from . import sessions_class  # noqa: local import avoids a cycle

    session_class = None
    for sc in sessions_class:
        if sc.name() == model_name:
            session_class = sc
            break

    if session_class is None:
        raise ValueError(f"No session class found for model '{model_name}'")

    sess_opts = ort.SessionOptions()

    if "OMP_NUM_THREADS" in os.environ:
        threads = int(os.environ["OMP_NUM_THREADS"])
        sess_opts.inter_op_num_threads = threads
        sess_opts.intra_op_num_threads = threads

    if sys.platform == "darwin":
        sess_opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC

    return session_class(model_name, sess_opts, providers, *args, **kwargs)
