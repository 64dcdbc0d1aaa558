import warnings, wandb
warnings.filterwarnings("ignore", category=UserWarning)
import os
import sys
sys.path.append(os.getcwd())  # slt dir
import torch
import queue
import math
import time
import argparse
import shutil
from torch.nn.parallel import DistributedDataParallel as DDP
from modelling.model import build_model
from utils.optimizer import build_optimizer, build_scheduler
from utils.misc import (
    get_logger,
    load_config,
    log_cfg,
    make_model_dir, make_logger, make_writer, make_wandb,
    set_seed,
    symlink_update,
    is_main_process, init_DDP, move_to_device,
    neq_load_customized,
    synchronize,
)
from utils.phoenix_cleanup import clean_phoenix_2014_trans, clean_phoenix_2014
from dataset.Dataloader import build_dataloader
from prediction import evaluation


def save_model(model, optimizer, scheduler, output_file, epoch=None, global_step=None, current_score=None):
    base_dir = os.path.dirname(output_file)
    os.makedirs(base_dir, exist_ok=True)
    state = {
        'epoch': epoch,
        'global_step': global_step,
        'model_state': model.module.state_dict(),
        'optimizer_state': optimizer.state_dict(),
        'scheduler_state': scheduler.state_dict(),
        'best_ckpt_score': current_score,
    }
    torch.save(state, output_file)
    logger.info('Save model state as {}'.format(output_file))


def evaluate_and_save(model, optimizer, scheduler, val_dataloader, cfg,
                      tb_writer, wandb_run=None, epoch=None, global_step=None, generate_cfg={}):
    tag = 'epoch_{:02d}'.format(epoch) if epoch != None else 'step_{}'.format(global_step)
    # save
    global ckpt_queue, best_score, best_ckpt_path
    if 'translation' in cfg['task']:
        do_translation, do_recognition = True, False
    else:
        do_translation, do_recognition = False, True
    eval_results = evaluation(
        model=model.module, val_dataloader=val_dataloader, cfg=cfg,
        tb_writer=tb_writer, wandb_run=wandb_run,
        epoch=epoch, global_step=global_step,
        generate_cfg=generate_cfg,
        save_dir=os.path.join(cfg['training']['model_dir'], 'validation', tag),
        do_translation=do_translation, do_recognition=do_recognition)
    metric = 'bleu4' if 'translation' in cfg['task'] else 'wer'
    if metric == 'bleu4':
        score = eval_results['bleu']['bleu4']
        best_score = max(best_score, score)
    elif metric == 'wer':
        score = eval_results['wer']
        best_score = min(best_score, score)
    logger.info('best_score={:.2f}'.format(best_score))
    ckpt_file = os.path.join(cfg['training']['model_dir'], 'ckpts', tag + '.ckpt')
    save_model(model=model, optimizer=optimizer, scheduler=scheduler, output_file=ckpt_file,
               epoch=epoch, global_step=global_step, current_score=score)
    if best_score == score:
        os.system('cp {} {}'.format(ckpt_file, os.path.join(cfg['training']['model_dir'], 'ckpts', 'best.ckpt')))
        logger.info('Save best checkpoint as {}'.format(
            os.path.join(cfg['training']['model_dir'], 'ckpts', 'best.ckpt')))
    if ckpt_queue.full():
        to_delete = ckpt_queue.get()
        try:
            os.remove(to_delete)
        except FileNotFoundError:
            logger.warning(
                "Wanted to delete old checkpoint %s but "
                "file does not exist.", to_delete)
    ckpt_queue.put(ckpt_file)


if __name__ == "__main__":
    parser = argparse.ArgumentParser("SLT baseline")
    parser.add_argument(
        "--config",
        default="configs/default.yaml",
        type=str,
        help="Training configuration file (yaml).",
    )
    parser.add_argument(
        "--wandb",
        action="store_true",
        help='turn on wandb'
    )
    args = parser.parse_args()
    cfg = load_config(args.config)
    cfg['local_rank'], cfg['world_size'], cfg['device'] = init_DDP()
    set_seed(seed=cfg["training"].get("random_seed", 42))
    model_dir = cfg['training']['model_dir']
    os.makedirs(model_dir, exist_ok=True)
    global logger
    logger = make_logger(
        model_dir=model_dir,
        log_file='train.rank{}.log'.format(cfg['local_rank']))
    tb_writer = make_writer(model_dir=model_dir)
    if args.wandb:
        wandb_run = make_wandb(model_dir=model_dir, cfg=cfg)
    else:
        wandb_run = None
    if is_main_process():
        os.system('cp {} {}/'.format(args.config, model_dir))
    synchronize()

    model = build_model(cfg)
    model = model.to(cfg['device'])
    model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = DDP(model,
                device_ids=[cfg['local_rank']],
                output_device=cfg['local_rank'],
                find_unused_parameters=True)
    train_dataloader, train_sampler = build_dataloader(cfg, 'train', model.module.text_tokenizer, model.module.gloss_tokenizer)
    dev_dataloader, dev_sampler = build_dataloader(cfg, 'dev', model.module.text_tokenizer, model.module.gloss_tokenizer)

    optimizer = build_optimizer(config=cfg['training']['optimization'], model=model.module)
    scheduler, scheduler_type = build_scheduler(config=cfg['training']['optimization'], optimizer=optimizer)
    assert scheduler_type == 'epoch'
    start_epoch, total_epoch, global_step = 0, cfg['training']['total_epoch'], 0
    val_unit, val_freq = cfg['training']['validation']['unit'], cfg['training']['validation']['freq']
    global ckpt_queue, best_score
    ckpt_queue = queue.Queue(maxsize=cfg['training']['keep_last_ckpts'])
    best_score = -100 if 'translation' in cfg['task'] else 10000

    # RESUME TRAINING
    if cfg['training'].get('from_ckpt', False):
        synchronize()
        ckpt_lst = sorted(os.listdir(os.path.join(model_dir, 'ckpts')))
        latest_ckpt = ckpt_lst[-1]
        latest_ckpt = os.path.join(model_dir, 'ckpts', latest_ckpt)
        state_dict = torch.load(latest_ckpt, 'cuda:{:d}'.format(cfg['local_rank']))
        model.module.load_state_dict(state_dict['model_state'])
        optimizer.load_state_dict(state_dict['optimizer_state'])
        scheduler.load_state_dict(state_dict['scheduler_state'])
        start_epoch = state_dict['epoch'] + 1 if state_dict['epoch'] is not None else int(latest_ckpt.split('_')[-1][:-5]) + 1
        global_step = state_dict['global_step'] + 1 if state_dict['global_step'] is not None else 0
        best_score = state_dict['best_ckpt_score']
        torch.cuda.empty_cache()
        logger.info('Resume training from {} (epoch {})'.format(latest_ckpt, start_epoch))

    # TRAINING
    for epoch_no in range(start_epoch, total_epoch):
        train_sampler.set_epoch(epoch_no)
        logger.info('Epoch {}, Training examples {}'.format(epoch_no, len(train_dataloader.dataset)))
        scheduler.step()
        epoch_start = time.time()
        for step, batch in enumerate(train_dataloader):
            model.module.set_train()
            output = model(is_train=True, **batch)

            # optimize
            with torch.autograd.set_detect_anomaly(cfg.get('detect_anomaly', False)):
                output['total_loss'].backward()
            optimizer.step()
            model.zero_grad()
            if tb_writer:
                for k, v in output.items():
                    if '_loss' in k:
                        tb_writer.add_scalar('train/' + k, v, global_step)
                lr = scheduler.optimizer.param_groups[0]["lr"]
                tb_writer.add_scalar('train/learning_rate', lr, global_step)
                if wandb_run != None:
                    wandb.log({k: v for k, v in output.items() if '_loss' in k})
                    wandb.log({'learning_rate': lr})
            if step % 100 == 0 and is_main_process():
                logger.info('[Epoch {} Step {}] total_loss={:.4f} peak_mem={:.1f}MB'.format(
                    epoch_no, step, output['total_loss'].item(),
                    torch.cuda.max_memory_allocated() / 1024 ** 2))
            if val_unit == 'step' and global_step % val_freq == 0 and global_step > 0:
                evaluate_and_save(
                    model=model, optimizer=optimizer, scheduler=scheduler,
                    val_dataloader=dev_dataloader,
                    cfg=cfg, tb_writer=tb_writer, wandb_run=wandb_run,
                    global_step=global_step,
                    generate_cfg=cfg['training']['validation']['cfg'])
            global_step += 1
            if global_step >= cfg['training'].get('max_step', 1e10):
                break
        torch.cuda.synchronize()
        logger.info('Epoch {} took {:.1f}s'.format(epoch_no, time.time() - epoch_start))
        if val_unit == 'epoch' and epoch_no % val_freq == 0 and is_main_process():
            evaluate_and_save(
                model=model, optimizer=optimizer, scheduler=scheduler,
                val_dataloader=dev_dataloader,
                cfg=cfg, tb_writer=tb_writer, wandb_run=wandb_run,
                epoch=epoch_no,
                generate_cfg=cfg['training']['validation']['cfg'])
        synchronize()
    # test
    load_model_path = os.path.join(model_dir, 'ckpts', 'best.ckpt')
    if os.path.isfile(load_model_path):
        state_dict = torch.load(load_model_path, map_location='cuda')
        model.module.load_state_dict(state_dict['model_state'])
        epoch, global_step = state_dict.get('epoch', 0), state_dict.get('global_step', 0)
        logger.info('Load model ckpt from ' + load_model_path)
    else:
        logger.info(f'{load_model_path} does not exist')
        epoch, global_step = 0, 0
    do_translation, do_recognition = cfg['task'] != 'S2G', cfg['task'] != 'G2T'
    for split in ['dev', 'test']:
        logger.info('Evaluate on {} set'.format(split))
        dataloader, sampler = build_dataloader(cfg, split, model.module.text_tokenizer, model.module.gloss_tokenizer)
        evaluation(model=model.module, val_dataloader=dataloader, cfg=cfg,
                   epoch=epoch, global_step=global_step,
                   generate_cfg=cfg['testing']['cfg'],
                   save_dir=os.path.join(model_dir, split),
                   do_translation=do_translation, do_recognition=do_recognition)
    if wandb_run != None:
        wandb_run.finish()
