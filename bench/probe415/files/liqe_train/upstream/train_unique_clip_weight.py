import torch
import numpy as np
import clip
import random
import time
from MNL_Loss import Fidelity_Loss, loss_m4, Multi_Fidelity_Loss, Fidelity_Loss_distortion
import scipy.stats
from utils import set_dataset_qonly, _preprocess2, _preprocess3, convert_models_to_fp32
import torch.nn.functional as F
from itertools import product
import os
import pickle
from weight_methods import WeightMethods


##############################textual template####################################
dists = ['jpeg2000 compression', 'jpeg compression', 'white noise', 'gaussian blur', 'fastfading', 'fnoise', 'contrast', 'lens', 'motion', 'diffusion', 'shifting',
         'color quantization', 'oversaturation', 'desaturation', 'white with color', 'impulse', 'multiplicative',
         'white noise with denoise', 'brighten', 'darken', 'shifting the mean', 'jitter', 'noneccentricity patch',
         'pixelate', 'quantization', 'color blocking', 'sharpness', 'realistic blur', 'realistic noise',
         'underexposure', 'overexposure', 'realistic contrast change', 'other realistic']

scenes = ['animal', 'cityscape', 'human', 'indoor', 'landscape', 'night', 'plant', 'still_life', 'others']
qualitys = ['bad', 'poor', 'fair', 'good', 'perfect']

type2label = {'jpeg2000 compression': 0, 'jpeg compression': 1, 'white noise': 2, 'gaussian blur': 3,
              'fastfading': 4, 'fnoise': 5, 'contrast': 6, 'lens': 7, 'motion': 8, 'diffusion': 9,
              'shifting': 10, 'color quantization': 11, 'oversaturation': 12, 'desaturation': 13,
              'white with color': 14, 'impulse': 15, 'multiplicative': 16, 'white noise with denoise': 17,
              'brighten': 18, 'darken': 19, 'shifting the mean': 20, 'jitter': 21, 'noneccentricity patch': 22,
              'pixelate': 23, 'quantization': 24, 'color blocking': 25, 'sharpness': 26, 'realistic blur': 27,
              'realistic noise': 28, 'underexposure': 29, 'overexposure': 30, 'realistic contrast change': 31,
              'other realistic': 32}

dist_map = {'jpeg2000 compression': 'jpeg2000 compression', 'jpeg compression': 'jpeg compression',
            'white noise': 'noise', 'gaussian blur': 'blur', 'fastfading': 'jpeg2000 compression', 'fnoise': 'noise',
            'contrast': 'contrast', 'lens': 'blur', 'motion': 'blur', 'diffusion': 'color', 'shifting': 'blur',
            'color quantization': 'quantization', 'oversaturation': 'color', 'desaturation': 'color',
            'white with color': 'noise', 'impulse': 'noise', 'multiplicative': 'noise',
            'white noise with denoise': 'noise', 'brighten': 'overexposure', 'darken': 'underexposure',
            'shifting the mean': 'other', 'jitter': 'spatial', 'noneccentricity patch': 'spatial',
            'pixelate': 'spatial', 'quantization': 'quantization', 'color blocking': 'spatial',
            'sharpness': 'contrast', 'realistic blur': 'blur', 'realistic noise': 'noise',
            'underexposure': 'underexposure', 'overexposure': 'overexposure',
            'realistic contrast change': 'contrast', 'other realistic': 'other'}

map2label = {'jpeg2000 compression': 0, 'jpeg compression': 1, 'noise': 2, 'blur': 3, 'color': 4,
             'contrast': 5, 'overexposure': 6, 'underexposure': 7, 'spatial': 8, 'quantization': 9, 'other': 10}

dists_map = ['jpeg2000 compression', 'jpeg compression', 'noise', 'blur', 'color', 'contrast', 'overexposure',
            'underexposure', 'spatial', 'quantization', 'other']

scene2label = {'animal': 0, 'cityscape': 1, 'human': 2, 'indoor': 3, 'landscape': 4, 'night': 5, 'plant': 6,
               'still_life': 7, 'others': 8}

##############################general setup####################################
live_set = '../IQA_Database/databaserelease2/'
csiq_set = '../IQA_Database/CSIQ/'
bid_set = '../IQA_Database/BID/'
clive_set = '../IQA_Database/ChallengeDB_release/'
koniq10k_set = '../IQA_Database/koniq-10k/1024x768/'
kadid10k_set = '../IQA_Database/kadid10k/'

seed = 20200626

num_workers = 8

mtl_map = {0: 'live', 1: 'csiq', 2: 'bid', 3: 'clive', 4: 'koniq10k', 5: 'kadid10k'}
num_task = len(mtl_map)

device = "cuda:0" if torch.cuda.is_available() else "cpu"

preprocess2 = _preprocess2()
preprocess3 = _preprocess3()

opt = 0


def freeze_model(opt):
    model.logit_scale.requires_grad = False
    if opt == 0:  # do nothing
        return
    elif opt == 1:  # freeze text encoder
        for p in model.token_embedding.parameters():
            p.requires_grad = False
        for p in model.transformer.parameters():
            p.requires_grad = False
        model.positional_embedding.requires_grad = False
        model.text_projection.requires_grad = False
        for p in model.ln_final.parameters():
            p.requires_grad = False
    elif opt == 2:  # freeze visual encoder
        for p in model.visual.parameters():
            p.requires_grad = False
    elif opt == 3:
        for p in model.parameters():
            p.requires_grad = False


def do_batch(x, text):
    batch_size = x.size(0)
    num_patch = x.size(1)

    x = x.view(-1, x.size(2), x.size(3), x.size(4))

    logits_per_image, logits_per_text = model.forward(x, text)

    logits_per_image = logits_per_image.view(batch_size, num_patch, -1)
    logits_per_text = logits_per_text.view(-1, batch_size, num_patch)

    logits_per_image = logits_per_image.mean(1)
    logits_per_text = logits_per_text.mean(2)

    logits_per_image = F.softmax(logits_per_image, dim=1)

    return logits_per_image, logits_per_text


def train(model, best_result, best_epoch, srcc_dict):
    start_time = time.time()
    beta = 0.9
    running_loss = 0 if epoch == 0 else train_loss[-1]
    running_duration = 0.0
    num_steps_per_epoch = 200
    local_counter = epoch * num_steps_per_epoch + 1
    model.eval()
    loaders = []
    for loader in train_loaders:
        loaders.append(iter(loader))

    print(optimizer.state_dict()['param_groups'][0]['lr'])
    if optimizer.state_dict()['param_groups'][0]['lr'] == 0:
        scheduler.step()
        print(optimizer.state_dict()['param_groups'][0]['lr'])

    for step in range(num_steps_per_epoch):
        all_batch = []
        gmos_batch = []
        num_sample_per_task = []

        for dataset_idx, loader in enumerate(loaders, 0):
            try:
                sample_batched = next(loader)
            except StopIteration:
                loader = iter(train_loaders[dataset_idx])
                sample_batched = next(loader)
                loaders[dataset_idx] = loader

            x, gmos, dist, scene1, scene2, scene3, valid = sample_batched['I'], sample_batched['mos'], \
                sample_batched['dist_type'], sample_batched['scene_content1'], sample_batched['scene_content2'], \
                sample_batched['scene_content3'], sample_batched['valid']

            x = x.to(device)
            gmos = gmos.to(device)
            gmos_batch.append(gmos)
            num_sample_per_task.append(x.size(0))

            all_batch.append(x)

        all_batch = torch.cat(all_batch, dim=0)
        gmos_batch = torch.cat(gmos_batch, dim=0)

        optimizer.zero_grad()
        logits_per_image, _ = do_batch(all_batch, joint_texts)

        logits_per_image = logits_per_image.view(-1, len(qualitys), len(scenes), len(dists_map))
        logits_quality = logits_per_image.sum(3).sum(2)
        quality_preds = 1 * logits_quality[:, 0] + 2 * logits_quality[:, 1] + 3 * logits_quality[:, 2] + \
                        4 * logits_quality[:, 3] + 5 * logits_quality[:, 4]

        total_loss = loss_m4(quality_preds, num_sample_per_task, gmos_batch.detach()).mean()

        total_loss.backward()
        if device == "cpu":
            optimizer.step()
        else:
            convert_models_to_fp32(model)
            optimizer.step()
            clip.model.convert_weights(model)

        # statistics
        running_loss = beta * running_loss + (1 - beta) * total_loss.data.item()
        loss_corrected = running_loss / (1 - beta ** local_counter)

        current_time = time.time()
        duration = current_time - start_time
        running_duration = beta * running_duration + (1 - beta) * duration
        duration_corrected = running_duration / (1 - beta ** local_counter)
        examples_per_sec = x.size(0) / duration_corrected
        format_str = ('(E:%d, S:%d / %d) [Loss = %.4f] (%.1f samples/sec; %.3f '
                      'sec/batch)')
        print(format_str % (epoch, step + 1, num_steps_per_epoch, loss_corrected,
                            examples_per_sec, duration_corrected))

        local_counter += 1
        start_time = time.time()

        train_loss.append(loss_corrected)

    if (epoch >= 0):
        srcc1 = eval(live_val_loader, phase='val', dataset='live')
        srcc11 = eval(live_test_loader, phase='test', dataset='live')
        srcc4 = eval(koniq10k_val_loader, phase='val', dataset='koniq10k')
        srcc44 = eval(koniq10k_test_loader, phase='test', dataset='koniq10k')

        srcc_avg = (srcc1 + srcc4) / 2
        current_avg = srcc_avg

        if current_avg > best_result['avg']:
            print('**********New overall best!**********')
            best_epoch['avg'] = epoch
            best_result['avg'] = current_avg
            srcc_dict['live'] = srcc11
            srcc_dict['koniq10k'] = srcc44

            ckpt_name = os.path.join('checkpoints', str(session + 1), 'quality_best_ckpt.pt')
            torch.save({
                'epoch': epoch,
                'model_state_dict': model.state_dict(),
                'optimizer_state_dict': optimizer.state_dict(),
                'all_results': all_result
            }, ckpt_name)  # just change to your preferred folder/filename

    return best_result, best_epoch, srcc_dict


def eval(loader, phase, dataset):
    model.eval()
    q_mos = []
    q_hat = []
    for step, sample_batched in enumerate(loader, 0):

        x, gmos = sample_batched['I'], sample_batched['mos']

        x = x.to(device)
        q_mos = q_mos + gmos.cpu().tolist()

        # Calculate features
        with torch.no_grad():
            logits_per_image, _ = do_batch(x, joint_texts)

        logits_per_image = logits_per_image.view(-1, len(qualitys), len(scenes), len(dists_map))
        logits_quality = logits_per_image.sum(3).sum(2)
        quality_preds = 1 * logits_quality[:, 0] + 2 * logits_quality[:, 1] + 3 * logits_quality[:, 2] + \
                        4 * logits_quality[:, 3] + 5 * logits_quality[:, 4]

        q_hat = q_hat + quality_preds.cpu().tolist()

    srcc = scipy.stats.mstats.spearmanr(x=q_mos, y=q_hat)[0]

    print_text = dataset + ' ' + phase + ' finished'
    print(print_text)

    return srcc


num_workers = 8
for session in range(0, 10):
    model, preprocess = clip.load("ViT-B/32", device=device, jit=False)
    joint_texts = torch.cat([clip.tokenize(f"a photo of a {c} with {d} artifacts, which is of {q} quality") for q, c, d
                             in product(qualitys, scenes, dists_map)]).to(device)

    print('%d csv files' % len(os.listdir('../IQA_Database/splits')))
    best_result = {'avg': 0.0}
    best_epoch = {'avg': 0}
    srcc_dict = {'live': 0.0, 'koniq10k': 0.0}

    torch.manual_seed(seed + session)
    torch.cuda.manual_seed(seed + session)
    np.random.seed(seed + session)
    random.seed(seed + session)

    optimizer = torch.optim.AdamW(
        model.parameters(), lr=5e-6,
        weight_decay=0.001)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.9)

    freeze_model(opt)

    train_loss = []
    all_result = {'val': {}, 'test': {}}

    live_train_csv = os.path.join('../IQA_Database/databaserelease2/splits2', str(session + 1), 'live_train_clip.txt')
    live_val_csv = os.path.join('../IQA_Database/databaserelease2/splits2', str(session + 1), 'live_val_clip.txt')
    live_test_csv = os.path.join('../IQA_Database/databaserelease2/splits2', str(session + 1), 'live_test_clip.txt')

    koniq10k_train_csv = os.path.join('../IQA_Database/koniq-10k/splits2', str(session + 1), 'koniq10k_train_clip.txt')
    koniq10k_val_csv = os.path.join('../IQA_Database/koniq-10k/splits2', str(session + 1), 'koniq10k_val_clip.txt')
    koniq10k_test_csv = os.path.join('../IQA_Database/koniq-10k/splits2', str(session + 1), 'koniq10k_test_clip.txt')

    live_train_loader = set_dataset_qonly(live_train_csv, 16, live_set, num_workers, preprocess3, 3, False)
    live_val_loader = set_dataset_qonly(live_val_csv, 16, live_set, num_workers, preprocess2, 15, True)
    live_test_loader = set_dataset_qonly(live_test_csv, 16, live_set, num_workers, preprocess2, 15, True)

    koniq10k_train_loader = set_dataset_qonly(koniq10k_train_csv, 16, koniq10k_set, num_workers, preprocess3, 3, False)
    koniq10k_val_loader = set_dataset_qonly(koniq10k_val_csv, 16, koniq10k_set, num_workers, preprocess2, 15, True)
    koniq10k_test_loader = set_dataset_qonly(koniq10k_test_csv, 16, koniq10k_set, num_workers, preprocess2, 15, True)

    train_loaders = [live_train_loader, koniq10k_train_loader]

    result_pkl = {}
    for epoch in range(0, 80):
        best_result, best_epoch, srcc_dict = train(model, best_result, best_epoch, srcc_dict)
        scheduler.step()

        print('...............current average best...............')
        print('best average epoch:{}'.format(best_epoch['avg']))
        print('best average result:{}'.format(best_result['avg']))
        for dataset in srcc_dict.keys():
            print_text = dataset + ':' + 'srcc:{}'.format(srcc_dict[dataset])
            print(print_text)

    pkl_name = os.path.join('checkpoints', str(session + 1), 'all_results.pkl')
    with open(pkl_name, 'wb') as f:
        pickle.dump(all_result, f)
