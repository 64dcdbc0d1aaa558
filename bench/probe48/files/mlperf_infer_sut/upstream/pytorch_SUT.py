# coding=utf-8
# Copyright 2021 Arm Limited and affiliates.
# Copyright (c) 2020 NVIDIA CORPORATION. All rights reserved.
# Copyright 2020 The MLPerf Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""PyTorch system-under-test for the MLPerf Inference BERT-99 benchmark (LoadGen callbacks)."""

import array
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.getcwd(), "DeepLearningExamples", "PyTorch", "LanguageModeling", "BERT"))
sys.path.insert(0, os.getcwd())

import mlperf_loadgen as lg
import numpy as np
import torch
import transformers
from transformers import BertConfig, BertForQuestionAnswering
from squad_QSL import get_squad_QSL


class BERT_PyTorch_SUT():
    def __init__(self, args):
        print("Loading BERT configs...")
        with open("bert_config.json") as f:
            config_json = json.load(f)

        config = BertConfig(
            attention_probs_dropout_prob=config_json["attention_probs_dropout_prob"],
            hidden_act=config_json["hidden_act"],
            hidden_dropout_prob=config_json["hidden_dropout_prob"],
            hidden_size=config_json["hidden_size"],
            initializer_range=config_json["initializer_range"],
            intermediate_size=config_json["intermediate_size"],
            max_position_embeddings=config_json["max_position_embeddings"],
            num_attention_heads=config_json["num_attention_heads"],
            num_hidden_layers=config_json["num_hidden_layers"],
            type_vocab_size=config_json["type_vocab_size"],
            vocab_size=config_json["vocab_size"])

        self.network = args.network
        self.dev = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
        self.version = transformers.__version__
        self.fp16 = args.fp16
        self.batch_size = args.max_batchsize
        self.latencies = []

        print("Loading PyTorch model...")
        self.model = BertForQuestionAnswering(config)
        self.model.to(self.dev)
        self.model.eval()
        model_file = os.environ.get("ML_MODEL_FILE_WITH_PATH", "build/data/bert_tf_v1_1_large_fp32_384_v2/model.pytorch")
        self.model.load_state_dict(torch.load(model_file, map_location=self.dev), strict=False)
        if self.fp16:
            self.model.half()

        print("Constructing SUT...")
        self.sut = lg.ConstructSUT(self.issue_queries, self.flush_queries)
        print("Finished constructing SUT.")

        self.qsl = get_squad_QSL(args.max_examples)
        self._warmup()

    def _warmup(self, n=8):
        dummy = torch.ones((1, 384), dtype=torch.int64, device=self.dev)
        with torch.inference_mode():
            for _ in range(n):
                self.model(input_ids=dummy, attention_mask=dummy, token_type_ids=torch.zeros_like(dummy))
        torch.cuda.synchronize()

    def issue_queries(self, query_samples):
        if len(query_samples) == 1:
            self._process_one(query_samples[0])
            return
        for i in range(0, len(query_samples), self.batch_size):
            self._process_batch(query_samples[i:i + self.batch_size])

    def _process_one(self, query_sample):
        eval_features = self.qsl.get_features(query_sample.index)
        t0 = time.perf_counter()
        with torch.inference_mode():
            model_output = self.model.forward(
                input_ids=torch.LongTensor(eval_features.input_ids).unsqueeze(0).cuda(),
                attention_mask=torch.LongTensor(eval_features.input_mask).unsqueeze(0).cuda(),
                token_type_ids=torch.LongTensor(eval_features.segment_ids).unsqueeze(0).cuda())
            start_scores = model_output.start_logits
            end_scores = model_output.end_logits
            output = torch.stack([start_scores, end_scores], axis=-1).squeeze(0).cpu().numpy()
        self.latencies.append(time.perf_counter() - t0)
        response_array = array.array("B", output.tobytes())
        bi = response_array.buffer_info()
        response = lg.QuerySampleResponse(query_sample.id, bi[0], bi[1])
        lg.QuerySamplesComplete([response])

    def _process_batch(self, samples):
        feats = [self.qsl.get_features(s.index) for s in samples]
        input_ids = torch.tensor([f.input_ids for f in feats], dtype=torch.int64).to(self.dev, non_blocking=True)
        input_mask = torch.tensor([f.input_mask for f in feats], dtype=torch.int64).to(self.dev, non_blocking=True)
        segment_ids = torch.tensor([f.segment_ids for f in feats], dtype=torch.int64).to(self.dev, non_blocking=True)
        t0 = time.perf_counter()
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16, enabled=self.fp16):
            out = self.model(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids)
        logits = torch.stack([out.start_logits, out.end_logits], dim=-1).float().cpu().numpy()
        self.latencies.append((time.perf_counter() - t0) / len(samples))
        responses, keepalive = [], []
        for s, row in zip(samples, logits):
            buf = array.array("B", row.tobytes())
            keepalive.append(buf)
            bi = buf.buffer_info()
            responses.append(lg.QuerySampleResponse(s.id, bi[0], bi[1]))
        lg.QuerySamplesComplete(responses)

    def flush_queries(self):
        pass

    def report(self):
        if not self.latencies:
            return
        lat = np.array(self.latencies) * 1e3
        print(f"device: {torch.cuda.get_device_name(0)}  transformers {self.version}")
        print(f"p50 {np.percentile(lat, 50):.2f} ms  p90 {np.percentile(lat, 90):.2f} ms  "
              f"p99 {np.percentile(lat, 99):.2f} ms  n={len(lat)}")

    def __del__(self):
        self.report()
        lg.DestroySUT(self.sut)
        print("Finished destroying SUT.")


def get_pytorch_sut(args):
    return BERT_PyTorch_SUT(args)
