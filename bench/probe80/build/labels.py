"""Labels for probe80 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NPU = "import torch_npu"
IMPORT_NOTE = ("entry point: torch_npu must be loaded for torch.npu / 'npu:N' devices / hccl "
               "(autoload exists since 2.5.1, explicit import still recommended)")
COMPILE_NOTE = ("performance only: protein lengths vary per target (dynamic shapes), "
                "set_compile_mode(jit_compile=False) is the recommended setting for that")

# ----------------------------------------------------------------------------------------- OpenFold
E("openfold_setup", "setup.py", "explicit_replacement",
  "aqlaboratory/openfold setup.py (attn_core_inplace_cuda CUDAExtension with a CPU-stub fallback)", [
    C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME",
      "custom_cuda_extension", R, False,
      "from torch_npu.utils.cpp_extension import NpuExtension",
      "only needed if the fused softmax is ported to Ascend C; the unchanged import works on an NPU host"),
    C("modules = [CUDAExtension(", "custom_cuda_extension", R, False,
      "modules = [NpuExtension(name=\"attn_core_inplace_npu\", sources=[...ascendc...])]",
      "not reached on an NPU host (no nvcc, torch.version.cuda is None -> the CPU-stub CppExtension "
      "branch builds); an NPU kernel is optional, the call sites are what must change"),
])

E("openfold_attention_core", "openfold/utils/kernel/attention_core.py", "explicit_replacement",
  "aqlaboratory/openfold utils/kernel/attention_core.py (in-place softmax extension autograd Function)", [
    C("attn_core_inplace_cuda = importlib.import_module(", "custom_cuda_extension", R, False,
      "attn_core_inplace_cuda = None  # no NPU build; use torch softmax below",
      "the import succeeds against the CPU stub setup.py builds without nvcc; guard/drop it in the port"),
    C("attn_core_inplace_cuda.forward_(", "custom_cuda_extension", R, True,
      "attention_logits.copy_(torch.softmax(attention_logits, dim=-1))",
      "compiled CUDA/CPU-stub kernel called on NPU tensors (memory-efficient kernel path, used at inference)"),
    C("attn_core_inplace_cuda.backward_(", "custom_cuda_extension", R, True,
      "attention_logits.mul_(grad_output @ v.transpose(-1, -2) - (grad_output @ v.transpose(-1, -2) * attention_logits).sum(-1, keepdim=True))",
      "same extension, backward; needs a torch rewrite of the softmax gradient"),
])

E("openfold_primitives", "openfold/model/primitives.py", "explicit_replacement",
  "aqlaboratory/openfold model/primitives.py (bf16 LayerNorm/softmax, DS4Sci EvoformerAttention, FlashAttention paths)", [
    C("with torch.cuda.amp.autocast(enabled=False):  # keep the norm in bf16", "amp", R, False,
      "with torch.autocast(device_type=x.device.type, enabled=False):",
      "CUDA autocast off is a no-op for NPU autocast: layer_norm then returns fp32 (more memory), not wrong"),
    C("with torch.cuda.amp.autocast(enabled=False):  # bf16 softmax, no upcast", "amp", R, False,
      "with torch.autocast(device_type=t.device.type, enabled=False):",
      "same as LayerNorm: the bf16 softmax gets upcast under NPU autocast; memory, not correctness"),
    C("a = torch.matmul(query, key)", "npu_fused_op", R, False,
      "return torch_npu.npu_fusion_attention(q, k, v, H, 'BNSD', pse=sum(biases), scale=1.0)[0]",
      "performance only: matmul + pair bias + softmax + matmul is one npu_fusion_attention with pse; "
      "bias broadcasting shapes for pse unconfirmed"),
    C("=o = DS4Sci_EvoformerAttention(", "attention_kernel", R, False,
      "o = _attention(q.transpose(-2, -3), k.transpose(-2, -3), v.transpose(-2, -3), biases)",
      "only with use_deepspeed_evo_attention (opt-in flag); DS4Sci's CUTLASS kernel has no NPU build"),
    C("o = DS4Sci_EvoformerAttention(q, k, v, biases)", "attention_kernel", R, False,
      "o = torch_npu.npu_fusion_attention(q, k, v, H, 'BSND', pse=biases[0] + biases[1])[0]",
      "same opt-in DS4Sci path (bf16/fp16 branch)"),
    C("kv_unpad, _, kv_cu_seqlens, kv_max_s = unpad_input(kv, kv_mask)", "attention_kernel", R, False,
      "actual_seq_kvlen = kv_mask.sum(-1).cumsum(0).tolist()",
      "use_flash is opt-in and the flash_attn import is guarded (clean ValueError); port to TND-layout "
      "npu_fusion_attention with cumulative actual_seq_kvlen"),
    C("out = flash_attn_unpadded_kvpacked_func(", "attention_kernel", R, False,
      "out = torch_npu.npu_fusion_attention(q, k_unpad, v_unpad, H, 'TND', actual_seq_qlen=..., actual_seq_kvlen=..., scale=1.0)[0]",
      "opt-in flash path; flash-attn cannot be installed on NPU"),
])

E("openfold_tensor_utils", "openfold/utils/tensor_utils.py", "explicit_replacement",
  "aqlaboratory/openfold utils/tensor_utils.py with the precision_utils.is_fp16_enabled helper folded in", [
    C("fp16_enabled = torch.get_autocast_gpu_dtype() == torch.float16", "amp", R, True,
      "fp16_enabled = torch.get_autocast_dtype('npu') == torch.float16",
      "reads the CUDA autocast dtype: under NPU fp16 autocast the fp32 overflow guards in the triangle "
      "updates are silently skipped"),
    C("fp16_enabled = fp16_enabled and torch.is_autocast_enabled()", "amp", R, True,
      "fp16_enabled = fp16_enabled and torch.is_autocast_enabled('npu')",
      "no-argument is_autocast_enabled() reports CUDA autocast only -> False on NPU"),
])

E("openfold_tri_mul", "openfold/model/triangular_multiplicative_update.py", "explicit_replacement",
  "aqlaboratory/openfold model/triangular_multiplicative_update.py (fp16 overflow guard around the triangle matmul)", [
    C("=with torch.cuda.amp.autocast(enabled=False):", "amp", R, True,
      "with torch.autocast(device_type=z.device.type, enabled=False):",
      "meant to run the triangle product in fp32 under fp16 AMP; a CUDA-only disable leaves NPU autocast on, "
      "so matmul is recast to fp16 and can overflow"),
    C("with torch.cuda.amp.autocast(enabled=False):  # fused a/b projections", "amp", R, True,
      "with torch.autocast(device_type=z.device.type, enabled=False):  # fused a/b projections",
      "same guard in the AF-Multimer fused variant"),
])

E("openfold_train", "train_openfold.py", "explicit_replacement",
  "aqlaboratory/openfold train_openfold.py (PyTorch Lightning Trainer, DeepSpeed / DDP strategies, bf16 check)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C('self.log("train/peak_mem_gb", torch.cuda.max_memory_allocated()', "torch_cuda_api", R, False,
      'self.log("train/peak_mem_gb", torch.npu.max_memory_allocated() / 2 ** 30, on_step=True, logger=True)',
      "returns 0 without CUDA (wrong metric, no failure)"),
    C("args.gpus = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpus = torch.npu.device_count()",
      "0 on an NPU host -> Trainer(devices=0)"),
    C('if args.precision.startswith("bf16") and torch.cuda.get_device_capability()[0] < 8:',
      "device_capability_check", R, True,
      'if args.precision.startswith("bf16") and not torch.npu.is_bf16_supported():',
      "get_device_capability needs a CUDA build (and returns None under torch_npu); bf16-mixed is the default "
      "so the line always runs"),
    C("strategy = DeepSpeedStrategy(", "distributed_framework", R, False,
      "strategy = DDPStrategy(process_group_backend=\"hccl\", cluster_environment=cluster_environment)",
      "unconfirmed: Lightning's DeepSpeedStrategy is tied to its CUDA accelerator; DeepSpeed itself has an NPU "
      "accelerator. Only with --deepspeed_config_path"),
    C("strategy = DDPStrategy(find_unused_parameters=False", "dist_backend", R, True,
      "strategy = DDPStrategy(find_unused_parameters=False, process_group_backend=\"hccl\", cluster_environment=cluster_environment)",
      "Lightning picks nccl only for CUDA devices and gloo otherwise; gloo cannot reduce NPU tensors"),
    C('accelerator="gpu",', "device_type", R, True,
      'accelerator=NPUAccelerator(),  # custom Lightning accelerator for torch_npu',
      "Lightning's GPU accelerator finds no CUDA device on an NPU host and raises; the NPU accelerator "
      "class itself is unconfirmed"),
    C("precision=args.precision,", "amp", R, False,
      "plugins=[MixedPrecision(args.precision, device=\"npu\")],",
      "unconfirmed: with a non-CUDA accelerator Lightning's mixed-precision plugin autocasts for 'cpu', "
      "so bf16 would silently not apply to NPU ops"),
])

E("openfold_run_pretrained", "run_pretrained_openfold.py", "explicit_replacement",
  "aqlaboratory/openfold run_pretrained_openfold.py (+ script_utils.relax_protein: OpenMM relax on the model device)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("=torch.set_grad_enabled(False)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
    C('if args.model_device == "cpu" and torch.cuda.is_available():', "torch_cuda_api", R, False,
      'if args.model_device == "cpu" and torch.npu.is_available():',
      "warning only: on an NPU host the 'running on CPU' hint never fires"),
    C('use_gpu=(model_device != "cpu"),', "device_type", R, True,
      'use_gpu=model_device.startswith("cuda"),',
      "any non-cpu device (npu:0) asks OpenMM for its CUDA platform, which does not exist on an NPU host; "
      "relax has to run on OpenMM's CPU platform"),
])

E("openfold_environment", "environment.yml", "explicit_replacement",
  "aqlaboratory/openfold environment.yml (pytorch-cuda, nvidia channel, nvcc for the kernel, flash-attn)", [
    C("=- nvidia", "torch_cuda_api", X, False, None, "channel only serves the CUDA packages removed below"),
    C("pytorch::pytorch=2.1", "torch_cuda_api", R, False,
      "pytorch::pytorch=2.1.0=*cpu*",
      "2.1 is in the torch_npu matrix; pinning the CPU build explicitly once pytorch-cuda is gone is "
      "unconfirmed but safer"),
    C("pytorch::pytorch-cuda=12.1", "torch_cuda_api", X, True, None,
      "selects the CUDA build of torch; torch_npu pairs with the CPU build"),
    C("nvidia::cuda-nvcc=12.1", "custom_cuda_extension", X, False, None,
      "only builds the CUDA kernel; setup.py falls back to the CPU stub without it"),
    C("nvidia::cuda-cudart-dev=12.1", "custom_cuda_extension", X, False, None, "same as cuda-nvcc"),
    C("=- pip:", "import_torch_npu", A, True, "      - torch-npu==2.1.0.post12",
      "torch_npu wheel matching torch 2.1.0 must be added"),
    C("flash-attn==2.3.6", "attention_kernel", X, True, None,
      "flash-attn cannot be installed on an NPU host (needs nvcc); the env build fails"),
])

# ----------------------------------------------------------------------------------------- ESM / ESMFold
E("esm_extract", "scripts/extract.py", "explicit_replacement",
  "facebookresearch/esm scripts/extract.py (embedding extraction; GPU used when available)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("use_gpu = torch.cuda.is_available() and not args.nogpu", "torch_cuda_api", R, True,
      "use_gpu = torch.npu.is_available() and not args.nogpu",
      "False on an NPU host: the whole extraction silently runs on the CPU"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", "device move"),
    C('toks = toks.to(device="cuda", non_blocking=True)', "tensor_to_device", R, True,
      'toks = toks.to(device="npu", non_blocking=True)', "device string"),
])

E("esm_variant_predict", "examples/variant-prediction/predict.py", "transfer_to_npu",
  "facebookresearch/esm examples/variant-prediction/predict.py (ESM-1v zero-shot scoring, bare .cuda() calls)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "six .cuda()/torch.cuda sites, all covered by transfer_to_npu (Tensor.cuda/Module.cuda -> npu, "
      "torch.cuda.is_available -> NPU); the port adds only this line"),
])

E("esmfold_fold", "esm/scripts/fold.py", "explicit_replacement",
  "facebookresearch/esm esm/scripts/fold.py (ESMFold batch folding, FSDP CPU offload, OOM string check)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C('backend="nccl", init_method="tcp://localhost:9999"', "dist_backend", R, True,
      'backend="hccl", init_method="tcp://localhost:9999", world_size=1, rank=0',
      "--cpu-offload path: single-process group for FSDP; nccl is unavailable on NPU "
      "(FSDP CPUOffload on NPU itself unconfirmed)"),
    C("model.cuda()  # trunk + structure module stay resident", "tensor_to_device", R, True,
      "model.npu()  # trunk + structure module stay resident", "--cpu-offload path"),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", "default path"),
    C("=model.set_chunk_size(args.chunk_size)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
    C('if e.args[0].startswith("CUDA out of memory"):', "device_type", R, False,
      'if "out of memory" in str(e):',
      "unconfirmed: the NPU allocator's OOM message does not start with 'CUDA', so OOM batches would re-raise "
      "instead of being skipped"),
])

# ----------------------------------------------------------------------------------------- RFdiffusion / SE(3)-Transformer
E("rfdiffusion_run_inference", "scripts/run_inference.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion scripts/run_inference.py (hydra entry point, GPU name logged into .trb)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", R, False,
      "if not torch.npu.is_available():", "cosmetic: device description for the log"),
    C("return torch.cuda.get_device_name(torch.cuda.current_device())", "torch_cuda_api", R, False,
      "return torch.npu.get_device_name(torch.npu.current_device())", "cosmetic"),
    C("=log = logging.getLogger(__name__)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, False,
      "if torch.npu.is_available():",
      "log only (prints 'NO GPU DETECTED'); the real device choice is in model_runners.py"),
    C("device_name = torch.cuda.get_device_name(", "torch_cuda_api", R, False,
      "device_name = torch.npu.get_device_name(torch.npu.current_device())",
      "only reached inside the CUDA check; changes with it"),
    C('device=torch.cuda.get_device_name(torch.cuda.current_device()) if torch.cuda.is_available() else "CPU",',
      "torch_cuda_api", R, False,
      'device=torch.npu.get_device_name(torch.npu.current_device()) if torch.npu.is_available() else "CPU",',
      "run metadata records 'CPU' for an NPU run"),
])

E("rfdiffusion_model_runners", "rfdiffusion/inference/model_runners.py", "explicit_replacement",
  "RosettaCommons/RFdiffusion inference/model_runners.py (Sampler picks cuda or cpu)", [
    C("if torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if torch.npu.is_available():",
      "False on an NPU host: RoseTTAFold and all sampling silently run on the CPU"),
    C('self.device = torch.device("cuda")', "device_type", R, True,
      'self.device = torch.device("npu")', "device string"),
])

E("se3_runtime_utils", "env/SE3Transformer/se3_transformer/runtime/utils.py", "explicit_replacement",
  "NVIDIA DeepLearningExamples SE3Transformer runtime/utils.py as vendored by RFdiffusion (to_cuda, NCCL init, libcudart L2 limit, capability check)", [
    C("return x.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "return x.npu(non_blocking=True)", "tensor move"),
    C("return x.to(device=torch.cuda.current_device(), non_blocking=True)", "torch_cuda_api", R, True,
      "return x.to(device=torch.npu.current_device(), non_blocking=True)",
      "DGLGraph move; also note DGL itself has no NPU device support (unconfirmed, see README)"),
    C('backend = "nccl" if torch.cuda.is_available() else "gloo"', "dist_backend", R, True,
      'backend = "hccl" if torch.npu.is_available() else "gloo"',
      "on an NPU host this silently picks gloo, which cannot reduce NPU tensors"),
    C('if backend == "nccl":', "dist_backend", R, True,
      'if backend == "hccl":',
      "backend-string comparison is not rewritten by any tool; without it set_device is skipped and every "
      "rank lands on device 0"),
    C("torch.cuda.set_device(get_local_rank())", "torch_cuda_api", R, True,
      "torch.npu.set_device(get_local_rank())", "per-process device"),
    C('_libcudart = ctypes.CDLL("libcudart.so")', "custom_cuda_extension", X, False, None,
      "would raise OSError (no libcudart) but is dead once the call in training.py is removed"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False,
      "torch.npu.manual_seed_all(seed)", "lazily queued without CUDA, harmless; NPU RNG seeded by torch.manual_seed"),
    C("major_cc, minor_cc = torch.cuda.get_device_capability()", "device_capability_check", R, True,
      "return amp  # pad channels for the Cube unit whenever AMP is on",
      "needs a CUDA build; under torch_npu it returns None and the tuple unpacking fails"),
])

E("se3_convolution", "env/SE3Transformer/se3_transformer/model/layers/convolution.py", "explicit_replacement",
  "NVIDIA SE3Transformer model/layers/convolution.py (TFN convolutions wrapped in torch.cuda.nvtx ranges)", [
    C("from torch.cuda.nvtx import range as nvtx_range", "torch_cuda_api", R, True,
      "from torch_npu.npu.mstx import range as nvtx_range  # or a no-op contextmanager",
      "torch.cuda.nvtx is not aliased by torch_npu; without CUDA its stub raises at the first range push, "
      "i.e. in every forward. Replacing the import fixes all the `with nvtx_range(...)` lines"),
])

E("se3_training", "env/SE3Transformer/se3_transformer/runtime/training.py", "explicit_replacement",
  "NVIDIA SE3Transformer runtime/training.py (apex FusedAdam/FusedLAMB, AMP, NVML affinity, L2 fetch granularity)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("from se3_transformer.runtime import gpu_affinity", "torch_cuda_api", X, False, None,
      "gpu_affinity imports pynvml at module level; goes with the set_affinity call once pynvml leaves the env"),
    C("from apex.optimizers import FusedAdam, FusedLAMB", "fused_optimizer", R, True,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam, NpuFusedLamb as FusedLAMB",
      "apex's CUDA fused optimizers are not available on NPU (adam is the default optimizer)"),
    C('map_location={"cuda:0": f"cuda:{get_local_rank()}"}', "device_type", R, True,
      'map_location=f"npu:{get_local_rank()}"',
      "remaps only cuda:0 storages and onto a CUDA device; resuming fails on an NPU host"),
    C('loss_acc = torch.zeros((1,), device="cuda")', "tensor_to_device", R, True,
      'loss_acc = torch.zeros((1,), device="npu")', "device string"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "with --amp, CUDA autocast is inactive for NPU tensors: trains in fp32 without telling"),
    C("torch.cuda.synchronize()  # make the epoch timing honest", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # make the epoch timing honest", "--benchmark path; needs a CUDA build"),
    C("device = torch.cuda.current_device()", "torch_cuda_api", R, True,
      "device = torch.npu.current_device()", "needs a CUDA build"),
    C("grad_scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      "grad_scaler = torch.npu.amp.GradScaler(enabled=args.amp)", "loss scaling for NPU autocast"),
    C("gpu_affinity.set_affinity(gpu_id=get_local_rank()", "torch_cuda_api", X, True, None,
      "NVML (pynvml) CPU-affinity helper plus torch.cuda.device_count(); no NVML on an NPU host"),
    C("=increase_l2_fetch_granularity()", "custom_cuda_extension", X, True, None,
      "calls cudaDeviceSetLimit through ctypes on libcudart.so -> OSError on an NPU host"),
])

E("rfdiffusion_se3nv_env", "env/SE3nv.yml", "explicit_replacement",
  "RosettaCommons/RFdiffusion env/SE3nv.yml (pytorch 1.9 + cudatoolkit 11.1 + dgl-cuda)", [
    C("=- dglteam", "custom_cuda_extension", X, False, None, "channel of the CUDA DGL build"),
    C("=- nvidia", "torch_cuda_api", X, False, None, "CUDA channel"),
    C("=- pytorch=1.9", "import_torch_npu", R, True,
      "- pytorch=2.1.0=*cpu*  (+ pip: torch-npu==2.1.0.post12)",
      "no torch_npu release pairs with torch 1.9 (matrix: 1.8.1, 1.11, 2.1 ...)"),
    C("=- cudatoolkit=11.1", "torch_cuda_api", X, True, None, "selects the CUDA build of pytorch"),
    C("=- dgl-cuda11.1", "custom_cuda_extension", R, False,
      "- dgl  # CPU build",
      "unconfirmed: DGL has no NPU backend; the CPU build installs, but graphs cannot live on the NPU "
      "(the SE3 layers would need a DGL-free rewrite)"),
    C("- pynvml==11.0.0", "torch_cuda_api", X, False, None,
      "installs fine, NVML calls fail at runtime (gpu_affinity; removed in training.py)"),
])

E("rfdiffusion_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "RosettaCommons/RFdiffusion docker/Dockerfile (NGC CUDA base, cu116 torch and DGL wheels)", [
    C("FROM nvcr.io/nvidia/cuda:11.6.2-cudnn8-runtime-ubuntu20.04", "torch_cuda_api", R, True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA runtime image; an NPU container needs a CANN base image (tag illustrative)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False,
      "ENV ASCEND_VISIBLE_DEVICES=0",
      "ignored on an NPU host; devices are exposed by the Ascend Docker Runtime via ASCEND_VISIBLE_DEVICES"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container toolkit only"),
    C("dgl==1.0.2+cu116 -f https://data.dgl.ai/wheels/cu116/repo.html", "custom_cuda_extension", R, False,
      "dgl==1.0.2 -f https://data.dgl.ai/wheels/repo.html",
      "unconfirmed: CUDA DGL wheel; CPU DGL at best (no NPU backend)"),
    C("torch==1.12.1+cu116 --extra-index-url", "import_torch_npu", R, True,
      "torch==2.1.0 torch-npu==2.1.0.post12 --extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel of a torch version with no torch_npu release"),
    C("pynvml==11.0.0 \\", "torch_cuda_api", X, False, None, "NVML binding, nothing to talk to"),
])

# ----------------------------------------------------------------------------------------- ProteinMPNN
E("proteinmpnn_run", "protein_mpnn_run.py", "explicit_replacement",
  "dauparas/ProteinMPNN protein_mpnn_run.py (sequence design inference)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("=torch.manual_seed(seed)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
    C('device = torch.device("cuda:0" if (torch.cuda.is_available()) else "cpu")', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "the only device line; on an NPU host design silently runs on the CPU"),
])

E("proteinmpnn_training", "training/training.py", "explicit_replacement",
  "dauparas/ProteinMPNN training/training.py (mixed-precision trainer)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True,
      "scaler = torch.npu.amp.GradScaler()",
      "mixed_precision defaults to True; the CUDA scaler disables itself without CUDA"),
    C('device = torch.device("cuda:0"', "device_type", R, True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "silent CPU training on an NPU host"),
    C("checkpoint = torch.load(PATH)", "device_type", R, False,
      "checkpoint = torch.load(PATH, map_location=device)",
      "only needed to resume from checkpoints written on a CUDA machine"),
    C("with torch.cuda.amp.autocast():", "amp", R, True,
      "with torch.npu.amp.autocast():", "CUDA autocast inactive for NPU tensors"),
    C("peak_mem = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "peak_mem = torch.npu.max_memory_allocated() / 1024 ** 3", "returns 0 without CUDA (log only)"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and fails without a CUDA build, at the end of every epoch"),
])

E("proteinmpnn_slurm", "training/submit_exp_020.sh", "explicit_replacement",
  "dauparas/ProteinMPNN training/submit_exp_020.sh-style Slurm job (A100 gres, CUDA module, nvidia-smi)", [
    C("#SBATCH -p gpu", "device_type", R, False, "#SBATCH -p npu",
      "site-specific partition name; unconfirmed (no Ascend Slurm integration documented)"),
    C("#SBATCH --gres=gpu:a100:1", "device_type", R, False, "#SBATCH --gres=npu:1",
      "unconfirmed: gres name depends on the site's Slurm config for /dev/davinci*"),
    C("module load cuda/11.3", "env_var", R, False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "the CANN environment must be sourced for torch_npu; whether a missing cuda module aborts "
      "depends on the module system (unconfirmed)"),
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${SLURM_LOCALID:-0}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export PYTORCH_CUDA_ALLOC_CONF=", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "ignored on NPU; allocator tuning only"),
    C("nvidia-smi --query-gpu=", "torch_cuda_api", R, True,
      "npu-smi info",
      "command not found under set -eo pipefail aborts the job"),
    C("python -c \"import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"",
      "import_torch_npu", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"",
      "diagnostic print only"),
])

# ----------------------------------------------------------------------------------------- DiffDock
E("diffdock_inference", "inference.py", "explicit_replacement",
  "gcorso/DiffDock inference.py (score + confidence models, ESM embeddings)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silent CPU docking on an NPU host"),
    C('print(f"DiffDock will run on {device}")', "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
])

E("diffdock_inference_utils", "utils/inference_utils.py", "explicit_replacement",
  "gcorso/DiffDock utils/inference_utils.py (ESM-2 embeddings and ESMFold structures for the receptor)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", R, True,
      "if torch.npu.is_available():", "tokens stay on the CPU on an NPU host"),
    C('toks = toks.to(device="cuda", non_blocking=True)', "tensor_to_device", R, True,
      'toks = toks.to(device="npu", non_blocking=True)', "device string"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()", "no-op without CUDA; the retry with a smaller chunk may still OOM"),
    C("if torch.cuda.is_available():  # embed on the GPU", "torch_cuda_api", R, True,
      "if torch.npu.is_available():  # embed on the NPU when there is one",
      "ESM-2 650M silently runs on the CPU"),
    C("model = model.cuda()", "tensor_to_device", R, True, "model = model.npu()", "device move"),
    C("model = model.eval().cuda()", "tensor_to_device", R, True, "model = model.eval().npu()",
      "ESMFold for missing receptor structures; unconditional, fails on an NPU host"),
])

E("diffdock_score_model", "models/score_model.py", "explicit_replacement",
  "gcorso/DiffDock models/score_model.py (e3nn tensor-product score model on torch_cluster radius graphs)", [
    C("from torch_cluster import radius, radius_graph", "custom_cuda_extension", R, True,
      "from utils.graph_ops import radius, radius_graph  # torch.cdist-based replacements",
      "torch_cluster is a compiled CPU/CUDA extension; its CPU kernels reject NPU tensors. Replacing the "
      "import fixes every radius()/radius_graph() call (torch_scatter.scatter sum/mean is pure torch and "
      "stays)"),
])

E("diffdock_train", "train.py", "explicit_replacement",
  "gcorso/DiffDock train.py (+ utils/training.py train/test epochs; DataParallel only when device is cuda)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C('if device.type == "cuda" and len(data) == 1 or device.type == "cpu" and data.num_graphs == 1:',
      "device_type", R, True,
      'if device.type == "cuda" and len(data) == 1 or device.type != "cuda" and data.num_graphs == 1:',
      "with device npu neither branch matches, single-graph batches reach BatchNorm in train mode and crash"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
    C("torch.cuda.empty_cache()  # after the torch_cluster error", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # after the torch_cluster error", "no-op without CUDA"),
    C('model.module.load_state_dict(dict["model"], strict=True)', "device_type", R, True,
      'getattr(model, "module", model).load_state_dict(dict["model"], strict=True)',
      "the model is only DataParallel-wrapped when device.type == 'cuda'; on NPU .module does not exist "
      "and --restart_dir fails"),
    C("model.module.load_state_dict(dict, strict=True)", "device_type", R, True,
      "getattr(model, \"module\", model).load_state_dict(dict, strict=True)",
      "same, fallback branch of the restart"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "silent CPU training"),
])

E("diffdock_requirements", "requirements.txt", "explicit_replacement",
  "gcorso/DiffDock requirements.txt (torch 1.13.1+cu117 with matching PyG extension wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch build (x86: download.pytorch.org/whl/cpu)"),
    C("--find-links https://data.pyg.org/whl/torch-1.13.1+cu117.html", "custom_cuda_extension", R, True,
      "--find-links https://data.pyg.org/whl/torch-2.1.0+cpu.html", "CUDA builds of the PyG extensions"),
    C("torch==1.13.1+cu117", "import_torch_npu", R, True,
      "torch==2.1.0\ntorch-npu==2.1.0.post12",
      "CUDA wheel; 1.13 has no torch_npu release"),
    C("torch-scatter==2.1.0+pt113cu117", "custom_cuda_extension", R, True,
      "torch-scatter==2.1.2+pt21cpu", "ABI-bound to the CUDA torch build"),
    C("torch-sparse==0.6.16+pt113cu117", "custom_cuda_extension", R, True,
      "torch-sparse==0.6.18+pt21cpu", "ABI-bound to the CUDA torch build"),
    C("torch-cluster==1.6.0+pt113cu117", "custom_cuda_extension", R, True,
      "torch-cluster==1.6.3+pt21cpu", "ABI-bound to the CUDA torch build (and CPU-only afterwards)"),
    C("torch-spline-conv==1.2.1+pt113cu117", "custom_cuda_extension", R, True,
      "torch-spline-conv==1.2.2+pt21cpu", "ABI-bound to the CUDA torch build"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None, "NVML monitoring in the web app only"),
    C("gputil==1.4.0", "torch_cuda_api", X, False, None, "wraps nvidia-smi; web app only"),
])

# ----------------------------------------------------------------------------------------- Boltz
E("boltz_main", "src/boltz/main.py", "explicit_replacement",
  "jwohlwend/boltz src/boltz/main.py (click CLI, Lightning Trainer, cuEquivariance kernel switch)", [
    C("=import torch", "import_torch_npu", A, True, IMPORT_NPU, IMPORT_NOTE),
    C('@click.option("--accelerator", type=click.Choice(["gpu", "cpu", "tpu"]), default="gpu",',
      "device_type", R, True,
      '@click.option("--accelerator", type=click.Choice(["gpu", "npu", "cpu", "tpu"]), default="npu",',
      "default gpu makes Lightning look for CUDA and fail; npu is not an accepted choice"),
    C('accelerator: str = "gpu",', "device_type", R, False, 'accelerator: str = "npu",',
      "signature default, only used when predict() is called directly"),
    C("=torch.set_grad_enabled(False)", "compile_mode", A, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)", COMPILE_NOTE),
    C("strategy = DDPStrategy(start_method=start_method)", "dist_backend", R, True,
      "strategy = DDPStrategy(start_method=start_method, process_group_backend=\"hccl\")",
      "multi-device prediction: Lightning only picks nccl for CUDA and falls back to gloo"),
    C("use_kernels=not no_kernels,", "custom_cuda_extension", R, False,
      "use_kernels=(not no_kernels) and torch.cuda.is_available(),",
      "defaults the cuEquivariance kernels on; harmless once the layers fall back (see triangular_mult.py)"),
    C('precision="bf16-mixed",', "amp", R, False,
      'plugins=[MixedPrecision("bf16-mixed", device="npu")],',
      "unconfirmed: with a non-CUDA accelerator Lightning's mixed precision autocasts 'cpu', so bf16 "
      "would not reach NPU ops"),
])

E("boltz_triangular_mult", "src/boltz/model/layers/triangular_mult.py", "device_branch_or_abstraction",
  "jwohlwend/boltz model/layers/triangular_mult.py (cuEquivariance triangle_multiplicative_update fast path)", [
    C("if use_kernels:  # fused cuEquivariance path, outgoing edges", "custom_cuda_extension", B, True,
      "if use_kernels and _cueq_triangle_multiplicative_update is not None and x.is_cuda:",
      "the guarded import leaves None on an NPU host but the dispatch does not check it: "
      "'NoneType' object is not callable with the default use_kernels=True"),
    C("if use_kernels:  # fused cuEquivariance path, incoming edges", "custom_cuda_extension", B, True,
      "if use_kernels and _cueq_triangle_multiplicative_update is not None and x.is_cuda:",
      "same, incoming edges"),
])

E("boltz_diffusion", "src/boltz/model/modules/diffusionv2.py", "explicit_replacement",
  "jwohlwend/boltz model/modules/diffusionv2.py + loss/diffusionv2.py (EDM sampler, weighted Kabsch alignment in fp32)", [
    C('=with torch.autocast("cuda", enabled=False):', "amp", R, False,
      'with torch.autocast(device_type=atom_coords.device.type, enabled=False):',
      "during prediction the caller (Boltz2.forward) already wraps sample(); matters only for other callers"),
    C('with torch.autocast("cuda", enabled=False):  # alignment + mse in fp32', "amp", R, True,
      'with torch.autocast(device_type=feats["coords"].device.type, enabled=False):  # alignment + mse in fp32',
      "training loss: a CUDA-only disable leaves NPU bf16 autocast on, so the Kabsch einsums and the MSE run "
      "in bf16 (silently less precise)"),
])

E("boltz_model", "src/boltz/model/models/boltz2.py", "explicit_replacement",
  "jwohlwend/boltz model/models/boltz2.py (LightningModule: compile, fp32 structure sampling, OOM skip)", [
    C("self.pairformer_module = torch.compile(", "compile_mode", R, False,
      "self.pairformer_module = torch.compile(self.pairformer_module, backend=\"npugraphs\", dynamic=False)",
      "unconfirmed: off by default; Inductor on NPU needs torch_npu >= 2.6 / triton-ascend"),
    C("if self.training and (i == recycling_steps) and torch.is_autocast_enabled():", "amp", R, False,
      "if self.training and (i == recycling_steps) and torch.is_autocast_enabled(\"npu\"):",
      "checks CUDA autocast only, so the cache clear never runs on NPU; effect unconfirmed"),
    C('with torch.autocast("cuda", enabled=False):', "amp", R, True,
      'with torch.autocast(device_type=s.device.type, enabled=False):',
      "structure sampling is meant to run in fp32; under NPU bf16 autocast the alignment and coordinate "
      "updates silently run in bf16"),
    C('self.log("train/max_mem_gib", torch.cuda.max_memory_allocated()', "torch_cuda_api", R, False,
      'self.log("train/max_mem_gib", torch.npu.max_memory_allocated() / 1024 ** 3)', "logs 0 without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA"),
])

E("boltz_pyproject", "pyproject.toml", "explicit_replacement",
  "jwohlwend/boltz pyproject.toml (cuEquivariance CUDA 12 wheels as dependencies, trifast extra)", [
    C('"torch>=2.2",', "import_torch_npu", R, False,
      '"torch>=2.2", "torch-npu",',
      "unconfirmed: installs, but the torch_npu pairing is left to the user"),
    C('"cuequivariance_ops_cu12>=0.5.0",', "custom_cuda_extension", X, False, None,
      "unconfirmed whether the cu12 wheels install on an aarch64 NPU host; unusable there either way"),
    C('"cuequivariance_ops_torch_cu12>=0.5.0",', "custom_cuda_extension", X, False, None, "same"),
    C('"cuequivariance_torch>=0.5.0",', "custom_cuda_extension", X, False, None,
      "pure-Python front end; harmless once the layers guard the call"),
    C('triton = ["trifast>=0.1.11", "triton>=3.0"]', "triton_kernel_tuning", R, False,
      'triton = ["triton-ascend"]',
      "optional extra; trifast's kernels would need porting to triton-ascend (unconfirmed)"),
])

E("boltz_train_yaml", "scripts/train/configs/structurev2.yaml", "explicit_replacement",
  "jwohlwend/boltz scripts/train/configs/structure.yaml-style training config", [
    C("accelerator: gpu", "device_type", R, True, "accelerator: npu",
      "Lightning Trainer accelerator; gpu fails on an NPU host"),
    C("precision: bf16-mixed", "amp", R, False, "precision: bf16-mixed  # with an NPU MixedPrecision plugin",
      "unconfirmed (see main.py)"),
    C("use_kernels: true", "custom_cuda_extension", R, False, "use_kernels: false",
      "cosmetic once the layers guard the cuEquivariance call"),
])
