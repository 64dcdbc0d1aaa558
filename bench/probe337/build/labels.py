ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- MODNet
E("modnet_image_infer", "demo/image_matting/colab/inference.py", "explicit_replacement",
  "MODNet image-matting demo (DataParallel wrapper, cuda-or-cpu weight loading)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script: registers the npu device and torch.npu namespace"),
    C("modnet = nn.DataParallel(modnet)", "unsupported_op_workaround", "removal", True, None,
      "nn.DataParallel is unsupported on Ascend (scatter/replicate via torch.cuda.comm); run the bare module"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host, so the model silently runs on CPU"),
    C("modnet = modnet.cuda()", "tensor_to_device", "replace", True, "modnet = modnet.npu()",
      "move the model to the NPU"),
    C("print('Use GPU: {0}'.format(torch.cuda.get_device_name(0)))", "torch_cuda_api", "replace", True,
      "print('Use NPU: {0}'.format(torch.npu.get_device_name(0)))",
      "inside the (ported) is_available branch: torch.cuda.get_device_name initialises CUDA and raises"),
    C("weights = torch.load(args.ckpt_path)", "tensor_to_device", "replace", True,
      "weights = torch.load(args.ckpt_path, map_location='npu')",
      "released ckpt holds CUDA tensors; deserialising without map_location fails when CUDA is absent"),
    C("modnet.load_state_dict(weights)", "unsupported_op_workaround", "replace", True,
      "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in weights.items()})",
      "ckpt keys carry the DataParallel 'module.' prefix; once the wrapper is dropped they must be stripped"),
    C("_, _, matte = modnet(im.cuda() if torch.cuda.is_available() else im, True)", "tensor_to_device", "replace", True,
      "_, _, matte = modnet(im.npu() if torch.npu.is_available() else im, True)",
      "input stays on CPU (or .cuda() raises) while the model is on NPU"),
])

for _id, _path, _imit in [
    ("modnet_webcam", "demo/video_matting/webcam/run.py", "MODNet webcam demo (module-level GPU flag from device_count)"),
    ("modnet_video", "demo/video_matting/custom/run.py", "MODNet offline video matting demo (argparse, global GPU flag)"),
]:
    E(_id, _path, "explicit_replacement", _imit, [
        C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
          "entry script: registers the npu device"),
        C("modnet = nn.DataParallel(modnet)", "unsupported_op_workaround", "removal", True, None,
          "nn.DataParallel is unsupported on Ascend; use the bare module for single-device inference"),
        C("GPU = True if torch.cuda.device_count() > 0 else False", "torch_cuda_api", "replace", True,
          "GPU = True if torch.npu.device_count() > 0 else False",
          "device_count() is 0 on an NPU host, so the demo silently falls back to CPU"),
        C("modnet = modnet.cuda()", "tensor_to_device", "replace", True, "modnet = modnet.npu()",
          "move the model to the NPU"),
        C("modnet.load_state_dict(torch.load(pretrained_ckpt))", "tensor_to_device", "replace", True,
          "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(pretrained_ckpt, map_location='npu').items()})",
          "ckpt was saved from CUDA under DataParallel: needs map_location and the 'module.' prefix stripped"),
        C("modnet.load_state_dict(torch.load(pretrained_ckpt, map_location=torch.device('cpu')))",
          "unsupported_op_workaround", "replace", False,
          "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in torch.load(pretrained_ckpt, map_location='cpu').items()})",
          "CPU fallback branch: not taken on an NPU host, but breaks once the DataParallel wrapper is dropped"),
        C("frame_tensor = frame_tensor.cuda()", "tensor_to_device", "replace", True,
          "frame_tensor = frame_tensor.npu()", "frame must live on the model's device"),
    ])

E("modnet_trainer", "src/trainer.py", "explicit_replacement",
  "MODNet src/trainer.py (supervised + SOC iterations, module-level blur layer)", [
    C("=import torch.nn as nn", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the module calls .npu() at import time, which may run before the entry script imports torch_npu"),
    C("blurer = GaussianBlurLayer(1, 3).cuda()", "tensor_to_device", "replace", True,
      "blurer = GaussianBlurLayer(1, 3).npu()", "module-level .cuda() raises on an NPU host at import"),
    C("boundaries = torch.tensor(np_boundaries).float().cuda()", "tensor_to_device", "replace", True,
      "boundaries = torch.tensor(np_boundaries).float().npu()", "boundary mask must be on the prediction's device"),
])

E("modnet_onnx_export", "onnx/export_onnx.py", "explicit_replacement",
  "MODNet onnx/export_onnx.py (DataParallel-wrapped ckpt, dynamic axes, onnxruntime check)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("modnet = nn.DataParallel(modnet).cuda()", "unsupported_op_workaround", "replace", True,
      "modnet = modnet.npu()", "drop nn.DataParallel (unsupported on Ascend) and move to the NPU"),
    C("state_dict = torch.load(args.ckpt_path)", "tensor_to_device", "replace", True,
      "state_dict = torch.load(args.ckpt_path, map_location='npu')", "ckpt tensors were saved on CUDA"),
    C("modnet.load_state_dict(state_dict)", "unsupported_op_workaround", "replace", True,
      "modnet.load_state_dict({k.replace('module.', '', 1): v for k, v in state_dict.items()})",
      "strip the DataParallel 'module.' prefix now that the wrapper is gone"),
    C("dummy_input = Variable(torch.randn(batch_size, 3, height, width)).cuda()", "tensor_to_device", "replace", True,
      "dummy_input = Variable(torch.randn(batch_size, 3, height, width)).npu()", "dummy input on the model's device"),
    C("torch_out = modnet.module(dummy_input)", "unsupported_op_workaround", "replace", True,
      "torch_out = modnet(dummy_input)", "no .module attribute without the DataParallel wrapper"),
    C("modnet.module, dummy_input, args.output_path, export_params=True,", "unsupported_op_workaround", "replace", True,
      "modnet, dummy_input, args.output_path, export_params=True,", "no .module attribute without the DataParallel wrapper"),
])

# ---------------------------------------------------------------- RobustVideoMatting
E("rvm_inference", "inference.py", "device_branch_or_abstraction",
  "RobustVideoMatting inference.py (convert_video, Converter with TorchScript freeze, --device flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the device comes from --device; 'npu' is only a known device type once torch_npu is imported"),
])

E("rvm_speed", "inference_speed_test.py", "explicit_replacement",
  "RobustVideoMatting inference_speed_test.py (hard-coded cuda device, synchronize per frame)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("self.device = 'cuda'", "device_type", "replace", True, "self.device = 'npu'",
      "hard-coded device string"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; NPU ops are async so the timing needs an NPU sync"),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
      "resolving the current CUDA device initialises CUDA and raises on an NPU host; must reset the NPU counters"),
    C("peak = torch.cuda.max_memory_allocated() / 2 ** 20", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 2 ** 20", "silently reports 0 MB without CUDA; reporting only"),
    C("print(f'peak memory: {peak:.0f} MB on {torch.cuda.get_device_name()}')", "torch_cuda_api", "replace", True,
      "print(f'peak memory: {peak:.0f} MB on {torch.npu.get_device_name()}')",
      "get_device_name initialises CUDA and raises on an NPU host"),
])

_INT_DEV = "an int device in .to() means a CUDA index (transfer_to_npu rewrites exactly this to 'npu:N')"
E("rvm_train", "train.py", "explicit_replacement",
  "RobustVideoMatting train.py (mp.spawn + DDP over NCCL, torch.cuda.amp, int rank devices)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "torch.cuda.amp autocast/GradScaler disable themselves without CUDA: training silently runs fp32 unscaled"),
    C("os.environ['MASTER_PORT'] = self.args.distributed_port", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.set_device(rank)",
      "Ascend launch guide binds one NPU per process before HCCL init; unconfirmed that omitting it fails"),
    C('dist.init_process_group("nccl", rank=rank, world_size=world_size)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=world_size)', "NCCL does not exist on Ascend; use HCCL"),
    C("self.model = MattingNetwork(self.args.model_variant, pretrained_backbone=True).to(self.rank)",
      "tensor_to_device", "replace", True,
      "self.model = MattingNetwork(self.args.model_variant, pretrained_backbone=True).to(f'npu:{self.rank}')", _INT_DEV),
    C("torch.load(self.args.checkpoint, map_location=f'cuda:{self.rank}')))", "device_type", "replace", True,
      "torch.load(self.args.checkpoint, map_location=f'npu:{self.rank}')))", "cuda map_location fails without CUDA"),
    C("true_fgr = true_fgr.to(self.rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_fgr = true_fgr.to(f'npu:{self.rank}', non_blocking=True)", _INT_DEV),
    C("true_pha = true_pha.to(self.rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_pha = true_pha.to(f'npu:{self.rank}', non_blocking=True)", _INT_DEV),
    C("true_bgr = true_bgr.to(self.rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_bgr = true_bgr.to(f'npu:{self.rank}', non_blocking=True)", _INT_DEV),
    C("true_img = true_img.to(self.rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_img = true_img.to(f'npu:{self.rank}', non_blocking=True)", _INT_DEV),
    C("true_seg = true_seg.to(self.rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_seg = true_seg.to(f'npu:{self.rank}', non_blocking=True)", _INT_DEV),
    C("true_fgr = true_fgr.to(self.rank)", "tensor_to_device", "replace", True,
      "true_fgr = true_fgr.to(f'npu:{self.rank}')", _INT_DEV),
    C("true_pha = true_pha.to(self.rank)", "tensor_to_device", "replace", True,
      "true_pha = true_pha.to(f'npu:{self.rank}')", _INT_DEV),
    C("true_bgr = true_bgr.to(self.rank)", "tensor_to_device", "replace", True,
      "true_bgr = true_bgr.to(f'npu:{self.rank}')", _INT_DEV),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()", "0 on an NPU host: mp.spawn would start no workers"),
])

E("rvm_export_ts", "export_torchscript.py", "device_branch_or_abstraction",
  "RobustVideoMatting export_torchscript.py (script + freeze, --device default cuda)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')", "default device string is CUDA"),
])

E("rvm_export_onnx", "export_onnx.py", "device_branch_or_abstraction",
  "RobustVideoMatting export_onnx.py (required --device, fp16 export, onnxruntime validation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "--device npu (needed for float16 export) only resolves once torch_npu is imported"),
])

E("rvm_model", "model/model.py", "device_branch_or_abstraction",
  "RobustVideoMatting model/model.py (MattingNetwork, downsample_ratio; device-agnostic, no changes)", [])

E("rvm_requirements", "requirements_training.txt", "explicit_replacement",
  "RobustVideoMatting requirements_training.txt (cu111 torch wheels via find-links)", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on x86 Ascend hosts torch comes from the CPU index (aarch64: plain PyPI)"),
    C("torch==1.9.0+cu111", "device_type", "replace", True, "torch==2.1.0",
      "+cu111 build and torch 1.9 has no torch_npu release; pin a torch that torch_npu pairs with"),
    C("torchvision==0.10.0+cu111", "device_type", "replace", True, "torchvision==0.16.0",
      "+cu111 build; must match the new torch 2.1.0 pin"),
    C("# Data / logging", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post12",
      "add the torch_npu pin matching torch 2.1.0 (goes right after the torch block)"),
    C("onnxruntime-gpu==1.8.1", "device_type", "replace", False, "onnxruntime==1.16.3",
      "CUDA build of onnxruntime; only used for CPU-side validation here, the CPU wheel is enough"),
])

# ---------------------------------------------------------------- BackgroundMattingV2
E("bgm_infer_images", "inference_images.py", "device_branch_or_abstraction",
  "BackgroundMattingV2 inference_images.py (--device choices cpu/cuda, mattingrefine)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, choices=['cpu', 'cuda'], default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, choices=['cpu', 'npu'], default='npu')",
      "argparse choices reject 'npu' and the default is CUDA"),
])

E("bgm_webcam", "inference_webcam.py", "explicit_replacement",
  "BackgroundMattingV2 inference_webcam.py (hard .cuda() calls, cv2_frame_to_cuda helper)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("model = model.cuda().eval()", "tensor_to_device", "replace", True, "model = model.npu().eval()",
      "hard-coded CUDA model placement"),
    C("model.load_state_dict(torch.load(args.model_checkpoint), strict=False)", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model_checkpoint, map_location='npu'), strict=False)",
      "released checkpoints were saved from CUDA; no map_location fails without CUDA"),
    C("return ToTensor()(Image.fromarray(frame)).unsqueeze_(0).cuda()", "tensor_to_device", "replace", True,
      "return ToTensor()(Image.fromarray(frame)).unsqueeze_(0).npu()", "frames must reach the NPU"),
    C("tgt_bgr = tgt_bgr.cuda()", "tensor_to_device", "replace", True, "tgt_bgr = tgt_bgr.npu()",
      "replacement background on the model's device"),
])

E("bgm_train_refine", "train_refine.py", "explicit_replacement",
  "BackgroundMattingV2 train_refine.py (mp.spawn DDP over NCCL, SyncBatchNorm, torch.cuda.amp, kornia aug)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", True,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "torch.cuda.amp disables itself without CUDA: silently fp32 and no loss scaling"),
    C("distributed_num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "distributed_num_gpus = torch.npu.device_count()",
      "0 on an NPU host: the batch-size assert divides by zero and no workers spawn"),
    C('dist.init_process_group("nccl", rank=rank, world_size=distributed_num_gpus)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=rank, world_size=distributed_num_gpus)', "NCCL -> HCCL"),
    C("args.model_refine_kernel_size).to(rank)", "tensor_to_device", "replace", True,
      "args.model_refine_kernel_size).to(f'npu:{rank}')", _INT_DEV),
    C("load_matched_state_dict(model, torch.load(args.model_last_checkpoint))", "tensor_to_device", "replace", True,
      "load_matched_state_dict(model, torch.load(args.model_last_checkpoint, map_location=f'npu:{rank}'))",
      "checkpoints saved from CUDA; also avoids every rank loading onto device 0"),
    C("true_pha = true_pha.to(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_pha = true_pha.to(f'npu:{rank}', non_blocking=True)", _INT_DEV),
    C("true_fgr = true_fgr.to(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_fgr = true_fgr.to(f'npu:{rank}', non_blocking=True)", _INT_DEV),
    C("true_bgr = true_bgr.to(rank, non_blocking=True)", "tensor_to_device", "replace", True,
      "true_bgr = true_bgr.to(f'npu:{rank}', non_blocking=True)", _INT_DEV),
    C("true_pha = true_pha.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "true_pha = true_pha.npu(non_blocking=True)", "validation batch on the NPU"),
    C("true_fgr = true_fgr.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "true_fgr = true_fgr.npu(non_blocking=True)", "validation batch on the NPU"),
    C("true_bgr = true_bgr.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "true_bgr = true_bgr.npu(non_blocking=True)", "validation batch on the NPU"),
])

E("bgm_export_ts", "export_torchscript.py", "device_branch_or_abstraction",
  "BackgroundMattingV2 export_torchscript.py (attribute-hoisting wrapper, export on --device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')", "default export device is CUDA"),
])

E("bgm_speed", "inference_speed_test.py", "device_branch_or_abstraction",
  "BackgroundMattingV2 inference_speed_test.py (pytorch/torchscript backends, --device choices)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, choices=['cpu', 'cuda'], default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, choices=['cpu', 'npu'], default='npu')",
      "choices reject 'npu'; default is CUDA"),
])

E("bgm_infer_video", "inference_video.py", "device_branch_or_abstraction",
  "BackgroundMattingV2 inference_video.py (--device default cuda, VideoWriter / image-sequence writers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')", "default device is CUDA"),
])

# ---------------------------------------------------------------- ViTMatte / detectron2
E("vitmatte_main", "main.py", "explicit_replacement",
  "ViTMatte main.py (detectron2 LazyConfig, AMPTrainer, launch(num_gpus))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("trainer = (AMPTrainer if cfg.train.amp.enabled else SimpleTrainer)(model, train_loader, optim)", "amp", "replace", True,
      "trainer = (NPUAMPTrainer if cfg.train.amp.enabled else SimpleTrainer)(model, train_loader, optim)",
      "detectron2's AMPTrainer asserts torch.cuda.is_available() and uses torch.cuda.amp; needs an NPU subclass "
      "(torch.npu.amp autocast/GradScaler). Detectron2 internals recalled from memory"),
    C("=launch(", "distributed_framework", "replace", True, "launch_npu(",
      "detectron2.engine.launch picks NCCL only when CUDA is available (else GLOO, which cannot reduce NPU tensors) "
      "and calls torch.cuda.set_device; a wrapper using backend='hccl' + torch.npu.set_device is needed for num_gpus > 1"),
])

E("vitmatte_train_cfg", "configs/common/train.py", "device_branch_or_abstraction",
  "ViTMatte / detectron2 configs/common/train.py LazyConfig (train.device, amp, ddp)", [
    C('device="cuda",', "device_type", "replace", True, 'device="npu",',
      "train.device is passed straight to model.to(); 'cuda' fails on an NPU host"),
])

E("vitmatte_infer", "inference.py", "device_branch_or_abstraction",
  "ViTMatte inference.py (Composition-1k benchmark via cfg.train.device + run_one_image demo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; per-image NPU cache release is only a memory-headroom concern"),
    C("return torch.from_numpy(np.asarray(x, dtype=np.float64)).cuda()", "unsupported_op_workaround", "replace", True,
      "return torch.from_numpy(np.asarray(x, dtype=np.float64))",
      ".cuda() fails on an NPU host; keep the float64 metric math on CPU, since fp64 support on NPU is limited "
      "(transfer_to_npu maps DoubleTensor to fp32) and moving it to NPU could change the reported numbers"),
    C("parser.add_argument('--device', type=str, default='cuda')", "device_type", "replace", True,
      "parser.add_argument('--device', type=str, default='npu')", "default device string is CUDA"),
])

E("vitmatte_vit", "modeling/backbone/vit.py", "kernel_rewrite",
  "ViTMatte modeling/backbone/vit.py (ViTDet backbone, window + rel-pos attention, optional xformers path)", [
    C("if self.use_xformers and x.is_cuda:", "attention_kernel", "replace", False,
      "if x.is_npu:",
      "guarded xformers path is skipped on NPU (no xformers build; is_cuda False), so the slow eager "
      "softmax(QK^T)V path runs; route NPU tensors to a fused kernel instead"),
    C("x = xops.memory_efficient_attention(q * self.scale, k, v, attn_bias=bias, scale=1.0)", "attention_kernel", "replace", False,
      "x = torch_npu.npu_fusion_attention(q.view(B, self.num_heads, H * W, -1), k.view(B, self.num_heads, H * W, -1), v.view(B, self.num_heads, H * W, -1), self.num_heads, 'BNSD', pse=None if bias is None else bias.view(B, self.num_heads, H * W, H * W), scale=self.scale)[0].flatten(0, 1)",
      "xformers has no NPU backend; npu_fusion_attention takes the rel-pos bias as pse. Performance only "
      "(eager path is correct); exact pse shape rules for this layout unconfirmed"),
    C("=import torch.nn.functional as F", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "only needed by the optional fused-attention rewrite"),
])

# ---------------------------------------------------------------- MatteFormer (GCA-Matting code base)
E("matteformer_main", "main.py", "explicit_replacement",
  "MatteFormer main.py (toml CONFIG, torch.distributed.launch --local_rank, NCCL env:// init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.set_device(CONFIG.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(CONFIG.gpu)",
      "binds each launched process to its NPU; torch.cuda.set_device raises without CUDA"),
    C("torch.distributed.init_process_group(backend='nccl', init_method='env://')", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')", "NCCL -> HCCL"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above already seeds registered custom devices in "
      "recent torch (unconfirmed for every torch_npu pairing), so kept optional"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "test-phase model placement"),
    C("ckpt = torch.load(checkpoint)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(checkpoint, map_location='npu')", "training checkpoints hold CUDA tensors"),
    C("image, trimap = image_dict['image'].cuda(), image_dict['trimap'].cuda()", "tensor_to_device", "replace", True,
      "image, trimap = image_dict['image'].npu(), image_dict['trimap'].npu()", "test batch to NPU"),
    C("alpha = image_dict['alpha'].cuda()", "tensor_to_device", "replace", True,
      "alpha = image_dict['alpha'].npu()", "test batch to NPU"),
])

E("matteformer_prefetcher", "dataloader/prefetcher.py", "explicit_replacement",
  "MatteFormer / GCA-Matting dataloader/prefetcher.py (apex-style side-stream H2D prefetcher)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module using torch.npu.*; the entry script already imports torch_npu (autoload on >=2.5.1)"),
    C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
      "creating a CUDA stream raises without CUDA"),
    C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True, "with torch.npu.stream(self.stream):",
      "stream context must be the NPU one"),
    C("self.next_sample[key] = value.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "self.next_sample[key] = value.npu(non_blocking=True)", "H2D copy to the NPU"),
    C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
      "torch.npu.current_stream().wait_stream(self.stream)", "sync the compute stream with the copy stream"),
    C("sample[key].record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
      "sample[key].record_stream(torch.npu.current_stream())",
      "record_stream itself is supported on NPU, but it needs the NPU current stream"),
])

E("matteformer_trainer", "trainer.py", "explicit_replacement",
  "MatteFormer trainer.py (GCA-style Trainer: .cuda() everywhere, DDP or DataParallel, laplacian loss)", [
    C("import torch.backends.cudnn as cudnn", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "library module now calling torch.npu.*; entry script already imports torch_npu"),
    C("self.grad_filter = torch.tensor(utils.get_gradfilter()).cuda()", "tensor_to_device", "replace", True,
      "self.grad_filter = torch.tensor(utils.get_gradfilter()).npu()", "loss filters on the NPU"),
    C("[1., 4., 6., 4., 1.]]).cuda()", "tensor_to_device", "replace", True,
      "[1., 4., 6., 4., 1.]]).npu()", "gaussian kernel on the NPU"),
    C("self.G.cuda()", "tensor_to_device", "replace", True, "self.G.npu()", "generator placement"),
    C("self.G = nn.DataParallel(self.G)", "unsupported_op_workaround", "removal", True, None,
      "non-distributed branch: nn.DataParallel is unsupported on Ascend; train the bare module on one NPU "
      "(ckpt keys lose the 'module.' prefix; inference already strips it)"),
    C("checkpoint = torch.load(pth_path, map_location = lambda storage, loc: storage.cuda(CONFIG.gpu))", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(pth_path, map_location=f'npu:{CONFIG.gpu}')", "resume must land on this rank's NPU"),
    C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "batch to NPU"),
    C("=alpha = alpha.cuda()", "tensor_to_device", "replace", True, "alpha = alpha.npu()", "batch to NPU"),
    C("=trimap = trimap.cuda()", "tensor_to_device", "replace", True, "trimap = trimap.npu()", "batch to NPU"),
    C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", "batch to NPU"),
    C("fg_norm, bg_norm = image_dict['fg'].cuda(), image_dict['bg'].cuda()", "tensor_to_device", "replace", True,
      "fg_norm, bg_norm = image_dict['fg'].npu(), image_dict['bg'].npu()", "batch to NPU"),
    C('log_info += ", mem: {:.0f}MB".format(torch.cuda.max_memory_allocated() / 1024 / 1024)', "torch_cuda_api", "replace", False,
      'log_info += ", mem: {:.0f}MB".format(torch.npu.max_memory_allocated() / 1024 / 1024)',
      "without CUDA initialised this silently logs 0 MB; logging only"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "per-step cache release becomes a silent no-op; memory headroom only"),
    C("torch.cuda.empty_cache()  # free eval activations", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free eval activations before resuming training",
      "after-test cache release becomes a silent no-op; memory headroom only"),
    C("image, alpha, trimap = image.cuda(), alpha.cuda(), trimap.cuda()", "tensor_to_device", "replace", True,
      "image, alpha, trimap = image.npu(), alpha.npu(), trimap.npu()", "validation batch to NPU"),
    C("cc = torch.cat([x, torch.zeros(N, C, H, W).cuda()], dim=3)", "tensor_to_device", "replace", True,
      "cc = torch.cat([x, torch.zeros(N, C, H, W, device=x.device)], dim=3)", "laplacian upsample padding"),
    C("cc = torch.cat([cc, torch.zeros(N, C, W, H * 2).cuda()], dim=3)", "tensor_to_device", "replace", True,
      "cc = torch.cat([cc, torch.zeros(N, C, W, H * 2, device=x.device)], dim=3)", "laplacian upsample padding"),
])

# ---------------------------------------------------------------- BiRefNet-style background removal
E("birefnet_infer", "inference.py", "explicit_replacement",
  "BiRefNet-style inference.py (cuda-or-cpu helper, capability-based bf16, torch.compile, autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently runs on CPU on an NPU host"),
    C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
      "major = 8 if torch.npu.is_bf16_supported() else 0",
      "CUDA compute capability is meaningless on NPU (torch.npu.get_device_capability returns None unless "
      "TORCH_NPU_DEVICE_CAPABILITY is set); ask for bf16 support directly"),
    C("model = torch.compile(model, mode='reduce-overhead')", "compile_mode", "replace", False,
      "model = torch.compile(model, backend='npugraphs')",
      "reduce-overhead means CUDA graphs; on NPU the graph-replay equivalent is backend='npugraphs'. "
      "Whether the unchanged line errors or just skips graphs on NPU is unconfirmed"),
    C("with torch.no_grad(), torch.autocast(device_type='cuda', dtype=dtype, enabled=dtype != torch.float32):", "amp", "replace", True,
      "with torch.no_grad(), torch.autocast(device_type='npu', dtype=dtype, enabled=dtype != torch.float32):",
      "cuda autocast is disabled (with a warning) when CUDA is absent: the half-precision model then gets fp32 "
      "inputs and the convs fail on mismatched dtypes"),
    C("with torch.inference_mode(), torch.autocast(device_type='cuda', dtype=dtype, enabled=dtype != torch.float32):", "amp", "replace", True,
      "with torch.inference_mode(), torch.autocast(device_type='npu', dtype=dtype, enabled=dtype != torch.float32):",
      "same as above for the image-folder path"),
    C("torch.cuda.synchronize()  # exclude the H2D copy", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # exclude the H2D copy from the timing", "raises without CUDA (--benchmark path)"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; NPU execution is async so latency needs an NPU sync"),
    C("1000 * sum(steady) / len(steady), torch.cuda.max_memory_allocated() / 2 ** 20))", "torch_cuda_api", "replace", False,
      "1000 * sum(steady) / len(steady), torch.npu.max_memory_allocated() / 2 ** 20))",
      "reports 0 MB without CUDA initialised; logging only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; releasing cached NPU memory between checkpoints is only headroom"),
])

# ---------------------------------------------------------------- rembg (onnxruntime)
E("rembg_session", "rembg/session_factory.py", "device_branch_or_abstraction",
  "rembg session_factory.py (onnxruntime provider selection: CUDAExecutionProvider with options, CPU fallback)", [
    C('"CUDAExecutionProvider" in ort.get_available_providers()', "device_type", "replace", False,
      '"CANNExecutionProvider" in ort.get_available_providers()',
      "on an Ascend host the CUDA EP is absent, so rembg silently serves from CPU; an onnxruntime build with the "
      "CANN EP would be the NPU route (not covered by the knowledge base: unconfirmed)"),
    C('and ort.get_device() == "GPU"', "device_type", "removal", False, None,
      "get_device() reports the build flavour, not an Ascend device; drop it with the CANN check (unconfirmed)"),
    C('"cudnn_conv_algo_search": "HEURISTIC",', "device_type", "removal", False, None,
      "cuDNN-only provider option; CANN EP options differ (unconfirmed)"),
    C('providers.append(("CUDAExecutionProvider", cuda_options))', "device_type", "replace", False,
      'providers.append(("CANNExecutionProvider", cuda_options))',
      "register the NPU provider instead of CUDA (unconfirmed; CPU fallback keeps the service working meanwhile)"),
])

E("rembg_setup", "setup.py", "explicit_replacement",
  "rembg setup.py (extras: gpu -> onnxruntime-gpu, cpu, cli)", [
    C('"gpu": ["onnxruntime-gpu>=1.18.0"],', "device_type", "replace", False, '"npu": ["onnxruntime-cann>=1.18.0"],',
      "onnxruntime-gpu is a CUDA build; an Ascend extra would need a CANN-EP onnxruntime build "
      "(package name and availability unconfirmed). CPU extra keeps working meanwhile"),
])

# ---------------------------------------------------------------- infrastructure files
E("vitmatte_docker", "docker/Dockerfile", "explicit_replacement",
  "ViTMatte-style Dockerfile (nvidia/cuda devel base, cu113 torch wheels, detectron2 built with FORCE_CUDA)", [
    C("FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "base image must carry CANN (torch_npu links against it) instead of the CUDA toolkit; tag illustrative"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime variable is ignored; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES "
      "(or pass /dev/davinci* devices at docker run)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA runtime only; ignored on Ascend"),
    C('ENV FORCE_CUDA="1"', "custom_cuda_extension", "removal", True, None,
      "forces detectron2's setup.py to build CUDAExtension ops; with no CUDA toolkit in the image the build fails"),
    C('ENV TORCH_CUDA_ARCH_LIST="6.0 6.1 7.0 7.5 8.0 8.6+PTX"', "env_var", "removal", False, None,
      "only read by nvcc builds; harmless but meaningless on Ascend"),
    C("RUN pip install torch==1.12.1+cu113 torchvision==0.13.1+cu113 --extra-index-url https://download.pytorch.org/whl/cu113",
      "device_type", "replace", True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --extra-index-url https://download.pytorch.org/whl/cpu",
      "cu113 wheels and torch 1.12 have no torch_npu pairing; use a CPU/aarch64 torch that torch_npu supports"),
    C("RUN pip install 'git+https://github.com/facebookresearch/detectron2.git'", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post10",
      "install torch_npu matching the torch pin (2.1.0.post10 pairs with the CANN 8.0.0 base image)"),
])

E("matteformer_env", "environment.yml", "explicit_replacement",
  "MatteFormer / GCA-Matting conda environment.yml (pytorch + nvidia channels, cudatoolkit)", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA conda channel is only needed for CUDA packages"),
    C("=- pytorch=1.10.0", "device_type", "replace", True, "- pytorch=2.1.0",
      "torch 1.10 has no torch_npu release; pin a version torch_npu pairs with"),
    C("=- torchvision=0.11.1", "device_type", "replace", True, "- torchvision=0.16.0", "must match the new torch pin"),
    C("=- cudatoolkit=11.3", "device_type", "replace", False, "- cpuonly",
      "CUDA runtime is useless on an Ascend host; CPU build of torch is what torch_npu sits on"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post12",
      "add the torch_npu pin (pip) matching torch 2.1.0"),
])

E("matteformer_train_sh", "scripts/train.sh", "explicit_replacement",
  "MatteFormer-style scripts/train.sh (torch.distributed.launch, CUDA_VISIBLE_DEVICES, NCCL_* env, nvidia-smi)", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be loaded before torch_npu can be imported"),
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3}",
      "device masking is ignored by the NPU runtime; every process would see all NPUs"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None, "NCCL-only workaround; no effect under HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only logging knob; ignored under HCCL"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "NIC pinning for the multi-node path; HCCL reads its own variable (unconfirmed that the default NIC choice fails)"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info", "nvidia-smi does not exist on an Ascend host and set -e aborts the script"),
])

E("d2_matting_yaml", "configs/Base-MattingRCNN.yaml", "device_branch_or_abstraction",
  "detectron2 yacs config for an instance-matting model (MODEL.DEVICE, SyncBN, AMP)", [
    C('DEVICE: "cuda"', "device_type", "replace", True, 'DEVICE: "npu"',
      "MODEL.DEVICE is used by detectron2 to place the model and build tensors"),
])
