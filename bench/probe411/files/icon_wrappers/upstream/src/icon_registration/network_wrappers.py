import torch
import torch.nn.functional as F

from icon_registration import config
from icon_registration.registration_module import RegistrationModule


class DisplacementField(RegistrationModule):
    """
    Wrap an inner neural network 'net' that returns a tensor of displacements
    [B x N x H x W (x D)], into a RegistrationModule that returns a function that
    transforms a tensor of coordinates
    """

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, image_A, image_B):
        tensor_of_displacements = self.net(image_A, image_B)
        displacement_field = self.as_function(tensor_of_displacements)

        def transform(coordinates):
            if hasattr(coordinates, "isIdentity") and coordinates.shape == tensor_of_displacements.shape:
                return coordinates + tensor_of_displacements
            return coordinates + displacement_field(coordinates)

        return transform


class VelocityField(RegistrationModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.n_steps = 256

    def forward(self, image_A, image_B):
        velocity_field = self.net(image_A, image_B)
        velocityfield_delta = velocity_field / self.n_steps

        for _ in range(8):
            velocityfield_delta = velocityfield_delta + self.as_function(
                velocityfield_delta)(velocityfield_delta + self.identity_map)

        def transform(coordinate_tensor):
            coordinate_tensor = coordinate_tensor + self.as_function(velocityfield_delta)(coordinate_tensor)
            return coordinate_tensor

        return transform


def multiply_matrix_vectorfield(matrix, vectorfield):
    dimension = len(vectorfield.shape) - 2
    if dimension == 2:
        batch_matrix_multiply = "ijkl,imj->imkl"
    else:
        batch_matrix_multiply = "ijkln,imj->imkln"
    return torch.einsum(batch_matrix_multiply, vectorfield, matrix)


class AffineFromMatrix(RegistrationModule):
    """
    Wrap an inner network that returns an affine matrix [B x N+1 x N+1]
    into a RegistrationModule.
    """

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, image_A, image_B):
        matrix_phi = self.net(image_A, image_B)

        def transform(tensor_of_coordinates):
            shape = list(tensor_of_coordinates.shape)
            shape[1] = 1
            coordinates_homogeneous = torch.cat(
                [
                    tensor_of_coordinates,
                    torch.ones(shape, device=tensor_of_coordinates.device),
                ],
                axis=1,
            )
            return multiply_matrix_vectorfield(matrix_phi, coordinates_homogeneous)[:, :-1]

        return transform


class RandomShift(RegistrationModule):
    def __init__(self, stddev):
        super().__init__()
        self.stddev = stddev

    def forward(self, image_A, image_B):
        shift_shape = (
            image_A.shape[0],
            len(image_A.shape) - 2,
            *(1 for _ in image_A.shape[2:]),
        )
        shift = self.stddev * torch.randn(shift_shape, device=image_A.device)
        return lambda input_: input_ + shift


class TwoStepRegistration(RegistrationModule):
    """Combine two RegistrationModules.

    First netPhi is called on the input images, then image_A is warped with
    the resulting field, and then netPsi is called on warped A and image_B
    in order to find a residual warping. Finally, the composition of the two
    transforms is returned.
    """

    def __init__(self, netPhi, netPsi):
        super().__init__()
        self.netPhi = netPhi
        self.netPsi = netPsi

    def forward(self, image_A, image_B):
        phi = self.netPhi(image_A, image_B)
        psi = self.netPsi(
            self.as_function(image_A)(phi(self.identity_map)),
            image_B
        )
        return lambda tensor_of_coordinates: phi(psi(tensor_of_coordinates))


class DownsampleRegistration(RegistrationModule):
    """
    Perform registration using the wrapped RegistrationModule `net`
    at half input resolution.
    """

    def __init__(self, net, dimension):
        super().__init__()
        self.net = net
        if dimension == 2:
            self.avg_pool = F.avg_pool2d
            self.interpolate_mode = "bilinear"
        else:
            self.avg_pool = F.avg_pool3d
            self.interpolate_mode = "trilinear"
        self.dimension = dimension
        # This member variable is read by assign_identity_map when
        # walking the network tree and assigning identity_maps
        # to know that all children of this module operate at a lower
        # resolution.
        self.downscale_factor = 2

    def forward(self, image_A, image_B):

        image_A = self.avg_pool(image_A, 2, ceil_mode=True)
        image_B = self.avg_pool(image_B, 2, ceil_mode=True)
        return self.net(image_A, image_B)


class Concatenate(torch.nn.Module):
    def __init__(self, netPhi, netPsi):
        super().__init__()
        self.netPhi = netPhi
        self.netPsi = netPsi

    def forward(self, x, y):
        return torch.cat([self.netPhi(x, y), self.netPsi(x, y)], axis=1)


def make_ddf_from_icon_transform(transform, shape):
    """Compute A deformation field compatible with monai's Warp
    using an ICON transform. The assosciated ICON identity_map is also required
    """
    field_0_1 = transform(identity_map(shape).to(config.device))
    network_shape_list = list(shape[2:])
    scale = torch.Tensor(network_shape_list).to(field_0_1.device)

    for _ in network_shape_list:
        scale = scale[:, None]
    scale = scale[None, :]
    field_spacing_1 = scale * field_0_1
    return field_spacing_1


def identity_map(sz, isTorch=True):
    dim = len(sz) - 2
    mesh = torch.meshgrid(*[torch.linspace(0, 1, s) for s in sz[2:]], indexing="ij")
    id = torch.stack(mesh)[None].expand(sz[0], *([dim] + list(sz[2:])))
    return id.float()


def adjust_batch_size(model, size: int):
    """
    Shortcut method to change the batch size of the identity_map of a network.

    :param model: RegistrationModule
    :param size: new batch size
    """
    shape = model.input_shape
    shape[0] = size
    model.assign_identity_map(shape)
