# Labels for probe150 (autoregressive / masked image & multimodal generation, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See ../README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("torch_npu autoloads as a device backend since 2.5.1, but the explicit import is still recommended "
               "(and needed on older pairs); not strictly required on recent versions")
TF32_NOTE = ("torch.backends.cuda.matmul.allow_tf32 is a CUDA matmul flag; Ascend lists it as supported (fp32 only) "
             "but its effect on NPU matmuls is unconfirmed; performance/precision knob, not a failure")
SEED_NOTE = ("redundant next to torch.manual_seed (which also seeds the privateuse1 device); on an NPU host the CUDA "
             "call is a lazy no-op, so the NPU generator is seeded anyway (unconfirmed in knowledge)")
RO_NOTE = ("mode='reduce-overhead' means Inductor + CUDA graphs; on NPU the graph capture path is npugraphs / "
           "torch_npu graph mode, behaviour of reduce-overhead there is unconfirmed; performance only")
PIN_NOTE = ("pin_memory=True pins for CUDA; on NPU it is a performance knob (pin_memory_device='npu'); "
            "unconfirmed whether the default already pins for NPU")

# ---------------------------------------------------------------- LlamaGen
E("llamagen_gpt", "autoregressive/models/gpt.py", "device_branch_or_abstraction",
  "LlamaGen autoregressive/models/gpt.py (Llama-style GPT, 2D RoPE, KV cache, fused AdamW)", [])

E("llamagen_generate", "autoregressive/models/generate.py", "device_branch_or_abstraction",
  "LlamaGen autoregressive/models/generate.py (gpt-fast style prefill/decode with CFG)", [
    C("torch.backends.cuda.sdp_kernel(enable_flash=False", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA chooses its own kernel",
      "torch.backends.cuda.sdp_kernel is marked unsupported for NPU (TSV / mstt list); as a context manager it only "
      "toggles CUDA SDPA backend flags, so it does not fail; removing it is cleanup/perf"),
])

E("llamagen_sample_c2i", "autoregressive/sample/sample_c2i.py", "device_branch_or_abstraction",
  "LlamaGen autoregressive/sample/sample_c2i.py (single-GPU class-conditional sampling, optional torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", TF32_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "torch.cuda.is_available() is False on an NPU host, so the whole sampler silently runs on CPU"),
    C('mode="reduce-overhead",', "compile_mode", "replace", False,
      'mode="default",  # or backend="npugraphs"', RO_NOTE),
])

E("llamagen_sample_ddp", "autoregressive/sample/sample_c2i_ddp.py", "explicit_replacement",
  "LlamaGen autoregressive/sample/sample_c2i_ddp.py (DDP FID sampling, 50k images)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", TF32_NOTE),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Sampling with DDP requires at least one NPU."',
      "assertion fails on an NPU host"),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True,
      'dist.init_process_group("hccl")', "NCCL backend does not exist on Ascend; HCCL is required"),
    C("device = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      'device = torch.device("npu", rank % torch.npu.device_count())',
      "device_count() is 0 on an NPU host (ZeroDivisionError) and a bare int device means cuda:<i> in .to()/device="),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "CUDA runtime call fails without CUDA"),
    C('mode="reduce-overhead",', "compile_mode", "replace", False,
      'mode="default",  # or backend="npugraphs"', RO_NOTE),
])

E("llamagen_dist_utils", "utils/distributed.py", "explicit_replacement",
  "LlamaGen utils/distributed.py (DeiT/MAE-style init_distributed_mode with SLURM branch)", [
    C("os.environ['LOCAL_SIZE'] = str(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "os.environ['LOCAL_SIZE'] = str(torch.npu.device_count())",
      "exports 0 on an NPU host; silently wrong local size"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()", "0 on NPU host -> proc_id % num_gpus raises ZeroDivisionError"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "CUDA runtime call fails on NPU host"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True,
      "args.dist_backend = 'hccl'", "NCCL backend unavailable on Ascend"),
])

E("llamagen_train_c2i", "autoregressive/train/train_c2i.py", "explicit_replacement",
  "LlamaGen autoregressive/train/train_c2i.py (DDP class-conditional GPT training, AMP, torch.compile)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", TF32_NOTE),
    C("use_fused = fused_available and torch.cuda.is_available()", "fused_optimizer", "replace", False,
      "use_fused = fused_available and torch.npu.is_available()",
      "gate turns the fused AdamW off on NPU although _fused_adamw_ has an NPU kernel; perf only"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Training currently requires at least one NPU."',
      "assertion fails on an NPU host"),
    C("device = rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      'device = torch.device("npu", rank % torch.npu.device_count())',
      "0 devices -> ZeroDivisionError; a bare int device resolves to CUDA in .to(device)"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "CUDA runtime call fails on NPU host"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",', PIN_NOTE),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=(args.mixed_precision =='fp16'))",
      "with --mixed-precision fp16 the CUDA scaler disables itself without CUDA -> unscaled fp16 training"),
    C("with torch.cuda.amp.autocast(dtype=ptdtype):", "amp", "replace", True,
      'with torch.autocast("npu", dtype=ptdtype):',
      "CUDA autocast is inactive on NPU tensors: the model silently trains in fp32"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "CUDA synchronize raises without a CUDA device"),
])

E("llamagen_train_fsdp", "autoregressive/train/train_t2i_fsdp.py", "explicit_replacement",
  "LlamaGen autoregressive/train/train_t2i.py FSDP variant (T5 text encoder, MixedPrecision, HSDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.synchronize()  # make sure every rank", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # make sure every rank finished wrapping before building the optimizer",
      "CUDA synchronize raises without CUDA"),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Training currently requires at least one NPU."',
      "assertion fails on NPU host"),
    C('dist.init_process_group("nccl")', "dist_backend", "replace", True,
      'dist.init_process_group("hccl")', "NCCL unavailable; HCCL required"),
    C("device = global_rank % torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      'device = torch.device("npu", int(os.environ["LOCAL_RANK"]))',
      "0 devices on NPU host; the int is later FSDP(device_id=...) and .to(device), both interpreted as CUDA"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(device)", "CUDA runtime call fails"),
    C('device=f"cuda:{device}",', "device_type", "replace", True,
      "device=device,", "T5 encoder placed on a cuda:N device string"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",', PIN_NOTE),
    C('"bf16": torch.cuda.amp.autocast(dtype=torch.bfloat16),', "amp", "replace", True,
      '"bf16": torch.autocast("npu", dtype=torch.bfloat16),',
      "CUDA autocast does nothing for NPU tensors (silently fp32 activations)"),
    C('"fp16": torch.cuda.amp.autocast(dtype=torch.float16),', "amp", "replace", True,
      '"fp16": torch.autocast("npu", dtype=torch.float16),', "same as the bf16 entry"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()", "CUDA synchronize raises without CUDA"),
    C("mem_gb = torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "returns 0 on an NPU host (no CUDA context); only a logged value"),
])

E("llamagen_vq_model", "tokenizer/tokenizer_image/vq_model.py", "explicit_replacement",
  "LlamaGen tokenizer/tokenizer_image/vq_model.py (VQGAN encoder/decoder, l2-normalised codebook)", [
    C("model = VQ_16(codebook_size=16384, codebook_embed_dim=8).cuda().eval()", "tensor_to_device", "replace", True,
      "model = VQ_16(codebook_size=16384, codebook_embed_dim=8).npu().eval()", ".cuda() fails on NPU host"),
    C("x = torch.randn(2, 3, 256, 256).cuda()", "tensor_to_device", "replace", True,
      "x = torch.randn(2, 3, 256, 256).npu()", ".cuda() fails on NPU host"),
    C("print(rec.shape, torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      'print(rec.shape, torch.npu.max_memory_allocated() / 2**20, "MiB")',
      "prints 0 on NPU host; log only"),
])

E("llamagen_train_sh", "scripts/autoregressive/train_t2i_stage1.sh", "explicit_replacement",
  "LlamaGen scripts/autoregressive/train_t2i_*.sh torchrun launcher", [
    C("=set -x", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths, ASCEND_* vars) must be sourced before torch_npu can load"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False,
      "export ASCEND_GLOBAL_LOG_LEVEL=2", "NCCL_* is ignored by HCCL; logging only (HCCL log mapping unconfirmed)"),
    C("export NCCL_IB_DISABLE=0", "env_var", "removal", False, None, "NCCL-only tuning, ignored on Ascend"),
    C("export NCCL_IB_GID_INDEX=3", "env_var", "removal", False, None, "NCCL-only RoCE setting, ignored on Ascend"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False,
      "export HCCL_SOCKET_IFNAME=eth0",
      "HCCL picks the host NIC via HCCL_SOCKET_IFNAME/HCCL_IF_IP; needed only on multi-NIC multi-node hosts"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on NPU; harmless here because it lists all 8 devices and torchrun uses LOCAL_RANK"),
])

E("llamagen_requirements", "requirements.txt", "explicit_replacement",
  "LlamaGen requirements.txt with CUDA wheels, xformers and flash-attn pins", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "removal", True, None,
      "CUDA 11.8 wheel index; NPU hosts use CPU/aarch64 torch from PyPI or the cpu index"),
    C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu118 build cannot pair with torch_npu, which pins an exact torch version (2.1.0 for 2.1.0.postN)"),
    C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
      "CUDA torchvision build; must match the CPU torch that torch_npu pairs with"),
    C("=ftfy", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post8",
      "torch_npu wheel matching torch 2.1.0 (needs a matching CANN)"),
    C("xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and its wheels drag in CUDA torch"),
    C("flash-attn==2.5.8", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built/installed without CUDA"),
])

# ---------------------------------------------------------------- Janus / Janus-Pro
E("janus_gen_infer", "generation_inference.py", "explicit_replacement",
  "Janus / Janus-Pro generation_inference.py (text-to-image with CFG over a VQ tokenizer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("vl_gpt = vl_gpt.to(torch.bfloat16).cuda().eval()", "tensor_to_device", "replace", True,
      "vl_gpt = vl_gpt.to(torch.bfloat16).npu().eval()", ".cuda() fails on NPU host"),
    C("tokens = torch.zeros((parallel_size*2, len(input_ids)), dtype=torch.int).cuda()", "tensor_to_device",
      "replace", True, "tokens = torch.zeros((parallel_size*2, len(input_ids)), dtype=torch.int).npu()",
      ".cuda() fails on NPU host"),
    C("generated_tokens = torch.zeros((parallel_size, image_token_num_per_image), dtype=torch.int).cuda()",
      "tensor_to_device", "replace", True,
      "generated_tokens = torch.zeros((parallel_size, image_token_num_per_image), dtype=torch.int).npu()",
      ".cuda() fails on NPU host"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
])

E("janus_app", "demo/app_januspro.py", "device_branch_or_abstraction",
  "Janus-Pro demo/app_januspro.py (gradio demo: understanding + generation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "device_type", "replace", True,
      "if torch.npu.is_available():",
      "False on NPU host: model silently stays on CPU in fp16"),
    C("vl_gpt = vl_gpt.to(torch.bfloat16).cuda()", "tensor_to_device", "replace", True,
      "vl_gpt = vl_gpt.to(torch.bfloat16).npu()", ".cuda() fails once the branch is taken"),
    C("cuda_device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "cuda_device = 'npu' if torch.npu.is_available() else 'cpu'",
      "inputs silently go to CPU (and mismatch an NPU model)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op on NPU host; NPU cache is simply not released (memory headroom only)"),
    C("torch.cuda.empty_cache()  # drop the KV cache", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # drop the KV cache of the previous request", "silent no-op on NPU host"),
    C("torch.cuda.empty_cache()  # t2i path", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # t2i path", "silent no-op on NPU host"),
    C("=torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed(seed)  # reproducible sampling", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(seed)  # reproducible sampling", SEED_NOTE),
    C(").to(cuda_device, dtype=torch.bfloat16 if torch.cuda.is_available() else torch.float16)", "device_type",
      "replace", True, ").to(cuda_device, dtype=torch.bfloat16 if torch.npu.is_available() else torch.float16)",
      "after the device fix the model is bf16 but inputs would be fp16 -> dtype mismatch"),
])

E("janus_pyproject", "pyproject.toml", "explicit_replacement",
  "Janus pyproject.toml (dependencies and extras)", [
    C('"torch>=2.0.1",', "import_torch_npu", "npu_only_addition", True, '"torch-npu>=2.1.0",',
      "torch_npu must be installed next to torch (exact version pairing)"),
    C('"flash-attn>=2.5.6",', "attention_kernel", "removal", True, None,
      "flash-attn does not build without CUDA; the train extra fails to install"),
    C('"nvidia-ml-py>=12.535.133",', "torch_cuda_api", "removal", False, None,
      "pure-Python NVML bindings install fine but are useless on Ascend (npu-smi / torch.npu.utilization)"),
])

# ---------------------------------------------------------------- Show-o
E("showo_train", "training/train.py", "device_branch_or_abstraction",
  "Show-o training/train.py (accelerate + wandb, MAGVIT-v2 tokens, mask schedule)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", TF32_NOTE),
    C("optimizer = apex.optimizers.FusedAdam(", "fused_optimizer", "replace", True,
      "optimizer = torch.optim.AdamW(  # fused=True; apex FusedAdam is a CUDA kernel",
      "with optimizer.name=fused_adamw this needs NVIDIA apex's CUDA FusedAdam, which Ascend's apex patch does "
      "not provide (it has NpuFusedAdam/NpuFusedAdamW instead)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU host"),
])

E("showo_attn", "models/phi_attention.py", "kernel_rewrite",
  "Show-o models/phi attention (HF Phi eager / FlashAttention-2 / SDPA classes)", [
    C("from flash_attn import flash_attn_func, flash_attn_varlen_func", "attention_kernel", "replace", False,
      "import torch_npu",
      "guarded by is_flash_attn_2_available(), so never imported on NPU; porting the FA2 class to "
      "npu_fusion_attention is a performance choice (SDPA works)"),
    C("target_dtype = torch.get_autocast_gpu_dtype()", "amp", "replace", False,
      'target_dtype = torch.get_autocast_dtype("npu")',
      "reads the CUDA autocast dtype, not NPU's; only reached in the flash path"),
    C("attn_output_unpad = flash_attn_varlen_func(", "attention_kernel", "replace", False,
      "attn_output_unpad = torch_npu.npu_fusion_attention(  # input_layout='TND', actual_seq_qlen=cu_seqlens_q[1:]",
      "varlen FA2 -> npu_fusion_attention TND layout with cumulative lengths; perf port"),
    C("attn_output = flash_attn_func(", "attention_kernel", "replace", False,
      "attn_output = torch_npu.npu_fusion_attention(query_states, key_states, value_states, self.num_heads, 'BSND', "
      "keep_prob=1 - dropout, scale=softmax_scale or self.head_dim ** -0.5, sparse_mode=3)[0]",
      "dense FA2 -> npu_fusion_attention BSND; perf port"),
])

E("showo_config", "configs/showo_demo_512x512.yaml", "explicit_replacement",
  "Show-o configs/showo_demo_512x512.yaml (OmegaConf training/inference config)", [
    C('attn_implementation: "flash_attention_2"', "attention_kernel", "replace", True,
      'attn_implementation: "sdpa"',
      "transformers refuses flash_attention_2 when flash_attn is not installed (it cannot be on NPU)"),
    C('device: "cuda"', "device_type", "replace", True, 'device: "npu"',
      "inference device string consumed by the demo scripts"),
])

E("showo_infer", "inference_t2i.py", "explicit_replacement",
  "Show-o inference_t2i.py (t2i and inpainting with MaskGIT-style decoding, wandb logging)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "silently runs on CPU on NPU host"),
    C("inpainting_mask = inpainting_mask.reshape(1, -1).cuda()", "tensor_to_device", "replace", True,
      "inpainting_mask = inpainting_mask.reshape(1, -1).to(device)", ".cuda() fails on NPU host"),
    C('torch.autocast("cuda", dtype=torch.bfloat16)', "amp", "replace", True,
      'with torch.no_grad(), torch.autocast("npu", dtype=torch.bfloat16):',
      "CUDA autocast does not apply to NPU tensors: generation silently runs in fp32"),
])

# ---------------------------------------------------------------- VAR
E("var_dist", "dist.py", "explicit_replacement",
  "VAR dist.py (global rank/device helpers, allreduce/allgather/broadcast wrappers)", [
    C("__rank, __local_rank, __world_size, __device = 0, 0, 1, 'cuda' if torch.cuda.is_available() else 'cpu'",
      "device_type", "replace", True,
      "__rank, __local_rank, __world_size, __device = 0, 0, 1, 'npu' if torch.npu.is_available() else 'cpu'",
      "default device silently becomes cpu on NPU host"),
    C("def initialize(fork=False, backend='nccl'", "dist_backend", "replace", True,
      "def initialize(fork=False, backend='hccl', gpu_id_if_not_distibuted=0, timeout=30):",
      "default backend nccl does not exist on Ascend"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "returns early and trains on CPU without distributed init"),
    C("torch.cuda.set_device(gpu_id_if_not_distibuted)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(gpu_id_if_not_distibuted)", "CUDA runtime call fails"),
    C("__device = torch.empty(1).cuda().device  # non-distributed", "tensor_to_device", "replace", True,
      "__device = torch.empty(1).npu().device  # non-distributed: single NPU", ".cuda() fails"),
    C("global_rank, num_gpus = int(os.environ['RANK']), torch.cuda.device_count()", "torch_cuda_api", "replace",
      True, "global_rank, num_gpus = int(os.environ['RANK']), torch.npu.device_count()",
      "0 devices -> modulo by zero"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)", "CUDA runtime call fails"),
    C("__device = torch.empty(1).cuda().device  # resolves", "tensor_to_device", "replace", True,
      "__device = torch.empty(1).npu().device  # resolves to npu:<local_rank>", ".cuda() fails"),
    C("torch.cuda.set_device(int(gpu_id))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(gpu_id))", "CUDA runtime call fails"),
    C("=__device = torch.empty(1).cuda().device", "tensor_to_device", "replace", True,
      "__device = torch.empty(1).npu().device", ".cuda() fails"),
    C("if not t.is_cuda:  # nccl only", "device_type", "replace", False,
      "if not t.is_npu:  # hccl only reduces NPU tensors",
      "is_cuda is False for NPU tensors, so (once .cuda() is ported) NPU tensors take a needless copy round-trip"),
    C("cu = t.detach().cuda()  # reduce on GPU", "tensor_to_device", "replace", True,
      "cu = t.detach().npu()  # reduce on NPU, copy back below", ".cuda() fails"),
    C("if not t.is_cuda: t = t.cuda()", "tensor_to_device", "replace", True,
      "if not t.is_npu: t = t.npu()", ".cuda() fails (is_cuda is False for every NPU tensor)"),
    C("=if not t.is_cuda:", "device_type", "replace", False, "if not t.is_npu:",
      "needless .npu() on already-NPU tensors after porting; no failure"),
    C("=t = t.cuda()", "tensor_to_device", "replace", True, "t = t.npu()", ".cuda() fails"),
    C("if not t.is_cuda:  # same as allreduce", "device_type", "replace", False,
      "if not t.is_npu:  # same as allreduce: hccl needs an npu tensor", "redundant copy only"),
    C("cu = t.detach().cuda()  # broadcast on GPU", "tensor_to_device", "replace", True,
      "cu = t.detach().npu()  # broadcast on NPU", ".cuda() fails"),
])

E("var_basic", "models/basic_var.py", "kernel_rewrite",
  "VAR models/basic_var.py (AdaLN self-attention with optional flash-attn / xformers / fused MLP)", [
    C("try: from xformers.ops import memory_efficient_attention", "attention_kernel", "removal", False, None,
      "try/except ImportError: xformers is simply absent on NPU and the SDPA path is used"),
    C("try: from flash_attn import flash_attn_func", "attention_kernel", "replace", False,
      "import torch_npu",
      "guarded import; falling back to SDPA is correct, npu_fusion_attention is the faster port"),
    C("oup = flash_attn_func(", "attention_kernel", "replace", False,
      "oup = torch_npu.npu_fusion_attention(q.to(dtype=main_type), k.to(dtype=main_type), v.to(dtype=main_type), "
      "self.num_heads, 'BSND', keep_prob=1 - dropout_p, scale=self.scale)[0].view(B, L, C)",
      "only reached when flash_attn imported; perf port to the NPU fused attention"),
])

E("var_quant", "models/quant.py", "explicit_replacement",
  "VAR models/quant.py (multi-scale residual VectorQuantizer2 with EMA code usage)", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      'with torch.autocast("npu", enabled=False):',
      "only disables CUDA autocast: under NPU autocast the codebook distances/argmin silently run in half precision"),
])

E("var_amp", "utils/amp_sc.py", "explicit_replacement",
  "VAR utils/amp_sc.py (AmpOptimizer with autocast + GradScaler)", [
    C("self.amp_ctx = torch.autocast('cuda'", "amp", "replace", True,
      "self.amp_ctx = torch.autocast('npu', enabled=True, dtype=torch.float16 if self.using_fp16_rather_bf16 else "
      "torch.bfloat16, cache_enabled=True)",
      "CUDA autocast does not cover NPU ops; training silently runs in fp32"),
    C("self.scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(init_scale=2. ** 11, growth_interval=1000) if "
      "self.using_fp16_rather_bf16 else None",
      "fp16 path: CUDA GradScaler disables itself without CUDA -> no loss scaling"),
])

E("var_demo", "demo_sample.py", "device_branch_or_abstraction",
  "VAR demo_sample.ipynb exported as a script (class-conditional sampling with CFG)", [
    C("=import torch, torchvision", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently samples on CPU"),
    C("torch.backends.cuda.matmul.allow_tf32 = bool(tf32)", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = bool(tf32)", TF32_NOTE),
    C("with torch.autocast('cuda', enabled=True, dtype=torch.float16, cache_enabled=True):", "amp", "replace", True,
      "with torch.autocast('npu', enabled=True, dtype=torch.float16, cache_enabled=True):",
      "CUDA autocast does not apply to NPU tensors (silently fp32)"),
])

E("var_sh", "scripts/train_var_d16.sh", "explicit_replacement",
  "VAR multi-node torchrun launcher", [
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA stream-connection knob; no meaning on Ascend"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1", "torch_npu watchdog counterpart (default already 1 per MindCluster doc)"),
    C("export NCCL_IB_HCA=mlx5", "env_var", "removal", False, None, "NCCL-only InfiniBand selection"),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "logging only; exact HCCL log mapping unconfirmed"),
    C("=export PYTHONUNBUFFERED=1", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment must be sourced"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", False, "npu-smi info",
      "command not found on Ascend hosts; the script has no set -e so it only prints an error"),
])

# ---------------------------------------------------------------- MaskGIT-PyTorch
E("maskgit_vit", "Trainer/vit.py", "explicit_replacement",
  "MaskGIT-PyTorch Trainer/vit.py (masked bidirectional transformer trainer + sampler)", [
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()                                # Init Scaler for multi NPUs",
      "autocast() defaults to fp16 here, so a disabled CUDA scaler means unscaled fp16 gradients"),
    C("with torch.cuda.amp.autocast():                             #", "amp", "replace", True,
      "with torch.autocast('npu'):                             # half precision",
      "CUDA autocast is inactive for NPU tensors"),
    C("train_loss = self.all_gather(train_loss, torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "train_loss = self.all_gather(train_loss, torch.npu.device_count())",
      "world size 0 -> wrong averaged loss / division by zero"),
    C("with torch.cuda.amp.autocast():  # half", "amp", "replace", True,
      "with torch.autocast('npu'):  # half precision", "CUDA autocast is inactive for NPU tensors"),
])

E("maskgit_main", "main.py", "explicit_replacement",
  "MaskGIT-PyTorch main.py (argparse launcher, torchrun DDP setup)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C('init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'init_process_group(backend="hccl")', "NCCL unavailable"),
    C('torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))', "torch_cuda_api", "replace", True,
      'torch.npu.set_device(int(os.environ["LOCAL_RANK"]))', "CUDA runtime call fails"),
    C('args.device = int(os.environ["LOCAL_RANK"])', "device_type", "replace", True,
      'args.device = torch.device("npu", int(os.environ["LOCAL_RANK"]))',
      "a bare int device is read as cuda:<i> by .to(args.device) throughout the trainer"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()", "0 on NPU host -> silently takes the single-device CPU path"),
    C('args.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = "npu" if torch.npu.is_available() else "cpu"', "silently trains on CPU"),
])

# ---------------------------------------------------------------- packaging / environment
E("docker", "Dockerfile", "explicit_replacement",
  "Dockerfile of the kind shipped with LlamaGen/VAR forks (CUDA base, cu121 wheels, flash-attn build)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (toolkit + runtime) instead of the CUDA image"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6;9.0"', "env_var", "removal", False, None,
      "only read by CUDA extension builds"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=all",
      "container device exposure is done by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES) at run time"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container toolkit setting"),
    C("RUN pip install torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cu121",
      "torch_cuda_api", "replace", True,
      "RUN pip install torch==2.3.1 torchvision==0.18.1 --index-url https://download.pytorch.org/whl/cpu",
      "cu121 wheels are the wrong build for an NPU image (and unavailable for aarch64)"),
    C("RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.3.1.post6 pyyaml", "torch_npu wheel paired with torch 2.3.1"),
    C("RUN pip install xformers==0.0.27 --index-url https://download.pytorch.org/whl/cu121", "attention_kernel",
      "removal", True, None, "no NPU build; pulls CUDA torch"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", "removal", True, None,
      "needs nvcc; build fails in an Ascend image"),
])

E("conda_env", "environment.yml", "explicit_replacement",
  "MaskGIT-style conda environment.yml with pytorch-cuda", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "channel only needed for pytorch-cuda; harmless once that is gone"),
    C("pytorch-cuda=12.1", "torch_cuda_api", "removal", True, None,
      "forces the CUDA build of pytorch; not solvable / wrong on an Ascend host"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post8",
      "torch_npu is pip-only; pairs with pytorch=2.1.0"),
    C("=- nvidia-ml-py", "torch_cuda_api", "removal", False, None, "NVML bindings are useless on Ascend"),
])

E("bench_decode", "tools/benchmark_decode.py", "explicit_replacement",
  "gpt-fast / LlamaGen-style decode benchmark (CUDA events, NVTX, torch.compile reduce-overhead)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.nvtx.range_push(name)", "torch_cuda_api", "replace", True,
      "range_id = torch_npu.npu.mstx.range_start(name)",
      "torch.cuda.nvtx is not redirected by torch_npu; fails with --profile (mstx is the NPU counterpart)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True,
      "torch_npu.npu.mstx.range_end(range_id)", "same as range_push"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.gpu)", "CUDA runtime call fails"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "cuda device string"),
    C("print(f\"running on {torch.cuda.get_device_name(device)}", "device_capability_check", "replace", True,
      'print(f"running on {torch.npu.get_device_name(device)}")',
      "get_device_capability returns None on NPU (sm_ string build raises) and the CUDA query fails outright"),
    C("if args.precision == \"bf16\" and not torch.cuda.is_bf16_supported():", "device_capability_check", "replace",
      True, 'if args.precision == "bf16" and not torch.npu.is_bf16_supported():',
      "returns False on NPU host -> silently benchmarks fp16 instead of bf16"),
    C("torch.backends.cuda.matmul.allow_tf32 = True", "torch_cuda_api", "replace", False,
      "torch.npu.matmul.allow_tf32 = True", TF32_NOTE),
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", "removal", False, None,
      "Triton autotuning knob; Inductor on NPU does not generate CUDA Triton kernels (has_triton forced False "
      "under transfer_to_npu); harmless but meaningless"),
    C("torch._inductor.config.triton.unique_kernel_names = True", "triton_kernel_tuning", "removal", False, None,
      "Triton naming knob; no effect on NPU"),
    C('decode_one_token = torch.compile(decode_one_token, mode="reduce-overhead", fullgraph=True)', "compile_mode",
      "replace", False,
      'decode_one_token = torch.compile(decode_one_token, backend="npugraphs", fullgraph=True)', RO_NOTE),
    C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_evt = torch.npu.Event(enable_timing=True)", "same"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device)", "an npu device passed to the CUDA allocator API raises"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "CUDA synchronize raises without CUDA"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "peak = torch.npu.max_memory_allocated(device) / 2 ** 30", "npu device passed to the CUDA API raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on NPU host"),
])
