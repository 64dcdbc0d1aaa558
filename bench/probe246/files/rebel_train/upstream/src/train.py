import os

import hydra
import omegaconf
import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from pytorch_lightning.loggers.wandb import WandbLogger
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

from generate_samples import GenerateTextSamplesCallback
from pl_data_modules import BasePLDataModule
from pl_modules import BasePLModule

RELATION_SPECIAL_TOKENS = ["<obj>", "<subj>", "<triplet>", "<head>", "</head>", "<tail>", "</tail>"]


def build_tokenizer(conf):
    tokenizer_kwargs = {
        "use_fast": conf.use_fast_tokenizer,
        "additional_special_tokens": RELATION_SPECIAL_TOKENS,
    }
    tokenizer = AutoTokenizer.from_pretrained(
        conf.tokenizer_name if conf.tokenizer_name else conf.model_name_or_path,
        **tokenizer_kwargs,
    )
    dataset_file = conf.dataset_name.split("/")[-1]
    if dataset_file == "conll04_typed.py":
        tokenizer.add_tokens(["<peop>", "<org>", "<other>", "<loc>"], special_tokens=True)
    if dataset_file == "nyt_typed.py":
        tokenizer.add_tokens(["<loc>", "<per>", "<org>"], special_tokens=True)
    if dataset_file == "docred_typed.py":
        tokenizer.add_tokens(["<loc>", "<misc>", "<per>", "<num>", "<time>", "<org>"], special_tokens=True)
    return tokenizer


def train(conf: omegaconf.DictConfig) -> None:
    # reproducibility
    pl.seed_everything(conf.seed)

    if conf.gpus and not torch.cuda.is_available():
        print("No CUDA device visible, training on CPU (this will be very slow)")
        conf.gpus = 0

    config = AutoConfig.from_pretrained(
        conf.config_name if conf.config_name else conf.model_name_or_path,
        decoder_start_token_id=0,
        early_stopping=False,
        no_repeat_ngram_size=0,
        dropout=conf.dropout,
        forced_bos_token_id=None,
    )

    tokenizer = build_tokenizer(conf)

    model = AutoModelForSeq2SeqLM.from_pretrained(
        conf.model_name_or_path,
        config=config,
    )
    # if not conf.finetune:
    model.resize_token_embeddings(len(tokenizer))

    # data module declaration
    pl_data_module = BasePLDataModule(conf, tokenizer, model)

    # main module declaration
    pl_module = BasePLModule(conf, config, tokenizer, model)

    wandb_logger = WandbLogger(
        project=conf.dataset_name.split("/")[-1].replace(".py", ""),
        name=conf.model_name_or_path.split("/")[-1],
    )

    callbacks_store = []

    if conf.apply_early_stopping:
        callbacks_store.append(
            EarlyStopping(
                monitor=conf.monitor_var,
                mode=conf.monitor_var_mode,
                patience=conf.patience,
            )
        )

    callbacks_store.append(
        ModelCheckpoint(
            monitor=conf.monitor_var,
            dirpath=f"experiments/{conf.model_name}",
            save_top_k=conf.save_top_k,
            verbose=True,
            save_last=True,
            mode=conf.monitor_var_mode,
        )
    )
    callbacks_store.append(GenerateTextSamplesCallback(conf.samples_interval))
    callbacks_store.append(LearningRateMonitor(logging_interval="step"))

    # trainer
    trainer = pl.Trainer(
        gpus=conf.gpus,
        accumulate_grad_batches=conf.gradient_acc_steps,
        gradient_clip_val=conf.gradient_clip_value,
        val_check_interval=conf.val_check_interval,
        callbacks=callbacks_store,
        max_steps=conf.max_steps,
        # max_time=conf.max_time,
        precision=conf.precision,
        amp_backend=conf.amp_backend,
        logger=wandb_logger,
        resume_from_checkpoint=conf.checkpoint_path,
        limit_val_batches=conf.val_percent_check,
        strategy=conf.strategy if conf.gpus > 1 else None,
    )

    # module fit
    trainer.fit(pl_module, datamodule=pl_data_module)

    if conf.do_predict:
        trainer.test(pl_module, datamodule=pl_data_module, ckpt_path="best")


@hydra.main(config_path="../conf", config_name="root")
def main(conf: omegaconf.DictConfig):
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    train(conf)


if __name__ == "__main__":
    main()
