"""train.py -- YourMT3-style multi-task music transcription trainer (PyTorch Lightning).

Example:
    python train.py my_exp -p project_name -enc perceiver-tf -dec multi-t5 -tk mc13_full_plus_256 \
        -d all_cross_final -it 320000 -vit 20000 -epv 1 -ac spec -hop 300 -bsz 10 10 -xk 5 -pr bf16-mixed \
        -g 4 -st ddp -wb online
"""
import os
import argparse
import pprint
import warnings

import torch
import lightning.pytorch as pl
from lightning.pytorch.callbacks import ModelCheckpoint, LearningRateMonitor
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.strategies import DDPStrategy, DeepSpeedStrategy

from config.config import audio_cfg as default_audio_cfg
from config.config import model_cfg as default_model_cfg
from config.config import shared_cfg as default_shared_cfg
from config.config import DEEPSPEED_CFG
from model.ymt3 import YourMT3
from utils.data_modules import AMTDataModule
from utils.task_manager import TaskManager
from utils.utils import str2bool, write_model_output_as_midi

os.environ["TOKENIZERS_PARALLELISM"] = "false"
warnings.filterwarnings("ignore", ".*does not have many workers.*")

# yapf: disable
parser = argparse.ArgumentParser(description="YourMT3")
# General
parser.add_argument('exp_id', type=str, help='A unique identifier for the experiment is used to resume training. The "@" symbol can be used to load a specific checkpoint.')
parser.add_argument('-p', '--project', type=str, default='ymt3', help='project name')
parser.add_argument('-ac', '--audio-codec', type=str, default=None, help='audio codec (default=None). {"spec", "melspec"}. If None, default value defined in config.py will be used.')
parser.add_argument('-hop', '--hop-length', type=int, default=None, help='hop length in frames (default=None). {128, 300} 128 for MT3, 300 for PerceiverTFIf None, default value defined in config.py will be used.')
parser.add_argument('-nmel', '--n-mels', type=int, default=None, help='number of mel bins (default=None). If None, default value defined in config.py will be used.')
parser.add_argument('-if', '--input-frames', type=int, default=None, help='number of audio frames for input segment (default=None). If None, default value defined in config.py will be used.')
# Model configurations
parser.add_argument('-enc', '--encoder-type', type=str, default=None, help="Encoder type. 't5' or 'perceiver-tf' or 'conformer'. Default is 't5', following config.py.")
parser.add_argument('-dec', '--decoder-type', type=str, default=None, help="Decoder type. 't5' or 'multi-t5'. Default is 't5', following config.py.")
parser.add_argument('-attn', '--attn-implementation', type=str, default=None, help="Attention backend {'eager', 'sdpa', 'flash'}. Default follows config.py.")
parser.add_argument('-tk', '--task', type=str, default='mt3_full_plus', help='tokenizer type (default=mt3_full_plus). See config/task.py for more options.')
# Data
parser.add_argument('-d', '--data-preset', type=str, default='musicnet_thickstun_ext_em', help='dataset preset (default=musicnet_thickstun_ext_em). See config/data.py for more options.')
parser.add_argument('-bsz', '--train-batch-size', nargs=2, type=int, default=None, help='train batch size per GPU: [sub_batch, local_batch]')
parser.add_argument('-xk', '--stem-xaug-policy-max-k', type=int, default=None, help='max number of stems to mix in cross-stem augmentation')
# Training
parser.add_argument('-it', '--max-steps', type=int, default=320000, help='max training steps (default=320000)')
parser.add_argument('-vit', '--val-interval', type=int, default=20000, help='validation interval in steps (default=20000)')
parser.add_argument('-epv', '--max-epochs-per-val', type=int, default=None, help='validate every n epochs; overrides -vit when set')
parser.add_argument('-lr', '--base-lr', type=float, default=1e-03, help='base learning rate (default=1e-03)')
parser.add_argument('-opt', '--optimizer', type=str, default='adamwscale', help='{adamw, adamwscale, adafactor}')
parser.add_argument('-pr', '--precision', type=str, default="bf16-mixed", help='precision: "32", "16-mixed" or "bf16-mixed" (default="bf16-mixed")')
parser.add_argument('-cmp', '--compile', type=str2bool, default=False, help='torch.compile the encoder (default=False)')
parser.add_argument('-sd', '--seed', type=int, default=1234, help='random seed')
# Hardware / distributed
parser.add_argument('-g', '--num-gpus', type=str, default='auto', help='number of GPUs to use ("auto", "-1" for all, or an integer)')
parser.add_argument('-nn', '--num-nodes', type=int, default=1, help='number of nodes (default=1)')
parser.add_argument('-st', '--strategy', type=str, default='auto', help='{auto, ddp, deepspeed}')
parser.add_argument('-wb', '--wandb-mode', type=str, default='online', help='wandb mode for logging (default=online)')
parser.add_argument('--debug-mode', type=str2bool, default=False, help='debug mode (default=False)')
# yapf: enable


def update_config(args, shared_cfg, stage='train'):
    """Merge command-line args into the default config dictionaries."""
    audio_cfg = dict(default_audio_cfg)
    model_cfg = dict(default_model_cfg)
    if args.audio_codec is not None:
        audio_cfg['codec'] = args.audio_codec
    if args.hop_length is not None:
        audio_cfg['hop_length'] = args.hop_length
    if args.n_mels is not None:
        audio_cfg['n_mels'] = args.n_mels
    if args.input_frames is not None:
        audio_cfg['input_frames'] = args.input_frames
    if args.encoder_type is not None:
        model_cfg['encoder_type'] = args.encoder_type
    if args.decoder_type is not None:
        model_cfg['decoder_type'] = args.decoder_type
    if args.attn_implementation is not None:
        model_cfg['attn_implementation'] = args.attn_implementation
    if args.train_batch_size is not None:
        shared_cfg['BSZ']['train_sub'], shared_cfg['BSZ']['train_local'] = args.train_batch_size
    if args.stem_xaug_policy_max_k is not None:
        shared_cfg['AUGMENTATION']['train_stem_xaug_policy']['max_k'] = args.stem_xaug_policy_max_k
    shared_cfg['WANDB']['mode'] = args.wandb_mode
    return audio_cfg, model_cfg, shared_cfg


def resolve_devices(num_gpus):
    """Translate the -g flag into something pl.Trainer understands."""
    if num_gpus == 'auto':
        return 'auto'
    n = int(num_gpus)
    if n == -1:
        n = torch.cuda.device_count()
    return n


def resolve_precision(precision):
    # Pre-Ampere GPUs have no native bf16 support: fall back to fp16 mixed precision.
    if precision == "bf16-mixed" and torch.cuda.get_device_capability()[0] < 8:
        print("bf16 is not supported on this GPU, using 16-mixed instead.")
        return "16-mixed"
    return precision


def build_strategy(name, num_devices):
    if name == 'deepspeed':
        return DeepSpeedStrategy(config=DEEPSPEED_CFG)
    if name == 'ddp' or (name == 'auto' and num_devices not in ('auto', 1)):
        return DDPStrategy(find_unused_parameters=False, static_graph=True)
    return 'auto'


def main():
    args = parser.parse_args()
    pl.seed_everything(args.seed, workers=True)

    # TF32 matmuls are fine for this model and ~2x faster on A100
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.enable_flash_sdp(True)

    shared_cfg = default_shared_cfg
    audio_cfg, model_cfg, shared_cfg = update_config(args, shared_cfg)
    tm = TaskManager(task_name=args.task)

    devices = resolve_devices(args.num_gpus)
    precision = resolve_precision(args.precision)
    strategy = build_strategy(args.strategy, devices)

    dir_info = {
        'lightning_dir': os.path.join(shared_cfg['WANDB']['save_dir'], args.project, args.exp_id),
        'last_ckpt_path': os.path.join(shared_cfg['WANDB']['save_dir'], args.project, args.exp_id, 'checkpoints', 'last.ckpt'),
    }
    os.makedirs(dir_info['lightning_dir'], exist_ok=True)

    dm = AMTDataModule(data_preset_multi={'presets': [args.data_preset]},
                       task_manager=tm,
                       train_num_samples_per_epoch=None,
                       audio_cfg=audio_cfg,
                       shared_cfg=shared_cfg)

    model = YourMT3(audio_cfg=audio_cfg,
                    model_cfg=model_cfg,
                    shared_cfg=shared_cfg,
                    optimizer_name=args.optimizer,
                    base_lr=args.base_lr,
                    task_manager=tm,
                    eval_subtask_key='default',
                    write_output_dir=dir_info['lightning_dir'])

    if args.compile:
        model.encoder = torch.compile(model.encoder, mode="max-autotune")

    wandb_logger = WandbLogger(name=args.exp_id, project=args.project, **shared_cfg['WANDB'])
    checkpoint_callback = ModelCheckpoint(dirpath=os.path.join(dir_info['lightning_dir'], 'checkpoints'),
                                          **shared_cfg['CHECKPOINT'])
    lr_monitor = LearningRateMonitor(logging_interval='step')

    trainer_kwargs = dict(shared_cfg['TRAINER'])
    if args.max_epochs_per_val is not None:
        trainer_kwargs['check_val_every_n_epoch'] = args.max_epochs_per_val
        val_check_interval = None
    else:
        trainer_kwargs['check_val_every_n_epoch'] = None
        val_check_interval = args.val_interval

    trainer = pl.Trainer(devices=devices,
                         num_nodes=args.num_nodes,
                         strategy=strategy,
                         precision=precision,
                         max_steps=args.max_steps,
                         val_check_interval=val_check_interval,
                         logger=wandb_logger,
                         callbacks=[checkpoint_callback, lr_monitor],
                         **trainer_kwargs)

    if trainer.is_global_zero:
        pprint.pprint({'audio_cfg': audio_cfg, 'model_cfg': model_cfg})
        print(f"devices={devices} strategy={strategy} precision={precision}")

    ckpt_path = dir_info['last_ckpt_path'] if os.path.exists(dir_info['last_ckpt_path']) else None
    trainer.fit(model, dm, ckpt_path=ckpt_path)

    # final test on the best checkpoint, single device to keep the metrics deterministic
    if trainer.is_global_zero:
        test_trainer = pl.Trainer(accelerator='gpu', devices=1, precision=precision, logger=wandb_logger)
        test_trainer.test(model, dm, ckpt_path=checkpoint_callback.best_model_path or 'last')


if __name__ == "__main__":
    main()
