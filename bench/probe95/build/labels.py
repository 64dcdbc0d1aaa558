"""Labels for probe95 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

# ----------------------------------------------------------------------------------------------- DeepCTR-Torch

E("deepctr_basemodel", "deepctr_torch/models/basemodel.py", "explicit_replacement",
  "shenweichen/DeepCTR-Torch models/basemodel.py (Keras-style fit() with gpus -> nn.DataParallel)", [
    C("model = torch.nn.DataParallel(model, device_ids=self.gpus)", "distributed_framework", R, True,
      "raise ValueError('multi-card training on NPU needs DDP (torch.distributed, hccl); pass gpus=None')",
      "nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API table, msFmkTransplt: use DDP); "
      "fit(gpus=[...]) takes this path"),
])

E("deepctr_run_criteo", "examples/run_classification_criteo.py", "explicit_replacement",
  "DeepCTR-Torch examples/run_classification_criteo.py (use_cuda flag, 'cuda:0' device string, --gpus)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "entry script: loads the NPU backend so 'npu:0' and torch.npu.* resolve"),
    C("if use_cuda and torch.cuda.is_available():", "device_type", R, True,
      "if use_cuda and torch.npu.is_available():",
      "torch.cuda.is_available() is False on an NPU host: the example silently trains on the CPU"),
    C("device = 'cuda:0'", "device_type", R, True, "device = 'npu:0'", "device string handed to the model"),
    C("device = 'cuda:{}'.format(args.gpus[0])", "device_type", R, True,
      "device = 'npu:{}'.format(args.gpus[0])",
      "--gpus path; basemodel then also requires gpus[0] to appear in the device string"),
])

E("deepctr_dien", "deepctr_torch/models/dien.py", "explicit_replacement",
  "DeepCTR-Torch models/dien.py (InterestExtractor / InterestEvolving on packed GRU sequences)", [
    C("packed_keys = pack_padded_sequence(masked_keys,", "unsupported_op_workaround", R, True,
      "interests, _ = self.gru(masked_keys)  # padded input; positions >= length masked below",
      "pack_padded_sequence is ✘ in Ascend's 2.7.1 table and msFmkTransplt's unsupported list; the packed "
      "GRU overload (gru.data) has no NPU kernel"),
    C("interests, _ = pad_packed_sequence(packed_interests, batch_first=True, padding_value=0.0,",
      "unsupported_op_workaround", R, True,
      "interests = interests * (torch.arange(max_length, device=keys.device)[None, :] < masked_keys_length[:, None]).unsqueeze(-1)",
      "pad_packed_sequence ✘ (2.7.1 table); replaced by an explicit length mask on the padded GRU output"),
    C("packed_keys = pack_padded_sequence(keys, lengths=keys_length.cpu()", "unsupported_op_workaround", R, True,
      "packed_keys = keys  # padded GRU, see _mask_by_length", "GRU branch of InterestEvolving; pack_padded_sequence ✘"),
    C("evolved, _ = pad_packed_sequence(packed_interests", "unsupported_op_workaround", R, True,
      "evolved = _mask_by_length(self.interest_evolution(keys)[0], keys_length)", "pad_packed_sequence ✘"),
    C("packed_interests = pack_padded_sequence(interests,", "unsupported_op_workaround", R, True,
      "_, outputs = self.interest_evolution(interests)  # then pick the state at keys_length - 1",
      "AIGRU branch; the final hidden state of a padded GRU must then be gathered at length-1 instead"),
    C("packed_interests = pack_padded_sequence(keys, lengths=keys_length.cpu()", "unsupported_op_workaround", R, True,
      "outputs = self.interest_evolution(keys, att_scores, keys_length)  # padded DynamicGRU",
      "AGRU/AUGRU branch; DynamicGRU must be rewritten to loop over padded time steps with a length mask"),
    C("packed_scores = pack_padded_sequence(att_scores", "unsupported_op_workaround", R, True,
      "# att_scores stays padded [b, T]", "AUGRU attention scores were packed alongside the keys"),
    C("outputs, _ = pad_packed_sequence(outputs, batch_first=True", "unsupported_op_workaround", R, True,
      "# outputs already padded [b, T, H]", "pad_packed_sequence ✘"),
])

# ----------------------------------------------------------------------------------------------- torch-rechub

E("rechub_ctr_trainer", "torch_rechub/trainers/ctr_trainer.py", "explicit_replacement",
  "datawhalechina/torch-rechub trainers/ctr_trainer.py (device string + gpus list -> DataParallel)", [
    C("self.model = torch.nn.DataParallel(self.model, device_ids=gpus)", "distributed_framework", R, True,
      "raise ValueError('use torchrun + DDP (hccl) for multi-NPU training')",
      "nn.DataParallel ✘ on Ascend; gpus=[0, 1, ...] takes this path"),
])

E("rechub_run_criteo", "examples/ranking/run_criteo.py", "explicit_replacement",
  "torch-rechub examples/ranking/run_criteo.py (argparse --device default 'cuda:0')", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued and harmless without CUDA, but the NPU generator stays unseeded"),
    C("parser.add_argument('--device', default='cuda:0')", "device_type", R, True,
      "parser.add_argument('--device', default='npu:0')", "default device string reaches torch.device() in CTRTrainer"),
])

E("rechub_layers", "torch_rechub/basic/layers.py", "explicit_replacement",
  "torch-rechub basic/layers.py (EmbeddingLayer, pooling, FM, cross nets) with an embedding_bag fast path", [
    C("fea_emb = F.embedding_bag(x[fea.name].long(), table.weight", "unsupported_op_workaround", R, False,
      "fea_emb = SumPooling()(table(x[fea.name].long()), InputMask()(x, fea).unsqueeze(1))  # or nn.EmbeddingBag",
      "unconfirmed: F.embedding_bag is ✘ in Ascend's 2.7.1 table, yet _embedding_bag has an NPU kernel and "
      "nn.EmbeddingBag is ✔; a cautious porter routes through the masked pooling layers"),
    C("return torch.scatter_reduce(out, 0, index, values_emb", "unsupported_op_workaround", R, False,
      "return out.index_add_(0, segment_ids, values_emb)",
      "scatter_reduce has no NPU kernel in the op lists and is ✘ in the 2.7.1 table -> CPU fallback (perf); "
      "index_add (✔) gives the same sum"),
])

E("rechub_serving_app", "torch_rechub/serving/app.py", "explicit_replacement",
  "torch-rechub-style FastAPI ranking service (per-worker CUDA_VISIBLE_DEVICES, TorchScript, NVML metrics)", [
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES"', "env_var", R, True,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", os.environ.get("WORKER_NPU", "0"))',
      "per-worker card pinning; the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES, so every worker lands on card 0"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "service entry module"),
    C('p.add_argument("--device", default="cuda")', "device_type", R, True,
      'p.add_argument("--device", default="npu")', "default device"),
    C('model = torch.jit.load(args.model_path, map_location="cuda")', "tensor_to_device", R, True,
      "model = torch.jit.load(args.model_path, map_location=device)", "map_location='cuda' fails without CUDA"),
    C('if device.type == "cuda" and args.fp16:', "device_type", R, True,
      'if device.type in ("cuda", "npu") and args.fp16:',
      "with --fp16 the model stays fp32 on NPU while the warm-up feeds half inputs -> dtype mismatch"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", R, True,
      "with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.fp16):",
      "CUDA autocast is inactive for NPU tensors"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", R, True, "torch.npu.synchronize(device)",
      "latency histogram; torch.cuda.synchronize raises without CUDA"),
    C("free, total = torch.cuda.mem_get_info(device)", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info(device)", "/health endpoint would 500"),
])

E("rechub_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "torch-rechub / ctr_ops training+serving Dockerfile on nvidia/cuda with cu121 wheels and fbgemm-gpu", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image carries CUDA, not CANN; the NPU driver/firmware comes from the host (Ascend docker runtime)"),
    C("ARG TORCH_VERSION=2.2.2", "import_torch_npu", R, True,
      "ARG TORCH_VERSION=2.1.0\nARG TORCH_NPU_VERSION=2.1.0.post12",
      "torch_npu wheels exist only for specific torch versions (2.2.0 but not 2.2.2); torch and torch_npu "
      "must be paired"),
    C("pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "pip install torch==${TORCH_VERSION} --index-url https://download.pytorch.org/whl/cpu "
      "&& pip install torch-npu==${TORCH_NPU_VERSION}",
      "CUDA torch build; x86 NPU hosts use the CPU wheel (aarch64: plain PyPI) plus torch-npu"),
    C("RUN pip install fbgemm-gpu==0.6.0 --index-url https://download.pytorch.org/whl/cu121", "custom_cuda_extension", R, True,
      "RUN git clone https://gitcode.com/Ascend/fbgemm-ascend && pip install ./fbgemm-ascend",
      "fbgemm_gpu's CUDA TBE kernels -> Ascend/fbgemm-ascend (torch.ops.fbgemm.* in AscendC)"),
    C("&& pip install torchrec==0.6.0", "distributed_framework", R, False,
      "&& pip install torchrec==0.6.0  # + Ascend RecSDK torchrec_npu patch",
      "unconfirmed: TorchRec on NPU goes through Ascend RecSDK (torch_rec_v1), details not in the knowledge"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0+PTX"', "env_var", X, False, None,
      "meaningless without nvcc"),
    C("RUN pip install -v --no-build-isolation .", "custom_cuda_extension", R, True,
      "RUN CTR_OPS_NO_EXT=1 pip install -v --no-build-isolation .",
      "setup.py builds a CUDAExtension and raises when CUDA_HOME is missing"),
    C('&& python -c "import ctr_ops._C"', "custom_cuda_extension", X, True, None,
      "the CUDA extension is not built on NPU; the build step would fail here"),
    C("ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", R, False,
      "RUN echo 'source /usr/local/Ascend/ascend-toolkit/set_env.sh' >> /etc/bash.bashrc",
      "CUDA library paths; CANN's set_env.sh provides the Ascend ones"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", X, False, None,
      "nvidia-container-runtime variable; the Ascend docker runtime uses ASCEND_VISIBLE_DEVICES"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "nvidia runtime only"),
    C("NCCL_DEBUG=WARN", "env_var", X, False, None, "no effect on HCCL"),
    C("HEALTHCHECK --interval=30s --timeout=5s CMD nvidia-smi", "device_capability_check", R, True,
      "HEALTHCHECK --interval=30s --timeout=5s CMD npu-smi info > /dev/null || exit 1",
      "nvidia-smi is absent: the container is reported unhealthy forever"),
    C('CMD ["python", "-m", "torch_rechub.serving.app", "--port", "8080", "--device", "cuda"]', "device_type", R, True,
      'CMD ["python", "-m", "torch_rechub.serving.app", "--port", "8080", "--device", "npu"]', "serving device"),
])

# ----------------------------------------------------------------------------------------------- FuxiCTR

E("fuxictr_torch_utils", "fuxictr/pytorch/torch_utils.py", "explicit_replacement",
  "reczoo/FuxiCTR pytorch/torch_utils.py (seed_everything, get_device(gpu) with an int gpu index)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "get_device() is the single place FuxiCTR picks the device; the port calls torch.npu here"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed(seed)",
      "lazily queued without CUDA; NPU generator otherwise unseeded (reproducibility only)"),
    C("if gpu >= 0 and torch.cuda.is_available():", "device_type", R, True,
      "if gpu >= 0 and torch.npu.is_available():",
      "every FuxiCTR model would run on the CPU on an NPU host"),
    C('device = torch.device("cuda:" + str(gpu))', "device_type", R, True,
      'device = torch.device("npu:" + str(gpu))', "device string"),
])

E("fuxictr_rank_model", "fuxictr/pytorch/models/rank_model.py", "explicit_replacement",
  "FuxiCTR pytorch/models/rank_model.py (BaseModel fit/evaluate loop)", [
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", R, False,
      'logging.info("Peak NPU memory: {:.2f} GB".format(torch.npu.max_memory_allocated() / 1024 ** 3))',
      "opt-in log (log_gpu_memory); without CUDA it silently reports 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; the NPU cache is then never trimmed after evaluation"),
])

E("fuxictr_autotuner", "fuxictr/autotuner.py", "explicit_replacement",
  "FuxiCTR autotuner.py (grid search over cards, one subprocess per trial, nvidia-smi free-memory picker)", [
    C('["nvidia-smi", "--query-gpu=index,memory.free"', "device_capability_check", R, True,
      '["npu-smi", "info", "-t", "usages", "-i", str(i)]  # parse "HBM Usage Rate(%)" per card',
      "gpu_list='auto' shells out to nvidia-smi: FileNotFoundError on an NPU host"),
    C("env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(idle_gpu))", "env_var", R, True,
      "env = dict(os.environ, ASCEND_RT_VISIBLE_DEVICES=str(idle_gpu))",
      "trials are pinned by CUDA_VISIBLE_DEVICES and all see '--gpu 0': on NPU every trial lands on card 0"),
])

E("fuxictr_din", "model_zoo/DIN/src/DIN.py", "explicit_replacement",
  "FuxiCTR model_zoo/DIN/src/DIN.py (guarded optional fused attention, is_cuda dispatch with torch fallback)", [
])

E("fuxictr_env_yml", "environment.yml", "explicit_replacement",
  "FuxiCTR / BARS benchmark conda environment.yml (pytorch-cuda from the nvidia channel, NVML tools)", [
    C("=- nvidia", "torch_cuda_api", X, True, None, "CUDA-only conda channel"),
    C("=- pytorch=2.0.1", "torch_cuda_api", R, True, "# torch comes from pip below (CPU wheel paired with torch-npu)",
      "with pytorch-cuda this resolves to a CUDA build; torch_npu has to match a pip torch exactly"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", X, True, None, "CUDA runtime metapackage"),
    C("=- cudnn=8.9.2", "torch_cuda_api", X, True, None, "CUDA-only library"),
    C("=- nccl=2.18.3", "dist_backend", X, True, None, "NCCL; HCCL ships with CANN"),
    C("=- pip:", "import_torch_npu", A, True, "    - torch==2.1.0\n    - torch-npu==2.1.0.post12",
      "torch_npu (and its paired torch) installed with pip"),
    C("=- nvidia-ml-py==12.535.108", "device_capability_check", X, False, None, "NVML bindings, no NPU equivalent"),
    C("=- gpustat==1.1.1", "device_capability_check", X, False, None, "NVML-based monitor"),
    C("=- pynvml==11.5.0", "device_capability_check", X, False, None, "NVML bindings"),
    C('CUBLAS_WORKSPACE_CONFIG: ":4096:8"', "env_var", R, False, 'HCCL_DETERMINISTIC: "1"',
      "cuBLAS-only determinism switch; on NPU determinism comes from torch_npu.npu.set_deterministic / "
      "HCCL_DETERMINISTIC (seed article); reproducibility only"),
])

# ----------------------------------------------------------------------------------------------- trainers

E("dcnv2_ddp_train", "train_dcnv2_ddp.py", "explicit_replacement",
  "DCN-V2 Criteo trainer (torchrun DDP, sparse embeddings + SparseAdam, cuda.amp, all_gather eval)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C("t = torch.tensor([value], dtype=torch.float64, device=device)", "unsupported_op_workaround", R, True,
      "t = torch.tensor([value], dtype=torch.float32, device=device)",
      "HCCL all_reduce lists bf16/fp16/fp32/int32/int64/bool only (2.7.1 table): no fp64"),
    C("with torch.cuda.amp.autocast(enabled=amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=amp):", "eval autocast; CUDA autocast is inactive for NPU tensors"),
    C("n = torch.tensor([preds.numel()], device=device)", "unsupported_op_workaround", R, True,
      "n = torch.tensor([preds.numel()], dtype=torch.int32, device=device)",
      "int64 size tensor all_gathered; HCCL all_gather lists bf16/fp16/fp32/int8/int32/bool only"),
    C('device = torch.device("cuda", local_rank)', "device_type", R, True,
      'device = torch.device("npu", local_rank)', "device"),
    C("nn.Embedding(hash_size, embed_dim, sparse=True)", "unsupported_op_workaround", R, False,
      "nn.Embedding(hash_size, embed_dim)",
      "unconfirmed: sparse-gradient embeddings on NPU (sparse ops without kernels raise); dense grads are safe"),
    C("sparse_opt = torch.optim.SparseAdam(sparse_params, lr=args.sparse_lr)", "fused_optimizer", R, False,
      "sparse_opt = torch_npu.optim.NpuFusedAdam(sparse_params, lr=args.sparse_lr)",
      "follows the dense-gradient change above (SparseAdam needs sparse grads); unconfirmed"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "torch.cuda.amp.GradScaler disables itself without CUDA: fp16 steps without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.amp, dtype=torch.float16):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp, dtype=torch.float16):", "training autocast"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", R, True,
      "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "silently 0 (CUDA never initialised)"),
])

E("deepfm_apex_trainer", "deepfm/train.py", "explicit_replacement",
  "DeepFM Avazu/Criteo trainer on apex (amp O1 + FusedAdam + apex DDP, torch.distributed.launch --local_rank)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", R, False,
      "from apex.optimizers import NpuFusedAdam",
      "apex's FusedAdam is a CUDA kernel; Ascend apex ships NpuFused* instead (FusedAdam must be edited by hand). "
      "It is the construction below that fails; whether the import itself does is unconfirmed"),
    C("from apex.parallel import DistributedDataParallel as ApexDDP", "distributed_framework", R, False,
      "from torch.nn.parallel import DistributedDataParallel as DDP",
      "unconfirmed whether Ascend apex keeps apex.parallel.DistributedDataParallel"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless"),
    C("feat_idx, feat_val = feat_idx.cuda(non_blocking=True), feat_val.cuda(non_blocking=True)",
      "tensor_to_device", R, True,
      "feat_idx, feat_val = feat_idx.npu(non_blocking=True), feat_val.npu(non_blocking=True)", "eval batch"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(args.local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C("model = convert_syncbn_model(model)", "distributed_framework", R, False,
      "model = nn.SyncBatchNorm.convert_sync_batchnorm(model)", "unconfirmed: apex SyncBN on Ascend apex"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", "model placement"),
    C("optimizer = FusedAdam(model.parameters()", "fused_optimizer", R, True,
      "optimizer = NpuFusedAdam(model.parameters(), lr=args.lr, weight_decay=args.l2)", "see import"),
    C("model, optimizer = amp.initialize(model, optimizer", "amp", R, False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=\"dynamic\", combine_grad=True,",
      "Ascend apex supports O1/O2 + dynamic loss scale; combine_grad is its NPU performance option"),
    C("model = ApexDDP(model, delay_allreduce=True)", "distributed_framework", R, False,
      "model = DDP(model, device_ids=[args.local_rank])", "unconfirmed: apex.parallel DDP on Ascend apex"),
    C("feat_idx = feat_idx.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "feat_idx = feat_idx.npu(non_blocking=True)", "train batch"),
    C("feat_val = feat_val.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "feat_val = feat_val.npu(non_blocking=True)", "train batch"),
    C("label = label.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "label = label.npu(non_blocking=True)", "train batch"),
])

E("din_compile_train", "din/train_din.py", "explicit_replacement",
  "DIN Amazon-Books trainer (torch.compile max-autotune, bf16 autocast chosen by is_bf16_supported, pin_memory_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C('with torch.autocast("cuda", dtype=amp_dtype):', "amp", R, True,
      'with torch.autocast("npu", dtype=amp_dtype):',
      "autocast('cuda') is disabled with a warning when CUDA is absent: eval runs in fp32"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "NPU host trains on the CPU"),
    C('pin_memory_device="cuda"', "pin_memory", R, True,
      'loader_kwargs = dict(num_workers=args.workers, pin_memory=True, pin_memory_device="npu",',
      "pins batches for a CUDA device that does not exist"),
    C("use_bf16 = torch.cuda.is_bf16_supported()", "device_capability_check", R, True,
      "use_bf16 = torch.npu.is_bf16_supported()",
      "without CUDA this raises or returns False, so the bf16-capable NPU is pushed onto fp16 + GradScaler"),
    C('scaler = torch.amp.GradScaler("cuda", enabled=not use_bf16)', "amp", R, True,
      'scaler = torch.amp.GradScaler("npu", enabled=not use_bf16)', "a CUDA GradScaler disables itself"),
    C('train_model = torch.compile(model, mode="max-autotune", dynamic=False)', "compile_mode", R, False,
      'train_model = torch.compile(model, dynamic=False)  # or backend="npugraphs"',
      "unconfirmed: max-autotune's Triton GEMM templates on NPU; Inductor on NPU is supported from torch_npu 2.6"),
    C("torch.cuda.get_device_name()", "torch_cuda_api", R, True,
      'print(f"device={device} {torch.npu.get_device_name()} amp={amp_dtype} compile={args.compile}")',
      "raises without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "current_device() lazy-init raises without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype):', "training autocast"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", R, True,
      "peak = torch.npu.max_memory_allocated() / 2 ** 20", "silently 0"),
])

E("dlrm_dcn_torchrec", "torchrec_dlrm/dlrm_main.py", "device_branch_or_abstraction",
  "pytorch/torchrec examples/golden_training + torchrec_dlrm dlrm_main.py (DLRM_DCN, DMP, fbgemm fused Adagrad)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C("from fbgemm_gpu.split_embedding_configs import EmbOptimType", "custom_cuda_extension", A, False,
      "import fbgemm_ascend  # registers AscendC torch.ops.fbgemm.* kernels",
      "unconfirmed: without it the TBE ops see NPU tensors with no NPU kernel (error or CPU fallback)"),
    C("from torchrec import EmbeddingBagCollection", "distributed_framework", A, False,
      "import torchrec_npu  # Ascend RecSDK patch",
      "unconfirmed: RecSDK torch_rec_v1 (hybrid_torchrec / torchrec_npu) usage is not detailed in the knowledge"),
    C("if torch.cuda.is_available():", "device_type", B, True,
      "if torch.npu.is_available():", "an NPU host falls into the CPU/gloo branch"),
    C('device: torch.device = torch.device(f"cuda:{rank}")', "device_type", R, True,
      'device: torch.device = torch.device(f"npu:{rank}")', "device"),
    C('backend = "nccl"', "dist_backend", R, True, 'backend = "hccl"',
      "also forwarded to get_dataloader(), which keys pin_memory off the backend name"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)", "device select"),
])

E("torchrec_requirements", "torchrec_dlrm/requirements.txt", "explicit_replacement",
  "torchrec DLRM example requirements.txt (cu121 index, fbgemm-gpu/torchrec release train, triton, NVML)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index"),
    C("torch==2.2.0+cu121", "torch_cuda_api", R, True, "torch==2.2.0\ntorch-npu==2.2.0.post2",
      "CUDA local-version wheel; the NPU stack is CPU torch + the matching torch-npu"),
    C("fbgemm-gpu==0.6.0+cu121", "custom_cuda_extension", R, True,
      "# fbgemm-ascend (build from Ascend/fbgemm-ascend)", "CUDA TBE kernels; Ascend counterpart is fbgemm-ascend"),
    C("torchrec==0.6.0", "distributed_framework", R, False,
      "torchrec==0.6.0  # + Ascend RecSDK torchrec_npu", "unconfirmed (RecSDK)"),
    C("triton==2.2.0", "triton_kernel_tuning", R, False, "triton-ascend",
      "only for the optional fused over-arch kernels"),
    C("nvidia-ml-py==12.535.133", "device_capability_check", X, False, None, "NVML monitoring"),
    C("nvtx==0.2.8", "torch_cuda_api", X, False, None,
      "NVTX ranges for nsys; the NPU analogue is torch_npu.npu.mstx (no pip package)"),
])

# ----------------------------------------------------------------------------------------------- ctr_ops kernels

E("hash_embedding_ext", "ctr_ops/hash_embedding.py", "device_branch_or_abstraction",
  "hashed multi-probe embedding with a JIT-loaded (.cu) fused gather kernel and a cpu-only torch fallback", [
    C('if ids.device.type == "cpu":', "custom_cuda_extension", B, True, 'if ids.device.type != "cuda":',
      "only the CPU takes the torch reference: NPU tensors go to the nvcc-built kernel "
      "(cpp_extension.load ✘ on Ascend, no nvcc)"),
    C('dev = torch.device("cuda")', "device_type", R, True, 'dev = torch.device("npu")', "benchmark helper"),
    C("torch.cuda.synchronize()  # drain warm-up", "torch_cuda_api", R, True, "torch.npu.synchronize()  # drain warm-up",
      "raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C('dev = torch.device("cuda:0")', "device_type", R, True, 'dev = torch.device("npu:0")', "self-check helper"),
])

E("ctr_ops_setup", "setup.py", "explicit_replacement",
  "CUDAExtension setup.py for a CTR kernel package (nvcc -V probe, gencode flags, WITH_CUDA, cublas)", [
    C("from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension",
      "custom_cuda_extension", R, True,
      "from torch.utils.cpp_extension import BuildExtension, CppExtension\n"
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "NpuExtension adds the torch_npu / ACL include and lib dirs"),
    C('raw_output = subprocess.check_output([os.path.join(cuda_dir, "bin", "nvcc"), "-V"]', "custom_cuda_extension",
      X, True, None, "probes nvcc, absent on an NPU host"),
    C('if os.environ.get("TORCH_CUDA_ARCH_LIST"):', "env_var", X, False, None, "CUDA arch list has no meaning"),
    C("major, minor = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension", X, True, None,
      "CUDA_HOME is None -> crash"),
    C("f.write(f'cuda_version = \"{torch.version.cuda}\"\\n')", "torch_cuda_api", R, False,
      "f.write(f'torch_npu_version = \"{torch_npu.__version__}\"\\n')", "records None; cosmetic"),
    C('cuda_sources = sorted(glob.glob(os.path.join("ctr_ops", "csrc", "cuda", "*.cu")))', "custom_cuda_extension",
      R, True, 'npu_sources = sorted(glob.glob(os.path.join("ctr_ops", "csrc", "npu", "*.cpp")))',
      ".cu kernels have to be rewritten (Ascend C / torch_npu ops)"),
    C('define_macros = [("WITH_CUDA", None)]', "custom_cuda_extension", R, True, 'define_macros = [("WITH_NPU", None)]',
      "selects the CUDA registrations in the C++ sources"),
    C('"nvcc": [', "custom_cuda_extension", X, True, None, "nvcc flags (fast-math, half operators, gencode)"),
    C("if CUDA_HOME is None:", "custom_cuda_extension", X, True, None, "always true on an NPU host -> RuntimeError"),
    C("ext = CUDAExtension(", "custom_cuda_extension", R, True, "ext = NpuExtension(", "extension type"),
    C('libraries=["cublas"],', "custom_cuda_extension", X, True, None, "cuBLAS does not exist on the NPU host"),
    C("\"triton>=2.1; platform_system == 'Linux'\",", "triton_kernel_tuning", R, False, '"triton-ascend",',
      "ctr_ops.triton kernels need the Ascend Triton backend to run on NPU; unchanged, the cross layer's is_cuda "
      "gate keeps NPU on the eager path"),
    C('"bench": ["pynvml", "pandas"],', "device_capability_check", R, False, '"bench": ["pandas"],', "NVML"),
])

E("fm_interaction_ops", "ctr_ops/interaction.py", "device_branch_or_abstraction",
  "FM / DLRM dot-interaction autograd Functions on a compiled ctr_ops._C extension", [
    C("from ctr_ops import _C  # built by setup.py (CUDAExtension)", "custom_cuda_extension", R, True,
      "try:\n    from ctr_ops import _C\nexcept ImportError:\n    _C = None",
      "unguarded import of the CUDA extension; it is not built on NPU"),
    C("return _FMInteraction.apply(emb)", "custom_cuda_extension", B, True,
      "if _C is None or not emb.is_cuda:\n        return reference_fm(emb)\n    return _FMInteraction.apply(emb)",
      "fm_interaction has no fallback: NPU tensors hit `assert emb.is_cuda` / the CUDA kernel"),
    C('emb = torch.randn(batch, fields, dim, device="cuda")', "device_type", R, True,
      'emb = torch.randn(batch, fields, dim, device="npu")', "self-check"),
    C('dense = torch.randn(batch, dim, device="cuda")', "device_type", R, True,
      'dense = torch.randn(batch, dim, device="npu")', "self-check"),
])

E("triton_cross_layer", "ctr_ops/triton/cross_layer.py", "device_branch_or_abstraction",
  "fused DCN-V2 cross layer Triton kernel (autotune warps/stages, TF32 by compute capability, SM-count grid)", [
    C("num_warps=warps, num_stages=stages))", "triton_kernel_tuning", R, False,
      "num_warps=1, num_stages=1))  # retune BLOCK_* for Ascend vector/cube cores",
      "unconfirmed: warps/stages are GPU occupancy knobs; triton-ascend needs its own tiling"),
    C("acc += tl.dot(a, b, allow_tf32=ALLOW_TF32)", "triton_kernel_tuning", R, False,
      "acc += tl.dot(a, b)", "unconfirmed: TF32 flag semantics on triton-ascend"),
    C('eviction_policy="evict_first")', "triton_kernel_tuning", R, False, ")",
      "unconfirmed: cache-eviction hints on triton-ascend"),
    C("major, _ = torch.cuda.get_device_capability(device_index)", "device_capability_check", R, False,
      "return False  # no TF32 / SM-version notion on NPU",
      "only reached once the Triton path is enabled for NPU; get_device_capability is None on NPU unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set"),
    C("return torch.cuda.get_device_properties(device_index).multi_processor_count", "device_capability_check", R, False,
      "return torch.npu.get_device_properties(device_index).vector_core_num",
      "NPU properties expose cube_core_num / vector_core_num only; used by the benchmark's persistent grid"),
    C("if self.use_triton and xl.is_cuda and xl.dim() == 2:", "triton_kernel_tuning", B, False,
      "if self.use_triton and xl.device.type in (\"cuda\", \"npu\") and xl.dim() == 2:",
      "unchanged, NPU inputs silently take the eager formula (correct, unfused)"),
    C("layer = CrossLayerV2(512).cuda().half()", "tensor_to_device", R, True,
      "layer = CrossLayerV2(512).npu().half()", "self-test"),
    C('x = torch.randn(8192, 512, device="cuda", dtype=torch.float16)', "device_type", R, True,
      'x = torch.randn(8192, 512, device="npu", dtype=torch.float16)', "self-test"),
])

# ----------------------------------------------------------------------------------------------- configs / launch

E("dcn_yaml_config", "configs/dcnv2_criteo_ddp.yaml", "explicit_replacement",
  "OmegaConf/Hydra-style DCN-V2 trainer config (device, amp, compile, distributed backend, env block)", [
    C("fused_kernel: true", "custom_cuda_extension", R, False, "fused_kernel: false",
      "the hashed-embedding kernel is CUDA-only; needed unless hash_embedding.py's dispatch is ported"),
    C("use_triton: true", "triton_kernel_tuning", R, False, "use_triton: false",
      "cross-layer Triton kernel needs triton-ascend tuning"),
    C("interaction: fm_fused", "custom_cuda_extension", R, False, "interaction: fm",
      "FusedFM imports ctr_ops._C"),
    C("device: cuda", "device_type", R, True, "device: npu", "trainer device"),
    C("dtype: float16", "amp", R, False, "dtype: bfloat16",
      "bf16 avoids the fp16 loss-scaling instability reported on NPU (seed article); performance/stability"),
    C("mode: max-autotune-no-cudagraphs", "compile_mode", R, False, "mode: default",
      "unconfirmed: max-autotune relies on Triton GEMM templates"),
    C("backend: nccl", "dist_backend", R, True, "backend: hccl", "process-group backend"),
    C('CUDA_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1,2,3,4,5,6,7"',
      "device visibility for the NPU runtime"),
    C("NCCL_DEBUG: WARN", "env_var", R, False, 'ASCEND_GLOBAL_LOG_LEVEL: "3"', "NCCL logging has no effect"),
    C('NCCL_IB_DISABLE: "0"', "env_var", X, False, None, "NCCL transport knob"),
    C('NCCL_ASYNC_ERROR_HANDLING: "1"', "env_var", R, False, 'HCCL_ASYNC_ERROR_HANDLING: "1"',
      "torch_npu watchdog variable (default 1)"),
    C("activities: [cpu, cuda]", "torch_cuda_api", R, False, "activities: [cpu, npu]",
      "profiling is off by default; the CUDA activity captures nothing on NPU"),
    C("nvtx_ranges: true", "torch_cuda_api", R, False, "mstx_ranges: true", "NVTX -> torch_npu.npu.mstx"),
])

E("ddp_launch_sh", "scripts/run_dcnv2_criteo_8gpu.sh", "explicit_replacement",
  "torchrun launch script (CUDA_VISIBLE_DEVICES subset, nvidia-smi card count, NCCL env, nvidia-smi sampler)", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "subset selection"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=index", "device_capability_check", R, True,
      "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')", "set -euo pipefail: the script dies on a missing nvidia-smi"),
    C('if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then', "env_var", R, True,
      'if [[ -n "${ASCEND_RT_VISIBLE_DEVICES:-}" ]]; then', "counts the selected subset"),
    C('NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}"', "env_var", R, True,
      "NUM_GPUS=$(echo \"${ASCEND_RT_VISIBLE_DEVICES}\" | tr ',' '\\n' | wc -l)",
      "else nproc_per_node exceeds the visible NPUs"),
    C('echo "using ${NUM_GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES:-all}"', "env_var", R, False,
      'echo "using ${NUM_GPUS} NPU(s): ${ASCEND_RT_VISIBLE_DEVICES:-all}"', "log line"),
    C("export NCCL_DEBUG=", "env_var", X, False, None, "no effect on HCCL"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL transport knob"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "unconfirmed for single node; multi-node HCCL picks the host NIC by HCCL_IF_IP / HCCL_SOCKET_IFNAME"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", X, False, None, "NCCL RoCE knob"),
    C("export GLOO_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME}", "env_var", R, False,
      "export GLOO_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME}", "follows the rename above"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "allocator option is read under the NPU name"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "sanity heredoc"),
    C('assert torch.cuda.is_available(), "no CUDA device visible"', "device_type", R, True,
      'assert torch.npu.is_available(), "no NPU device visible"', "always fails on an NPU host"),
    C('print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())',
      "torch_cuda_api", R, False, 'print("torch", torch.__version__, "torch_npu", torch_npu.__version__, '
      '"devices", torch.npu.device_count())', "prints None / 0"),
    C("nvidia-smi --query-gpu=timestamp,index,utilization.gpu", "device_capability_check", R, False,
      "npu-smi info watch -i 0 > \"${LOG_DIR}/npu_util.csv\" &",
      "background sampler just dies; no utilisation log (unconfirmed replacement command)"),
])

E("ctr_bench_pyproject", "pyproject.toml", "explicit_replacement",
  "uv-managed pyproject.toml for a CTR benchmark suite (cu121 index, gpu/preprocess/serving extras)", [
    C('"torch>=2.1,<2.3",', "import_torch_npu", A, True, '"torch-npu>=2.1.0,<2.3",',
      "torch_npu must be installed next to (and match) torch"),
    C('"fbgemm-gpu==0.5.0",', "custom_cuda_extension", R, False, "# fbgemm-ascend (built from source)",
      "only with the `gpu` extra"),
    C('"torchrec==0.5.0",', "distributed_framework", R, False, '"torchrec==0.5.0",  # + RecSDK torchrec_npu',
      "unconfirmed (RecSDK)"),
    C('"triton>=2.1",', "triton_kernel_tuning", R, False, '"triton-ascend",', "Ascend Triton backend"),
    C('"nvidia-ml-py>=12.535",', "device_capability_check", X, False, None, "NVML"),
    C('"cudf-cu12>=23.12",', "custom_cuda_extension", X, False, None, "RAPIDS (CUDA only); preprocess extra"),
    C('"dask-cudf-cu12>=23.12",', "custom_cuda_extension", X, False, None, "RAPIDS (CUDA only)"),
    C('"cupy-cuda12x>=12.3",', "custom_cuda_extension", X, False, None, "cupy has no Ascend support"),
    C('"onnxruntime-gpu>=1.16",', "custom_cuda_extension", R, False, '"onnxruntime>=1.16",',
      "CUDA execution provider; serving extra"),
    C('"tensorrt>=8.6",', "custom_cuda_extension", X, False, None, "TensorRT; Ascend uses its offline model converter"),
    C('"pycuda>=2022.2",', "custom_cuda_extension", X, False, None, "CUDA driver bindings"),
    C('torch = { index = "pytorch-cu121" }', "torch_cuda_api", R, True, 'torch = { index = "pytorch-cpu" }',
      "routes torch to the CUDA wheels; NPU hosts need the CPU build under torch_npu"),
    C('fbgemm-gpu = { index = "pytorch-cu121" }', "custom_cuda_extension", X, False, None, "gpu extra only"),
    C('url = "https://download.pytorch.org/whl/cu121"', "torch_cuda_api", R, True,
      'url = "https://download.pytorch.org/whl/cpu"', "index URL"),
    C('url = "https://pypi.nvidia.com"', "torch_cuda_api", X, False, None, "NVIDIA index (RAPIDS wheels)"),
])

# ----------------------------------------------------------------------------------------------- ctr_bench library

E("ctr_batch_prefetcher", "ctr_bench/data/prefetcher.py", "device_branch_or_abstraction",
  "side-stream H2D prefetcher for dict-of-tensor CTR batches (record_stream, pinned host buffers)", [
    C("v = v.pin_memory()", "pin_memory", R, False, 'v = v.pin_memory("npu")',
      "unconfirmed which device a bare Tensor.pin_memory() targets under torch_npu"),
    C('self.enabled = self.device.type == "cuda"', "device_type", B, False,
      'self.enabled = self.device.type in ("cuda", "npu")',
      "unchanged, NPU falls back to synchronous copies (correct, loses the overlap)"),
    C("self.stream = torch.cuda.Stream(device=self.device) if self.enabled else None", "torch_cuda_api", R, False,
      "self.stream = torch.npu.Stream(device=self.device) if self.enabled else None",
      "only reached once the prefetcher is enabled for npu"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", R, False, "with torch.npu.stream(self.stream):",
      "as above"),
    C("self._event = torch.cuda.Event()", "torch_cuda_api", R, False, "self._event = torch.npu.Event()", "as above"),
    C("current = torch.cuda.current_stream(self.device)", "torch_cuda_api", R, False,
      "current = torch.npu.current_stream(self.device)", "as above"),
    C("if torch.cuda.is_available():", "device_type", B, True, "if torch.npu.is_available():",
      "device_for_rank returns the CPU on an NPU host"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", R, True, "torch.npu.set_device(local_rank)", "branch body"),
    C('return torch.device("cuda", local_rank)', "device_type", R, True, 'return torch.device("npu", local_rank)',
      "branch body"),
    C("sparse = torch.randint(0, 1 << 30, (batch_rows, num_sparse)).pin_memory()", "pin_memory", R, False,
      'sparse = torch.randint(0, 1 << 30, (batch_rows, num_sparse)).pin_memory("npu")', "unconfirmed, see above"),
    C("dense = torch.randn(batch_rows, num_dense).pin_memory()", "pin_memory", R, False,
      'dense = torch.randn(batch_rows, num_dense).pin_memory("npu")', "unconfirmed, see above"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events need a CUDA build"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "as above"),
])

E("dist_auc_metrics", "ctr_bench/metrics/dist_auc.py", "explicit_replacement",
  "exact distributed AUC/GAUC via variable-length all_gather + fp64 histogram StreamingAUC", [
    C('if dist.is_initialized() and dist.get_backend() == "nccl":', "dist_backend", R, True,
      'if dist.is_initialized() and dist.get_backend() in ("nccl", "hccl"):',
      "backend-string comparisons are not rewritten by transfer_to_npu; with hccl the tensors stay on the CPU "
      "and the HCCL collective rejects them"),
    C('return torch.device("cuda", torch.cuda.current_device())', "torch_cuda_api", R, True,
      'return torch.device("npu", torch.npu.current_device())', "raises without CUDA"),
    C('self.device = device or torch.device("cuda")', "device_type", R, True,
      'self.device = device or torch.device("npu")', "default device"),
    C("self.pos = torch.zeros(num_bins, dtype=torch.float64, device=self.device)", "unsupported_op_workaround", R, True,
      "self.pos = torch.zeros(num_bins, dtype=torch.int64, device=self.device)",
      "histograms are all_reduced; HCCL all_reduce has no fp64 (int64 is listed)"),
    C("self.neg = torch.zeros(num_bins, dtype=torch.float64, device=self.device)", "unsupported_op_workaround", R, True,
      "self.neg = torch.zeros(num_bins, dtype=torch.int64, device=self.device)", "as above"),
    C("self.pos.index_add_(0, idx[lab > 0.5], torch.ones_like(idx[lab > 0.5], dtype=torch.float64))",
      "unsupported_op_workaround", R, True,
      "self.pos.index_add_(0, idx[lab > 0.5], torch.ones_like(idx[lab > 0.5]))", "source dtype must follow"),
    C("self.neg.index_add_(0, idx[lab <= 0.5], torch.ones_like(idx[lab <= 0.5], dtype=torch.float64))",
      "unsupported_op_workaround", R, True,
      "self.neg.index_add_(0, idx[lab <= 0.5], torch.ones_like(idx[lab <= 0.5]))", "as above"),
])

E("bench_inference_cudagraph", "benchmarks/bench_ctr_inference.py", "explicit_replacement",
  "CTR ranking latency benchmark (CUDA events, NVTX ranges, torch.jit.trace, CUDA-graph replay)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "entry script"),
    C('p.add_argument("--device", default="cuda:0")', "device_type", R, True,
      'p.add_argument("--device", default="npu:0")', "default device"),
    C("self.start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self.start = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("self.end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "self.end = torch.npu.Event(enable_timing=True)", "CUDA events"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C('torch.cuda.nvtx.range_push(f"{tag}/{i}")', "torch_cuda_api", R, True,
      'torch_npu.npu.mstx.range_start(f"{tag}/{i}")',
      "--profile only; torch.cuda.nvtx is not redirected and needs a CUDA build"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", R, True, "torch_npu.npu.mstx.range_end(rid)",
      "as above (mstx method names from memory)"),
    C("side = torch.cuda.Stream()", "torch_cuda_api", R, True, "side = torch.npu.Stream()", "graph warm-up stream"),
    C("side.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "side.wait_stream(torch.npu.current_stream())", "as above"),
    C("with torch.cuda.stream(side):", "torch_cuda_api", R, True, "with torch.npu.stream(side):", "as above"),
    C("torch.cuda.current_stream().wait_stream(side)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(side)", "as above"),
    C("graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "graph = torch.npu.NPUGraph()",
      "torch.cuda.CUDAGraph -> torch.npu.NPUGraph (inference only, which this is)"),
    C("with torch.cuda.graph(graph):", "torch_cuda_api", R, True, "with torch.npu.graph(graph):", "capture"),
    C('"gpu": torch.cuda.get_device_name(device),', "torch_cuda_api", R, True,
      '"npu": torch.npu.get_device_name(device),', "raises without CUDA"),
    C('"cuda": torch.version.cuda,', "torch_cuda_api", R, False, '"torch_npu": torch_npu.__version__,',
      "records None"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', "the 'eager_fp16' row would measure fp32"),
    C("mem_mb = torch.cuda.max_memory_allocated(device) / 2 ** 20", "torch_cuda_api", R, True,
      "mem_mb = torch.npu.max_memory_allocated(device) / 2 ** 20", "silently 0"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "rejects an npu device / raises without CUDA"),
])

E("trt_export_serving", "serving/export_trt.py", "explicit_replacement",
  "ONNX export + TensorRT engine build/run for a CTR ranker (pycuda buffers, dynamic batch profile)", [
    C("import pycuda.autoinit", "custom_cuda_extension", X, True, None, "creates a CUDA context at import"),
    C("import pycuda.driver as cuda", "custom_cuda_extension", R, True,
      "import acl  # pyACL, for running the converted .om model", "CUDA driver bindings"),
    C("import tensorrt as trt", "custom_cuda_extension", X, True, None,
      "TensorRT has no Ascend build; the engine step becomes an offline ONNX -> OM conversion"),
    C("wrapper = ExportWrapper(model).cuda().eval()", "tensor_to_device", R, True,
      "wrapper = ExportWrapper(model).eval()  # export on the CPU", "ONNX export does not need a device"),
    C('dense = torch.randn(8, num_dense, device="cuda")', "device_type", R, True,
      "dense = torch.randn(8, num_dense)", "dummy input"),
    C('sparse = torch.randint(0, 1000, (8, num_sparse), device="cuda", dtype=torch.int32)', "device_type", R, True,
      "sparse = torch.randint(0, 1000, (8, num_sparse), dtype=torch.int32)", "dummy input"),
    C("builder = trt.Builder(TRT_LOGGER)", "custom_cuda_extension", R, True,
      'subprocess.run(["atc", f"--model={onnx_path}", "--framework=5", f"--output={engine_path}", "--soc_version=Ascend910B3"], check=True)',
      "engine build rewritten as an ATC call (flags from memory, unconfirmed)"),
    C("return trt.Runtime(TRT_LOGGER).deserialize_cuda_engine(serialized)", "custom_cuda_extension", R, True,
      "return engine_path + '.om'", "TensorRT runtime"),
    C("d_dense = cuda.mem_alloc(dense.nbytes)", "custom_cuda_extension", R, True,
      "# device buffers via acl.rt.malloc / an ais_bench InferSession", "pycuda device allocation"),
    C("stream = cuda.Stream()", "custom_cuda_extension", R, True, "# acl.rt.create_stream()", "pycuda stream"),
    C("context.execute_async_v3(stream_handle=stream.handle)", "custom_cuda_extension", R, True,
      "# session.infer([dense, sparse])", "TensorRT execution"),
    C('state = torch.load(args.checkpoint, map_location="cuda")', "tensor_to_device", R, True,
      'state = torch.load(args.checkpoint, map_location="cpu")', "map_location='cuda' fails"),
    C("ref = ExportWrapper(model).cuda()(torch.from_numpy(dense).cuda(), torch.from_numpy(sparse).cuda())",
      "tensor_to_device", R, True,
      "ref = ExportWrapper(model)(torch.from_numpy(dense), torch.from_numpy(sparse))", "reference run"),
])

E("criteo_preprocess_cudf", "ctr_bench/preprocess/criteo_gpu_preprocess.py", "explicit_replacement",
  "NVIDIA-Merlin-style Criteo preprocessing on RAPIDS cuDF / cupy / rmm", [
    C("=import cudf", "custom_cuda_extension", R, True, "import pandas as pd",
      "cuDF is RAPIDS/CUDA-only (built on cupy, which has no Ascend support); the port runs on the host CPU"),
    C("=import cupy as cp", "custom_cuda_extension", R, True, "import numpy as cp  # host arrays",
      "cupy: no Ascend support (knowledge §6)"),
    C("=import rmm", "custom_cuda_extension", X, True, None, "RAPIDS memory manager"),
    C("rmm.reinitialize(pool_allocator=True", "custom_cuda_extension", X, True, None, "CUDA pool allocator"),
    C("cp.cuda.set_allocator(rmm.rmm_cupy_allocator)", "custom_cuda_extension", X, True, None, "cupy allocator hook"),
    C("return cudf.read_csv(path", "custom_cuda_extension", R, True,
      "return pd.read_csv(path, sep=\"\\t\", names=COLUMNS, dtype=dtypes, chunksize=None if chunk_bytes <= 0 else chunk_bytes)",
      "GPU CSV reader"),
    C("df[c] = cp.log1p(col.values).astype(cp.float32)", "custom_cuda_extension", R, True,
      "df[c] = np.log1p(col.values).astype(np.float32)", "device array math"),
    C('df[c] = df[c].fillna("").str.hex_to_int()', "custom_cuda_extension", R, True,
      'df[c] = df[c].fillna("").map(lambda s: int(s, 16) if s else -1).astype("int64")',
      "cuDF-only string kernel"),
    C("vocabs[c] = cudf.Series(cp.arange(1, len(keep) + 1, dtype=cp.int32), index=keep)", "custom_cuda_extension",
      R, True, "vocabs[c] = pd.Series(np.arange(1, len(keep) + 1, dtype=np.int32), index=keep)", "vocab table"),
    C("keys = cp.asnumpy(v.index.values)", "custom_cuda_extension", R, True, "keys = v.index.values",
      "device -> host copy"),
    C("cp.cuda.Device(args.device).use()", "custom_cuda_extension", X, True, None, "selects a CUDA device"),
    C("free, total = cp.cuda.runtime.memGetInfo()", "custom_cuda_extension", R, True,
      "free, total = psutil.virtual_memory().available, psutil.virtual_memory().total", "CUDA runtime query"),
])
