"""Labels for probe30 (hand-written synthetic upstream files; see ../README.md).

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

IMPORT_NOTE = "entry script: the npu device, torch.npu.* and hccl need torch_npu loaded (explicit import recommended even with autoload since 2.5.1)"
FP32_VAL = "CUDA autocast is inactive for NPU tensors; here that only means fp32 inference (correct, slower)"

# --------------------------------------------------------------------------------------------- MONAI
E("monai_spleen_train", "3d_segmentation/spleen_segmentation_3d.py", "explicit_replacement",
  "Project-MONAI/tutorials 3d_segmentation/spleen_segmentation_3d (CacheDataset on GPU, AMP, sliding window)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")',
      "model, EnsureTyped(device=device) and the validation batches all follow this device"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, 'scaler = torch.amp.GradScaler("npu")',
      "torch.cuda.amp.GradScaler disables itself without CUDA, so fp16 training would run with no loss scaling"),
    C("with torch.cuda.amp.autocast():", "amp", R, True, 'with torch.autocast("npu"):',
      "CUDA autocast is inactive for NPU tensors; the scaler/autocast pair must move together"),
    C("with torch.cuda.amp.autocast(enabled=True):", "amp", R, False, 'with torch.autocast("npu", enabled=True):',
      FP32_VAL),
])

E("monai_unet_ddp", "distributed_training/unet_training_ddp.py", "explicit_replacement",
  "Project-MONAI/tutorials distributed_training/unet_training_ddp.py (torchrun, NCCL, DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL is not available on Ascend; HCCL"),
    C('device = torch.device(f"cuda:{os.environ', "device_type", R, True,
      "device = torch.device(f\"npu:{os.environ['LOCAL_RANK']}\")", "per-rank device"),
    C("torch.cuda.set_device(device)", "torch_cuda_api", R, True, "torch.npu.set_device(device)",
      "torch.cuda.set_device raises without CUDA"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", R, True,
      'scaler = torch.amp.GradScaler("npu", enabled=args.amp)', "CUDA GradScaler disables itself on an NPU host"),
    C('with torch.autocast("cuda", enabled=args.amp):', "amp", R, True,
      'with torch.autocast("npu", enabled=args.amp):', "autocast('cuda') does not cover NPU tensors"),
    C("peak = torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_allocated(device) / 1024**3",
      "without an initialised CUDA context torch.cuda memory stats return an empty dict, so this logs 0 GB"),
    C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", R, True,
      "torch.npu.reset_peak_memory_stats(device)", "raises (expects a CUDA device) when --profile_memory is set"),
])

E("monai_bundle_train_json", "configs/train.json", "explicit_replacement",
  "MONAI model-zoo bundle spleen_ct_segmentation configs/train.json", [
    C('"$import os",', "import_torch_npu", A, True, '"$import torch_npu",',
      "the bundle's expressions use the npu device; torch_npu must be imported by the config"),
    C("\"device\": \"$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')\"", "device_type", R, True,
      "\"device\": \"$torch.device('npu:0' if torch.npu.is_available() else 'cpu')\"",
      "torch.cuda.is_available() is False on an NPU host: the whole bundle silently trains on the CPU"),
    C('"device": "cuda:0"', "tensor_to_device", R, True, '"device": "npu:0"',
      "ToDeviced moves the cached volumes to a CUDA device, fails on an NPU host"),
])

E("monai_bundle_inference_yaml", "configs/inference.yaml", "explicit_replacement",
  "MONAI model-zoo bundle swin_unetr_btcv_segmentation configs/inference.yaml", [
    C("=- $import os", "import_torch_npu", A, True, "- $import torch_npu",
      "the bundle's expressions use the npu device; torch_npu must be imported by the config"),
    C("device: \"$torch.device('cuda' if torch.cuda.is_available() else 'cpu')\"", "device_type", R, True,
      "device: \"$torch.device('npu' if torch.npu.is_available() else 'cpu')\"",
      "falls back to the CPU on an NPU host"),
    C("=device: cuda", "tensor_to_device", R, True, "device: npu", "EnsureTyped(device='cuda') fails on an NPU host"),
    C("map_location: cuda:0", "tensor_to_device", R, True, "map_location: npu:0",
      "CheckpointLoader map_location to a CUDA device fails on an NPU host"),
])

E("monai_gmm_extension", "monai/networks/layers/gmm.py", "kernel_rewrite",
  "MONAI networks/layers/gmm.py + _extensions/loader.py (JIT-built GMM CUDA extension, custom autograd Function)", [
    C("=if torch.cuda.is_available():", "custom_cuda_extension", R, False,
      "if torch.cuda.is_available():  # no .cu sources on NPU: GaussianMixtureModel is rewritten in torch",
      "on an NPU host only the .cpp sources are gathered; harmless once the GMM no longer uses the loader"),
    C('load, _ = optional_import("torch.utils.cpp_extension", name="load")', "custom_cuda_extension", R, True,
      "# NPU: no JIT build (cpp_extension.load is marked unsupported on A2/A3); use the torch implementation",
      "torch.utils.cpp_extension.load is ✘ in Ascend's 2.7.1 list and there is no nvcc"),
    C("=if not torch.cuda.is_available():", "device_type", X, True, None,
      "the guard (and its NotImplementedError) raises on every NPU host; the torch EM implementation runs on any device"),
    C("self.compiled_extension = load_module(", "custom_cuda_extension", R, True,
      "self.impl = _TorchGMM(channel_count, mixture_count, mixture_size)",
      "JIT-compiles the CUDA kernels; replace with a torch implementation of the EM fit"),
    C("=self.params, self.scratch = self.compiled_extension.init()", "custom_cuda_extension", R, True,
      "self.params = self.impl.init_params()", "call into the compiled extension"),
    C("self.params, self.scratch = self.compiled_extension.init()  # fresh", "custom_cuda_extension", R, True,
      "self.params = self.impl.init_params()", "call into the compiled extension"),
    C("self.compiled_extension.learn(self.params, self.scratch, features, labels)", "custom_cuda_extension", R, True,
      "self.params = self.impl.learn(features, labels)", "call into the compiled extension"),
    C("return compiled_extension.apply(params, features)", "custom_cuda_extension", R, True,
      "return impl.apply(params, features)", "custom autograd Function forward calls the compiled extension"),
])

E("monai_filtering", "monai/networks/layers/filtering.py", "kernel_rewrite",
  "MONAI networks/layers/filtering.py (BilateralFilter / PHLFilter / TrainableBilateralFilter over monai._C)", [
    C("output_data = _C.bilateral_filter(input, spatial_sigma, color_sigma, fast_approx)", "custom_cuda_extension",
      R, True,
      "output_data = _C.bilateral_filter(input.cpu(), spatial_sigma, color_sigma, fast_approx).to(input.device)",
      "monai._C has CPU and CUDA kernels only; an NPU tensor would be handed to the CPU kernel (host round trip or a rewrite)"),
    C("grad_input = _C.bilateral_filter(grad_output, spatial_sigma, color_sigma, fast_approx)",
      "custom_cuda_extension", R, True,
      "grad_input = _C.bilateral_filter(grad_output.cpu(), spatial_sigma, color_sigma, fast_approx).to(grad_output.device)",
      "same extension call in backward"),
    C("output_data = _C.phl_filter(input, scaled_features)", "custom_cuda_extension", R, True,
      "output_data = _C.phl_filter(input.cpu(), scaled_features.cpu()).to(input.device)",
      "permutohedral-lattice filter from monai._C"),
    C("do_dsig_z = _C.tbf_forward(", "custom_cuda_extension", R, True,
      "outs = _C.tbf_forward(input_img.cpu(), sigma_x.cpu(), sigma_y.cpu(), sigma_z.cpu(), color_sigma.cpu())",
      "trainable bilateral filter forward kernel (outputs moved back to input_img.device)"),
    C("grad_output_tensor = _C.tbf_backward(", "custom_cuda_extension", R, True,
      "grad_output_tensor = _C.tbf_backward(*[t.cpu() for t in (grad_output, input_img, output_tensor, output_weights_tensor, do_dx_ki, sigma_x, sigma_y, sigma_z, color_sigma)]).to(grad_output.device)",
      "trainable bilateral filter backward kernel"),
])

E("swin_unetr_trainer", "BTCV/trainer.py", "explicit_replacement",
  "Project-MONAI/research-contributions SwinUNETR/BTCV/trainer.py (cuda(args.rank), torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "Tensor.npu() needs torch_npu loaded"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", R, True,
      "from torch.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler are inactive on NPU tensors (fp16 without loss scaling under --amp)"),
    C("data, target = data.cuda(args.rank), target.cuda(args.rank)", "tensor_to_device", R, True,
      "data, target = data.npu(args.rank), target.npu(args.rank)", ".cuda() raises on an NPU host"),
    C("data.cuda(args.rank, non_blocking=True)", "tensor_to_device", R, True,
      "data, target = data.npu(args.rank, non_blocking=True), target.npu(args.rank, non_blocking=True)",
      ".cuda() raises on an NPU host"),
    C("if not logits.is_cuda:", "device_type", R, True, "if logits.device.type == 'cpu':",
      "NPU logits are not is_cuda, so the target would be moved to the host and the metric mixes devices"),
    C("acc = acc.cuda(args.rank)", "tensor_to_device", R, True, "acc = acc.npu(args.rank)",
      ".cuda() raises on an NPU host"),
])

E("monai_gen_attention", "generative/networks/blocks/attention.py", "device_branch_or_abstraction",
  "MONAI GenerativeModels diffusion_model_unet attention blocks (xformers memory_efficient_attention flag)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed for the optional torch_npu fused GroupNorm+SiLU"),
    C("if use_flash_attention and not has_xformers:", "attention_kernel", X, True, None,
      "xformers has no NPU backend; the flash path is served by SDPA / npu_fusion_attention instead, so this check must go"),
    C("if use_flash_attention is True and not torch.cuda.is_available():", "device_type", R, True,
      "if use_flash_attention is True and not (torch.cuda.is_available() or torch.npu.is_available()):",
      "raises ValueError on an NPU host whenever a config asks for flash attention"),
    C("x = xformers.ops.memory_efficient_attention(query, key, value, attn_bias=None)", "attention_kernel", R, True,
      "x = F.scaled_dot_product_attention(query[:, None], key[:, None], value[:, None])[:, 0]",
      "xformers cannot run on NPU; SDPA dispatches to the NPU flash-attention kernel"),
    C("attention_scores = torch.baddbmm(", "attention_kernel", R, False,
      "x = F.scaled_dot_product_attention(query, key, value, scale=self.scale)",
      "performance (and msFmkTransplt's precision advice on torch.baddbmm); the math path itself works"),
    C("h = F.silu(self.norm1(x))", "npu_fused_op", R, False,
      "h = torch_npu.npu_group_norm_silu(x, self.norm1.weight, self.norm1.bias, self.norm1.num_groups, self.norm1.eps)[0]",
      "optional fused GroupNorm+SiLU; unconfirmed for 5-D (3-D volume) inputs"),
    C("h = F.silu(self.norm2(h))", "npu_fused_op", R, False,
      "h = torch_npu.npu_group_norm_silu(h, self.norm2.weight, self.norm2.bias, self.norm2.num_groups, self.norm2.eps)[0]",
      "optional fused GroupNorm+SiLU; unconfirmed for 5-D (3-D volume) inputs"),
])

# --------------------------------------------------------------------------------------------- nnU-Net
E("nnunet_trainer", "nnunetv2/training/nnUNetTrainer/nnUNetTrainer.py", "device_branch_or_abstraction",
  "MIC-DKFZ/nnUNet v2 nnUNetTrainer.py (device.type == 'cuda' branches for AMP, pin_memory, DDP)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the ported trainer builds torch.device('npu', ...) itself"),
    C("from torch.cuda import device_count", "torch_cuda_api", R, False, "from torch.npu import device_count",
      "only used in a log line (would report 0 devices)"),
    C("from torch.cuda.amp import GradScaler", "amp", R, True, "from torch.amp import GradScaler",
      "the CUDA GradScaler disables itself without CUDA; the ported scaler must be built for 'npu'"),
    C("device: torch.device = torch.device('cuda')):", "device_type", R, False,
      "device: torch.device = torch.device('npu')):", "default only; run_training passes the device explicitly"),
    C("self.device = torch.device(type='cuda', index=self.local_rank)", "device_type", R, True,
      "self.device = torch.device(type='npu', index=self.local_rank)",
      "DDP ranks are forced onto a CUDA device, fails on an NPU host"),
    C("=if self.device.type == 'cuda':", "device_type", R, False, "if self.device.type in ('cuda', 'npu'):",
      "only pins device index 0; an un-indexed npu device works too"),
    C("self.device = torch.device(type='cuda', index=0)", "device_type", R, False,
      "self.device = torch.device(type=self.device.type, index=0)", "paired with the branch above"),
    C("self.grad_scaler = GradScaler() if self.device.type == 'cuda' else None", "amp", R, True,
      "self.grad_scaler = GradScaler('npu') if self.device.type == 'npu' else None",
      "no scaler on NPU; together with the autocast branch below NPU training silently runs in fp32, "
      "with the plans' patch/batch size sized for fp16 activations"),
    C("self.network = torch.compile(self.network)", "compile_mode", R, False,
      "self.network = torch.compile(self.network, backend='inductor')  # or disable via nnUNet_compile=f",
      "compile is on by default in this trainer; Inductor on NPU needs torch_npu >= 2.6 (graph mode), unconfirmed on older stacks"),
    C("loss.dc = torch.compile(loss.dc)", "compile_mode", R, False,
      "loss.dc = torch.compile(loss.dc, backend='inductor')",
      "same as the network compile; unconfirmed on older torch_npu"),
    C("pin_memory=self.device.type == 'cuda', wait_time=0.002)", "pin_memory", R, False,
      "pin_memory=self.device.type in ('cuda', 'npu'), wait_time=0.002)",
      "performance only: batches are not pinned on NPU"),
    C("=pin_memory=self.device.type == 'cuda',", "pin_memory", R, False,
      "pin_memory=self.device.type in ('cuda', 'npu'),", "performance only (validation augmenter)"),
    C("=with autocast(self.device.type, enabled=True) if self.device.type == 'cuda' else dummy_context():", "amp", R, True,
      "with autocast(self.device.type, enabled=True) if self.device.type in ('cuda', 'npu') else dummy_context():",
      "no autocast on NPU: fp32 training, ~2x slower and may not fit the patch size planned for fp16"),
    C("else dummy_context():  # val", "amp", R, False,
      "with autocast(self.device.type, enabled=True) if self.device.type in ('cuda', 'npu') else dummy_context():  # val",
      FP32_VAL),
])

E("nnunet_run_training", "nnunetv2/run/run_training.py", "device_branch_or_abstraction",
  "MIC-DKFZ/nnUNet v2 run/run_training.py (-device cuda/cpu/mps, mp.spawn DDP with NCCL)", [
    C("=import torch.cuda", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device: torch.device = torch.device(type='cuda')):", "device_type", R, False,
      "device: torch.device = torch.device(type='npu')):",
      "default used by the DDP path, but the trainer re-derives the rank's device there"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", R, True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL -> HCCL"),
    C("torch.cuda.set_device(torch.device('cuda', dist.get_rank()))", "torch_cuda_api", R, True,
      "torch.npu.set_device(torch.device('npu', dist.get_rank()))", "raises without CUDA"),
    C("device: torch.device = torch.device('cuda')):", "device_type", R, False,
      "device: torch.device = torch.device('npu')):", "default only; the entry point passes the device"),
    C("assert device.type == 'cuda', f\"DDP training", "device_type", R, True,
      "assert device.type in ('cuda', 'npu'), f\"DDP training (triggered by num_gpus > 1) is only implemented for cuda/npu devices. Your device: {device}\"",
      "multi-NPU training trips this assertion"),
    C("parser.add_argument('-device', type=str, default='cuda', required=False,", "device_type", R, True,
      "parser.add_argument('-device', type=str, default='npu', required=False,",
      "the default run picks a CUDA device on an NPU host"),
    C("assert args.device in ['cpu', 'cuda', 'mps']", "device_type", R, True,
      "assert args.device in ['cpu', 'cuda', 'mps', 'npu'], f'-device must be either cpu, mps, cuda or npu. Got: {args.device}.'",
      "'npu' is rejected"),
    C("elif args.device == 'cuda':", "device_type", B, True,
      "elif args.device == 'npu':\n        torch.set_num_threads(1)\n        torch.set_num_interop_threads(1)\n        device = torch.device('npu')",
      "add the npu branch (same thread settings as the GPU branch)"),
])

E("nnunet_predictor", "nnunetv2/inference/predict_from_raw_data.py", "device_branch_or_abstraction",
  "MIC-DKFZ/nnUNet v2 inference/predict_from_raw_data.py (nnUNetPredictor, perform_everything_on_device)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("device: torch.device = torch.device('cuda'),", "device_type", R, False,
      "device: torch.device = torch.device('npu'),",
      "default only; the entry point and TotalSegmentator pass the device"),
    C("=if device.type == 'cuda':", "device_type", R, False, "if device.type in ('cuda', 'npu'):",
      "otherwise perform_everything_on_device is switched off on NPU: logits are aggregated on the host (slower, same result)"),
    C("with torch.autocast(self.device.type, enabled=True) if self.device.type == 'cuda' else dummy_context():",
      "amp", R, False,
      "with torch.autocast(self.device.type, enabled=True) if self.device.type in ('cuda', 'npu') else dummy_context():",
      FP32_VAL),
    C("parser.add_argument('-device', type=str, default='cuda', required=False,", "device_type", R, True,
      "parser.add_argument('-device', type=str, default='npu', required=False,",
      "the default run picks a CUDA device on an NPU host"),
    C("assert args.device in ['cpu', 'cuda', 'mps']", "device_type", R, True,
      "assert args.device in ['cpu', 'cuda', 'mps', 'npu'], f'-device must be either cpu, mps, cuda or npu. Got: {args.device}.'",
      "'npu' is rejected"),
    C("elif args.device == 'cuda':", "device_type", B, True,
      "elif args.device == 'npu':\n        torch.set_num_threads(1)\n        torch.set_num_interop_threads(1)\n        device = torch.device('npu')",
      "add the npu branch"),
])

E("nnunet_planner", "nnunetv2/experiment_planning/experiment_planners/default_experiment_planner.py",
  "explicit_replacement",
  "MIC-DKFZ/nnUNet v2 default_experiment_planner.py (VRAM-target patch/batch planning; device-agnostic)", [])

# --------------------------------------------------------------------------------------------- SAM family
E("sam_export_onnx", "scripts/export_onnx_model.py", "explicit_replacement",
  "facebookresearch/segment-anything scripts/export_onnx_model.py (+ MedSAM-style encoder export; host-only)", [])

E("sam2_misc", "sam2/utils/misc.py", "device_branch_or_abstraction",
  "facebookresearch/sam2 sam2/utils/misc.py (get_sdpa_settings, _C connected components, JPEG frame loader)", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed if the default compute_device is changed to npu"),
    C("=if torch.cuda.is_available():", "device_type", B, False,
      "if torch.cuda.is_available():  # (NPU hosts take the else branch: flags unused once sdp_kernel is gone)",
      "an NPU host lands in the CPU defaults; they only feed the sdp_kernel context that the NPU port drops"),
    C("old_gpu = torch.cuda.get_device_properties(0).major < 7", "device_capability_check", R, False,
      "old_gpu = False",
      "not reached on an NPU host; under transfer_to_npu it would be, and NPU properties have no .major"),
    C("use_flash_attn = torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", R, False,
      "use_flash_attn = True", "same as above"),
    C("return _C.get_connected_componnets(mask.to(torch.uint8).contiguous())", "custom_cuda_extension", R, False,
      "return _connected_components_cpu(mask)  # e.g. cv2.connectedComponentsWithStats per mask",
      "sam2._C is a CUDA kernel; fill_holes_in_mask_scores catches the failure and skips hole filling"),
    C('compute_device=torch.device("cuda"),', "device_type", R, False, 'compute_device=torch.device("npu"),',
      "default only; the video predictor passes its own device"),
    C('compute_device=torch.device("cuda", 0),', "device_type", R, False, 'compute_device=torch.device("npu", 0),',
      "default only; the video predictor passes its own device"),
])

E("sam2_transformer", "sam2/modeling/sam/transformer.py", "device_branch_or_abstraction",
  "facebookresearch/sam2 modeling/sam/transformer.py (sdp_kernel context with a try/except fallback, RoPE attention)", [
    C("return torch.backends.cuda.sdp_kernel(", "attention_kernel", R, False,
      "return contextlib.nullcontext()  # NPU: SDPA picks its own kernel",
      "sdp_kernel is ✘ in Ascend's list, but _sdpa() already falls back to plain SDPA when the context fails"),
])

E("sam2_build", "sam2/build_sam.py", "explicit_replacement",
  "facebookresearch/sam2 sam2/build_sam.py (device='cuda' defaults, VOS-optimised compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu",
      "the builders now default to the npu device; callers (notebooks) often import only sam2"),
    C('=device="cuda",', "device_type", R, True, 'device="npu",',
      "the README usage build_sam2(cfg, ckpt) relies on this default"),
    C('device="cuda",  # str or torch.device', "device_type", R, True, 'device="npu",  # str or torch.device',
      "build_sam2_video_predictor(cfg, ckpt) relies on this default"),
    C('"++model.compile_image_encoder=True",', "compile_mode", R, False,
      '"++model.compile_image_encoder=False",  # NPU: compile only with torch_npu >= 2.6',
      "unconfirmed: the VOS predictor compiles the image encoder with Inductor"),
])

E("medsam2_infer", "medsam2_infer_3D_CT.py", "explicit_replacement",
  "bowang-lab/MedSAM2 3D CT inference script (SAM2 video predictor over slices, global bf16 autocast)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.manual_seed(2024)", "torch_cuda_api", R, False, "torch.npu.manual_seed(2024)",
      "lazily queued, harmless without CUDA"),
    C('parser.add_argument("--device", type=str, default="cuda:0"', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu:0", help="NPU used for the predictor")',
      "the predictor is built on this device"),
    C('torch.autocast(device_type="cuda", dtype=torch.bfloat16).__enter__()', "amp", R, False,
      'torch.autocast(device_type="npu", dtype=torch.bfloat16).__enter__()',
      "autocast('cuda') is disabled with a warning on an NPU host: fp32 inference (correct, slower)"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", R, True,
      "if False:  # TF32 switches are CUDA-only; NPU matmuls are unaffected",
      "torch.cuda.get_device_properties raises without CUDA (and NPU properties have no .major)"),
    C("img_resized = torch.from_numpy(img_resized).cuda()", "tensor_to_device", R, True,
      "img_resized = torch.from_numpy(img_resized).to(args.device)", ".cuda() raises on an NPU host"),
    C("img_mean_t = torch.tensor(img_mean, dtype=torch.float32)[:, None, None].cuda()", "tensor_to_device", R, True,
      "img_mean_t = torch.tensor(img_mean, dtype=torch.float32)[:, None, None].to(args.device)",
      ".cuda() raises on an NPU host"),
    C('with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):', "amp", R, False,
      'with torch.inference_mode(), torch.autocast("npu", dtype=torch.bfloat16):', FP32_VAL),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "no-op without CUDA; the NPU cache is not released between volumes"),
])

E("medsam_train_multi_gpus", "train_multi_gpus.py", "transfer_to_npu",
  "bowang-lab/MedSAM train_multi_gpus.py (mp.spawn per GPU, NCCL, mem_get_info logging)", [
    C("=import torch", "import_torch_npu", A, True,
      "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu",
      "entry script; transfer_to_npu would cover most of the lines below (explicit replacements given)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op at import time"),
    C("ngpus_per_node = torch.cuda.device_count()", "torch_cuda_api", R, True,
      "ngpus_per_node = torch.npu.device_count()", "returns 0 on an NPU host: mp.spawn starts no worker"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(gpu)", "raises without CUDA"),
    C('device = torch.device("cuda:{}".format(gpu))', "device_type", R, False,
      'device = torch.device("npu:{}".format(gpu))', "the variable is never used afterwards"),
    C('backend="nccl", init_method=args.init_method', "dist_backend", R, True,
      'backend="hccl", init_method=args.init_method, rank=rank, world_size=world_size', "NCCL -> HCCL"),
    C("=).cuda()", "tensor_to_device", R, True, ").npu()", "Module.cuda() raises on an NPU host"),
    C("=cuda_mem_info = torch.cuda.mem_get_info(gpu)", "torch_cuda_api", R, True,
      "cuda_mem_info = torch.npu.mem_get_info(gpu)", "mem_get_info needs a CUDA context, raises"),
    C("cuda_mem_info = torch.cuda.mem_get_info(gpu)  # after epoch", "torch_cuda_api", R, True,
      "cuda_mem_info = torch.npu.mem_get_info(gpu)  # after epoch", "mem_get_info needs a CUDA context, raises"),
    C('os.system("nvidia-smi")', "torch_cuda_api", R, False, 'os.system("npu-smi info")',
      "prints 'not found' and returns non-zero; nothing else depends on it"),
    C('loc = "cuda:{}".format(gpu)', "device_type", R, True, 'loc = "npu:{}".format(gpu)',
      "map_location for --resume points at a CUDA device"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, 'scaler = torch.amp.GradScaler("npu")',
      "CUDA GradScaler disables itself on an NPU host: fp16 without loss scaling"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):', "autocast('cuda') does not cover NPU tensors"),
    C("image, gt2D = image.cuda(), gt2D.cuda()", "tensor_to_device", R, True,
      "image, gt2D = image.npu(), gt2D.npu()", ".cuda() raises on an NPU host"),
])

E("samhq_train", "train/train.py", "explicit_replacement",
  "SysCV/sam-hq train/train.py (HQ decoder training on a frozen SAM, DETR-style launcher)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('parser.add_argument("--device", type=str, default="cuda",', "device_type", R, True,
      'parser.add_argument("--device", type=str, default="npu",', "SAM and the HQ decoder are moved to this device"),
    C("if torch.cuda.is_available():  # move before wrapping", "device_type", R, True,
      "if torch.npu.is_available():  # move before wrapping",
      "skipped on an NPU host: DDP(device_ids=[gpu]) then wraps a CPU module and fails"),
    C("=net.cuda()", "tensor_to_device", R, True, "net.npu()", "Module.cuda() raises on an NPU host"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "skipped on an NPU host: labels stay on the host while the HQ decoder output is on the NPU"),
    C("inputs = inputs.cuda()", "tensor_to_device", R, True, "inputs = inputs.npu()", "see the branch above"),
    C("labels = labels.cuda()", "tensor_to_device", R, True, "labels = labels.npu()", "see the branch above"),
])

E("samhq_misc", "train/utils/misc.py", "explicit_replacement",
  "SysCV/sam-hq train/utils/misc.py (DETR/torchvision-reference distributed helpers, fp64 SmoothedValue sync)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module builds tensors on the npu device"),
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", R, True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float32, device='npu')",
      "CUDA device string fails; Ascend's all_reduce accepts bf16/fp16/fp32/int32/int64/bool only, so fp64 -> fp32"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", R, True,
      'tensor = torch.ByteTensor(storage).to(torch.int8).to("npu")',
      "CUDA device string; Ascend's all_gather list has no uint8 (int8 is listed)"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", R, True,
      'local_size = torch.tensor([tensor.numel()], dtype=torch.int32, device="npu")',
      "CUDA device string; all_gather on Ascend lists int32, not int64"),
    C('size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]', "tensor_to_device", R, True,
      'size_list = [torch.tensor([0], dtype=torch.int32, device="npu") for _ in range(world_size)]',
      "must match local_size"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", R, True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.int8, device="npu"))', "see ByteTensor above"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device",
      R, True, 'padding = torch.empty(size=(max_size - local_size,), dtype=torch.int8, device="npu")',
      "see ByteTensor above"),
    C("args.gpu = args.rank % torch.cuda.device_count()", "torch_cuda_api", R, True,
      "args.gpu = args.rank % torch.npu.device_count()", "device_count() is 0 on an NPU host: ZeroDivisionError under SLURM"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)",
      "raises without CUDA"),
    C("args.dist_backend = 'nccl'", "dist_backend", R, True, "args.dist_backend = 'hccl'", "NCCL -> HCCL"),
    C("diff).cuda() * box_noise_scale", "tensor_to_device", R, True,
      "known_bbox_expand += torch.mul((torch.rand_like(known_bbox_expand) * 2 - 1.0), diff) * box_noise_scale",
      ".cuda() raises on an NPU host (the tensor is already on the boxes' device)"),
])

# --------------------------------------------------------------------------------------------- Mask2Former / SegFormer
E("m2f_ms_deform_attn", "mask2former/modeling/pixel_decoder/ops/modules/ms_deform_attn.py", "kernel_rewrite",
  "facebookresearch/Mask2Former pixel_decoder/ops MSDeformAttn (Deformable-DETR CUDA op + PyTorch core)", [
    C("raise ModuleNotFoundError(info_string)", "custom_cuda_extension", R, True,
      "MSDA = None  # no NPU build: MSDeformAttn falls back to ms_deform_attn_core_pytorch",
      "the CUDA op cannot be built on an NPU host and the import error aborts the whole model"),
    C("output = MSDeformAttnFunction.apply(", "custom_cuda_extension", R, False,
      "output = ms_deform_attn_core_pytorch(value, input_spatial_shapes, sampling_locations, attention_weights)",
      "the bare except already falls back to the grid_sample path; a fused NPU kernel (DrivingSDK/mx_driving) is unconfirmed"),
])

E("m2f_ops_setup", "mask2former/modeling/pixel_decoder/ops/setup.py", "kernel_rewrite",
  "Mask2Former / Deformable-DETR ops/setup.py (MultiScaleDeformableAttention CUDAExtension)", [
    C("raise NotImplementedError('CUDA_HOME is None.", "custom_cuda_extension", R, True,
      "pass  # NPU host: build the C++ stub only (or skip the build); MSDeformAttn uses the PyTorch path",
      "no CUDA toolkit on an NPU host: `sh make.sh` aborts the install"),
    C("raise NotImplementedError('No CUDA runtime is found.", "custom_cuda_extension", R, False,
      "pass  # NPU host with a stray CUDA toolkit: same as above",
      "only reached when a CUDA toolkit happens to be installed on the NPU host"),
])

E("m2f_matcher", "mask2former/modeling/matcher.py", "explicit_replacement",
  "facebookresearch/Mask2Former modeling/matcher.py (Hungarian matcher with autocast disabled for the costs)", [
    C("from torch.cuda.amp import autocast", "amp", R, True, "from torch.npu.amp import autocast",
      "under NPU mixed precision the CUDA autocast(enabled=False) does not leave NPU autocast: the point-sampled "
      "sigmoid-CE/dice costs would be computed in fp16"),
])

E("mmseg_train_api", "mmseg/apis/train.py", "device_branch_or_abstraction",
  "NVlabs/SegFormer fork of mmsegmentation 0.x mmseg/apis/train.py (MMDataParallel / MMDistributedDataParallel)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "module places the model on the npu device"),
    C("def init_random_seed(seed=None, device='cuda'):", "device_type", R, True,
      "def init_random_seed(seed=None, device='npu'):",
      "tools/train.py calls it without a device; the broadcast tensor is created on CUDA when world_size > 1"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "lazily queued, harmless without CUDA"),
    C("model = MMDistributedDataParallel(", "distributed_framework", R, False,
      "model = NPUDistributedDataParallel(  # mmcv.device.npu",
      "unconfirmed: mmcv 1.x scatters inputs with CUDA streams; newer mmcv ships an NPU wrapper"),
    C("=model.cuda(),", "tensor_to_device", R, True, "model.npu(),", "Module.cuda() raises on an NPU host"),
    C("device_ids=[torch.cuda.current_device()],", "torch_cuda_api", R, True,
      "device_ids=[torch.npu.current_device()],", "current_device() raises without CUDA"),
    C("model = MMDataParallel(", "unsupported_op_workaround", R, True,
      "model = NPUDataParallel(  # single device; DataParallel is unsupported on Ascend",
      "torch.nn.DataParallel (under MMDataParallel) is ✘ in Ascend's list"),
    C("model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "tensor_to_device", R, True,
      "model.npu(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)", "Module.cuda() raises on an NPU host"),
    C("optimizer_config = Fp16OptimizerHook(", "amp", R, False,
      "optimizer_config = Fp16OptimizerHook(  # needs an NPU-aware mmcv (torch.npu.amp)",
      "unconfirmed: mmcv's hook uses torch.cuda.amp, which is inactive on NPU (fp32 without loss scaling)"),
])

E("segformer_config", "local_configs/segformer/B5/segformer.b5.1024x1024.city.160k.py", "explicit_replacement",
  "NVlabs/SegFormer local_configs segformer.b5.1024x1024.city.160k.py (flattened mmseg 0.x config)", [
    C("dist_params = dict(backend='nccl')", "dist_backend", R, True, "dist_params = dict(backend='hccl')",
      "mmcv 1.x init_dist passes the backend straight to init_process_group"),
])

E("segformer_hf_finetune", "examples/semantic-segmentation/run_segformer_no_trainer.py",
  "device_branch_or_abstraction",
  "huggingface/transformers run_semantic_segmentation_no_trainer.py adapted to SegFormer on 2D medical masks (Accelerate)",
  [])

# --------------------------------------------------------------------------------------------- TotalSegmentator
E("totalseg_python_api", "totalsegmentator/python_api.py", "device_branch_or_abstraction",
  "wasserth/TotalSegmentator python_api.py (gpu, gpu:X, cpu, mps device mapping, CPU fallback)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", "public API entry point; builds npu devices"),
    C("return f\"cuda:{device.split(':')[1]}\"", "device_type", R, True,
      "return f\"npu:{device.split(':')[1]}\" if hasattr(torch, 'npu') and torch.npu.is_available() else f\"cuda:{device.split(':')[1]}\"",
      "'gpu:X' is mapped to CUDA and then silently falls back to the CPU below"),
    C('=device = "cuda"', "device_type", R, True,
      'device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cuda"',
      "'gpu' (the CLI default) is mapped to CUDA"),
    C('if device.startswith("cuda"):', "device_type", R, True, 'if device.startswith(("cuda", "npu")):',
      "the accelerator branch only knows CUDA"),
    C("if not torch.cuda.is_available():", "device_type", R, True,
      "if not (torch.cuda.is_available() or torch.npu.is_available()):",
      "NPU host prints 'No GPU detected' and runs the whole segmentation on the CPU"),
    C('device_id = int(device[5:]) if device.startswith("cuda:") else 0', "device_type", R, True,
      'device_id = int(device.split(":")[1]) if ":" in device else 0',
      "the [5:] slice assumes the 'cuda:' prefix"),
    C('return torch.device("cuda", device_id)', "device_type", R, True,
      'return torch.device(device.split(":")[0], device_id)', "builds a CUDA device"),
    C('if device.type == "cuda" and not fast and not fastest and gpu_memory_gb(device) < 7.5:', "device_type", R,
      False, 'if device.type in ("cuda", "npu") and not fast and not fastest and gpu_memory_gb(device) < 7.5:',
      "memory check skipped on NPU (Ascend training cards have 32 GB or more)"),
    C('if device.type != "cuda":', "device_type", R, False, 'if device.type not in ("cuda", "npu"):',
      "only reached through the check above"),
    C("return torch.cuda.get_device_properties(device.index or 0).total_memory / 1024 ** 3", "torch_cuda_api", R,
      False, "return torch.npu.get_device_properties(device.index or 0).total_memory / 1024 ** 3",
      "total_memory is one of the properties NPU exposes"),
    C('=if device.type == "cuda":', "device_type", R, False, 'if device.type in ("cuda", "npu"):',
      "cache release skipped on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", "no-op without CUDA"),
    C('if verbose and device.type == "cuda":', "device_type", R, False, 'if verbose and device.type in ("cuda", "npu"):',
      "verbose memory log only"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, False,
      'print(f"peak NPU memory: {torch.npu.max_memory_allocated(device) / 1024 ** 3:.1f} GB")', "verbose memory log only"),
])

E("totalseg_dockerfile", "Dockerfile", "explicit_replacement",
  "TotalSegmentator-style Dockerfile (pytorch/pytorch CUDA runtime base, cupy/cucim extras)", [
    C("FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime", "device_type", R, True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image; an image with CANN (driver mounted from the host) is needed; image tag unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES (or mount /dev/davinci*)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
    C("RUN pip install --no-cache-dir --upgrade pip setuptools wheel \\", "import_torch_npu", A, True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post12 pyyaml \"numpy<2\"",
      "the CANN base has no torch: install torch plus the matching torch_npu wheel (version pairs per the matrix)"),
    C("RUN pip install --no-cache-dir cupy-cuda12x==13.0.0 cucim-cu12==24.2.0", "unsupported_op_workaround", X, True,
      None, "cupy/cucim have no Ascend build; the code must take its CPU resampling path"),
    C("assert torch.version.cuda is not None", "device_type", R, True,
      "RUN python -c \"import torch, torch_npu; print(torch.__version__, torch_npu.__version__)\"",
      "torch + torch_npu is not a CUDA build: the assert fails the image build"),
])

E("medseg_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a MONAI / nnU-Net / MedSAM 3D-segmentation research repo pinned to cu118", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; x86 Ascend hosts take CPU torch from /whl/cpu, aarch64 hosts plain PyPI"),
    C("--extra-index-url https://pypi.nvidia.com", "device_type", X, False, None,
      "only serves NVIDIA packages (DALI)"),
    C("torch==2.1.2+cu118", "device_type", R, True, "torch==2.1.0",
      "CUDA wheel; torch_npu 2.1.0.postN pairs with torch 2.1.0 (there is no 2.1.2 build)"),
    C("torchvision>=0.16.0", "import_torch_npu", A, True, "torch-npu==2.1.0.post12",
      "the NPU backend itself (wheel version = torch version + .postN)"),
    C("monai[nibabel,tqdm,einops,cucim]==1.3.0", "unsupported_op_workaround", R, False,
      "monai[nibabel,tqdm,einops]==1.3.0", "cucim is a CUDA image library; MONAI imports it optionally"),
    C("cupy-cuda11x==12.3.0", "unsupported_op_workaround", X, True, None, "cupy has no Ascend support"),
    C("nvidia-dali-cuda110==1.31.0", "unsupported_op_workaround", X, False, None,
      "unconfirmed: NVIDIA DALI is CUDA-only; drop and keep the CPU pipeline"),
    C("xformers==0.0.23.post1", "attention_kernel", X, True, None,
      "no NPU backend; its wheels also pin a CUDA torch"),
    C("flash-attn==2.3.6", "attention_kernel", X, True, None, "cannot be installed on NPU (needs nvcc)"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "Triton kernels need triton-ascend (version tied to the CANN release)"),
    C("onnxruntime-gpu==1.16.3", "unsupported_op_workaround", R, False, "onnxruntime==1.16.3",
      "unconfirmed: CUDA execution-provider build; the CPU package (or a CANN EP build) instead"),
    C("tensorrt==8.6.1", "unsupported_op_workaround", X, False, None, "unconfirmed: NVIDIA-only deployment runtime"),
    C("pynvml==11.5.0", "torch_cuda_api", X, False, None,
      "NVML has no NPU counterpart (torch.npu.mem_get_info / npu-smi instead)"),
])

E("medsam_slurm_launch", "scripts/train_multinode.sh", "explicit_replacement",
  "MedSAM-style SLURM multi-node torchrun launcher (module load cuda/nccl, NCCL_* tuning, nvidia-smi)", [
    C("#SBATCH --gres=gpu:8", "device_type", R, False, "#SBATCH --gres=npu:8",
      "unconfirmed: the gres name depends on how the NPU cluster's SLURM is configured"),
    C("module load cuda/11.8 nccl/2.18.3 python/3.10", "env_var", R, True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "no CUDA/NCCL modules on an NPU cluster (set -e aborts); CANN's set_env.sh provides the runtime and HCCL"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "ignored by the Ascend runtime, which reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_DEBUG=INFO", "env_var", X, False, None, "NCCL only"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", R, False, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL picks the host NIC by its own priority; set HCCL_SOCKET_IFNAME / HCCL_IF_IP when that choice is wrong"),
    C("export NCCL_IB_DISABLE=0", "env_var", X, False, None, "NCCL only"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu's watchdog reads the HCCL variable"),
    C("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", "NPU caching-allocator equivalent"),
    C("GPUS_PER_NODE=$(nvidia-smi --list-gpus | wc -l)", "torch_cuda_api", R, True,
      "GPUS_PER_NODE=$(python -c 'import torch, torch_npu; print(torch.npu.device_count())')",
      "nvidia-smi is missing: with set -euo pipefail the script aborts"),
    C("=nvidia-smi", "torch_cuda_api", R, True, "npu-smi info", "command not found aborts the script under set -e"),
])

E("samfast_flash_triton", "segment_anything_fast/flash_4.py", "kernel_rewrite",
  "pytorch-labs/segment-anything-fast flash_4.py (Triton fused attention with SAM rel-pos bias, CUDA custom op)", [
    C("device_name = torch.cuda.get_device_name()", "torch_cuda_api", R, True,
      "device_name = torch.npu.get_device_name()", "raises without CUDA before the first kernel launch"),
    C("if not device_name.startswith('NVIDIA A100'):  # other GPUs", "device_capability_check", R, False,
      "if not device_name.startswith('NVIDIA A100'):  # other devices (NPU): locally tuned table",
      "the shipped config table is A100-tuned; an NPU needs its own autotuned table"),
    C('@torch.library.impl(lib, "custom_flash_aligned", "CUDA")', "custom_cuda_extension", R, True,
      '@torch.library.impl(lib, "custom_flash_aligned", "PrivateUse1")',
      "the op has no implementation for NPU tensors, and the fp16/bf16 guard routes SAM's encoder straight to it"),
    C("for (BLOCK_M, BLOCK_N, num_warps) in itertools.product([64, 128], [64, 128], [1, 2, 4, 8]):",
      "triton_kernel_tuning", R, False,
      "for (BLOCK_M, BLOCK_N, num_warps) in itertools.product([32, 64, 128], [64, 128], [1]):",
      "unconfirmed: warp/stage search space is GPU-specific under triton-ascend"),
])
