"""Labels for probe483 (open-vocabulary object detection: GLIP, Grounding DINO training, OWL-ViT
fine-tuning, Detic, RegionCLIP). One C(...) per upstream line a careful porter would edit for Ascend NPU
with torch_npu, written as an explicit port (torch.npu.*, 'npu', hccl; no transfer_to_npu)."""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: import torch_npu explicitly so the 'npu' device, torch.npu.* and hccl exist "
               "(backend autoload only from torch_npu 2.5.1)")

# --------------------------------------------------------------------------------------------------
# GLIP (microsoft/GLIP, maskrcnn_benchmark fork)
# --------------------------------------------------------------------------------------------------

E("glip_setup", "setup.py", "explicit_replacement",
  "microsoft/GLIP setup.py (maskrcnn_benchmark._C build: CUDAExtension only when CUDA is present)", [
  ])

E("glip_train_net", "tools/train_net.py", "explicit_replacement",
  "microsoft/GLIP tools/train_net.py (torch.distributed.launch entry, env:// init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.empty_cache()  # TODO check if it helps", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # TODO check if it helps",
      "torch.cuda.empty_cache is a no-op when CUDA was never initialised; porting only releases cached NPU "
      "blocks before the test loop (memory, not correctness)"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)",
      "bind each launched process to its NPU; the CUDA call fails on a torch build without CUDA"),
    C('backend="nccl", init_method="env://",', "dist_backend", "replace", True,
      'backend="hccl", init_method="env://",', "NCCL is not available on Ascend; HCCL is the collective backend"),
  ])

E("glip_comm", "maskrcnn_benchmark/utils/comm.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/utils/comm.py (pickle all_gather over NCCL + detectron2-style gloo helpers)", [
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")',
      "all_gather of pickled predictions runs on the default (HCCL) group, so the buffer must be on the NPU"),
    C('local_size = torch.LongTensor([tensor.numel()]).to("cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.LongTensor([tensor.numel()]).to("npu")', "same all_gather: size tensor on the NPU"),
    C('size_list = [torch.LongTensor([0]).to("cuda")', "tensor_to_device", "replace", True,
      'size_list = [torch.LongTensor([0]).to("npu") for _ in range(world_size)]', "same all_gather: receive buffers"),
    C('tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.ByteTensor(size=(max_size,)).to("npu"))', "same all_gather: padded receive buffers"),
    C('padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")', "tensor_to_device", "replace", True,
      'padding = torch.ByteTensor(size=(max_size - local_size,)).to("npu")', "same all_gather: padding must match the device"),
    C('data_tensor = torch.tensor(data + [0], device="cuda")', "tensor_to_device", "replace", True,
      'data_tensor = torch.tensor(data + [0], device="npu")', "broadcast over the HCCL group needs an NPU tensor"),
    C('data_tensor = torch.tensor(data + [1], device="cuda")', "tensor_to_device", "replace", True,
      'data_tensor = torch.tensor(data + [1], device="npu")', "broadcast over the HCCL group needs an NPU tensor"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True,
      'if dist.get_backend() == "hccl":',
      "backend-string comparison: with hccl unported it returns the HCCL WORLD group and gather_on_master then "
      "trips the assert below / gathers host tensors over HCCL (not rewritten by any automatic tool)"),
    C('assert backend in ["gloo", "nccl"]', "dist_backend", "replace", True,
      'assert backend in ["gloo", "hccl"]', "backend-string comparison; an HCCL group would fail the assert"),
    C('device = torch.device("cpu" if backend == "gloo" else "cuda")', "device_type", "replace", True,
      'device = torch.device("cpu" if backend == "gloo" else "npu")',
      "non-gloo group is now HCCL, whose tensors must live on the NPU"),
  ])

E("glip_amp", "maskrcnn_benchmark/utils/amp.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/utils/amp.py (central AMP shim re-exported to trainer and layers)", [
    C("from torch.cuda.amp import autocast, GradScaler, custom_fwd, custom_bwd", "amp", "replace", True,
      "from torch.npu.amp import autocast, GradScaler, custom_fwd, custom_bwd",
      "single AMP entry point for the package: CUDA autocast/GradScaler disable themselves on an NPU host "
      "(SOLVER.USE_AMP silently becomes fp32 without loss scaling) and custom_fwd(cast_inputs=fp32) keys off CUDA autocast"),
  ])

E("glip_trainer", "maskrcnn_benchmark/engine/trainer.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/engine/trainer.py do_train", [
    C("memory=torch.cuda.max_memory_allocated() / 1024.0 / 1024.0,", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / 1024.0 / 1024.0,",
      "log only: the CUDA memory stats return 0 when CUDA is not initialised, so 'max mem' would read 0"),
  ])

E("glip_inference", "maskrcnn_benchmark/engine/inference.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/engine/inference.py (grounding inference loop)", [
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "runs whenever MODEL.DEVICE != 'cpu'; torch.cuda.synchronize initialises CUDA and raises on an NPU host"),
  ])

E("glip_defaults", "maskrcnn_benchmark/config/defaults.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/config/defaults.py (yacs defaults)", [
    C('_C.MODEL.DEVICE = "cuda"', "device_type", "replace", True, '_C.MODEL.DEVICE = "npu"',
      "the GLIP YAMLs never override MODEL.DEVICE, so train/test place the model with this default"),
  ])

E("glip_focal_loss", "maskrcnn_benchmark/layers/sigmoid_focal_loss.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/layers/sigmoid_focal_loss.py (CUDA kernel with a pure-torch fallback)", [
  ])

E("glip_boxlist_ops", "maskrcnn_benchmark/structures/boxlist_ops.py", "explicit_replacement",
  "microsoft/GLIP maskrcnn_benchmark/structures/boxlist_ops.py (boxlist_ml_nms used by the ATSS/VLDyHead post-processor)", [
    C("=import torch", "unsupported_op_workaround", "npu_only_addition", True, "import torchvision",
      "needed by the batched_nms replacement below"),
    C("keep = _box_ml_nms(boxes, scores, labels.float(), nms_thresh)", "unsupported_op_workaround", "replace", True,
      "keep = torchvision.ops.batched_nms(boxes, scores, labels, nms_thresh)",
      "_C.ml_nms exists only as a .cu kernel (AT_ERROR on non-CUDA tensors) and every non-CPU device takes this branch; "
      "batched_nms is the class-aware equivalent (nms has an NPU kernel via torchvision_npu, else CPU fallback)"),
  ])

E("glip_deform_conv", "maskrcnn_benchmark/layers/deform_conv.py", "kernel_rewrite",
  "microsoft/GLIP maskrcnn_benchmark/layers/deform_conv.py (modulated DCN used by the DyHead tower, USE_DFCONV)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "module now calls torch_npu.npu_deformable_conv2d / npu_deformable_conv2dbk"),
    C("if not input.is_cuda:", "device_type", "replace", True, "if not (input.is_cuda or input.is_npu):",
      "the guard raises NotImplementedError for every non-CUDA tensor"),
    C("_C.modulated_deform_conv_forward(", "custom_cuda_extension", "replace", True,
      "output, ctx._offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat((offset, mask), dim=1), "
      "bias if ctx.with_bias else None, kernel_size=[weight.shape[2], weight.shape[3]], stride=[1, 1, ctx.stride, ctx.stride], "
      "padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], groups=ctx.groups, "
      "deformable_groups=ctx.deformable_groups, modulated=True)",
      "modulated DCN forward only exists as a CUDA kernel in _C; torch_npu.npu_deformable_conv2d is the NPU op. "
      "Offset/mask channel ordering of the NPU op vs mmcv layout is not confirmed in the knowledge base"),
    C("if not grad_output.is_cuda:", "device_type", "replace", True, "if not (grad_output.is_cuda or grad_output.is_npu):",
      "same guard in backward"),
    C("_C.modulated_deform_conv_backward(", "custom_cuda_extension", "replace", True,
      "grad_input, grad_weight, grad_offset_mask, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, "
      "ctx._offset_out, weight, torch.cat((offset, mask), dim=1), kernel_size=[weight.shape[2], weight.shape[3]], "
      "stride=[1, 1, ctx.stride, ctx.stride], padding=[ctx.padding] * 4, dilation=[1, 1, ctx.dilation, ctx.dilation], "
      "groups=ctx.groups, deformable_groups=ctx.deformable_groups, modulated=True)",
      "CUDA-only backward kernel; npu_deformable_conv2dbk is the matching NPU backward (grad_offset_mask is then split)"),
  ])

# --------------------------------------------------------------------------------------------------
# Grounding DINO (IDEA-Research/GroundingDINO) + Open-GroundingDino training code
# --------------------------------------------------------------------------------------------------

E("gd_setup", "setup.py", "explicit_replacement",
  "IDEA-Research/GroundingDINO setup.py (optional MSDA CUDA extension)", [
  ])

E("gd_msda", "groundingdino/models/GroundingDINO/ms_deform_attn.py", "device_branch_or_abstraction",
  "IDEA-Research/GroundingDINO groundingdino/models/GroundingDINO/ms_deform_attn.py", [
    C("if torch.cuda.is_available() and value.is_cuda:", "npu_fused_op", "add_branch", False,
      "if value.device.type == \"npu\" and npu_msda is not None: output = npu_msda(value, spatial_shapes, level_start_index, sampling_locations, attention_weights)",
      "optional: the pure-PyTorch fallback (grid_sample has an NPU kernel) already runs on NPU; a fused NPU "
      "MSDA kernel (e.g. DrivingSDK/mx_driving) is unconfirmed in the knowledge base, so performance-only"),
  ])

E("gd_msda_header", "groundingdino/models/GroundingDINO/csrc/MsDeformAttn/ms_deform_attn.h", "explicit_replacement",
  "IDEA-Research/GroundingDINO csrc/MsDeformAttn/ms_deform_attn.h (CUDA dispatch, never reached on NPU)", [
  ])

E("gd_main", "main.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino main.py (training entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("parser.add_argument('--device', default='cuda',", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu',",
      "train_dist.sh never passes --device, so torch.device(args.device) comes from this default"),
    C("optimizer = torch.optim.AdamW(param_dicts, lr=args.lr,", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdamW(param_dicts, lr=args.lr,",
      "performance only (msFmkTransplt advice; more memory); torch.optim.AdamW is supported on NPU"),
  ])

E("gd_misc", "util/misc.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino util/misc.py (DETR-style distributed helpers and MetricLogger)", [
    C("t = torch.tensor([self.count, self.total], dtype=torch.float64, device='cuda')", "tensor_to_device", "replace", True,
      "t = torch.tensor([self.count, self.total], dtype=torch.float64, device='npu')",
      "all_reduce over HCCL needs an NPU tensor (fp64 collective support on HCCL not checked)"),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", True, 'if dist.get_backend() == "hccl":',
      "backend-string comparison; unported it hands the HCCL WORLD group to all_gather_cpu, which then gathers host tensors over HCCL"),
    C('device = "cuda" if cpu_group is None else "cpu"', "device_type", "replace", False,
      'device = "npu" if cpu_group is None else "cpu"',
      "dead branch: _get_global_gloo_group never returns None"),
    C('tensor = torch.ByteTensor(storage).to("cuda")', "tensor_to_device", "replace", True,
      'tensor = torch.ByteTensor(storage).to("npu")', "default all_gather path (CPU_REDUCE unset) runs on the HCCL group"),
    C('local_size = torch.tensor([tensor.numel()], device="cuda")', "tensor_to_device", "replace", True,
      'local_size = torch.tensor([tensor.numel()], device="npu")', "same all_gather"),
    C('size_list = [torch.tensor([0], device="cuda")', "tensor_to_device", "replace", True,
      'size_list = [torch.tensor([0], device="npu") for _ in range(world_size)]', "same all_gather"),
    C('tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))', "tensor_to_device", "replace", True,
      'tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="npu"))', "same all_gather"),
    C('padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")', "tensor_to_device", "replace", True,
      'padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="npu")', "same all_gather"),
    C("if torch.cuda.is_available():  # only report peak memory on GPU", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():  # only report peak memory on NPU", "log format only (adds the 'max mem' column)"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "log only; pairs with the format string above"),
    C("memory=torch.cuda.max_memory_allocated() / MB))", "torch_cuda_api", "replace", False,
      "memory=torch.npu.max_memory_allocated() / MB))", "log only"),
    C("torch.cuda.device_count()))", "torch_cuda_api", "replace", False, "torch.npu.device_count()))",
      "SLURM branch print only"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "bind each rank to its NPU before HCCL init"),
    C("args.dist_backend = 'nccl'", "dist_backend", "replace", True, "args.dist_backend = 'hccl'",
      "collective backend"),
  ])

E("gd_engine", "engine.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino engine.py (train_one_epoch / evaluate)", [
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)",
      "the CUDA scaler disables itself without CUDA: fp16 gradients would go unscaled under --amp"),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):",
      "training autocast for 'cuda' is silently disabled on an NPU host: --amp is ignored and the fp32 step "
      "needs roughly twice the activation memory at the configured batch size"),
    C('with torch.autocast("cuda", enabled=args.amp):', "amp", "replace", False,
      'with torch.autocast("npu", enabled=args.amp):',
      "evaluation only: disabled autocast falls back to fp32, results stay valid (speed only)"),
  ])

E("gd_inference", "groundingdino/util/inference.py", "explicit_replacement",
  "IDEA-Research/GroundingDINO groundingdino/util/inference.py (load_model / predict / Model API)", [
    C('def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "cuda"):', "device_type", "replace", True,
      'def load_model(model_config_path: str, model_checkpoint_path: str, device: str = "npu"):',
      "demo scripts call load_model(config, weights) without a device"),
    C('device: str = "cuda",', "device_type", "replace", True, 'device: str = "npu",',
      "predict() default; demos call it without device, so model/image go to .to('cuda')"),
    C('=device: str = "cuda"', "device_type", "replace", True, 'device: str = "npu"',
      "Model(...) default for the supervision-based API"),
  ])

E("gd_train_sh", "train_dist.sh", "explicit_replacement",
  "longzw1997/Open-GroundingDino train_dist.sh (torch.distributed.launch wrapper)", [
    C('export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-"0,1,2,3,4,5,6,7"}', "env_var", "replace", False,
      'export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-"0,1,2,3,4,5,6,7"}',
      "the default already lists all eight devices; only a user-narrowed list would be silently ignored on NPU"),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; unconfirmed whether the host profile already sources it"),
  ])

E("gd_dockerfile", "Dockerfile", "explicit_replacement",
  "IDEA-Research/GroundingDINO Dockerfile", [
    C("FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "CUDA runtime image replaced by a CANN base image (tag illustrative; CANN 8.1.RC1 pairs with torch_npu 2.1.0.post12)"),
    C("ENV CUDA_HOME=/usr/local/cuda \\", "env_var", "replace", False,
      "ENV ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest \\",
      "CUDA_HOME alone does not force the CUDA build once TORCH_CUDA_ARCH_LIST is gone (setup.py also needs CUDA or the arch list)"),
    C('TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX" \\', "custom_cuda_extension", "removal", True, None,
      "with CUDA_HOME set this env var makes GroundingDINO's setup.py pick CUDAExtension and compile .cu files, "
      "which fails without nvcc; dropping it gives the CPU-only _C and the PyTorch MSDA path"),
    C('RUN conda install -c "nvidia/label/cuda-12.1.1" cuda -y', "custom_cuda_extension", "removal", False, None,
      "CUDA toolkit no longer needed (image size / build time)"),
    C("ENV CUDA_HOME=$CONDA_PREFIX", "env_var", "removal", False, None,
      "harmless once the arch list is gone, but misleading"),
    C("RUN cd GroundingDINO/ && python -m pip install .", "import_torch_npu", "npu_only_addition", True,
      "RUN python -m pip install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post12",
      "torch_npu (matching the torch version) must be installed before the package"),
  ])

E("gd_requirements", "requirements.txt", "explicit_replacement",
  "IDEA-Research/GroundingDINO requirements.txt", [
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu",
      "torch_npu wheel matching the installed torch version"),
  ])

E("gd_cfg", "config/cfg_odvg.py", "explicit_replacement",
  "longzw1997/Open-GroundingDino config/cfg_odvg.py (SLConfig python config)", [
  ])

# --------------------------------------------------------------------------------------------------
# OWL-ViT fine-tuning (HF transformers OwlViTForObjectDetection; community fine-tuning repos)
# --------------------------------------------------------------------------------------------------

E("owl_train", "train.py", "explicit_replacement",
  "community OWL-ViT fine-tuning repo (e.g. stevebottos/owl-vit-object-detection) train.py on HF transformers", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "module-level device global: unported, the whole fine-tune silently runs on the CPU"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "redundant: torch.manual_seed already seeds the privateuse1 (NPU) generators; the CUDA call is lazily queued and harmless"),
    C("torch.cuda.is_bf16_supported()", "torch_cuda_api", "replace", True, "torch.npu.is_bf16_supported()",
      "default precision is bf16; the CUDA query cannot answer for the NPU (raises or returns False -> fp32)"),
    C("torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu'", "torch_cuda_api", "replace", False,
      "torch.npu.get_device_name(0) if device == 'npu' else 'cpu'", "log line only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=amp_dtype == torch.float16)",
      "precision: fp16 needs a working loss scaler; the CUDA one disables itself on an NPU host"),
    C('with torch.autocast(device_type="cuda", dtype=amp_dtype', "amp", "replace", True,
      'with torch.autocast(device_type="npu", dtype=amp_dtype, enabled=amp_dtype != torch.float32):',
      "training autocast on 'cuda' is disabled on an NPU host: bf16/fp16 setting silently ignored"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "end-of-epoch cache release; memory only"),
  ])

E("owl_losses", "src/losses.py", "explicit_replacement",
  "community OWL-ViT fine-tuning repo src/losses.py (Hungarian matcher + focal/L1/GIoU)", [
  ])

E("owl_util", "src/util.py", "explicit_replacement",
  "community OWL-ViT fine-tuning repo src/util.py", [
    C('["nvidia-smi", "--query-gpu=memory.used"', "torch_cuda_api", "replace", True,
      "return torch.npu.memory_reserved(index) // (1024 * 1024)  # replaces the nvidia-smi query",
      "called from the training loop every log_every steps; nvidia-smi does not exist on an Ascend host "
      "(FileNotFoundError); npu-smi has a different CLI, so use torch.npu memory stats"),
  ])

E("owl_config", "config.yaml", "explicit_replacement",
  "community OWL-ViT fine-tuning repo config.yaml", [
  ])

# --------------------------------------------------------------------------------------------------
# Detic (facebookresearch/Detic, detectron2 + CenterNet2)
# --------------------------------------------------------------------------------------------------

E("detic_train", "train_net.py", "explicit_replacement",
  "facebookresearch/Detic train_net.py (custom detectron2 loop with FP16 GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
      "FP16: True configs (Swin-B/ConvNeXt) train with this scaler; the CUDA scaler disables itself on NPU"),
    C("cfg.merge_from_list(args.opts)", "device_type", "npu_only_addition", True, 'cfg.MODEL.DEVICE = "npu"',
      "detectron2's default MODEL.DEVICE is 'cuda' and Detic configs do not set it (detectron2 itself also needs its "
      "launch/comm NCCL paths ported, outside this file)"),
  ])

E("detic_predictor", "detic/predictor.py", "explicit_replacement",
  "facebookresearch/Detic detic/predictor.py (VisualizationDemo / AsyncPredictor)", [
    C("num_gpu = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpu = torch.npu.device_count()",
      "returns 0 on an NPU host, so --parallel would start a single CPU worker"),
    C('cfg.MODEL.DEVICE = "cuda:{}".format(gpuid) if num_gpus > 0 else "cpu"', "device_type", "replace", True,
      'cfg.MODEL.DEVICE = "npu:{}".format(gpuid) if num_gpus > 0 else "cpu"', "per-worker device string"),
  ])

E("detic_dump_clip", "tools/dump_clip_features.py", "explicit_replacement",
  "facebookresearch/Detic tools/dump_clip_features.py (CLIP text embeddings for the zero-shot classifier)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "device selection silently falls back to CPU (clip.load then casts to fp32)"),
  ])

E("detic_custom_rcnn", "detic/modeling/meta_arch/custom_rcnn.py", "explicit_replacement",
  "facebookresearch/Detic detic/modeling/meta_arch/custom_rcnn.py (CustomRCNN with fp16 backbone)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "with FP16 the backbone gets images.tensor.half(); a disabled CUDA autocast leaves fp32 weights vs fp16 input -> dtype error"),
  ])

# --------------------------------------------------------------------------------------------------
# RegionCLIP (microsoft/RegionCLIP, vendored detectron2)
# --------------------------------------------------------------------------------------------------

E("rc_train", "tools/train_net.py", "explicit_replacement",
  "microsoft/RegionCLIP tools/train_net.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if args.num_gpus > torch.cuda.device_count():", "torch_cuda_api", "replace", False,
      "if args.num_gpus > torch.npu.device_count():", "warning print only"),
    C('but only {} visible".format(args.num_gpus, torch.cuda.device_count()))', "torch_cuda_api", "replace", False,
      'but only {} visible".format(args.num_gpus, torch.npu.device_count()))', "warning print only"),
  ])

E("rc_launch", "detectron2/engine/launch.py", "explicit_replacement",
  "microsoft/RegionCLIP detectron2/engine/launch.py (vendored detectron2 mp.spawn launcher)", [
    C('assert torch.cuda.is_available(), "cuda is not available.', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "npu is not available. Please check your installation."',
      "hard assert in every spawned worker"),
    C('backend="NCCL",', "dist_backend", "replace", True, 'backend="hccl",',
      "upper-case NCCL literal; HCCL on Ascend"),
    C("assert num_gpus_per_machine <= torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert num_gpus_per_machine <= torch.npu.device_count()", "device_count() is 0 without CUDA -> assert fails"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      "bind the spawned worker to its NPU"),
  ])

E("rc_train_loop", "detectron2/engine/train_loop.py", "explicit_replacement",
  "microsoft/RegionCLIP detectron2/engine/train_loop.py (SimpleTrainer / AMPTrainer)", [
    C("from torch.cuda.amp import GradScaler", "amp", "replace", True, "from torch.npu.amp import GradScaler",
      "SOLVER.AMP.ENABLED uses AMPTrainer (the OVD script turns it on)"),
    C('assert torch.cuda.is_available(), "[AMPTrainer]', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "[AMPTrainer] NPU is required for AMP training!"',
      "hard assert on every AMP step"),
    C("from torch.cuda.amp import autocast", "amp", "replace", True, "from torch.npu.amp import autocast",
      "CUDA autocast is silently disabled on NPU: AMP run becomes fp32 with a (ported) loss scaler"),
  ])

E("rc_script", "scripts/train_transfer_learning/faster_rcnn/CLIP_fast_rcnn_R_50_C4_ovd.sh", "explicit_replacement",
  "microsoft/RegionCLIP scripts/train_transfer_learning/faster_rcnn/*.sh", [
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7",
      "lists every device of an 8-card host, so leaving it changes nothing; ported for intent"),
    C("OUTPUT_DIR ./output/ovd_coco_rn50", "device_type", "npu_only_addition", True, "MODEL.DEVICE npu \\",
      "vendored detectron2 defaults MODEL.DEVICE to 'cuda' and the RegionCLIP configs do not override it"),
  ])
