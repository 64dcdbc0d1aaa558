# Labels for probe181 (genomics / single-cell / biological sequence models, CUDA -> Ascend NPU).
# One entry per upstream file; one C(...) per line a careful porter would edit.
# Policy notes live in ../README.md ("How the labels were chosen").

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu must be imported before any npu device use; the ported env files pin torch 2.1.0 + "
               "torch-npu 2.1.0.post10, which has no device-backend autoload (autoload only since 2.5.1)")

# ---------------------------------------------------------------------------------------------
# HyenaDNA / safari
# ---------------------------------------------------------------------------------------------

E("safari_hyena_operator", "src/models/sequence/hyena.py", "device_branch_or_abstraction",
  "HyenaDNA / safari src/models/sequence/hyena.py (HyenaFilter, HyenaOperator, fftconv_ref vs fused fftconv)",
  [
      C("=if self.fused_fft_conv:", "custom_cuda_extension", "add_branch", True,
        "if self.fused_fft_conv and fftconv_func is not None and x.is_cuda:",
        "fftconv_func comes from the nvcc-built csrc/fftconv extension; on an NPU host the guarded import leaves it "
        "None, so fused_fft_conv=True (set by the shipped hg38_hyena_fast config) calls None -> TypeError. "
        "Route NPU tensors to fftconv_ref (torch.fft rfft/irfft have NPU kernels: _fft_r2c/_fft_c2r)"),
  ])

E("safari_fftconv_op", "src/ops/fftconv.py", "kernel_rewrite",
  "safari src/ops/fftconv.py autograd wrapper around the csrc/fftconv CUDA kernel",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + " (needed when the module is run as a script for its self-test/benchmark)"),
      C("from fftconv import fftconv_fwd, fftconv_bwd", "custom_cuda_extension", "removal", True, None,
        "unguarded import of the nvcc-built fftconv extension: ImportError on an NPU host, which also breaks the "
        "guarded import in hyena.py (fftconv_func -> None); no nvcc path on Ascend"),
      C("out = fftconv_fwd(u, k_f, D, v, head_dim, q, dropout_mask, gelu, False, False,", "custom_cuda_extension",
        "replace", True,
        "out = fftconv_ref(u, torch.fft.irfft(k_f, n=fft_size)[..., :seqlen], D, dropout_mask, gelu=gelu)",
        "CUDA kernel call site; no Ascend C port exists, so express the forward with torch.fft ops "
        "(rfft/irfft have NPU kernels) or rewrite in Ascend C + NpuExtension"),
      C("du, dk_f, dD, dv, dq = fftconv_bwd(dout, u, k_f, D, v, ctx.head_dim, q, dropout_mask,",
        "custom_cuda_extension", "replace", True,
        "du, dk_f, dD, dv, dq = _fftconv_bwd_torch(dout, u, k_f, D, v, ctx.head_dim, q, dropout_mask,",
        "backward kernel call site of the same CUDA extension; needs a torch-op (or Ascend C) backward"),
      C('def _check_fftconv(batch_size=4, H=768, seqlen=2048, dtype=torch.float16, device="cuda"):',
        "device_type", "replace", True,
        'def _check_fftconv(batch_size=4, H=768, seqlen=2048, dtype=torch.float16, device="npu"):',
        "default device of the __main__ self-test; allocating on 'cuda' fails on an NPU host"),
      C('u = torch.randn(8, 1024, L, device="cuda", dtype=torch.float16)', "tensor_to_device", "replace", True,
        'u = torch.randn(8, 1024, L, device="npu", dtype=torch.float16)', "benchmark input allocated on cuda"),
      C('k = torch.randn(1024, L, device="cuda")', "tensor_to_device", "replace", True,
        'k = torch.randn(1024, L, device="npu")', "benchmark input allocated on cuda"),
      C('D = torch.randn(1024, device="cuda")', "tensor_to_device", "replace", True,
        'D = torch.randn(1024, device="npu")', "benchmark input allocated on cuda"),
      C("torch.cuda.synchronize()  # finish warmup", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # finish warmup",
        "torch.cuda.synchronize initialises CUDA and raises on a host without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "same; without an npu sync the timing would also measure only the async launch"),
      C("if torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
        "if torch.npu.is_bf16_supported():",
        "get_device_capability raises without CUDA; on NPU it returns None unless TORCH_NPU_DEVICE_CAPABILITY is "
        "set, so a sm80 check is meaningless - ask for bf16 support instead"),
  ])

E("safari_fftconv_setup", "csrc/fftconv/setup.py", "kernel_rewrite",
  "safari / HyenaDNA csrc/fftconv/setup.py (apex-style CUDAExtension build with nvcc gencode flags)",
  [
      C("from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME",
        "custom_cuda_extension", "replace", False,
        "from torch_npu.utils.cpp_extension import NpuExtension",
        "the import itself works on an NPU host (CUDA_HOME is just None); it changes because the build switches "
        "to NpuExtension"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "removal", True, None,
        "always true on an NPU host; the block then calls get_cuda_bare_metal_version(CUDA_HOME=None) -> "
        "TypeError before setup() runs (CUDA cross-compile arch hint, meaningless on Ascend)"),
      C('raise_if_cuda_home_none("fftconv")', "custom_cuda_extension", "removal", True, None,
        "raises RuntimeError because nvcc/CUDA_HOME does not exist on an Ascend host"),
      C("nvcc_raw_output, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)", "custom_cuda_extension",
        "removal", True, None, "runs <CUDA_HOME>/bin/nvcc -V; fails without a CUDA toolkit"),
      C("CUDAExtension(", "custom_cuda_extension", "replace", True, "NpuExtension(",
        "no nvcc on Ascend: the .cu kernel must be rewritten in Ascend C and built with "
        "torch_npu.utils.cpp_extension.NpuExtension (or the extension dropped in favour of the torch.fft path)"),
      C('"nvcc": append_nvcc_threads(', "custom_cuda_extension", "removal", True, None,
        "append_nvcc_threads shells out to nvcc -V via CUDA_HOME (None on Ascend); the nvcc flag list "
        "(gencode sm_70/80/90, -U__CUDA_NO_HALF...) has no meaning for an Ascend C build"),
  ])

E("safari_train", "train.py", "device_branch_or_abstraction",
  "safari / HyenaDNA train.py (Hydra + PyTorch Lightning SequenceLightningModule, create_trainer)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        "mem_gb = torch.npu.max_memory_allocated() / 2**30",
        "CUDA never initialised on an NPU host, so memory_stats returns {} and this logs 0 GiB: wrong metric, "
        "no failure"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "reset_peak_memory_stats resolves the current CUDA device (lazy init) and raises without CUDA "
        "(reached when train.log_memory is set, as in the hg38 fast config)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; the NPU caching allocator is not trimmed between long validation passes"),
      C('if config.trainer.get("accelerator", None) == "gpu" and not torch.cuda.is_available():',
        "torch_cuda_api", "replace", True,
        'if config.trainer.get("accelerator", None) in ("gpu", "npu") and not torch.npu.is_available():',
        "on an NPU host torch.cuda.is_available() is False, so this silently rewrites the run to CPU training"),
      C("gradient_as_bucket_view=True,  # https://pytorch-lightning.readthedocs.io", "dist_backend",
        "npu_only_addition", False, 'process_group_backend="hccl",',
        "Lightning's DDPStrategy derives the backend from the root device (nccl only for cuda, else gloo); pass "
        "hccl explicitly for npu devices. Unconfirmed in the knowledge notes (Lightning NPU support not covered)"),
      C('map_location="cuda",', "device_type", "replace", True, 'map_location="npu",',
        "loading the pretrained checkpoint onto cuda fails on an NPU host"),
  ])

E("safari_utils_train", "src/utils/train.py", "device_branch_or_abstraction",
  "safari src/utils/train.py (get_logger, process_config, print_config, OptimModule)",
  [
      C("config.trainer.devices = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "config.trainer.devices = torch.npu.device_count()",
        "returns 0 on an NPU host: devices=0 breaks the Trainer and the div_up batch interpolations"),
      C('config.trainer.accelerator = "gpu"', "device_type", "replace", True,
        'config.trainer.accelerator = "npu"',
        "legacy `gpus:` configs are mapped onto Lightning's CUDA accelerator, which cannot start without CUDA; "
        "needs an NPU accelerator registered with Lightning (not covered by the knowledge notes)"),
  ])

E("hyenadna_hg38_config", "configs/experiment/hg38/hg38_hyena_fast.yaml", "explicit_replacement",
  "HyenaDNA configs/experiment/hg38/*.yaml (Hydra experiment config, trainer: accelerator gpu / devices 8)",
  [
      C("fused_dropout_add_ln: True", "custom_cuda_extension", "replace", True,
        "fused_dropout_add_ln: False",
        "needs flash-attn's dropout_layer_norm CUDA extension; the backbone raises ImportError when it is missing"),
      C("fused_fft_conv: True", "custom_cuda_extension", "replace", True, "fused_fft_conv: False",
        "selects the nvcc-built csrc/fftconv kernel, unavailable on Ascend (fftconv_func is None)"),
      C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
        "Lightning's GPU accelerator requires CUDA; needs an NPU accelerator registered with Lightning "
        "(which one is not covered by the knowledge notes)"),
      C("gpu_mem: ${eval:", "device_capability_check", "replace", True, "gpu_mem: 64  # GB per NPU (910B)",
        "shells out to nvidia-smi when the config is resolved (print_config(resolve=True)); nvidia-smi does not "
        "exist on an Ascend host (npu-smi info -t memory is the counterpart)"),
  ])

E("hyenadna_embed", "huggingface.py", "device_branch_or_abstraction",
  "HyenaDNA huggingface.py (HyenaDNAPreTrainedModel.from_pretrained + inference_single embedding example)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("tok_seq = torch.LongTensor(tok_seq).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "tok_seq = torch.LongTensor(tok_seq).unsqueeze(0).to(device)",
        ".cuda() fails on an NPU host; the device is already passed in"),
      C("with torch.inference_mode(), torch.cuda.amp.autocast(enabled=fp16):", "amp", "replace", True,
        "with torch.inference_mode(), torch.autocast(device_type='npu', dtype=torch.float16, enabled=fp16):",
        "cuda autocast is disabled (with a warning) when CUDA is absent, so --fp16 is silently ignored"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently runs the 32k-1M bp model on the CPU on an NPU host"),
      C('if device == "cuda":', "device_type", "replace", False, 'if device != "cpu":',
        "after the device fix this branch is skipped; only a memory printout is lost"),
      C('print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")', "torch_cuda_api",
        "replace", False, 'print(f"peak NPU memory: {torch.npu.max_memory_allocated() / 1e9:.2f} GB")',
        "reports 0 without CUDA; cosmetic"),
  ])

E("hyenadna_conda_env", "environment.yml", "explicit_replacement",
  "HyenaDNA / safari conda environment.yml (pytorch + nvidia channels, cudatoolkit, flash-attn pip dep)",
  [
      C("- nvidia", "torch_cuda_api", "removal", False, None,
        "channel only serves CUDA packages; harmless once pytorch-cuda is gone"),
      C("- cudatoolkit=11.7", "torch_cuda_api", "removal", False, None,
        "CUDA runtime is dead weight next to CANN; whether it even solves on aarch64 Ascend hosts is unconfirmed"),
      C("- cudatoolkit-dev=11.7", "custom_cuda_extension", "removal", False, None,
        "nvcc for building csrc/fftconv and flash-attn kernels; nothing is nvcc-built on Ascend"),
      C("- pytorch=1.13.0", "import_torch_npu", "replace", True, "- pytorch=2.1.0  # CPU build",
        "torch_npu has no 1.13 release (1.11, 2.1+); the torch version must equal the torch_npu wheel's x.y.z"),
      C("- pytorch-cuda=11.7", "torch_cuda_api", "removal", True, None,
        "pulls the CUDA build of pytorch; torch_npu needs the CPU build (x86) / plain PyPI torch (aarch64)"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post10",
        "no torch_npu means no npu device at all (not on conda; goes in the pip section)"),
      C("- triton==2.0.0.dev20221202", "triton_kernel_tuning", "removal", False, None,
        "CUDA-only Triton nightly, nothing on the NPU path imports it; triton-ascend is the Ascend build. "
        "Whether this dev wheel installs on the host arch is unconfirmed"),
      C("- flash-attn==1.0.4", "attention_kernel", "removal", True, None,
        "flash-attn cannot be built/installed on an NPU host (needs CUDA + nvcc); pip fails and aborts env create"),
  ])

E("flashfftconv_hyena", "examples/hyena/hyena_flashfft.py", "kernel_rewrite",
  "FlashFFTConv examples (HyenaDNA-style LM using FlashFFTConv + FlashDepthWiseConv1d)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("from flashfftconv import FlashFFTConv, FlashDepthWiseConv1d", "custom_cuda_extension", "replace", True,
        "FlashFFTConv = FlashDepthWiseConv1d = None  # CUDA-only (monarch_cuda); torch.fft path on NPU",
        "unguarded import of the CUDA-only flashfftconv package: ImportError on an NPU host"),
      C("=if use_flash_depthwise:", "custom_cuda_extension", "add_branch", True,
        "if use_flash_depthwise and FlashDepthWiseConv1d is not None:",
        "FlashDepthWiseConv1d is a CUDA kernel; fall back to the grouped nn.Conv1d branch"),
      C("self.use_flash_depthwise = use_flash_depthwise", "custom_cuda_extension", "replace", True,
        "self.use_flash_depthwise = use_flash_depthwise and FlashDepthWiseConv1d is not None",
        "forward() must take the nn.Conv1d path when the CUDA depthwise kernel is absent"),
      C("self.flashfftconv = FlashFFTConv(2 * l_max, dtype=torch.bfloat16) if use_flashfftconv else None",
        "custom_cuda_extension", "replace", True,
        "self.flashfftconv = FlashFFTConv(2 * l_max, dtype=torch.bfloat16) if (use_flashfftconv and FlashFFTConv is not None) else None",
        "FlashFFTConv is a CUDA kernel; None selects fftconv_ref (torch.fft, NPU kernels exist)"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "benchmark device"),
      C("opt = torch.optim.AdamW(model.parameters(), lr=6e-4, fused=True)", "fused_optimizer", "replace", False,
        "opt = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=6e-4)",
        "fused=True asks for the CUDA fused AdamW kernel; torch_npu ships NpuFusedAdamW. Whether fused=True "
        "errors on npu params is unconfirmed, so perf-only"),
      C('with torch.autocast("cuda", dtype=torch.bfloat16):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=torch.bfloat16):',
        "cuda autocast is disabled without CUDA: the benchmark silently runs fp32"),
      C("torch.cuda.synchronize()  # warmup", "torch_cuda_api", "replace", True, "torch.npu.synchronize()  # warmup",
        "raises without CUDA"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU stream"),
      C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be recorded on an NPU stream"),
      C('f"mem={torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")', "torch_cuda_api", "replace", False,
        'f"mem={torch.npu.max_memory_allocated() / 2**30:.1f} GiB")', "reports 0 without CUDA; cosmetic"),
  ])

# ---------------------------------------------------------------------------------------------
# DNABERT-2
# ---------------------------------------------------------------------------------------------

E("dnabert2_bert_layers", "bert_layers.py", "device_branch_or_abstraction",
  "DNABERT-2 bert_layers.py (MosaicBERT with ALiBi, unpadding, optional Triton flash attention)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "the NPU attention branch calls torch_npu.npu_fusion_attention; the module is loaded through "
        "trust_remote_code, so it has to import torch_npu itself"),
      C("if self.p_dropout or flash_attn_qkvpacked_func is None:", "attention_kernel", "add_branch", True,
        "if qkv.device.type == 'npu':  # attention = torch_npu.npu_fusion_attention(q, k, v, self.num_attention_heads, 'BSND', pse=bias, scale=1 / math.sqrt(self.attention_head_size), keep_prob=1 - self.p_dropout)[0]; existing branches become elif",
        "the Triton kernel is chosen whenever triton imports (it is pinned in requirements.txt) and dropout is 0, "
        "i.e. at inference; its launch fails on npu tensors (is_cuda asserts). Gate on device; an "
        "npu_fusion_attention branch with the ALiBi+mask bias as pse replaces the slow matmul/softmax fallback. "
        "Whether pse accepts this (B, N, S, S) additive bias unchanged is unconfirmed"),
  ])

E("dnabert2_flash_triton", "flash_attn_triton.py", "kernel_rewrite",
  "DNABERT-2 / MosaicBERT flash_attn_triton.py (Tri Dao's Triton FlashAttention with bias)",
  [
      C('=num_warps=8, num_stages=1, pre_hook=init_to_zero("DQ")),', "triton_kernel_tuning", "replace", False,
        'pre_hook=init_to_zero("DQ")),',
        "warp counts / pipeline stages are NVIDIA SM tuning; triton-ascend maps programs to AI cores, "
        "so the autotune configs need retuning (perf; exact triton-ascend semantics unconfirmed)"),
      C('num_warps=8, num_stages=1, pre_hook=init_to_zero("DQ")),  # seq-parallel dq', "triton_kernel_tuning",
        "replace", False, 'pre_hook=init_to_zero("DQ")),  # seq-parallel dq', "same as above"),
      C("assert q.is_cuda and k.is_cuda and v.is_cuda", "torch_cuda_api", "replace", True,
        "assert q.is_npu and k.is_npu and v.is_npu",
        "AssertionError for npu tensors even with a working triton-ascend build"),
      C("=assert bias.is_cuda", "torch_cuda_api", "replace", True, "assert bias.is_npu",
        "AssertionError for npu tensors"),
      C("num_warps = 4 if d <= 64 else 8", "triton_kernel_tuning", "replace", False,
        "num_warps = 1  # triton-ascend: one program per AI core",
        "NVIDIA warp tuning; meaningless/perf-only on triton-ascend (unconfirmed)"),
      C('assert bias.is_cuda, "bias must be on the GPU"', "torch_cuda_api", "replace", True,
        'assert bias.is_npu, "bias must be on the NPU"', "AssertionError for npu tensors in backward"),
  ])

E("dnabert2_finetune", "finetune/train.py", "explicit_replacement",
  "DNABERT-2 finetune/train.py (HF Trainer + optional LoRA on the GUE benchmark)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA; the eval-time OOM workaround is lost on NPU (memory only)"),
      C('model = model.to("cuda").eval()', "tensor_to_device", "replace", True,
        'model = model.to("npu").eval()', "moving to cuda fails on an NPU host"),
      C("batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}", "tensor_to_device", "replace", True,
        "batch = {k: v.npu(non_blocking=True) for k, v in batch.items()}", ".cuda() fails on an NPU host"),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=fp16):', "amp", "replace", True,
        'with torch.autocast("npu", dtype=torch.float16, enabled=fp16):',
        "cuda autocast silently disabled without CUDA (fp32 test-set inference)"),
  ])

E("dnabert2_run_gue", "finetune/scripts/run_dnabert2.sh", "explicit_replacement",
  "DNABERT-2 finetune/scripts/run_dnabert2.sh (GUE benchmark sweep with torchrun)",
  [
      C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
      C("export CUDA_VISIBLE_DEVICES=${gpus}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${gpus}",
        "ignored on Ascend, so the requested device subset is silently lost"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "NCCL-only knob; HCCL ignores it (silent no-op)"),
      C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check",
        "replace", True, "npu-smi info",
        "nvidia-smi is not installed on an Ascend host and `set -e` aborts the script"),
  ])

E("dnabert2_requirements", "requirements.txt", "explicit_replacement",
  "DNABERT-2 requirements.txt (triton nightly pin, transformers 4.29.2, CUDA torch wheel index)",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu117", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "CUDA wheel index; torch_npu needs the CPU torch build (x86) / plain PyPI torch (aarch64)"),
      C("torch==1.13.1+cu117", "import_torch_npu", "replace", True,
        "torch==2.1.0  (and add: torch-npu==2.1.0.post10)",
        "CUDA build of an unsupported torch version; pin a torch that has a torch_npu release and add the "
        "torch-npu wheel with the same x.y.z"),
      C("transformers==4.29.2", "distributed_framework", "replace", True, "transformers==4.32.0",
        "native NPU support in transformers (Trainer/TrainingArguments device selection) starts at 4.32.0; "
        "4.29.2 silently trains on the CPU"),
      C("accelerate==0.19.0", "distributed_framework", "replace", True, "accelerate==0.22.0",
        "accelerate gains NPU support in 0.22.0 (the Trainer's distributed state goes through accelerate)"),
      C("triton==2.0.0.dev20221202", "attention_kernel", "removal", True, None,
        "if triton is importable bert_layers.py picks the CUDA Triton flash-attention kernel; drop it (or use "
        "triton-ascend with a ported kernel)"),
      C("nvidia-ml-py3==7.352.0", "device_capability_check", "removal", False, None,
        "NVML bindings install anywhere but cannot see NPUs; unused on the NPU path"),
  ])

# ---------------------------------------------------------------------------------------------
# Enformer
# ---------------------------------------------------------------------------------------------

E("enformer_modeling", "enformer_pytorch/modeling_enformer.py", "device_branch_or_abstraction",
  "enformer-pytorch modeling_enformer.py (Enformer, AttentionPool, relative positional features)",
  [])

E("enformer_eval_finetune", "scripts/finetune_eval.py", "explicit_replacement",
  "enformer-pytorch finetuning with HeadAdapterWrapper + GenomeIntervalDataset, optional DDP",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('dist.init_process_group(backend="nccl")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl")', "NCCL is not available on Ascend; HCCL is the backend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "cuda device string"),
      C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', enabled=amp):",
        "cuda autocast silently disabled without CUDA"),
      C('state = torch.load(args.ckpt, map_location="cuda:{}".format(local_rank))', "device_type", "replace",
        True, 'state = torch.load(args.ckpt, map_location="npu:{}".format(local_rank))',
        "map_location onto a cuda device fails on an NPU host"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
        "cuda GradScaler disables itself without CUDA; once autocast runs fp16 on NPU the loss would be unscaled"),
      C("seq = seq.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "seq = seq.to(device, non_blocking=True)", ".cuda() fails on an NPU host"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.to(device, non_blocking=True)", ".cuda() fails on an NPU host"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
        "with torch.autocast(device_type='npu', enabled=args.amp):",
        "cuda autocast silently disabled without CUDA"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2**30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2**30", "reports 0 without CUDA; logging only"),
  ])

# ---------------------------------------------------------------------------------------------
# Evo / StripedHyena
# ---------------------------------------------------------------------------------------------

E("evo_generate", "scripts/generate.py", "explicit_replacement",
  "Evo scripts/generate.py (argparse --device cuda:0, batched sampling)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default='cuda:0', help='Device for generation')",
        "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default='npu:0', help='Device for generation')",
        "default device string"),
      C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "removal", False, None,
        "redundant: torch.manual_seed already seeds every device incl. npu; the cuda call is a lazy no-op"),
      C("if args.device.startswith('cuda'):", "device_type", "replace", False,
        "if args.device.startswith(('cuda', 'npu')):",
        "after the default becomes npu:0 the memory check is just skipped"),
      C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(args.device)", "reached with the unchanged cuda default; raises without CUDA"),
      C("total_gb = torch.cuda.get_device_properties(args.device).total_memory / 1e9", "torch_cuda_api",
        "replace", True, "total_gb = torch.npu.get_device_properties(args.device).total_memory / 1e9",
        "raises without CUDA; total_memory is one of the properties the NPU version does return"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("f'peak memory {torch.cuda.max_memory_allocated() / 1e9:.1f} GB')", "torch_cuda_api", "replace", False,
        "f'peak memory {torch.npu.max_memory_allocated() / 1e9:.1f} GB')", "reports 0 without CUDA"),
  ])

E("evo_scoring", "evo/scoring.py", "explicit_replacement",
  "Evo evo/scoring.py (prepare_batch, score_sequences log-likelihood scoring)",
  [
      C("=device: str = 'cuda:0'", "device_type", "replace", True, "device: str = 'npu:0'",
        "default device of prepare_batch, used by positional_entropies without an explicit device"),
      C("device: str = 'cuda:0',", "device_type", "replace", True, "device: str = 'npu:0',",
        "default device of score_sequences"),
      C('device: str = "cuda:0",', "device_type", "replace", True, 'device: str = "npu:0",',
        "default device of score_sequences_rc"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "False on an NPU host, so the cache is never trimmed between batches (memory only)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA"),
      C("with torch.inference_mode(), torch.autocast(device_type='cuda', dtype=torch.bfloat16):", "amp",
        "replace", True,
        "with torch.inference_mode(), torch.autocast(device_type='npu', dtype=torch.bfloat16):",
        "cuda autocast silently disabled without CUDA"),
  ])

E("evo_models", "evo/models.py", "device_branch_or_abstraction",
  "Evo evo/models.py (Evo wrapper, load_checkpoint from HF into StripedHyena, bf16 except poles/residues)",
  [
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():", "raises 'Evo requires a CUDA GPU' on every NPU host"),
      C("return f'cuda:{torch.cuda.current_device()}'", "device_type", "replace", True,
        "return f'npu:{torch.npu.current_device()}'", "cuda device string / CUDA lazy init"),
  ])

E("stripedhyena_model", "stripedhyena/model.py", "explicit_replacement",
  "StripedHyena stripedhyena/model.py (AttentionBlock with flash_attn MHA, ParallelHyenaFilter, StripedHyena)",
  [
      C("from flash_attn.modules.mha import MHA", "attention_kernel", "replace", True,
        "from stripedhyena.npu_mha import NpuMHA as MHA  # SDPA / torch_npu.npu_fusion_attention + RoPE",
        "flash-attn cannot be installed on Ascend; the guarded import leaves MHA undefined and AttentionBlock "
        "raises NameError. Needs an MHA with rotary_emb built on SDPA or npu_fusion_attention"),
      C("from flashfftconv import FlashFFTConv", "custom_cuda_extension", "replace", False,
        "FlashFFTConv = None  # CUDA-only; keep use_flashfft False on NPU",
        "only reached when use_flashfft is truthy (note the string default \"False\" is truthy); the shipped "
        "Evo configs set use_flashfft: False"),
      C('self.proj_norm_fn = torch.compile(self.proj_norm, fullgraph=True, dynamic=False, mode="reduce-overhead")',
        "compile_mode", "replace", False,
        'self.proj_norm_fn = torch.compile(self.proj_norm, fullgraph=True, dynamic=False, backend="npugraphs")',
        "reduce-overhead means CUDA graphs; on NPU the counterpart is backend='npugraphs'. Only with "
        "compile: True (off in the shipped configs); behaviour of reduce-overhead on npu unconfirmed"),
      C('self.res_mlp_norm, fullgraph=True, dynamic=False, mode="reduce-overhead"', "compile_mode", "replace",
        False, 'self.res_mlp_norm, fullgraph=True, dynamic=False, backend="npugraphs"', "same as above"),
      C("torch.view_as_complex(block.filter.residues.to(torch.float16)),", "unsupported_op_workaround",
        "replace", True, "torch.view_as_complex(block.filter.residues.to(torch.float32)),",
        "Ascend's 2.7.1 support list: view_as_complex input fp32/fp64 only; the fp16 (complex32) path is not "
        "supported on NPU"),
      C("torch.view_as_complex(block.filter.poles.to(torch.float16)),", "unsupported_op_workaround", "replace",
        True, "torch.view_as_complex(block.filter.poles.to(torch.float32)),", "same as above"),
  ])

E("evo_inference_config", "evo/configs/evo-1-131k-base_inference.yml", "explicit_replacement",
  "Evo / StripedHyena inference YAML (use_flash_attn, use_flash_rmsnorm, use_flashfft switches)",
  [
      C("use_flash_attn: True", "attention_kernel", "replace", False, "use_flash_attn: False",
        "only meaningful together with the MHA swap in model.py; if the NPU MHA maps the flag onto "
        "npu_fusion_attention it can stay True"),
      C("use_flash_rmsnorm: True", "custom_cuda_extension", "replace", True, "use_flash_rmsnorm: False",
        "RMSNorm then calls flash_attn.ops.rms_norm, whose import failed -> NameError; plain RMSNorm (or "
        "torch_npu.npu_rms_norm in layers.py) on NPU"),
  ])

E("evo_dockerfile", "Dockerfile", "explicit_replacement",
  "Evo / StripedHyena Dockerfile (NGC PyTorch base, flash-attn built from source)",
  [
      C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "NGC CUDA PyTorch image; an Ascend image needs CANN and a CPU torch + torch_npu"),
      C('ENV TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None,
        "only used by nvcc builds; harmless"),
      C("pip install --no-cache-dir flash-attn==2.5.6 --no-build-isolation", "attention_kernel", "removal", True,
        None, "flash-attn needs CUDA/nvcc to build; the docker build fails"),
      C("pip install --no-cache-dir /tmp/flash-attention/csrc/layer_norm && \\", "custom_cuda_extension",
        "removal", True, None, "nvcc-built dropout_layer_norm extension; the docker build fails"),
      C("=RUN pip install --no-cache-dir \\", "import_torch_npu", "npu_only_addition", True,
        "torch==2.1.0 torch-npu==2.1.0.post10 \\",
        "the image has to provide torch_npu (matching the torch x.y.z)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
        "NVIDIA container runtime variable; devices are mounted by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES)"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA runtime only"),
      C("ENV PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", "replace", False,
        "ENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
        "the NPU caching allocator reads PYTORCH_NPU_ALLOC_CONF; the CUDA variable is ignored (memory only)"),
      C('CMD python -c "import torch; assert torch.cuda.is_available()" || exit 1', "torch_cuda_api", "replace",
        True, 'CMD python -c "import torch, torch_npu; assert torch.npu.is_available()" || exit 1',
        "the healthcheck always fails on an NPU host, so the container is reported unhealthy"),
      C('CMD ["python", "scripts/generate.py", "--model-name", "evo-1-8k-base", "--device", "cuda:0"]',
        "device_type", "replace", True,
        'CMD ["python", "scripts/generate.py", "--model-name", "evo-1-8k-base", "--device", "npu:0"]',
        "default command targets cuda:0"),
  ])

# ---------------------------------------------------------------------------------------------
# scGPT / scvi-tools
# ---------------------------------------------------------------------------------------------

E("scgpt_model", "scgpt/model/model.py", "explicit_replacement",
  "scGPT scgpt/model/model.py (TransformerModel, FlashTransformerEncoderLayer with flash_attn FlashMHA)",
  [
      C("from flash_attn.flash_attention import FlashMHA", "attention_kernel", "replace", False,
        "from scgpt.model.npu_mha import NpuFlashMHA as FlashMHA  # torch_npu.npu_fusion_attention",
        "guarded: without flash-attn the model warns and falls back to nn.TransformerEncoderLayer, which runs on "
        "NPU; an npu_fusion_attention-backed FlashMHA only restores speed"),
  ])

E("scgpt_finetune_integration", "examples/finetune_integration.py", "device_branch_or_abstraction",
  "scGPT Tutorial_Integration (batch-correction fine-tuning, wandb, torch.cuda.amp)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
        "silently fine-tunes on the CPU on an NPU host"),
      C("model.load_state_dict(torch.load(model_file))", "device_type", "replace", True,
        "model.load_state_dict(torch.load(model_file, map_location=device))",
        "no map_location: storages saved from CUDA deserialize to cuda and torch.load raises without CUDA "
        "(that the released scGPT checkpoints hold CUDA storages is from memory, not the knowledge notes)"),
      C("pretrained_dict = torch.load(model_file)", "device_type", "replace", True,
        "pretrained_dict = torch.load(model_file, map_location=device)", "same as above (fallback path)"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=config.amp)", "amp", "replace", True,
        "scaler = torch.npu.amp.GradScaler(enabled=config.amp)",
        "cuda GradScaler disables itself without CUDA; fp16 training on NPU would run without loss scaling"),
      C("with torch.cuda.amp.autocast(enabled=config.amp):  # fp16 forward + losses", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=config.amp):  # fp16 forward + losses",
        "cuda autocast silently disabled without CUDA"),
      C("=with torch.cuda.amp.autocast(enabled=config.amp):", "amp", "replace", True,
        "with torch.npu.amp.autocast(enabled=config.amp):", "same, evaluation loop"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "end-of-script cache release; no-op without CUDA"),
  ])

E("scgpt_cell_emb", "scgpt/tasks/cell_emb.py", "device_branch_or_abstraction",
  "scGPT scgpt/tasks/cell_emb.py (embed_data / get_batch_cell_embeddings)",
  [
      C("with torch.no_grad(), torch.cuda.amp.autocast(enabled=True):", "amp", "replace", True,
        "with torch.no_grad(), torch.autocast(device_type=device.type, enabled=True):",
        "cuda autocast silently disabled without CUDA (fp32 embedding)"),
      C('device: Union[str, torch.device] = "cuda",', "device_type", "replace", True,
        'device: Union[str, torch.device] = "npu",',
        "with the cuda default the check below silently moves embedding to the CPU on an NPU host"),
      C('if device == "cuda" and not torch.cuda.is_available():', "torch_cuda_api", "replace", False,
        'if device == "npu" and not torch.npu.is_available():',
        "after the default changes this CPU fallback guard should test npu availability; only a warning path"),
  ])

E("scvi_atlas_integration", "scripts/integrate_atlas.py", "device_branch_or_abstraction",
  "scvi-tools atlas integration script (SCVI/SCANVI train with accelerator='gpu', rapids-singlecell fallback)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("gpu = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "gpu = torch.npu.is_available()",
        "False on an NPU host, so scvi-tools silently trains on the CPU"),
      C('return {"accelerator": "gpu" if gpu else "cpu", "device": "auto"}', "device_type", "replace", True,
        'return {"accelerator": "npu" if gpu else "cpu", "device": "auto"}',
        "Lightning's 'gpu' accelerator is CUDA-only; needs an NPU accelerator known to Lightning/scvi-tools "
        "(not covered by the knowledge notes)"),
      C('return {"accelerator": "gpu" if gpu else "cpu", "devices": 1}', "device_type", "replace", True,
        'return {"accelerator": "npu" if gpu else "cpu", "devices": 1}', "same as above (training)"),
  ])

E("scgpt_pyproject", "pyproject.toml", "explicit_replacement",
  "scGPT pyproject.toml (poetry, optional flash-attn<1.0.5 extra, CUDA torch source for dev)",
  [
      C('torch = ">=1.13.0"', "import_torch_npu", "replace", True,
        'torch = "2.1.0"  (and add: torch-npu = "2.1.0.post10")',
        "open range resolves to a torch with no matching torch_npu, and torch-npu itself is missing"),
      C('flash-attn = {version = "<1.0.5", optional = true}', "attention_kernel", "removal", False, None,
        "optional extra; cannot be built on Ascend, but the base install does not need it"),
      C('flash = ["flash-attn"]', "attention_kernel", "removal", False, None,
        "extra referencing the removed flash-attn dependency"),
      C('torch = {version = "1.13.0", source = "torch-cu117"}', "torch_cuda_api", "replace", True,
        'torch = {version = "2.1.0", source = "torch-cpu"}',
        "dev group (installed by default) pins the CUDA 11.7 build from the cu117 index"),
      C('url = "https://download.pytorch.org/whl/cu117"', "torch_cuda_api", "replace", True,
        'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index"),
  ])

# ---------------------------------------------------------------------------------------------
# Geneformer
# ---------------------------------------------------------------------------------------------

E("geneformer_cell_classifier", "examples/cell_classification.py", "explicit_replacement",
  "Geneformer examples/cell_classification.ipynb exported (per-organ fine-tuning, HF Trainer, ray tune)",
  [
      C('os.environ["CUDA_VISIBLE_DEVICES"] = ",".join([str(s) for s in GPU_NUMBER])', "env_var", "replace",
        True, 'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ",".join([str(s) for s in GPU_NUMBER])',
        "ignored on Ascend: the device pinning is silently lost"),
      C('os.environ["NCCL_DEBUG"] = "INFO"', "env_var", "removal", False, None,
        "NCCL-only debug switch; no-op with HCCL"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C(').to("cuda")', "tensor_to_device", "replace", True, ').to("npu")',
        "model_init moves the classifier to cuda: fails on an NPU host"),
      C('model.to("cuda")', "tensor_to_device", "replace", True, 'model.to("npu")',
        "embedding extraction moves the model to cuda"),
      C("input_data_minibatch = torch.tensor(input_ids).cuda()", "tensor_to_device", "replace", True,
        "input_data_minibatch = torch.tensor(input_ids).npu()", ".cuda() fails on an NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op without CUDA (memory only)"),
      C('resources_per_trial={"cpu": 8, "gpu": 1},', "device_type", "replace", False,
        'resources_per_trial={"cpu": 8, "NPU": 1},',
        "ray schedules trials on detected GPUs; NPUs are a separate ray resource. Only with GENEFORMER_HPO=1; "
        "resource name unconfirmed in the knowledge notes"),
  ])

E("geneformer_pretrain", "examples/pretrain_geneformer_w_deepspeed.py", "explicit_replacement",
  "Geneformer examples/pretrain_geneformer_w_deepspeed.py (GeneformerPretrainer, DeepSpeed ZeRO-2)",
  [
      C('os.environ["NCCL_DEBUG"] = "INFO"', "env_var", "removal", False, None,
        "NCCL-only debug switch; no-op with HCCL"),
      C('os.environ["OMPI_MCA_opal_cuda_support"] = "true"', "env_var", "removal", False, None,
        "CUDA-aware OpenMPI switch; meaningless on Ascend"),
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed_val)", "torch_cuda_api", "removal", False, None,
        "redundant: torch.manual_seed already seeds the npu generators"),
      C("gpus_per_node = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "gpus_per_node = torch.npu.device_count()",
        "0 on an NPU host -> num_gpus 0 -> ZeroDivisionError in save_steps"),
      C('"ddp_backend": "nccl",', "dist_backend", "replace", True, '"ddp_backend": "hccl",',
        "NCCL is not available on Ascend; the distributed init uses this backend"),
      C('print(f"peak memory per GPU: {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB")', "torch_cuda_api",
        "replace", False, 'print(f"peak memory per NPU: {torch.npu.max_memory_reserved() / 2**30:.1f} GiB")',
        "reports 0 without CUDA"),
  ])

E("geneformer_launch", "examples/launch_pretrain_multinode.sh", "explicit_replacement",
  "Geneformer multi-node SLURM + deepspeed launcher script",
  [
      C("#SBATCH --gres=gpu:4", "device_type", "replace", True, "#SBATCH --gres=npu:4",
        "the job requests GPU GRES that an Ascend partition does not have; the NPU GRES name is site-specific"),
      C("module load cuda/11.7 cudnn/8.5 nccl/2.14", "env_var", "replace", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CUDA modules do not exist on the NPU nodes; CANN's set_env.sh must be sourced or import torch_npu fails"),
      C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3", "ignored on Ascend"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; no-op"),
      C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only; no-op"),
      C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", True, "export HCCL_SOCKET_IFNAME=ib0",
        "HCCL ignores the NCCL variable and picks the host NIC by its own order; a wrong NIC makes multi-node "
        "root-info link setup fail"),
      C("export NCCL_IB_HCA=mlx5_0", "env_var", "removal", False, None,
        "NCCL-only; HCCL's parameter plane uses the NPU's own RoCE ports"),
      C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu reads the HCCL_ variant (documented default 1), so this is a no-op rename"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader",
        "device_capability_check", "replace", False, "npu-smi info",
        "inventory logging only; the script has no set -e, so a missing nvidia-smi just prints an error"),
  ])
