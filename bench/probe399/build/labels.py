"""Labels for probe399 (video-to-audio / Foley generation). One C(...) per line a careful porter edits."""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script of an explicit port: torch_npu must be imported before torch.npu / 'npu' devices "
               "are used (autoload exists only from torch_npu 2.5.1)")
SEED_NOTE = ("redundant on NPU: torch.manual_seed already seeds every device generator including the NPU one; "
             "torch.cuda.* seeding is lazy and does not raise without CUDA; ported for clarity only")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a no-op when CUDA was never initialised, so nothing fails; "
                    "without the port NPU cached memory is just not released (memory/perf only)")
MAXMEM_NOTE = ("logging only: torch.cuda.max_memory_allocated/memory_allocated return 0 when CUDA is not initialised; "
               "the NPU figure needs torch.npu.*")
AUTOCAST_NOTE = ("autocast with device 'cuda' on an NPU host warns and disables itself, so the configured mixed "
                 "precision silently does not apply to NPU ops")

# ----------------------------------------------------------------------------------------------------------------
# Diff-Foley (luosiallen/Diff-Foley): LDM-based V2A with CAVP features
# ----------------------------------------------------------------------------------------------------------------
E("df_main", "training/main.py", "explicit_replacement",
  "luosiallen/Diff-Foley training/main.py (latent-diffusion style Lightning launcher with CUDACallback)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.reset_peak_memory_stats(trainer.strategy.root_device.index)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(trainer.strategy.root_device.index)",
      "reset_peak_memory_stats has no is_initialized guard: it calls into the CUDA runtime and raises without CUDA"),
    C("torch.cuda.synchronize(trainer.strategy.root_device.index)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(trainer.strategy.root_device.index)", "cuda.synchronize lazily initialises CUDA and raises"),
    C("torch.cuda.synchronize(device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device_index)", "cuda.synchronize lazily initialises CUDA and raises"),
    C("max_memory = torch.cuda.max_memory_allocated(device_index)", "torch_cuda_api", "replace", False,
      "max_memory = torch.npu.max_memory_allocated(device_index) / 2 ** 20", MAXMEM_NOTE),
    C('trainer_kwargs["accelerator"] = "gpu"', "device_type", "replace", True,
      'trainer_kwargs["accelerator"] = "npu"',
      "Lightning's 'gpu' accelerator needs CUDA and refuses to start; an NPU accelerator has to be registered "
      "with Lightning (Ascend plugin / custom Accelerator; not confirmed in the knowledge base)"),
    C('trainer_kwargs["strategy"] = "ddp"', "dist_backend", "replace", True,
      'trainer_kwargs["strategy"] = DDPStrategy(process_group_backend="hccl") if len(gpu_ids) > 1 else "auto"',
      "Lightning's DDP picks 'nccl' only for cuda root devices and falls back to gloo otherwise; gloo cannot "
      "all-reduce NPU tensors, so the backend must be forced to hccl"),
])

E("df_ddim", "ldm/models/diffusion/ddim.py", "explicit_replacement",
  "CompVis latent-diffusion ldm/models/diffusion/ddim.py as vendored by Diff-Foley", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", False,
      'if attr.device != torch.device("npu"):',
      "with the .to() line below ported, an NPU tensor compares unequal to cuda and is re-sent to npu (no-op), "
      "so this comparison alone cannot fail; ported for consistency"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      'attr = attr.to(torch.device("npu"))', "every DDIM schedule buffer is moved to CUDA: fails on an NPU host"),
])

E("df_cavp_model", "diff_foley/modules/cavp/cavp_model.py", "explicit_replacement",
  "luosiallen/Diff-Foley CAVP contrastive audio-visual model (GatherLayer, CLIP-style loss)", [])

E("df_infer", "inference/diff_foley_infer.py", "explicit_replacement",
  "luosiallen/Diff-Foley inference notebook (diff_foley_inference.ipynb) as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('map_location="cuda:0"', "tensor_to_device", "replace", True,
      'state = torch.load(os.path.join(ckpt_dir, "g_best"), map_location="cpu")',
      "map_location='cuda:0' makes torch.load deserialise onto CUDA and raise without it; the vocoder is moved "
      "to the device right after, so cpu is the clean target"),
    C("cavp = cavp.cuda().eval()", "tensor_to_device", "replace", True, "cavp = cavp.npu().eval()",
      "hard-coded .cuda() next to the device variable used elsewhere"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed(args.seed)", SEED_NOTE + " (seed_everything is called just above)"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "module device for LDM, vocoder, classifier and video frames"),
])

E("df_cavp_train", "training/stage1_cavp/train_cavp.py", "explicit_replacement",
  "luosiallen/Diff-Foley stage-1 CAVP training loop (DDP + AMP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from apex.optimizers import FusedAdam as AdamW", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdamW as AdamW",
      "apex FusedAdam is not in Ascend apex, but the except-branch already falls back to torch.optim.AdamW; "
      "NpuFusedAdamW is a performance choice only"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'args.device = torch.device("npu", args.local_rank)', "used by evaluate()"),
    C('video = batch["video"].cuda(', "tensor_to_device", "replace", True,
      'video = batch["video"].npu(args.local_rank, non_blocking=True)', "batch to device"),
    C('spec = batch["spec"].cuda(', "tensor_to_device", "replace", True,
      'spec = batch["spec"].npu(args.local_rank, non_blocking=True)', "batch to device"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):", AUTOCAST_NOTE),
    C("model = CAVP(**cfg.model).cuda(args.local_rank)", "tensor_to_device", "replace", True,
      "model = CAVP(**cfg.model).npu(args.local_rank)", "model placement before DDP"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "a cuda GradScaler disables itself without CUDA, so --amp fp16 training on NPU would run with no loss scaling"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      'logger.info(f"max mem {torch.npu.max_memory_allocated() / 1024 ** 3:.1f} GB")', MAXMEM_NOTE),
])

E("df_config", "training/configs/ldm_training/v2a_cavp_ldm.yaml", "explicit_replacement",
  "luosiallen/Diff-Foley LDM training config (latent-diffusion YAML)", [])

E("df_req", "requirements.txt", "explicit_replacement", "luosiallen/Diff-Foley requirements (cu113 pins)", [
    C("torch==1.12.1+cu113", "import_torch_npu", "replace", True, "torch==2.1.0",
      "no torch_npu release exists for torch 1.12; torch must be pinned to a version torch_npu supports "
      "(2.1.0 pairs with torch-npu 2.1.0.postN)"),
    C("torchvision==0.13.1+cu113", "import_torch_npu", "replace", True, "torchvision==0.16.0",
      "+cu113 local build and torch-1.12 pin conflict with the torch 2.1.0 needed by torch_npu"),
    C("torchaudio==0.12.1", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
      "torchaudio 0.12.1 pins torch 1.12.1; must follow the torch bump"),
    C("pytorch-lightning==1.7.7", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the NPU backend itself must be installed (inserted after the torch family)"),
])

E("df_launch", "training/train_ldm.sh", "explicit_replacement", "luosiallen/Diff-Foley LDM training launcher", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be on the environment before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored on NPU; it selects all 8 devices, which is also what an 8-NPU node exposes by default"),
])

# ----------------------------------------------------------------------------------------------------------------
# FoleyCrafter (open-mmlab/FoleyCrafter): Auffusion + semantic adapter + temporal ControlNet
# ----------------------------------------------------------------------------------------------------------------
E("fc_inference", "inference.py", "explicit_replacement", "open-mmlab/FoleyCrafter inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('config.add_argument("--device", type=str, default="cuda")', "device_type", "replace", True,
      'config.add_argument("--device", type=str, default="npu")',
      "single device knob for vocoder, detector, pipeline, CLIP encoder and generator"),
    C("ckpt = torch.load(temporal_ckpt_path)", "tensor_to_device", "replace", False,
      'ckpt = torch.load(temporal_ckpt_path, map_location="cpu")',
      "without map_location a checkpoint holding CUDA tensors cannot be loaded without CUDA; whether the released "
      "temporal_adapter.ckpt stores CUDA tensors is unconfirmed (app.py already uses map_location='cpu')"),
])

E("fc_util", "foleycrafter/utils/util.py", "explicit_replacement", "open-mmlab/FoleyCrafter foleycrafter/utils/util.py", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      SEED_NOTE),
    C("return torch.cuda.memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "return torch.npu.memory_allocated() / 1024**3", MAXMEM_NOTE),
])

E("fc_app", "app.py", "explicit_replacement", "open-mmlab/FoleyCrafter app.py (Gradio demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('self.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'self.device = "npu" if torch.npu.is_available() else "cpu"',
      "on an NPU host is_available() is False and the whole demo silently runs on CPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C('=device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", False,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "module-level variable that nothing reads (the controller uses self.device); edited for consistency"),
])

E("fc_pipeline", "foleycrafter/pipelines/pipeline_controlnet.py", "explicit_replacement",
  "open-mmlab/FoleyCrafter pipelines/pipeline_controlnet.py (diffusers ControlNet pipeline fork)", [
    C('device = torch.device(f"cuda:{gpu_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{gpu_id}")',
      "public offload API hard-codes the CUDA device; fails whenever sequential offload is enabled"),
    C('device = torch.device("cuda", gpu_id)', "device_type", "replace", True,
      'device = torch.device("npu", gpu_id)', "same for model offload"),
    C("torch.cuda.empty_cache()  # otherwise", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # otherwise we don't see the memory savings (but they probably exist)",
      EMPTY_CACHE_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("fc_attn", "foleycrafter/models/adapters/attention_processor.py", "explicit_replacement",
  "open-mmlab/FoleyCrafter models/adapters/attention_processor.py (IP-Adapter processors)", [
    C("=hidden_states = xformers.ops.memory_efficient_attention(", "attention_kernel", "replace", False,
      "hidden_states = F.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask, scale=attn.scale)",
      "xformers has no NPU backend; the xformers processor is opt-in (inference uses IPAttnProcessor2_0 with SDPA) "
      "and refuses to construct when xformers is absent, so nothing silently breaks"),
    C("ip_hidden_states = xformers.ops.memory_efficient_attention(", "attention_kernel", "replace", False,
      "ip_hidden_states = F.scaled_dot_product_attention(query, ip_key, ip_value)", "same opt-in xformers path"),
])

E("fc_onset", "foleycrafter/models/time_detector/model.py", "explicit_replacement",
  "open-mmlab/FoleyCrafter models/time_detector/model.py (visual onset detector)", [])

E("fc_env", "requirements/environment.yaml", "explicit_replacement", "open-mmlab/FoleyCrafter requirements/environment.yaml", [
    C("- torch==2.2.0", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.2.0",
      "torch 2.2.0 has a matching torch_npu wheel (v2.2.0-6.0.rc1 line); the backend package has to be added"),
    C("- xformers==0.0.24", "attention_kernel", "removal", False, None,
      "xformers has no NPU backend and nothing on the default path needs it; whether its install fails on the "
      "NPU host (aarch64, no CUDA) is unconfirmed"),
])

# ----------------------------------------------------------------------------------------------------------------
# MMAudio (hkchengrex/MMAudio): flow-matching multimodal transformer
# ----------------------------------------------------------------------------------------------------------------
E("mm_train", "train.py", "explicit_replacement", "hkchengrex/MMAudio train.py (hydra + torchrun)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("=torch.backends.cudnn.allow_tf32 = True", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "msFmkTransplt's standard performance setting for dynamic-shape workloads; performance only "
      "(the cudnn flag on this line itself is accepted and left as is)"),
    C('distributed.init_process_group(backend="nccl", timeout=timedelta(hours=2))', "dist_backend", "replace", True,
      'distributed.init_process_group(backend="hccl", timeout=timedelta(hours=2))', "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("mm_runner", "mmaudio/runner.py", "explicit_replacement", "hkchengrex/MMAudio mmaudio/runner.py", [
    C("empty_string_feat=empty_string_feat).cuda(),", "tensor_to_device", "replace", True,
      "empty_string_feat=empty_string_feat).npu(),", "network placement before DDP (device_ids=[local_rank] is fine)"),
    C("step_size_correction=True).cuda()", "tensor_to_device", "replace", True, "step_size_correction=True).npu()",
      "EMA copy must live next to the NPU network"),
    C("self.rng = torch.Generator(device='cuda')", "device_type", "replace", True,
      "self.rng = torch.Generator(device='npu')", "a CUDA generator cannot be created without CUDA"),
    C("self.features = self.features.cuda().eval()", "tensor_to_device", "replace", True,
      "self.features = self.features.npu().eval()", "feature extractors / VAE / vocoder placement"),
    C("self.scaler = torch.amp.GradScaler(init_scale=2048)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(init_scale=2048)",
      "torch.amp.GradScaler defaults to device 'cuda' and disables itself without CUDA; only used when "
      "enable_grad_scaler is set, which the bf16 base config leaves False"),
    C("with torch.amp.autocast('cuda', enabled=self.use_amp, dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.amp.autocast('npu', enabled=self.use_amp, dtype=torch.bfloat16):", AUTOCAST_NOTE),
    C("clip_f = data['clip_features'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "clip_f = data['clip_features'].npu(non_blocking=True)", "batch to device"),
    C("sync_f = data['sync_features'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "sync_f = data['sync_features'].npu(non_blocking=True)", "batch to device"),
    C("text_f = data['text_features'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "text_f = data['text_features'].npu(non_blocking=True)", "batch to device"),
    C("video_exist = data['video_exist'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "video_exist = data['video_exist'].npu(non_blocking=True)", "batch to device"),
    C("text_exist = data['text_exist'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "text_exist = data['text_exist'].npu(non_blocking=True)", "batch to device"),
    C("a_mean = data['a_mean'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "a_mean = data['a_mean'].npu(non_blocking=True)", "batch to device"),
    C("a_std = data['a_std'].cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "a_std = data['a_std'].npu(non_blocking=True)", "batch to device"),
    C("mem_gb = torch.cuda.max_memory_allocated() / (2**30)", "torch_cuda_api", "replace", False,
      "mem_gb = torch.npu.max_memory_allocated() / (2**30)", MAXMEM_NOTE),
    C("with torch.amp.autocast(device_type='cuda', enabled=self.use_amp, dtype=torch.bfloat16):", "amp", "replace",
      True, "with torch.amp.autocast(device_type='npu', enabled=self.use_amp, dtype=torch.bfloat16):", AUTOCAST_NOTE),
    C("with torch.amp.autocast('cuda', dtype=torch.bfloat16, enabled=self.use_amp):", "amp", "replace", True,
      "with torch.amp.autocast('npu', dtype=torch.bfloat16, enabled=self.use_amp):", AUTOCAST_NOTE),
    C("with torch.amp.autocast('cuda', enabled=False):", "amp", "replace", False,
      "with torch.amp.autocast('npu', enabled=False):",
      "only disables autocast, and eval() is called from the training loop outside any autocast region; inert"),
    C("device='cuda',", "device_type", "replace", True, "device='npu',",
      "av_bench extract() puts PaSST/PANNs/VGGish on this device"),
    C("map_location = f'cuda:{local_rank}'", "device_type", "replace", True, "map_location = f'npu:{local_rank}'",
      "target of the remap; the dict key 'cuda:0' on the next line names where the checkpoint was saved and stays"),
    C("map_location = 'cuda:%d' % local_rank", "device_type", "replace", True,
      "map_location = 'npu:%d' % local_rank", "same remap target for load_weights"),
])

E("mm_networks", "mmaudio/model/networks.py", "explicit_replacement", "hkchengrex/MMAudio mmaudio/model/networks.py", [])

E("mm_mel", "mmaudio/ext/mel_converter.py", "explicit_replacement", "hkchengrex/MMAudio mmaudio/ext/mel_converter.py", [
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=False):",
      "meant to keep STFT + mel-basis matmul in fp32; a cuda-autocast exit does not leave an active NPU bf16 "
      "autocast, so the mel matmul would silently run in reduced precision"),
])

E("mm_features", "mmaudio/model/utils/features_utils.py", "explicit_replacement",
  "hkchengrex/MMAudio mmaudio/model/utils/features_utils.py", [])

E("mm_autoenc", "mmaudio/ext/autoencoder/autoencoder.py", "explicit_replacement",
  "hkchengrex/MMAudio mmaudio/ext/autoencoder/autoencoder.py", [])

E("mm_bigvgan_load", "mmaudio/ext/bigvgan_v2/alias_free_activation/cuda/load.py", "kernel_rewrite",
  "NVIDIA BigVGAN v2 alias_free_activation/cuda/load.py as vendored by MMAudio", [
    C("return cpp_extension.load(", "custom_cuda_extension", "replace", False,
      "raise RuntimeError('anti_alias_activation CUDA kernel is unavailable on Ascend; use use_cuda_kernel=False')",
      "JIT nvcc build of the fused anti-alias activation; unreachable because MMAudio builds BigVGAN v2 with "
      "use_cuda_kernel=False, so a porter only adds a clear error (or an Ascend C rewrite for speed)"),
])

E("mm_bigvgan_cu", "mmaudio/ext/bigvgan_v2/alias_free_activation/cuda/anti_alias_activation_cuda.cu",
  "kernel_rewrite", "NVIDIA BigVGAN v2 anti_alias_activation_cuda.cu as vendored by MMAudio", [])

E("mm_config", "config/base_config.yaml", "explicit_replacement", "hkchengrex/MMAudio config/base_config.yaml", [])

E("mm_demo", "demo.py", "device_branch_or_abstraction", "hkchengrex/MMAudio demo.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "device_type", "add_branch", True,
      "if torch.npu.is_available(): device = 'npu'  (new first branch; the cuda test becomes elif)",
      "without an NPU branch the cuda/mps probes fail and the demo silently runs on CPU"),
    C("torch.cuda.max_memory_allocated() / (2**30)", "torch_cuda_api", "replace", False,
      "log.info('Memory usage: %.2f GB', torch.npu.max_memory_allocated() / (2**30))", MAXMEM_NOTE),
])

E("mm_extract", "training/extract_video_training_latents.py", "explicit_replacement",
  "hkchengrex/MMAudio training/extract_video_training_latents.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('distributed.init_process_group(backend="nccl", timeout=timedelta(hours=1))', "dist_backend", "replace", True,
      'distributed.init_process_group(backend="hccl", timeout=timedelta(hours=1))', "NCCL is not available on Ascend"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "raises without CUDA"),
    C("mode=mode).eval().cuda()", "tensor_to_device", "replace", True, "mode=mode).eval().npu()",
      "feature extractor placement"),
    C("audio = data['audio'].cuda()", "tensor_to_device", "replace", True, "audio = data['audio'].npu()",
      "batch to device"),
    C("clip_video = data['clip_video'].cuda()", "tensor_to_device", "replace", True,
      "clip_video = data['clip_video'].npu()", "batch to device"),
    C("sync_video = data['sync_video'].cuda()", "tensor_to_device", "replace", True,
      "sync_video = data['sync_video'].npu()", "batch to device"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("mm_launch", "scripts/train_small_16k.sh", "explicit_replacement",
  "hkchengrex/MMAudio training launch (torchrun command from TRAINING.md)", [
    C("=set -euo pipefail", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be on the environment before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      "subset selection is ignored on NPU; ASCEND_RT_VISIBLE_DEVICES is the runtime equivalent"),
    C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL watchdog knob is inert with hccl; the torch_npu counterpart already defaults to 1"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
      "nvidia-smi is absent on an Ascend host and, under set -e, makes the script exit non-zero"),
])

# ----------------------------------------------------------------------------------------------------------------
# Seeing and Hearing (yzxing87/Seeing-and-Hearing): ImageBind-guided V2A / joint VA generation
# ----------------------------------------------------------------------------------------------------------------
E("sh_v2a", "v2a/v2a_imagebind_audioldm.py", "explicit_replacement",
  "yzxing87/Seeing-and-Hearing V2A script (ImageBind aligner over AudioLDM)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True, "with torch.npu.amp.autocast():",
      "with --fp16 the AudioLDM vocoder emits fp16 audio that reaches fp32 ImageBind weights; only autocast "
      "reconciles the dtypes, and a cuda autocast is disabled on NPU"),
    C('device = torch.device(f"cuda:{args.gpu_id}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu_id}")', "device for AudioLDM and ImageBind"),
    C('generator = torch.Generator("cuda")', "device_type", "replace", True,
      'generator = torch.Generator("npu").manual_seed(args.seed)', "hard-coded CUDA generator"),
    C("torch.cuda.get_device_name(args.gpu_id)", "torch_cuda_api", "replace", True,
      'print(f"Found {len(videos)} videos; running on {torch.npu.get_device_name(args.gpu_id)}")',
      "get_device_name initialises CUDA and raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", False,
      'print(f"done, peak memory {torch.npu.max_memory_allocated(device) / 2**30:.1f} GiB")', MAXMEM_NOTE),
])

E("sh_pipeline", "v2a/pipelines/pipeline_audioldm_guided.py", "explicit_replacement",
  "yzxing87/Seeing-and-Hearing guided AudioLDM pipeline (diffusers fork)", [])

E("sh_data", "imagebind/data.py", "explicit_replacement",
  "facebookresearch/ImageBind imagebind/data.py as vendored by Seeing-and-Hearing", [])

E("sh_joint", "joint_va/run_joint_va.py", "explicit_replacement",
  "yzxing87/Seeing-and-Hearing joint video-audio generation (AnimateDiff animate.py style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('subfolder="text_encoder").cuda()', "tensor_to_device", "replace", True,
      'text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_path, subfolder="text_encoder").npu()',
      "model placement"),
    C('subfolder="vae").cuda()', "tensor_to_device", "replace", True,
      'vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").npu()', "model placement"),
    C("unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).cuda()",
      "tensor_to_device", "replace", True,
      "unet_additional_kwargs=OmegaConf.to_container(inference_config.unet_additional_kwargs)).npu()",
      "model placement"),
    C("=assert False", "attention_kernel", "replace", True, "pass  # no xformers on NPU: keep diffusers' SDPA processors",
      "AnimateDiff idiom: without xformers the script asserts; xformers cannot be used on NPU, so the else branch "
      "must fall through to the default (SDPA) attention"),
    C('=).to("cuda")', "tensor_to_device", "replace", True, ').to("npu")', "pipeline placement"),
    C(').to(torch.device("cuda"))', "tensor_to_device", "replace", True, ').to(torch.device("npu"))',
      "pipeline placement after loading motion module / LoRA"),
    C('torch_dtype=torch.float32).to("cuda")', "tensor_to_device", "replace", True,
      'audio_pipe = AudioLDMPipeline.from_pretrained(args.audioldm, torch_dtype=torch.float32).to("npu")',
      "pipeline placement"),
    C('imagebind_huge(pretrained=True).eval().to("cuda")', "tensor_to_device", "replace", True,
      'ib_model = imagebind_model.imagebind_huge(pretrained=True).eval().to("npu")', "model placement"),
    C('torch.float32, "cuda", None)', "device_type", "replace", True,
      'torch.float32, "npu", None)', "device argument of prepare_latents"),
    C('video_pipe.scheduler.set_timesteps(args.steps, device="cuda")', "device_type", "replace", True,
      'video_pipe.scheduler.set_timesteps(args.steps, device="npu")', "timesteps tensor device"),
    C('audio_pipe.scheduler.set_timesteps(args.steps, device="cuda")', "device_type", "replace", True,
      'audio_pipe.scheduler.set_timesteps(args.steps, device="npu")', "timesteps tensor device"),
    C('score = imagebind_coupling(ib_model, frames, wave, "cuda")', "device_type", "replace", True,
      'score = imagebind_coupling(ib_model, frames, wave, "npu")', "device the ImageBind inputs are moved to"),
])

E("sh_script", "scripts/run_v2a.sh", "explicit_replacement", "yzxing87/Seeing-and-Hearing V2A run script", [
    C("=VIDEO_ROOT=data/vggsound_test_split", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN runtime libraries/paths must be on the environment before torch_npu loads"),
    C("CUDA_VISIBLE_DEVICES=${SHARD} python", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${SHARD} python v2a/v2a_imagebind_audioldm.py \\",
      "each shard relies on the mask plus --gpu_id 0; unported, all four processes land on NPU 0"),
])

# ----------------------------------------------------------------------------------------------------------------
# av-benchmark (hkchengrex/av-benchmark): FD/KL/ISC/IB-score/DeSync used by MMAudio
# ----------------------------------------------------------------------------------------------------------------
E("avb_evaluate", "av_bench/evaluate.py", "explicit_replacement", "hkchengrex/av-benchmark av_bench/evaluate.py", [
    C("device: str = 'cuda',", "device_type", "replace", True, "device: str = 'npu',",
      "default device; MMAudio's runner calls evaluate() without a device argument"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("avb_extract", "av_bench/extract.py", "explicit_replacement", "hkchengrex/av-benchmark av_bench/extract.py", [
    C("models['vggish'] = vggish.eval().cuda()", "tensor_to_device", "replace", True,
      "models['vggish'] = vggish.eval().to(device)", "hard-coded .cuda() beside the device argument"),
    C("device: str = 'cuda',", "device_type", "replace", True, "device: str = 'npu',", "default device"),
    C("torch.cuda.get_device_name()", "torch_cuda_api", "replace", True,
      "log.info(f'Extracting features from {audio_path} on {torch.npu.get_device_name()}')",
      "get_device_name initialises CUDA and raises"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):",
      "guards PaSST against an outer autocast; no NPU autocast is active on the call paths here, so inert"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "cuda.synchronize initialises CUDA and raises"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("avb_panns", "av_bench/panns.py", "explicit_replacement", "hkchengrex/av-benchmark av_bench/panns.py (PANNs CNN14)", [])
