# Copyright (c) 2021 Hongji Wang (jijijiang77@gmail.com)
#               2022 Chengdong Liang (liangchengdong@mail.nwpu.edu.cn)
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import time
from contextlib import nullcontext

import tableprint as tp
import torch
import torchnet as tnt

from wespeaker.dataset.dataset_utils import apply_cmvn, spec_aug


def run_epoch(dataloader, epoch_iter, model, criterion, optimizer, scheduler,
              margin_scheduler, epoch, logger, scaler, enable_amp,
              log_batch_interval=100, device=torch.device('cuda')):
    model.train()
    # By default use average pooling
    loss_meter = tnt.meter.AverageValueMeter()
    acc_meter = tnt.meter.ClassErrorMeter(accuracy=True)

    frontend_type = dataloader.dataset.data_type_args.get('frontend', 'fbank') \
        if hasattr(dataloader.dataset, 'data_type_args') else 'fbank'
    accum_grad = getattr(dataloader.dataset, 'accum_grad', 1)

    # https://github.com/wenet-e2e/wenet/pull/1195
    # uneven inputs are handled by model.join()
    model_context = model.join

    tic = time.time()
    with model_context():
        for i, batch in enumerate(dataloader):
            utts = batch['key']
            targets = batch['label']

            cur_iter = (epoch - 1) * epoch_iter + i
            scheduler.step(cur_iter)
            margin_scheduler.step(cur_iter)

            targets = targets.long().to(device)  # (B)
            if frontend_type == 'fbank':
                features = batch['feat']  # (B,T,F)
                features = features.float().to(device)
            else:  # 's3prl' / 'whisper' style frontends take raw wav
                wavs = batch['wav']  # (B,1,W)
                wavs = wavs.squeeze(1).float().to(device)  # (B,W)
                wavs_len = torch.LongTensor([wavs.shape[1]]).repeat(
                    wavs.shape[0]).to(device)  # (B)
                with torch.cuda.amp.autocast(enabled=enable_amp):  # ssl frontend
                    features, _ = model.module.frontend(wavs, wavs_len)

            with torch.cuda.amp.autocast(enabled=enable_amp):
                if frontend_type != 'fbank':
                    # apply cmvn
                    features = apply_cmvn(features, **dataloader.dataset.
                                          cmvn_args)
                    # spec augmentation
                    features = spec_aug(features, **dataloader.dataset.
                                        spec_aug_args)

                outputs = model(features)  # (embed_a,embed_b) in most cases
                embeds = outputs[-1] if isinstance(outputs, tuple) else outputs
                outputs = model.module.projection(embeds, targets)
                if isinstance(outputs, tuple):
                    outputs, loss = outputs
                else:
                    loss = criterion(outputs, targets)
                loss = loss / accum_grad

            # loss, acc
            loss_meter.add(loss.item() * accum_grad)
            acc_meter.add(outputs.cpu().detach().numpy(),
                          targets.cpu().numpy())

            # updata the model
            context = model.no_sync if (i + 1) % accum_grad != 0 \
                else nullcontext
            with context():
                scaler.scale(loss).backward()
            if (i + 1) % accum_grad == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()

            # log
            if (i + 1) % log_batch_interval == 0:
                toc = time.time()
                logger.info(
                    tp.row((epoch, i + 1, scheduler.get_lr(),
                            margin_scheduler.get_margin()) +
                           (loss_meter.value()[0], acc_meter.value()[0]),
                           width=10,
                           style='grid'))
                logger.debug('{:.1f} utts/s, max mem {:.0f} MiB'.format(
                    log_batch_interval * targets.size(0) / (toc - tic),
                    torch.cuda.max_memory_allocated() / 1024 / 1024))
                tic = toc

            if (i + 1) == epoch_iter:
                break

    logger.info(
        tp.row((epoch, i + 1, scheduler.get_lr(),
                margin_scheduler.get_margin()) +
               (loss_meter.value()[0], acc_meter.value()[0]),
               width=10,
               style='grid'))
