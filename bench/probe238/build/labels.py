# Labels for probe238 (astronomy / astrophysics ML, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See README.md "How the labels were chosen".
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


AUTOLOAD_OLD = ("project pins torch < 2.5 (no device-backend autoload), so torch.npu / 'npu' devices only exist "
                "after an explicit import torch_npu")
AUTOLOAD_NEW = ("torch_npu >= 2.5.1 autoloads with torch, so not strictly needed; explicit import still recommended "
                "(torch_npu README)")
LIGHTNING_ACC = ("Lightning's 'gpu' accelerator is CUDA/MPS only and raises on a host without CUDA; Lightning has no "
                 "built-in NPU accelerator, so a custom 'npu' Accelerator must be registered (registration itself not "
                 "covered by /work/shared/knowledge)")

# ---------------------------------------------------------------- Zoobot ----------------------------------------

E("zoobot_finetune", "zoobot/pytorch/training/finetune.py", "device_branch_or_abstraction",
  "Zoobot (mwalmsley/zoobot) FinetuneableZoobotClassifier + get_trainer", [
    C("accelerator='auto',", "device_type", "replace", True, "accelerator='npu',",
      "Lightning 'auto' resolves to CPU on an Ascend host (it only probes CUDA/MPS/TPU): finetuning silently runs on "
      "CPU. " + LIGHTNING_ACC),
])

E("zoobot_train_pl", "zoobot/pytorch/training/train_with_pytorch_lightning.py", "device_branch_or_abstraction",
  "Zoobot train_default_zoobot_from_scratch (Lightning DDP, 16-mixed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module now calls torch.npu.*; " + AUTOLOAD_OLD),
    C("strategy = 'ddp'", "dist_backend", "replace", True,
      "strategy = DDPStrategy(process_group_backend='hccl')",
      "Lightning's DDPStrategy picks 'nccl' only for CUDA root devices and falls back to 'gloo' otherwise; gloo cannot "
      "all-reduce NPU tensors, so the backend must be set to hccl explicitly"),
    C("precision = '16-mixed'", "amp", "replace", False,
      "plugins = [MixedPrecision('16-mixed', device='npu', scaler=torch.npu.amp.GradScaler())]",
      "Lightning builds MixedPrecision with device='cuda' for any non-CPU accelerator; on NPU the CUDA autocast disables "
      "itself, so training would silently run fp32 (perf/memory only). Unconfirmed in knowledge"),
    C("accelerator = 'gpu'", "device_type", "replace", True, "accelerator = 'npu'",
      LIGHTNING_ACC),
    C("logging.info('Cuda available: {}'.format(torch.cuda.is_available()))", "torch_cuda_api", "replace", False,
      "logging.info('NPU available: {}'.format(torch.npu.is_available()))",
      "debug log only; would print False on an NPU node"),
    C("logging.info('Visible devices: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "logging.info('Visible devices: {}'.format(torch.npu.device_count()))",
      "debug log only; would print 0 on an NPU node"),
])

E("zoobot_losses", "zoobot/pytorch/training/losses.py", "explicit_replacement",
  "Zoobot Dirichlet-Multinomial loss (losses.py)", [
    C("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)", "amp", "replace", False,
      "@torch_npu.npu.amp.custom_fwd(cast_inputs=torch.float32)",
      "CUDA custom_fwd only looks at the CUDA autocast state, so under NPU autocast the fp32 cast of the lgamma loss "
      "silently stops happening; matters only once AMP is active on NPU (torch_npu.npu.amp.custom_fwd is the mapped "
      "API in Ascend's 2.7.1 table). torch.lgamma itself has no NPU kernel (CPU fallback) - left unlabelled"),
])

E("zoobot_example_finetune", "zoobot/pytorch/examples/finetuning/finetune_binary_classification.py",
  "device_branch_or_abstraction", "Zoobot finetuning example (demo_rings, FinetuneableZoobotClassifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: the example silently trains on CPU with laptop-sized batches"),
    C("accelerator = 'gpu'", "device_type", "replace", True, "accelerator = 'npu'", LIGHTNING_ACC),
    C("logging.info('Using GPU: {}'.format(torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
      "logging.info('Using NPU: {}'.format(torch.npu.get_device_name(0)))",
      "inside the (ported) accelerator branch; torch.cuda.get_device_name raises without CUDA"),
])

E("zoobot_webdatamodule", "zoobot/pytorch/training/webdatamodule.py", "device_branch_or_abstraction",
  "Zoobot WebDataModule (webdataset shards -> WebLoader)", [
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "without CUDA the loader may pin for nothing or disable pinning; pinning for the NPU needs the npu pin device. "
      "Perf only; exact torch_npu behaviour unconfirmed"),
])

E("zoobot_slurm_benchmark", "benchmarks/pytorch/run_dataset_benchmark.sh", "explicit_replacement",
  "Zoobot benchmarks/pytorch SLURM job script", [
    C("#SBATCH --constraint=A100", "device_type", "replace", True, "#SBATCH --constraint=910B",
      "node feature selects A100 nodes; the job would never land on Ascend nodes (site-specific feature name)"),
    C("#SBATCH --gres=gpu:a100:2", "device_type", "replace", True, "#SBATCH --gres=npu:2",
      "GPU gres cannot be satisfied on NPU nodes (site-specific gres name)"),
    C("=nvidia-smi", "torch_cuda_api", "replace", False, "npu-smi info",
      "diagnostic only; script has no set -e so a missing nvidia-smi just prints an error"),
    C("module load cuda/11.8", "import_torch_npu", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "torch_npu needs the CANN environment (libhccl/ASCEND_OPP_PATH) sourced, else import fails"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL_* ignored by HCCL; log level only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL reads HCCL_SOCKET_IFNAME; single-node job so default NIC selection works"),
    C("export CUDA_LAUNCH_BLOCKING=0", "env_var", "replace", False, "export ASCEND_LAUNCH_BLOCKING=0",
      "0 is the default either way; no-op"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "ignored by the Ascend runtime: the process would see every NPU on the node instead of the two requested"),
])

E("zoobot_setup", "setup.py", "explicit_replacement", "Zoobot setup.py extras_require (pytorch-cu118 extra)", [
    C("'pytorch-cu118': [", "import_torch_npu", "add_branch", True,
      "'pytorch-npu': ['torch == 2.1.0', 'torch-npu == 2.1.0.post12', 'torchvision == 0.16.0', 'lightning >= 2.0.0', ...],",
      "no install path provides torch-npu; add an NPU extra next to the CUDA one (torch-npu wheel = torch version + postN)"),
    C("'torch == 2.1.0+cu118',", "torch_cuda_api", "replace", True, "'torch == 2.1.0',",
      "+cu118 local builds do not exist for aarch64 Ascend hosts and torch-npu pairs with the plain/CPU torch build"),
    C("'torchvision == 0.16.0+cu118',", "torch_cuda_api", "replace", True, "'torchvision == 0.16.0',",
      "same: CUDA local-version wheel"),
])

# ---------------------------------------------------------------- AstroCLIP / AstroDINO --------------------------

E("astroclip_model", "astroclip/models/astroclip.py", "explicit_replacement",
  "AstroCLIP (PolymathicAI) AstroClipModel / ImageHead / SpectrumHead", [
    C("checkpoint = torch.load(model_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(model_path, map_location='cpu')",
      "SpecFormer checkpoint was saved from CUDA; without map_location torch.load tries to restore CUDA storages and "
      "raises on a host without CUDA"),
])

E("astroclip_specformer", "astroclip/models/specformer.py", "explicit_replacement",
  "AstroCLIP SpecFormer (nanoGPT-style SelfAttention with SDPA)", [
    C("return torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", False,
      "return nullcontext()  # NPU SDPA dispatches to its own flash-attention kernel",
      "torch.backends.cuda.sdp_kernel is in msFmkTransplt's unsupported list / ✘ in Ascend's table; it only steers CUDA "
      "SDPA backends, so on NPU it is at best a no-op (only reached with force_flash=True)"),
])

E("astrodino_attention", "astroclip/astrodino/layers/attention.py", "explicit_replacement",
  "DINOv2 layers/attention.py as vendored in AstroCLIP's AstroDINO", [
    C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "replace", False,
      "import torch_npu",
      "xformers has no NPU backend; the guarded import fails and MemEffAttention silently uses the naive O(N^2) path"),
    C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", False, "q, k, v = qkv.unbind(2)",
      "xformers.ops.unbind -> Tensor.unbind (part of the kernel swap)"),
    C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
      "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'BSND', scale=self.scale)[0]",
      "(B, N, H, D) is the BSND layout of npu_fusion_attention; restores fused attention for AstroDINO pretraining"),
])

E("astrodino_distributed", "astroclip/astrodino/distributed/__init__.py", "explicit_replacement",
  "DINOv2 distributed/__init__.py (SLURM env -> init_process_group) vendored in AstroCLIP", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C("if torch.cuda.device_count() > 0:", "torch_cuda_api", "replace", True, "if torch.npu.device_count() > 0:",
      "returns 0 on an NPU host, so a local (non-SLURM, non-torchrun) run raises 'Can't initialize PyTorch distributed'"),
    C("torch.cuda.set_device(torch_env.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(torch_env.local_rank)", "raises without CUDA; every rank must bind its own NPU"),
    C('key, value = "NCCL_ASYNC_ERROR_HANDLING", "1"', "env_var", "replace", False,
      'key, value = "HCCL_ASYNC_ERROR_HANDLING", "1"',
      "NCCL_* is ignored by HCCL; torch_npu's watchdog variable is HCCL_ASYNC_ERROR_HANDLING (default already 1)"),
    C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl")', "NCCL backend unavailable on Ascend"),
])

E("astrodino_train", "astroclip/astrodino/train/train.py", "explicit_replacement",
  "DINOv2 train/train.py adapted for AstroDINO (FSDP teacher/student, fp16 scaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C('fused=torch.cuda.is_available() and cfg.optim.get("fused", True),', "fused_optimizer", "replace", False,
      'fused=torch.npu.is_available() and cfg.optim.get("fused", True),',
      "evaluates False on NPU so AdamW silently runs the unfused loop; _fused_adamw_ has an NPU kernel "
      "(alternatively torch_npu.optim.NpuFusedAdamW). Perf only"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("k: (v.cuda(non_blocking=True) if torch.is_tensor(v) else v)", "tensor_to_device", "replace", True,
      "k: (v.npu(non_blocking=True) if torch.is_tensor(v) else v)", "Tensor.cuda() fails on an NPU host"),
    C("activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],", "torch_cuda_api",
      "replace", False,
      "activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],",
      "optional --profile path; CUDA activity yields no device timeline on NPU (torch_npu.profiler is the NPU profiler)"),
    C("metric_logger.update(max_mem_mb=torch.cuda.max_memory_allocated() / 1024.0 ** 2)", "torch_cuda_api", "replace",
      False, "metric_logger.update(max_mem_mb=torch.npu.max_memory_allocated() / 1024.0 ** 2)",
      "CUDA memory stats return 0 when CUDA is uninitialised: logged metric is wrong, training unaffected"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
    C('model = SSLMetaArch(cfg).to(torch.device("cuda"))', "device_type", "replace", True,
      'model = SSLMetaArch(cfg).to(torch.device("npu"))', "CUDA device unavailable"),
])

E("astroclip_config", "configs/astroclip.yaml", "explicit_replacement",
  "AstroCLIP LightningCLI config (configs/astroclip.yaml)", [
    C("precision: bf16-mixed", "amp", "replace", False,
      "plugins: [{class_path: lightning.pytorch.plugins.MixedPrecision, init_args: {precision: bf16-mixed, device: npu}}]",
      "same Lightning MixedPrecision device='cuda' issue as zoobot: silently fp32 on NPU (perf/memory). Unconfirmed"),
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu", LIGHTNING_ACC),
    C("strategy: ddp_find_unused_parameters_true", "dist_backend", "replace", True,
      "strategy: {class_path: lightning.pytorch.strategies.DDPStrategy, init_args: {process_group_backend: hccl, find_unused_parameters: true}}",
      "registry strategy string leaves the backend to Lightning, which picks gloo for non-CUDA devices"),
    C("pin_memory: true", "pin_memory", "replace", False, "pin_memory: true  # + pin_memory_device: npu in the dataloader",
      "perf only; unconfirmed"),
])

E("astroclip_embed", "downstream_tasks/property_estimation/embed.py", "explicit_replacement",
  "AstroCLIP downstream_tasks/property_estimation/embed.py (PROVABGS embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: embedding 200k galaxies silently runs on CPU"),
    C('return torch.device(f"cuda:{gpu}")', "device_type", "replace", True, 'return torch.device(f"npu:{gpu}")',
      "CUDA device string"),
    C("spectra, images = torch.cat(sp_batch).cuda(), torch.cat(im_batch).cuda()", "tensor_to_device", "replace", True,
      "spectra, images = torch.cat(sp_batch).to(device), torch.cat(im_batch).to(device)",
      ".cuda() fails; the device argument is already passed in but was never used"),
    C("images, spectra = torch.cat(im_batch).cuda(), torch.cat(sp_batch).cuda()", "tensor_to_device", "replace", True,
      "images, spectra = torch.cat(im_batch).to(device), torch.cat(sp_batch).to(device)", "same, last partial batch"),
    C("checkpoint = torch.load(specformer_model_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(specformer_model_path, map_location='cpu')",
      "GPU-saved checkpoint restored onto CUDA without map_location"),
    C("specformer.cuda()", "tensor_to_device", "replace", True, "specformer.to(device)", "Module.cuda() fails"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("astroclip_requirements", "requirements.txt", "explicit_replacement", "AstroCLIP requirements (cu121 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu docs install the CPU torch build on x86 (aarch64 uses PyPI); whether a CUDA build breaks torch_npu is "
      "unconfirmed"),
    C("torch==2.2.1+cu121", "torch_cuda_api", "replace", True, "torch==2.3.1",
      "+cu121 wheel unavailable on aarch64, and there is no torch_npu release for torch 2.2.1 (wheel must equal torch "
      "version; nearest lines 2.1.0/2.3.1)"),
    C("torchvision==0.17.1+cu121", "torch_cuda_api", "replace", True, "torchvision==0.18.1",
      "CUDA local wheel; must follow the torch 2.3.1 bump"),
    C("timm==0.9.16", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.3.1.post6",
      "torch-npu pin added at the end of the core stack"),
    C("xformers==0.0.25", "attention_kernel", "removal", True, None,
      "no NPU build; its wheel pins a CUDA torch 2.2.1 and conflicts with the NPU stack. The code already falls back"),
    C("nvidia-ml-py3", "torch_cuda_api", "removal", False, None,
      "NVML has no NPU equivalent; only used for monitoring"),
])

E("astrodino_sbatch", "scripts/submit_astrodino.sbatch", "explicit_replacement",
  "AstroDINO multi-node sbatch (Flatiron rusty style)", [
    C("#SBATCH -C h100", "device_type", "replace", True, "#SBATCH -C 910b",
      "GPU node feature; job never scheduled on Ascend nodes (site-specific)"),
    C("#SBATCH --gpus-per-node=8", "device_type", "replace", True, "#SBATCH --gres=npu:8",
      "GPU request unsatisfiable on NPU nodes (site-specific gres)"),
    C("module load gcc cuda/12.1 cudnn/8.9 nccl", "import_torch_npu", "replace", True,
      "module load gcc && source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced for torch_npu/HCCL"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_* ignored; logging only"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None,
      "HCCL uses the NPU's own RoCE ports; no equivalent"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=ib0",
      "host NIC for HCCL root-info negotiation; HCCL's default NIC order may already work (unconfirmed)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable; default is already 1"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", "removal", False, None, "NCCL-only knob, default value"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "allocator fragmentation setting, NPU has its own variable; memory only"),
    C("nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 60 \\", "torch_cuda_api",
      "replace", False, "npu-smi info watch -i 0 -d 60 \\",
      "background monitor; its failure does not stop the job even with set -e"),
])

# ---------------------------------------------------------------- light curves ------------------------------------

E("parsnip_model", "parsnip/parsnip.py", "device_branch_or_abstraction",
  "ParSNIP (kboone/parsnip) ParsnipModel + load_model", [
    C("pin_memory=(self.device == 'cuda'),", "pin_memory", "replace", False, "pin_memory=(self.device != 'cpu'),",
      "False for 'npu', so batches are never pinned: perf only"),
    C("def load_model(path=None, device='cuda', threads=8):", "device_type", "replace", True,
      "def load_model(path=None, device='npu', threads=8):",
      "default 'cuda' falls back to CPU (parse_device) with only a warning on an NPU host"),
])

E("parsnip_utils", "parsnip/utils.py", "device_branch_or_abstraction", "ParSNIP utils.py (parse_device etc.)", [
    C("if device == 'cuda' and not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "elif device == 'npu' and not torch.npu.is_available():",
      "'npu' already passes through unchanged; the branch only restores the CPU fallback warning"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "no-op without CUDA; torch.manual_seed on the line above already seeds registered PrivateUse1 devices "
      "(unconfirmed for every torch_npu version)"),
    C("if str(device).startswith('cuda'):", "torch_cuda_api", "add_branch", False,
      "if str(device).startswith('npu'): props = torch.npu.get_device_properties(torch.device(device).index or 0); return props.name",
      "log string only: an NPU run would be reported as CPU"),
])

E("parsnip_train_script", "scripts/parsnip_train", "device_branch_or_abstraction",
  "ParSNIP scripts/parsnip_train CLI", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "default silently becomes CPU via parse_device on an NPU node"),
    C("if model.device.startswith('cuda'):", "torch_cuda_api", "replace", False,
      "if model.device.startswith('npu'):", "peak-memory log only"),
    C("peak_mb = torch.cuda.max_memory_allocated() / 1024**2", "torch_cuda_api", "replace", False,
      "peak_mb = torch.npu.max_memory_allocated() / 1024**2", "peak-memory log only"),
])

E("supernnova_training_utils", "supernnova/utils/training_utils.py", "explicit_replacement",
  "SuperNNova (supernnova/SuperNNova) utils/training_utils.py", [
    C("X_tensor = X_tensor.cuda()", "tensor_to_device", "replace", True, "X_tensor = X_tensor.npu()",
      "--use_cuda is kept as the 'use accelerator' flag; Tensor.cuda() fails"),
    C("target_tensor = target_tensor.cuda()", "tensor_to_device", "replace", True,
      "target_tensor = target_tensor.npu()", "same"),
    C('map_location = "cuda" if settings.use_cuda else "cpu"', "device_type", "replace", True,
      'map_location = "npu" if settings.use_cuda else "cpu"', "CUDA map_location raises without CUDA"),
    C("=rnn.cuda()", "tensor_to_device", "replace", True, "rnn.npu()", "Module.cuda() fails"),
])

E("supernnova_train_rnn", "supernnova/training/train_rnn.py", "explicit_replacement",
  "SuperNNova training/train_rnn.py (decay-on-plateau training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C("torch.cuda.manual_seed_all(settings.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(settings.seed)",
      "no-op without CUDA; torch.manual_seed just above already seeds the NPU generator (unconfirmed)"),
    C("=rnn.cuda()", "tensor_to_device", "replace", True, "rnn.npu()", "Module.cuda() fails"),
    C("=criterion.cuda()", "tensor_to_device", "replace", False, "criterion.npu()",
      "CrossEntropyLoss without class weights has no tensors, so Module.cuda() never touches CUDA: harmless"),
    C('lu.print_green("Training on GPU", torch.cuda.get_device_name(torch.cuda.current_device()))', "torch_cuda_api",
      "replace", True, 'lu.print_green("Training on NPU", torch.npu.get_device_name(torch.npu.current_device()))',
      "torch.cuda.current_device() raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1e9", "returns 0 without CUDA; log only"),
])

E("supernnova_env", "env/conda_env_gpu_linux64.yml", "explicit_replacement",
  "SuperNNova conda GPU environment file", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None, "CUDA channel, unused after the change"),
    C("=- pytorch=2.1.2", "torch_cuda_api", "replace", True, "- pytorch=2.1.0=*cpu*",
      "torch-npu exists for 2.1.0 only in that line (2.1.0.postN); 2.1.2 has no matching torch_npu"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
      "pulls the CUDA build of pytorch (and has no linux-aarch64 package)"),
    C("=- torchvision=0.16.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
      "0.16.2 pins pytorch 2.1.2, conflicting with the 2.1.0 pin"),
    C("=- cudnn", "torch_cuda_api", "removal", False, None, "CUDA-only library, unused on NPU"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "torch-npu is only on PyPI; add it first in the pip section"),
])

E("lcformer_attention", "lcformer/models/attention.py", "kernel_rewrite",
  "ELAsTiCC/ZTF light-curve transformer attention with flash-attn varlen (research code style)", [
    C("from flash_attn import flash_attn_varlen_func", "attention_kernel", "replace", False, "import torch_npu",
      "flash-attn cannot be installed on NPU; guarded import falls back to padded SDPA (works, slower)"),
    C("from flash_attn.bert_padding import pad_input, unpad_input", "attention_kernel", "removal", False, None,
      "unpadding done with torch ops in the NPU branch"),
    C('if not HAS_FLASH_ATTN or x.device.type != "cuda":', "attention_kernel", "add_branch", False,
      'if x.device.type == "npu" and x.dtype in (torch.float16, torch.bfloat16): return True',
      "enable the varlen fast path on NPU"),
    C("out = flash_attn_varlen_func(", "attention_kernel", "replace", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, 'TND', scale=1.0 / math.sqrt(self.head_dim), keep_prob=1.0 - dropout_p, actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]",
      "TND layout with cumulative lengths is the documented flash_attn_varlen_func mapping"),
])

E("lcfeatures_periodogram", "lcfeatures/periodogram.py", "kernel_rewrite",
  "GPU Lomb-Scargle period features via cuvarbase/PyCUDA (ZTF variable-star pipeline style)", [
    C("import pycuda.autoinit  # noqa: F401  (creates a context on the current GPU)", "custom_cuda_extension",
      "removal", False, None, "PyCUDA has no Ascend backend; the broad except already falls back to astropy"),
    C("import cuvarbase.lombscargle as cu_ls", "custom_cuda_extension", "replace", False,
      "from lcfeatures.torch_ls import batched_lomb_scargle  # torch implementation, runs on NPU",
      "cuvarbase kernels are CUDA-only; without a rewrite the 10^6-curve job runs ~100x slower on CPU"),
    C("proc = cu_ls.LombScargleAsyncProcess(use_double=False)", "custom_cuda_extension", "replace", False,
      "return batched_lomb_scargle(batch, freqs, device='npu')", "call site of the CUDA kernel"),
])

# ---------------------------------------------------------------- simulation-based inference ----------------------

E("sbi_lens_snpe", "examples/lens_snpe.py", "explicit_replacement",
  "sbi (sbi-dev/sbi) SNPE tutorial-style strong-lens inference script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
    C('prior = BoxUniform(low=low, high=high, device="cuda")', "device_type", "replace", True,
      'prior = BoxUniform(low=low, high=high, device="npu")', "CUDA device string; fails without CUDA"),
    C('simulator = SIELensSimulator(npix=64, pixscale=0.05, noise_sigma=args.noise_sigma, device="cuda")',
      "device_type", "replace", True,
      'simulator = SIELensSimulator(npix=64, pixscale=0.05, noise_sigma=args.noise_sigma, device="npu")', "same"),
    C('inference = SNPE(prior=prior, density_estimator=density_estimator_build_fun, device="cuda")', "device_type",
      "replace", True, 'inference = SNPE(prior=prior, density_estimator=density_estimator_build_fun, device="npu")',
      "sbi checks the requested training device; whether its device check accepts 'npu' unmodified is unconfirmed"),
    C("x_o = torch.load(args.observation).reshape(1, -1).cuda()", "tensor_to_device", "replace", True,
      "x_o = torch.load(args.observation, map_location='cpu').reshape(1, -1).npu()", "Tensor.cuda() fails"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C('print("Max GPU memory: %.2f GB" % (torch.cuda.max_memory_allocated() / 1e9))', "torch_cuda_api", "replace",
      False, 'print("Max NPU memory: %.2f GB" % (torch.npu.max_memory_allocated() / 1e9))', "log only (prints 0)"),
])

E("ili_runner_lampe", "ili/inference/runner_lampe.py", "device_branch_or_abstraction",
  "LtU-ILI (maho3/ltu-ili) LampeRunner-style NPE training loop", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", AUTOLOAD_NEW),
    C("if device.startswith('cuda') and not torch.cuda.is_available():", "torch_cuda_api", "add_branch", False,
      "if device.startswith('npu') and not torch.npu.is_available():",
      "'npu' from the config passes through; branch only restores the CPU fallback warning"),
    C("pin_memory=True,", "pin_memory", "replace", False, "pin_memory=True, pin_memory_device='npu',",
      "perf only; unconfirmed"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=use_amp)",
      "use_amp defaults to False; when enabled the CUDA scaler disables itself without CUDA (fp32 run)"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float16, enabled=use_amp):",
      "CUDA autocast disables itself with a warning on NPU: fp32 (perf only)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA"),
])

E("ili_infer_config", "examples/configs/infer/npe_quijote_pk.yaml", "device_branch_or_abstraction",
  "LtU-ILI inference YAML config (lampe NPE ensemble)", [
    C("device: 'cuda'", "device_type", "replace", True, "device: 'npu'",
      "the runner turns an unavailable 'cuda' into CPU with only a warning: training silently runs on CPU"),
])

# ---------------------------------------------------------------- strong-lensing emulator -------------------------

E("lensemu_raytrace", "lens_emulator/ops/ray_trace.py", "kernel_rewrite",
  "differentiable strong-lensing ray tracer with an optional CUDA NFW-deflection extension (research code style)", [
    C("RT_DTYPE = torch.float64", "unsupported_op_workaround", "replace", False,
      "RT_DTYPE = torch.float32  # fp64 not supported/slow on NPU; keep core regularisation",
      "knowledge is mixed: one issue shows torch_npu casting double to float with a warning, Ascend's table lists fp64 "
      "for some ops. Unconfirmed"),
    C("if HAS_LENS_OPS and x.is_cuda:", "custom_cuda_extension", "replace", False, "if HAS_LENS_OPS and x.is_npu:",
      "the extension keeps its module name but is rebuilt from an Ascend C port (csrc/setup.py); NPU tensors are not "
      "is_cuda, so without this edit the pure-torch NFW fallback runs (correct, slower)"),
    C("ky = torch.fft.fftfreq(npix, d=pixscale, device=fwhm.device)", "unsupported_op_workaround", "replace", False,
      "ky = torch.fft.fftfreq(npix, d=pixscale).to(fwhm.device)",
      "torch.fft.fftfreq is ✘ in Ascend's 2.7.1 table and in msFmkTransplt's unsupported list; build on CPU and move. "
      "Unconfirmed whether it errors"),
    C("kx = torch.fft.rfftfreq(npix, d=pixscale, device=fwhm.device)", "unsupported_op_workaround", "replace", False,
      "kx = torch.fft.rfftfreq(npix, d=pixscale).to(fwhm.device)", "same for rfftfreq"),
])

E("lensemu_train", "lens_emulator/train_emulator.py", "explicit_replacement",
  "strong-lensing image emulator training script (AMP, DDP/DataParallel, apex FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", AUTOLOAD_OLD),
    C("from apex.optimizers import FusedAdam  # ~8% faster step on V100/A100", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "NVIDIA apex is not installed on NPU: guarded import falls back to torch.optim.Adam (perf only)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL unavailable"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", local_rank)', "CUDA device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silently CPU on an NPU host"),
    C("amp_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16",
      "device_capability_check", "replace", True, "amp_dtype = torch.bfloat16  # Atlas A2 supports bf16",
      "get_device_capability raises without CUDA (and is not meaningful on NPU: returns None / env-configured)"),
    C("return torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype)", "amp", "replace", False,
      "return torch.autocast('npu', enabled=args.amp, dtype=amp_dtype)",
      "CUDA autocast disables itself on NPU: fp32 (perf/memory only)"),
    C("num_workers=args.workers, pin_memory=True, drop_last=True,", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', drop_last=True,", "perf only; unconfirmed"),
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", "perf only; unconfirmed"),
    C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "msFmkTransplt README lists channels_last as unsupported on NPU (use contiguous); optional flag. Unconfirmed "
      "whether it errors or is just slow"),
    C("img = img.contiguous(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
      "same"),
    C("model = nn.DataParallel(model, device_ids=list(range(args.gpus)))", "distributed_framework", "replace", True,
      "raise SystemExit('--data-parallel is not supported on NPU; launch with torchrun (DDP) instead')",
      "torch.nn.DataParallel is ✘ on every Ascend product (2.7.1 table, msFmkTransplt)"),
    C('model = torch.compile(model, mode="max-autotune")', "compile_mode", "replace", False,
      "model = torch.compile(model)",
      "max-autotune relies on Triton GEMM autotuning; NPU inductor support for it unconfirmed, default mode is safer"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)", "amp", "replace", False,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)",
      "CUDA GradScaler disables itself without CUDA"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the memory getters this one resolves the current CUDA device and raises without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated(device) / 2**30", "returns 0 without CUDA; log only"),
])

E("lensemu_csrc_setup", "csrc/setup.py", "kernel_rewrite", "CUDAExtension build script for the NFW deflection kernels", [
    C("from torch.utils.cpp_extension import BuildExtension, CUDAExtension", "custom_cuda_extension", "replace", True,
      "from torch_npu.utils.cpp_extension import NpuExtension; from torch.utils.cpp_extension import BuildExtension",
      "CUDAExtension needs nvcc/CUDA_HOME: the build fails on an Ascend host"),
    C("=CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
      "NpuExtension adds torch_npu/ACL include and lib dirs"),
    C('os.path.join(here, "lens_ops_kernel.cu"),', "custom_cuda_extension", "replace", True,
      'os.path.join(here, "lens_ops_kernel_ascendc.cpp"),', "the .cu kernel has to be rewritten in Ascend C"),
    C('"nvcc": nvcc_flags,', "custom_cuda_extension", "removal", False, None,
      "no nvcc stage any more; unconfirmed whether NpuExtension rejects or ignores the key"),
])

E("lensemu_docker", "Dockerfile", "explicit_replacement", "CUDA 12.1 devel-image Dockerfile for the lens emulator", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must provide CANN (set_env.sh exports baked in) instead of the CUDA toolkit"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121",
      "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "cu121 build + a version without a torch_npu release; torch-npu pin added on the same line"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;9.0+PTX"', "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7 \\",
      "NVIDIA container runtime variable; on Ascend the Docker runtime / device mounts decide visibility"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container runtime variable"),
])

E("lensemu_launch", "scripts/launch_ddp.sh", "explicit_replacement", "single-node torchrun launcher script", [
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "ignored on Ascend: ranks would bind NPU 0..N-1 instead of the requested subset"),
    C("NPROC=$(nvidia-smi -L | wc -l)", "device_type", "replace", True,
      "NPROC=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is absent; with set -euo pipefail the script aborts"),
    C("conda activate lensemu", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment for torch_npu/HCCL"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL knob"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "HCCL watchdog equivalent (default 1)"),
    C("nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader", "torch_cuda_api", "replace", True,
      "npu-smi info", "command not found aborts the script under set -e"),
])
