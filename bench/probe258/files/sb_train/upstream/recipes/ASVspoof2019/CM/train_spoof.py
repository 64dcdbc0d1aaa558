#!/usr/bin/env python3
"""Recipe for training a spoofing countermeasure (bona fide vs. spoof) on
ASVspoof 2019 LA with SpeechBrain. The embedding model is either ECAPA-TDNN on
Fbank features or a wav2vec 2.0 / WavLM front-end with an attentive pooling head,
selected in the hparams file.

To run this recipe, do the following:
> python train_spoof.py hparams/train_ecapa_spoof.yaml --data_folder=/data/LA

Multi-GPU (DDP):
> torchrun --nproc_per_node=4 train_spoof.py hparams/train_wavlm_spoof.yaml

Authors
 * Spoofing-CM recipe contributors 2023
"""
import os
import sys

import torch
import torchaudio
import speechbrain as sb
from hyperpyyaml import load_hyperpyyaml
from speechbrain.utils.distributed import run_on_main
from speechbrain.utils.metric_stats import EER, MetricStats

from asvspoof_prepare import prepare_asvspoof2019  # noqa


class SpoofBrain(sb.core.Brain):
    """Class that manages the training loop. See speechbrain.core.Brain."""

    def compute_forward(self, batch, stage):
        """Computation pipeline based on a encoder + spoof classifier."""
        batch = batch.to(self.device)
        wavs, lens = batch.sig

        # Add waveform augmentation if specified.
        if stage == sb.Stage.TRAIN and hasattr(self.hparams, "wav_augment"):
            wavs, lens = self.hparams.wav_augment(wavs, lens)

        if self.hparams.use_ssl:
            feats = self.modules.ssl_model(wavs, lens)
        else:
            # Fbank must stay in fp32 even when the rest runs in fp16
            with torch.cuda.amp.autocast(enabled=False):
                feats = self.modules.compute_features(wavs.float())
                feats = self.modules.mean_var_norm(feats, lens)

        embeddings = self.modules.embedding_model(feats, lens)
        outputs = self.modules.classifier(embeddings)
        return outputs, lens

    def compute_objectives(self, predictions, batch, stage):
        """Computes the loss using bona fide/spoof labels as targets."""
        predictions, lens = predictions
        uttid = batch.id
        labels, _ = batch.label_encoded

        # Concatenate labels (due to data augmentation)
        if stage == sb.Stage.TRAIN and hasattr(self.hparams, "wav_augment"):
            labels = self.hparams.wav_augment.replicate_labels(labels)

        loss = self.hparams.compute_cost(predictions, labels, lens)

        if stage != sb.Stage.TRAIN:
            self.error_metrics.append(uttid, predictions, labels, lens)
            scores = torch.softmax(predictions.squeeze(1), dim=-1)[:, 1]
            for s, l in zip(scores.detach().cpu(), labels.squeeze(1).cpu()):
                if int(l) == 1:
                    self.bonafide_scores.append(float(s))
                else:
                    self.spoof_scores.append(float(s))

        return loss

    def fit_batch(self, batch):
        """Train the parameters given a single batch in input"""
        if self.auto_mix_prec:
            self.optimizer.zero_grad()
            with torch.cuda.amp.autocast():
                outputs = self.compute_forward(batch, sb.Stage.TRAIN)
                loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            if self.check_gradients(loss):
                self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            outputs = self.compute_forward(batch, sb.Stage.TRAIN)
            loss = self.compute_objectives(outputs, batch, sb.Stage.TRAIN)
            loss.backward()
            if self.check_gradients(loss):
                self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()

    def on_stage_start(self, stage, epoch=None):
        """Gets called at the beginning of an epoch."""
        if stage != sb.Stage.TRAIN:
            self.error_metrics = self.hparams.error_stats()
            self.bonafide_scores = []
            self.spoof_scores = []

    def on_stage_end(self, stage, stage_loss, epoch=None):
        """Gets called at the end of an epoch."""
        # Compute/store important stats
        stage_stats = {"loss": stage_loss}
        if stage == sb.Stage.TRAIN:
            self.train_stats = stage_stats
        else:
            stage_stats["ErrorRate"] = self.error_metrics.summarize("average")
            eer, thr = EER(torch.tensor(self.bonafide_scores),
                           torch.tensor(self.spoof_scores))
            stage_stats["EER"] = eer * 100

        # Perform end-of-iteration things, like annealing, logging, etc.
        if stage == sb.Stage.VALID:
            old_lr, new_lr = self.hparams.lr_annealing(epoch)
            sb.nnet.schedulers.update_learning_rate(self.optimizer, new_lr)

            self.hparams.train_logger.log_stats(
                stats_meta={"epoch": epoch, "lr": old_lr},
                train_stats=self.train_stats,
                valid_stats=stage_stats,
            )
            self.checkpointer.save_and_keep_only(
                meta={"EER": stage_stats["EER"]}, min_keys=["EER"],
            )
        elif stage == sb.Stage.TEST:
            self.hparams.train_logger.log_stats(
                {"Epoch loaded": self.hparams.epoch_counter.current},
                test_stats=stage_stats,
            )


def dataio_prep(hparams):
    "Creates the datasets and their data processing pipelines."

    data_folder = hparams["data_folder"]

    # 1. Declarations:
    train_data = sb.dataio.dataset.DynamicItemDataset.from_csv(
        csv_path=hparams["train_annotation"],
        replacements={"data_root": data_folder},
    )
    valid_data = sb.dataio.dataset.DynamicItemDataset.from_csv(
        csv_path=hparams["valid_annotation"],
        replacements={"data_root": data_folder},
    )
    test_data = sb.dataio.dataset.DynamicItemDataset.from_csv(
        csv_path=hparams["test_annotation"],
        replacements={"data_root": data_folder},
    )
    datasets = [train_data, valid_data, test_data]
    label_encoder = sb.dataio.encoder.CategoricalEncoder()

    snt_len_sample = int(hparams["sample_rate"] * hparams["sentence_len"])

    # 2. Define audio pipeline:
    @sb.utils.data_pipeline.takes("wav", "duration")
    @sb.utils.data_pipeline.provides("sig")
    def audio_pipeline(wav, duration):
        sig, fs = torchaudio.load(wav)
        sig = sig.squeeze(0)
        if sig.shape[0] >= snt_len_sample:
            start = torch.randint(0, sig.shape[0] - snt_len_sample + 1, (1,)).item()
            sig = sig[start:start + snt_len_sample]
        else:
            n_rep = snt_len_sample // sig.shape[0] + 1
            sig = sig.repeat(n_rep)[:snt_len_sample]
        return sig

    sb.dataio.dataset.add_dynamic_item(datasets, audio_pipeline)

    # 3. Define text pipeline:
    @sb.utils.data_pipeline.takes("label")
    @sb.utils.data_pipeline.provides("label", "label_encoded")
    def label_pipeline(label):
        yield label
        label_encoded = label_encoder.encode_label_torch(label)
        yield label_encoded

    sb.dataio.dataset.add_dynamic_item(datasets, label_pipeline)

    # 3. Fit encoder:
    # Load or compute the label encoder (with multi-GPU DDP support)
    lab_enc_file = os.path.join(hparams["save_folder"], "label_encoder.txt")
    label_encoder.load_or_create(
        path=lab_enc_file, from_didatasets=[train_data], output_key="label",
    )

    # 4. Set output:
    sb.dataio.dataset.set_output_keys(datasets, ["id", "sig", "label_encoded"])

    return train_data, valid_data, test_data, label_encoder


if __name__ == "__main__":

    # Reading command line arguments
    hparams_file, run_opts, overrides = sb.parse_arguments(sys.argv[1:])

    # default to the first GPU when --device is not given on the command line
    if "device" not in run_opts:
        run_opts["device"] = "cuda:0" if torch.cuda.is_available() else "cpu"

    # Initialize ddp (useful only for multi-GPU DDP training)
    sb.utils.distributed.ddp_init_group(run_opts)

    # Load hyperparameters file with command-line overrides
    with open(hparams_file) as fin:
        hparams = load_hyperpyyaml(fin, overrides)

    # Create experiment directory
    sb.core.create_experiment_directory(
        experiment_directory=hparams["output_folder"],
        hyperparams_to_save=hparams_file,
        overrides=overrides,
    )

    # Data preparation, to be run on only one process.
    run_on_main(
        prepare_asvspoof2019,
        kwargs={
            "data_folder": hparams["data_folder"],
            "save_folder": hparams["save_folder"],
            "splits": ["train", "dev", "eval"],
        },
    )

    # Create dataset objects "train", "valid", and "test".
    train_data, valid_data, test_data, label_encoder = dataio_prep(hparams)

    # Brain class initialization
    spoof_brain = SpoofBrain(
        modules=hparams["modules"],
        opt_class=hparams["opt_class"],
        hparams=hparams,
        run_opts=run_opts,
        checkpointer=hparams["checkpointer"],
    )

    # The `fit()` method iterates the training loop, calling the methods
    # necessary to update the parameters of the model. Since all objects
    # with changing state are managed by the Checkpointer, training can be
    # stopped at any point, and will be resumed on next call.
    spoof_brain.fit(
        epoch_counter=spoof_brain.hparams.epoch_counter,
        train_set=train_data,
        valid_set=valid_data,
        train_loader_kwargs=hparams["dataloader_options"],
        valid_loader_kwargs=hparams["dataloader_options"],
    )

    # Load the best checkpoint for evaluation
    test_stats = spoof_brain.evaluate(
        test_set=test_data,
        min_key="EER",
        test_loader_kwargs=hparams["dataloader_options"],
    )
