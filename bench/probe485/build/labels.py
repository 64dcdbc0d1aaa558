"""Labels for probe485 (legal / financial document NLP). One C(...) per upstream line a careful porter edits."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TORCH_NPU_PIN = "torch-npu==2.1.0.post10"

# ---------------------------------------------------------------------------------------------------------------
# coastalcph/lex-glue (LEGAL-BERT / hierarchical BERT fine-tuning through the HF Trainer)
# ---------------------------------------------------------------------------------------------------------------
E("lexglue_ecthr", "experiments/ecthr.py", "explicit_replacement",
  "coastalcph/lex-glue experiments/ecthr.py (HF Trainer, hierarchical BERT on ECtHR)", [])

E("lexglue_hierbert", "models/hierbert.py", "explicit_replacement",
  "coastalcph/lex-glue models/hierbert.py (HierarchicalBert segment encoder)", [])

E("lexglue_run_ecthr", "scripts/run_ecthr.sh", "explicit_replacement",
  "coastalcph/lex-glue scripts/run_ecthr.sh (5-seed launcher)", [
    C("=GPU_NUMBER=0", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment must be sourced before python imports torch_npu (libhccl/ASCEND_OPP_PATH errors otherwise)"),
    C("CUDA_VISIBLE_DEVICES=${GPU_NUMBER} python experiments/ecthr.py", "env_var", "replace", True,
      "  ASCEND_RT_VISIBLE_DEVICES=${GPU_NUMBER} python experiments/ecthr.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; the user-selected GPU_NUMBER would silently be dropped"),
])

E("lexglue_requirements", "requirements.txt", "explicit_replacement",
  "coastalcph/lex-glue requirements.txt", [
    C("torch>=1.9.0", "import_torch_npu", "npu_only_addition", True, TORCH_NPU_PIN,
      "torch_npu wheel must be added and torch pinned to the matching release (2.1.0 here)"),
    C("transformers==4.20.0", "distributed_framework", "replace", True, "transformers>=4.32.0",
      "HF Trainer/TrainingArguments only pick the NPU device from transformers 4.32.0 on; 4.20 would train on CPU"),
])

# ---------------------------------------------------------------------------------------------------------------
# ProsusAI/finBERT (financial sentiment; pytorch-pretrained-bert era device handling)
# ---------------------------------------------------------------------------------------------------------------
E("finbert_core", "finbert/finbert.py", "explicit_replacement",
  "ProsusAI/finBERT finbert/finbert.py (Config, FinBert.prepare_model/train/evaluate, predict)", [
    C('self.device = torch.device("cuda" if torch.cuda.is_available() and not self.config.no_cuda else "cpu")',
      "device_type", "replace", True,
      'self.device = torch.device("npu" if torch.npu.is_available() and not self.config.no_cuda else "cpu")',
      "otherwise silently trains on CPU"),
    C("self.n_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "self.n_gpu = torch.npu.device_count()",
      "n_gpu only gates DataParallel and cuda seeding; 0 keeps the single-device path working"),
    C("torch.cuda.set_device(self.config.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(self.config.local_rank)", "torch.cuda.set_device raises without CUDA"),
    C('self.device = torch.device("cuda", self.config.local_rank)', "device_type", "replace", True,
      'self.device = torch.device("npu", self.config.local_rank)', "distributed branch device"),
    C("torch.distributed.init_process_group(backend='nccl')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl')", "NCCL is unavailable on Ascend"),
    C("torch.cuda.manual_seed_all(self.config.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(self.config.seed)",
      "torch.manual_seed above already seeds the PrivateUse1 device on torch>=2.1 (unconfirmed in knowledge); "
      "the cuda call is a lazy no-op"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # torch.nn.DataParallel is not supported on Ascend; use one process per NPU (DDP)",
      "nn.DataParallel is marked unsupported in Ascend's API list; n_gpu>1 once device_count is ported"),
    C("def predict(text, model, write_to_csv=False, path=None, use_gpu=False, gpu_name='cuda:0', batch_size=5):",
      "device_type", "replace", True,
      "def predict(text, model, write_to_csv=False, path=None, use_gpu=False, gpu_name='npu:0', batch_size=5):",
      "default device string used by scripts/predict.py and the training notebook"),
    C('device = gpu_name if use_gpu and torch.cuda.is_available() else "cpu"', "torch_cuda_api", "replace", True,
      'device = gpu_name if use_gpu and torch.npu.is_available() else "cpu"',
      "otherwise use_gpu silently falls back to CPU"),
])

E("finbert_utils", "finbert/utils.py", "explicit_replacement",
  "ProsusAI/finBERT finbert/utils.py (InputExample, convert_examples_to_features, metrics)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "finbert.py gets torch via `from finbert.utils import *`; this is the first torch import on every path"),
])

E("finbert_predict", "scripts/predict.py", "explicit_replacement",
  "ProsusAI/finBERT scripts/predict.py (CLI sentiment prediction)", [
    C("parser.add_argument('--gpu_name', type=str, default='cuda:0',", "device_type", "replace", True,
      "parser.add_argument('--gpu_name', type=str, default='npu:0',",
      "explicit default overrides the ported default of predict(); 'cuda:0' fails on .to()"),
])

E("finbert_train", "scripts/train.py", "explicit_replacement",
  "ProsusAI/finBERT notebooks/finbert_training.ipynb exported as a script", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "0"', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"',
      "pins card 0, which is also the default NPU; only the reported n_gpu differs"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "inert on an NPU host; frees cached NPU memory before evaluation"),
])

E("finbert_env", "environment.yml", "explicit_replacement",
  "ProsusAI/finBERT environment.yml (conda env)", [
    C("- pytorch=1.6.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0  # CPU build; matches torch-npu",
      "no torch_npu release exists for torch 1.6"),
    C("- cudatoolkit=10.2", "import_torch_npu", "removal", False, None,
      "CUDA runtime is useless on Ascend; harm of keeping it unconfirmed"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - " + TORCH_NPU_PIN,
      "torch_npu is pip-only"),
])

# ---------------------------------------------------------------------------------------------------------------
# TheAtticusProject/cuad (contract clause extraction, run_squad-derived, apex amp)
# ---------------------------------------------------------------------------------------------------------------
E("cuad_train", "train.py", "explicit_replacement",
  "TheAtticusProject/cuad train.py (run_squad.py-style QA fine-tuning with apex amp and NCCL)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.npu.* is used below"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)",
      "redundant after torch.manual_seed on torch>=2.1 (unconfirmed); lazy no-op otherwise"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      "kept on Ascend's apex patch (O1/O2, scale_loss supported); combine_grad is a perf option, name unconfirmed"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "replace", True,
      "pass  # torch.nn.DataParallel is not supported on Ascend; launch with torch.distributed (DDP)",
      "nn.DataParallel unsupported; reached whenever n_gpu>1 on a multi-NPU host"),
    C("model = torch.nn.DataParallel(model, device_ids=list(range(args.n_gpu)))", "distributed_framework",
      "replace", True, "pass  # no nn.DataParallel on Ascend: evaluate on a single NPU",
      "evaluation-time DataParallel wrap"),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      "otherwise silently CPU"),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()",
      "0 only shrinks the batch-size multiplier and skips DataParallel; still runs on the NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', "NCCL unavailable"),
])

E("cuad_utils", "utils.py", "explicit_replacement",
  "TheAtticusProject/cuad utils.py (balanced-dataset helpers)", [])

E("cuad_evaluate", "evaluate.py", "explicit_replacement",
  "TheAtticusProject/cuad evaluate.py (AUPR / precision@recall metrics)", [])

E("cuad_run", "scripts/train_roberta.sh", "explicit_replacement",
  "TheAtticusProject/cuad README training command wrapped in a launcher", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV, "CANN env needed before torch_npu import"),
])

# ---------------------------------------------------------------------------------------------------------------
# stanfordnlp/contract-nli-bert (ContractNLI: span identification + NLI; native AMP, DDP)
# ---------------------------------------------------------------------------------------------------------------
E("cnli_trainer", "contract_nli/trainer.py", "explicit_replacement",
  "stanfordnlp/contract-nli-bert contract_nli/trainer.py (training loop)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.fp16)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.fp16)",
      "cuda GradScaler disables itself without CUDA -> fp16 training without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):", "amp", "replace",
      True, "with torch.npu.amp.autocast(enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):",
      "cuda autocast is disabled with a warning on NPU: requested mixed precision silently not applied"),
    C("values['max_mem_gb'] = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3", "torch_cuda_api",
      "replace", True, "values['max_mem_gb'] = torch.npu.max_memory_allocated(self.device) / 1024 ** 3",
      "cuda memory API rejects an npu device / has no CUDA context"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "inert on NPU host; memory hygiene only"),
    C("with torch.autocast('cuda', enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):", "amp", "replace",
      True, "with torch.autocast('npu', enabled=self.fp16 or self.bf16, dtype=self.amp_dtype):",
      "evaluation autocast device type"),
])

E("cnli_train", "train.py", "explicit_replacement",
  "stanfordnlp/contract-nli-bert train.py (entry point, device setup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant after torch.manual_seed on torch>=2.1 (unconfirmed)"),
    C("use_cuda = torch.cuda.is_available() and not conf.get('no_cuda', False)", "torch_cuda_api", "replace",
      True, "use_cuda = torch.npu.is_available() and not conf.get('no_cuda', False)", "otherwise CPU"),
    C("device = torch.device('cuda:0' if use_cuda else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu:0' if use_cuda else 'cpu')", "single-process device"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("device = torch.device(f'cuda:{local_rank}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{local_rank}')", "per-rank device"),
    C("dist.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "dist.init_process_group(backend='hccl', init_method='env://')", "NCCL unavailable"),
    C("if conf.get('bf16') and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "if conf.get('bf16') and not torch.npu.is_bf16_supported():",
      "torch.cuda.is_bf16_supported needs a CUDA device; bf16 configs would abort"),
])

E("cnli_model", "contract_nli/model/identification_classification.py", "explicit_replacement",
  "stanfordnlp/contract-nli-bert contract_nli/model/identification_classification.py", [])

E("cnli_conf", "data/conf_base.yml", "explicit_replacement",
  "stanfordnlp/contract-nli-bert data/conf_base.yml", [])

E("cnli_loader", "contract_nli/dataset/loader.py", "explicit_replacement",
  "stanfordnlp/contract-nli-bert contract_nli/dataset (DataLoader construction)", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "perf only: without an accelerator CUDA-default pinning is skipped; behaviour on torch_npu unconfirmed"),
])

# ---------------------------------------------------------------------------------------------------------------
# allenai/longformer (TVM CUDA kernel vs. pure-PyTorch sliding chunks; Lightning TriviaQA)
# ---------------------------------------------------------------------------------------------------------------
E("lf_tvm", "longformer/diagonaled_mm_tvm.py", "explicit_replacement",
  "allenai/longformer longformer/diagonaled_mm_tvm.py (TVM-generated CUDA kernel)", [])

E("lf_model", "longformer/longformer.py", "explicit_replacement",
  "allenai/longformer longformer/longformer.py (LongformerSelfAttention)", [])

E("lf_sliding", "longformer/sliding_chunks.py", "explicit_replacement",
  "allenai/longformer longformer/sliding_chunks.py", [])

E("lf_triviaqa", "scripts/triviaqa.py", "explicit_replacement",
  "allenai/longformer scripts/triviaqa.py (PyTorch Lightning fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("'mem': torch.cuda.memory_allocated(input_ids.device) / 1024 ** 3}", "torch_cuda_api", "replace", True,
      "'mem': torch.npu.memory_allocated(input_ids.device) / 1024 ** 3}",
      "cuda memory API with an npu device raises in every training step"),
    C("default='tvm', help='Which implementation of selfattention to use')", "custom_cuda_extension", "replace",
      True, "default='sliding_chunks', help='Which implementation of selfattention to use')",
      "TVM kernel is CUDA-only (nvcc/ptx); sliding_chunks is the pure-PyTorch equivalent"),
    C("if torch.cuda.is_available(): torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available(): torch.npu.manual_seed_all(args.seed)",
      "redundant after torch.manual_seed (unconfirmed)"),
    C("trainer = pl.Trainer(gpus=args.gpus,", "distributed_framework", "replace", True,
      "trainer = pl.Trainer(accelerator='npu', devices=args.gpus,",
      "Lightning's GPU accelerator needs CUDA; needs an NPU-capable Lightning accelerator (exact spelling unconfirmed)"),
    C("strategy='ddp_find_unused_parameters_false' if args.gpus and args.gpus > 1 else None,", "dist_backend",
      "replace", True,
      "strategy=DDPStrategy(process_group_backend='hccl', find_unused_parameters=False) if args.gpus and args.gpus > 1 else None,",
      "Lightning's DDP defaults to nccl for accelerator devices"),
])

E("lf_test_sliding", "tests/test_sliding_chunks.py", "explicit_replacement",
  "allenai/longformer tests/test_sliding_chunks.py (TVM vs sliding-chunks equivalence)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "test module uses torch.npu"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "timing helper used by the NPU-runnable test"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "otherwise the equivalence test silently runs on CPU and never exercises the NPU kernels"),
])

E("lf_requirements", "requirements.txt", "explicit_replacement",
  "allenai/longformer requirements.txt", [
    C("torch>=1.6.0", "import_torch_npu", "npu_only_addition", True, TORCH_NPU_PIN,
      "torch_npu wheel with torch pinned to the matching release"),
])

# ---------------------------------------------------------------------------------------------------------------
# amazon-science/efficient-longdoc-classification (ToBERT, BERT+TextRank, Longformer; plain PyTorch loop)
# ---------------------------------------------------------------------------------------------------------------
E("eld_train", "src/train.py", "explicit_replacement",
  "amazon-science/efficient-longdoc-classification src/train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu' if torch.npu.is_available() else 'cpu')", "module-level device global"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant after torch.manual_seed (unconfirmed)"),
    C("with torch.cuda.amp.autocast(enabled=use_amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=use_amp):", "--fp16 evaluation silently fp32 otherwise"),
    C("state = torch.load(args.checkpoint, map_location='cuda:0')", "device_type", "replace", True,
      "state = torch.load(args.checkpoint, map_location='npu:0')", "deserialising to cuda:0 fails on NPU host"),
    C("optimizer = AdamW(grouped, lr=args.lr)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(grouped, lr=args.lr)",
      "performance only (msFmkTransplt advice; more memory)"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)", "loss scaling silently off otherwise"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):", "--fp16 training silently fp32 otherwise"),
    C("time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 30)", "torch_cuda_api", "replace", True,
      "time.time() - t0, torch.npu.max_memory_allocated() / 2 ** 30)",
      "raises without CUDA at the end of every epoch"),
    C("torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no GPU found')", "torch_cuda_api",
      "replace", False, "torch.npu.get_device_name(0) if torch.npu.is_available() else 'no NPU found')",
      "log line only; unported it prints 'no GPU found'"),
])

E("eld_models", "src/models.py", "explicit_replacement",
  "amazon-science/efficient-longdoc-classification src/models.py (ToBERT etc.)", [
    C("chunk_embeddings = torch.zeros(B * C, self.hidden).cuda()", "tensor_to_device", "replace", True,
      "chunk_embeddings = torch.zeros(B * C, self.hidden, device=input_ids.device)",
      "hard-coded .cuda() in the ToBERT forward"),
])

E("eld_data", "src/dataloader.py", "explicit_replacement",
  "amazon-science/efficient-longdoc-classification src/dataloader.py", [])

E("eld_bench", "src/benchmark_memory.py", "explicit_replacement",
  "amazon-science/efficient-longdoc-classification memory/throughput benchmark", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("['nvidia-smi', '--query-gpu=name,memory.total,driver_version', '--format=csv,noheader'],",
      "torch_cuda_api", "replace", False, "['npu-smi', 'info', '-t', 'board', '-i', '0'],",
      "informational only; OSError is caught and 'unknown' returned"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "benchmark inputs device"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=fp16)", "loss scaling"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "does not affect max_memory_allocated; hygiene only"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created on an NPU host"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=fp16):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=fp16):", "fp16 numbers otherwise fp32"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("peak_gb = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", True,
      "peak_gb = torch.npu.max_memory_allocated() / 2 ** 30", "the measured quantity"),
    C("model = build_model(name, num_labels=2).cuda()", "tensor_to_device", "replace", True,
      "model = build_model(name, num_labels=2).npu()", "module .cuda()"),
    C("torch.cuda.empty_cache()  # release the partial graph", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the partial graph before the next length",
      "after an OOM; helps the next length fit but not required"),
])

E("eld_run", "scripts/run_experiments.sh", "explicit_replacement",
  "amazon-science/efficient-longdoc-classification experiment launcher", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True, SET_ENV,
      "insert before `set -u`: set_env.sh is not nounset-safe (CMAKE_PREFIX_PATH unbound)"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "NUM_GPUS=$(npu-smi info -l | awk -F' : ' '/Total Count/ {print $2}')",
      "nvidia-smi missing -> pipefail + set -e abort the launcher"),
    C("CUDA_VISIBLE_DEVICES=${gpu} python src/train.py", "env_var", "replace", True,
      "      ASCEND_RT_VISIBLE_DEVICES=${gpu} python src/train.py \\",
      "otherwise every concurrent job lands on NPU 0"),
])
