import os
import torch
import numpy as np
import skimage.metrics


def cond_mkdir(path):
    if not os.path.exists(path):
        os.makedirs(path)


def dict2cuda(a_dict):
    tmp = {}
    for key, value in a_dict.items():
        if isinstance(value, torch.Tensor):
            tmp.update({key: value.cuda()})
        elif isinstance(value, dict):
            tmp.update({key: dict2cuda(value)})
        elif isinstance(value, list) and len(value) and isinstance(value[0], torch.Tensor):
            tmp.update({key: [v.cuda() for v in value]})
        else:
            tmp.update({key: value})
    return tmp


def dict2cpu(a_dict):
    tmp = {}
    for key, value in a_dict.items():
        if isinstance(value, torch.Tensor):
            tmp.update({key: value.cpu()})
        elif isinstance(value, dict):
            tmp.update({key: dict2cpu(value)})
        elif isinstance(value, list) and len(value) and isinstance(value[0], torch.Tensor):
            tmp.update({key: [v.cpu() for v in value]})
        else:
            tmp.update({key: value})
    return tmp


def get_psnr(pred, gt):
    return 10 * torch.log10(1 / torch.mean((pred - gt) ** 2))


def process_batch_in_chunks(in_dict, model, max_chunk_size=1024, progress=None):

    in_chunked = []
    for key in in_dict:
        chunks = torch.split(in_dict[key], max_chunk_size, dim=1)
        in_chunked.append(chunks)

    list_chunked_batched_in = \
        [{k: v for k, v in zip(in_dict.keys(), curr_chunks)} for curr_chunks in zip(*in_chunked)]
    del in_chunked

    list_chunked_batched_out_out = {}
    list_chunked_batched_out_in = {}
    for chunk_batched_in in list_chunked_batched_in:
        chunk_batched_in = {k: v.cuda() for k, v in chunk_batched_in.items()}
        tmp = model(chunk_batched_in)
        tmp = dict2cpu(tmp)

        for key in tmp['model_out']:
            if tmp['model_out'][key] is None:
                continue

            out_ = tmp['model_out'][key]
            if isinstance(out_, list):
                out_ = [o.detach().clone().requires_grad_(False) for o in out_]
            else:
                out_ = out_.detach().clone().requires_grad_(False)
            list_chunked_batched_out_out.setdefault(key, []).append(out_)

        for key in tmp['model_in']:
            if tmp['model_in'][key] is None:
                continue

            in_ = tmp['model_in'][key].detach().clone().requires_grad_(False)
            list_chunked_batched_out_in.setdefault(key, []).append(in_)

        del tmp, chunk_batched_in

        if progress is not None:
            progress.update(1)

    # Reassemble the output chunks in a batch
    batched_out = {}
    for key in list_chunked_batched_out_out:
        if isinstance(list_chunked_batched_out_out[key][0], list):
            n_scales = len(list_chunked_batched_out_out[key][0])
            batched_out[key] = [torch.cat([c[s] for c in list_chunked_batched_out_out[key]], dim=1)
                                for s in range(n_scales)]
        else:
            batched_out[key] = torch.cat(list_chunked_batched_out_out[key], dim=1)

    batched_in = {}
    for key in list_chunked_batched_out_in:
        batched_in[key] = torch.cat(list_chunked_batched_out_in[key], dim=1)

    torch.cuda.empty_cache()

    return {'model_in': batched_in, 'model_out': batched_out}


def subsample_dict(in_dict, num_views, multiscale=False):
    if multiscale:
        out = {}
        for k, v in in_dict.items():
            if v.shape[0] == in_dict['ray_origins'].shape[0]:
                out[k] = v[:num_views]
            else:
                out[k] = v
    else:
        out = {key: value[0:num_views, ...] for key, value in in_dict.items()}
    return out


def write_psnr(pred_img, gt_img, writer, iter, prefix):
    batch_size = pred_img.shape[0]

    pred_img = pred_img.detach().cpu().numpy()
    gt_img = gt_img.detach().cpu().numpy()

    psnrs = list()
    for i in range(batch_size):
        p = pred_img[i].transpose(1, 2, 0)
        trgt = gt_img[i].transpose(1, 2, 0)

        p = (p / 2.) + 0.5
        p = np.clip(p, a_min=0., a_max=1.)
        trgt = (trgt / 2.) + 0.5

        psnr = skimage.metrics.peak_signal_noise_ratio(p, trgt, data_range=1)
        psnrs.append(psnr)

    writer.add_scalar(prefix + "psnr", np.mean(psnrs), iter)
