"""Labels for probe371 (image harmonization, compositing and shadow generation; CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit for an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line unchanged
fail, compute something wrong, or silently do the wrong thing on an NPU host?
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point: registers the 'npu' device and the torch.npu namespace used by the ported lines; "
               "torch_npu >= 2.5.1 autoloads, but the explicit import is the documented, version-independent form")

# --------------------------------------------------------------------------------------------
# DoveNet (bcmi/Image_Harmonization_Datasets, pix2pix/CycleGAN-derived code base)
# --------------------------------------------------------------------------------------------
E("dovenet_base_options", "options/base_options.py", "explicit_replacement",
  "bcmi DoveNet options/base_options.py (pix2pix-style --gpu_ids parsing)", [
    C("torch.cuda.set_device(opt.gpu_ids[0])", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(opt.gpu_ids[0])",
      "torch.cuda.set_device raises without CUDA; the NPU equivalent selects the current NPU"),
])

E("dovenet_base_model", "models/base_model.py", "explicit_replacement",
  "bcmi DoveNet models/base_model.py (BaseModel: device, save/load networks)", [
    C("self.device = torch.device('cuda:{}'.format(self.gpu_ids[0]))", "device_type", "replace", True,
      "self.device = torch.device('npu:{}'.format(self.gpu_ids[0])) if self.gpu_ids else torch.device('cpu')  # get device name: CPU or NPU",
      "every set_input .to(self.device) and torch.load(map_location=str(self.device)) follows this device"),
    C("if len(self.gpu_ids) > 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if len(self.gpu_ids) > 0 and torch.npu.is_available():",
      "False on an NPU host: the else branch calls net.cpu() in place and never moves the net back, so training continues with a CPU model and NPU inputs"),
    C("torch.save(net.module.cpu().state_dict(), save_path)", "distributed_framework", "replace", True,
      "torch.save(getattr(net, 'module', net).cpu().state_dict(), save_path)",
      "the port drops the nn.DataParallel wrapper (networks.init_net), so .module no longer exists"),
    C("net.cuda(self.gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.npu(self.gpu_ids[0])",
      "moves the network back to the device after saving; Module.cuda fails without CUDA"),
])

E("dovenet_networks", "models/networks.py", "explicit_replacement",
  "bcmi DoveNet models/networks.py (init_net, generators, discriminators)", [
    C("assert(torch.cuda.is_available())", "torch_cuda_api", "replace", True,
      "assert(torch.npu.is_available())",
      "assertion fails on an NPU host"),
    C("net.to(gpu_ids[0])", "tensor_to_device", "replace", True,
      "net.to(f'npu:{gpu_ids[0]}')",
      "a bare int device means a CUDA ordinal here (transfer_to_npu has to rewrite ints for Module.to for the same reason)"),
    C("net = torch.nn.DataParallel(net, gpu_ids)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is marked unsupported on Atlas A2/A3 in Ascend's 2.7.1 API list; single-NPU training without the wrapper (multi-NPU would need DDP + hccl). base_model.save_networks is adjusted for the missing .module"),
])

E("dovenet_train", "train.py", "explicit_replacement",
  "bcmi DoveNet train.py (pix2pix training loop)", [
    C("from options.train_options import TrainOptions", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (before options/models, which call torch.npu.*)", IMPORT_NOTE),
])

E("dovenet_test", "test.py", "explicit_replacement",
  "bcmi DoveNet test.py (evaluation with MSE/PSNR/fMSE)", [
    C("from options.test_options import TestOptions", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
])

E("dovenet_train_sh", "scripts/train_dovenet.sh", "explicit_replacement",
  "bcmi DoveNet scripts/train_dovenet.sh (launcher)", [
    C("=set -ex", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell or container already sources it"),
    C("CUDA_VISIBLE_DEVICES=${GPU_ID} python train.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=${GPU_ID} python train.py \\",
      "the script masks to the requested device and then trains on --gpu_ids 0; CUDA_VISIBLE_DEVICES is ignored by CANN, so a non-zero GPU_ID would silently train on NPU 0"),
])

E("dovenet_requirements", "requirements.txt", "explicit_replacement",
  "bcmi DoveNet requirements.txt", [
    C("torch>=1.4.0", "import_torch_npu", "replace", False,
      "torch==2.1.0  # plus torch_npu==2.1.0.post17: the torch_npu wheel must match the torch version",
      "packaging: an open torch range does not pull torch_npu and may resolve to a torch without a matching wheel"),
])

# --------------------------------------------------------------------------------------------
# iHarm (SamsungLabs/image_harmonization: iDIH / Improved DIH)
# --------------------------------------------------------------------------------------------
E("iharm_train", "train.py", "explicit_replacement",
  "SamsungLabs image_harmonization train.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
])

E("iharm_exp", "iharm/utils/exp.py", "explicit_replacement",
  "SamsungLabs image_harmonization iharm/utils/exp.py (init_experiment: devices, DDP init)", [
    C("torch.cuda.set_device(cfg.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(cfg.local_rank)", "distributed branch: binds each rank to its NPU"),
    C("init_process_group(backend='nccl'", "dist_backend", "replace", True,
      "torch.distributed.init_process_group(backend='hccl', init_method='env://')",
      "NCCL is not available on Ascend; HCCL is the collective backend"),
    C("cfg.device = torch.device('cuda')", "device_type", "replace", True,
      "cfg.device = torch.device('npu')", "distributed branch device (current device set above)"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = cfg.gpus", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = cfg.gpus",
      "gpu_ids are re-indexed from 0 right after masking; unmasked on NPU, --gpus=2,3 would silently run on NPUs 0,1. Like CUDA, it only takes effect if set before the device runtime initialises"),
    C("cfg.device = torch.device(f'cuda:{cfg.gpu_ids[0]}')", "device_type", "replace", True,
      "cfg.device = torch.device(f'npu:{cfg.gpu_ids[0]}')", "single-process device"),
])

E("iharm_trainer", "iharm/engine/simple_trainer.py", "explicit_replacement",
  "SamsungLabs image_harmonization iharm/engine/simple_trainer.py (SimpleHTrainer)", [
    C("=drop_last=True, pin_memory=True,", "pin_memory", "replace", False,
      "drop_last=True, pin_memory=True, pin_memory_device='npu',",
      "performance only; whether default pinning targets the NPU depends on the torch version (unconfirmed)"),
    C("shuffle=False, drop_last=True, pin_memory=True,", "pin_memory", "replace", False,
      "shuffle=False, drop_last=True, pin_memory=True, pin_memory_device='npu',",
      "performance only (unconfirmed), as for the training loader"),
    C("self.net = _CustomDP(self.net", "distributed_framework", "replace", True,
      "raise RuntimeError('nn.DataParallel is not supported on Ascend NPU; launch multi-NPU runs with torchrun (DDP + hccl)')",
      "_CustomDP subclasses torch.nn.DataParallel, unsupported on Atlas A2/A3 per Ascend's API list; the distributed branch above is the supported multi-NPU path"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()", "torch.cuda.empty_cache raises without CUDA"),
])

E("iharm_predictor", "iharm/inference/predictor.py", "explicit_replacement",
  "SamsungLabs image_harmonization iharm/inference/predictor.py (device passed in)", [])

E("iharm_evaluation", "iharm/inference/evaluation.py", "explicit_replacement",
  "SamsungLabs image_harmonization iharm/inference/evaluation.py (+ a latency benchmark helper)", [
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "NPU execution is asynchronous too: the timing needs the NPU sync, and torch.cuda.synchronize raises without CUDA"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start_event = torch.npu.Event(enable_timing=True)", "device event timer"),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end_event = torch.npu.Event(enable_timing=True)", "device event timer"),
    C("torch.cuda.synchronize()  # wait for end_event", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()  # wait for end_event before reading the timer", "as above"),
    C("'max_mem_mb': torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      "'max_mem_mb': torch.npu.max_memory_allocated() / 2 ** 20,",
      "the CUDA counter would report 0 for an uninitialised CUDA context (silently wrong)"),
])

E("iharm_evaluate_script", "scripts/evaluate_model.py", "explicit_replacement",
  "SamsungLabs image_harmonization scripts/evaluate_model.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("device = torch.device(f'cuda:{args.gpu}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{args.gpu}')", "evaluation device"),
])

E("iharm_config", "config.yml", "explicit_replacement",
  "SamsungLabs image_harmonization config.yml (paths only)", [])

E("iharm_model_cfg", "models/fixed256/improved_dih.py", "explicit_replacement",
  "SamsungLabs image_harmonization models/fixed256/improved_dih.py (model/training recipe)", [])

# --------------------------------------------------------------------------------------------
# CDTNet (bcmi/CDTNet-High-Resolution-Image-Harmonization, iHarm-based, 3D LUT CUDA extension)
# --------------------------------------------------------------------------------------------
E("cdtnet_lut", "iharm/model/modeling/lut.py", "kernel_rewrite",
  "bcmi CDTNet iharm/model/modeling/lut.py (3D LUT via the trilinear CUDA extension)", [
    C("=import trilinear", "custom_cuda_extension", "removal", False, None,
      "dead after the rewrite below; the extension's CPU fallback build would still import, so leaving it only keeps an unneeded build dependency"),
    C("return TrilinearInterpolationFunction.apply(lut, x)", "custom_cuda_extension", "replace", True,
      "return lut, F.grid_sample(lut.unsqueeze(0).expand(x.size(0), -1, -1, -1, -1), x.permute(0, 2, 3, 1).unsqueeze(1) * 2 - 1, mode='bilinear', padding_mode='border', align_corners=True).squeeze(2)",
      "the trilinear .cu kernel has no NPU build (and its CPU fallback would read NPU pointers); a 5-D bilinear grid_sample over the [3, B, G, R] LUT is exactly trilinear interpolation and gives autograd for free"),
])

E("cdtnet_trilinear_setup", "trilinear_cpp/setup.py", "kernel_rewrite",
  "Image-Adaptive-3DLUT / CDTNet trilinear_cpp/setup.py (CUDAExtension with CPU fallback)", [])

E("cdtnet_train_sh", "runs/train_cdtnet.sh", "explicit_replacement",
  "bcmi CDTNet training launcher", [
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell or container already sources it"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only knob, inert on Ascend"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", False,
      "npu-smi info",
      "informational; the script has no `set -e`, so a missing nvidia-smi only prints an error"),
])

# --------------------------------------------------------------------------------------------
# Harmonizer (ZHKKKe/Harmonizer)
# --------------------------------------------------------------------------------------------
E("harmonizer_run_image", "demo/image_harmonization/run.py", "explicit_replacement",
  "ZHKKKe Harmonizer demo/image_harmonization/run.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "cuda = torch.npu.is_available()",
      "otherwise the demo silently runs on the CPU of an NPU host"),
    C("harmonizer = harmonizer.cuda()", "tensor_to_device", "replace", True,
      "harmonizer = harmonizer.npu()", "model placement"),
    C("harmonizer.load_state_dict(torch.load(args.pretrained), strict=True)", "tensor_to_device", "replace", False,
      "harmonizer.load_state_dict(torch.load(args.pretrained, map_location='cpu'), strict=True)",
      "unconfirmed: only needed if the released harmonizer.pth holds CUDA tensors (then torch.load fails without CUDA)"),
    C("=harmonizer.eval()", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)  # example images come in arbitrary resolutions",
      "performance only: full-resolution inputs of varying size are dynamic shapes; binary kernels avoid per-shape operator compilation"),
    C("comp = comp.cuda()", "tensor_to_device", "replace", True, "comp = comp.npu()", "input placement"),
    C("mask = mask.cuda()", "tensor_to_device", "replace", True, "mask = mask.npu()", "input placement"),
])

E("harmonizer_run_video", "demo/video_harmonization/run.py", "explicit_replacement",
  "ZHKKKe Harmonizer demo/video_harmonization/run.py (module-level DEVICE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("DEVICE = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "DEVICE = torch.device('npu:0' if torch.npu.is_available() else 'cpu')",
      "otherwise silently falls back to CPU"),
])

E("harmonizer_model", "src/model/harmonizer.py", "explicit_replacement",
  "ZHKKKe Harmonizer src/model/harmonizer.py (device-agnostic model)", [])

# --------------------------------------------------------------------------------------------
# libcom (bcmi/libcom image composition toolbox)
# --------------------------------------------------------------------------------------------
E("libcom_environment", "libcom/utils/environment.py", "explicit_replacement",
  "bcmi libcom libcom/utils/environment.py (check_gpu_device, seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401",
      "library device layer imported by every libcom model (there is no single entry script); " + IMPORT_NOTE),
    C("assert torch.cuda.is_available(), 'Only GPU are supported'", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available(), 'Only NPU are supported'", "every model constructor asserts this"),
    C("torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "assert 0 <= device < torch.npu.device_count(), f'invalid device id: {device}'",
      "returns 0 without CUDA, so every id is rejected"),
    C("device = torch.device(f'cuda:{device}')", "device_type", "replace", True,
      "device = torch.device(f'npu:{device}')", "int/str ids map to NPU devices"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "not required: torch.manual_seed above already seeds the registered NPU generator, and the CUDA call is a queued no-op without CUDA"),
    C("props = torch.cuda.get_device_properties(device)", "torch_cuda_api", "replace", True,
      "props = torch.npu.get_device_properties(device)", "raises without CUDA"),
    C("props.major, props.minor", "device_capability_check", "replace", True,
      "return '{} ({:.1f} GB)'.format(props.name, props.total_memory / 1024 ** 3)",
      "NPU device properties only carry name, total_memory, L2_cache_size, cube_core_num, vector_core_num: no major/minor"),
])

E("libcom_shadow_generation", "libcom/shadow_generation/shadow_generation.py", "explicit_replacement",
  "bcmi libcom libcom/shadow_generation/shadow_generation.py (ControlNet-based shadow generation)", [
    C("with torch.cuda.amp.autocast(enabled=self.use_fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.use_fp16):",
      "CUDA autocast is disabled with a warning on a non-CUDA host: the requested fp16 sampling silently runs in fp32 (2x memory)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", True,
      "torch.npu.empty_cache()", "raises without CUDA"),
])

E("libcom_ddim", "libcom/shadow_generation/source/ldm/models/diffusion/ddim.py", "explicit_replacement",
  "bcmi libcom vendored ldm/models/diffusion/ddim.py (CompVis DDIM sampler)", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", False,
      "if attr.device != self.model.device:",
      "constructing torch.device('cuda') needs no CUDA and the comparison is always true, so the move below still runs; edited for consistency only"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      "attr = attr.to(self.model.device)",
      "schedule buffers must live on the model's NPU (libcom allows device ids other than 0, so 'npu' alone is not enough)"),
])

E("libcom_fopa", "libcom/fopa_heat_map/fopa_heat_map.py", "explicit_replacement",
  "bcmi libcom libcom/fopa_heat_map/fopa_heat_map.py (device from check_gpu_device)", [])

E("libcom_test_shadow", "tests/test_shadow_generation.py", "explicit_replacement",
  "bcmi libcom tests/test_shadow_generation.py", [
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
      "torch.npu.max_memory_allocated() / 1024 ** 3))",
      "without CUDA the CUDA counter silently reports 0 GB"),
])

# --------------------------------------------------------------------------------------------
# AnyDoor (ali-vilab/AnyDoor: zero-shot object-level image customisation / compositing)
# --------------------------------------------------------------------------------------------
E("anydoor_train", "run_train_anydoor.py", "explicit_replacement",
  "ali-vilab AnyDoor run_train_anydoor.py (PyTorch Lightning 1.5 DDP)", [
    C("=import pytorch_lightning as pl", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("trainer = pl.Trainer(gpus=n_gpus", "distributed_framework", "replace", True,
      "trainer = pl.Trainer(accelerator=NPUAccelerator(), devices=n_gpus, strategy=DDPStrategy(process_group_backend='hccl'), precision=16, callbacks=[logger], accumulate_grad_batches=accumulate_grad_batches)",
      "gpus=/accelerator='gpu' fail with no CUDA devices; stock Lightning ships no NPU accelerator, so a registered NPU accelerator (plugin or own subclass) plus an hccl DDP strategy is needed (unconfirmed which plugin)"),
])

E("anydoor_inference", "run_inference.py", "explicit_replacement",
  "ali-vilab AnyDoor run_inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("load_state_dict(model_ckpt, location='cuda')", "tensor_to_device", "replace", True,
      "model.load_state_dict(load_state_dict(model_ckpt, location='npu'))",
      "cldm.model.load_state_dict does torch.load(map_location=torch.device(location)); a CUDA map_location fails without CUDA"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("control = torch.from_numpy(hint.copy()).float().cuda()", "tensor_to_device", "replace", True,
      "control = torch.from_numpy(hint.copy()).float().npu()", "collage hint"),
    C("clip_input = torch.from_numpy(ref.copy()).float().cuda()", "tensor_to_device", "replace", True,
      "clip_input = torch.from_numpy(ref.copy()).float().npu()", "reference image for the DINOv2 encoder"),
])

E("anydoor_attention", "ldm/modules/attention.py", "explicit_replacement",
  "ali-vilab AnyDoor ldm/modules/attention.py (SD 2.x attention with optional xformers)", [
    C("with torch.autocast(enabled=False, device_type='cuda'):", "amp", "replace", True,
      "with torch.autocast(enabled=False, device_type='npu'):",
      "disabling CUDA autocast does nothing on NPU, so under NPU autocast q.k^T and the softmax run in fp16, which the upstream fp32 guard exists to prevent"),
    C("out = xformers.ops.memory_efficient_attention(q, k, v, attn_bias=None, op=self.attention_op)", "attention_kernel", "replace", False,
      "out = F.scaled_dot_product_attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)).squeeze(0)",
      "performance: xformers cannot be installed on NPU, so the import guard already falls back to CrossAttention; SDPA dispatches to the NPU fused attention"),
    C('attn_mode = "softmax-xformers" if XFORMERS_IS_AVAILBLE else "softmax"', "attention_kernel", "replace", False,
      'attn_mode = "softmax-xformers"  # MemoryEfficientCrossAttention now uses SDPA (NPU fused attention)',
      "performance only; selects the SDPA-backed class above"),
])

E("anydoor_config", "configs/anydoor.yaml", "explicit_replacement",
  "ali-vilab AnyDoor configs/anydoor.yaml (model config)", [])

E("anydoor_environment", "environment.yaml", "explicit_replacement",
  "ali-vilab AnyDoor environment.yaml (conda env)", [
    C("cudatoolkit=11.7", "custom_cuda_extension", "removal", False, None,
      "CUDA runtime package: useless on NPU hosts and not published for aarch64 (unconfirmed whether it breaks env creation on every host)"),
    C("pytorch=2.0.0", "import_torch_npu", "replace", True,
      "- pytorch=2.1.0  # CPU build; pip: torch_npu==2.1.0.post17",
      "no torch_npu wheel pairs with torch 2.0.0 (the matrix lists 2.0.1 and 2.1.0); torch_npu must be added"),
    C("triton==2.0.0", "triton_kernel_tuning", "removal", False, None,
      "only an xformers dependency here; NVIDIA Triton has no Ascend backend (triton-ascend is separate), unconfirmed whether pip fails"),
    C("xformers==0.0.18", "attention_kernel", "removal", False, None,
      "no NPU backend; the code already guards the import (unconfirmed whether pip install fails on the host)"),
])

# --------------------------------------------------------------------------------------------
# SGRNet (bcmi/Object-Shadow-Generation-Dataset-DESOBA: shadow generation)
# --------------------------------------------------------------------------------------------
E("sgrnet_train_sh", "src/script/SGRNet_train.sh", "explicit_replacement",
  "bcmi DESOBA src/script/SGRNet_train.sh", [
    C("=echo $CMD", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; needed unless the shell or container already sources it"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "the run always uses --gpu_ids 0 inside the mask; ignored on NPU, so the chosen card is silently replaced by NPU 0"),
])

E("sgrnet_model", "src/models/SGRNet_model.py", "explicit_replacement",
  "bcmi DESOBA src/models/SGRNet_model.py (SGRNet training model)", [
    C("label_real = torch.cuda.FloatTensor(pred_real.size()).fill_(1.0)", "torch_cuda_api", "replace", True,
      "label_real = torch.ones_like(pred_real)", "legacy CUDA tensor type; device-agnostic replacement"),
    C("label_fake = torch.cuda.FloatTensor(pred_fake.size()).fill_(0.0)", "torch_cuda_api", "replace", True,
      "label_fake = torch.zeros_like(pred_fake)", "legacy CUDA tensor type"),
    C("self.loss_G_param = torch.zeros(1).cuda()", "tensor_to_device", "replace", True,
      "self.loss_G_param = torch.zeros(1, device=self.device)", "tensor placement"),
])

E("sgrnet_test", "src/test.py", "explicit_replacement",
  "bcmi DESOBA src/test.py (RMSE/SSIM evaluation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401", IMPORT_NOTE),
    C("gt = util.tensor2im(data['C'].cuda(), scale=0)", "tensor_to_device", "replace", True,
      "gt = util.tensor2im(data['C'].npu(), scale=0)", "pointless device hop, but Tensor.cuda raises without CUDA"),
    C("mask = util.tensor2im(data['B'].cuda(), scale=0)[..., 0]", "tensor_to_device", "replace", True,
      "mask = util.tensor2im(data['B'].npu(), scale=0)[..., 0]", "as above"),
    C("torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", True,
      "print('peak NPU memory: %.2f GB' % (torch.npu.max_memory_allocated() / 1024 ** 3))",
      "silently reports 0 without CUDA"),
])

E("sgrnet_dataset", "src/data/shadow_generation_dataset.py", "explicit_replacement",
  "bcmi DESOBA src/data/ShadowGenerationDataset (PIL/numpy only)", [])
