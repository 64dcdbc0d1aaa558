import argparse
import os
import sys
from datetime import datetime

import torch
import pytorch_lightning as pl
from pytorch_lightning import Trainer, callbacks
from pytorch_lightning.loggers import WandbLogger, CSVLogger
from pytorch_lightning.strategies import DDPStrategy

from src.data import retrobridge_utils
from src.data.retrobridge_dataset import RetroBridgeDataModule, RetroBridgeDatasetInfos
from src.features.extra_features import DummyExtraFeatures, ExtraFeatures, ExtraMolecularFeatures
from src.analysis.visualization import MolecularVisualization
from src.frameworks.markov_bridge import MarkovBridge
from src.metrics.sampling_metrics import SamplingMolecularMetrics
from src.utils import disable_rdkit_logging, parse_yaml_config, set_deterministic

torch.set_float32_matmul_precision('medium')


def find_last_checkpoint(checkpoints_dir):
    epoch2fname = [
        (int(fname.split('=')[1].split('.')[0]), fname)
        for fname in os.listdir(checkpoints_dir)
        if fname.endswith('.ckpt') and fname != 'last.ckpt'
    ]
    if len(epoch2fname) == 0:
        return None
    latest_fname = max(epoch2fname, key=lambda t: t[0])[1]
    return os.path.join(checkpoints_dir, latest_fname)


def main(args):
    start_time = datetime.now().strftime('%d_%m_%H_%M_%S')
    run_name = f'{args.experiment_name}_{start_time}'
    experiment = run_name if args.resume is None else args.resume
    checkpoints_dir = os.path.join(args.checkpoints, experiment)
    os.makedirs(os.path.join(args.logs, 'general_logs', experiment), exist_ok=True)
    os.makedirs(checkpoints_dir, exist_ok=True)

    # Data
    data_module = RetroBridgeDataModule(
        data_root=args.data,
        batch_size=args.batch_size,
        num_workers=args.num_workers,
        shuffle=True,
        extra_nodes=args.extra_nodes,
        evaluation=False,
        swap=args.swap,
    )
    dataset_infos = RetroBridgeDatasetInfos(data_module)

    extra_features = (
        ExtraFeatures(args.extra_features, dataset_info=dataset_infos)
        if args.extra_features is not None
        else DummyExtraFeatures()
    )
    domain_features = (
        ExtraMolecularFeatures(dataset_infos=dataset_infos)
        if args.extra_molecular_features
        else DummyExtraFeatures()
    )

    dataset_infos.compute_input_output_dims(
        datamodule=data_module,
        extra_features=extra_features,
        domain_features=domain_features,
        use_context=args.use_context,
    )

    visualization_tools = MolecularVisualization(dataset_infos)
    train_smiles = list(data_module.train_dataset.r_smiles)
    sampling_metrics = SamplingMolecularMetrics(dataset_infos, train_smiles)

    model = MarkovBridge(
        experiment_name=experiment,
        chains_dir=os.path.join(args.logs, 'chains', experiment),
        graphs_dir=os.path.join(args.logs, 'graphs', experiment),
        checkpoints_dir=checkpoints_dir,
        diffusion_steps=args.diffusion_steps,
        diffusion_noise_schedule=args.diffusion_noise_schedule,
        transition=args.transition,
        lr=args.lr,
        weight_decay=args.weight_decay,
        n_layers=args.n_layers,
        hidden_mlp_dims=args.hidden_mlp_dims,
        hidden_dims=args.hidden_dims,
        lambda_train=args.lambda_train,
        dataset_infos=dataset_infos,
        train_metrics=None,
        sampling_metrics=sampling_metrics,
        visualization_tools=visualization_tools,
        extra_features=extra_features,
        domain_features=domain_features,
        use_context=args.use_context,
        log_every_steps=args.log_every_steps,
        sample_every_val=args.sample_every_val,
        samples_to_generate=args.samples_to_generate,
        samples_to_save=args.samples_to_save,
        samples_per_input=args.samples_per_input,
        chains_to_save=args.chains_to_save,
        number_chain_steps_to_save=args.number_chain_steps_to_save,
        fix_product_nodes=args.fix_product_nodes,
        loss_type=args.loss_type,
    )

    checkpoint_callback = callbacks.ModelCheckpoint(
        dirpath=checkpoints_dir,
        filename='{epoch:03d}',
        monitor='val/loss',
        save_top_k=args.save_top_k,
        every_n_epochs=args.sample_every_val,
        save_last=True,
    )

    loggers = [CSVLogger(save_dir=args.logs, name='csv', version=experiment)]
    if args.wandb_entity is not None:
        loggers.append(WandbLogger(
            save_dir=args.logs,
            project='RetroBridge',
            group=args.dataset,
            name=experiment,
            id=experiment,
            resume='must' if args.resume is not None else 'allow',
            entity=args.wandb_entity,
        ))

    use_gpu = args.device.startswith('cuda') and torch.cuda.is_available()
    n_devices = args.gpus if use_gpu else 1
    strategy = 'ddp' if n_devices > 1 else 'auto'

    trainer = Trainer(
        max_epochs=args.n_epochs,
        logger=loggers,
        callbacks=[checkpoint_callback],
        accelerator='gpu' if use_gpu else 'cpu',
        devices=n_devices,
        strategy=strategy,
        num_sanity_val_steps=0,
        enable_progress_bar=args.enable_progress_bar,
        check_val_every_n_epoch=args.sample_every_val,
        gradient_clip_val=args.clip_grad,
        precision=args.precision,
        log_every_n_steps=args.log_every_steps,
    )

    if args.resume is None:
        last_checkpoint = None
    else:
        last_checkpoint = find_last_checkpoint(checkpoints_dir)
        print(f'Training will be resumed from the latest checkpoint {last_checkpoint}')

    print('Start training')
    trainer.fit(model=model, datamodule=data_module, ckpt_path=last_checkpoint)


if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--config', type=argparse.FileType(mode='r'), required=True)
    p.add_argument('--data', action='store', type=str, required=True)
    p.add_argument('--checkpoints', action='store', type=str, required=True)
    p.add_argument('--logs', action='store', type=str, required=True)
    p.add_argument('--experiment_name', action='store', type=str, required=True)
    p.add_argument('--dataset', action='store', type=str, default='USPTO50k')
    p.add_argument('--resume', action='store', type=str, required=False, default=None)
    p.add_argument('--wandb_entity', action='store', type=str, required=False, default=None)
    p.add_argument('--enable_progress_bar', action='store_true', default=False)
    p.add_argument('--device', action='store', type=str, default='cuda:0')
    p.add_argument('--gpus', action='store', type=int, default=1)
    p.add_argument('--precision', action='store', type=str, default='32',
                   help="Lightning precision flag; '16-mixed' enables torch.cuda.amp")

    p.add_argument('--n_epochs', action='store', type=int, default=800)
    p.add_argument('--batch_size', action='store', type=int, default=64)
    p.add_argument('--num_workers', action='store', type=int, default=8)
    p.add_argument('--lr', action='store', type=float, default=2e-4)
    p.add_argument('--weight_decay', action='store', type=float, default=1e-12)
    p.add_argument('--clip_grad', action='store', type=float, default=None)
    p.add_argument('--diffusion_steps', action='store', type=int, default=500)
    p.add_argument('--diffusion_noise_schedule', action='store', type=str, default='cosine')
    p.add_argument('--transition', action='store', type=str, default='marginal')
    p.add_argument('--n_layers', action='store', type=int, default=5)
    p.add_argument('--lambda_train', action='store', type=float, nargs='+', default=[5.0, 0.0])
    p.add_argument('--loss_type', action='store', type=str, default='cross_entropy')
    p.add_argument('--extra_features', action='store', type=str, default='all')
    p.add_argument('--extra_molecular_features', action='store_true', default=False)
    p.add_argument('--extra_nodes', action='store_true', default=True)
    p.add_argument('--use_context', action='store_true', default=True)
    p.add_argument('--swap', action='store_true', default=False)
    p.add_argument('--fix_product_nodes', action='store_true', default=True)
    p.add_argument('--log_every_steps', action='store', type=int, default=50)
    p.add_argument('--sample_every_val', action='store', type=int, default=20)
    p.add_argument('--samples_to_generate', action='store', type=int, default=128)
    p.add_argument('--samples_to_save', action='store', type=int, default=20)
    p.add_argument('--samples_per_input', action='store', type=int, default=5)
    p.add_argument('--chains_to_save', action='store', type=int, default=5)
    p.add_argument('--number_chain_steps_to_save', action='store', type=int, default=50)
    p.add_argument('--save_top_k', action='store', type=int, default=-1)
    p.add_argument('--seed', action='store', type=int, default=42)

    args = p.parse_args()
    if args.config is not None:
        parse_yaml_config(args, args.config)

    disable_rdkit_logging()
    set_deterministic(args.seed)
    main(args)
