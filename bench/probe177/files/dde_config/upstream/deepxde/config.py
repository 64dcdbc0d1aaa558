import os
import random

import numpy as np

from . import backend as bkd
from .backend import backend_name, tf, torch, paddle
from .real import Real

# Data parallel
parallel_scaling = None
# Data parallel
if "OMPI_COMM_WORLD_SIZE" in os.environ:
    if backend_name == "tensorflow.compat.v1":
        import horovod.tensorflow as hvd

        hvd.init()
        world_size = hvd.size()
        rank = hvd.rank()
        local_rank = hvd.local_rank()
        if world_size > 1:
            parallel_scaling = "weak"
            # pin GPU to be used to process local rank (one GPU per process)
            gpus = tf.config.experimental.list_physical_devices("GPU")
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
            if gpus:
                tf.config.experimental.set_visible_devices(gpus[local_rank], "GPU")
    elif backend_name == "pytorch":
        import torch.distributed as dist

        world_size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        local_rank = int(os.environ["OMPI_COMM_WORLD_LOCAL_RANK"])
        if world_size > 1:
            parallel_scaling = "weak"
            os.environ.setdefault("MASTER_ADDR", "localhost")
            os.environ.setdefault("MASTER_PORT", "29500")
            # one GPU per MPI process
            torch.cuda.set_device(local_rank)
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
    else:
        raise NotImplementedError(
            "Parallel training via Horovod is only implemented in backend tensorflow.compat.v1 and pytorch"
        )
else:
    world_size = 1
    rank = 0
    local_rank = 0

# Default float type
real = Real(32)
# Using mixed precision
mixed = False
# Random seed
random_seed = None
if backend_name == "jax":
    iteration = 0
    if random_seed is None:
        random_seed = 0
# XLA
xla_jit = False
if backend_name in ["tensorflow.compat.v1", "tensorflow"]:
    # Note: tensorflow.compat.v1 and tensorflow use different XLA settings.
    xla_jit = True
elif backend_name == "jax":
    xla_jit = True
# Auto differentiation: reverse or forward
autodiff = "reverse"
# Hessian for ODE/PDE residuals
hvp = False


def default_float():
    """Returns the default float type, as a string."""
    if real.precision == 64:
        return "float64"
    if real.precision == 32:
        return "float32"
    return "float16"


def set_default_float(value):
    """Sets the default float type.

    The default floating point type is 'float32'.

    Args:
        value (String): 'float16', 'float32', or 'float64'.
    """
    global mixed
    if value == "float16":
        print("Set the default float type to float16")
        real.set_float16()
    elif value == "float32":
        print("Set the default float type to float32")
        real.set_float32()
    elif value == "float64":
        print("Set the default float type to float64")
        real.set_float64()
    elif value == "mixed":
        print("Set the float type to mixed precision of float16 and float32")
        mixed = True
        if backend_name == "tensorflow":
            real.set_float16()
            tf.keras.mixed_precision.set_global_policy("mixed_float16")
            return
        if backend_name == "pytorch":
            # Use float16 during the forward and backward passes, but store in float32
            real.set_float32()
            return
        raise ValueError(f"{backend_name} backend does not currently support mixed precision.")
    else:
        raise ValueError(f"{value} not supported in deepXDE")
    if backend_name in ["tensorflow.compat.v1", "tensorflow"]:
        tf.keras.backend.set_floatx(value)
    elif backend_name in ["pytorch", "paddle"]:
        bkd.set_default_dtype(value)
    # TODO: support jax.numpy.array with dtype float64


def set_random_seed(seed):
    """Sets all random seeds for the program (Python random, NumPy, and backend), and
    configures the program to run deterministically.

    You can use this to make the program fully deterministic. This means that if the
    program is run multiple times with the same inputs on the same hardware, it will
    have the exact same outputs each time. This is useful for debugging models, and for
    obtaining fully reproducible results.

    - For backend TensorFlow 1.x: Results might change if you run the model several
      times in the same terminal.

    Warning:
        Note that determinism in general comes at the expense of lower performance and
        so your model may run slower when determinism is enabled.

    Args:
        seed (int): The desired seed.
    """
    random.seed(seed)  # python random
    np.random.seed(seed)  # numpy
    if backend_name == "tensorflow.compat.v1":
        os.environ["TF_DETERMINISTIC_OPS"] = "1"
        tf.set_random_seed(seed)  # tf CPU seed
    elif backend_name == "tensorflow":
        tf.keras.utils.set_random_seed(seed)
        tf.config.experimental.enable_op_determinism()
    elif backend_name == "pytorch":
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        # cuBLAS needs a fixed workspace for deterministic matmuls on CUDA >= 10.2
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
    elif backend_name == "paddle":
        paddle.seed(seed)
    global random_seed
    random_seed = seed


def enable_xla_jit(mode=True):
    """Enables just-in-time compilation with XLA.

    - For backend TensorFlow 1.x, by default, compiles with XLA when running on GPU.
      XLA compilation can only be enabled when running on GPU.
    - For backend TensorFlow 2.x, by default, compiles with XLA when running on GPU.
      If compilation with XLA makes your code slower on GPU, in addition to calling
      ``disable_xla_jit``, you may simultaneously try XLA with auto-clustering via:

          $ TF_XLA_FLAGS=--tf_xla_auto_jit=2 path/to/your/program

    - Backend JAX always uses XLA.
    - Backends PyTorch and PaddlePaddle do not support XLA.

    Args:
        mode (bool): Whether to enable just-in-time compilation with XLA (``True``) or
            disable just-in-time compilation with XLA (``False``).
    """
    if backend_name == "tensorflow.compat.v1":
        if mode and not bkd.is_gpu_available():
            raise ValueError("For backend TensorFlow 1.x, XLA compilation can only be enabled when running on GPU.")
    elif backend_name in ["pytorch", "paddle"]:
        if mode:
            raise ValueError(f"Backend {backend_name} does not support XLA compilation.")
    elif backend_name == "jax":
        if not mode:
            raise ValueError("Backend JAX always uses XLA.")

    global xla_jit
    xla_jit = mode
    if xla_jit:
        print("Enable just-in-time compilation with XLA.\n")
    else:
        print("Disable just-in-time compilation with XLA.\n")


def disable_xla_jit():
    """Disables just-in-time compilation with XLA.

    - For backend TensorFlow 1.x, by default, compiles with XLA when running on GPU.
      XLA compilation can only be enabled when running on GPU.
    - For backend TensorFlow 2.x, by default, compiles with XLA when running on GPU.
      If compilation with XLA makes your code slower on GPU, in addition to calling
      ``disable_xla_jit``, you may simultaneously try XLA with auto-clustering via:

          $ TF_XLA_FLAGS=--tf_xla_auto_jit=2 path/to/your/program

    - Backend JAX always uses XLA.
    - Backends PyTorch and PaddlePaddle do not support XLA.
    """
    enable_xla_jit(False)


def set_parallel_scaling(scaling_mode):
    """Sets the scaling mode for data parallel acceleration.

    Weak scaling involves increasing the problem size proportionally with the number of
    processors, while strong scaling involves keeping the problem size fixed and
    increasing the number of processors.

    Args:
        scaling_mode (str): Whether 'weak' or 'strong'
    """
    global parallel_scaling
    parallel_scaling = scaling_mode
