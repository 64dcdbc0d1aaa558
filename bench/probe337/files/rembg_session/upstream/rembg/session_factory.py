import os
import logging
from typing import Dict, List, Optional, Tuple, Type

import numpy as np
import onnxruntime as ort
from PIL import Image
from PIL.Image import Image as PILImage

from .sessions.base import BaseSession
from .sessions import sessions_class
from .sessions.u2net import U2netSession

logger = logging.getLogger(__name__)

# Environment knobs understood by rembg:
#   OMP_NUM_THREADS     - intra/inter op threads for the CPU provider
#   REMBG_DEVICE        - "cpu" or "gpu" (default: "gpu" if onnxruntime-gpu and CUDA are available)
#   REMBG_GPU_ID        - which CUDA device to run on (default 0)
#   REMBG_GPU_MEM_LIMIT - arena limit in GiB for the CUDA provider (default: unlimited)


def _gpu_requested() -> bool:
    return os.environ.get("REMBG_DEVICE", "gpu").lower() in ("gpu", "cuda")


def cuda_available() -> bool:
    """True when onnxruntime-gpu is installed and it can see a CUDA device."""
    return (
        "CUDAExecutionProvider" in ort.get_available_providers()
        and ort.get_device() == "GPU"
    )


def default_providers() -> List:
    """
    Provider list in priority order. onnxruntime silently falls back to the next
    provider when one fails to initialise, so CPU is always appended last.
    """
    providers: List = []

    if _gpu_requested() and cuda_available():
        cuda_options: Dict[str, object] = {
            "device_id": int(os.environ.get("REMBG_GPU_ID", "0")),
            "arena_extend_strategy": "kSameAsRequested",
            "cudnn_conv_algo_search": "HEURISTIC",
            "do_copy_in_default_stream": True,
        }
        mem_limit = os.environ.get("REMBG_GPU_MEM_LIMIT")
        if mem_limit:
            cuda_options["gpu_mem_limit"] = int(float(mem_limit) * 1024 ** 3)
        providers.append(("CUDAExecutionProvider", cuda_options))

    providers.append("CPUExecutionProvider")
    return providers


def session_options() -> ort.SessionOptions:
    sess_opts = ort.SessionOptions()
    sess_opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL

    if "OMP_NUM_THREADS" in os.environ:
        threads = int(os.environ["OMP_NUM_THREADS"])
        sess_opts.inter_op_num_threads = threads
        sess_opts.intra_op_num_threads = threads

    return sess_opts


def new_session(
    model_name: str = "u2net", providers: Optional[List] = None, *args, **kwargs
) -> BaseSession:
    """
    Create a new session object based on the specified model name.

    This function searches for the session class based on the model name in the 'sessions_class' list.
    It then creates an instance of the session class with the provided arguments.
    The 'sess_opts' object is created using the 'ort.SessionOptions()' constructor.
    If the 'OMP_NUM_THREADS' environment variable is set, the 'inter_op_num_threads' option of 'sess_opts' is set to its value.

    Parameters:
        model_name (str): The name of the model.
        providers: The providers for the session.
        *args: Additional positional arguments.
        **kwargs: Additional keyword arguments.

    Raises:
        ValueError: If no session class with the given `model_name` is found.

    Returns:
        BaseSession: The created session object.
    """
    session_class: Optional[Type[BaseSession]] = None

    for sc in sessions_class:
        if sc.name() == model_name:
            session_class = sc
            break

    if session_class is None:
        raise ValueError(f"No session class found for model '{model_name}'")

    if providers is None:
        providers = default_providers()

    logger.debug("rembg: %s on providers %s", model_name, [p if isinstance(p, str) else p[0] for p in providers])
    return session_class(model_name, session_options(), providers, *args, **kwargs)


def warmup(session: BaseSession, size: Tuple[int, int] = (320, 320)) -> None:
    """Run one dummy image through the session so the first real request is not slow
    (cuDNN autotuning and arena growth happen on the first call)."""
    dummy = Image.fromarray(np.zeros((size[1], size[0], 3), dtype=np.uint8))
    session.predict(dummy)


class SessionPool:
    """
    Small cache of sessions keyed by model name, used by the HTTP server so that a
    model is loaded onto the GPU once and shared between requests.
    """

    def __init__(self, providers: Optional[List] = None, warm: bool = True):
        self._sessions: Dict[str, BaseSession] = {}
        self._providers = providers
        self._warm = warm

    def get(self, model_name: str, *args, **kwargs) -> BaseSession:
        if model_name not in self._sessions:
            session = new_session(model_name, self._providers, *args, **kwargs)
            if self._warm:
                try:
                    warmup(session)
                except Exception as e:  # pragma: no cover - best effort
                    logger.warning("warmup of %s failed: %s", model_name, e)
            self._sessions[model_name] = session
        return self._sessions[model_name]

    def active_providers(self) -> Dict[str, List[str]]:
        return {
            name: session.inner_session.get_providers()
            for name, session in self._sessions.items()
        }

    def clear(self) -> None:
        self._sessions.clear()


def describe_runtime() -> str:
    lines = [
        f"onnxruntime {ort.__version__} ({ort.get_device()})",
        f"available providers: {', '.join(ort.get_available_providers())}",
        f"REMBG_DEVICE={os.environ.get('REMBG_DEVICE', 'gpu')}",
    ]
    if not cuda_available():
        lines.append("CUDA provider not usable: running on CPU (install onnxruntime-gpu for GPU support)")
    return "\n".join(lines)


def remove_batch(paths: List[str], model_name: str = "u2net", pool: Optional[SessionPool] = None,
                 alpha_matting: bool = False) -> List[PILImage]:
    """
    Convenience wrapper used by the `rembg p` folder command: one session for the
    whole batch, so the model is loaded (and the GPU arena allocated) only once.
    """
    from .bg import remove

    pool = pool or SessionPool()
    session = pool.get(model_name)
    results: List[PILImage] = []
    for path in paths:
        with Image.open(path) as img:
            results.append(remove(img, session=session, alpha_matting=alpha_matting))
    logger.info("processed %d images with %s on %s", len(paths), model_name,
                session.inner_session.get_providers()[0])
    return results
