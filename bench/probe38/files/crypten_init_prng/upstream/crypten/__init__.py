#!/usr/bin/env python3

# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

__version__ = "0.4.1"

import copy
import warnings

import crypten.common  # noqa: F401
import crypten.communicator as comm
import crypten.config  # noqa: F401
import crypten.mpc  # noqa: F401
import crypten.nn  # noqa: F401
import crypten.optim  # noqa: F401
import torch

# other imports:
from . import debug
from .config import cfg
from .cryptensor import CrypTensor


# functions controlling autograd:
no_grad = CrypTensor.no_grad
enable_grad = CrypTensor.enable_grad
set_grad_enabled = CrypTensor.set_grad_enabled

# Setup RNG generators
generators = {
    "prev": {},
    "next": {},
    "local": {},
    "global": {},
}


def init(config_file=None, party_name=None, device=None):
    """
    Initialize CrypTen. It will initialize communicator, setup party
    name for file save / load, and setup seeds for Random Number Generatiion.
    By default the function will initialize a set of RNG generators on CPU.
    If torch.cuda.is_available() returns True, it will initialize an additional
    set of RNG generators on GPU. Users can specify the GPU device the generators are
    initialized with device.

    Args:
        party_name (str): party_name for file save and load, default is None
        device (int, str, torch.device): Specify device for RNG generators on
        GPU. Must be a GPU device.
    """
    # Load config file
    if config_file is not None:
        cfg.load_config(config_file)

    # Return and raise warning if initialized
    if comm.is_initialized():
        warnings.warn("CrypTen is already initialized.", RuntimeWarning)
        return

    # Initialize communicator
    # os.environ["GLOO_SOCKET_IFNAME"] = "en0"
    comm._init(use_threads=False, init_ttp=crypten.mpc.ttp_required())

    # Setup party name for file save / load
    if party_name is not None:
        comm.get().set_name(party_name)

    # Setup seeds for Random Number Generation
    if comm.get().get_rank() < comm.get().get_world_size():
        _setup_prng(device=device)
        if crypten.mpc.ttp_required():
            crypten.mpc.provider.ttp_provider.TTPClient._init()


def init_thread(rank, world_size):
    comm._init(use_threads=True, rank=rank, world_size=world_size)
    _setup_prng()


def uninit():
    return comm.uninit()


def is_initialized():
    return comm.is_initialized()


def _setup_prng(device=None):
    """
    Generate shared random seeds to generate pseudo-random sharings of
    zero. For each device, we generator four random seeds:
        "prev"  - shared seed with the previous party
        "next"  - shared seed with the next party
        "local" - seed known only to the current party
        "global" - seed shared by all parties

    The "prev" and "next" random seeds are shared such that each process shares
    one seed with the previous rank process and one with the next rank.
    This allows for the generation of `n` random values, each known to
    exactly two of the `n` parties.

    For arithmetic sharing, one of these parties will add the number
    while the other subtracts it, allowing for the generation of a
    pseudo-random sharing of zero. (This can be done for binary
    sharing using bitwise-xor rather than addition / subtraction)
    """
    global generators

    # Initialize RNG Generators
    for key in generators.keys():
        generators[key][torch.device("cpu")] = torch.Generator(device=torch.device("cpu"))

    if torch.cuda.is_available():
        cuda_device_names = ["cuda"]
        for i in range(torch.cuda.device_count()):
            cuda_device_names.append(f"cuda:{i}")
        cuda_devices = [torch.device(name) for name in cuda_device_names]

        for device in cuda_devices:
            for key in generators.keys():
                generators[key][device] = torch.Generator(device=device)

    # Generate random seeds for Generators
    # NOTE: Chosen seed can be any number, but we choose as a random 64-bit
    # integer here so other parties cannot guess its value. We use os.urandom(8)
    # here to generate seeds so that forked processes do not generate the same seed.

    # Generate next / prev seeds.
    seed = int.from_bytes(__import__("os").urandom(8), "big") - 2**63
    next_seed = torch.tensor(seed)

    # Create local seed - Each party has a separate local generator
    local_seed = int.from_bytes(__import__("os").urandom(8), "big") - 2**63

    # Create global generator - All parties share one global generator for sync'd rng
    global_seed = int.from_bytes(__import__("os").urandom(8), "big") - 2**63
    global_seed = torch.tensor(global_seed)

    _sync_seeds(next_seed, local_seed, global_seed)


def _sync_seeds(next_seed, local_seed, global_seed):
    """
    Sends random seed to next party, recieve seed from prev. party, and broadcast global seed

    After seeds are distributed. One seed is created for each party to coordinate seeds
    across cuda devices.
    """

    # Populated by recieving the previous party's next_seed (irecv)
    prev_seed = torch.tensor([0], dtype=torch.long)

    # Send random seed to next party, receive random seed from prev party
    world_size = comm.get().get_world_size()
    rank = comm.get().get_rank()
    if world_size >= 2:  # Guard against segfaults when world_size == 1.
        next_rank = (rank + 1) % world_size
        prev_rank = (next_rank - 2) % world_size

        req0 = comm.get().isend(next_seed, next_rank)
        req1 = comm.get().irecv(prev_seed, src=prev_rank)

        req0.wait()
        req1.wait()
    else:
        prev_seed = next_seed

    prev_seed = prev_seed.item()
    next_seed = next_seed.item()

    # Broadcast global generator - All parties share one global generator for sync'd rng
    global_seed = comm.get().broadcast(global_seed, 0).item()

    # Create one of each seed per party
    # Note: This is configured to coordinate seeds across cuda devices
    # so that we can one party per gpu. If we want to support configurations
    # where each party runs on multiple gpu's, we will need to coordinate seeds
    # more carefully.
    for device in generators["prev"].keys():
        generators["prev"][device].manual_seed(prev_seed)
        generators["next"][device].manual_seed(next_seed)
        generators["local"][device].manual_seed(local_seed)
        generators["global"][device].manual_seed(global_seed)


def manual_seed(rank, seed, device=None):
    """Set the seed of the generators for all devices (test helper, not secure)."""
    for key, gens in generators.items():
        for dev, gen in gens.items():
            gen.manual_seed(seed + rank if key == "local" else seed)


def cryptensor(*args, cryptensor_type=None, **kwargs):
    """
    Factory function to return encrypted tensor of given `cryptensor_type`. If no
    `cryptensor_type` is specified, the default type is used.
    """

    # determine CrypTensor type to use:
    if cryptensor_type is None:
        cryptensor_type = get_default_cryptensor_type()
    if cryptensor_type not in CrypTensor.__CRYPTENSOR_TYPES__:
        raise ValueError("CrypTensor type %s does not exist." % cryptensor_type)

    # create CrypTensor:
    return CrypTensor.__CRYPTENSOR_TYPES__[cryptensor_type](*args, **kwargs)


def get_default_cryptensor_type():
    """Gets the default type used to create `CrypTensor`s."""
    return CrypTensor.__DEFAULT_CRYPTENSOR_TYPE__


def load_from_party(f=None, preloaded=None, encrypted=False, model_class=None, src=0, load_closure=torch.load, **kwargs):
    """Loads an object saved with `torch.save()` or `crypten.save_from_party()` on party `src`."""
    if encrypted:
        raise NotImplementedError("Loading encrypted tensors is not yet supported")
    assert isinstance(src, int), "Load failed: src argument must be an integer"
    assert src >= 0 and src < comm.get().get_world_size(), "Load failed: src must be in [0, world_size)"

    if comm.get().get_rank() == src:
        result = preloaded if preloaded is not None else load_closure(f, **kwargs)
        comm.get().broadcast_obj(result, src)
    else:
        result = comm.get().broadcast_obj(None, src)
    if torch.is_tensor(result):
        result = crypten.cryptensor(result, src=src)
    return result


__all__ = ["CrypTensor", "cryptensor", "debug", "generators", "init", "init_thread", "is_initialized", "load_from_party", "manual_seed", "no_grad", "enable_grad", "set_grad_enabled", "uninit"]
