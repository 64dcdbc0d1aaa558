"""Fan-beam geometry for the synthesised metal-artifact data (DeepLesion, 416x416).

All operators are ODL operators wrapped as torch modules, so the Radon inverse
layer (RIL) can be trained end to end together with the sinogram and image
enhancement networks.
"""
import numpy as np
import odl
from odl.contrib import torch as odl_torch


# geometry used by the data-generation MATLAB scripts (see the paper, Sec. 4.1)
param = dict(
    nx_h=416,           # image size (pixels)
    ny_h=416,
    sx=416 * 0.03,      # physical image extent (cm)
    sy=416 * 0.03,
    nProj=640,          # number of projection views over 2*pi
    nu_h=641,           # number of detector bins
    dde=1075,           # source-to-detector distance (in 0.03 cm units)
    dso=1075 - 594,     # source-to-origin distance
    u_water=0.192,      # water attenuation at 70 keV (1/cm)
)


def build_gemotry(param):
    reco_space = odl.uniform_discr(
        min_pt=[-param['sx'] / 2.0, -param['sy'] / 2.0],
        max_pt=[param['sx'] / 2.0, param['sy'] / 2.0],
        shape=[param['nx_h'], param['ny_h']],
        dtype='float32')

    angle_partition = odl.uniform_partition(0, 2 * np.pi, param['nProj'])

    # detector: flat panel, bins spaced so that the fan covers the image
    det_len = 2 * np.arctan(param['sx'] / 2.0 / (param['dso'] * 0.03)) * param['dde'] * 0.03 * 1.1
    detector_partition = odl.uniform_partition(-det_len / 2.0, det_len / 2.0, param['nu_h'])

    geometry = odl.tomo.FanBeamGeometry(angle_partition, detector_partition,
                                        src_radius=param['dso'] * 0.03,
                                        det_radius=(param['dde'] - param['dso']) * 0.03)

    ray_trafo_hh = odl.tomo.RayTransform(reco_space, geometry, impl='astra_cuda')
    return ray_trafo_hh


def build_ops(param=param):
    ray_trafo = build_gemotry(param)
    fbp = odl.tomo.fbp_op(ray_trafo, filter_type='Ram-Lak', frequency_scaling=1.0)
    op_modfp = odl_torch.OperatorModule(ray_trafo)
    op_modpT = odl_torch.OperatorModule(ray_trafo.adjoint)
    op_modfbp = odl_torch.OperatorModule(fbp)
    return op_modfp, op_modpT, op_modfbp


def build_parallel_gemotry(param, num_angles=None):
    """Parallel-beam variant used for the ablation in the supplementary material."""
    reco_space = odl.uniform_discr(
        min_pt=[-param['sx'] / 2.0, -param['sy'] / 2.0],
        max_pt=[param['sx'] / 2.0, param['sy'] / 2.0],
        shape=[param['nx_h'], param['ny_h']],
        dtype='float32')
    geometry = odl.tomo.parallel_beam_geometry(reco_space, num_angles=num_angles or param['nProj'])
    return odl.tomo.RayTransform(reco_space, geometry)


def metal_trace(ray_trafo, metal_mask, threshold=0.0):
    """Binary sinogram mask of the rays that intersect the metal (forward projection > threshold)."""
    proj = ray_trafo(ray_trafo.domain.element(metal_mask.astype(np.float32)))
    return (proj.asarray() > threshold).astype(np.float32)


def normalize_sinogram(sino, u_water=param['u_water']):
    """Sinograms are generated in units of 1/cm * cm; divide by u_water like the images."""
    return sino / u_water


if __name__ == '__main__':
    op_fp, op_pT, op_fbp = build_ops()
    phantom = odl.phantom.shepp_logan(op_fp.operator.domain, modified=True)
    sino = op_fp.operator(phantom)
    rec = op_fbp.operator(sino)
    print('sinogram shape:', sino.shape, 'recon shape:', rec.shape)
    print('relative error: {:.4f}'.format((rec - phantom).norm() / phantom.norm()))
