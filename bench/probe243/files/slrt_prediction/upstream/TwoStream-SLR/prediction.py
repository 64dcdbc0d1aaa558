import warnings
warnings.filterwarnings("ignore")
import os
import sys
import argparse
import pickle
import json
from collections import defaultdict

import numpy as np
import torch
import tensorflow as tf
# tensorflow is only used for its CTC beam-search decoder; keep it off the GPUs
# so it does not grab all GPU memory next to PyTorch.
gpus = tf.config.experimental.list_physical_devices('GPU')
if gpus:
    tf.config.experimental.set_visible_devices([], 'GPU')

from modelling.model import build_model
from utils.misc import (
    get_logger, load_config, make_logger,
    move_to_device, neq_load_customized,
    synchronize, is_main_process, init_DDP,
)
from utils.metrics import bleu, rouge, wer_list
from utils.phoenix_cleanup import clean_phoenix_2014, clean_phoenix_2014_trans
from dataset.Dataloader import build_dataloader


def evaluation(model, val_dataloader, cfg,
               epoch=None, global_step=None,
               generate_cfg={}, save_dir=None,
               do_translation=True, do_recognition=True, tb_writer=None, wandb_run=None):
    logger = get_logger()
    logger.info(generate_cfg)
    print()
    if os.environ.get('enable_pbar', '1') == '1':
        from tqdm import tqdm
        pbar = tqdm(total=len(val_dataloader), desc='validation') if is_main_process() else None
    else:
        pbar = None
    if epoch != None:
        logger.info('------------------Evaluation epoch={} {} examples #={}---------------------'.format(
            epoch, val_dataloader.dataset.split, len(val_dataloader.dataset)))
    elif global_step != None:
        logger.info('------------------Evaluation global step={} {} examples #={}------------------'.format(
            global_step, val_dataloader.dataset.split, len(val_dataloader.dataset)))
    model.eval()
    total_val_loss = defaultdict(int)
    dataset2results = defaultdict(dict)
    with torch.no_grad():
        for step, batch in enumerate(val_dataloader):
            # forward -- loss
            datasetname = batch['datasetname']
            batch = move_to_device(batch, cfg['device'])
            forward_output = model(is_train=False, **batch)
            if is_main_process():
                for k, v in forward_output.items():
                    if '_loss' in k:
                        total_val_loss[k] += v.item()
            if do_recognition:  # wer
                # rgb/keypoint/fuse/ensemble_last_logits
                for k, gls_logits in forward_output.items():
                    if not 'gloss_logits' in k or gls_logits == None:
                        continue
                    logits_name = k.replace('gloss_logits', '')
                    if logits_name in ['rgb_', 'keypoint_', 'fuse_', 'ensemble_last_', 'ensemble_early_', '']:
                        if logits_name == 'ensemble_early_':
                            input_lengths = forward_output['aux_lengths']['rgb'][-1]
                        else:
                            input_lengths = forward_output['input_lengths']
                        ctc_decode_output = model.predict_gloss_from_logits(
                            gloss_logits=gls_logits,
                            beam_size=generate_cfg['recognition']['beam_size'],
                            input_lengths=input_lengths
                        )
                        batch_pred_gls = model.gloss_tokenizer.convert_ids_to_tokens(ctc_decode_output)
                        for name, gls_hyp, gls_ref in zip(batch['name'], batch_pred_gls, batch['gloss']):
                            dataset2results[datasetname][name] = dataset2results[datasetname].get(name, {})
                            dataset2results[datasetname][name][f'{logits_name}gls_hyp'] = \
                                ' '.join(gls_hyp).upper() if model.gloss_tokenizer.lower_case \
                                else ' '.join(gls_hyp)
                            dataset2results[datasetname][name]['gls_ref'] = gls_ref.upper() if model.gloss_tokenizer.lower_case \
                                else gls_ref
                    else:
                        print(logits_name)
                        raise ValueError

            if do_translation:
                generate_output = model.generate_txt(
                    transformer_inputs=forward_output['transformer_inputs'],
                    generate_cfg=generate_cfg['translation'])
                # decoded_sequences
                for name, txt_hyp, txt_ref in zip(batch['name'], generate_output['decoded_sequences'], batch['text']):
                    dataset2results[datasetname][name] = dataset2results[datasetname].get(name, {})
                    dataset2results[datasetname][name]['txt_hyp'] = txt_hyp
                    dataset2results[datasetname][name]['txt_ref'] = txt_ref
            # misc
            if pbar:
                pbar.update(1)
        if pbar:
            pbar.close()

    if is_main_process() and tb_writer:
        for k, v in total_val_loss.items():
            tb_writer.add_scalar('eval/' + k, v / len(val_dataloader), epoch if epoch != None else global_step)

    # evaluate & save
    per_dataset_results = {}
    for datasetname, results in dataset2results.items():
        evaluation_results = {}
        if do_recognition:
            evaluation_results['wer'] = 200
            for hyp_name in results[list(results.keys())[0]].keys():
                if not 'gls_hyp' in hyp_name:
                    continue
                k = hyp_name.replace('gls_hyp', '')
                if cfg['data']['dataset_name'].lower() == 'phoenix-2014t':
                    gls_ref = [clean_phoenix_2014_trans(results[n]['gls_ref']) for n in results]
                    gls_hyp = [clean_phoenix_2014_trans(results[n][hyp_name]) for n in results]
                elif cfg['data']['dataset_name'].lower() == 'phoenix-2014':
                    gls_ref = [clean_phoenix_2014(results[n]['gls_ref']) for n in results]
                    gls_hyp = [clean_phoenix_2014(results[n][hyp_name]) for n in results]
                elif cfg['data']['dataset_name'].lower() == 'csl-daily':
                    gls_ref = [results[n]['gls_ref'] for n in results]
                    gls_hyp = [results[n][hyp_name] for n in results]
                wer_results = wer_list(hypotheses=gls_hyp, references=gls_ref)
                evaluation_results[k + 'wer_list'] = wer_results
                logger.info('{}-{} WER: {:.2f}'.format(datasetname, k, wer_results['wer']))
                evaluation_results['wer'] = min(wer_results['wer'], evaluation_results['wer'])
        if do_translation:
            txt_ref = [results[n]['txt_ref'] for n in results]
            txt_hyp = [results[n]['txt_hyp'] for n in results]
            bleu_dict = bleu(references=txt_ref, hypotheses=txt_hyp, level=cfg['data']['level'])
            rouge_score = rouge(references=txt_ref, hypotheses=txt_hyp, level=cfg['data']['level'])
            for k, v in bleu_dict.items():
                logger.info('{} {}: {:.2f}'.format(datasetname, k, v))
            logger.info('{} ROUGE: {:.2f}'.format(datasetname, rouge_score))
            evaluation_results['rouge'], evaluation_results['bleu'] = rouge_score, bleu_dict
        per_dataset_results[datasetname] = evaluation_results

        if save_dir:
            os.makedirs(save_dir, exist_ok=True)
            with open(os.path.join(save_dir, f'{datasetname}_results.pkl'), 'wb') as f:
                pickle.dump(results, f)
            with open(os.path.join(save_dir, f'{datasetname}_evaluation_results.pkl'), 'wb') as f:
                pickle.dump(evaluation_results, f)
    logger.info('-------------------------Evaluation Finished-------------------------')
    return per_dataset_results[list(per_dataset_results.keys())[0]]


if __name__ == "__main__":
    parser = argparse.ArgumentParser("SLT baseline Testing")
    parser.add_argument(
        "--config",
        default="configs/default.yaml",
        type=str,
        help="Training configuration file (yaml).",
    )
    parser.add_argument(
        "--save_subdir",
        default='prediction',
        type=str
    )
    parser.add_argument(
        '--ckpt_name',
        default='best.ckpt',
        type=str
    )
    args = parser.parse_args()
    cfg = load_config(args.config)
    model_dir = cfg['training']['model_dir']
    os.makedirs(model_dir, exist_ok=True)
    global logger
    logger = make_logger(model_dir=model_dir, log_file='prediction.log')
    cfg['device'] = torch.device('cuda')
    model = build_model(cfg)
    # load model
    load_model_path = os.path.join(model_dir, 'ckpts', args.ckpt_name)
    if os.path.isfile(load_model_path):
        state_dict = torch.load(load_model_path, map_location='cuda')
        neq_load_customized(model, state_dict['model_state'], verbose=True)
        epoch, global_step = state_dict.get('epoch', 0), state_dict.get('global_step', 0)
        logger.info('Load model ckpt from ' + load_model_path)
    else:
        logger.info(f'{load_model_path} does not exist')
        epoch, global_step = 0, 0
    model = model.to(cfg['device'])
    for split in ['dev', 'test']:
        logger.info('Evaluate on {} set'.format(split))
        dataloader, sampler = build_dataloader(cfg, split, model.text_tokenizer, model.gloss_tokenizer)
        evaluation(model=model, val_dataloader=dataloader, cfg=cfg,
                   epoch=epoch, global_step=global_step,
                   generate_cfg=cfg['testing']['cfg'],
                   save_dir=os.path.join(model_dir, args.save_subdir, split),
                   do_translation=cfg['task'] != 'S2G', do_recognition=cfg['task'] != 'G2T')
