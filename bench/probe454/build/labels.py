"""Labels for probe454 (extractive reading comprehension / open-domain QA, CUDA -> Ascend NPU).

One entry per upstream file. Each C(...) names one line a careful porter edits for an explicit
torch_npu port (torch.npu.*, 'npu', hccl; no transfer_to_npu). See README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu so torch.npu and the 'npu' device exist before any device code runs; "
               "mandatory before torch_npu 2.5.1 (backend autoload), still recommended after")
SEED_NOTE = ("torch.cuda.manual_seed* is lazy and a silent no-op without CUDA; torch.manual_seed(...) a few lines up "
             "already seeds the NPU generator (unconfirmed in the knowledge files), so this is for clarity only")
DP_NOTE = ("torch.nn.DataParallel is marked unsupported on every Ascend product (torch_api_npu_support_2.7.1.tsv, "
           "msFmkTransplt limitations); reached whenever more than one NPU is visible in a single process")

# ---------------------------------------------------------------------------------------------
# BiDAF (galsang/BiDAF-pytorch style: torchtext iterators, device recomputed per function)
# ---------------------------------------------------------------------------------------------
E("bidaf_run", "run.py", "explicit_replacement",
  "galsang/BiDAF-pytorch run.py (train/test loop with EMA, --gpu index flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('=device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")',
      "without NPU detection the model silently trains on CPU"),
    C('else "cpu")  # for the span mask', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")  # for the span mask',
      "span mask built on this device is added to NPU logits: a cpu device here gives a device-mismatch error"),
])

E("bidaf_data", "model/data.py", "explicit_replacement",
  "galsang/BiDAF-pytorch model/data.py (torchtext SQuAD fields, BucketIterator device=)", [
    C('device = torch.device(f"cuda:{args.gpu}"', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")',
      "BucketIterator materialises every batch on this device; must match the model's NPU"),
])

E("bidaf_model", "model/model.py", "explicit_replacement",
  "galsang/BiDAF-pytorch model/model.py (char-CNN, highway, attention flow)", [])

E("bidaf_ema", "model/ema.py", "explicit_replacement", "galsang/BiDAF-pytorch model/ema.py", [])

E("bidaf_nn", "utils/nn.py", "explicit_replacement",
  "galsang/BiDAF-pytorch utils/nn.py (packed LSTM wrapper, lengths moved to host)", [])

E("bidaf_eval", "evaluate.py", "explicit_replacement", "official SQuAD v1.1 evaluate.py as vendored by BiDAF ports", [])

# ---------------------------------------------------------------------------------------------
# DrQA (facebookresearch/DrQA: use_cuda flag, .cuda(non_blocking=True), DataParallel option)
# ---------------------------------------------------------------------------------------------
E("drqa_train", "scripts/reader/train.py", "explicit_replacement",
  "facebookresearch/DrQA scripts/reader/train.py (args.cuda / --gpu / --parallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "args.cuda gates model.cuda()/use_cuda; left as is it is False on an NPU host and training silently runs on CPU"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "CUDA set_device raises on a host without CUDA"),
    C("torch.cuda.manual_seed(args.random_seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.random_seed)", SEED_NOTE),
])

E("drqa_model", "drqa/reader/model.py", "explicit_replacement",
  "facebookresearch/DrQA drqa/reader/model.py (DocReader update/predict/cuda/parallelize)", [
    C("=inputs = [e if e is None else e.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "inputs = [e if e is None else e.npu(non_blocking=True)", "batch tensors must reach the NPU holding the network"),
    C("target_s = ex[5].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target_s = ex[5].npu(non_blocking=True)", "targets feed nll_loss against NPU scores"),
    C("target_e = ex[6].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target_e = ex[6].npu(non_blocking=True)", "targets feed nll_loss against NPU scores"),
    C("e.cuda(non_blocking=True) for e in ex[:5]]", "tensor_to_device", "replace", True,
      "inputs = [e if e is None else e.npu(non_blocking=True) for e in ex[:5]]", "prediction path, same as update()"),
    C("self.network = self.network.cuda()", "tensor_to_device", "replace", True,
      "self.network = self.network.npu()",
      "body of DocReader.cuda(); the project method name is kept so callers (train.py, pipeline) stay unchanged"),
    C("self.network = torch.nn.DataParallel(self.network)", "distributed_framework", "replace", True,
      "raise RuntimeError('--parallel uses torch.nn.DataParallel, which is unsupported on Ascend NPU; run one process per NPU')",
      DP_NOTE + "; reached with --parallel / data_parallel=True"),
])

E("drqa_layers", "drqa/reader/layers.py", "explicit_replacement",
  "facebookresearch/DrQA drqa/reader/layers.py (StackedBRNN, attention layers, uniform_weights)", [
    C("if x.data.is_cuda:", "device_type", "replace", True, "if x.data.is_npu:",
      "is_cuda is False for NPU tensors, so alpha would stay on CPU and bmm in weighted_avg fails with a device mismatch"),
    C("alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()",
      "once the branch is taken, .cuda() raises on a host without CUDA"),
])

E("drqa_pipeline", "drqa/pipeline/drqa.py", "explicit_replacement",
  "facebookresearch/DrQA drqa/pipeline/drqa.py (full retriever+reader pipeline)", [])

E("drqa_interactive", "scripts/pipeline/interactive.py", "explicit_replacement",
  "facebookresearch/DrQA scripts/pipeline/interactive.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "otherwise the reader silently runs on CPU on an NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "CUDA set_device raises without CUDA"),
])

E("drqa_requirements", "requirements.txt", "explicit_replacement",
  "facebookresearch/DrQA requirements.txt (torch installed separately)", [])

# ---------------------------------------------------------------------------------------------
# DPR (facebookresearch/DPR: hydra cfg, setup_cfg_gpu, apex amp, all_gather_list)
# ---------------------------------------------------------------------------------------------
E("dpr_options", "dpr/options.py", "explicit_replacement",
  "facebookresearch/DPR dpr/options.py (set_seed, setup_cfg_gpu, _infer_slurm_init)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(device)",
      "SLURM branch; CUDA set_device raises without CUDA"),
    C('device = str(torch.device("cuda", device))', "device_type", "replace", True,
      'device = str(torch.device("npu", device))', "cfg.device feeds model.to / move_to_device"),
    C('backend="nccl", init_method=init_method', "dist_backend", "replace", True,
      'backend="hccl", init_method=init_method, world_size=world_size, rank=local_rank',
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C('device = str(torch.device("cuda" if torch.cuda.is_available() and not cfg.no_cuda else "cpu"))',
      "device_type", "replace", True,
      'device = str(torch.device("npu" if torch.npu.is_available() and not cfg.no_cuda else "cpu"))',
      "single-process mode: otherwise silently CPU"),
    C("cfg.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "cfg.n_gpu = torch.npu.device_count()",
      "left unported n_gpu is 0: only logging, the seed branch and the DataParallel/loss.mean branches read it, and "
      "0 happens to keep a single NPU process working; ported for a truthful config"),
    C("torch.cuda.set_device(cfg.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.local_rank)", "torch.distributed.launch branch"),
    C('device = str(torch.device("cuda", cfg.local_rank))', "device_type", "replace", True,
      'device = str(torch.device("npu", cfg.local_rank))', "per-rank device string"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL -> HCCL"),
    C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "gpus_per_node = torch.npu.device_count()",
      "one-task-per-node SLURM mode: 0 devices gives world_size 0 and a broken init_process_group"),
])

E("dpr_model_utils", "dpr/utils/model_utils.py", "explicit_replacement",
  "facebookresearch/DPR dpr/utils/model_utils.py (setup_for_distributed_mode, move_to_*)", [
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise RuntimeError('torch.nn.DataParallel is unsupported on Ascend NPU; expose one NPU or use torch.distributed.launch (hccl)')",
      DP_NOTE + "; with n_gpu = torch.npu.device_count() this runs on any multi-NPU host without a launcher"),
    C("return maybe_tensor.cuda()", "tensor_to_device", "replace", False, "return maybe_tensor.npu()",
      "move_to_cuda is a legacy helper no script in this probe calls (they use move_to_device(cfg.device)); "
      "ported so the public helper does not break, not needed for the pipelines"),
])

E("dpr_dist_utils", "dpr/utils/dist_utils.py", "explicit_replacement",
  "facebookresearch/DPR dpr/utils/dist_utils.py (fairseq-style all_gather_list)", [
    C("all_gather_list._buffer = torch.cuda.ByteTensor(buffer_size)", "torch_cuda_api", "replace", True,
      "all_gather_list._buffer = torch.npu.ByteTensor(buffer_size)",
      "legacy CUDA tensor type initialises CUDA and raises; the HCCL all_reduce needs the buffer on the NPU"),
    C("torch.ByteTensor(max_size).pin_memory()", "pin_memory", "replace", False,
      'all_gather_list._cpu_buffer = torch.ByteTensor(max_size).pin_memory(device="npu")',
      "Tensor.pin_memory() without a device targets CUDA in older torch releases; whether it errors or silently "
      "falls back on an NPU-only host is unconfirmed, and pinning is only a copy-speed optimisation"),
])

E("dpr_train_biencoder", "train_dense_encoder.py", "explicit_replacement",
  "facebookresearch/DPR train_dense_encoder.py (BiEncoderTrainer, in-batch negatives over DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("dpr_gen_embeddings", "generate_dense_embeddings.py", "explicit_replacement",
  "facebookresearch/DPR generate_dense_embeddings.py (sharded passage encoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
])

E("dpr_dense_retriever", "dense_retriever.py", "explicit_replacement",
  "facebookresearch/DPR dense_retriever.py (question encoding + faiss CPU index search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("q_ids_batch = torch.stack(batch_token_tensors, dim=0).cuda()", "tensor_to_device", "replace", True,
      "q_ids_batch = torch.stack(batch_token_tensors, dim=0).npu()",
      "hard-coded .cuda() bypasses cfg.device; raises without CUDA"),
    C("q_seg_batch = torch.zeros_like(q_ids_batch).cuda()", "tensor_to_device", "replace", True,
      "q_seg_batch = torch.zeros_like(q_ids_batch).npu()", "same as above"),
])

E("dpr_cfg", "conf/biencoder_train_cfg.yaml", "explicit_replacement",
  "facebookresearch/DPR conf/biencoder_train_cfg.yaml (hydra defaults: local_rank, no_cuda, fp16)", [])

E("dpr_setup", "setup.py", "explicit_replacement", "facebookresearch/DPR setup.py (faiss-cpu, torch>=1.5.0)", [
    C('"torch>=1.5.0",', "import_torch_npu", "npu_only_addition", False, '"torch-npu",',
      "declares the torch_npu dependency; not required because the wheel must match the installed CANN and torch "
      "and is normally installed out-of-band"),
])

# ---------------------------------------------------------------------------------------------
# Fusion-in-Decoder (facebookresearch/FiD: src/slurm.py, hard-coded .cuda() batches)
# ---------------------------------------------------------------------------------------------
E("fid_slurm", "src/slurm.py", "explicit_replacement",
  "facebookresearch/FiD src/slurm.py (init_distributed_mode for SLURM / torch.distributed.launch)", [
    C("os.environ.get('CUDA_VISIBLE_DEVICES', 'all')", "env_var", "replace", False,
      "logger.info(PREFIX + \"Visible devices: %s\" % os.environ.get('ASCEND_RT_VISIBLE_DEVICES', 'all'))",
      "log line only; on NPU the visibility variable is ASCEND_RT_VISIBLE_DEVICES"),
    C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(params.local_rank)", "CUDA set_device raises without CUDA"),
    C('device = torch.device("cuda", params.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", params.local_rank)', "opt.device is used by util.load, weighted_average, test_reader"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "single-process runs: otherwise CPU"),
    C("backend='nccl',", "dist_backend", "replace", True, "backend='hccl',", "NCCL -> HCCL"),
])

E("fid_train", "train_reader.py", "explicit_replacement",
  "facebookresearch/FiD train_reader.py (T5 FiD reader training with DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=input_ids=context_ids.cuda(),", "tensor_to_device", "replace", True, "input_ids=context_ids.npu(),",
      "hard-coded .cuda() on every training batch"),
    C("=attention_mask=context_mask.cuda(),", "tensor_to_device", "replace", True,
      "attention_mask=context_mask.npu(),", "same"),
    C("labels=labels.cuda()", "tensor_to_device", "replace", True, "labels=labels.npu()", "same"),
    C("outputs = model.generate(input_ids=context_ids.cuda()", "tensor_to_device", "replace", True,
      "outputs = model.generate(input_ids=context_ids.npu(), attention_mask=context_mask.npu(), max_length=50)",
      "evaluation batches"),
    C("model = model.to(opt.local_rank)", "tensor_to_device", "replace", True,
      "model = model.to(f'npu:{opt.local_rank}')",
      "a bare int device index is read as a CUDA ordinal (transfer_to_npu rewrites exactly this case), so the "
      "fresh-from-T5 model would not land on the NPU"),
])

E("fid_test", "test_reader.py", "explicit_replacement",
  "facebookresearch/FiD test_reader.py (distributed evaluation, cross-attention scores)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("input_ids=context_ids.cuda(),", "tensor_to_device", "replace", True, "input_ids=context_ids.npu(),",
      "model is on opt.device (npu); .cuda() raises without CUDA"),
    C("attention_mask=context_mask.cuda(),", "tensor_to_device", "replace", True,
      "attention_mask=context_mask.npu(),", "same"),
    C("get_crossattention_scores(context_mask.cuda())", "tensor_to_device", "replace", True,
      "crossattention_scores = model.get_crossattention_scores(context_mask.npu())",
      "mask is combined with NPU score tensors"),
])

E("fid_util", "src/util.py", "explicit_replacement",
  "facebookresearch/FiD src/util.py (checkpoint save/load, schedulers, distributed averages)", [])

E("fid_model", "src/model.py", "explicit_replacement",
  "facebookresearch/FiD src/model.py (FiDT5, EncoderWrapper, CheckpointWrapper)", [])

E("fid_passage_retrieval", "passage_retrieval.py", "explicit_replacement",
  "facebookresearch/FiD passage_retrieval.py (question embedding + faiss search)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "embed_questions moves inputs to opt.device (npu after the slurm.py port); the model must be there too"),
])

E("fid_launch", "scripts/train_fid_nq.sh", "explicit_replacement",
  "FiD README recipe: torch.distributed.launch on 8 GPUs + test_reader", [
    C("=set -e", "env_var", "npu_only_addition", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not required when the shell or container already sources it"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: device selection silently stops applying"),
    C("CUDA_VISIBLE_DEVICES=0 python test_reader.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python test_reader.py \\", "same, for the single-device test run"),
])

E("fid_sbatch", "scripts/slurm_train_fid_large.sh", "explicit_replacement",
  "FiD-style SLURM submission script (4 nodes x 8 GPUs, one task per GPU)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "generic-resource name is cluster configuration; the NPU gres name is site-specific (unconfirmed)"),
    C("module load cuda/11.0", "env_var", "replace", False, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CUDA module is useless on an NPU node; CANN env needed unless the node image sets it"),
])

# ---------------------------------------------------------------------------------------------
# SpanBERT fine-tuning (facebookresearch/SpanBERT code/run_squad.py, pytorch_pretrained_bert era)
# ---------------------------------------------------------------------------------------------
E("spanbert_run_squad", "code/run_squad.py", "explicit_replacement",
  "facebookresearch/SpanBERT code/run_squad.py (apex FusedAdam + FP16_Optimizer, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "otherwise silently CPU"),
    C("n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n_gpu = torch.npu.device_count()",
      "batches are moved to the device only when n_gpu == 1; n_gpu = 0 leaves them on CPU next to an NPU model"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", SEED_NOTE),
    C("=model.half()", "amp", "replace", True, "pass  # weights stay fp32; fp16 comes from torch.npu.amp.autocast",
      "with GradScaler replacing FP16_Optimizer, fp16 parameters make unscale_ raise 'Attempting to unscale FP16 gradients'"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "raise RuntimeError('torch.nn.DataParallel is unsupported on Ascend NPU; expose a single NPU (ASCEND_RT_VISIBLE_DEVICES)')",
      DP_NOTE),
    C("from apex.optimizers import FP16_Optimizer", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler",
      "NVIDIA apex cannot be built without CUDA, so the ImportError branch aborts --fp16 runs"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from torch_npu.optim import NpuFusedAdam", "apex FusedAdam is a CUDA kernel; torch_npu ships NpuFusedAdam"),
    C("optimizer = FusedAdam(optimizer_grouped_parameters, lr=lr, bias_correction=False)", "fused_optimizer",
      "replace", True, "optimizer = NpuFusedAdam(optimizer_grouped_parameters, lr=lr)",
      "NpuFusedAdam has no bias_correction switch (always corrects, unlike BERT-style Adam): small early-step "
      "difference to keep in mind when comparing curves"),
    C("optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)", "amp", "replace", True,
      "scaler = GradScaler()", "dynamic loss scaling via the NPU GradScaler"),
    C("optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.loss_scale)", "amp", "replace", True,
      "scaler = GradScaler(init_scale=args.loss_scale, growth_interval=2**31 - 1)",
      "closest GradScaler equivalent of a static scale (never grows; still backs off on overflow)"),
    C("loss = model(input_ids, segment_ids, input_mask, start_positions, end_positions)", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.fp16): loss = model(input_ids, segment_ids, input_mask, start_positions, end_positions)",
      "without autocast --fp16 silently trains in fp32 under the scaler: slower and more memory, not wrong"),
    C("optimizer.backward(loss)", "amp", "replace", True, "scaler.scale(loss).backward()",
      "NpuFusedAdam has no backward(); FP16_Optimizer API is gone"),
    C("=optimizer.step()", "amp", "replace", True,
      "(scaler.step(optimizer), scaler.update()) if args.fp16 else optimizer.step()",
      "stepping on scaled gradients without unscale/inf-check silently corrupts the update"),
])

E("spanbert_modeling", "code/pytorch_pretrained_bert/modeling.py", "explicit_replacement",
  "facebookresearch/SpanBERT code/pytorch_pretrained_bert/modeling.py (BertLayerNorm, from_pretrained)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      "replace", False, "from torch.nn import LayerNorm as BertLayerNorm",
      "with no apex installed the except branch already gives a pure-PyTorch LayerNorm; if an Ascend apex build is "
      "present the Python module may import but fused_layer_norm_cuda is absent (unconfirmed whether that fails "
      "at import or at construction)"),
])

E("spanbert_finetune_sh", "scripts/finetune_squad.sh", "explicit_replacement",
  "SpanBERT README fine-tuning command wrapped in a launcher (single V100, --fp16)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; not required when the shell or container already sources it"),
    C("export CUDA_VISIBLE_DEVICES=${GPU:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU:-0}",
      "ignored by the Ascend runtime; with >1 NPU visible run_squad.py would take the DataParallel path"),
    C('echo "Running on $(hostname) with GPU(s) ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", True,
      'echo "Running on $(hostname) with NPU(s) ${ASCEND_RT_VISIBLE_DEVICES}"',
      "under set -u an unset CUDA_VISIBLE_DEVICES aborts the script ('unbound variable') once the export is ported"),
    C("nvidia-smi --query-gpu=name,memory.total --format=csv,noheader", "device_capability_check", "replace", True,
      "npu-smi info", "nvidia-smi is absent on an NPU host; command-not-found aborts under set -e"),
])

E("spanbert_install", "install_env.sh", "explicit_replacement",
  "SpanBERT README environment setup (conda py3.7, torch cu101 wheel, apex with --cuda_ext)", [
    C("conda create -y -n spanbert python=3.7", "import_torch_npu", "replace", True,
      "conda create -y -n spanbert python=3.9",
      "torch_npu wheels for the 2.x line need Python >= 3.8 (version matrix); 3.7 only pairs with 1.11"),
    C("pip install torch==1.4.0+cu101", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torch-npu==2.1.0.post12",
      "CUDA wheel is useless (and absent on aarch64); torch and torch_npu versions must match (2.1.0 <-> 2.1.0.postN)"),
    C("git clone https://github.com/NVIDIA/apex", "custom_cuda_extension", "removal", False, None,
      "apex is no longer used after the run_squad.py port; cloning alone is harmless"),
    C("=cd apex", "custom_cuda_extension", "removal", True, None,
      "with the clone removed, cd apex fails and set -e aborts"),
    C("git checkout 880ab925bce9f817a93988b021e12db5f67f7787", "custom_cuda_extension", "removal", True, None,
      "with clone and cd removed, git checkout runs outside a repository and aborts the script"),
    C('--global-option="--cuda_ext"', "custom_cuda_extension", "removal", True, None,
      "building apex CUDA extensions needs nvcc/CUDA; fails on an NPU host"),
    C("=cd ..", "custom_cuda_extension", "removal", False, None,
      "only moves to the parent directory once cd apex is gone; harmless but wrong"),
    C('python -c "import torch; print(torch.__version__, torch.cuda.is_available())"', "torch_cuda_api", "replace",
      False, 'python -c "import torch, torch_npu; print(torch.__version__, torch.npu.is_available())"',
      "sanity print only; would report False on an NPU host"),
])
