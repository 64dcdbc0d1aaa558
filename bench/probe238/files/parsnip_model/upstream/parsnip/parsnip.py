"""ParSNIP: generative model of transient light curves with a physics-inspired decoder.

Encoder: dilated 1D convolutions over a time-binned, band-interleaved grid of observations.
Decoder: latent -> spectral time series (amplitude, colour, shape) -> integrated through the
band passes at the observed times, with a redshift/time-shift that is physically applied.
"""

import functools
import multiprocessing
import os
import sys
import time
import warnings

import astropy.table
import extinction
import numpy as np
import sncosmo
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F
from tqdm import tqdm

from .instruments import band_info, get_band_effective_wavelength, parse_light_curve
from .light_curves import AugmentedDataset, preprocess_light_curve, grid_to_time, time_to_grid, get_band_plot_color
from .settings import parse_settings, default_model
from .sncosmo import ParsnipSncosmoSource
from .utils import nmad, frac_to_mag, parse_device, replace_nan_grads


class ResidualBlock(nn.Module):
    """1D residual convolutional neural network block

    This module operates on 1D sequences. The input will be padded so that
    length of the sequences is be left unchanged.

    Parameters
    ----------
    in_channels : int
        Number of channels for the input
    out_channels : int
        Number of channels for the output
    dilation : int
        Dilation to use in the convolution
    """
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__()

        self.in_channels = in_channels
        self.out_channels = out_channels

        if self.out_channels < self.in_channels:
            raise Exception("out_channels must be >= in_channels.")

        self.conv1 = nn.Conv1d(in_channels, out_channels, 3, dilation=dilation,
                               padding=dilation)
        self.conv2 = nn.Conv1d(out_channels, out_channels, 3,
                               dilation=dilation, padding=dilation)

    def forward(self, x):
        out = self.conv1(x)
        out = F.relu(out)
        out = self.conv2(out)

        # Add back in the input. If it is smaller than the output, pad it first.
        if self.in_channels < self.out_channels:
            pad_size = self.out_channels - self.in_channels
            pad_x = F.pad(x, (0, 0, 0, pad_size))
        else:
            pad_x = x

        # Residual connection
        out = out + pad_x

        out = F.relu(out)

        return out


class Conv1dBlock(nn.Module):
    """1D convolutional neural network block

    This module operates on 1D sequences. The input will be padded so that
    length of the sequences is be left unchanged.
    """
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__()

        self.in_channels = in_channels
        self.out_channels = out_channels

        self.conv = nn.Conv1d(in_channels, out_channels, 5, dilation=dilation,
                              padding=2*dilation)
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.conv(x)
        out = self.relu(out)

        return out


class GlobalMaxPoolingTime(nn.Module):
    """Time max pooling layer for 1D sequences

    This layer applies global max pooling over all channels to elminate the channel
    dimension while preserving the time dimension.
    """
    def forward(self, x):
        out, inds = torch.max(x, 2)
        return out


class ParsnipModel(nn.Module):
    """Generative model of transient light curves

    This class represents a generative model of transient light curves. Given a set of
    latent variables representing a transient, it can predict the full spectral time
    series of that transient. It can also use variational inference to predict the
    posterior distribution over the latent variables for a given light curve.

    Parameters
    ----------
    path : str
        Path to where the model should be stored on disk.
    bands : List[str]
        Bands that the model uses as input for variational inference
    device : str
        PyTorch device to use for the model, by default 'cpu'
    threads : int
        Number of threads to use, by default 8
    settings : dict
        Settings for the model. Any settings specified here will override the defaults
        set in settings.py
    ignore_unknown_settings : bool
        If True, ignore any settings that are specified that are unknown. Otherwise,
        raise a KeyError if an unknown setting is specified. By default False.
    """
    def __init__(self, path, bands, device='cpu', threads=8, settings={},
                 ignore_unknown_settings=False):
        super().__init__()

        # Parse settings
        self.settings = parse_settings(bands, settings,
                                       ignore_unknown_settings=ignore_unknown_settings)

        self.path = path
        self.threads = threads
        self.device = None

        # Setup the bands
        self._setup_band_weights()

        # Setup the color law. We scale this so that the color law has a B-V color of 1,
        # meaning that a coefficient multiplying the color law is the b-v color.
        color_law = extinction.fm07(self.model_wave, 3.1)
        self.color_law = torch.FloatTensor(color_law)

        # Setup the timing
        self.input_times = (torch.arange(self.settings['time_window'])
                            - self.settings['time_window'] // 2)

        # Build the model
        self.build_model()

        # Set up the training
        self.epoch = 0
        self.optimizer = optim.Adam(self.parameters(), lr=self.settings['learning_rate'])
        self.scheduler = optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer, factor=self.settings['scheduler_factor'], verbose=True
        )

        # Send the model weights to the desired device
        self.to(device, force=True)

    def to(self, device, force=False):
        """Send the model to the specified device

        Parameters
        ----------
        device : str
            PyTorch device
        force : bool, optional
            If True, force the model to be sent to the device even if it is there
            already (useful if only parts of the model are there), by default False
        """
        new_device = parse_device(device)

        if self.device == new_device and not force:
            # Already on that device
            return

        self.device = new_device

        # Send all of the weights
        super().to(self.device)

        # Send all of the variables that we create manually
        self.color_law = self.color_law.to(self.device)
        self.input_times = self.input_times.to(self.device)

        self.band_interpolate_locations = \
            self.band_interpolate_locations.to(self.device)
        self.band_interpolate_weights = self.band_interpolate_weights.to(self.device)

    def _setup_band_weights(self):
        """Setup the interpolation for the band weights used for photometry"""
        # Build the model in log wavelength
        model_log_wave = np.linspace(np.log10(self.settings['min_wave']),
                                     np.log10(self.settings['max_wave']),
                                     self.settings['spectrum_bins'])

        model_spacing = model_log_wave[1] - model_log_wave[0]

        band_spacing = model_spacing / self.settings['band_oversampling']
        band_max_log_wave = (
            np.log10(self.settings['max_wave'] * (1 + self.settings['max_redshift']))
            + band_spacing
        )

        # Oversampling must be odd.
        assert self.settings['band_oversampling'] % 2 == 1
        pad = (self.settings['band_oversampling'] - 1) // 2
        band_log_wave = np.arange(np.log10(self.settings['min_wave']),
                                  band_max_log_wave, band_spacing)
        band_wave = 10**(band_log_wave)
        band_pad_log_wave = np.arange(
            np.log10(self.settings['min_wave']) - band_spacing * pad,
            band_max_log_wave + band_spacing * pad,
            band_spacing
        )
        band_pad_dwave = (
            10**(band_pad_log_wave + band_spacing / 2.)
            - 10**(band_pad_log_wave - band_spacing / 2.)
        )

        ref = sncosmo.get_magsystem(self.settings['magsys'])

        band_weights = []

        for band_name in self.settings['bands']:
            band = sncosmo.get_bandpass(band_name)
            band_transmission = band(10**(band_pad_log_wave))

            # Convolve the bands to match the sampling of the spectrum.
            band_conv_transmission = np.convolve(
                band_transmission * band_pad_dwave,
                np.ones(self.settings['band_oversampling']),
                mode='valid'
            )

            band_weight = (
                band_wave
                * band_conv_transmission
                / sncosmo.constants.HC_ERG_AA
                / ref.zpbandflux(band)
                * 10**(0.4 * -20.)
            )

            band_weights.append(band_weight)

        # Get the locations that should be sampled at redshift 0. We can scale these to
        # get the locations at any redshift.
        band_interpolate_locations = torch.arange(
            0,
            self.settings['spectrum_bins'] * self.settings['band_oversampling'],
            self.settings['band_oversampling']
        )

        # Save the variables that we need to do interpolation.
        self.band_interpolate_locations = band_interpolate_locations
        self.band_interpolate_spacing = band_spacing
        self.band_interpolate_weights = torch.FloatTensor(np.array(band_weights))
        self.model_wave = 10**(model_log_wave)

    def build_model(self):
        """Build the model"""
        input_size = len(self.settings['bands']) * 2
        if self.settings['input_redshift']:
            input_size += 1

        if self.settings['encode_block'] == 'conv1d':
            encode_block = Conv1dBlock
        elif self.settings['encode_block'] == 'residual':
            encode_block = ResidualBlock
        else:
            raise Exception(f"Unknown block {self.settings['encode_block']}.")

        # Encoder architecture.  We start with an input of size input_size x
        # time_window We apply a series of convolutional layers with increasing
        # dilation rates, followed by global max pooling.
        encode_layers = []
        last_size = input_size
        for layer_size, dilation in zip(self.settings['encode_conv_architecture'],
                                        self.settings['encode_conv_dilations']):
            encode_layers.append(encode_block(last_size, layer_size, dilation))
            last_size = layer_size

        self.encode_layers = nn.Sequential(*encode_layers)

        # Fully connected layers for the encoder following the convolution blocks.
        # These are Conv1D layers with a kernel size of 1 that mix within the time
        # indexes.
        encode_fc_layers = []
        for layer_size in self.settings['encode_fc_architecture']:
            encode_fc_layers.append(nn.Conv1d(last_size, layer_size, 1))
            encode_fc_layers.append(nn.ReLU())
            last_size = layer_size

        self.encode_fc_layers = nn.Sequential(*encode_fc_layers)

        # Time-indexing layer.
        self.encode_time_layer = nn.Conv1d(last_size, 1, 1)

        # Latent space layers
        self.encode_pool = GlobalMaxPoolingTime()
        self.encode_mu_layer = nn.Linear(last_size, self.settings['latent_size'] + 2)
        self.encode_logvar_layer = nn.Linear(last_size, self.settings['latent_size'] + 2)

        # Decoder layers
        decode_layers = []
        last_size = self.settings['latent_size'] + 1
        for layer_size in self.settings['decode_architecture']:
            decode_layers.append(nn.Linear(last_size, layer_size))
            decode_layers.append(nn.Tanh())
            last_size = layer_size

        self.decode_layers = nn.Sequential(*decode_layers)
        self.decode_output = nn.Linear(last_size, self.settings['spectrum_bins'])

    def get_data_loader(self, dataset, augment=False, **kwargs):
        """Get a PyTorch DataLoader for a dataset of light curves"""
        if augment:
            # Reset the augmentation seed so that the augmentations are reproducible
            dataset = AugmentedDataset(dataset, self.settings)

        return torch.utils.data.DataLoader(
            dataset,
            batch_size=self.settings['batch_size'],
            collate_fn=list,
            num_workers=self.threads if augment else 0,
            pin_memory=(self.device == 'cuda'),
            **kwargs,
        )

    def _build_grid(self, light_curves):
        """Build the input grid for a batch of preprocessed light curves."""
        grid = np.zeros((len(light_curves), len(self.settings['bands']) * 2 + int(self.settings['input_redshift']),
                         self.settings['time_window']), dtype=np.float32)
        for idx, lc in enumerate(light_curves):
            grid[idx] = lc.meta['parsnip_grid']
        return torch.from_numpy(grid)

    def encode(self, input_data):
        """Predict the latent variables for a set of light curves"""
        e = input_data

        # Apply the convolutional blocks.
        e = self.encode_layers(e)

        # Apply the fully connected layers
        e = self.encode_fc_layers(e)

        # Reduce to a single value per time bin, then softmax for the time weights
        time_weights = self.encode_time_layer(e)
        time_weights = F.softmax(time_weights, dim=-1)

        e = self.encode_pool(e * time_weights)

        encoding_mu = self.encode_mu_layer(e)
        encoding_logvar = self.encode_logvar_layer(e)

        # Prevent crazy values
        encoding_logvar = torch.clamp(encoding_logvar, None, 5.)

        return encoding_mu, encoding_logvar

    def decode_spectra(self, encoding, phases, color, amplitude=None):
        """Decode a latent encoding into a spectral time series"""
        scale_phases = phases / (self.settings['time_window'] // 2)

        repeat_encoding = encoding[:, None, :].expand((-1, scale_phases.shape[1], -1))
        stack_encoding = torch.cat([repeat_encoding, scale_phases[:, :, None]], 2)

        # Apply intrinsic decoder
        model_spectra = self.decode_layers(stack_encoding)
        model_spectra = F.softplus(self.decode_output(model_spectra))

        # Apply colors
        apply_colors = 10**(-0.4 * color[:, None] * self.color_law[None, :])
        model_spectra = model_spectra * apply_colors[:, None, :]

        # Apply amplitudes
        if amplitude is not None:
            model_spectra = model_spectra * amplitude[:, None, None]

        return model_spectra

    def loss_function(self, result, return_components=False, return_individual=False):
        """Compute the loss function for a set of light curves"""
        flux, fluxerr, weight, model_flux = (result['flux'], result['fluxerr'],
                                             result['weight'], result['model_flux'])

        # Reconstruction likelihood
        nll = (0.5 * weight * (flux - model_flux)**2 / (fluxerr**2 + 1e-8)).sum(axis=1)

        # KL divergence
        mu, logvar = result['encoding_mu'], result['encoding_logvar']
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)

        if return_individual:
            return nll, kld
        if return_components:
            return torch.sum(nll), torch.sum(kld)
        return torch.sum(nll + kld)

    def score(self, dataset, rounds=1, return_components=False, sample=True):
        """Evaluate the loss function on a given dataset."""
        loader = self.get_data_loader(dataset, augment=False)

        self.eval()

        total_loss = 0
        total_count = 0

        with torch.no_grad():
            for round in range(rounds):
                for batch_lcs in loader:
                    result = self.forward(batch_lcs, sample=sample)
                    loss = self.loss_function(result, return_components)
                    total_loss += loss
                    total_count += len(batch_lcs)

        return total_loss / total_count

    def fit(self, dataset, max_epochs=1000, augment=True, test_dataset=None):
        """Fit the model to a dataset"""
        loader = self.get_data_loader(dataset, augment=augment, shuffle=True)

        while self.epoch < max_epochs:
            self.train()
            train_loss = 0
            train_count = 0

            with tqdm(loader, file=sys.stdout) as pbar:
                for batch_lcs in pbar:
                    self.optimizer.zero_grad()
                    result = self.forward(batch_lcs)
                    loss = self.loss_function(result)
                    loss.backward()
                    replace_nan_grads(self.parameters())
                    self.optimizer.step()

                    train_loss += loss.detach().cpu().item()
                    train_count += len(batch_lcs)

                    total_loss = train_loss / train_count
                    batch_loss = loss.detach().cpu().item() / len(batch_lcs)
                    pbar.set_postfix(total_loss=total_loss, batch_loss=batch_loss)

            if test_dataset is not None:
                test_loss = self.score(test_dataset)
            else:
                test_loss = 0.

            self.scheduler.step(train_loss)

            # Checkpoint and save the model
            self.save()

            current_lr = self.optimizer.param_groups[0]['lr']
            print(f'Epoch {self.epoch:4d}: train {train_loss / train_count:.4f}, test {test_loss:.4f}, lr {current_lr:.2e}')

            self.epoch += 1

            # Stop training once the learning rate has dropped far enough
            if current_lr < self.settings['min_learning_rate']:
                print("Learning rate dropped below minimum, stopping")
                break

    def save(self):
        """Save the model"""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        torch.save([self.settings, self.state_dict()], self.path)

    def predict_dataset(self, dataset, augment=False):
        """Generate predictions for a dataset, returned as an astropy Table."""
        predictions = []
        loader = self.get_data_loader(dataset, augment=augment)
        self.eval()
        with torch.no_grad():
            for batch_lcs in loader:
                mu, logvar = self.encode(self._build_grid(batch_lcs).to(self.device))
                mu = mu.cpu().numpy()
                for lc, lc_mu in zip(batch_lcs, mu):
                    predictions.append({'object_id': lc.meta['object_id'], **{f's{i+1}': v for i, v in enumerate(lc_mu[2:])}})
        return astropy.table.Table(predictions)


def load_model(path=None, device='cuda', threads=8):
    """Load a ParSNIP model.

    Parameters
    ----------
    path : str, optional
        Path to the model on disk, or name of a model. If not specified, the
        default_model specified in settings.py is loaded.
    device : str, optional
        Torch device to load the model to, by default 'cuda'
    threads : int, optional
        Number of threads to use, by default 8

    Returns
    -------
    `~ParsnipModel`
        Loaded model
    """
    if path is None:
        path = default_model

    # Figure out if we were given a path or a model name. If we were given a model name,
    # load it from the built-in models.
    if '/' not in path and '.' not in path:
        path = os.path.join(os.path.dirname(__file__), 'models', f'{path}.pt')

    settings, state_dict = torch.load(path, device)

    # Instantiate the model
    model = ParsnipModel(path, settings['bands'], device=device, threads=threads,
                         settings=settings)
    model.load_state_dict(state_dict)

    return model
