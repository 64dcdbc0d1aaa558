import json
from typing import Any

import numpy as np
import pandas as pd
import pytorch_lightning as pl
import torch
from torch.nn.utils.rnn import pad_sequence
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer
from transformers.optimization import (
    Adafactor,
    AdamW,
    get_constant_schedule,
    get_constant_schedule_with_warmup,
    get_cosine_schedule_with_warmup,
    get_cosine_with_hard_restarts_schedule_with_warmup,
    get_linear_schedule_with_warmup,
    get_polynomial_decay_schedule_with_warmup,
)

from scheduler import get_inverse_square_root_schedule_with_warmup
from score import re_score, score
from utils import BartTripletHead, extract_triplets, extract_triplets_typed, shift_tokens_left

arg_to_scheduler = {
    "linear": get_linear_schedule_with_warmup,
    "cosine": get_cosine_schedule_with_warmup,
    "cosine_w_restarts": get_cosine_with_hard_restarts_schedule_with_warmup,
    "polynomial": get_polynomial_decay_schedule_with_warmup,
    "constant": get_constant_schedule,
    "constant_w_warmup": get_constant_schedule_with_warmup,
    "inverse_square_root": get_inverse_square_root_schedule_with_warmup,
}

relations_nyt = {
    "/people/person/nationality": "country of citizenship",
    "/sports/sports_team/location": "headquarters location",
    "/location/country/administrative_divisions": "contains administrative territorial entity",
    "/business/company/major_shareholders": "owned by",
    "/people/ethnicity/people": "ethnic group",
    "/people/ethnicity/geographic_distribution": "located in the administrative territorial entity",
    "/business/company_shareholder/major_shareholder_of": "owner of",
    "/location/location/contains": "contains administrative territorial entity",
    "/business/company/founders": "founded by",
    "/business/person/company": "employer",
    "/business/company/advisors": "advisor",
    "/people/deceased_person/place_of_death": "place of death",
    "/business/company/industry": "industry",
    "/people/person/ethnicity": "ethnic group",
    "/people/person/place_of_birth": "place of birth",
    "/location/administrative_division/country": "country",
    "/people/person/place_lived": "residence",
    "/sports/sports_team_location/teams": "sports team",
    "/people/person/children": "child",
    "/people/person/religion": "religion",
    "/location/neighborhood/neighborhood_of": "located in the administrative territorial entity",
    "/location/country/capital": "capital",
    "/business/company/place_founded": "location of formation",
    "/people/person/profession": "occupation",
}


class BasePLModule(pl.LightningModule):
    def __init__(
        self,
        conf,
        config: AutoConfig,
        tokenizer: AutoTokenizer,
        model: AutoModelForSeq2SeqLM,
        *args,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.save_hyperparameters(conf)
        self.tokenizer = tokenizer
        self.model = model
        self.config = config
        if self.model.config.decoder_start_token_id is None:
            raise ValueError("Make sure that `config.decoder_start_token_id` is correctly defined")

        if self.hparams.label_smoothing == 0:
            self.loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
        else:
            # dynamically import label_smoothed_nll_loss
            from utils import label_smoothed_nll_loss

            self.loss_fn = label_smoothed_nll_loss

    def forward(self, inputs, labels, **kwargs) -> dict:
        """
        Method for the forward pass.
        'training_step', 'validation_step' and 'test_step' should call
        this method in order to compute the output predictions and the loss.

        Returns:
            output_dict: forward output containing the predictions (output logits ecc...) and the loss if any.
        """
        if self.hparams.label_smoothing == 0:
            if self.hparams is not None and self.hparams.ignore_pad_token_for_loss:
                # force training to ignore pad token
                outputs = self.model(**inputs, use_cache=False, return_dict=True, output_hidden_states=True)
                logits = outputs["logits"]
                loss = self.loss_fn(logits.view(-1, logits.shape[-1]), labels.view(-1))
            else:
                # compute usual loss via models
                outputs = self.model(**inputs, labels=labels, use_cache=False, return_dict=True, output_hidden_states=True)
                loss = outputs["loss"]
                logits = outputs["logits"]
        else:
            # compute label smoothed loss
            outputs = self.model(**inputs, use_cache=False, return_dict=True, output_hidden_states=True)
            logits = outputs["logits"]
            lprobs = torch.nn.functional.log_softmax(logits, dim=-1)
            labels.masked_fill_(labels == -100, self.config.pad_token_id)
            loss, _ = self.loss_fn(lprobs, labels, self.hparams.label_smoothing, ignore_index=self.config.pad_token_id)
        output_dict = {"loss": loss, "logits": logits}
        return output_dict

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        labels = batch.pop("labels")
        labels_original = batch.pop("labels_original")
        forward_output = self.forward(batch, labels)
        self.log("loss", forward_output["loss"])
        batch["labels"] = labels_original
        if "loss_aux" in forward_output:
            self.log("loss_classifier", forward_output["loss_aux"])
            return forward_output["loss"] + forward_output["loss_aux"]
        return forward_output["loss"]

    def _pad_tensors_to_max_len(self, tensor, max_length):
        # If PAD token is not defined at least EOS token has to be defined
        pad_token_id = self.config.pad_token_id if self.config.pad_token_id is not None else self.config.eos_token_id

        if pad_token_id is None:
            raise ValueError(
                f"Make sure that either `config.pad_token_id` or `config.eos_token_id` is defined if tensor has to be padded to `max_length`={max_length}"
            )

        padded_tensor = pad_token_id * torch.ones(
            (tensor.shape[0], max_length), dtype=tensor.dtype, device=tensor.device
        )
        padded_tensor[:, : tensor.shape[-1]] = tensor
        return padded_tensor

    def generate_triples(self, batch, labels) -> None:
        gen_kwargs = {
            "max_length": self.hparams.val_max_target_length
            if self.hparams.val_max_target_length is not None
            else self.config.max_length,
            "early_stopping": False,
            "length_penalty": 0,
            "no_repeat_ngram_size": 0,
            "num_beams": self.hparams.eval_beams if self.hparams.eval_beams is not None else self.config.num_beams,
        }

        generated_tokens = self.model.generate(
            batch["input_ids"].to(self.model.device),
            attention_mask=batch["attention_mask"].to(self.model.device),
            use_cache=True,
            **gen_kwargs,
        )

        decoded_preds = self.tokenizer.batch_decode(generated_tokens, skip_special_tokens=False)
        decoded_labels = self.tokenizer.batch_decode(
            torch.where(labels != -100, labels, self.config.pad_token_id), skip_special_tokens=False
        )
        dataset_file = self.hparams.dataset_name.split("/")[-1]
        if dataset_file in ("conll04_typed.py", "nyt_typed.py", "docred_typed.py"):
            return [extract_triplets_typed(rel) for rel in decoded_preds], [
                extract_triplets_typed(rel) for rel in decoded_labels
            ]
        return [extract_triplets(rel) for rel in decoded_preds], [extract_triplets(rel) for rel in decoded_labels]

    def generate_samples(self, batch=None, labels=None) -> None:
        # labels = batch.pop("labels")
        # pick the last batch and logits
        # x, y = batch
        gen_kwargs = {
            "max_length": self.hparams.val_max_target_length
            if self.hparams.val_max_target_length is not None
            else self.config.max_length,
            "early_stopping": False,
            "length_penalty": 0,
            "no_repeat_ngram_size": 0,
            "num_beams": self.hparams.eval_beams if self.hparams.eval_beams is not None else self.config.num_beams,
        }
        relation_start = labels == 50265
        relation_start = torch.roll(relation_start, 1, 1)
        relation_start = torch.cumsum(relation_start, dim=1)
        labels_decoder = torch.where(relation_start == 1, self.tokenizer.pad_token_id, labels)
        labels_decoder[:, -1] = 2
        labels_decoder = torch.roll(labels_decoder, 1, 1)

        with torch.no_grad():
            # compute loss on predict data
            generated_tokens = self.model.generate(
                batch["input_ids"].to(self.model.device),
                attention_mask=batch["attention_mask"].to(self.model.device),
                decoder_input_ids=labels_decoder[:, : relation_start.max()].to(self.model.device),
                use_cache=True,
                **gen_kwargs,
            )
        relation_start = generated_tokens == 50265
        relation_start = torch.roll(relation_start, 2, 1)

        decoded_preds = self.tokenizer.batch_decode(
            generated_tokens[relation_start == 1], skip_special_tokens=False
        )

        return [rel.strip() for rel in decoded_preds]

    def forward_samples(self, batch, labels) -> None:
        relation_start = labels == 50265
        relation_start = torch.roll(relation_start, 2, 1)
        labels = torch.where(torch.cumsum(relation_start, dim=1) == 1, self.tokenizer.pad_token_id, labels)
        labels[:, -1] = 0
        labels = torch.roll(labels, 1, 1)
        min_padding = min(torch.sum((labels == 1).int(), 1))
        labels_decoder = torch.randint(60000, (labels.shape[0], labels.shape[1] - min_padding))
        labels_decoder = labels[:, :-min_padding]
        outputs = self.model(
            **{
                "input_ids": batch["input_ids"],
                "attention_mask": batch["attention_mask"],
                "decoder_input_ids": labels_decoder.to(self.model.device),
            },
            return_dict=True,
        )
        next_token_logits = outputs.logits[relation_start[:, :-min_padding] == 1]
        decoded_preds = self.tokenizer.batch_decode(next_token_logits.argmax(1), skip_special_tokens=False)
        return [rel.strip() for rel in decoded_preds]

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        gen_kwargs = {
            "max_length": self.hparams.val_max_target_length
            if self.hparams.val_max_target_length is not None
            else self.config.max_length,
            "early_stopping": False,
            "no_repeat_ngram_size": 0,
            "length_penalty": 0,
            "num_beams": self.hparams.eval_beams if self.hparams.eval_beams is not None else self.config.num_beams,
        }

        if self.hparams.predict_with_generate and not self.hparams.prediction_loss_only:
            generated_tokens = self.model.generate(
                batch["input_ids"],
                attention_mask=batch["attention_mask"],
                **gen_kwargs,
            )
            # in case the batch is shorter than max length, the output should be padded
            if generated_tokens.shape[-1] < gen_kwargs["max_length"]:
                generated_tokens = self._pad_tensors_to_max_len(generated_tokens, gen_kwargs["max_length"])

        labels = batch.pop("labels")
        batch["decoder_input_ids"] = torch.where(labels != -100, labels, self.config.pad_token_id)
        batch["decoder_input_ids"] = shift_tokens_left(batch["decoder_input_ids"], -100)
        with torch.no_grad():
            # compute loss on predict data
            forward_output = self.forward(batch, labels)

        forward_output["loss"] = forward_output["loss"].mean().detach()

        if self.hparams.prediction_loss_only:
            self.log("val_loss", forward_output["loss"])
            return

        forward_output["logits"] = (
            generated_tokens.detach() if self.hparams.predict_with_generate else forward_output["logits"].detach()
        )

        if labels.shape[-1] < gen_kwargs["max_length"]:
            forward_output["labels"] = self._pad_tensors_to_max_len(labels, gen_kwargs["max_length"])
        else:
            forward_output["labels"] = labels

        if self.hparams.predict_with_generate:
            metrics = {}
            metrics["val_loss"] = forward_output["loss"]
            for key in sorted(metrics.keys()):
                self.log(key, metrics[key])
            outputs = {}
            outputs["predictions"], outputs["labels"] = self.generate_triples(batch, labels)
            return outputs
        else:
            self.log("val_loss", forward_output["loss"])
            return forward_output

    def validation_epoch_end(self, output: dict) -> Any:
        if not self.hparams.predict_with_generate:
            return
        dataset_file = self.hparams.dataset_name.split("/")[-1]
        if dataset_file == "conll04_typed.py":
            relations = ["killed by", "residence", "location", "headquarters location", "employer"]
            scores, precision, recall, f1 = re_score(
                [item for pred in output for item in pred["predictions"]],
                [item for pred in output for item in pred["labels"]],
                relations,
                "strict",
            )
        elif dataset_file == "nyt_typed.py":
            scores, precision, recall, f1 = re_score(
                [item for pred in output for item in pred["predictions"]],
                [item for pred in output for item in pred["labels"]],
                list(relations_nyt.values()),
                "strict",
            )
        else:
            scores, precision, recall, f1 = re_score(
                [item for pred in output for item in pred["predictions"]],
                [item for pred in output for item in pred["labels"]],
                ["no_relation"],
                "micro",
            )
        self.log("val_prec_micro", precision, sync_dist=True)
        self.log("val_recall_micro", recall, sync_dist=True)
        self.log("val_F1_micro", f1, sync_dist=True)
        # beam search on long documents fragments the caching allocator badly
        torch.cuda.empty_cache()

    def test_step(self, batch: dict, batch_idx: int) -> None:
        return self.validation_step(batch, batch_idx)

    def test_epoch_end(self, output: dict) -> Any:
        self.validation_epoch_end(output)
        with open(f"preds_{self.hparams.model_name}.jsonl", "w") as f:
            for pred in output:
                for p, l in zip(pred["predictions"], pred["labels"]):
                    f.write(json.dumps({"prediction": p, "gold": l}) + "\n")

    def configure_optimizers(self):
        """
        FROM PYTORCH LIGHTNING DOCUMENTATION

        Choose what optimizers and learning-rate schedulers to use in your optimization.
        Normally you'd need one. But in the case of GANs or similar you might have multiple.

        Return:
            Any of these 6 options.

            - Single optimizer.
            - List or Tuple - List of optimizers.
            - Two lists - The first list has multiple optimizers, the second a list of LR schedulers (or lr_dict).
            - Dictionary, with an 'optimizer' key, and (optionally) a 'lr_scheduler'
              key whose value is a single LR scheduler or lr_dict.
            - Tuple of dictionaries as described, with an optional 'frequency' key.
            - None - Fit will run without any optimizer.
        """
        no_decay = ["bias", "LayerNorm.weight"]
        optimizer_grouped_parameters = [
            {
                "params": [p for n, p in self.model.named_parameters() if not any(nd in n for nd in no_decay)],
                "weight_decay": self.hparams.weight_decay,
            },
            {
                "params": [p for n, p in self.model.named_parameters() if any(nd in n for nd in no_decay)],
                "weight_decay": 0.0,
            },
        ]
        if self.hparams.adafactor:
            optimizer_cls = Adafactor
            optimizer_kwargs = {"scale_parameter": False, "relative_step": False}
        else:
            optimizer_cls = AdamW
            optimizer_kwargs = {
                "betas": (self.hparams.adam_beta1, self.hparams.adam_beta2),
                "eps": self.hparams.adam_epsilon,
            }

        optimizer_kwargs["lr"] = self.hparams.learning_rate

        self.optimizer = optimizer_cls(optimizer_grouped_parameters, **optimizer_kwargs)

        lr_scheduler = self._get_lr_scheduler(self.hparams.max_steps, self.optimizer)

        return [self.optimizer], [{"interval": "step", "scheduler": lr_scheduler}]

    def _get_lr_scheduler(self, num_training_steps, optimizer):
        schedule_func = arg_to_scheduler[self.hparams.lr_scheduler]
        if self.hparams.lr_scheduler == "constant":
            scheduler = schedule_func(optimizer)
        elif self.hparams.lr_scheduler == "constant_w_warmup":
            scheduler = schedule_func(optimizer, num_warmup_steps=self.hparams.warmup_steps)
        elif self.hparams.lr_scheduler == "inverse_square_root":
            scheduler = schedule_func(optimizer, num_warmup_steps=self.hparams.warmup_steps)
        else:
            scheduler = schedule_func(
                optimizer, num_warmup_steps=self.hparams.warmup_steps, num_training_steps=num_training_steps
            )
        return scheduler

    def compute_metrics(self, preds, labels):
        metric_name = "rouge"  # if self.hparams.task.startswith("summarization") else "bleu"
        metric_fn = score
        decoded_preds = self.tokenizer.batch_decode(preds, skip_special_tokens=True)
        if self.hparams.ignore_pad_token_for_loss:
            # Replace -100 in the labels as we can't decode them.
            labels = np.where(labels != -100, labels, self.tokenizer.pad_token_id)
        decoded_labels = self.tokenizer.batch_decode(labels, skip_special_tokens=True)
        result = metric_fn(decoded_preds, decoded_labels)
        prediction_lens = [np.count_nonzero(pred != self.tokenizer.pad_token_id) for pred in preds]
        result["gen_len"] = np.mean(prediction_lens)
        result = {k: round(v, 4) for k, v in result.items()}
        return {metric_name: result}
