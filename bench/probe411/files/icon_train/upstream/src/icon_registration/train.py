import os
import random
from datetime import datetime

import footsteps
import numpy as np
import torch
import torch.utils.tensorboard
import tqdm

from .losses import ICONLoss, to_floats


def write_stats(writer, stats: ICONLoss, ite, prefix=""):
    for k, v in to_floats(stats)._asdict().items():
        writer.add_scalar(f"{prefix}{k}", v, ite)


def train_batchfunction(
    net,
    optimizer,
    make_batch,
    steps=100000,
    step_callback=(lambda net: None),
    unwrapped_net=None,
):
    """A training function intended for long running experiments, with tensorboard logging
    and model checkpoints. Use for medical registration training
    """
    import footsteps
    from torch.utils.tensorboard import SummaryWriter

    if unwrapped_net is None:
        unwrapped_net = net

    loss_curve = []
    writer = SummaryWriter(
        footsteps.output_dir + "/" + datetime.now().strftime("%Y%m%d-%H%M%S"),
        flush_secs=30,
    )
    iteration = 0
    for iteration in range(0, steps):
        optimizer.zero_grad()
        moving_image, fixed_image = make_batch()
        loss_object = net(moving_image, fixed_image)
        loss = torch.mean(loss_object.all_loss)
        loss.backward()

        step_callback(unwrapped_net)

        print(to_floats(loss_object))
        write_stats(writer, loss_object, iteration, prefix="train/")
        writer.add_scalar(
            "train/gpu_memory_GB", torch.cuda.max_memory_allocated() / 1024 ** 3, iteration
        )
        optimizer.step()

        if iteration % 300 == 0:
            torch.save(
                optimizer.state_dict(),
                footsteps.output_dir + "checkpoints/optimizer_weights_" + str(iteration),
            )
            torch.save(
                unwrapped_net.regis_net.state_dict(),
                footsteps.output_dir + "checkpoints/network_weights_" + str(iteration),
            )
        if iteration % 300 == 0:
            visualize_registration_results(writer, unwrapped_net, moving_image, fixed_image, iteration)


def visualize_registration_results(writer, unwrapped_net, moving_image, fixed_image, iteration):
    with torch.no_grad():
        if len(moving_image.shape) == 5:
            mid = moving_image.shape[-1] // 2
            writer.add_images("moving", moving_image[:4, :, :, :, mid].cpu(), iteration)
            writer.add_images("fixed", fixed_image[:4, :, :, :, mid].cpu(), iteration)
            writer.add_images(
                "warped_moving",
                unwrapped_net.warped_image_A[:4, :1, :, :, mid].clamp(0, 1).cpu(),
                iteration,
            )
        else:
            writer.add_images("moving", moving_image[:4].cpu(), iteration)
            writer.add_images("fixed", fixed_image[:4].cpu(), iteration)
            writer.add_images(
                "warped_moving", unwrapped_net.warped_image_A[:4, :1].clamp(0, 1).cpu(), iteration
            )


def train_datasets(net, optimizer, d1, d2, epochs=400):
    """A training function for quick experiments"""
    batch_size = net.identity_map.shape[0]
    loss_history = []
    for epoch in tqdm.tqdm(range(epochs)):
        for A, B in list(zip(d1, d2)):
            if True:
                image_A = A[0].to(net.identity_map.device)
                image_B = B[0].to(net.identity_map.device)
                if image_A.size()[0] != batch_size:
                    continue
                optimizer.zero_grad()
                loss_object = net(image_A, image_B)

                loss_object.all_loss.backward()
                optimizer.step()

            loss_history.append(to_floats(loss_object))
    return loss_history


def make_dataloader_from_tensor(tensor, batch_size, shuffle=True):
    dataset = torch.utils.data.TensorDataset(tensor)
    return torch.utils.data.DataLoader(
        dataset, batch_size=batch_size, shuffle=shuffle, drop_last=True
    )


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
