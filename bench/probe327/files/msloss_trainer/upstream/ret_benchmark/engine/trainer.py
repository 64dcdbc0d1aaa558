# Copyright (c) Malong Technologies Co., Ltd.
# All rights reserved.
#
# Contact: github@malong.com
#
# This source code is licensed under the LICENSE file in the root directory of this source tree.

import datetime
import time

import numpy as np
import torch

from ret_benchmark.data.evaluations import RetMetric
from ret_benchmark.utils.metric_logger import MetricLogger

try:
    import faiss
except ImportError:
    faiss = None


def flip_inference(model, images):
    """Average the embeddings of the image and its horizontal flip."""
    feats = model(images)
    feats_flip = model(torch.flip(images, dims=[3]))
    return torch.nn.functional.normalize(feats + feats_flip, dim=1)


def feat_extractor(model, data_loader, logger=None, flip=False):
    model.eval()
    feats = list()

    for i, batch in enumerate(data_loader):
        imgs = batch[0].to('cuda')

        with torch.no_grad():
            if flip:
                out = flip_inference(model, imgs).data.cpu().numpy()
            else:
                out = model(imgs).data.cpu().numpy()
            feats.append(out)

        if logger is not None and (i + 1) % 100 == 0:
            logger.debug(f'Extract Features: [{i + 1}/{len(data_loader)}]')
        del out
    feats = np.vstack(feats)
    return feats


def knn_labels(feats, labels, k, use_faiss_gpu=True):
    """Labels of the k nearest neighbours (excluding self) of every sample."""
    feats = np.ascontiguousarray(feats, dtype=np.float32)
    if use_faiss_gpu and faiss is not None:
        res = faiss.StandardGpuResources()
        flat_config = faiss.GpuIndexFlatConfig()
        flat_config.device = torch.cuda.current_device()
        index = faiss.GpuIndexFlatIP(res, feats.shape[1], flat_config)
        index.add(feats)
        _, idx = index.search(feats, k + 1)
    else:
        # fall back to a dense similarity matrix on the training device
        x = torch.from_numpy(feats).cuda()
        sim = x @ x.t()
        idx = sim.topk(k + 1, dim=1)[1].cpu().numpy()
    return labels[idx[:, 1:]]


def set_bn_eval(m):
    classname = m.__class__.__name__
    if classname.find('BatchNorm') != -1:
        m.eval()


def do_train(
        cfg,
        model,
        train_loader,
        val_loader,
        optimizer,
        scheduler,
        criterion,
        checkpointer,
        device,
        checkpoint_period,
        arguments,
        logger
):
    logger.info("Start training")
    meters = MetricLogger(delimiter="  ")
    max_iter = len(train_loader)

    start_iter = arguments["iteration"]
    best_iteration = -1
    best_recall = 0

    start_training_time = time.time()
    end = time.time()
    for iteration, (images, targets) in enumerate(train_loader, start_iter):

        if iteration % cfg.VALIDATION.VERBOSE == 0 or iteration == max_iter:
            model.eval()
            logger.info('Validation')
            labels = val_loader.dataset.label_list
            labels = np.array([int(k) for k in labels])
            feats = feat_extractor(model, val_loader, logger=logger)

            ret_metric = RetMetric(feats=feats, labels=labels)
            recall_curr = ret_metric.recall_k(1)
            nn_labels = knn_labels(feats, labels, 8, use_faiss_gpu=cfg.VALIDATION.USE_FAISS_GPU)
            precision_at_8 = (nn_labels == labels[:, None]).mean()

            if recall_curr > best_recall:
                best_recall = recall_curr
                best_iteration = iteration
                logger.info(f'Best iteration {iteration}: recall@1: {best_recall:.3f}')
                checkpointer.save(f"best_model")
            else:
                logger.info(f'Recall@1 at iteration {iteration:06d}: {recall_curr:.3f}')
            logger.info(f'P@8 at iteration {iteration:06d}: {precision_at_8:.3f}')

        model.train()
        model.apply(set_bn_eval)

        data_time = time.time() - end
        iteration = iteration + 1
        arguments["iteration"] = iteration

        scheduler.step()

        images = images.to(device)
        targets = torch.stack([target.to(device) for target in targets])

        feats = model(images)
        loss = criterion(feats, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        batch_time = time.time() - end
        end = time.time()
        meters.update(time=batch_time, data=data_time, loss=loss.item())

        eta_seconds = meters.time.global_avg * (max_iter - iteration)
        eta_string = str(datetime.timedelta(seconds=int(eta_seconds)))

        if iteration % 20 == 0 or iteration == max_iter:
            logger.info(
                meters.delimiter.join(
                    [
                        "eta: {eta}",
                        "iter: {iter}",
                        "{meters}",
                        "lr: {lr:.6f}",
                        "max mem: {memory:.1f} GB",
                    ]
                ).format(
                    eta=eta_string,
                    iter=iteration,
                    meters=str(meters),
                    lr=optimizer.param_groups[0]["lr"],
                    memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0 / 1024.0,
                )
            )

        if iteration % checkpoint_period == 0:
            checkpointer.save("model_{:06d}".format(iteration))

    total_training_time = time.time() - start_training_time
    total_time_str = str(datetime.timedelta(seconds=total_training_time))
    logger.info(
        "Total training time: {} ({:.4f} s / it)".format(
            total_time_str, total_training_time / (max_iter)
        )
    )

    logger.info(f"Best iteration: {best_iteration :06d} | best recall {best_recall} ")
