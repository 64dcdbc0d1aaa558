import torch


def get_compute_device(force_cpu=False, prefer_last=True, verbose=False):
    """Pick the torch device CrabNet trains on.

    Parameters
    ----------
    force_cpu : bool
        Ignore any GPU and run on the CPU.
    prefer_last : bool
        On multi-GPU workstations the first card usually drives the display,
        so by default the *last* CUDA device is used.
    verbose : bool
        Print which device was chosen.

    Returns
    -------
    torch.device
    """
    ngpus = torch.cuda.device_count()
    if ngpus == 0 or force_cpu:
        compute_device = torch.device("cpu")
    elif ngpus > 1 and prefer_last:
        compute_device = torch.device(f"cuda:{ngpus - 1}")
    else:
        compute_device = torch.device("cuda:0")

    if verbose:
        print(f"Running on compute device: {compute_device} ({ngpus} GPUs visible)")
    return compute_device
