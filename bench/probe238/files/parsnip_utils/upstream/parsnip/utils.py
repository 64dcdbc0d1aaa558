import os
import warnings

import numpy as np
import torch


def nmad(x):
    """Normalized median absolute deviation (robust estimate of the standard deviation)."""
    x = np.atleast_1d(x)
    return 1.4826 * np.nanmedian(np.abs(x - np.nanmedian(x)))


def frac_to_mag(fractional_difference):
    """Convert a fractional difference to a difference in magnitude.

    Because this transformation is asymmetric for larger fractional changes, we take the
    average of positive and negative differences.

    This is only valid for small fractional differences.
    """
    pos_mag = 2.5 * np.log10(1 + fractional_difference)
    neg_mag = 2.5 * np.log10(1 - fractional_difference)
    mag_diff = (pos_mag - neg_mag) / 2.

    return mag_diff


def parse_device(device):
    """Figure out which PyTorch device to use

    Parameters
    ----------
    device : str
        Requested device. Should be a string that PyTorch can parse. If CUDA is
        requested but not available, this will fall back to the CPU with a warning.

    Returns
    -------
    str
        Device to use
    """
    # Figure out which device to use.
    use_device = device

    if device == 'cuda' and not torch.cuda.is_available():
        warnings.warn("CUDA not available, falling back to CPU.", RuntimeWarning)
        use_device = 'cpu'
    elif device.startswith('cuda:') and int(device.split(':')[1]) >= torch.cuda.device_count():
        warnings.warn(f"{device} requested but only {torch.cuda.device_count()} GPUs visible, "
                      "falling back to cuda:0.", RuntimeWarning)
        use_device = 'cuda:0'

    return use_device


def replace_nan_grads(parameters, value=0.0):
    """Replace NaN gradients

    Parameters
    ----------
    parameters : Iterator[torch.Tensor]
        Model parameters, usually you can get them by `model.parameters()`
    value : float, optional
        Value to replace NaNs with
    """
    for p in parameters:
        if p.grad is None:
            continue
        grads = p.grad.data
        grads[torch.isnan(grads)] = value


def set_seed(seed):
    """Seed numpy and torch (CPU and all GPUs) for reproducible augmentation / training."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def get_num_workers(threads=None):
    """Number of dataloader workers: SLURM allocation if present, else the requested threads."""
    slurm_cpus = os.environ.get('SLURM_CPUS_PER_TASK')
    if slurm_cpus is not None:
        return max(int(slurm_cpus) - 1, 0)
    if threads is not None:
        return threads
    return max((os.cpu_count() or 2) - 1, 0)


def get_bands(dataset):
    """Get a list of the bands that are present in a dataset."""
    bands = set()
    for lc in dataset.light_curves:
        bands = bands.union(lc['band'])

    sorted_bands = np.array(sorted(bands))
    return sorted_bands


def define_plot_colors(bands):
    """Assign a matplotlib color to each band based on its effective wavelength."""
    from .instruments import get_band_effective_wavelength
    import matplotlib

    wavelengths = np.array([get_band_effective_wavelength(b) for b in bands])
    norm = matplotlib.colors.Normalize(vmin=3000, vmax=10000)
    cmap = matplotlib.cm.get_cmap('rainbow')
    return {band: cmap(norm(wave)) for band, wave in zip(bands, wavelengths)}


def describe_device(device):
    """Human readable summary of the device used (printed at the start of training)."""
    if str(device).startswith('cuda'):
        index = torch.device(device).index or 0
        props = torch.cuda.get_device_properties(index)
        return f"{props.name} ({props.total_memory / 1024**3:.1f} GB)"
    return f"CPU ({torch.get_num_threads()} threads)"
