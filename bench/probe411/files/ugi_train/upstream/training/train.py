import os
import random

import footsteps
import torch
import torch.nn.functional as F

import icon_registration as icon
import icon_registration.network_wrappers as network_wrappers
import icon_registration.networks as networks
from icon_registration import config

from unigradicon import make_network

input_shape = [1, 1, 175, 175, 175]

BATCH_SIZE = 4
GPUS = 4
device = torch.device("cuda:0")


class Dataset:
    """One training collection: a list of pre-processed volumes on the host and an
    optional list of per-volume masks. Volumes are pre-resampled to 175^3 and
    intensity-normalised to [0, 1] by the prepare_* scripts."""

    def __init__(self, name, path, modality, with_mask=False, weight=1.0, intra_patient=False):
        self.name = name
        self.modality = modality
        self.weight = weight
        self.intra_patient = intra_patient
        print(f"Loading {name} from {path}")
        blob = torch.load(path)
        self.images = blob["images"]
        self.masks = blob.get("masks") if with_mask else None
        self.pairs = blob.get("pairs")
        print(f"  {len(self.images)} volumes")

    def __len__(self):
        return len(self.images)

    def get_pair(self):
        if self.intra_patient and self.pairs is not None:
            i, j = random.choice(self.pairs)
        else:
            i, j = random.sample(range(len(self.images)), 2)
        a = self.images[i]
        b = self.images[j]
        if self.masks is not None:
            a = a * self.masks[i]
            b = b * self.masks[j]
        return a, b


def augment(image_A, image_B):
    """Random affine augmentation applied identically-distributed (but independently)
    to both halves of the batch."""
    identity_list = []
    for i in range(image_A.shape[0]):
        identity = torch.tensor([[[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]], device=image_A.device)
        idxs = set((0, 1, 2))
        for j in range(3):
            k = random.choice(list(idxs))
            idxs.remove(k)
            identity[0, j, k] = 1
        identity = identity * (torch.randint_like(identity, 0, 2, device=image_A.device) * 2 - 1)
        identity_list.append(identity)

    identity = torch.cat(identity_list)

    noise = torch.randn((image_A.shape[0], 3, 4), device=image_A.device)

    forward = identity + 0.05 * noise

    grid_shape = list(image_A.shape)
    grid_shape[1] = 3
    forward_grid = F.affine_grid(forward, grid_shape)

    warped_A = F.grid_sample(image_A, forward_grid, padding_mode="border")

    noise = torch.randn((image_A.shape[0], 3, 4), device=image_A.device)
    forward = identity + 0.05 * noise

    forward_grid = F.affine_grid(forward, grid_shape)
    warped_B = F.grid_sample(image_B, forward_grid, padding_mode="border")

    return warped_A, warped_B


def make_batch(datasets, weights):
    dataset = random.choices(datasets, weights=weights, k=1)[0]
    pairs = [dataset.get_pair() for _ in range(BATCH_SIZE * GPUS)]
    image_A = torch.stack([p[0] for p in pairs]).cuda()
    image_B = torch.stack([p[1] for p in pairs]).cuda()
    if image_A.dim() == 4:
        image_A = image_A[:, None]
        image_B = image_B[:, None]
    image_A, image_B = augment(image_A, image_B)
    return image_A, image_B


def train_two_stage(input_shape, datasets, weights, GPUS, ITERATIONS_PER_STEP):

    net = make_network(input_shape, include_last_step=False)

    if GPUS == 1:
        net_par = net.cuda()
    else:
        net_par = torch.nn.DataParallel(net).cuda()
    optimizer = torch.optim.Adam(net_par.parameters(), lr=0.00005)

    net_par.train()

    # Step 1: coarse network at half resolution, three levels of TwoStepRegistration
    icon.train_batchfunction(net_par, optimizer, lambda: make_batch(datasets, weights),
                             unwrapped_net=net, steps=ITERATIONS_PER_STEP)

    torch.save(
        net.regis_net.state_dict(),
        footsteps.output_dir + "Step_1_final.trch",
    )

    net_2 = make_network(input_shape, include_last_step=True)

    net_2.regis_net.netPhi.load_state_dict(net.regis_net.state_dict())

    # Free the GPU memory held by the first-stage model before building the second.
    del net
    del net_par
    del optimizer
    torch.cuda.empty_cache()

    if GPUS == 1:
        net_2_par = net_2.cuda()
    else:
        net_2_par = torch.nn.DataParallel(net_2).to(device)
    optimizer = torch.optim.Adam(net_2_par.parameters(), lr=0.00005)

    net_2_par.train()

    # We're being weird by training two networks in one script. This hack keeps
    # the second training from overwriting the outputs of the first.
    footsteps.output_dir_impl = footsteps.output_dir + "2nd_step/"
    os.makedirs(footsteps.output_dir)

    icon.train_batchfunction(net_2_par, optimizer, lambda: make_batch(datasets, weights),
                             unwrapped_net=net_2, steps=ITERATIONS_PER_STEP)

    torch.save(
        net_2.regis_net.state_dict(),
        footsteps.output_dir + "Step_2_final.trch",
    )


if __name__ == "__main__":
    footsteps.initialize(output_root="results/")

    torch.backends.cudnn.benchmark = True

    print("Visible GPUs:", os.environ.get("CUDA_VISIBLE_DEVICES", "all"))

    datasets = [
        Dataset("OAI knee MRI", "/playpen-raid2/Data/oai/train_imgs.trch", "mri", weight=1.0),
        Dataset("HCP brain T1/T2", "/playpen-raid2/Data/hcp/brain_train.trch", "mri", with_mask=True, weight=1.0),
        Dataset("COPDGene lung CT", "/playpen-raid2/Data/copd/lungs_train.trch", "ct", with_mask=True,
                weight=1.0, intra_patient=True),
        Dataset("Abdomen1k CT", "/playpen-raid2/Data/abdomen1k/train.trch", "ct", weight=1.0),
    ]
    weights = [d.weight for d in datasets]

    train_two_stage(input_shape, datasets, weights, GPUS, ITERATIONS_PER_STEP=50000)
