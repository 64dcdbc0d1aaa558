// Configuration for the BiDAF + ELMo reading-comprehension model on SQuAD 1.1,
// modified from allennlp-models' bidaf_elmo.jsonnet.
//
//   allennlp train training_config/bidaf_elmo.jsonnet -s /tmp/bidaf_elmo \
//       --include-package my_project
//
// Set CUDA_DEVICE=-1 to train on CPU; use the distributed block for multi-GPU.

local cuda_device = std.parseInt(std.extVar("CUDA_DEVICE"));
local use_distributed = std.extVar("DISTRIBUTED") == "1";
local num_gpus = 4;

local elmo_options = "https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway/elmo_2x4096_512_2048cnn_2xhighway_options.json";
local elmo_weights = "https://allennlp.s3.amazonaws.com/models/elmo/2x4096_512_2048cnn_2xhighway/elmo_2x4096_512_2048cnn_2xhighway_weights.hdf5";

{
  "dataset_reader": {
    "type": "squad",
    "token_indexers": {
      "tokens": {
        "type": "single_id",
        "lowercase_tokens": true
      },
      "token_characters": {
        "type": "characters",
        "character_tokenizer": {
          "byte_encoding": "utf-8",
          "start_tokens": [259],
          "end_tokens": [260]
        },
        "min_padding_length": 5
      },
      "elmo": {
        "type": "elmo_characters"
      }
    }
  },
  "train_data_path": "https://allennlp.s3.amazonaws.com/datasets/squad/squad-train-v1.1.json",
  "validation_data_path": "https://allennlp.s3.amazonaws.com/datasets/squad/squad-dev-v1.1.json",
  "model": {
    "type": "bidaf",
    "text_field_embedder": {
      "token_embedders": {
        "tokens": {
          "type": "embedding",
          "pretrained_file": "https://allennlp.s3.amazonaws.com/datasets/glove/glove.6B.100d.txt.gz",
          "embedding_dim": 100,
          "trainable": false
        },
        "token_characters": {
          "type": "character_encoding",
          "embedding": {
            "num_embeddings": 262,
            "embedding_dim": 16
          },
          "encoder": {
            "type": "cnn",
            "embedding_dim": 16,
            "num_filters": 100,
            "ngram_filter_sizes": [5]
          },
          "dropout": 0.2
        },
        "elmo": {
          "type": "elmo_token_embedder",
          "options_file": elmo_options,
          "weight_file": elmo_weights,
          "do_layer_norm": false,
          "dropout": 0.0
        }
      }
    },
    "num_highway_layers": 2,
    "phrase_layer": {
      "type": "lstm",
      "bidirectional": true,
      "input_size": 1224,
      "hidden_size": 100,
      "num_layers": 1
    },
    "matrix_attention": {
      "type": "linear",
      "combination": "x,y,x*y",
      "tensor_1_dim": 200,
      "tensor_2_dim": 200
    },
    "modeling_layer": {
      "type": "lstm",
      "bidirectional": true,
      "input_size": 800,
      "hidden_size": 100,
      "num_layers": 2,
      "dropout": 0.2
    },
    "span_end_encoder": {
      "type": "gru",
      "bidirectional": true,
      "input_size": 1400,
      "hidden_size": 100,
      "num_layers": 2,
      "dropout": 0.2
    },
    "dropout": 0.2
  },
  "data_loader": {
    "batch_sampler": {
      "type": "bucket",
      "batch_size": 40
    },
    "num_workers": 2,
    "pin_memory": true
  },
  [if use_distributed then "distributed"]: {
    "cuda_devices": std.range(0, num_gpus - 1),
    "ddp_accelerator": {
      "type": "fairscale_fsdp",
      "mixed_precision": true,
      "cpu_offload": false
    }
  },
  "trainer": {
    "num_epochs": 20,
    "grad_norm": 5.0,
    "patience": 10,
    "validation_metric": "+em",
    [if !use_distributed then "cuda_device"]: cuda_device,
    "use_amp": true,
    "learning_rate_scheduler": {
      "type": "reduce_on_plateau",
      "factor": 0.5,
      "mode": "max",
      "patience": 2
    },
    "optimizer": {
      "type": "adam",
      "betas": [0.9, 0.9]
    }
  }
}
