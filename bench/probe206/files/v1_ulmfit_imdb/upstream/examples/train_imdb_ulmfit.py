"""ULMFiT on IMDb with fastai v1: fine-tune the WT103 language model, then the classifier.

Single node, all visible GPUs via nn.DataParallel (the LM fine-tuning is ~2.5x faster on 4
cards). Use --qrnn to switch the AWD-LSTM to QRNN layers (needs the CUDA forget-mult kernel,
compiled on first use with nvcc), and --bwd to train the backwards model for the ensemble.

    CUDA_VISIBLE_DEVICES=0,1,2,3 python train_imdb_ulmfit.py --bs 128 --qrnn 1
"""
from fastai.script import *
from fastai.text import *
from fastai.callbacks import SaveModelCallback, CSVLogger

torch.backends.cudnn.enabled = True


def get_data_lm(path, bs, bwd):
    data_lm = (TextList.from_folder(path)
               .filter_by_folder(include=['train', 'test', 'unsup'])
               .split_by_rand_pct(0.1, seed=42)
               .label_for_lm()
               .databunch(bs=bs, num_workers=defaults.cpus, backwards=bwd))
    return data_lm


def get_data_clas(path, bs, bwd, vocab):
    return (TextList.from_folder(path, vocab=vocab)
            .split_by_folder(valid='test')
            .label_from_folder(classes=['neg', 'pos'])
            .databunch(bs=bs, num_workers=defaults.cpus, backwards=bwd))


def maybe_parallel(learn):
    "Wrap the model in DataParallel when there is more than one visible GPU"
    n = torch.cuda.device_count()
    if n > 1:
        print(f"using nn.DataParallel on {n} GPUs")
        learn.model = nn.DataParallel(learn.model)
    return learn


def unwrap(learn):
    if isinstance(learn.model, nn.DataParallel): learn.model = learn.model.module
    return learn


@call_parse
def main(bs: Param("Batch size", int) = 128,
         lm_epochs: Param("LM fine-tuning epochs", int) = 10,
         clas_epochs: Param("Classifier epochs (last stage)", int) = 2,
         qrnn: Param("Use QRNN instead of LSTM", int) = 0,
         bwd: Param("Train backwards model", int) = 0,
         fp16: Param("Mixed precision", int) = 1,
         lr: Param("Base learning rate", float) = 1e-2):
    "Train the ULMFiT pipeline on IMDb"
    defaults.device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
    path = untar_data(URLs.IMDB)
    suffix = '_bwd' if bwd else ''

    data_lm = get_data_lm(path, bs, bwd)
    data_lm.save(f'data_lm{suffix}.pkl')

    config = awd_lstm_lm_config.copy()
    if qrnn:
        config.update(qrnn=True, n_hid=1550, n_layers=4)
        print("QRNN: forget-mult CUDA kernel will be JIT-compiled on first forward")
    learn = language_model_learner(data_lm, AWD_LSTM, config=config, drop_mult=0.3,
                                   pretrained=not qrnn, metrics=[accuracy, Perplexity()])
    if fp16: learn = learn.to_fp16(clip=0.1)
    learn = maybe_parallel(learn)

    learn.fit_one_cycle(1, lr*2, moms=(0.8, 0.7), wd=0.1)
    learn.unfreeze()
    learn.fit_one_cycle(lm_epochs, lr/5, moms=(0.8, 0.7), wd=0.1,
                        callbacks=[SaveModelCallback(learn, name=f'lm_best{suffix}'), CSVLogger(learn, f'lm{suffix}')])
    learn = unwrap(learn)
    learn.save_encoder(f'fine_tuned_enc{suffix}')

    del learn
    gc.collect()
    torch.cuda.empty_cache()

    data_clas = get_data_clas(path, bs // 2, bwd, data_lm.vocab)
    config = awd_lstm_clas_config.copy()
    if qrnn: config.update(qrnn=True, n_hid=1550, n_layers=4)
    learn = text_classifier_learner(data_clas, AWD_LSTM, config=config, drop_mult=0.5,
                                    pretrained=False, metrics=[accuracy])
    learn.load_encoder(f'fine_tuned_enc{suffix}')
    if fp16: learn = learn.to_fp16(clip=0.1)
    learn = maybe_parallel(learn)

    lr_c = lr * 2
    learn.fit_one_cycle(1, lr_c, moms=(0.8, 0.7))
    learn.freeze_to(-2)
    learn.fit_one_cycle(1, slice(lr_c/(2.6**4), lr_c), moms=(0.8, 0.7))
    learn.freeze_to(-3)
    learn.fit_one_cycle(1, slice(lr_c/2/(2.6**4), lr_c/2), moms=(0.8, 0.7))
    learn.unfreeze()
    learn.fit_one_cycle(clas_epochs, slice(lr_c/10/(2.6**4), lr_c/10), moms=(0.8, 0.7))
    learn = unwrap(learn)
    learn.save(f'clas{suffix}')

    preds, targs = learn.get_preds(ordered=True)
    print(f"final accuracy: {accuracy(preds, targs).item():.4f}")
    torch.save(preds, path/f'preds{suffix}.pt')
    ensemble(path)


def ensemble(path):
    "Average the forward and backward classifiers once both have been trained"
    fwd, bwd = path/'preds.pt', path/'preds_bwd.pt'
    if not (fwd.exists() and bwd.exists()):
        print("train with --bwd 0 and --bwd 1 to get the ensemble")
        return
    data_clas = load_data(path, 'data_clas.pkl', bs=64)
    targs = torch.tensor([int(o) for o in data_clas.valid_ds.y.items])
    p_fwd = torch.load(fwd, map_location='cpu')
    p_bwd = torch.load(bwd, map_location='cpu')
    for name, p in (('fwd', p_fwd), ('bwd', p_bwd), ('ensemble', (p_fwd + p_bwd) / 2)):
        print(f"{name:>9}: {accuracy(p, targs).item():.4f}")
