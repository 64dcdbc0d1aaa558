# Labels for probe112 (vision-backbone research repos: Swin, DeiT, ConvNeXt-V2, InternImage, MAE, BEiT,
# RepVGG, EVA-02). One entry per upstream file; one C(...) per line a careful porter edits for Ascend NPU.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
IMPORT_NPU_NOTE = ("entry script: torch_npu must be imported before any npu device/API is used "
                   "(mandatory before torch_npu 2.5.1 autoload, still recommended after)")
PIN_NOTE = ("perf only, unconfirmed: with pin_memory_device unset, torch 2.1's DataLoader pins only when "
            "torch.cuda.is_available(), so pinning is silently dropped on an NPU host; pin_memory_device='npu' "
            "restores it")
LOGMEM_NOTE = ("logging only: torch.cuda memory stats return 0 on a host where CUDA is never initialised; "
               "the memory column is wrong/missing but training is unaffected")

# ---------------------------------------------------------------- Swin Transformer
E("swin_main", "main.py", "explicit_replacement",
  "microsoft/Swin-Transformer main.py (DDP launch, torch.cuda.amp, throughput mode)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "moves the model to CUDA; fails without a CUDA device"),
    C("samples = samples.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "samples = samples.npu(non_blocking=True)", "batch transfer to CUDA"),
    C("targets = targets.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "targets = targets.npu(non_blocking=True)", "batch transfer to CUDA"),
    C("with torch.cuda.amp.autocast(enabled=config.AMP_ENABLE):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=config.AMP_ENABLE):",
      "cuda autocast is disabled (with a warning) on a CUDA-less host: training silently runs in fp32 "
      "at batch sizes tuned for AMP memory"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
    C("memory_used = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "memory_used = torch.npu.max_memory_allocated() / (1024.0 * 1024.0)", LOGMEM_NOTE),
    C("=images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "validation batch transfer"),
    C("=target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "validation label transfer"),
    C("with torch.cuda.amp.autocast(enabled=amp_enabled):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=amp_enabled):",
      "eval-only autocast: silently fp32 on NPU, results stay correct, only slower"),
    C("mem_mb = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_mb = torch.npu.max_memory_allocated() / (1024.0 * 1024.0)", LOGMEM_NOTE),
    C("=images = images.cuda()", "tensor_to_device", "replace", True, "images = images.npu()",
      "throughput mode batch transfer"),
    C("torch.cuda.synchronize()  # make sure the 50 warm-up", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure the 50 warm-up iterations are done",
      "raises on NPU host; and without an NPU sync the throughput timing would be meaningless"),
    C("torch.cuda.synchronize()  # wait for the timed", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for the timed iterations", "same as above, end of timed loop"),
    C("torch.cuda.set_device(config.LOCAL_RANK)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(config.LOCAL_RANK)", "binds the process to a CUDA device; raises on NPU host"),
    C("backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://', world_size=world_size, rank=rank)",
      "NCCL is not available with torch_npu; HCCL is the NPU collective backend"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op on an NPU host (lazy CUDA seeding); torch.manual_seed above already seeds the NPU generator"),
])

E("swin_utils", "utils.py", "explicit_replacement",
  "microsoft/Swin-Transformer utils.py (checkpoint I/O, NativeScalerWithGradNormCount)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is uninitialised; the NPU cache is simply not released after resume"),
    C("torch.cuda.empty_cache()  # release the pretrained", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release the pretrained state dict", "same, after loading pretrained weights"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "cuda GradScaler disables itself on a CUDA-less host: with NPU fp16 autocast the loss is no longer "
      "scaled and fp16 gradients underflow"),
])

E("swin_model", "models/swin_transformer.py", "explicit_replacement",
  "microsoft/Swin-Transformer models/swin_transformer.py (guarded fused window-process import)", [
])

E("swin_build", "models/build.py", "explicit_replacement",
  "microsoft/Swin-Transformer models/build.py (--fused_layernorm via apex)", [
    C("layernorm = amp.normalization.FusedLayerNorm", "custom_cuda_extension", "replace", True,
      "from torch.nn import LayerNorm as layernorm",
      "apex FusedLayerNorm needs the nvcc-built fused_layer_norm_cuda (absent in Ascend apex / not buildable); "
      "the shipped launch script passes --fused_layernorm, so the except branch yields norm_layer=None and "
      "model construction fails; NPU's native layer_norm kernel is used instead"),
])

E("swin_optimizer", "optimizer.py", "explicit_replacement",
  "microsoft/Swin-Transformer optimizer.py (apex FusedAdam/FusedLAMB options)", [
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as FusedAdam, NpuFusedLamb as FusedLAMB",
      "opt-in (--optim fused_adam/fused_lamb, default adamw); import is guarded, but the fused names become "
      "None and the branch would crash. apex FusedAdam defaults to adam_w_mode, hence NpuFusedAdamW"),
])

E("swin_wp_setup", "kernels/window_process/setup.py", "kernel_rewrite",
  "microsoft/Swin-Transformer kernels/window_process/setup.py (nvcc extension build)", [
    C("CUDAExtension('swin_window_process', [", "custom_cuda_extension", "removal", False, None,
      "nvcc-only build of the fused roll+partition kernel; obsolete once window_process.py is rewritten in "
      "torch ops (the Dockerfile step that runs it is the required edit)"),
])

E("swin_wp_func", "kernels/window_process/window_process.py", "kernel_rewrite",
  "microsoft/Swin-Transformer kernels/window_process/window_process.py (autograd wrapper of the CUDA kernel)", [
    C("=import swin_window_process", "custom_cuda_extension", "removal", True, None,
      "compiled CUDA module cannot be built on an Ascend host"),
    C("swin_window_process.roll_and_window_partition_forward(", "custom_cuda_extension", "replace", True,
      "output = _window_partition(torch.roll(input, shifts=(shift_size, shift_size), dims=(1, 2)), window_size)",
      "rewrite the fused kernel with torch.roll + view/permute (both have NPU kernels; two small local "
      "partition/reverse helpers are added to the file); the shipped launch script keeps "
      "--fused_window_process, so this path runs"),
    C("swin_window_process.roll_and_window_partition_backward(", "custom_cuda_extension", "replace", True,
      "grad_out = torch.roll(_window_reverse(grad_in, window_size, H, W), shifts=(-shift_size, -shift_size), dims=(1, 2))",
      "hand-written backward of the rewritten forward"),
    C("swin_window_process.window_merge_and_roll_forward(", "custom_cuda_extension", "replace", True,
      "output = torch.roll(_window_reverse(input, window_size, H, W), shifts=(shift_size, shift_size), dims=(1, 2))",
      "reverse (merge + roll) kernel rewritten in torch ops"),
    C("swin_window_process.window_merge_and_roll_backward(", "custom_cuda_extension", "replace", True,
      "grad_out = _window_partition(torch.roll(grad_in, shifts=(-shift_size, -shift_size), dims=(1, 2)), window_size)",
      "backward of the rewritten reverse op"),
])

E("swin_train_sh", "scripts/train_swin_base_22kto1k.sh", "explicit_replacement",
  "Swin-Transformer style multi-node fine-tune launcher (torch.distributed.launch, NCCL env)", [
    C("=set -x", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment (libs, ASCEND_* paths) must be loaded before torch_npu can import"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "a user-supplied device subset would be silently ignored on NPU (processes land on devices 0..7)"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "logging only; HCCL ignores NCCL_DEBUG (closest knob is the CANN log level, unconfirmed mapping)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None,
      "no HCCL equivalent; HCCL uses the NPU's own RoCE ports configured with hccn_tool"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=eth0",
      "multi-node root-info exchange: HCCL ignores NCCL_SOCKET_IFNAME and otherwise takes the first "
      "non-docker NIC by name, which may not reach the master"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "nvidia-smi is absent on an Ascend host (script continues, no set -e); no exact kind for a CLI tool"),
    C("CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node 1 --master_port 12346 main.py \\",
      "single-process eval uses device 0 anyway, so ignoring the variable changes nothing"),
])

E("swin_docker", "Dockerfile", "explicit_replacement",
  "Swin-Transformer style training Dockerfile on an NGC PyTorch base with apex", [
    C("FROM nvcr.io/nvidia/pytorch:21.08-py3", "import_torch_npu", "replace", True,
      "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.0-A2-2.1.0-ubuntu20.04",
      "NGC image ships CUDA torch; an Ascend base image brings CANN + torch + torch_npu (tag illustrative)"),
    C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
      "only steers nvcc builds; meaningless on Ascend"),
    C("ENV FORCE_CUDA=1", "env_var", "removal", False, None, "forces CUDA extension builds; nothing to build"),
    C("git clone https://github.com/NVIDIA/apex /opt/apex", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && \\",
      "NVIDIA apex cannot provide the NPU amp path; Ascend apex is the NPU patch set"),
    C("git checkout 22.04-dev", "custom_cuda_extension", "removal", False, None,
      "NVIDIA branch name; the Ascend apex build script picks its own base"),
    C("--global-option=\"--cuda_ext\"", "custom_cuda_extension", "replace", True,
      "bash scripts/build.sh --python=3.8 && pip install apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc; the image build fails on an Ascend base"),
    C("RUN cd kernels/window_process && python setup.py install", "custom_cuda_extension", "removal", True, None,
      "nvcc extension build fails; the fused window process is re-implemented in torch ops"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "removal", False, None, "ignored by HCCL"),
])

# ---------------------------------------------------------------- DeiT
E("deit_main", "main.py", "device_branch_or_abstraction",
  "facebookresearch/deit main.py (--device flag, timm NativeScaler, --dist-eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "the whole script follows args.device; the default must name the NPU"),
    C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',", PIN_NOTE),
    C("pin_memory=args.pin_mem, drop_last=False", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu', drop_last=False", PIN_NOTE),
    C("loss_scaler = NativeScaler()", "amp", "replace", True, "loss_scaler = NativeScaler(device='npu')",
      "timm's NativeScaler wraps torch.cuda.amp.GradScaler, which disables itself without CUDA while the engine's "
      "autocast runs fp16 on NPU -> unscaled fp16 grads; newer timm takes a device argument (unconfirmed for the "
      "pinned timm, else a local NPU scaler class)"),
])

E("deit_utils", "utils.py", "explicit_replacement",
  "facebookresearch/deit utils.py (SmoothedValue, MetricLogger, init_distributed_mode)", [
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "hard-coded CUDA device; also HCCL all_reduce does not take fp64 (Ascend list: bf16/fp16/fp32/int32/int64/bool)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "False on NPU: the 'max mem' column silently disappears from logs"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", LOGMEM_NOTE),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()",
      "SLURM path: device_count() is 0 on an NPU host -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "NCCL unavailable; HCCL backend"),
])

E("deit_multinode", "scripts/slurm_deit_base_4nodes.sbatch", "explicit_replacement",
  "DeiT-style 4-node SLURM sbatch launcher (srun, module load cuda/NCCL)", [
    C("#SBATCH --gres=gpu:8", "device_type", "replace", False, "#SBATCH --gres=npu:8",
      "unconfirmed: depends on how the site declares NPUs as a GRES (no Ascend Slurm integration in the notes)"),
    C("#SBATCH --constraint=volta32gb", "device_type", "removal", False, None,
      "site feature tag for V100 nodes; an Ascend partition will not have it (site-specific)"),
    C("module load anaconda3/2021.05 cuda/11.3", "env_var", "replace", True, SET_ENV,
      "CUDA/cuDNN/NCCL modules replaced by the CANN environment that torch_npu needs"),
    C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "logging only; ignored by HCCL"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads HCCL_ASYNC_ERROR_HANDLING (default already 1 per MindCluster docs)"),
    C("export NCCL_SOCKET_IFNAME=^docker0,lo", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=^docker0,lo",
      "HCCL's default NIC choice already skips docker and lo, so dropping the NCCL variable changes nothing; "
      "HCCL accepts the same ^prefix syntax"),
    C("--device cuda", "device_type", "replace", True, "    --device npu",
      "overrides main.py's --device on the command line"),
])

# ---------------------------------------------------------------- ConvNeXt-V2
E("cnv2_pretrain", "main_pretrain.py", "device_branch_or_abstraction",
  "facebookresearch/ConvNeXt-V2 main_pretrain.py (FCMAE pre-training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "device default drives model.to(device) etc."),
    C("pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',", PIN_NOTE),
])

E("cnv2_engine", "engine_pretrain.py", "device_branch_or_abstraction",
  "facebookresearch/ConvNeXt-V2 engine_pretrain.py", [
    C("torch.cuda.empty_cache() # clear the GPU cache", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "no-op without CUDA; was a MinkowskiEngine memory workaround, optional after the dense rewrite"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on an NPU host"),
])

E("cnv2_utils", "models/utils.py", "kernel_rewrite",
  "facebookresearch/ConvNeXt-V2 models/utils.py (LayerNorm channels_first, GRN, Minkowski wrappers)", [
    C("from MinkowskiEngine import SparseTensor", "custom_cuda_extension", "replace", True,
      "SparseTensor = None  # MinkowskiEngine (sparse conv, CUDA/CPU only) is not available on Ascend",
      "module-level import of a CUDA-built package; this file is also imported by the dense ConvNeXtV2 "
      "fine-tuning model, so an NPU host without MinkowskiEngine cannot import anything"),
])

E("cnv2_fcmae", "models/fcmae.py", "kernel_rewrite",
  "facebookresearch/ConvNeXt-V2 models/fcmae.py (FCMAE with sparse ConvNeXtV2 encoder)", [
    C("from MinkowskiEngine import MinkowskiConvolution", "custom_cuda_extension", "replace", True,
      "MinkowskiConvolution = MinkowskiDepthwiseConvolution = MinkowskiLinear = ()  # no MinkowskiEngine on NPU",
      "import fails without MinkowskiEngine; empty tuples keep the isinstance() checks in _init_weights valid"),
    C("from .convnextv2_sparse import SparseConvNeXtV2", "custom_cuda_extension", "replace", True,
      "from .convnextv2_masked import MaskedConvNeXtV2",
      "sparse encoder runs MinkowskiEngine kernels that cannot take NPU tensors; replaced by the dense "
      "conv + mask formulation"),
    C("self.encoder = SparseConvNeXtV2(", "custom_cuda_extension", "replace", True,
      "self.encoder = MaskedConvNeXtV2(", "construct the dense masked encoder instead"),
])

E("cnv2_env", "environment.yml", "explicit_replacement",
  "ConvNeXt-V2 style conda environment (pytorch 1.8 + cudatoolkit 11.1 for MinkowskiEngine)", [
    C("=- nvidia", "custom_cuda_extension", "removal", False, None, "CUDA library channel, unused on Ascend"),
    C("=- cudatoolkit=11.1", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime for the conda pytorch build; dead weight on Ascend"),
    C("=- cudatoolkit-dev=11.1", "custom_cuda_extension", "removal", False, None,
      "nvcc for the MinkowskiEngine build, which is not done on Ascend"),
    C("=- pytorch=1.8.0", "import_torch_npu", "replace", True, "  - pytorch=2.1.0",
      "CUDA conda build of an old torch; torch_npu wheels pair with torch 2.1+ (CPU build of torch)"),
    C("=- torchvision=0.9.0", "import_torch_npu", "replace", True, "  - torchvision=0.16.0",
      "CUDA build pinned to torch 1.8; must follow the torch pin"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post10",
      "add the torch_npu wheel matching torch 2.1.0"),
])

# ---------------------------------------------------------------- InternImage (DCNv3)
E("iimg_func", "ops_dcnv3/functions/dcnv3_func.py", "kernel_rewrite",
  "OpenGVLab/InternImage ops_dcnv3/functions/dcnv3_func.py (DCNv3 autograd Function + dcnv3_core_pytorch)", [
    C("=import DCNv3", "custom_cuda_extension", "replace", True,
      "DCNv3 = None  # nvcc-built op, not available on Ascend; modules use dcnv3_core_pytorch",
      "unguarded import of the compiled extension: ImportError for the whole ops package on NPU"),
    C("dcn_version = float(pkg_resources.get_distribution('DCNv3').version)", "custom_cuda_extension", "replace",
      True, "dcn_version = float(pkg_resources.get_distribution('DCNv3').version) if DCNv3 is not None else 0.0",
      "DistributionNotFound when the DCNv3 wheel is not installed"),
])

E("iimg_module", "ops_dcnv3/modules/dcnv3.py", "kernel_rewrite",
  "OpenGVLab/InternImage ops_dcnv3/modules/dcnv3.py (DCNv3 and DCNv3_pytorch modules)", [
    C("x = DCNv3Function.apply(", "custom_cuda_extension", "replace", True, "x = dcnv3_core_pytorch(",
      "call site of the CUDA op; the grid_sample-based PyTorch core runs on NPU (grid_sampler_2d has an NPU "
      "kernel); keeps CORE_OP='DCNv3' configs and checkpoints valid"),
    C("=256,", "custom_cuda_extension", "removal", True, None,
      "im2col_step is a CUDA-kernel argument that dcnv3_core_pytorch does not accept"),
])

E("iimg_setup", "ops_dcnv3/setup.py", "kernel_rewrite",
  "OpenGVLab/InternImage ops_dcnv3/setup.py (CUDAExtension build, raises without CUDA)", [
    C("from torch.utils.cpp_extension import CUDAExtension", "custom_cuda_extension", "replace", False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "performance-only route: an Ascend C DCNv3 kernel would be built with NpuExtension; the required port "
      "uses dcnv3_core_pytorch and never runs this file"),
    C("source_cuda = glob.glob(", "custom_cuda_extension", "replace", False,
      "source_npu = glob.glob(os.path.join(extensions_dir, \"npu\", \"*.cpp\"))",
      "Ascend C sources instead of .cu (perf route only)"),
    C("if torch.cuda.is_available() and CUDA_HOME is not None:", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "build-time device check (perf route only)"),
    C("extension = CUDAExtension", "custom_cuda_extension", "replace", False, "extension = NpuExtension",
      "perf route only"),
    C("sources += source_cuda", "custom_cuda_extension", "replace", False, "sources += source_npu",
      "perf route only"),
    C("define_macros += [(\"WITH_CUDA\", None)]", "custom_cuda_extension", "replace", False,
      "define_macros += [(\"WITH_NPU\", None)]", "perf route only"),
])

E("iimg_install", "install.sh", "explicit_replacement",
  "InternImage classification environment setup script (cu113 wheels, mmcv-full, DCNv3 build)", [
    C("=set -e", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment needed by torch_npu"),
    C("pip install torch==1.11.0+cu113", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "CUDA wheels from the cu113 index; torch_npu pairs with a CPU/aarch64 torch of the same version"),
    C("pip install mmcv-full==1.5.0 -f", "custom_cuda_extension", "replace", True,
      "MMCV_WITH_OPS=1 FORCE_NPU=1 pip install mmcv-full==1.7.2",
      "prebuilt cu113/torch1.11 index cannot serve torch 2.1 on an NPU host; mmcv's NPU build flag is unconfirmed "
      "from the notes"),
    C("pip install https://github.com/OpenGVLab/InternImage/releases", "custom_cuda_extension", "removal", False,
      None, "prebuilt CUDA wheel of DCNv3 (opt-in branch, USE_PREBUILT_DCNV3=1)"),
    C("export CUDA_HOME=", "env_var", "removal", False, None, "only used by the nvcc build"),
    C("=sh ./make.sh", "custom_cuda_extension", "removal", True, None,
      "default branch builds the CUDA op: setup.py raises 'Cuda is not availabel' and set -e aborts the install"),
    C("=python test.py", "custom_cuda_extension", "removal", True, None,
      "the unit test compares the CUDA op against the PyTorch core on .cuda() tensors"),
    C("python -c \"import torch, DCNv3;", "torch_cuda_api", "replace", True,
      "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available())\"",
      "sanity check imports the CUDA op and reports CUDA availability"),
])

E("iimg_bench", "tools/benchmark_throughput.py", "explicit_replacement",
  "InternImage/ConvNeXt-style backbone throughput benchmark (CUDA events, capability-based AMP dtype)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 8 if torch.npu.is_bf16_supported() else 7  # no CUDA compute capability on NPU",
      "raises without CUDA; torch.npu.get_device_capability returns None (only configurable via "
      "TORCH_NPU_DEVICE_CAPABILITY), so the tuple unpack would fail too"),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events for timing"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events for timing"),
    C("with torch.autocast('cuda', dtype=amp_dtype, enabled=args.amp):", "amp", "replace", True,
      "with torch.autocast('npu', dtype=amp_dtype, enabled=args.amp):",
      "cuda autocast silently disabled -> warm-up runs fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on NPU host"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
    C("with torch.autocast(device_type='cuda', dtype=amp_dtype, enabled=args.amp):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=amp_dtype, enabled=args.amp):",
      "the timed loop would silently measure fp32 when --amp is requested (wrong benchmark result)"),
    C("peak_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      "peak_mem = torch.npu.max_memory_allocated() / 2 ** 20",
      "peak memory is one of the tool's reported results; returns 0 on an NPU host"),
    C("assert torch.cuda.is_available(), 'this benchmark needs a CUDA device'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'this benchmark needs an NPU device'", "assert fails on NPU host"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
      "device = torch.device('npu', args.gpu)", "hard-coded CUDA device"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_hf32 = True",
      "silent no-op on NPU; HF32 is the NPU analogue (attribute name unconfirmed in the notes)"),
    C("torch.backends.cudnn.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.conv.allow_hf32 = True", "silent no-op on NPU; conv HF32 switch (unconfirmed name)"),
    C("=if args.channels_last:", "unsupported_op_workaround", "replace", False,
      "if args.channels_last and device.type != 'npu':  # channels_last not supported on NPU",
      "opt-in flag; msFmkTransplt documents channels_last as unsupported (use contiguous)"),
    C("model = torch.compile(model, mode='max-autotune')", "compile_mode", "replace", False,
      "model = torch.compile(model, backend='npugraphs')",
      "opt-in; max-autotune tunes CUDA/Triton kernels; NPU graph capture backend (unconfirmed for every torch_npu "
      "version)"),
    C("'device': torch.cuda.get_device_name(args.gpu),", "torch_cuda_api", "replace", True,
      "'device': torch.npu.get_device_name(args.gpu),", "raises without CUDA"),
    C("'cuda': torch.version.cuda,", "torch_cuda_api", "replace", False, "'torch_npu': torch_npu.__version__,",
      "reports None on a non-CUDA torch build; metadata only"),
    C("'cudnn': torch.backends.cudnn.version(),", "torch_cuda_api", "removal", False, None,
      "returns None on NPU; metadata only"),
])

# ---------------------------------------------------------------- MAE
E("mae_misc", "util/misc.py", "explicit_replacement",
  "facebookresearch/mae util/misc.py (distributed helpers, NativeScalerWithGradNormCount)", [
    C("dtype=torch.float64, device='cuda')", "device_type", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "hard-coded CUDA device; HCCL all_reduce does not accept fp64"),
    C("has_gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "has_gpu = torch.npu.is_available()", "False on NPU: memory column silently dropped"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", LOGMEM_NOTE),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on NPU -> ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'", "HCCL backend"),
    C("self._scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self._scaler = torch.npu.amp.GradScaler()",
      "cuda GradScaler disables itself without CUDA; fp16 NPU autocast then trains unscaled"),
    C("x_reduce = torch.tensor(x).cuda()", "tensor_to_device", "replace", True,
      "x_reduce = torch.tensor(x).npu()", "tensor for the loss all-reduce"),
])

E("mae_finetune", "main_finetune.py", "device_branch_or_abstraction",
  "facebookresearch/mae main_finetune.py (layer-decay AdamW, --device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',", "device default used throughout"),
    C("=pin_memory=args.pin_mem,", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu',", PIN_NOTE),
    C("pin_memory=args.pin_mem, drop_last=False", "pin_memory", "replace", False,
      "pin_memory=args.pin_mem, pin_memory_device='npu', drop_last=False", PIN_NOTE),
])

E("mae_engine", "engine_finetune.py", "device_branch_or_abstraction",
  "facebookresearch/mae engine_finetune.py", [
    C("=with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "training autocast silently disabled without CUDA (fp32 at AMP-tuned batch sizes)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises on NPU host"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=True):", "eval-only autocast: fp32 fallback is correct, only slower"),
])

# ---------------------------------------------------------------- BEiT
E("beit_optim", "optim_factory.py", "explicit_replacement",
  "microsoft/unilm beit/optim_factory.py (timm-derived optimizer factory with apex fused options)", [
    C("from apex.optimizers import FusedNovoGrad, FusedAdam, FusedLAMB, FusedSGD", "fused_optimizer", "replace",
      False, "from torch_npu.optim import NpuFusedSGD, NpuFusedAdam, NpuFusedAdamW, NpuFusedLamb",
      "guarded import; fused optimizers are opt-in (--opt fused*), default adamw"),
    C("assert has_apex and torch.cuda.is_available(), 'APEX and CUDA required for fused optimizers'",
      "fused_optimizer", "replace", False, "assert torch.npu.is_available(), 'NPU required for fused optimizers'",
      "fails for every fused* option on NPU"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)", "fused_optimizer",
      "replace", False, "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=True, **opt_args)",
      "opt-in fused SGD"),
    C("optimizer = FusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)", "fused_optimizer",
      "replace", False, "optimizer = NpuFusedSGD(parameters, momentum=args.momentum, nesterov=False, **opt_args)",
      "opt-in fused momentum SGD"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=False, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedAdam(parameters, **opt_args)", "opt-in; NpuFusedAdam has no adam_w_mode argument"),
    C("optimizer = FusedAdam(parameters, adam_w_mode=True, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedAdamW(parameters, **opt_args)", "opt-in; decoupled weight decay -> NpuFusedAdamW"),
    C("optimizer = FusedLAMB(parameters, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NpuFusedLamb(parameters, **opt_args)", "opt-in fused LAMB"),
    C("optimizer = FusedNovoGrad(parameters, **opt_args)", "fused_optimizer", "replace", False,
      "optimizer = NovoGrad(parameters, **opt_args)", "no NPU fused NovoGrad; fall back to timm's NovoGrad"),
])

# ---------------------------------------------------------------- RepVGG
E("repvgg_train", "train.py", "device_branch_or_abstraction",
  "DingXiaoH/RepVGG train.py (PyTorch ImageNet example: mp.spawn, DataParallel fallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("parser.add_argument('--dist-backend', default='nccl', type=str,", "dist_backend", "replace", True,
      "parser.add_argument('--dist-backend', default='hccl', type=str,", "NCCL unavailable"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "ngpus_per_node = torch.npu.device_count()",
      "0 on NPU: mp.spawn with 0 processes / world_size 0, batch division by zero"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "False on NPU: silently trains on CPU"),
    C("=torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("=model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model.npu(args.gpu)", "DDP branch"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "DDP without device ids"),
    C("torch.cuda.set_device(args.gpu)  # single GPU, no DDP", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)  # single device, no DDP", "raises without CUDA"),
    C("model = model.cuda(args.gpu)", "tensor_to_device", "replace", True, "model = model.npu(args.gpu)",
      "single-device branch"),
    C("model = torch.nn.DataParallel(model).cuda()", "unsupported_op_workaround", "replace", True,
      "model = model.npu()  # torch.nn.DataParallel is not supported on NPU; use DDP for multi-device",
      "DataParallel is ✘ in Ascend's API list; plus .cuda()"),
    C("criterion = LabelSmoothingCrossEntropy(smoothing=0.1).cuda(args.gpu)", "tensor_to_device", "replace", True,
      "criterion = LabelSmoothingCrossEntropy(smoothing=0.1).npu(args.gpu)", "criterion moved to CUDA"),
    C("=checkpoint = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.resume, map_location='cpu')",
      "checkpoints written by this script on GPUs hold CUDA tensors; deserialising them without CUDA raises"),
    C("loc = 'cuda:{}'.format(args.gpu)", "device_type", "replace", True, "loc = 'npu:{}'.format(args.gpu)",
      "map_location string names a CUDA device"),
    C("best_acc1 = best_acc1.to(args.gpu)", "tensor_to_device", "replace", True,
      "best_acc1 = best_acc1.to('npu:{}'.format(args.gpu))",
      "an int device in Tensor.to means a CUDA ordinal"),
    C("num_workers=args.workers, pin_memory=True, sampler=train_sampler)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu', sampler=train_sampler)", PIN_NOTE),
    C("=num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("images = images.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(args.gpu, non_blocking=True)", "train batch transfer"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on NPU: targets stay on CPU while images/model are on the NPU -> device mismatch in the loss"),
    C("target = target.cuda(args.gpu, non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(args.gpu, non_blocking=True)", "train label transfer"),
    C("=images = images.cuda(args.gpu)", "tensor_to_device", "replace", True, "images = images.npu(args.gpu)",
      "validation batch transfer"),
    C("=target = target.cuda(args.gpu)", "tensor_to_device", "replace", True, "target = target.npu(args.gpu)",
      "validation label transfer (unguarded)"),
])

E("repvgg_test", "test.py", "device_branch_or_abstraction",
  "DingXiaoH/RepVGG test.py (use_gpu branch, checkpoint loading)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "False on NPU: evaluation silently runs on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model transfer"),
    C("criterion = nn.CrossEntropyLoss().cuda()", "tensor_to_device", "replace", True,
      "criterion = nn.CrossEntropyLoss().npu()", "unconditional .cuda() raises on NPU"),
    C("num_workers=args.workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=args.workers, pin_memory=True, pin_memory_device='npu')", PIN_NOTE),
    C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "images = images.npu(non_blocking=True)", "batch transfer"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "label transfer"),
    C("checkpoint = torch.load(ckpt_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(ckpt_path, map_location='cpu')",
      "evaluates checkpoints saved by train.py on GPUs (CUDA tensors)"),
])

E("repvgg_convert", "tools/convert.py", "explicit_replacement",
  "DingXiaoH/RepVGG convert.py (train-time -> deploy-time structural re-parameterisation)", [
    C("checkpoint = torch.load(args.load)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(args.load, map_location='cpu')",
      "GPU-trained checkpoints hold CUDA tensors; loading them on an NPU host raises"),
])

# ---------------------------------------------------------------- EVA-02
E("eva02_model", "asuka/modeling_finetune.py", "explicit_replacement",
  "baaivision/EVA EVA-02 asuka/modeling_finetune.py (xformers attention, apex FusedLayerNorm, 2D RoPE)", [
    C("import xformers.ops as xops", "attention_kernel", "replace", False, "import torch_npu",
      "guarded import (ImportError -> None); xformers has no NPU backend; the module needs torch_npu for the "
      "replacement kernel"),
    C("from apex.normalization import FusedLayerNorm", "custom_cuda_extension", "replace", False,
      "from torch.nn import LayerNorm as FusedLayerNorm",
      "guarded; falls back to nn.LayerNorm when apex is absent. If an apex build without fused_layer_norm_cuda is "
      "importable the model would fail at construction (unconfirmed for Ascend apex)"),
    C("return t * self.freqs_cos + rotate_half(t) * self.freqs_sin", "npu_fused_op", "replace", False,
      "return torch_npu.npu_rotary_mul(t, self.freqs_cos[None, None], self.freqs_sin[None, None], rotary_mode='interleave')",
      "performance: fused RoPE; EVA's rotate_half pairs adjacent channels, i.e. interleave mode"),
    C("x = xops.memory_efficient_attention(q, k, v, p=self.xattn_drop, scale=self.scale)", "attention_kernel",
      "replace", True,
      "x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, 'BSND', keep_prob=1. - self.xattn_drop, scale=self.scale)[0]",
      "every registered EVA-02 model hard-codes xattn=True, so xops (None on NPU) is always called; q/k/v are "
      "already [B, N, H, D] = BSND"),
])

E("eva02_sh", "asuka/scripts/ft_in1k_eva02_B_p14_448.sh", "explicit_replacement",
  "EVA-02 fine-tuning launch script (DeepSpeed, NCCL IB env)", [
    C("=export ENV_TYPE=deepspeed", "env_var", "npu_only_addition", True, SET_ENV,
      "CANN environment needed by torch_npu"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists all 8 devices, which is what each node's 8 processes use anyway"),
    C("export NCCL_IB_HCA=", "env_var", "removal", False, None,
      "host InfiniBand HCAs are not used by HCCL (NPU RoCE ports)"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "no HCCL counterpart"),
    C("export NCCL_SOCKET_IFNAME=bond0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=bond0",
      "2-node job: selects the host NIC for rendezvous; HCCL ignores the NCCL name"),
    C("export NCCL_DEBUG=INFO", "env_var", "removal", False, None, "logging only"),
])

E("eva02_req", "asuka/requirements.txt", "explicit_replacement",
  "EVA-02 asuka requirements (cu117 torch, xformers, deepspeed pins)", [
    C("=--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64)"),
    C("=torch==1.13.1+cu117", "import_torch_npu", "replace", True, "torch==2.1.0",
      "CUDA build of torch 1.13; torch_npu needs a matching torch 2.x"),
    C("=torchvision==0.14.1+cu117", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "CUDA build; follows the torch pin"),
    C("=numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch_npu wheel itself"),
    C("=deepspeed==0.8.3", "distributed_framework", "replace", True, "deepspeed>=0.14.0",
      "0.8.3 predates DeepSpeed's NPU accelerator (legacy deepspeed_npu only supported 0.9.2); minimum version "
      "with accelerator/npu_accelerator.py unconfirmed"),
    C("=xformers==0.0.16", "attention_kernel", "removal", True, None,
      "CUDA-only wheel pinned to torch 1.13.1; pip resolution fails against torch 2.1 and there is no NPU backend"),
])
