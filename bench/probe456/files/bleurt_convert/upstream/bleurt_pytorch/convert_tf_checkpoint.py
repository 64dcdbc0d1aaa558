#!/usr/bin/env python3
"""Convert an original google-research/bleurt TensorFlow checkpoint to PyTorch.

    python -m bleurt_pytorch.convert_tf_checkpoint \
        --tf_checkpoint_dir BLEURT-20-D12/ --output_dir converted/BLEURT-20-D12

Reads variables with ``tf.train.load_checkpoint`` (CPU only; no GPU is needed for
conversion) and writes a HuggingFace-style directory (config.json,
pytorch_model.bin, sentencepiece / wordpiece vocabulary).
"""
import argparse
import json
import logging
import os
import shutil

import numpy as np
import torch

from bleurt_pytorch.bleurt.configuration_bleurt import BleurtConfig
from bleurt_pytorch.bleurt.modeling_bleurt import BleurtForSequenceClassification

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger(__name__)

# TF variable prefix -> PyTorch module prefix
NAME_MAP = [
    ("bert/embeddings/word_embeddings", "bleurt.embeddings.word_embeddings.weight"),
    ("bert/embeddings/position_embeddings", "bleurt.embeddings.position_embeddings.weight"),
    ("bert/embeddings/token_type_embeddings", "bleurt.embeddings.token_type_embeddings.weight"),
    ("bert/embeddings/LayerNorm/gamma", "bleurt.embeddings.LayerNorm.weight"),
    ("bert/embeddings/LayerNorm/beta", "bleurt.embeddings.LayerNorm.bias"),
    ("bert/embeddings/embedding_projection/kernel", "bleurt.embeddings.embedding_projection.weight"),
    ("bert/embeddings/embedding_projection/bias", "bleurt.embeddings.embedding_projection.bias"),
    ("bert/pooler/dense/kernel", "bleurt.pooler.dense.weight"),
    ("bert/pooler/dense/bias", "bleurt.pooler.dense.bias"),
    ("cls/regression/kernel", "classifier.weight"),
    ("cls/regression/bias", "classifier.bias"),
]

LAYER_MAP = [
    ("attention/self/query/kernel", "attention.self.query.weight"),
    ("attention/self/query/bias", "attention.self.query.bias"),
    ("attention/self/key/kernel", "attention.self.key.weight"),
    ("attention/self/key/bias", "attention.self.key.bias"),
    ("attention/self/value/kernel", "attention.self.value.weight"),
    ("attention/self/value/bias", "attention.self.value.bias"),
    ("attention/output/dense/kernel", "attention.output.dense.weight"),
    ("attention/output/dense/bias", "attention.output.dense.bias"),
    ("attention/output/LayerNorm/gamma", "attention.output.LayerNorm.weight"),
    ("attention/output/LayerNorm/beta", "attention.output.LayerNorm.bias"),
    ("intermediate/dense/kernel", "intermediate.dense.weight"),
    ("intermediate/dense/bias", "intermediate.dense.bias"),
    ("output/dense/kernel", "output.dense.weight"),
    ("output/dense/bias", "output.dense.bias"),
    ("output/LayerNorm/gamma", "output.LayerNorm.weight"),
    ("output/LayerNorm/beta", "output.LayerNorm.bias"),
]


def read_bleurt_config(tf_dir):
    with open(os.path.join(tf_dir, "bleurt_config.json")) as f:
        bleurt_cfg = json.load(f)
    with open(os.path.join(tf_dir, bleurt_cfg.get("bert_config_file", "bert_config.json"))) as f:
        bert_cfg = json.load(f)
    return bleurt_cfg, bert_cfg


def build_config(bleurt_cfg, bert_cfg):
    return BleurtConfig(
        vocab_size=bert_cfg["vocab_size"],
        hidden_size=bert_cfg["hidden_size"],
        num_hidden_layers=bert_cfg["num_hidden_layers"],
        num_attention_heads=bert_cfg["num_attention_heads"],
        intermediate_size=bert_cfg["intermediate_size"],
        hidden_act=bert_cfg.get("hidden_act", "gelu"),
        hidden_dropout_prob=bert_cfg.get("hidden_dropout_prob", 0.1),
        attention_probs_dropout_prob=bert_cfg.get("attention_probs_dropout_prob", 0.1),
        max_position_embeddings=bert_cfg["max_position_embeddings"],
        type_vocab_size=bert_cfg.get("type_vocab_size", 2),
        input_embedding_size=bert_cfg.get("embedding_size", bert_cfg["hidden_size"]),
        max_seq_length=bleurt_cfg.get("max_seq_length", 512),
        num_labels=1,
    )


def tf_to_state_dict(tf_dir, num_layers):
    import tensorflow as tf  # only needed for conversion

    reader = tf.train.load_checkpoint(os.path.join(tf_dir, "variables", "variables"))
    shapes = reader.get_variable_to_shape_map()

    def get(name):
        for key in shapes:
            if key.endswith(name):
                return reader.get_tensor(key)
        raise KeyError(name)

    state_dict = {}
    for tf_name, pt_name in NAME_MAP:
        try:
            value = get(tf_name)
        except KeyError:
            logger.info("skipping missing variable %s", tf_name)
            continue
        if tf_name.endswith("kernel"):
            value = np.transpose(value)
        state_dict[pt_name] = torch.from_numpy(np.ascontiguousarray(value))

    for i in range(num_layers):
        for tf_name, pt_name in LAYER_MAP:
            value = get(f"bert/encoder/layer_{i}/{tf_name}")
            if tf_name.endswith("kernel"):
                value = np.transpose(value)
            state_dict[f"bleurt.encoder.layer.{i}.{pt_name}"] = torch.from_numpy(np.ascontiguousarray(value))
    return state_dict


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tf_checkpoint_dir", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--check", action="store_true", help="Reload the converted model and run one forward pass.")
    args = parser.parse_args()

    bleurt_cfg, bert_cfg = read_bleurt_config(args.tf_checkpoint_dir)
    config = build_config(bleurt_cfg, bert_cfg)
    model = BleurtForSequenceClassification(config)

    state_dict = tf_to_state_dict(args.tf_checkpoint_dir, config.num_hidden_layers)
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    logger.info("missing keys: %s", missing)
    logger.info("unexpected keys: %s", unexpected)

    os.makedirs(args.output_dir, exist_ok=True)
    model.save_pretrained(args.output_dir)
    for vocab in ("vocab.txt", "sent_piece.model", "sent_piece.vocab"):
        src = os.path.join(args.tf_checkpoint_dir, vocab)
        if os.path.exists(src):
            shutil.copy(src, args.output_dir)

    if args.check:
        reloaded = BleurtForSequenceClassification.from_pretrained(args.output_dir)
        state = torch.load(os.path.join(args.output_dir, "pytorch_model.bin"), map_location="cpu")
        assert set(state) == set(reloaded.state_dict())
        dummy = torch.randint(0, config.vocab_size, (2, 16))
        with torch.no_grad():
            out = reloaded(input_ids=dummy).logits
        logger.info("sanity forward ok, logits shape %s", tuple(out.shape))

    logger.info("converted checkpoint written to %s", args.output_dir)


if __name__ == "__main__":
    main()
