import logging
import os
import argparse

import pandas as pd
import torch
from lightning.pytorch.loggers import WandbLogger

from galaxy_datasets import demo_rings
from galaxy_datasets.pytorch.galaxy_datamodule import GalaxyDataModule

from zoobot.pytorch.training import finetune
from zoobot.pytorch.predictions import predict_on_catalog


"""
Example: finetune a pretrained Zoobot encoder to find ring galaxies.

The demo_rings dataset is a small (~1000 galaxies) set of DECaLS images labelled as ring / not ring.
This runs in a few minutes on a single GPU, or ~1 hour on a laptop CPU.

Usage:
    python finetune_binary_classification.py --save-dir results/finetune_rings --wandb
"""


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--save-dir', dest='save_dir', type=str, default='results/pytorch/finetune/finetune_binary_classification')
    parser.add_argument('--data-dir', dest='data_dir', type=str, default='data/demo_rings')
    parser.add_argument('--encoder', dest='encoder', type=str, default='hf_hub:mwalmsley/zoobot-encoder-convnext_nano',
                        help='Pretrained encoder to load from HuggingFace')
    parser.add_argument('--n-blocks', dest='n_blocks', type=int, default=0,
                        help='How many encoder blocks to unfreeze (0 = linear probe)')
    parser.add_argument('--epochs', dest='max_epochs', type=int, default=100)
    parser.add_argument('--lr', dest='learning_rate', type=float, default=1e-4)
    parser.add_argument('--color', default=False, action='store_true')
    parser.add_argument('--wandb', default=False, action='store_true')
    parser.add_argument('--debug', default=False, action='store_true')
    return parser.parse_args()


if __name__ == '__main__':

    logging.basicConfig(level=logging.INFO)

    args = parse_args()

    save_dir = args.save_dir
    data_dir = args.data_dir
    os.makedirs(save_dir, exist_ok=True)

    # load in catalogs of images and labels to finetune on
    # each catalog should be a dataframe with columns of "id_str", "file_loc", and any labels
    # here I'm using galaxy-datasets to download some premade data - check it out for examples
    train_and_val_catalog, _ = demo_rings(root=data_dir, download=True, train=True)
    test_catalog, _ = demo_rings(root=data_dir, download=True, train=False)
    logging.info('Train/val galaxies: {}, test galaxies: {}'.format(len(train_and_val_catalog), len(test_catalog)))

    # wondering about "label_cols"?
    # This is a list of catalog columns which should be used as labels
    # Here:
    # TODO should use Galaxy Zoo 'ring' labels instead
    label_cols = ['ring']
    # For binary classification, the label column should have binary (0 or 1) labels for your classes
    # To support more complicated labels, Zoobot expects a list of columns. A list with one element works fine.

    if args.debug:
        # use a small subset of the data for a quick run-through
        train_and_val_catalog = train_and_val_catalog.sample(256, random_state=42)
        test_catalog = test_catalog.sample(64, random_state=42)
        args.max_epochs = 2

    # sensible defaults for a laptop
    accelerator = 'cpu'
    devices = 1
    batch_size = 32
    num_workers = 4
    # bigger batches and more dataloader workers when a GPU is available
    if torch.cuda.is_available():
        accelerator = 'gpu'
        batch_size = 128
        num_workers = min(os.cpu_count() or 8, 12)
        logging.info('Using GPU: {}'.format(torch.cuda.get_device_name(0)))

    datamodule = GalaxyDataModule(
        label_cols=label_cols,
        catalog=train_and_val_catalog,  # very small, as a demo
        batch_size=batch_size,  # increase for faster training, decrease to avoid running out of memory
        num_workers=num_workers,
        greyscale=not args.color,
        resize_after_crop=224,  # the size of the images expected by the pretrained encoder
    )
    # datamodule.setup()
    # for images, labels in datamodule.train_dataloader():
    #   print(images.shape)
    #   print(labels.shape)
    #   exit()

    model = finetune.FinetuneableZoobotClassifier(
        name=args.encoder,
        num_classes=2,
        n_blocks=args.n_blocks,  # how many layers deep to FT
        learning_rate=args.learning_rate,
        label_col=label_cols[0],
    )

    if args.wandb:
        logger = WandbLogger(project='finetune', name='zoobot_on_rings')
    else:
        logger = None

    trainer = finetune.get_trainer(
        save_dir,
        accelerator=accelerator,
        devices=devices,
        logger=logger,
        max_epochs=args.max_epochs,
    )
    trainer.fit(model, datamodule)

    # can now use this model or saved checkpoint to make predictions on new data. Well done!

    # pretending we want to load from scratch:
    best_checkpoint = trainer.checkpoint_callback.best_model_path
    finetuned_model = finetune.FinetuneableZoobotClassifier.load_from_checkpoint(best_checkpoint)

    predict_on_catalog.predict(
        test_catalog,
        finetuned_model,
        n_samples=1,
        label_cols=['not_ring', 'ring'],  # name the output columns
        save_loc=os.path.join(save_dir, 'finetuned_predictions.csv'),
        trainer_kwargs={'accelerator': accelerator, 'devices': devices},
        datamodule_kwargs={'batch_size': batch_size, 'num_workers': num_workers, 'greyscale': not args.color},
    )
    logging.info('Predictions saved to {}'.format(os.path.join(save_dir, 'finetuned_predictions.csv')))

    # quick summary of test performance
    preds = pd.read_csv(os.path.join(save_dir, 'finetuned_predictions.csv'))
    merged = preds.merge(test_catalog[['id_str', 'ring']], on='id_str', how='inner')
    accuracy = ((merged['ring_pred'] > 0.5).astype(int) == merged['ring']).mean()
    print(f'Test accuracy: {accuracy:.3f} on {len(merged)} galaxies')
