import warnings
warnings.filterwarnings("ignore")
import os
import sys
import time
import pickle
import argparse
from copy import deepcopy
from collections import defaultdict

import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

sys.path.append(os.getcwd())  # slt dir
from dataset.Dataloader import build_dataloader
from modelling.model import build_model
from utils.misc import get_logger, load_config, make_logger, move_to_device, neq_load_customized, init_DDP, is_main_process
from utils.metrics import bleu, rouge, wer_list
from utils.phoenix_cleanup import clean_phoenix_2014, clean_phoenix_2014_trans


def evaluation(model, val_dataloader, cfg,
               epoch=None, global_step=None,
               generate_cfg={}, save_dir=None,
               do_translation=True, do_recognition=True,
               tb_writer=None, wandb_run=None, external_logits=None):
    logger = get_logger()
    logger.info(generate_cfg)
    print()
    if os.environ.get('enable_pbar', '1') == '1':
        pbar = tqdm(val_dataloader, desc='eval')
    else:
        pbar = val_dataloader
    with torch.no_grad():
        model.eval()
        val_stat = defaultdict(float)
        results = defaultdict(dict)
        name_prob = {}
        contras_setting = None
        t_fwd = 0.0
        for step, batch in enumerate(pbar):
            # forward -- loss
            batch = move_to_device(batch, cfg['device'])
            torch.cuda.synchronize()
            t0 = time.time()
            forward_output = model(is_train=False, **batch)
            torch.cuda.synchronize()  # wait for the forward kernels before timing
            t_fwd += time.time() - t0
            if is_main_process():
                for k, v in forward_output.items():
                    if '_loss' in k:
                        val_stat[k] += v.item()
            # rec
            if do_recognition:  # wer
                # rgb/keypoint/fuse/ensemble_last_logits
                for k, gls_logits in forward_output.items():
                    if not 'gloss_logits' in k or gls_logits is None:
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
                # multi-head
                if 'aux_logits' in forward_output:
                    for stream, logits_list in forward_output['aux_logits'].items():  # ['rgb', 'keypoint]
                        lengths_list = forward_output['aux_lengths'][stream]  # might be empty
                        for i, (logits, lengths) in enumerate(zip(logits_list, lengths_list)):
                            ctc_decode_output = model.predict_gloss_from_logits(
                                gloss_logits=logits,
                                beam_size=generate_cfg['recognition']['beam_size'],
                                input_lengths=lengths)
                            batch_pred_gls = model.gloss_tokenizer.convert_ids_to_tokens(ctc_decode_output)
                            for name, gls_hyp, gls_ref in zip(batch['name'], batch_pred_gls, batch['gloss']):
                                results[name][f'{stream}_aux_{i}_gls_hyp'] = \
                                    ' '.join(gls_hyp).upper() if model.gloss_tokenizer.lower_case \
                                    else ' '.join(gls_hyp)
            # keep the per-video posteriors for the ensemble script
            for name, p in zip(batch['name'], forward_output['ensemble_last_gloss_logits'].softmax(-1)):
                name_prob[name] = p.detach().cpu().numpy()
        logger.info('forward time / batch: {:.1f} ms'.format(1000 * t_fwd / max(len(val_dataloader), 1)))
        # compute wer for every key
        if do_recognition:
            evaluation_results = {}
            for hyp_name in results[name].keys():
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
                logger.info('{}WER: {:.2f}'.format(k, wer_results['wer']))
                if tb_writer:
                    tb_writer.add_scalar(f'eval/{k}WER', wer_results['wer'], epoch if epoch != None else global_step)
            evaluation_results['wer'] = min([wer['wer'] for wer in
                                             [v for k, v in evaluation_results.items() if 'wer_list' in k]])

    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
        with open(os.path.join(save_dir, 'results.pkl'), 'wb') as f:
            pickle.dump(results, f)
        with open(os.path.join(save_dir, 'name_prob.pkl'), 'wb') as f:
            pickle.dump(name_prob, f)
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
    model = model.cuda()
    do_translation, do_recognition = cfg['task'] != 'S2G', cfg['task'] != 'G2T'
    for split in ['dev', 'test']:
        logger.info('Evaluate on {} set'.format(split))
        dataloader, sampler = build_dataloader(cfg, split, model.text_tokenizer, model.gloss_tokenizer)
        evaluation(model=model, val_dataloader=dataloader, cfg=cfg,
                   epoch=epoch, global_step=global_step,
                   generate_cfg=cfg['testing']['cfg'],
                   save_dir=os.path.join(model_dir, args.save_subdir, split),
                   do_translation=do_translation, do_recognition=do_recognition)
