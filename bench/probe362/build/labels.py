"""Labels for probe362 (Text-to-SQL and table question answering, CUDA -> Ascend NPU).

One entry per upstream file; one change per line a careful porter would edit for an explicit
torch_npu port (torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy.
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
CAUSAL_MASK = "torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device={dev}), diagonal=1)"

# ---------------------------------------------------------------------------------------------
# RAT-SQL (microsoft/rat-sql)
# ---------------------------------------------------------------------------------------------
E("ratsql_train", "ratsql/commands/train.py", "explicit_replacement",
  "microsoft/rat-sql ratsql/commands/train.py (Trainer picks cuda/cpu in __init__)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Project pins torch 1.5-era stack (ported to torch 1.11 + torch_npu 1.11); no device-backend autoload before "
      "torch_npu 2.5.1, so torch.npu does not exist until torch_npu is imported. train.py is an entry point "
      "(python -m ratsql.commands.train) and also the first command module run.py imports."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Unported it is False on an NPU host and the whole model silently trains on the CPU."),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Device handed to registry.construct, model.to and saver.restore(map_location=...)."),
])

E("ratsql_infer", "ratsql/commands/infer.py", "explicit_replacement",
  "microsoft/rat-sql ratsql/commands/infer.py (Inferer device selection, beam search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "infer.py has its own __main__ (python -m ratsql.commands.infer); with torch 1.11 torch.npu needs the import."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Otherwise inference falls into the CPU branch (and torch.set_num_threads(1)) without any error."),
    C("self.device = torch.device('cuda')", "device_type", "replace", True,
      "self.device = torch.device('npu')",
      "Also used as map_location when restoring the checkpoint."),
])

E("ratsql_transformer", "ratsql/models/transformer.py", "explicit_replacement",
  "microsoft/rat-sql ratsql/models/transformer.py (relation-aware self-attention, pure torch)", [])

E("ratsql_enc_modules", "ratsql/models/spider/spider_enc_modules.py", "explicit_replacement",
  "microsoft/rat-sql ratsql/models/spider/spider_enc_modules.py (device passed in, BiLSTM, RAT update)", [])

E("ratsql_dockerfile", "Dockerfile", "explicit_replacement",
  "microsoft/rat-sql Dockerfile (pytorch/pytorch CUDA base image)", [
    C("FROM pytorch/pytorch:1.5-cuda10.1-cudnn7-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.rc2-910b-ubuntu22.04-py3.9",
      "The CUDA/cuDNN base image carries a CUDA build of torch and no CANN toolkit; an NPU container needs a CANN "
      "base (plus the host driver mounted at run time). The exact image tag is unconfirmed in the knowledge base; "
      "CANN 8.0.RC2 pairs with torch_npu 1.11.0.post14 per the compatibility matrix."),
    C("RUN pip install --user -r requirements.txt --no-warn-script-location", "import_torch_npu",
      "npu_only_addition", True,
      "RUN pip install --user torch==1.11.0 torch-npu==1.11.0.post14",
      "The new base image has no torch; requirements.txt relies on the base image for it. Insert before the "
      "requirements install."),
])

# ---------------------------------------------------------------------------------------------
# RESDSQL (RUCKBReasoning/RESDSQL)
# ---------------------------------------------------------------------------------------------
E("resdsql_classifier", "schema_item_classifier.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL schema_item_classifier.py (RoBERTa cross-encoder, --device -> CUDA_VISIBLE_DEVICES)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; torch 1.11 + torch_npu 1.11 has no autoload."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Guard for moving the batch; unported the batch stays on the CPU while the model is on the NPU."),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", ".cuda() asserts 'Torch not compiled with CUDA enabled'."),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ""),
    C("[column_labels.cuda() for", "tensor_to_device", "replace", True,
      "batch_aligned_column_labels = [column_labels.npu() for column_labels in batch_aligned_column_labels]",
      "Labels feed the focal loss together with NPU logits."),
    C("[table_labels.cuda() for", "tensor_to_device", "replace", True,
      "batch_aligned_table_labels = [table_labels.npu() for table_labels in batch_aligned_table_labels]", ""),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.device',
      "--device is the only device selector; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so every run "
      "lands on NPU 0 (parallel jobs collide). Set before the first NPU call; whether the runtime honours a value "
      "set after import torch_npu but before device init is unconfirmed - exporting it in the launcher is safer."),
    C("model = model.cuda() if torch.cuda.is_available() else model", "tensor_to_device", "replace", True,
      "model = model.npu() if torch.npu.is_available() else model",
      "Unported the guard is False and training runs on the CPU silently."),
    C("optimizer = optim.AdamW(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(",
      "Performance only: tensor-fused AdamW (same defaults incl. weight_decay=1e-2), as msFmkTransplt advises for "
      "torch.optim.AdamW; costs extra device memory."),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = opt.device", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = opt.device", "Same as the training path, for eval/test mode."),
    C("if torch.cuda.is_available(): model = model.cuda()", "tensor_to_device", "replace", True,
      "if torch.npu.is_available(): model = model.npu()",
      "map_location=torch.device('cpu') on the line above stays as is."),
])

E("resdsql_text2sql", "text2sql.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL text2sql.py (T5 seq2seq fine-tuning with Adafactor, beam-search decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "Entry script; torch 1.11 has no torch_npu autoload."),
    C('=os.environ["CUDA_VISIBLE_DEVICES"] = opt.device', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.device',
      "Device selection for training (T5-3B needs the whole card, the launcher picks it with --device)."),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "Else T5 trains on the CPU without complaint."),
    C("=model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()", ""),
    C('if model.device.type == "cuda":', "device_type", "replace", True,
      'if model.device.type == "npu":',
      "Device-type string comparison: unported it is False on NPU, the batch stays on the CPU and the forward "
      "raises a device-mismatch error."),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", ""),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ""),
    C("decoder_labels = decoder_labels.cuda()", "tensor_to_device", "replace", True,
      "decoder_labels = decoder_labels.npu()", ""),
    C("decoder_attention_mask = decoder_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "decoder_attention_mask = decoder_attention_mask.npu()", ""),
    C("restrict inference to the selected GPU", "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = opt.device  # restrict inference to the selected NPU',
      "Eval/test path."),
    C("use_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_gpu = torch.npu.is_available()",
      "Flag reused by the two `if use_gpu:` blocks below, which need no edit themselves."),
    C('model = model.to("cuda")', "tensor_to_device", "replace", True,
      'model = model.to("npu")', ""),
    C('encoder_input_ids = encoder_input_ids.to("cuda")', "tensor_to_device", "replace", True,
      'encoder_input_ids = encoder_input_ids.to("npu")', ""),
    C('encoder_input_attention_mask = encoder_input_attention_mask.to("cuda")', "tensor_to_device", "replace", True,
      'encoder_input_attention_mask = encoder_input_attention_mask.to("npu")', ""),
])

E("resdsql_cls_model", "utils/classifier_model.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL utils/classifier_model.py (BiLSTM pooling + table-column cross-attention)", [])

E("resdsql_load_dataset", "utils/load_dataset.py", "explicit_replacement",
  "RUCKBReasoning/RESDSQL utils/load_dataset.py (plain Dataset classes)", [])

E("resdsql_train_sh", "scripts/train/text2sql/train_text2sql_t5_3b.sh", "explicit_replacement",
  "RUCKBReasoning/RESDSQL scripts/train/text2sql/train_text2sql_t5_3b.sh (pipeline launcher, --device \"0\")", [
    C("=set -e", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN environment (library paths, ASCEND_* variables) must be loaded before python imports torch_npu. "
      "The --device \"0\" flags need no edit once the Python side maps them to ASCEND_RT_VISIBLE_DEVICES."),
])

E("resdsql_requirements", "requirements.txt", "explicit_replacement",
  "RUCKBReasoning/RESDSQL requirements (torch 1.11.0+cu113 wheels from the PyTorch CUDA index)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "With the cu113 index still listed, pip on x86 resolves torch==1.11.0 to the local 1.11.0+cu113 CUDA build; "
      "torch_npu expects the CPU wheel on x86 (plain PyPI on aarch64)."),
    C("torch==1.11.0+cu113", "import_torch_npu", "replace", True,
      "torch==1.11.0",
      "No +cu113 wheel exists for aarch64 Ascend hosts; torch_npu 1.11.0.post14 pairs with torch 1.11.0."),
    C("torchvision==0.12.0+cu113", "import_torch_npu", "replace", True,
      "torchvision==0.12.0", "CUDA-built torchvision cannot load against a CPU torch."),
    C("torchaudio==0.11.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==1.11.0.post14",
      "Add the adapter next to the torch pins (torch_npu 1.11.0.post14 = branch v1.11.0-6.0.rc2, CANN 8.0.RC2)."),
])

# ---------------------------------------------------------------------------------------------
# TaPEx (microsoft/Table-Pretraining)
# ---------------------------------------------------------------------------------------------
E("tapex_interface", "tapex/model_interface.py", "explicit_replacement",
  "microsoft/Table-Pretraining tapex/model_interface.py (fairseq BART hub interface for online table QA)", [
    C("from fairseq.models.bart import BARTModel", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The module never imports torch itself; Module.npu() only exists after torch_npu is imported (fairseq-era "
      "torch, no autoload)."),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model = self.model.npu()",
      "The hub interface moves inputs to the device of its parameters, so this is the only device line."),
])

E("tapex_run_model", "examples/tableqa/run_model.py", "explicit_replacement",
  "microsoft/Table-Pretraining examples/tableqa/run_model.py (fairseq-train / fairseq-generate wrappers)", [])

E("tapex_linearize", "tapex/processor/table_linearize.py", "explicit_replacement",
  "microsoft/Table-Pretraining tapex/processor/table_linearize.py (table flattening, no torch)", [])

E("tapex_truncate", "tapex/processor/table_truncate.py", "explicit_replacement",
  "microsoft/Table-Pretraining tapex/processor/table_truncate.py (cell/row truncation with the BART tokenizer)", [])

# ---------------------------------------------------------------------------------------------
# TaBERT (facebookresearch/TaBERT)
# ---------------------------------------------------------------------------------------------
E("tabert_train", "train.py", "explicit_replacement",
  "facebookresearch/TaBERT train.py (fairseq Adam/FP16 optimizers, torch.distributed.launch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; utils/comm.py (imported from here) calls torch.npu.* after the port."),
    C("device = torch.device(f'cuda:{torch.cuda.current_device()}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{torch.npu.current_device()}')",
      "torch.cuda.current_device() raises on a CPU-only torch build; the device string feeds model.to and "
      "every batch .to(device)."),
    C("storage.cuda(args.local_rank)", "tensor_to_device", "replace", True,
      "state = torch.load(args.resume, map_location=f'npu:{args.local_rank}')",
      "map_location lambda calls storage.cuda(); rewritten to a device string."),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Unported it is a silent no-op (CUDA never initialised); only memory headroom is affected, not results."),
    C("mem_gb = torch.cuda.max_memory_allocated(device) / 1024 ** 3", "torch_cuda_api", "replace", True,
      "mem_gb = torch.npu.max_memory_allocated(device) / 1024 ** 3",
      "Unported it returns 0 without error (memory stats of an uninitialised CUDA) - the progress bar reports "
      "wrong numbers."),
])

E("tabert_comm", "utils/comm.py", "explicit_replacement",
  "facebookresearch/TaBERT utils/comm.py (SLURM/torch.distributed.launch init, pickled all_gather)", [
    C("int(os.environ.get('NGPU', torch.cuda.device_count()))", "torch_cuda_api", "replace", True,
      "args.n_gpu_per_node = int(os.environ.get('NGPU', torch.npu.device_count()))",
      "torch.cuda.device_count() is 0 on an NPU host -> ZeroDivisionError in world_size // n_gpu_per_node."),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "Raises on CPU-only torch (no torch._C._cuda_setDevice); needed so each rank binds its own NPU before HCCL init."),
    C("backend='nccl',", "dist_backend", "replace", True,
      "backend='hccl',", "NCCL is not available in the torch build used with torch_npu."),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "HCCL collectives need NPU tensors. uint8 all_gather support in HCCL is assumed, not confirmed."),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', ""),
    C('size_list = [torch.LongTensor([0]).to("cuda")', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', ""),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', ""),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', ""),
])

E("tabert_utils", "table_bert/utils.py", "explicit_replacement",
  "facebookresearch/TaBERT table_bert/utils.py (pytorch_pretrained_bert / transformers shim, apex LayerNorm)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm",
      "unsupported_op_workaround", "replace", False,
      "from torch.nn import LayerNorm as BertLayerNorm",
      "Without apex the ImportError fallback (python LayerNorm) already works, so not required. Replacing it gives "
      "the native NPU layer_norm kernel instead of 5 elementwise ops, and avoids Ascend's apex patch, which ships "
      "no fused_layer_norm_cuda (whether apex.normalization still imports there is unconfirmed)."),
])

E("tabert_vertical", "table_bert/vertical/vertical_attention_table_bert.py", "explicit_replacement",
  "facebookresearch/TaBERT table_bert/vertical/vertical_attention_table_bert.py (vertical self-attention)", [])

E("tabert_env", "scripts/env.yml", "explicit_replacement",
  "facebookresearch/TaBERT scripts/env.yml (conda env with pytorch + cudatoolkit)", [
    C("- python=3.6", "import_torch_npu", "replace", True,
      "- python=3.8",
      "torch 1.11 / torch_npu 1.11 wheels need Python >= 3.7.5 (compatibility table: 3.7-3.10)."),
    C("- pytorch=1.3.1", "import_torch_npu", "removal", True, None,
      "Conda's pytorch-channel build is CUDA-linked and x86-only, and torch_npu has no conda package; torch moves "
      "to the pip section next to torch-npu."),
    C("- cudatoolkit=10.1", "import_torch_npu", "removal", True, None,
      "No use on an Ascend host and no aarch64 build of this version - the env would not solve."),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      '    - "torch==1.11.0"',
      "Inserted as the first pip entry (pip wheel, CPU build on x86 / PyPI on aarch64)."),
    C('"pytorch-pretrained-bert~=0.6.2"', "import_torch_npu", "npu_only_addition", True,
      '    - "torch-npu==1.11.0.post14"',
      "The adapter itself (CANN 8.0.RC2). fairseq 0.8.0 on torch 1.11 is not verified here."),
])

E("tabert_launch", "scripts/train_vertical_attention.sh", "explicit_replacement",
  "facebookresearch/TaBERT pre-training launcher (torch.distributed.launch, nvidia-smi GPU count)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      SET_ENV,
      "Insert BEFORE `set -u`: set_env.sh expands variables such as LD_LIBRARY_PATH that may be unset, which "
      "aborts a nounset shell."),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "Device subset selection is silently lost otherwise (the default of all eight happens to match)."),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "nvidia-smi does not exist -> empty --nproc_per_node and the launch fails. Counting via torch.npu also "
      "honours ASCEND_RT_VISIBLE_DEVICES (npu-smi would count all chips). Filed under torch_cuda_api: NVML/nvidia-smi "
      "device query."),
])

# ---------------------------------------------------------------------------------------------
# CodeS (RUCKBReasoning/codes)
# ---------------------------------------------------------------------------------------------
E("codes_train", "train_causal_lm.py", "device_branch_or_abstraction",
  "RUCKBReasoning/codes train_causal_lm.py (Accelerate + DeepSpeed ZeRO-3 pre-training / SFT of StarCoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "Accelerate selects the NPU and imports torch_npu itself when Accelerator() probes for it, before the one "
      "torch.npu call below runs; explicit import recommended but (unconfirmed) not strictly needed."),
    C('attn_implementation = "flash_attention_2" if opt.use_flash_attention else "eager"', "attention_kernel",
      "replace", True,
      'attn_implementation = "sdpa" if opt.use_flash_attention else "eager"',
      "flash-attn cannot be installed on NPU, so transformers raises when flash_attention_2 is requested (the SFT "
      "launcher passes --use_flash_attention). SDPA dispatches to the NPU flash-attention kernel (transformers "
      "PR #36383)."),
    C("num_workers = 4, pin_memory = True)", "pin_memory", "replace", False,
      'num_workers = 4, pin_memory = True, pin_memory_device = "npu")',
      "torch 2.1 DataLoader only pins when torch.cuda.is_available() unless pin_memory_device is given, so pinning is "
      "silently off; performance only."),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", True,
      'accelerator.print("peak memory: {:.2f} GiB".format(torch.npu.max_memory_allocated() / 2**30))',
      "Returns 0 silently on an NPU host, so the logged peak memory is wrong."),
])

E("codes_few_shot", "text2sql_few_shot.py", "explicit_replacement",
  "RUCKBReasoning/codes text2sql_few_shot.py (schema filter + SimCSE demonstrations + beam search generation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "First NPU use is the schema-item classifier (schema_item_filter .npu()) before any transformers/accelerate "
      "code could import torch_npu; torch 2.1 has no autoload."),
    C('device = "cuda", batch_size = 256', "device_type", "replace", True,
      'simsce_model.build_index(demonstration_questions, device = "npu", batch_size = 256)',
      "SimCSE encodes with model.to(device); 'cuda' fails on a CPU-only torch. (Its faiss GPU path is keyed on "
      "'cuda' and is simply not taken with 'npu'.)"),
    C('device = "cuda", threshold = 0.0', "device_type", "replace", True,
      'results = simsce_model.search(eval_questions, device = "npu", threshold = 0.0, top_k = num_of_demonstrations)',
      ""),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Silent no-op unported; frees the classifier's cached blocks before loading a 7B/15B LLM - memory headroom only."),
    C("free the SimCSE encoder before loading the LLM", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the SimCSE encoder before loading the LLM", "Same as above."),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "torch.cuda.synchronize() lazily initialises CUDA and raises on an NPU host; also needed so the timing "
      "covers queued NPU work."),
])

E("codes_filter", "schema_item_filter.py", "explicit_replacement",
  "RUCKBReasoning/codes schema_item_filter.py (SchemaItemClassifierInference, schema pruning)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "Batch placement guard."),
    C("encoder_input_ids = encoder_input_ids.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_ids = encoder_input_ids.npu()", ""),
    C("encoder_input_attention_mask = encoder_input_attention_mask.cuda()", "tensor_to_device", "replace", True,
      "encoder_input_attention_mask = encoder_input_attention_mask.npu()", ""),
    C("if torch.cuda.is_available() == True:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() == True:", "Model placement guard; unported the classifier runs on the CPU."),
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True,
      "self.model = self.model.npu()", ""),
])

E("codes_accel_cfg", "accelerate_config/accelerate_config_bf16.yaml", "explicit_replacement",
  "RUCKBReasoning/codes accelerate_config (DeepSpeed ZeRO-3, bf16, 8 processes)", [])

E("codes_requirements", "requirements.txt", "explicit_replacement",
  "RUCKBReasoning/codes requirements (torch 2.1, transformers, deepspeed, flash-attn)", [
    C("=torch==2.1.0", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10",
      "torch 2.1.0 stays; add the matching adapter (2.1.0.post10 = v2.1.0-6.0.0, CANN 8.0.0)."),
    C("flash-attn==2.3.6", "attention_kernel", "removal", True, None,
      "Building flash-attn needs nvcc/CUDA and fails, breaking `pip install -r`; SDPA replaces it."),
])

E("codes_sft_sh", "scripts/train_codes_sft_spider.sh", "explicit_replacement",
  "RUCKBReasoning/codes SFT launcher (accelerate launch + single-GPU few-shot eval)", [
    C("=set -e", "env_var", "npu_only_addition", True,
      SET_ENV, "CANN environment before accelerate launch / python."),
    C("CUDA_VISIBLE_DEVICES=0 python -u text2sql_few_shot.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -u text2sql_few_shot.py \\",
      "Unported, device_map=\"auto\" silently shards the LLM over all visible NPUs instead of the one intended."),
])

# ---------------------------------------------------------------------------------------------
# TableLlama (OSU-NLP-Group/TableLlama, LongLoRA code base)
# ---------------------------------------------------------------------------------------------
E("tablellama_attn", "llama_attn_replace.py", "kernel_rewrite",
  "OSU-NLP-Group/TableLlama llama_attn_replace.py (LongLoRA S2-Attn monkey patch on flash-attn varlen kernels)", [
    C("from flash_attn import __version__ as flash_attn_version", "attention_kernel", "replace", True,
      "import torch_npu",
      "flash-attn is not installable on NPU; the module now needs torch_npu for npu_fusion_attention."),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "replace", True,
      "from bert_padding import pad_input, unpad_input  # vendored pure-PyTorch copy of flash_attn.bert_padding",
      "unpad_input/pad_input are plain torch index ops, but they live in the flash-attn package."),
    C("from flash_attn.flash_attn_interface import", "attention_kernel", "removal", True, None,
      "Kernels replaced by torch_npu.npu_fusion_attention below."),
    C("output_unpad = flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(x_unpad[:, 0], x_unpad[:, 1], x_unpad[:, 2], nheads // 2, "
      "\"TND\", atten_mask=" + CAUSAL_MASK.format(dev="x_unpad.device") + ", scale=1.0 / math.sqrt(self.head_dim), "
      "sparse_mode=3, actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_q_lens[1:].tolist())[0]",
      "Varlen causal S2-Attn over the shifted groups: TND layout with cumulative lengths (cu_seqlens[1:]) and the "
      "2048x2048 triu mask + sparse_mode=3, as in transformers' npu_flash_attention mapping. Group q/kv lengths are "
      "equal, so top-left vs bottom-right alignment does not matter here."),
    C('assert flash_attn_version >= "2.1.0"', "attention_kernel", "removal", True, None,
      "flash_attn_version no longer exists; the version gate is meaningless for the NPU kernel."),
    C("output = flash_attn_func(q, k, v, 0.0, softmax_scale=None, causal=True).view(", "attention_kernel",
      "replace", True,
      "output = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, \"BSND\", atten_mask="
      + CAUSAL_MASK.format(dev="q.device") + ", scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3)[0].view(",
      "Inference path without padding mask. q_len != kv_len when a KV cache is used; flash-attn >= 2.1 aligns the "
      "causal mask bottom-right, which is sparse_mode=3. GQA: Nq/Nkv integer ratio is supported. "
      "npu_fused_infer_attention_score would be the inference-specialised choice."),
    C("output_unpad = flash_attn_varlen_kvpacked_func(", "attention_kernel", "replace", True,
      "output_unpad = torch_npu.npu_fusion_attention(q, kv[:, 0], kv[:, 1], self.num_heads, \"TND\", atten_mask="
      + CAUSAL_MASK.format(dev="q.device") + ", scale=1.0 / math.sqrt(self.head_dim), sparse_mode=3, "
      "actual_seq_qlen=cu_q_lens[1:].tolist(), actual_seq_kvlen=cu_k_lens[1:].tolist())[0]",
      "Padded-batch inference path (kv packed as [T, 2, Hkv, D])."),
    C("cuda_major, cuda_minor = torch.cuda.get_device_capability()", "device_capability_check", "removal", True, None,
      "Raises on an NPU host. A literal torch.npu.get_device_capability() replacement is wrong too: it returns None "
      "(documented limitation) and the tuple unpacking fails."),
    C("if cuda_major < 8:", "device_capability_check", "removal", True, None,
      "Goes with the capability probe (cuda_major undefined)."),
    C("Flash attention is only supported on A100", "device_capability_check", "removal", True, None,
      "Body of the removed if; left alone it is an indentation error."),
])

E("tablellama_sft", "supervised_fine-tune.py", "explicit_replacement",
  "OSU-NLP-Group/TableLlama supervised_fine-tune.py (LongLoRA SFT with HF Trainer + DeepSpeed)", [])

E("tablellama_infer", "inference_rel_extraction_col_type.py", "device_branch_or_abstraction",
  "OSU-NLP-Group/TableLlama inference_rel_extraction_col_type.py (device_map=auto generation, torch.compile)", [
    C('if torch.__version__ >= "2" and sys.platform != "win32":', "compile_mode", "add_branch", False,
      'if torch.__version__ >= "2" and sys.platform != "win32" and not torch.npu.is_available():',
      "Default Inductor/Triton compile of an NPU-resident model is not expected to work on the torch_npu 2.1 line "
      "(Inductor-on-NPU arrives with torch_npu >= 2.6); skipping compile keeps eager NPU execution. Unconfirmed "
      "whether it errors or silently falls back, hence not required."),
])

E("tablellama_ds", "ds_configs/stage2.json", "explicit_replacement",
  "OSU-NLP-Group/TableLlama / LongLoRA ds_configs/stage2.json (ZeRO-2 with CPU optimizer offload)", [])

E("tablellama_train_sh", "scripts/train.sh", "explicit_replacement",
  "OSU-NLP-Group/TableLlama training launcher (torchrun, --tf32, DeepSpeed ZeRO-2)", [
    C("export WANDB_PROJECT=tablellama", "env_var", "npu_only_addition", True,
      SET_ENV, "CANN environment before torchrun."),
    C("--tf32 True", "device_capability_check", "replace", True,
      "--tf32 False \\",
      "TrainingArguments raises ValueError('--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7') "
      "when is_torch_tf32_available() is False, which it is on an NPU host (CUDA-gated helper, see the "
      "transfer_to_npu apis_config list)."),
])
