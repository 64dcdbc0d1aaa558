import warnings
warnings.filterwarnings("ignore", category=UserWarning)
import os
import sys
sys.path.append(os.getcwd())  # slt dir
import torch
from torch.nn.parallel import DistributedDataParallel as DDP
import pickle
import gzip
import argparse
import json
import time
from collections import defaultdict
from copy import deepcopy
from tqdm import tqdm
from utils.misc import (
    get_logger,
    load_config,
    make_logger,
    move_to_device,
    neq_load_customized,
    init_DDP,
    is_main_process,
    gather_object,
)
from dataset.Dataloader import build_dataloader
from modelling.model import build_model
from utils.metrics import bleu, rouge, wer_list
from utils.phoenix_cleanup import clean_phoenix_2014_trans, clean_phoenix_2014


def evaluation(model, val_dataloader, cfg,
               epoch=None, global_step=None,
               generate_cfg={}, save_dir=None,
               do_translation=True, do_recognition=True):
    logger = get_logger()
    logger.info(generate_cfg)
    if is_main_process():
        os.makedirs(save_dir, exist_ok=True)
    results = defaultdict(dict)
    pbar = tqdm(total=len(val_dataloader), desc='Validation') if is_main_process() else None
    with torch.no_grad():
        model.eval()
        val_stat = defaultdict(float)
        start = time.time()
        for step, batch in enumerate(val_dataloader):
            # forward -- loss
            batch = move_to_device(batch, cfg['device'])
            forward_output = model(is_train=False, **batch)
            if is_main_process():
                for k, v in forward_output.items():
                    if '_loss' in k:
                        val_stat[k] += v.item()
            # rgb/keypoint/fuse/ensemble_last_logits
            if do_recognition:
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
                            results[name][f'{logits_name}gls_hyp'] = \
                                ' '.join(gls_hyp).upper() if model.gloss_tokenizer.lower_case \
                                else ' '.join(gls_hyp)
                            results[name]['gls_ref'] = gls_ref.upper() if model.gloss_tokenizer.lower_case \
                                else gls_ref
                    else:
                        print(logits_name)
                        raise ValueError
            if do_translation:
                generate_output = model.generate_txt(
                    transformer_inputs=forward_output['transformer_inputs'],
                    generate_cfg=generate_cfg['translation'])
                for name, txt_hyp, txt_ref in zip(batch['name'], generate_output['decoded_sequences'], batch['text']):
                    results[name]['txt_hyp'], results[name]['txt_ref'] = txt_hyp, txt_ref
            if pbar:
                pbar.update(1)
        if pbar:
            pbar.close()
        logger.info('Validation finished in {:.1f}s on {}'.format(time.time() - start, cfg['device']))
        per_rank = gather_object(dict(results), cfg.get('world_size', 1))
        merged = {}
        for r in per_rank:
            merged.update(r)
        results = merged

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
            elif cfg['data']['dataset_name'].lower() in ['csl-daily', 'cslr']:
                gls_ref = [results[n]['gls_ref'] for n in results]
                gls_hyp = [results[n][hyp_name] for n in results]
            wer_results = wer_list(hypotheses=gls_hyp, references=gls_ref)
            evaluation_results[k + 'wer_list'] = wer_results
            evaluation_results['wer'] = min(wer_results['wer'], evaluation_results['wer'])
        logger.info('#samples: {}'.format(len(results)))
        logger.info('WER: {:.2f}'.format(evaluation_results['wer']))

    if do_translation:
        txt_ref = [results[n]['txt_ref'] for n in results]
        txt_hyp = [results[n]['txt_hyp'] for n in results]
        bleu_dict = bleu(references=txt_ref, hypotheses=txt_hyp, level=cfg['data']['level'])
        rouge_score = rouge(references=txt_ref, hypotheses=txt_hyp, level=cfg['data']['level'])
        for k, v in bleu_dict.items():
            logger.info('{} {:.2f}'.format(k, v))
        logger.info('ROUGE: {:.2f}'.format(rouge_score))
        evaluation_results['rouge'], evaluation_results['bleu'] = rouge_score, bleu_dict

    if is_main_process():
        with open(os.path.join(save_dir, 'results.pkl'), 'wb') as f:
            pickle.dump(results, f)
        with open(os.path.join(save_dir, 'evaluation_results.pkl'), 'wb') as f:
            pickle.dump(evaluation_results, f)
    return evaluation_results


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
    cfg['local_rank'], cfg['world_size'], cfg['device'] = init_DDP()
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
    model = DDP(model.to(cfg['device']),
                device_ids=[cfg['local_rank']],
                output_device=cfg['local_rank'])
    for split in ['dev', 'test']:
        logger.info('Evaluate on {} set'.format(split))
        dataloader, sampler = build_dataloader(cfg, split, model.module.text_tokenizer, model.module.gloss_tokenizer)
        evaluation(model=model.module, val_dataloader=dataloader, cfg=cfg,
                   epoch=epoch, global_step=global_step,
                   generate_cfg=cfg['testing']['cfg'],
                   save_dir=os.path.join(model_dir, args.save_subdir, split),
                   do_translation=(cfg['task'] != 'S2G'), do_recognition=(cfg['task'] != 'G2T'))
