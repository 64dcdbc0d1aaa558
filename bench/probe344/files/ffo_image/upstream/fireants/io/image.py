'''
Image containers.

`Image` wraps a SimpleITK image, moves its voxel array to a torch device and keeps the
torch <-> physical space transforms. `BatchedImages` stacks several `Image`s of the same size into
a batch for the registration classes.
'''
from typing import Any, Union, List, Optional
from time import time

import numpy as np
import SimpleITK as sitk
import torch
from torch.nn import functional as F

from fireants.types import devicetype
from fireants.utils.imageutils import integer_to_onehot
from fireants.utils.util import check_and_raise_cond, augment_filenames


class Image:
    '''
    `Image` is a class to store an image and its metadata.

    Args:
        itk_image: SimpleITK image object
        device: device to store the image on (default: 'cuda')
        is_segmentation: if True, the image is a label map and is converted to one-hot
        max_seg_label: maximum label value to keep when converting to one-hot
        background_seg_label: label treated as background
        seg_preprocessor: callable applied to the label array before one-hot conversion
        spacing, direction, origin, center: override the image geometry
    '''

    def __init__(self, itk_image: sitk.SimpleITK.Image, device: devicetype = 'cuda',
                 is_segmentation=False, max_seg_label=None,
                 background_seg_label=0, seg_preprocessor=lambda x: x,
                 spacing=None, direction=None, origin=None, center=None) -> None:
        self.itk_image = itk_image
        # check for segmentation parameters
        # if `is_segmentation` is False, then just treat this as a float image
        if not is_segmentation:
            self.array = torch.from_numpy(sitk.GetArrayFromImage(itk_image).astype(float)).to(device).float()
            self.array = self.array[None, None]  # TODO: Change it to support multichannel images, right now just batchify and add a dummy channel to it
            channels = itk_image.GetNumberOfComponentsPerPixel()
            self.channels = channels
            assert channels == 1, "Only single channel images supported"
        else:
            array = torch.from_numpy(sitk.GetArrayFromImage(itk_image).astype(int)).to(device).long()
            # preprocess segmentation if provided by user
            array = seg_preprocessor(array)
            if max_seg_label is not None:
                array[array > max_seg_label] = background_seg_label
            array = integer_to_onehot(array, background_label=background_seg_label,
                                      max_label=max_seg_label)[None]  # []
            self.array = array.float()
            self.channels = array.shape[1]
        # initialize metadata
        self.device = device
        # now for the metadata
        self.dims = self.array.ndim - 2
        if self.dims not in [2, 3]:
            raise NotImplementedError("Image class only supports 2D/3D images.")

        # custom spacing if not provided use simpleitk values
        spacing = np.array(itk_image.GetSpacing())[None] if spacing is None else np.array(spacing)[None]
        origin = np.array(itk_image.GetOrigin())[None] if origin is None else np.array(origin)[None]
        direction = np.array(itk_image.GetDirection()).reshape(self.dims, self.dims) if direction is None \
            else np.array(direction).reshape(self.dims, self.dims)
        if center is not None:
            print("Center location provided, recalibrating origin.")
            origin = center - np.matmul(direction, ((np.array(itk_image.GetSize()) * spacing / 2).squeeze())[:, None]).T

        px2phy = direction * spacing
        px2phy = np.concatenate([px2phy, origin.T], axis=1)
        px2phy = np.concatenate([px2phy, np.zeros((1, self.dims + 1))], axis=0)
        px2phy[-1, -1] = 1
        # generate mapping from torch to px
        torch2px = np.eye(self.dims + 1)
        scaleterm = (np.array(itk_image.GetSize()) - 1) * 0.5
        torch2px[:self.dims, :self.dims] = np.diag(scaleterm)
        torch2px[:self.dims, -1] = scaleterm
        # save the mapping from physical to torch and vice versa
        self.torch2phy = torch.from_numpy(np.matmul(px2phy, torch2px)).to(device).float().unsqueeze(0)
        self.phy2torch = torch.inverse(self.torch2phy[0]).float().unsqueeze(0)
        # also save intermediates just in case (as numpy arrays)
        self._torch2px = torch2px
        self._px2phy = px2phy
        self.device = device

    @classmethod
    def load_file(cls, image_path: str, sitk_dtype=sitk.sitkFloat32, *args, **kwargs) -> 'Image':
        itk_image = sitk.ReadImage(image_path, sitk_dtype)
        return cls(itk_image, *args, **kwargs)

    @property
    def shape(self):
        return self.array.shape

    def to(self, device):
        """Move the voxel array and transforms to another device (returns self)."""
        self.array = self.array.to(device)
        self.torch2phy = self.torch2phy.to(device)
        self.phy2torch = self.phy2torch.to(device)
        self.device = device
        return self

    def __del__(self):
        del self.itk_image
        del self.array
        del self.torch2phy
        del self.phy2torch


class BatchedImages:
    '''
    Class to store a batch of images.

    Args:
        images: list of `Image`s of identical size; all must live on the same device.
        optimize_memory: if True, the batch is concatenated lazily (on call) instead of up front.
    '''

    def __init__(self, images: Union[Image, List[Image]], optimize_memory: bool = True) -> None:
        if isinstance(images, Image):
            images = [images]
        self.images = images
        if len(self.images) == 0:
            raise ValueError("BatchedImages must have at least one image")
        for image in self.images:
            if not isinstance(image, Image):
                raise TypeError("All images must be of type Image")
        shapes = [x.array.shape for x in self.images]
        # check if all shapes are the same
        if not all([x == shapes[0] for x in shapes]):
            raise ValueError("All images must have the same shape")
        self.n_images = len(self.images)
        self.interpolate_mode = 'bilinear' if self.images[0] == 2 else 'trilinear'
        self.optimize_memory = optimize_memory
        self.batch_tensor = None if optimize_memory else torch.cat([x.array for x in self.images], dim=0)

    def __call__(self):
        # get batch of images
        if self.batch_tensor is not None:
            return self.batch_tensor
        return torch.cat([x.array for x in self.images], dim=0)

    @property
    def device(self):
        return self.images[0].device

    @property
    def dims(self):
        return self.images[0].dims

    def size(self):
        return self.n_images

    @property
    def shape(self):
        shape = self.images[0].shape
        shape = [self.n_images] + list(shape[1:])
        return shape

    def get_torch2phy(self):
        return torch.cat([x.torch2phy for x in self.images], dim=0)

    def get_phy2torch(self):
        return torch.cat([x.phy2torch for x in self.images], dim=0)


def load_batch(paths: List[str], device: devicetype = 'cuda', **kwargs) -> BatchedImages:
    """Convenience loader: read all paths as `Image`s on `device` and batch them."""
    t0 = time()
    images = [Image.load_file(p, device=device, **kwargs) for p in augment_filenames(paths)]
    batch = BatchedImages(images)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    print(f"Loaded {len(images)} images of shape {tuple(batch.shape[2:])} in {time() - t0:.2f}s")
    return batch


def save_warped(moved: torch.Tensor, reference: Image, path: str):
    """Write a warped tensor [1, 1, *spatial] with the geometry of `reference`."""
    arr = moved.detach().float().cpu().numpy()[0, 0]
    out = sitk.GetImageFromArray(arr)
    out.CopyInformation(reference.itk_image)
    sitk.WriteImage(out, path)
