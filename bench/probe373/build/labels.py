"""Labels for probe373: discrete diffusion / diffusion language models (D3PM, SEDD, MDLM, LLaDA, BD3-LM, Fast-dLLM).

One C(...) per upstream line a careful porter would edit for Ascend NPU + torch_npu (explicit port).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU_NOTE = ("entry point; the project pins a torch older than 2.5.1, where torch_npu is not auto-loaded, "
                   "so torch.npu / 'npu' devices do not exist without this import")
SET_ENV_NOTE = ("source CANN's set_env.sh before launching; needed unless the host's shell profile or image "
                "already sets the CANN environment, so not required in the counterfactual")

# ----------------------------------------------------------------------------------------------
# D3PM (cloneofsimo/d3pm style minimal PyTorch D3PM)
# ----------------------------------------------------------------------------------------------
E("d3pm_runner", "d3pm_runner.py", "explicit_replacement",
  "cloneofsimo/d3pm d3pm_runner.py (minimal D3PM on MNIST, single GPU, .cuda() chains)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("hybrid_loss_coeff=0.0).cuda()", "tensor_to_device", "replace", True,
      "d3pm = D3PM(DummyX0Model(1, N), 1000, num_classes=N, hybrid_loss_coeff=0.0).npu()",
      "model placement; .cuda() fails on a host without CUDA"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "module-level device string used for every batch"),
    C("cond = torch.arange(0, 4).cuda() % 10", "tensor_to_device", "replace", True,
      "cond = torch.arange(0, 4).npu() % 10", "sampling labels"),
    C("init_noise = torch.randint(0, N, (4, 1, 32, 32)).cuda()", "tensor_to_device", "replace", True,
      "init_noise = torch.randint(0, N, (4, 1, 32, 32)).npu()", "initial noise for sampling"),
])

E("d3pm_cifar", "d3pm_runner_cifar.py", "explicit_replacement",
  "cloneofsimo/d3pm d3pm_runner_cifar.py (DiT backbone; torchrun/DDP, AMP and checkpointing added in the style of the repo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "on a CUDA-less host this call is only queued and never runs; torch.manual_seed above is expected to seed the "
      "NPU generator too (custom-device seeding), so this is hygiene - unconfirmed in the knowledge base"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "bind each rank to its NPU"),
    C('device = torch.device(f"cuda:{local_rank}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{local_rank}")', "per-rank device"),
    C("not torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      'if args.mixed_precision == "bf16" and not torch.npu.is_bf16_supported():',
      "torch.cuda.is_bf16_supported() either raises (no CUDA) or answers False, which silently downgrades the "
      "default bf16 run to fp16 on hardware (A2/A3) that supports bf16"),
    C("scaler = torch.cuda.amp.GradScaler(", "amp", "replace", True,
      'scaler = torch.npu.amp.GradScaler(enabled=(args.mixed_precision == "fp16"))',
      "torch.cuda.amp.GradScaler disables itself with a warning when CUDA is absent; with --mixed_precision fp16 the "
      "NPU autocast region would then train fp16 without loss scaling (gradient underflow)"),
    C('map_location=f"cuda:{local_rank}"', "device_type", "replace", True,
      'ckpt = torch.load(args.resume, map_location=f"npu:{local_rank}")',
      "deserialising onto a cuda device fails without CUDA"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=use_amp):',
      "a cuda autocast on a CUDA-less host is disabled with a warning: training still runs, in fp32 (slower, more "
      "memory); the model has no kernel that needs half inputs, so this is performance, not correctness"),
    C('with torch.autocast("cuda", dtype=amp_dtype, enabled=use_amp):', "amp", "replace", False,
      'with torch.autocast("npu", dtype=amp_dtype, enabled=use_amp):', "sampling autocast; same reasoning as training"),
    C("mem = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      "mem = torch.npu.max_memory_allocated(device) / 2**30",
      "torch.cuda memory stats return an empty dict when CUDA was never initialised, so the logged peak memory "
      "silently reads 0 GB"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is not initialised; cache release is hygiene only"),
])

E("d3pm_dit", "dit.py", "explicit_replacement",
  "cloneofsimo/d3pm dit.py (DiT-Llama x0-model; device-agnostic, uses F.scaled_dot_product_attention)", [])

E("d3pm_reqs", "requirements.txt", "explicit_replacement",
  "cloneofsimo/d3pm-style requirements pinned to CUDA 12.1 wheels", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu runs on the CPU build of torch (x86: download.pytorch.org/whl/cpu; aarch64: plain PyPI)"),
    C("torch==2.2.1+cu121", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu wheel for torch 2.2.1; a torch_npu wheel must match torch x.y.z exactly (2.1.0 paired with "
      "torch-npu 2.1.0.postN)"),
    C("torchvision==0.17.1+cu121", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "torchvision must match the torch pin; the +cu121 build pulls CUDA torch"),
    C("=numpy<2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch_npu wheel matching torch 2.1.0 (inserted before numpy)"),
])

# ----------------------------------------------------------------------------------------------
# SEDD (louaaron/Score-Entropy-Discrete-Diffusion)
# ----------------------------------------------------------------------------------------------
E("sedd_run_train", "run_train.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion run_train.py (hydra entry, mp.spawn)", [])

E("sedd_train", "train.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion train.py (per-rank worker: NCCL, set_device, GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "mp.spawn with forkserver: each worker re-imports this module (not run_train.py's namespace), so torch_npu "
      "must be imported here, where the NPU is first touched"),
    C('"nccl", rank=rank, world_size=world_size', "dist_backend", "replace", True,
      '"hccl", rank=rank, world_size=world_size, timeout=datetime.timedelta(minutes=30)', "NCCL -> HCCL"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "bind the worker to its NPU"),
    C('device = torch.device(f"cuda:{rank}" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device(f"npu:{rank}" if torch.npu.is_available() else "cpu")',
      "unported, torch.cuda.is_available() is False and the whole run silently moves to CPU"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "only selects which startup log lines are printed"),
    C('mprint("Found {} CUDA devices."', "torch_cuda_api", "replace", False,
      'mprint("Found {} NPU devices.".format(torch.npu.device_count()))', "logging only"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", False,
      "for i in range(torch.npu.device_count()):", "logging loop; runs zero times unported"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", False,
      "props = torch.npu.get_device_properties(i)",
      "logging; NPU properties carry name and total_memory (no major/minor), which is all this prints"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", False, "scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself without CUDA; SEDD trains in bf16 where loss scaling is not "
      "needed, and every scaler call degrades to a plain backward/step"),
])

E("sedd_transformer", "model/transformer.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion model/transformer.py (DDiT with flash_attn varlen qkv-packed attention)", [
    C("from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func", "attention_kernel", "replace", True,
      "import torch_npu", "flash-attn cannot be installed on Ascend; the attention call below moves to "
      "torch_npu.npu_fusion_attention"),
    C('with torch.autocast(device_type="cuda", enabled=False):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", enabled=False):',
      "intent is an fp32 LayerNorm; x.float() is explicit and layer_norm is on the autocast fp32 list, so leaving "
      "the NPU autocast on changes nothing numerically"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "rotary island; cos/sin are cast to qkv.dtype explicitly, elementwise ops are not autocast-affected"),
    C("x = flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, "TND", scale=1.0 / math.sqrt(q.shape[-1]), '
      'actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
      "q, k, v = qkv.unbind(1) on the (b s) three h d layout; non-causal, dropout 0"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "unported the blocks run in fp32, and npu_fusion_attention only accepts fp16/bf16 inputs"),
])

E("sedd_rotary", "model/rotary.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion model/rotary.py (flash_attn rotary with bare-except TorchScript fallback)", [])

E("sedd_model_utils", "model/utils.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion model/utils.py (get_score_fn; autocast wraps only a def)", [])

E("sedd_losses", "losses.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion losses.py (optimizer factory, scaler-driven optimize_fn)", [
    C("optimizer = optim.AdamW(params", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(params, lr=config.optim.lr, betas=(config.optim.beta1, "
      "config.optim.beta2), eps=config.optim.eps,",
      "performance only: tensor-fused AdamW (msFmkTransplt advice; notes about +memory); torch.optim.AdamW works"),
])

E("sedd_graph", "graph_lib.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion graph_lib.py (uniform / absorbing graphs, score entropy)", [])

E("sedd_sample", "run_sample.py", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion run_sample.py (unconditional sampling from the HF checkpoint)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry point; nothing it imports pulls in torch_npu"),
    C("device = torch.device('cuda')", "device_type", "replace", True, "device = torch.device('npu')",
      "sampling device"),
])

E("sedd_config", "configs/config.yaml", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion configs/config.yaml (hydra + submitit SLURM launcher)", [])

E("sedd_env", "environment.yml", "explicit_replacement",
  "louaaron/Score-Entropy-Discrete-Diffusion environment.yml (conda export, CUDA 11.8 builds)", [
    C("- pytorch=2.0.1=py3.9_cuda11.8_cudnn8.7.0_0", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0=py3.9_cpu_0",
      "CPU build of torch; 2.1.0 chosen so a maintained torch_npu wheel exists (2.0.1 is EOL)"),
    C("- pytorch-cuda=11.8=h7e8668a_5", "import_torch_npu", "removal", True, None,
      "CUDA metapackage forces the CUDA build of pytorch"),
    C("- pytorch-mutex=1.0=cuda", "import_torch_npu", "replace", True, "- pytorch-mutex=1.0=cpu",
      "the mutex selects the CUDA variant of every pytorch-channel package"),
    C("- torchaudio=2.0.2=py39_cu118", "import_torch_npu", "replace", True, "- torchaudio=2.1.0=py39_cpu",
      "CUDA build conflicts with the CPU torch pin"),
    C("- torchtriton=2.0.0=py39", "triton_kernel_tuning", "removal", False, None,
      "only a dependency of the CUDA build; SEDD has no Triton code (triton-ascend would be the Ascend analogue)"),
    C("- torchvision=0.15.2=py39_cu118", "import_torch_npu", "replace", True, "- torchvision=0.16.0=py39_cpu",
      "must match the torch pin"),
    C("- flash-attn==2.2.2", "attention_kernel", "removal", True, None,
      "flash-attn needs nvcc/CUDA to build; replaced by torch_npu.npu_fusion_attention in model/transformer.py"),
    C("- tokenizers==0.14.1", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post12",
      "add the torch_npu wheel (pip section) matching torch 2.1.0"),
])

# ----------------------------------------------------------------------------------------------
# MDLM (kuleshov-group/mdlm)
# ----------------------------------------------------------------------------------------------
E("mdlm_main", "main.py", "explicit_replacement",
  "kuleshov-group/mdlm main.py (hydra + Lightning entry; OmegaConf device_count resolver)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("'device_count', torch.cuda.device_count)", "torch_cuda_api", "replace", True,
      "'device_count', torch.npu.device_count)",
      "feeds trainer.devices and the batch-size arithmetic; returns 0 on an NPU host"),
    C("config, tokenizer=tokenizer).to('cuda')", "tensor_to_device", "replace", True,
      "config, tokenizer=tokenizer).to('npu')", "hf_dit backbone path of sample_eval / ppl_eval"),
])

E("mdlm_diffusion", "diffusion.py", "explicit_replacement",
  "kuleshov-group/mdlm diffusion.py (LightningModule: SUBS parameterization, ddpm_cache sampler, gen-PPL)", [
    C("metrics.set_dtype(torch.float64)", "unsupported_op_workaround", "replace", True,
      "metrics.set_dtype(torch.float32)",
      "torchmetrics syncs metric states across ranks with all_gather on compute(); Ascend's support list gives "
      "all_gather/all_reduce no fp64 on HCCL. fp32 loses exactness of the token-count weight beyond 2**24 per "
      "epoch - an alternative is to keep fp64 states on CPU"),
    C("with torch.cuda.amp.autocast(dtype=torch.float32):", "amp", "replace", False,
      "with torch.npu.amp.autocast(dtype=torch.float32):",
      "keeps the embedding/timestep MLP out of the outer bf16 autocast; unported it is disabled with a warning and "
      "only precision changes (the backbone blocks set bf16 themselves and logits are upcast before logsumexp)"),
])

E("mdlm_dit", "models/dit.py", "explicit_replacement",
  "kuleshov-group/mdlm models/dit.py (DDiT with flash_attn varlen attention and flash_attn rotary)", [
    C("=import flash_attn", "attention_kernel", "replace", True, "import torch_npu",
      "flash-attn is not installable on Ascend; attention moves to torch_npu.npu_fusion_attention"),
    C("=import flash_attn.layers.rotary", "npu_fused_op", "removal", True, None,
      "module import fails; RoPE is done in torch or with torch_npu.npu_rotary_mul"),
    C("return flash_attn.layers.rotary.apply_rotary_emb_qkv_(qkv, cos, sin)", "npu_fused_op", "replace", True,
      "return torch.cat([qkv[:, :, :2] * torch.cat([cos, cos], -1)[None, :, None, None] + rotate_half(qkv[:, :, :2]) "
      "* torch.cat([sin, sin], -1)[None, :, None, None], qkv[:, :, 2:]], dim=2)",
      "rotate q and k only (v stays). Plain torch because the packed qkv is 5-D and torch_npu.npu_rotary_mul takes "
      "3-D/4-D inputs; unpacking q/k to BSND first would allow the fused op"),
    C("with torch.amp.autocast('cuda', enabled=False):", "amp", "replace", False,
      "with torch.amp.autocast('npu', enabled=False):", "fp32 LayerNorm island; explicit .float() makes it moot"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):", "rotary island; casts are explicit"),
    C("x = flash_attn.flash_attn_interface.flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, "TND", scale=1.0 / math.sqrt(q.shape[-1]), '
      'actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
      "q, k, v = qkv.unbind(1); non-causal"),
    C("with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(dtype=torch.bfloat16):",
      "npu_fusion_attention needs fp16/bf16 inputs; unported the blocks run in fp32"),
])

E("mdlm_dataloader", "dataloader.py", "explicit_replacement",
  "kuleshov-group/mdlm dataloader.py (tokenizer setup, batch-size assertions, fault-tolerant sampler)", [
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "num_gpus = torch.npu.device_count()",
      "0 on an NPU host: the global-batch assertion fails and the modulo raises ZeroDivisionError"),
])

E("mdlm_config", "configs/config.yaml", "explicit_replacement",
  "kuleshov-group/mdlm configs/config.yaml (Lightning trainer block)", [
    C("accelerator: cuda", "device_type", "replace", True, "accelerator: npu",
      "Lightning refuses the cuda accelerator without CUDA; Lightning has no built-in NPU accelerator, so 'npu' "
      "assumes a registered Accelerator subclass (which one is unconfirmed in the knowledge base)"),
])

E("mdlm_strategy", "configs/strategy/ddp.yaml", "explicit_replacement",
  "kuleshov-group/mdlm configs/strategy/ddp.yaml (Lightning DDPStrategy)", [
    C("find_unused_parameters: false", "dist_backend", "npu_only_addition", True, "process_group_backend: hccl",
      "DDPStrategy picks nccl only for cuda root devices and gloo otherwise; gloo cannot reduce NPU tensors"),
])

E("mdlm_slurm", "scripts/train_owt_mdlm.sh", "explicit_replacement",
  "kuleshov-group/mdlm scripts/train_owt_mdlm.sh (SLURM launcher)", [
    C("=nvidia-smi", "device_capability_check", "replace", False, "npu-smi info",
      "diagnostic print at job start; the script carries on if the command is missing"),
    C("export HYDRA_FULL_ERROR=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("mdlm_reqs", "requirements.yaml", "explicit_replacement",
  "kuleshov-group/mdlm requirements.yaml (conda env with CUDA 12.1, flash-attn, mamba-ssm)", [
    C("- cuda-nvcc=12.1", "custom_cuda_extension", "removal", False, None,
      "only there to build the CUDA extensions removed below"),
    C("- pytorch-cuda=12.1", "import_torch_npu", "replace", True, "- cpuonly",
      "select the CPU build of pytorch from the pytorch channel"),
    C("- causal-conv1d==1.1.3.post1", "custom_cuda_extension", "removal", True, None,
      "CUDA extension (DiMamba backbone); its setup fails on a torch without CUDA, breaking env creation"),
    C("- flash-attn==2.5.6", "attention_kernel", "removal", True, None,
      "not installable on Ascend; replaced by torch_npu.npu_fusion_attention"),
    C("- mamba-ssm==1.1.4", "custom_cuda_extension", "removal", True, None,
      "CUDA selective-scan kernels; the optional DiMamba backbone is not available on NPU"),
    C("- timm==0.9.16", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.2.0.post2",
      "torch_npu wheel matching pytorch 2.2.0 (EOL line; moving to 2.1.0 or 2.3.1 is the maintained option)"),
    C("- triton==2.2.0", "triton_kernel_tuning", "removal", False, None,
      "no Triton kernels in MDLM itself; an unused dependency on NPU (triton-ascend if ever needed)"),
])

# ----------------------------------------------------------------------------------------------
# LLaDA (ML-GSAI/LLaDA and the GSAI-ML/LLaDA-8B remote code)
# ----------------------------------------------------------------------------------------------
E("llada_generate", "generate.py", "explicit_replacement",
  "ML-GSAI/LLaDA generate.py (low-confidence remasking sampler, fp64 Gumbel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point, and the module every other LLaDA script imports"),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "demo main"),
])

E("llada_chat", "chat.py", "explicit_replacement",
  "ML-GSAI/LLaDA chat.py (multi-turn console chat)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "explicit is clearer, but once generate.py imports torch_npu it is already loaded through "
      "'from generate import generate' before any NPU use"),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "chat device"),
])

E("llada_loglik", "get_log_likelihood.py", "explicit_replacement",
  "ML-GSAI/LLaDA get_log_likelihood.py (Monte-Carlo conditional likelihood)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "standalone entry point (does not import generate.py)"),
    C("loss = F.cross_entropy(logits[mask_index], seq[mask_index]", "unsupported_op_workaround", "replace", False,
      "loss = F.cross_entropy(logits[mask_index].float(), seq[mask_index], reduction='none') / p_mask[mask_index]",
      "logits are bf16; Ascend's 2.7.1 list gives cross_entropy input fp16/fp32 only, while log_softmax lists bf16 - "
      "whether bf16 fails is unconfirmed, the cast is cheap insurance"),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "demo device"),
])

E("llada_eval", "eval_llada.py", "explicit_replacement",
  "ML-GSAI/LLaDA eval_llada.py (lm-eval-harness model wrapper with accelerate)", [
    C('device="cuda",', "device_type", "replace", True, 'device="npu",',
      "single-process path moves the model with self.model.to(device); the accelerate path gets the device from "
      "Accelerator, which supports NPU natively"),
    C("loss = F.cross_entropy(logits[mask_indices], seq[mask_indices]", "unsupported_op_workaround", "replace", False,
      "loss = F.cross_entropy(logits[mask_indices].float(), seq[mask_indices], reduction='none') / p_mask[mask_indices]",
      "bf16 logits; cross_entropy listed fp16/fp32 only (unconfirmed failure)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; cache release between task phases is hygiene"),
    C("set_seed(1234)", "compile_mode", "npu_only_addition", False, "torch.npu.set_compile_mode(jit_compile=False)",
      "prompt lengths vary per request (dynamic shapes); msFmkTransplt recommends jit_compile=False there - "
      "performance only"),
])

E("llada_app", "app.py", "explicit_replacement",
  "ML-GSAI/LLaDA app.py (gradio denoising-visualisation demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module-level device detection below needs torch.npu before anything else runs"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", True,
      "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
      "unported, an NPU host silently runs the 8B model on CPU"),
])

E("llada_eval_sh", "eval_llada.sh", "explicit_replacement",
  "ML-GSAI/LLaDA eval_llada.sh (accelerate launch over lm-eval tasks)", [
    C("export HF_ALLOW_CODE_EVAL=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
])

E("llada_modeling", "modeling_llada.py", "explicit_replacement",
  "GSAI-ML/LLaDA-8B-Instruct modeling_llada.py (OLMo-derived remote code: norms, RoPE, SDPA/flash attention)", [
    C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", False,
      'return torch.device("npu" if torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu"))',
      "only decides where the RoPE cache is warmed at init; get_rotary_embedding moves it to the query's device"),
    C('if tensor.device.type == "cuda" and torch.is_autocast_enabled():', "amp", "add_branch", False,
      'if tensor.device.type in ("cuda", "npu") and torch.is_autocast_enabled(tensor.device.type):',
      "only the low-precision LayerNorm under autocast reaches this; LLaDA uses RMSNorm with bf16 weights and no "
      "autocast (the 1-arg is_autocast_enabled needs torch>=2.4)"),
    C("variance = x.pow(2).mean(-1, keepdim=True)", "npu_fused_op", "replace", False,
      "x = torch_npu.npu_rms_norm(x, self.weight, epsilon=self.eps)[0]",
      "performance: fused RMSNorm (the rsqrt/cast/weight lines collapse into it)"),
    C('if bias.device.type == "cuda" and torch.is_autocast_enabled():', "amp", "add_branch", False,
      'if bias.device.type in ("cuda", "npu") and torch.is_autocast_enabled(bias.device.type):',
      "attention-bias cast under autocast only; inference runs without autocast, so the bias is cast to the "
      "input dtype either way"),
])

# ----------------------------------------------------------------------------------------------
# BD3-LM (kuleshov-group/bd3lms)
# ----------------------------------------------------------------------------------------------
E("bd3lm_dit", "models/dit.py", "explicit_replacement",
  "kuleshov-group/bd3lms models/dit.py (block-diffusion DiT: flex/sdpa/flash_attn backends, KV cache)", [
    C("=import flash_attn", "attention_kernel", "replace", True, "import torch_npu",
      "flash-attn not installable on Ascend"),
    C("=import flash_attn.layers.rotary", "npu_fused_op", "removal", True, None,
      "only used for its pure-torch apply_rotary_emb_torch helper"),
    C("with torch.amp.autocast('cuda', enabled=False):", "amp", "replace", False,
      "with torch.amp.autocast('npu', enabled=False):", "rotary island; casts are explicit"),
    C("q = flash_attn.layers.rotary.apply_rotary_emb_torch(", "npu_fused_op", "replace", True,
      "q = torch_npu.npu_rotary_mul(q.squeeze(dim=2), torch.cat([cos, cos], -1)[None, :, None], "
      "torch.cat([sin, sin], -1)[None, :, None])",
      "BSND layout, half-width cos/sin widened; a local rotate_half expression works as well"),
    C("k = flash_attn.layers.rotary.apply_rotary_emb_torch(", "npu_fused_op", "replace", True,
      "k = torch_npu.npu_rotary_mul(k.squeeze(dim=2), torch.cat([cos, cos], -1)[None, :, None], "
      "torch.cat([sin, sin], -1)[None, :, None])", "same for keys"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):", "fp32 LayerNorm island; explicit .float()"),
    C("x = flash_attn.flash_attn_interface.flash_attn_varlen_qkvpacked_func(", "attention_kernel", "replace", True,
      'x = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, "TND", scale=1.0 / math.sqrt(q.shape[-1]), '
      'atten_mask=torch.triu(torch.ones(2048, 2048, dtype=torch.bool, device=qkv.device), 1), sparse_mode=3, '
      'actual_seq_qlen=cu_seqlens[1:].tolist(), actual_seq_kvlen=cu_seqlens[1:].tolist())[0]',
      "causal path used by the AR/MDLM baselines (attn_backend=flash_attn); sparse_mode=3 with the 2048 triu mask "
      "as in transformers' NPU flash-attention mapping"),
    C("self.block_diff_mask = create_block_mask(", "attention_kernel", "replace", False,
      "self.block_diff_mask = create_block_mask(partial(block_diff_mask, block_size=block_size, n=seqlen), "
      "B=None, H=None, Q_LEN=seqlen*2, KV_LEN=seqlen*2, device='npu')",
      "create_block_mask defaults to device='cuda'; only reached on the flex backend, which the ported launch "
      "scripts avoid (flex_attention on NPU unconfirmed)"),
    C("with torch.amp.autocast('cuda', dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.amp.autocast('npu', dtype=torch.bfloat16):",
      "npu_fusion_attention on the flash_attn backend needs bf16/fp16 inputs; unported every backend runs fp32"),
])

E("bd3lm_sh", "scripts/train/train_owt_bd3lm.sh", "explicit_replacement",
  "kuleshov-group/bd3lms scripts/train/train_owt_bd3lm.sh (SLURM, flex attention backend)", [
    C("BLOCK_SIZE=16", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("model.attn_backend=flex", "attention_kernel", "replace", False, "model.attn_backend=sdpa \\",
      "flex_attention is compiled through Inductor/Triton (max-autotune); its NPU support is unconfirmed in the "
      "knowledge base, while SDPA with a bool mask is listed as supported"),
])

E("bd3lm_sample_sh", "scripts/gen_ppl/genppl_owt_bd3lm.sh", "explicit_replacement",
  "kuleshov-group/bd3lms scripts/gen_ppl/*.sh (single-device sampling with KV cache)", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}",
      "torch_npu ignores CUDA_VISIBLE_DEVICES; the chosen device would silently be NPU 0 whatever the user sets"),
])

# ----------------------------------------------------------------------------------------------
# Fast-dLLM (NVlabs/Fast-dLLM)
# ----------------------------------------------------------------------------------------------
E("fastdllm_generate", "llada/generate.py", "explicit_replacement",
  "NVlabs/Fast-dLLM llada/generate.py (prefix KV cache + confidence-threshold parallel decoding, timing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NPU_NOTE),
    C("device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "benchmark device"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "torch.cuda.synchronize initialises CUDA and raises without it"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device and raises without CUDA"),
    C('torch.cuda.nvtx.range_push("llada_generate")', "torch_cuda_api", "replace", True,
      'rng = torch_npu.npu.mstx.range_start("llada_generate")',
      "torch.cuda.nvtx is not redirected to NPU and fails without a CUDA build; mstx is the NPU range marker "
      "(exact range_start/range_end names unconfirmed in the knowledge base)"),
    C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
      "close the mstx range"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "without it the wall-clock measurement stops before the NPU queue drains"),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      'print(f"peak memory: {torch.npu.max_memory_allocated() / 1024 ** 3:.2f} GB")',
      "the benchmark's reported peak memory silently reads 0 GB when CUDA was never initialised"),
])

E("fastdllm_eval_sh", "llada/eval_gsm8k.sh", "explicit_replacement",
  "NVlabs/Fast-dLLM llada/eval_gsm8k.sh (accelerate launch on 4 GPUs)", [
    C("export HF_ALLOW_CODE_EVAL=1", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_NOTE),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "device selection for the 4 accelerate processes; CUDA_VISIBLE_DEVICES is ignored on Ascend"),
])
