"""Labels for probe405 (music understanding / music-language models). See README.md for the policy."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry module: torch_npu must be imported before torch.npu.* / 'npu' devices are used "
               "(autoloaded only from torch_npu 2.5.1 on)")

# ----------------------------------------------------------------------------------------------
# MERT (yizhilll/MERT): fairseq-based acoustic music pre-training
# ----------------------------------------------------------------------------------------------
E("mert_model", "mert_fairseq/models/mert/mert_model.py", "explicit_replacement",
  "yizhilll/MERT mert_fairseq/models/mert/mert_model.py (MERTModel with nnAudio CQT reconstruction target)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', enabled=False):",
      "a cuda-typed autocast(enabled=False) does not switch off an enclosing NPU autocast region, so the CQT "
      "target would silently be computed in fp16 on NPU"),
])

E("mert_dataset", "mert_fairseq/data/mert_dataset.py", "explicit_replacement",
  "yizhilll/MERT mert_fairseq/data/mert_dataset.py (HubertDataset-derived loader, in-batch noise augmentation)", [])

E("mert_config", "mert_fairseq/config/pretrain/MERT_RVQ-VAE_CQT_330M.yaml", "explicit_replacement",
  "yizhilll/MERT mert_fairseq/config/pretrain/*.yaml (hydra pre-training config)", [
    C("distributed_backend: 'nccl'", "dist_backend", "replace", True,
      "distributed_backend: 'hccl'",
      "fairseq passes this string to init_process_group; NCCL does not exist on an Ascend host"),
])

E("mert_run", "scripts/run_training.sh", "explicit_replacement",
  "yizhilll/MERT scripts/run_training.sh (multi-node fairseq-hydra-train launcher)", [
    C("conda activate map", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before python imports torch_npu"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks its host NIC by its own priority order when unset; pinning eth0 keeps the intended NIC "
      "(needed only if the default choice cannot reach the root node)"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "script runs under `set -e`; nvidia-smi is absent on an Ascend host so the launcher would abort here"),
])

E("mert_codecs", "scripts/prepare_codecs_from_manifest.py", "explicit_replacement",
  "yizhilll/MERT scripts/prepare_codecs_from_manifest.py (EnCodec RVQ label extraction)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda:0")', "device_type", "replace", True,
      'parser.add_argument("--device", type=str, default="npu:0")',
      "default device string"),
    C("model = model.cuda(args.device).eval()", "tensor_to_device", "replace", True,
      "model = model.to(args.device).eval()",
      "Module.cuda() fails without CUDA; .to() accepts the npu device string"),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", True,
      'print(f"EnCodec loaded on {device} ({torch.npu.get_device_name(device)})")',
      "torch.cuda.get_device_name initialises CUDA and raises on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()",
      "OOM-retry path: torch.cuda.empty_cache is a silent no-op without CUDA, so the NPU cache is never released "
      "before the retry"),
    C("mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30",
      "logging only: the CUDA call returns 0 when CUDA is not initialised"),
])

# ----------------------------------------------------------------------------------------------
# MARBLE benchmark (a43992899/MARBLE-Benchmark): frozen-feature probing
# ----------------------------------------------------------------------------------------------
E("marble_extract", "benchmark/extract_hubert_features.py", "explicit_replacement",
  "a43992899/MARBLE-Benchmark benchmark/extract_hubert_features.py (pre-extract MERT hidden states)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "the config keeps accelerator: gpu as a generic 'use the accelerator' switch; the device it maps to changes"),
])

E("marble_probe", "benchmark/probe.py", "explicit_replacement",
  "a43992899/MARBLE-Benchmark benchmark/probe.py (Lightning probe training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("pin_memory=True,", "pin_memory", "replace", False,
      "pin_memory=True, pin_memory_device='npu',",
      "unconfirmed: whether the DataLoader pins for NPU without pin_memory_device is not documented in the "
      "knowledge base; performance only"),
])

E("marble_probers", "benchmark/models/probers.py", "explicit_replacement",
  "a43992899/MARBLE-Benchmark benchmark/models/probers.py (LightningModule probers, torchmetrics)", [])

E("marble_config", "configs/mert/MERT-v1-95M/MTT.yaml", "explicit_replacement",
  "a43992899/MARBLE-Benchmark configs/mert/MERT-v1-95M/MTT.yaml", [
    C("accelerator: gpu        # passed to pl.Trainer", "device_type", "replace", True,
      "accelerator: npu        # passed to pl.Trainer",
      "Lightning's 'gpu' accelerator refuses to start without CUDA; which NPU accelerator plugin provides "
      "'npu' for Lightning is not documented in the knowledge base"),
])

E("marble_sh", "scripts/probe_MTT.sh", "explicit_replacement",
  "a43992899/MARBLE-Benchmark scripts (extract + probe launcher)", [
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so the per-job device pinning silently disappears"),
])

# ----------------------------------------------------------------------------------------------
# MU-LLaMA (crypto-code/MU-LLaMA): LLaMA-adapter + MERT music question answering
# ----------------------------------------------------------------------------------------------
E("mullama_llama", "MU-LLaMA/llama/llama.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/llama/llama.py (LLaMA-Adapter transformer with KV cache)", [
    C("self.cache_k = torch.zeros(cache_shape).cuda()", "tensor_to_device", "replace", True,
      "self.cache_k = torch.zeros(cache_shape).npu()", "KV cache allocated on CUDA"),
    C("self.cache_v = torch.zeros(cache_shape).cuda()", "tensor_to_device", "replace", True,
      "self.cache_v = torch.zeros(cache_shape).npu()", "KV cache allocated on CUDA"),
])

E("mullama_adapter", "MU-LLaMA/llama/llama_adapter.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/llama/llama_adapter.py (LLaMA_adapter with MERT encoder, generate, load)", [
    C("torch.set_default_tensor_type(torch.cuda.HalfTensor)", "torch_cuda_api", "replace", True,
      "torch.set_default_dtype(torch.float16)",
      "Ascend's 2.7.1 API table: set_default_tensor_type does not accept torch.npu.*Tensor types, so the "
      "LLaMA is built in fp16 on the host and moved by load(...).to(device)"),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "cuda autocast is disabled on NPU; fp32 adapter/audio features then meet fp16 LLaMA weights and matmuls "
      "fail on mixed dtypes"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.float16):", "same mixed-dtype decoding step"),
    C("tokens = torch.full((bsz, total_len), self.tokenizer.pad_id).cuda().long()", "tensor_to_device",
      "replace", True,
      "tokens = torch.full((bsz, total_len), self.tokenizer.pad_id).npu().long()", "token buffer on CUDA"),
    C("tokens[k, : len(t)] = torch.tensor(t).cuda().long()", "tensor_to_device", "replace", True,
      "tokens[k, : len(t)] = torch.tensor(t).npu().long()", "Tensor.cuda() raises without CUDA"),
    C('device="cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'def load(model_path, llama_dir, mert_path="m-a-p/MERT-v1-330M", device="npu" if torch.npu.is_available() else "cpu",',
      "default device otherwise silently falls back to CPU for a 7B model"),
])

E("mullama_main", "MU-LLaMA/main_finetune.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/main_finetune.py (MAE-style fine-tuning entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", default="cuda", help="device to use for training / testing")',
      "device_type", "replace", True,
      'parser.add_argument("--device", default="npu", help="device to use for training / testing")',
      "default device string"),
    C("pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',",
      "unconfirmed: pinning target for NPU not documented in the knowledge base; performance only"),
])

E("mullama_engine", "MU-LLaMA/engine_finetune.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/engine_finetune.py (train_one_epoch)", [
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "fp16 LLaMA + fp32 trainable adapter only works under autocast; the cuda one is disabled on NPU"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
])

E("mullama_misc", "MU-LLaMA/util/misc.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/util/misc.py (MAE/DeiT misc: distributed init, MetricLogger, NativeScaler)", [
    C('t = torch.tensor([self.count, self.total], dtype=torch.float64, device="cuda")', "tensor_to_device",
      "replace", True,
      't = torch.tensor([self.count, self.total], dtype=torch.float64, device="npu")',
      "all_reduce input must live on the HCCL device"),
    C("if torch.cuda.is_available():  # add a peak-memory column", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # add a peak-memory column", "logging only (peak memory column)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "logging only"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))",
      "logging only: returns 0 without CUDA"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: cuda device_count is 0 on NPU hosts -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "per-rank device binding"),
    C('args.dist_backend = "nccl"', "dist_backend", "replace", True,
      'args.dist_backend = "hccl"', "collective backend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "the CUDA GradScaler disables itself without CUDA, so fp16 gradients are silently left unscaled"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "all_reduce input on CUDA"),
])

E("mullama_sh", "MU-LLaMA/finetune.sh", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/finetune.sh (torch.distributed.launch)", [
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1", "device selection variable of the Ascend runtime"),
])

E("mullama_infer", "MU-LLaMA/inference.py", "explicit_replacement",
  "crypto-code/MU-LLaMA MU-LLaMA/inference.py (CLI music QA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", "replace", False,
      "with torch.npu.amp.autocast():",
      "redundant once generate() opens its own (ported) autocast regions; left as is it only warns"),
])

E("mullama_req", "MU-LLaMA/requirements.txt", "explicit_replacement",
  "crypto-code/MU-LLaMA requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU build of torch (x86) / plain PyPI torch (aarch64)"),
    C("torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.1.0",
      "+cu118 wheel; torch_npu 2.1.0.postN needs torch 2.1.0 exactly"),
    C("torchaudio==2.0.2+cu118", "device_type", "replace", True, "torchaudio==2.1.0",
      "must match the torch version"),
    C("torchvision==0.15.2+cu118", "device_type", "replace", True, "torchvision==0.16.0",
      "+cu118 wheel; torchvision 0.16.0 pairs with torch 2.1.0"),
    C("transformers==4.31.0", "import_torch_npu", "npu_only_addition", True, "torch_npu==2.1.0.post12",
      "the adapter itself has to be installed (inserted after the torch lines)"),
    C("faiss-gpu==1.7.2", "device_type", "replace", True, "faiss-cpu==1.7.2",
      "faiss-gpu is a CUDA build (x86_64 wheels only); the kNN cache runs on the host"),
])

# ----------------------------------------------------------------------------------------------
# LAION-CLAP (LAION-AI/CLAP): contrastive pre-training and linear-probe fine-tuning
# ----------------------------------------------------------------------------------------------
E("clap_distributed", "src/laion_clap/training/distributed.py", "explicit_replacement",
  "LAION-AI/CLAP src/laion_clap/training/distributed.py (open_clip-style init_distributed_device)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "otherwise every rank silently runs on CPU"),
    C('device = "cuda:%d" % args.local_rank', "device_type", "replace", True,
      'device = "npu:%d" % args.local_rank', "per-rank device string"),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"', "single-process device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "device binding"),
])

E("clap_main", "src/laion_clap/training/main.py", "explicit_replacement",
  "LAION-AI/CLAP src/laion_clap/training/main.py (training entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True,
      "from torch.npu.amp import GradScaler",
      "--precision amp: the CUDA GradScaler disables itself on NPU and leaves fp16 gradients unscaled"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)",
      "torch.manual_seed on the line above already seeds registered accelerator generators (unconfirmed in "
      "the knowledge base); the CUDA call is a lazy no-op"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", "same as manual_seed above (unconfirmed)"),
])

E("clap_train", "src/laion_clap/training/train.py", "explicit_replacement",
  "LAION-AI/CLAP src/laion_clap/training/train.py (train_one_epoch / evaluate)", [
    C("return torch.cuda.amp.autocast", "amp", "replace", True,
      "return torch.npu.amp.autocast",
      "--precision amp would silently train in fp32 (cuda autocast disabled on NPU); shared by train and eval"),
])

E("clap_params", "src/laion_clap/training/params.py", "explicit_replacement",
  "LAION-AI/CLAP src/laion_clap/training/params.py (argparse)", [
    C('parser.add_argument("--dist-backend", default="nccl", type=str, help="distributed backend")',
      "dist_backend", "replace", True,
      'parser.add_argument("--dist-backend", default="hccl", type=str, help="distributed backend")',
      "default collective backend"),
])

E("clap_hook", "src/laion_clap/hook.py", "device_branch_or_abstraction",
  "LAION-AI/CLAP src/laion_clap/hook.py (CLAP_Module inference wrapper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "library entry (laion_clap.CLAP_Module): torch.npu must exist for the device probe below"),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu:0" if torch.npu.is_available() else ("cuda:0" if torch.cuda.is_available() else "cpu")',
      "auto-detection would silently choose CPU on an NPU host; keep the CUDA path for GPU users"),
])

E("clap_lp", "src/laion_clap/training/lp_train.py", "explicit_replacement",
  "LAION-AI/CLAP src/laion_clap/training/lp_train.py (linear-probe / fine-tune loop)", [
    C('autocast = torch.cuda.amp.autocast if args.precision == "amp" else suppress', "amp", "replace", True,
      'autocast = torch.npu.amp.autocast if args.precision == "amp" else suppress',
      "training path: --precision amp silently becomes fp32 training"),
    C('autocast = torch.cuda.amp.autocast if args.precision == "amp" and args.lp_freeze else suppress', "amp",
      "replace", False,
      'autocast = torch.npu.amp.autocast if args.precision == "amp" and args.lp_freeze else suppress',
      "evaluation only: fp32 instead of fp16 inference is slower but not wrong"),
])

E("clap_sh", "experiment_scripts/train-htsat-roberta.sh", "explicit_replacement",
  "LAION-AI/CLAP experiment_scripts/train-htsat-roberta.sh (SLURM + srun launcher)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False,
      "#SBATCH --gres=npu:8",
      "unconfirmed: the GRES name for NPUs is site-specific Slurm configuration"),
    C("module load cuda/11.7", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment instead of the CUDA module"),
])

# ----------------------------------------------------------------------------------------------
# sota-music-tagging-models (minzwon/sota-music-tagging-models)
# ----------------------------------------------------------------------------------------------
E("tag_main", "training/main.py", "explicit_replacement",
  "minzwon/sota-music-tagging-models training/main.py (argparse entry, no device code)", [])

E("tag_solver", "training/solver.py", "explicit_replacement",
  "minzwon/sota-music-tagging-models training/solver.py (Solver: train / validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "first module that touches torch (main.py only parses arguments)"),
    C("self.is_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.is_cuda = torch.npu.is_available()",
      "otherwise training silently runs on CPU"),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model placement"),
    C("S = torch.load(filename)", "tensor_to_device", "replace", True,
      "S = torch.load(filename, map_location='cpu')",
      "released checkpoints were saved from CUDA tensors; without map_location they deserialise to cuda and fail"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():", "guards the input move below"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "input batch placement"),
    C("y = torch.tensor([ground_truth.astype('float32') for i in range(self.batch_size)]).cuda()",
      "tensor_to_device", "replace", True,
      "y = torch.tensor([ground_truth.astype('float32') for i in range(self.batch_size)]).npu()",
      "validation targets"),
])

E("tag_eval", "training/eval.py", "explicit_replacement",
  "minzwon/sota-music-tagging-models training/eval.py (Predict: test-set ROC/PR-AUC)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("self.is_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "self.is_cuda = torch.npu.is_available()", "otherwise evaluation silently runs on CPU"),
    C("S = torch.load(filename, map_location=torch.device('cuda'))", "tensor_to_device", "replace", True,
      "S = torch.load(filename, map_location=torch.device('npu'))", "map_location names CUDA"),
    C("self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model placement"),
    C("x = x.cuda()", "tensor_to_device", "replace", True, "x = x.npu()", "input placement"),
    C("y = torch.tensor([ground_truth.astype('float32') for i in range(self.batch_size)]).cuda()",
      "tensor_to_device", "replace", True,
      "y = torch.tensor([ground_truth.astype('float32') for i in range(self.batch_size)]).npu()",
      "targets"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "guarded by is_cuda, which is true on NPU after the port; the CUDA call would raise"),
])

E("tag_modules", "training/modules.py", "explicit_replacement",
  "minzwon/sota-music-tagging-models training/modules.py (conv blocks, HarmonicSTFT front end)", [])

# ----------------------------------------------------------------------------------------------
# LP-MusicCaps (seungheondoh/lp-music-caps): music captioning
# ----------------------------------------------------------------------------------------------
E("lpmc_train", "lpmc/music_captioning/train.py", "explicit_replacement",
  "seungheondoh/lp-music-caps lpmc/music_captioning/train.py (mp.spawn DDP training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--dist-backend", default="nccl", type=str,', "dist_backend", "replace", True,
      'parser.add_argument("--dist-backend", default="hccl", type=str,', "default collective backend"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "0 on an NPU host: mp.spawn would start no workers"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "DDP branch device binding"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "DDP branch"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP without explicit device"),
    C("torch.cuda.set_device(args.gpu)  # single-GPU, no DDP", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single-device, no DDP", "single-device branch"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True,
      "model = model.npu(args.gpu)", "single-device branch"),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()",
      "torch.nn.DataParallel is unsupported on Ascend (2.7.1 API table); fall back to one device (DDP is the "
      "multi-device path)"),
    C("num_workers=args.workers, pin_memory=True, sampler=train_sampler, drop_last=True)", "pin_memory",
      "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler, drop_last=True)",
      "unconfirmed; performance only"),
    C("audio_embs = audio_embs.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "audio_embs = audio_embs.npu(args.gpu, non_blocking=True)", "batch placement"),
])

E("lpmc_caption", "lpmc/music_captioning/captioning.py", "explicit_replacement",
  "seungheondoh/lp-music-caps lpmc/music_captioning/captioning.py (inference CLI)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "device binding"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True,
      "model = model.npu(args.gpu)", "model placement"),
    C("audio_tensor = audio_tensor.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "audio_tensor = audio_tensor.npu(args.gpu, non_blocking=True)", "input placement"),
])

E("lpmc_bart", "lpmc/music_captioning/model/bart.py", "explicit_replacement",
  "seungheondoh/lp-music-caps lpmc/music_captioning/model/bart.py (BartCaptionModel, device via parameters)", [])

E("lpmc_utils", "lpmc/utils/eval_utils.py", "explicit_replacement",
  "seungheondoh/lp-music-caps lpmc/utils/eval_utils.py (load_pretrained, memory report helper)", [
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "used by the transfer/eval stages"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True,
      "model = model.npu(args.gpu)", "model placement"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if not torch.npu.is_available():", "memory report helper, logging only"),
    C("allocated = torch.cuda.memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated() / 2 ** 30", "logging only"),
    C("reserved = torch.cuda.memory_reserved() / 2 ** 30", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 2 ** 30", "logging only"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 30", "logging only"),
])
