import numpy as np
import torch
import scipy.stats

try:
    import torch_radon_cuda
except Exception as e:
    print("Importing exception")
    raise e

from .differentiable_functions import RadonForward, RadonBackprojection
from .utils import normalize_shape
from .filtering import FourierFilters
from .parameter_classes import Volume, Projection, ExecCfg

__version__ = "1.0.0"


class BaseRadon:
    def __init__(self, angles, rays_cfg):
        # make sure that angles are a PyTorch tensor
        if not isinstance(angles, torch.Tensor):
            angles = torch.FloatTensor(angles)

        self.rays_cfg = rays_cfg
        self.angles = angles
        self.tex_cache = torch_radon_cuda.TextureCache(8)
        self.fourier_filters = FourierFilters()

    def _move_parameters_to_device(self, device):
        if device != self.angles.device:
            self.angles = self.angles.to(device)

    def _check_input(self, x, square=False):
        if not x.is_cuda:
            raise ValueError("Input tensor must be on a CUDA device, got {}".format(x.device))

        if not x.is_contiguous():
            x = x.contiguous()

        if square:
            assert x.size(1) == x.size(2), f"Input images must be square, got shape ({x.size(1)}, {x.size(2)})."

        if x.dtype == torch.float16:
            assert x.size(
                0) % 4 == 0, f"Batch size must be multiple of 4 when using half precision. Got batch size {x.size(0)}"
            self._check_half_support(x.device)

        return x

    @staticmethod
    def _check_half_support(device):
        major, minor = torch.cuda.get_device_capability(device)
        if major < 6:
            raise RuntimeError("Half precision requires compute capability >= 6.0, got {}.{}".format(major, minor))

    @normalize_shape(2)
    def forward(self, x):
        r"""Radon forward projection.

        :param x: PyTorch GPU tensor with shape :math:`(d_1, \dots, d_n, r, r)`.
        :returns: PyTorch GPU tensor containing sinograms. Has shape :math:`(d_1, \dots, d_n, len(angles), det\_count)`.
        """
        x = self._check_input(x, square=True)
        self._move_parameters_to_device(x.device)

        return RadonForward.apply(x, self.angles, self.tex_cache, self.rays_cfg)

    @normalize_shape(2)
    def backprojection(self, sinogram):
        r"""Radon backward projection.

        :param sinogram: PyTorch GPU tensor containing sinograms with shape  :math:`(d_1, \dots, d_n, len(angles), det\_count)`.
        :returns: PyTorch GPU tensor with shape :math:`(d_1, \dots, d_n, r, r)`.
        """
        sinogram = self._check_input(sinogram)
        self._move_parameters_to_device(sinogram.device)

        return RadonBackprojection.apply(sinogram, self.angles, self.tex_cache, self.rays_cfg)

    def backward(self, sinogram):
        return self.backprojection(sinogram)

    @normalize_shape(2)
    def filter_sinogram(self, sinogram, filter_name="ramp"):
        size = sinogram.size(2)
        n_angles = sinogram.size(1)

        # Pad sinogram to improve accuracy
        padded_size = max(64, int(2 ** np.ceil(np.log2(2 * size))))
        pad = padded_size - size
        padded_sinogram = torch.nn.functional.pad(sinogram.float(), (0, pad, 0, 0))

        sino_fft = torch.fft.rfft(padded_sinogram, norm="ortho")

        # get filter and apply
        f = self.fourier_filters.get(padded_size, filter_name, sinogram.device)
        filtered_sino_fft = sino_fft * f

        # Inverse fft
        filtered_sinogram = torch.fft.irfft(filtered_sino_fft, norm="ortho")
        filtered_sinogram = filtered_sinogram[:, :, :-pad] * (np.pi / (2 * n_angles))

        return filtered_sinogram.to(dtype=sinogram.dtype)

    def noise_mask(self, sinogram, signal, density_normalization=1.0):
        """Per-bin variance of a Poisson transmission measurement with the given incident signal."""
        with torch.cuda.device(sinogram.device):
            return torch_radon_cuda.emulate_sensor_readings(sinogram, signal, density_normalization)

    def add_noise(self, x, signal, density_normalization=1.0, approximate=False):
        # print("WARN Radon.add_noise is deprecated")

        torch_radon_cuda.add_noise(x, signal, density_normalization, approximate)
        return x

    def emulate_readings(self, x, signal, density_normalization=1.0):
        return torch_radon_cuda.emulate_sensor_readings(x, signal, density_normalization)

    def emulate_readings_new(self, x, signal, normal_std, k, bins):
        return torch_radon_cuda.emulate_readings_new(x, signal, normal_std, k, bins)

    def readings_lookup(self, sensor_readings, lookup_table):
        return torch_radon_cuda.readings_lookup(sensor_readings, lookup_table)

    def set_seed(self, seed=-1):
        if seed < 0:
            seed = np.random.get_state()[1][0]

        torch_radon_cuda.set_seed(seed)

    def __del__(self):
        self.tex_cache.free()


class Radon(BaseRadon):
    r"""
    |
    .. image:: https://raw.githubusercontent.com/matteo-ronchetti/torch-radon/
            master/pictures/parallelbeam.svg?sanitize=true
        :align: center
        :width: 400px
    |

    Class that implements Radon projection for the Parallel Beam geometry.

    :param resolution: The resolution of the input images.
    :param angles: Array containing the list of measuring angles. Can be a Numpy array or a PyTorch tensor.
    :param det_count: Number of rays that will be projected. By default it is = :attr:`resolution`
    :param det_spacing: Distance between two contiguous rays.
    :param clip_to_circle: If True both forward and backward projection will be restricted to pixels inside the circle
        (highlighted in cyan).

    .. note::
        Currently only support resolutions which are multiples of 16.
    """

    def __init__(self, resolution: int, angles, det_count=-1, det_spacing=1.0, clip_to_circle=False):
        if det_count <= 0:
            det_count = resolution

        rays_cfg = torch_radon_cuda.RaysCfg(resolution, resolution, det_count, det_spacing, len(angles), clip_to_circle)

        super().__init__(angles, rays_cfg)

        self.det_count = det_count
        self.det_spacing = det_spacing


class RadonFanbeam(BaseRadon):
    r"""
    Class that implements Radon projection for the Fanbeam geometry.

    :param resolution: The resolution of the input images.
    :param angles: Array containing the list of measuring angles. Can be a Numpy array or a PyTorch tensor.
    :param source_distance: Distance between the source of rays and the center of the image.
    :param det_distance: Distance between the detector plane and the center of the image.
        By default it is =  :attr:`source_distance`.
    :param det_count: Number of rays that will be projected. By default it is = :attr:`resolution`.
    :param det_spacing: Distance between two contiguous rays. By default it is = :math:`(source\_distance + det\_distance) / source\_distance`.
    :param clip_to_circle: If True both forward and backward projection will be restricted to pixels inside the circle
        (highlighted in cyan).

    .. note::
        Currently only support resolutions which are multiples of 16.
    """

    def __init__(self, resolution: int, angles, source_distance: float, det_distance: float = -1, det_count: int = -1,
                 det_spacing: float = -1, clip_to_circle=False):

        if det_count <= 0:
            det_count = resolution

        if det_distance < 0:
            det_distance = source_distance
            det_spacing = 2.0
        if det_spacing < 0:
            det_spacing = (source_distance + det_distance) / source_distance

        rays_cfg = torch_radon_cuda.RaysCfg(resolution, resolution, det_count, det_spacing, len(angles), clip_to_circle,
                                            source_distance, det_distance)

        super().__init__(angles, rays_cfg)

        self.source_distance = source_distance
        self.det_distance = det_distance
        self.det_count = det_count
        self.det_spacing = det_spacing

    def __repr__(self):
        return "RadonFanbeam(resolution={}, n_angles={}, source_distance={}, det_distance={}, det_count={}, det_spacing={})".format(
            self.rays_cfg.width, len(self.angles), self.source_distance, self.det_distance, self.det_count,
            self.det_spacing)

    @normalize_shape(2)
    def filter_sinogram(self, sinogram, filter_name="ramp"):
        # cosine pre-weighting of the flat-detector fan-beam data before ramp filtering
        det_pos = (torch.arange(self.det_count, device=sinogram.device, dtype=torch.float32)
                   - (self.det_count - 1) / 2.0) * self.det_spacing
        weight = self.source_distance / torch.sqrt(
            (self.source_distance + self.det_distance) ** 2 + det_pos ** 2) * (
                (self.source_distance + self.det_distance) / self.source_distance)
        return super().filter_sinogram(sinogram * weight.to(sinogram.dtype), filter_name)
