"""Labels for probe408: text-guided image editing with diffusion (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line unchanged
fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "import torch; import torch_npu"
IMPORT_NOTE = ("entry script: torch_npu must be imported before torch.npu.* / 'npu' devices are used "
               "(only optional with the torch_npu >= 2.5.1 device-backend autoload)")
XFORMERS_NOTE = ("xformers has no NPU backend (facebookresearch/xformers #1237/#1380); the call raises on an NPU host. "
                 "Drop it - diffusers' default attention processor (SDPA) runs on NPU")
AUTOCAST_OFF_NOTE = ("autocast('cuda') on an NPU host is disabled with a warning, so the model silently runs in fp32; "
                     "results stay correct, only speed/memory differ -> performance-only")

# --------------------------------------------------------------------------------------------
# google/prompt-to-prompt
# --------------------------------------------------------------------------------------------
E("p2p_ptp_utils", "ptp_utils.py", "explicit_replacement",
  "google/prompt-to-prompt ptp_utils.py (attention hooks, text2image loop)", [])

E("p2p_seq_aligner", "seq_aligner.py", "explicit_replacement",
  "google/prompt-to-prompt seq_aligner.py (token alignment, pure CPU/numpy)", [])

E("p2p_stable", "prompt-to-prompt_stable.py", "explicit_replacement",
  "google/prompt-to-prompt prompt-to-prompt_stable.ipynb (exported to .py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True,
      "device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
      "module-level device global; unported it silently falls back to CPU on an NPU host"),
])

E("p2p_null_text", "null_text_w_ptp.py", "explicit_replacement",
  "google/prompt-to-prompt null_text_w_ptp.ipynb (Null-text inversion, exported to .py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("device = torch.device('cuda:0') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True,
      "device = torch.device('npu:0') if torch.npu.is_available() else torch.device('cpu')",
      "device global used by image2latent, LocalBlend and the controllers; unported = silent CPU run "
      "(null-text optimisation of 50x10 UNet calls on CPU)"),
])

# --------------------------------------------------------------------------------------------
# timothybrooks/instruct-pix2pix
# --------------------------------------------------------------------------------------------
E("ip2p_edit_cli", "edit_cli.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix edit_cli.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("model.eval().cuda()", "tensor_to_device", "replace", True, "model.eval().npu()",
      "Module.cuda() raises 'Torch not compiled with CUDA enabled' on the CPU torch build used with torch_npu"),
    C('with torch.no_grad(), autocast("cuda"), model.ema_scope():', "amp", "replace", False,
      'with torch.no_grad(), autocast("npu"), model.ema_scope():', AUTOCAST_OFF_NOTE),
])

E("ip2p_edit_app", "edit_app.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix edit_app.py (gradio demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("model.eval().cuda()", "tensor_to_device", "replace", True, "model.eval().npu()",
      "Module.cuda() fails on an NPU host"),
    C('with torch.no_grad(), autocast("cuda"), model.ema_scope():', "amp", "replace", False,
      'with torch.no_grad(), autocast("npu"), model.ema_scope():', AUTOCAST_OFF_NOTE),
])

E("ip2p_main", "main.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix main.py (PyTorch Lightning trainer, CUDACallback, all_gather)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.reset_peak_memory_stats(device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats(device_index)",
      "torch.cuda.* needing a CUDA device raises on the CPU torch build"),
    C("torch.cuda.synchronize(device_index)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(device_index)", "raises without CUDA; NPU timing needs the NPU sync"),
    C("torch.cuda.synchronize(trainer.strategy.root_device.index)", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize(trainer.strategy.root_device.index)", "as above, epoch-end sync"),
    C("max_memory = torch.cuda.max_memory_allocated(", "torch_cuda_api", "replace", True,
      "max_memory = torch.npu.max_memory_allocated(trainer.strategy.root_device.index) / 2 ** 20",
      "torch.cuda memory stats return {} when CUDA is uninitialised, so this silently logs 0 MiB peak memory"),
    C("local_size = torch.LongTensor([tensor.numel()]).cuda()", "tensor_to_device", "replace", True,
      "local_size = torch.LongTensor([tensor.numel()]).npu()",
      "HCCL all_gather needs NPU tensors; .cuda() raises"),
    C("size_list = [torch.LongTensor([0]).cuda() for _ in range(world_size)]", "tensor_to_device", "replace", True,
      "size_list = [torch.LongTensor([0]).npu() for _ in range(world_size)]", "as above"),
    C("tensor_list.append(torch.FloatTensor(size=(max_size,)).cuda().to(tensor_type))", "tensor_to_device",
      "replace", True, "tensor_list.append(torch.FloatTensor(size=(max_size,)).npu().to(tensor_type))",
      "as above"),
    C("padding = torch.FloatTensor(size=(max_size - local_size,)).cuda().to(tensor_type)", "tensor_to_device",
      "replace", True, "padding = torch.FloatTensor(size=(max_size - local_size,)).npu().to(tensor_type)",
      "as above"),
    C('trainer_config["accelerator"] = "gpu"', "device_type", "replace", True,
      'trainer_config["accelerator"] = "npu"',
      "Lightning's 'gpu' accelerator is CUDA-only and errors when no CUDA device exists; needs an NPU accelerator "
      "registered with Lightning under 'npu' (none ships with pytorch-lightning 1.6 - mechanism unconfirmed)"),
    C("strategy=DDPStrategy(find_unused_parameters=False),", "dist_backend", "replace", True,
      'trainer = Trainer.from_argparse_args(trainer_opt, strategy=DDPStrategy(find_unused_parameters=False, '
      'process_group_backend="hccl"),',
      "Lightning picks nccl only for cuda root devices and gloo otherwise; gloo cannot reduce NPU tensors -> set hccl"),
])

E("ip2p_train_yaml", "configs/train.yaml", "explicit_replacement",
  "timothybrooks/instruct-pix2pix configs/train.yaml", [])

E("ip2p_environment", "environment.yaml", "explicit_replacement",
  "timothybrooks/instruct-pix2pix environment.yaml (conda env)", [
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime package; useless on an Ascend host and it steers conda to the CUDA build of pytorch "
      "(torch_npu is documented against the CPU/aarch64 PyPI build) - unconfirmed that the CUDA build breaks it"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==1.11.0.post14",
      "add torch_npu under pip:, matching pytorch=1.11.0 (1.11.0.post14 <-> CANN 8.0.RC2 in the version matrix); "
      "every ported script imports it"),
])

E("ip2p_ddim", "stable_diffusion/ldm/models/diffusion/ddim.py", "explicit_replacement",
  "CompVis/stable-diffusion ldm/models/diffusion/ddim.py as vendored in instruct-pix2pix and plug-and-play", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", True,
      'if attr.device != torch.device("npu"):',
      "hard-coded cuda comparison: always true on NPU, then the next line moves buffers to cuda"),
    C('attr = attr.to(torch.device("cuda"))', "device_type", "replace", True,
      'attr = attr.to(torch.device("npu"))', "moving sampler buffers to cuda raises on an NPU host"),
])

E("ip2p_util", "stable_diffusion/ldm/modules/diffusionmodules/util.py", "explicit_replacement",
  "ldm/modules/diffusionmodules/util.py (CheckpointFunction with autocast replay, SD2-style) vendored in instruct-pix2pix", [
    C('ctx.gpu_autocast_kwargs = {"enabled": torch.is_autocast_enabled(),', "amp", "replace", True,
      'ctx.gpu_autocast_kwargs = {"enabled": torch.npu.is_autocast_enabled(),',
      "torch.is_autocast_enabled() reports the CUDA autocast state; under NPU mixed precision it is False and the "
      "checkpointed block is recomputed in fp32 during backward"),
    C('"dtype": torch.get_autocast_gpu_dtype(),', "amp", "replace", True,
      '"dtype": torch.npu.get_autocast_dtype(),',
      "reads the CUDA autocast dtype (fp16 default) instead of the NPU one; wrong recompute dtype under bf16"),
    C("torch.cuda.amp.autocast(**ctx.gpu_autocast_kwargs):", "amp", "replace", True,
      "torch.npu.amp.autocast(**ctx.gpu_autocast_kwargs):",
      "cuda autocast is disabled on an NPU host, so the backward recompute would not replay mixed precision"),
])

E("ip2p_gen_img", "dataset_creation/generate_img_dataset.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix dataset_creation/generate_img_dataset.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("model.cuda().eval()", "tensor_to_device", "replace", True, "model.npu().eval()", "Module.cuda() fails"),
    C("clip_similarity = ClipSimilarity().cuda()", "tensor_to_device", "replace", True,
      "clip_similarity = ClipSimilarity().npu()", "Module.cuda() fails"),
    C('with torch.no_grad(), torch.autocast("cuda"), model.ema_scope():', "amp", "replace", False,
      'with torch.no_grad(), torch.autocast("npu"), model.ema_scope():', AUTOCAST_OFF_NOTE),
    C('x = torch.randn(1, 4, 512 // 8, 512 // 8, device="cuda") * sigmas[0]', "device_type", "replace", True,
      'x = torch.randn(1, 4, 512 // 8, 512 // 8, device="npu") * sigmas[0]',
      "factory call with device='cuda' raises"),
])

E("ip2p_gen_sh", "scripts/generate_img_dataset_multi_gpu.sh", "explicit_replacement",
  "instruct-pix2pix README's one-partition-per-GPU dataset generation, as a launcher script", [
    C("STEPS=${STEPS:-100}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (libs, ASCEND_* vars) must be set before python starts, unless the host profile does it"),
    C("NUM_GPUS=${NUM_GPUS:-$(nvidia-smi", "device_capability_check", "replace", True,
      'NUM_GPUS=${NUM_GPUS:-$(npu-smi info -l | grep -c "NPU ID")}',
      "nvidia-smi does not exist on an Ascend host: with set -e/pipefail the script aborts (without it, 0 workers)"),
    C("CUDA_VISIBLE_DEVICES=$gpu nohup python", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu nohup python dataset_creation/generate_img_dataset.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the NPU runtime: all workers would land on npu:0 (OOM / serialised)"),
])

E("ip2p_compute_metrics", "metrics/compute_metrics.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix metrics/compute_metrics.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("self.model.eval().cuda()", "tensor_to_device", "replace", True, "self.model.eval().npu()",
      "Module.cuda() fails"),
    C('with torch.no_grad(), autocast("cuda"), self.model.ema_scope():', "amp", "replace", False,
      'with torch.no_grad(), autocast("npu"), self.model.ema_scope():', AUTOCAST_OFF_NOTE),
    C("editor = ImageEditor(config, model_path, vae_ckpt).cuda()", "tensor_to_device", "replace", True,
      "editor = ImageEditor(config, model_path, vae_ckpt).npu()", "Module.cuda() fails"),
    C("clip_similarity = ClipSimilarity().cuda()", "tensor_to_device", "replace", True,
      "clip_similarity = ClipSimilarity().npu()", "Module.cuda() fails"),
    C('gen = editor(sample["image_0"].cuda(), sample["edit"]', "tensor_to_device", "replace", True,
      'gen = editor(sample["image_0"].npu(), sample["edit"], scale_txt=scale_txt, scale_img=scale_img,',
      "Tensor.cuda() fails"),
    C('sample["image_0"][None].cuda(), gen[None].cuda(),', "tensor_to_device", "replace", True,
      'sample["image_0"][None].npu(), gen[None].npu(), [sample["input_prompt"]],', "Tensor.cuda() fails"),
])

E("ip2p_edit_dataset", "edit_dataset.py", "explicit_replacement",
  "timothybrooks/instruct-pix2pix edit_dataset.py (CPU-side dataset)", [])

# --------------------------------------------------------------------------------------------
# huggingface/diffusers examples/instruct_pix2pix
# --------------------------------------------------------------------------------------------
E("hf_train_ip2p", "examples/instruct_pix2pix/train_instruct_pix2pix.py", "device_branch_or_abstraction",
  "huggingface/diffusers examples/instruct_pix2pix/train_instruct_pix2pix.py (accelerate-based)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, IMPORT_NPU,
      "accelerate imports torch_npu itself when it detects it (is_npu_available) before any device is used; "
      "explicit import only for clarity"),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW",
      "only with --use_8bit_adam: bitsandbytes 8-bit optimizers are not listed for NPU; fall back to an "
      "(NPU fused) AdamW - opt-in path, default run unaffected"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op when CUDA is uninitialised: NPU cache is just not released after validation (memory only)"),
])

E("hf_launch", "examples/instruct_pix2pix/launch_multi_gpu.sh", "explicit_replacement",
  "diffusers examples/instruct_pix2pix README multi-GPU command, as a launcher script", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device selection is silently ignored on NPU (a user-chosen subset would not be honoured)"),
    C('NUM_PROCESSES=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      "NUM_PROCESSES=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "must count the NPU mask exported above"),
    C("export WANDB_PROJECT=${WANDB_PROJECT:-instruct-pix2pix}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", "CANN environment before accelerate launch"),
    C("--enable_xformers_memory_efficient_attention \\", "attention_kernel", "removal", True, None,
      "the script raises ValueError('xformers is not available') when this flag is passed on NPU"),
])

E("hf_accel_cfg", "examples/instruct_pix2pix/accelerate_config.yaml", "device_branch_or_abstraction",
  "accelerate `default_config.yaml` written by `accelerate config` for the multi-GPU example", [
    C("distributed_type: MULTI_GPU", "distributed_framework", "replace", False, "distributed_type: MULTI_NPU",
      "accelerate has a MULTI_NPU type; whether MULTI_GPU is re-mapped automatically on an NPU host is unconfirmed"),
])

# --------------------------------------------------------------------------------------------
# TencentARC/MasaCtrl
# --------------------------------------------------------------------------------------------
E("masa_ctrl", "masactrl/masactrl.py", "explicit_replacement",
  "TencentARC/MasaCtrl masactrl/masactrl.py (mutual self-attention controllers)", [])

E("masa_utils", "masactrl/masactrl_utils.py", "explicit_replacement",
  "TencentARC/MasaCtrl masactrl/masactrl_utils.py (attention editor registration)", [])

E("masa_pipeline", "masactrl/diffuser_utils.py", "explicit_replacement",
  "TencentARC/MasaCtrl masactrl/diffuser_utils.py (MasaCtrlPipeline, DDIM inversion)", [
    C('DEVICE = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'DEVICE = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "per-method device probe: on NPU it picks CPU while the pipeline sits on npu -> device-mismatch error"),
    C("DEVICE = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')", "device_type",
      "replace", True, "DEVICE = torch.device('npu') if torch.npu.is_available() else torch.device('cpu')",
      "same probe in __call__: token ids and initial latents would be created on CPU"),
    C('DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'DEVICE = torch.device("npu" if torch.npu.is_available() else "cpu")', "same probe in invert()"),
])

E("masa_synth", "playground.py", "explicit_replacement",
  "TencentARC/MasaCtrl playground.ipynb (exported to .py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.set_device(0)  # set the GPU device", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(0)  # set the NPU device", "torch.cuda.set_device raises on the CPU torch build"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "silent CPU fallback otherwise (and a device mismatch with MasaCtrlPipeline's own DEVICE)"),
])

E("masa_real", "playground_real.py", "explicit_replacement",
  "TencentARC/MasaCtrl playground_real.ipynb (exported to .py)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")', "env_var", "replace", False,
      'os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")',
      "ignored on NPU, but set_device(0) below already selects card 0, so single-process behaviour is unchanged"),
    C("torch.cuda.set_device(0)  # set the GPU device", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(0)  # set the NPU device", "raises without CUDA"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "silent CPU fallback otherwise"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", True,
      'print(f"Peak NPU memory: {torch.npu.max_memory_allocated(device) / 1024 ** 3:.2f} GB")',
      "returns 0 silently when CUDA is uninitialised (wrong report)"),
])

E("masa_sdxl", "run_synthesis_sdxl.py", "explicit_replacement",
  "TencentARC/MasaCtrl run_synthesis_sdxl.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "f-string cuda device"),
    C("model.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", True,
      "pass  # xformers has no NPU backend; default SDPA attention is used",
      XFORMERS_NOTE + " (on by default here: --no_xformers is opt-out)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-script cache release; no-op without CUDA, memory only"),
])

E("masa_app_utils", "gradio_app/app_utils.py", "explicit_replacement",
  "TencentARC/MasaCtrl gradio_app/app_utils.py (shared global_context)", [
    C('"device": torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu"),', "device_type",
      "replace", True, '"device": torch.device("npu:0") if torch.npu.is_available() else torch.device("cpu"),',
      "shared device for all demo tabs; silent CPU fallback otherwise"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "model swap frees cache; no-op without CUDA, memory only"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():", "status text would always read 'no GPU' on an NPU host"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info()", "raises without CUDA once the availability check is ported"),
])

E("masa_gradio", "gradio_app/real_image_editing_app.py", "explicit_replacement",
  "TencentARC/MasaCtrl gradio_app/real_image_editing_app.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('generator = torch.Generator("cuda").manual_seed(seed)', "device_type", "replace", True,
      'generator = torch.Generator("npu").manual_seed(seed)',
      "creating a CUDA generator raises on an NPU host even though the generator is unused afterwards"),
])

# --------------------------------------------------------------------------------------------
# MichalGeyer/pnp-diffusers
# --------------------------------------------------------------------------------------------
E("pnp_main", "pnp.py", "explicit_replacement",
  "MichalGeyer/pnp-diffusers pnp.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('torch_dtype=torch.float16).to("cuda")', "device_type", "replace", True,
      'pipe = StableDiffusionPipeline.from_pretrained(model_key, torch_dtype=torch.float16).to("npu")',
      "hard-coded cuda next to the config-driven self.device"),
    C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "removal", True, None, XFORMERS_NOTE),
    C('with torch.autocast(device_type="cuda", dtype=torch.float32):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float32):',
      "fp32-upcast autocast around the fp16 VAE decode; on NPU the cuda context is disabled (fp16 decode). "
      "Unconfirmed whether NPU autocast accepts a float32 target - if not, an explicit .float() upcast is the port"),
    C("@torch.autocast(device_type='cuda', dtype=torch.float32)", "amp", "replace", False,
      "@torch.autocast(device_type='npu', dtype=torch.float32)",
      "decorator around image loading / torch.load: no autocast-eligible ops inside, inert"),
    C("with torch.autocast(device_type='cuda', dtype=torch.float32):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float32):",
      "fp32 upcast of the sampling loop; precision-only difference on NPU (see decode_latent note)"),
])

E("pnp_preprocess", "preprocess.py", "explicit_replacement",
  "MichalGeyer/pnp-diffusers preprocess.py (DDIM inversion, latent saving)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('def get_text_embeds(self, prompt, negative_prompt, device="cuda"):', "device_type", "replace", True,
      'def get_text_embeds(self, prompt, negative_prompt, device="npu"):',
      "default argument is the one actually used (extract_latents does not pass device)"),
    C("=with torch.autocast(device_type='cuda', dtype=torch.float32):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float32):", "fp32 upcast of VAE decode; precision only"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float32):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float32):', "fp32 upcast of VAE encode; precision only"),
    C("# fp32 inversion is more stable", "amp", "replace", False,
      "with torch.autocast(device_type='npu', dtype=torch.float32):  # fp32 inversion is more stable",
      "fp32 upcast of the inversion loop; on NPU the inversion runs in fp16 (slightly worse reconstruction), "
      "unconfirmed that NPU autocast honours a float32 target"),
    C("with torch.autocast('cuda', dtype=torch.float32):", "amp", "replace", False,
      "with torch.autocast('npu', dtype=torch.float32):", "fp32 upcast of reconstruction sampling; precision only"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
      "device handed to Preprocess for every .to(self.device)"),
])

E("pnp_utils", "pnp_utils.py", "explicit_replacement",
  "MichalGeyer/pnp-diffusers pnp_utils.py (seeding, PnP injection hooks)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op without CUDA; torch.manual_seed on the line above also seeds the NPU generator in recent torch "
      "(custom-device seeding) - unconfirmed for old torch_npu"),
])

E("pnp_config", "config_pnp.yaml", "explicit_replacement",
  "MichalGeyer/pnp-diffusers config_pnp.yaml", [
    C("device: 'cuda'", "device_type", "replace", True, "device: 'npu'",
      "PNP(config) uses config['device'] for the scheduler, text embeddings and latents"),
])

E("pnp_requirements", "requirements.txt", "explicit_replacement",
  "MichalGeyer/pnp-diffusers requirements.txt", [
    C("=torch==2.0.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.0.1.post1",
      "torch_npu wheel must equal the torch version (2.0.1.post1 <-> CANN 7.0.0); newer pairs need a torch bump"),
    C("=xformers==0.0.20", "attention_kernel", "removal", True, None,
      "xformers pins a CUDA torch build and has no NPU backend; installing it breaks the environment"),
])

# --------------------------------------------------------------------------------------------
# MichalGeyer/plug-and-play (original, CompVis ldm based)
# --------------------------------------------------------------------------------------------
E("pnp_ldm_feat", "run_features_extraction.py", "explicit_replacement",
  "MichalGeyer/plug-and-play run_features_extraction.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()",
      "load_model_from_config is also imported by run_pnp.py; Module.cuda() fails"),
    C('device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")', "device_type",
      "replace", True, 'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")',
      "would silently move the model back to CPU"),
    C('with precision_scope("cuda"):', "amp", "replace", False, 'with precision_scope("npu"):',
      AUTOCAST_OFF_NOTE),
])

E("pnp_ldm_run", "run_pnp.py", "explicit_replacement",
  "MichalGeyer/plug-and-play run_pnp.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU, IMPORT_NOTE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.gpu)', "env_var", "removal", False, None,
      "set after torch is loaded and combined with an explicit device index; inert on NPU, and porting it to "
      "ASCEND_RT_VISIBLE_DEVICES would re-create upstream's gpu>0 bug (masked card + index opt.gpu)"),
    C('device = torch.device(f"cuda:{opt.gpu}") if torch.cuda.is_available() else torch.device("cpu")',
      "device_type", "replace", True,
      'device = torch.device(f"npu:{opt.gpu}") if torch.npu.is_available() else torch.device("cpu")',
      "silent CPU fallback otherwise"),
    C("start_code = torch.load(start_code_path).cuda()", "tensor_to_device", "replace", True,
      "start_code = torch.load(start_code_path).npu() if os.path.exists(start_code_path) else None",
      "Tensor.cuda() fails"),
    C('with precision_scope("cuda"):', "amp", "replace", False, 'with precision_scope("npu"):', AUTOCAST_OFF_NOTE),
])

E("pnp_ldm_yaml", "configs/pnp/pnp-real.yaml", "explicit_replacement",
  "MichalGeyer/plug-and-play configs/pnp/pnp-real.yaml", [])
