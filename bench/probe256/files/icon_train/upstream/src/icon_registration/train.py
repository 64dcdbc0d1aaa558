import datetime
import os

import torch
import tqdm

import icon_registration.config as config
from .losses import ICONLoss, to_floats


def write_stats(writer, stats: ICONLoss, ite):
    for k, v in to_floats(stats)._asdict().items():
        writer.add_scalar(k, v, ite)


def _gpu_memory_gb():
    return torch.cuda.max_memory_allocated() / 1024 ** 3


def train_batchfunction(
    net,
    optimizer,
    make_batch,
    steps=100000,
    step_callback=(lambda net: None),
    unwrapped_net=None,
    use_amp=False,
    checkpoint_every=1000,
    clip_grad_norm=None,
):
    """A training function intended for long running experiments, with tensorboard logging
    and model checkpoints. Use for medical registration training.

    make_batch() must return (moving_image, fixed_image) already on config.device.
    With use_amp=True the forward pass runs under float16 autocast; the ICON loss terms
    (inverse consistency / gradient ICON) are still accumulated in float32.
    """
    import footsteps
    from torch.utils.tensorboard import SummaryWriter

    if unwrapped_net is None:
        unwrapped_net = net

    writer = SummaryWriter(
        footsteps.output_dir + "/" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"),
        flush_secs=30,
    )
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    for iteration in range(0, steps):
        optimizer.zero_grad()
        moving_image, fixed_image = make_batch()
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=config.amp_dtype):
            loss_object = net(moving_image, fixed_image)
        loss = torch.mean(loss_object.all_loss.float())
        scaler.scale(loss).backward()

        step_callback(unwrapped_net)

        if clip_grad_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(net.parameters(), clip_grad_norm)

        print(to_floats(loss_object))
        write_stats(writer, loss_object, iteration)
        scaler.step(optimizer)
        scaler.update()

        if iteration % 50 == 0:
            writer.add_scalar("gpu_peak_memory_gb", _gpu_memory_gb(), iteration)
            torch.cuda.reset_peak_memory_stats()

        if iteration % checkpoint_every == 0:
            torch.save(
                optimizer.state_dict(),
                footsteps.output_dir + "optimizer_weights_" + str(iteration),
            )
            torch.save(
                unwrapped_net.regis_net.state_dict(),
                footsteps.output_dir + "network_weights_" + str(iteration),
            )


def train_datasets(net, optimizer, d1, d2, epochs=400):
    """Train a network on a pair of dataloaders (used by the 2D examples/notebooks)."""
    batch_size = net.identity_map.shape[0]
    loss_history = []
    for epoch in tqdm.tqdm(range(epochs)):
        for A, B in list(zip(d1, d2)):
            if True:
                image_A = A[0].to(config.device)[:batch_size]
                image_B = B[0].to(config.device)[:batch_size]
                optimizer.zero_grad()
                loss_object = net(image_A, image_B)
                loss_object.all_loss.backward()
                optimizer.step()

            loss_history.append(to_floats(loss_object))
    return loss_history


def train_datasets_timed(net, optimizer, d1, d2, epochs=400):
    """Same as train_datasets but records wall-clock time per epoch (for the paper tables)."""
    import time

    history = []
    for epoch in range(epochs):
        start = time.perf_counter()
        losses = train_datasets(net, optimizer, d1, d2, epochs=1)
        if config.device.type == "cuda":
            torch.cuda.synchronize()
        history.append((time.perf_counter() - start, losses[-1]))
    return history


def save_checkpoint(net, optimizer, path, step=None):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    state = {
        "regis_net": net.regis_net.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": step,
    }
    torch.save(state, path)


def load_checkpoint(net, optimizer, path):
    state = torch.load(path, map_location="cpu")
    net.regis_net.load_state_dict(state["regis_net"])
    if optimizer is not None and "optimizer" in state:
        optimizer.load_state_dict(state["optimizer"])
    return state.get("step")
