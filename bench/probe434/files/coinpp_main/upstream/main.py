import argparse
import helpers
import os
import pprint
import torch
import wandb
from coinpp.patching import Patcher
from coinpp.training import Trainer
from pathlib import Path


def add_arguments(parser):
    """Model, training and wandb arguments. Note that we use integers for boolean
    arguments due to compatibility issues with wandb.
    """
    # Model arguments
    parser.add_argument(
        "--num_layers", help="Number of layers in base network.", type=int, default=5
    )

    parser.add_argument(
        "--dim_hidden",
        help="Dimension of hidden layers of base network.",
        type=int,
        default=32,
    )

    parser.add_argument(
        "--w0", help="w0 parameter from SIREN.", type=float, default=30.0
    )

    parser.add_argument(
        "--modulate_scale",
        help="Whether to modulate scale.",
        type=int,
        default=0,
    )

    parser.add_argument(
        "--modulate_shift",
        help="Whether to modulate shift.",
        type=int,
        default=1,
    )

    parser.add_argument(
        "--use_latent",
        help="Whether to use latent vector.",
        type=int,
        default=1,
    )

    parser.add_argument(
        "--latent_dim",
        help="Dimension of the latent vector mapped to modulations. If use_latent is 0, this argument will be ignored.",
        type=int,
        default=64,
    )

    parser.add_argument(
        "--modulation_net_dim_hidden",
        help="Number of hidden dimensions of modulation network.",
        type=int,
        default=64,
    )

    parser.add_argument(
        "--modulation_net_num_layers",
        help="Number of layers in modulation network. If this is set to 1 will correspond to a linear layer.",
        type=int,
        default=1,
    )

    # Training arguments
    parser.add_argument(
        "--seed",
        help="Random seed. If set to -1, seed is chosen at random.",
        type=int,
        default=-1,
    )

    parser.add_argument(
        "--outer_lr", help="Learning rate for the outer loop.", type=float, default=3e-6
    )

    parser.add_argument(
        "--inner_lr", help="Learning rate for the inner loop.", type=float, default=1e-2
    )

    parser.add_argument(
        "--inner_steps", help="Number of inner loop steps.", type=int, default=3
    )

    parser.add_argument(
        "--batch_size", help="Batch size.", type=int, default=64
    )

    parser.add_argument(
        "--num_workers",
        help="Number of workers used by the data loaders.",
        type=int,
        default=4,
    )

    parser.add_argument(
        "--num_epochs",
        help="Number of epochs to train for.",
        type=int,
        default=500,
    )

    parser.add_argument(
        "--train_dataset",
        default="mnist",
        choices=(
            "mnist",
            "cifar10",
            "kodak",
            "fastmri",
            "era5",
            "vimeo90k",
            "librispeech",
        ),
    )

    parser.add_argument(
        "--test_dataset",
        default="mnist",
        choices=(
            "mnist",
            "cifar10",
            "kodak",
            "fastmri",
            "era5",
            "vimeo90k",
            "librispeech",
        ),
    )

    parser.add_argument(
        "--num_validation_points",
        help="Number of validation data points to use. If -1, will use all available points.",
        type=int,
        default=-1,
    )

    parser.add_argument(
        "--validate_every",
        help="Run validation every {validate_every} iterations.",
        type=int,
        default=2000,
    )

    parser.add_argument(
        "--validation_inner_steps",
        help="List of inner steps to use for validation.",
        nargs="+",
        type=int,
        default=[3],
    )

    parser.add_argument(
        "--patch_shape",
        help="Shape of patches to use during training. If set to [-1] will not apply patching.",
        nargs="+",
        type=int,
        default=[-1],
    )

    parser.add_argument(
        "--subsample_num_points",
        help="Number of coordinates to subsample during training. If -1, uses full datapoint/patch.",
        type=int,
        default=-1,
    )

    # Wandb arguments
    parser.add_argument(
        "--use_wandb",
        help="Whether to use wandb. If set to 0, will not use wandb.",
        type=int,
        default=0,
    )

    parser.add_argument(
        "--wandb_project_name",
        help="Name of wandb project.",
        type=str,
        default="coinpp",
    )

    parser.add_argument(
        "--wandb_entity",
        help="Wandb entity (user or organization name).",
        type=str,
        default=None,
    )

    parser.add_argument(
        "--wandb_job_type",
        help="Wandb job type. This is useful for grouping runs together.",
        type=str,
        default=None,
    )


def main(args):
    # Optionally set random seed
    if args.seed != -1:
        torch.manual_seed(args.seed)

    # Build datasets, converters and model
    train_dataset, test_dataset, converter = helpers.get_datasets_and_converter(args)
    model = helpers.get_model(args)

    print(model)
    print(args)

    # Optionally save model
    if args.use_wandb:
        wandb.config.update(
            {
                "num_params": helpers.count_parameters(model),
                "device_name": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
            },
            allow_val_change=True,
        )
        Path(wandb.run.dir).mkdir(parents=True, exist_ok=True)
        wandb.save(os.path.join(wandb.run.dir, "model.pt"))

    # Optionally build patcher
    if args.patch_shape != [-1]:
        patcher = Patcher(args.patch_shape)
    else:
        patcher = None

    # Optionally subsample points
    if args.subsample_num_points != -1:
        # Subsampling only works with patches
        assert args.patch_shape != [-1], "Subsampling is only supported together with patching."

    train_dataloader = torch.utils.data.DataLoader(
        train_dataset,
        shuffle=True,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        pin_memory=True,
    )

    trainer = Trainer(
        func_rep=model,
        converter=converter,
        args=args,
        train_dataset=train_dataset,
        test_dataset=test_dataset,
        train_dataloader=train_dataloader,
        patcher=patcher,
        model_path=os.path.join(wandb.run.dir, "model.pt") if args.use_wandb else "",
    )

    for epoch in range(args.num_epochs):
        print(f"\nEpoch {epoch + 1}:")
        trainer.train_epoch()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args()

    # Set up device. Training on a single GPU is assumed throughout.
    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    if args.use_wandb:
        # Initialize wandb experiment
        wandb.init(
            project=args.wandb_project_name,
            entity=args.wandb_entity,
            job_type=args.wandb_job_type,
            config=args,
        )

        # Save ENV variables
        with (Path(wandb.run.dir) / "env.txt").open("wt") as f:
            pprint.pprint(dict(os.environ), f)

        # Define path where model will be saved
        model_path = Path(wandb.run.dir) / "model.pt"

        # Update args with wandb config (necessary for sweeps)
        args = wandb.config

    main(args)
