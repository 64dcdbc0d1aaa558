import json
import os
import time
import copy

import h5py as h5
import numpy as np
import torch
import torch.nn as nn

from XMLHandler import XMLHandler
import consts as c


def get_device(gpu_idx=0):
    """Pick the GPU if there is one; sampling on CPU works but is ~50x slower."""
    if torch.cuda.is_available():
        dev = torch.device('cuda:%i' % gpu_idx)
        print("Using GPU: %s" % torch.cuda.get_device_name(dev))
    else:
        dev = torch.device('cpu')
        print("No GPU found, using CPU")
    return dev


def LoadJson(file_name):
    JSONPATH = os.path.join(file_name)
    return json.load(open(JSONPATH), parse_int=int)


def SaveJson(save_file, data):
    with open(save_file, 'w') as f:
        json.dump(data, f, indent=4)


def create_R_Z_image(device, dataset_num=1, scaled=True, shape=(1, 45, 16, 9)):

    if(dataset_num == 1):
        bins = XMLHandler("photon", "CaloChallenge/code/binning_dataset_1_photons.xml")
        r_vals = bins.r_edges[0]
        r_bins = np.array(r_vals[1:]) - np.array(r_vals[:-1])
        r_bins = r_bins / 2 + np.array(r_vals[:-1])
    elif(dataset_num == 2):
        r_bins = [0, 4.65, 9.3, 13.95, 18.6, 23.25, 27.9, 32.55, 37.2, 41.85]
    else:
        r_bins = [0, 2.325, 4.65, 6.975, 9.3, 11.625, 13.95, 16.275, 18.6, 20.925, 23.25, 25.575, 27.9, 30.225, 32.55, 34.875, 37.2, 39.525, 41.85]

    r_avgs = [(r_bins[i] + r_bins[i + 1]) / 2.0 for i in range(len(r_bins) - 1)]
    assert(len(r_avgs) == shape[-1])
    Z_image = torch.zeros(shape, device=device)
    R_image = torch.zeros(shape, device=device)
    for z in range(shape[0]):
        Z_image[z] = z

    for r in range(shape[-1]):
        R_image[:, :, r] = r_avgs[r]
    if(scaled):
        r_max = r_avgs[-1]
        z_max = shape[0]
        Z_image /= z_max
        R_image /= r_max

    return R_image, Z_image


def create_phi_image(device, shape=(1, 45, 16, 9)):

    n_phi = shape[-2]
    phi_bins = torch.linspace(0., 1., n_phi)
    phi_image = torch.zeros(shape, device=device)
    for i in range(n_phi):
        phi_image[:, i, :] = phi_bins[i]
    return phi_image


def split_data_np(data, frac=0.8):
    np.random.shuffle(data)
    split = int(frac * data.shape[0])
    train_data = data[:split]
    test_data = data[split:]
    return train_data, test_data


def ReverseNorm(voxels, e, shape=None, emax=1000., emin=1., max_deposit=2, logE=True, layerE=None, showerMap='log',
                dataset_num=2, orig_shape=False, ecut=0.):
    """Revert the transformations applied to the training set"""

    if(dataset_num > 3 or dataset_num < 0):
        print("Invalid dataset %i!" % dataset_num)
        exit(1)

    if(dataset_num == 1):
        bins = XMLHandler("photon", "CaloChallenge/code/binning_dataset_1_photons.xml")
    else:
        bins = None

    if(logE):
        energy = emin * (emax / emin)**e
    else:
        energy = emin + (emax - emin) * e

    alpha = 1e-6
    if('quantile' in showerMap and (np.min(voxels) < 0)):
        voxels = voxels
    if('logit' in showerMap):
        if('norm' in showerMap):
            voxels = (voxels * c.dataset_std[dataset_num]) + c.dataset_mean[dataset_num]
        exp = np.exp(voxels)
        x = exp / (1 + exp)
        data = (x - alpha) / (1 - 2 * alpha)
    elif('log' in showerMap):
        data = np.exp(voxels)
    else:
        data = voxels

    data = data * max_deposit * energy.reshape(-1, 1, 1, 1, 1)

    if(not orig_shape):
        data = data.reshape(shape)
    data[data < ecut] = 0.
    return data, energy


def DataLoader(file_name, shape=None, emax=1000., emin=1., nevts=-1, max_deposit=2, ecut=0, logE=True,
               showerMap='log-norm', nholdout=0, from_end=False, dataset_num=2, orig_shape=False, evt_start=0):

    with h5.File(file_name, "r") as h5f:
        # holdout events for testing
        if(nevts == -1 and nholdout > 0):
            nevts = -(nholdout)
        end = evt_start + int(nevts)
        if(from_end):
            evt_start = -int(nevts)
            end = None
        if(end == -1):
            end = None
        print("Event start, stop: ", evt_start, end)
        e = h5f['incident_energies'][evt_start:end].astype(np.float32) / 1000.0
        shower = h5f['showers'][evt_start:end].astype(np.float32) / 1000.0

    e = np.reshape(e, (-1, 1))

    shower_preprocessed, layerE_preprocessed = preprocess(shower, e, shape, showerMap, dataset_num=dataset_num,
                                                           orig_shape=orig_shape, ecut=ecut, max_deposit=max_deposit)

    if logE:
        E_preprocessed = np.log10(e / emin) / np.log10(emax / emin)
    else:
        E_preprocessed = (e - emin) / (emax - emin)

    return shower_preprocessed, E_preprocessed


def preprocess(data, e, shape, showerMap, dataset_num=2, orig_shape=False, ecut=0, max_deposit=2):
    if(dataset_num == 1):
        bins = XMLHandler("photon", "CaloChallenge/code/binning_dataset_1_photons.xml")
    else:
        bins = None

    if(not orig_shape):
        data = data.reshape(shape)

    data = np.reshape(data, (data.shape[0], -1))
    data = data / (max_deposit * e)
    data = np.reshape(data, (data.shape[0], *shape[1:]) if not orig_shape else data.shape)
    layerE = None

    alpha = 1e-6
    if('logit' in showerMap):
        x = alpha + (1 - 2 * alpha) * data
        data = np.ma.log(x / (1 - x)).filled(c.logit_zero)
        if('norm' in showerMap):
            data = (data - c.dataset_mean[dataset_num]) / c.dataset_std[dataset_num]
    elif('log' in showerMap):
        data = np.ma.log(data).filled(c.log_zero)

    return data.astype(np.float32), layerE


class EarlyStopper:
    def __init__(self, patience=1, min_delta=0, mode='loss'):
        self.patience = patience
        self.min_delta = min_delta
        self.counter = 0
        self.mode = mode
        self.min_validation_loss = np.inf

    def early_stop(self, var):
        if(self.mode == 'val_loss'):
            validation_loss = var
            if validation_loss < self.min_validation_loss:
                self.min_validation_loss = validation_loss
                self.counter = 0
            elif validation_loss > (self.min_validation_loss + self.min_delta):
                self.counter += 1
                if self.counter >= self.patience:
                    return True
            return False
        elif(self.mode == 'diff'):
            if(var < 0):
                self.counter = 0
            elif(var > self.min_delta):
                self.counter += 1
                if(self.counter >= self.patience):
                    return True
            return False


class NNConverter(nn.Module):
    """Convert irregular geometry to regular one, initialized with regular geometric conversion,
    but uses trainable linear map"""
    def __init__(self, geomconverter=None, bins=None, hidden_size=32):
        super().__init__()
        if(geomconverter is None):
            geomconverter = GeomConverter(bins)

        self.gc = geomconverter

        self.encs = nn.ModuleList([])
        self.decs = nn.ModuleList([])
        eps = 1e-5
        for i in range(len(self.gc.weight_mats)):

            rdim_in = len(self.gc.lay_r_edges[i]) - 1

            lay = nn.Sequential(*[nn.Linear(rdim_in, hidden_size), nn.GELU(),
                                  nn.Linear(hidden_size, self.gc.dim_r_out)])

            self.encs.append(lay)

            inv_lay = nn.Sequential(*[nn.Linear(self.gc.dim_r_out, hidden_size), nn.GELU(),
                                      nn.Linear(hidden_size, rdim_in)])

            self.decs.append(inv_lay)

    def enc(self, x):
        n_shower = x.shape[0]
        x = self.gc.reshape(x)

        out = torch.zeros((n_shower, 1, len(self.encs), self.gc.num_alpha[0], self.gc.dim_r_out), device=x[0].device)
        for i in range(len(x)):
            o = self.encs[i](x[i])
            out[:, 0, i] = o
        return out

    def dec(self, x):
        out = []
        x = torch.squeeze(x, dim=1)
        for i in range(len(self.decs)):
            o = self.decs[i](x[:, i])
            out.append(o)
        out = self.gc.unreshape(out)
        return out


def print_mem(tag=""):
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        print("%s: allocated %.2f GB, reserved %.2f GB" % (tag, torch.cuda.memory_allocated() / 1e9,
                                                          torch.cuda.memory_reserved() / 1e9), flush=True)
