"""Labels for probe23 (hand-written synthetic upstream files; see ../README.md).

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

# Shared notes (facts from /work/shared/knowledge/torch-npu-migration.md, "TNM" below).
IMP = ("import torch_npu goes after import torch: needed for the npu device before torch_npu 2.5.1, "
       "recommended after (TNM §1.1)")
CUDA_CALL = "torch.cuda.* needs a CUDA build; the NPU form is torch.npu.* / torch_npu.npu.* (TNM §2.1, §3.4)"
DEV = "tensor/module moved to a CUDA device; on Ascend it is .npu() / 'npu' (TNM §3.4)"
AVAIL = ("torch.cuda.is_available() is False on an NPU host, so this silently takes the CPU path; "
         "check torch.npu.is_available() (TNM §2.1)")
AMP = ("torch.cuda.amp autocast/GradScaler act on CUDA tensors only; NPU tensors run without autocast / loss "
       "scaling. NPU form torch_npu.npu.amp.* or torch.amp with device_type='npu' (TNM §3.4, §3.7)")
NCCL = "NCCL does not exist on Ascend; the collective backend is HCCL (TNM §2.4, ascend-distributed.md §6.1)"
VIS = ("CUDA_VISIBLE_DEVICES is not read by the Ascend runtime; the process-level variable is "
       "ASCEND_RT_VISIBLE_DEVICES (ascend-distributed.md §1)")

E("pq_calib_resnet", "tools/calibrate_quant_resnet50.py", "explicit_replacement",
  "NVIDIA pytorch-quantization PTQ calibration example (quant_modules.initialize, TensorQuantizer, histogram calib)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("model(image.cuda())", "tensor_to_device", R, True, "model(image.npu())", DEV),
    C("model.cuda()  # amax buffers", "tensor_to_device", R, True, "model.npu()  # amax buffers are created on the host", DEV),
    C("image = image.cuda(non_blocking=True)", "tensor_to_device", R, True, "image = image.npu(non_blocking=True)", DEV),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", R, True, "target = target.npu(non_blocking=True)", DEV),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", CUDA_CALL),
    C("=model.cuda()", "tensor_to_device", R, True, "model.npu()", DEV),
    C("torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      'logger.info("peak memory: %.1f MiB", torch.npu.max_memory_allocated() / 2**20)', CUDA_CALL),
])

E("pq_qat_finetune", "examples/quant/qat_utils.py", "explicit_replacement",
  "pytorch-quantization QAT fine-tune helpers and QDQ ONNX export (use_fb_fake_quant)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", R, False, "torch.npu.manual_seed_all(seed)",
      "without CUDA this call is only queued and never runs; torch.manual_seed above already seeds the "
      "accelerator, so this is a consistency edit"),
    C('map_location="cuda:0"', "device_type", R, True, 'state = torch.load(ckpt_path, map_location="npu:0")',
      "map_location names a CUDA device, torch.load fails without CUDA (TNM §2.2, §7)"),
    C("return model.cuda()", "tensor_to_device", R, True, "return model.npu()", DEV),
    C("nn.CrossEntropyLoss(label_smoothing=label_smoothing).cuda()", "tensor_to_device", R, False,
      "criterion = nn.CrossEntropyLoss(label_smoothing=label_smoothing).npu()",
      "the loss module has no parameters or buffers, so .cuda() touches no tensor and does not fail; "
      "changed for consistency"),
    C("images, target = images.cuda(non_blocking=True)", "tensor_to_device", R, True,
      "images, target = images.npu(non_blocking=True), target.npu(non_blocking=True)", DEV),
    C('dummy = torch.randn(*input_shape, device="cuda")', "device_type", R, True,
      'dummy = torch.randn(*input_shape, device="npu")', DEV),
])

E("pq_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of a TensorRT/pytorch-quantization INT8 deployment toolkit", [
    C("download.pytorch.org/whl/cu118", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu pairs with the CPU torch wheel on x86 (plain PyPI on aarch64) (TNM §1.1)"),
    C("torch==2.1.2+cu118", "import_torch_npu", R, True, "torch==2.1.0  # plus torch-npu==2.1.0.post17",
      "torch_npu wheels exist for torch 2.1.0, not 2.1.2; the torch-npu pin is added with it (TNM §1.2)"),
    C("torchvision==0.16.2+cu118", "import_torch_npu", R, True, "torchvision==0.16.0",
      "CUDA-tagged wheel; torchvision 0.16.0 is the version paired with torch 2.1 for Ascend (TNM §6, Ascend/vision)"),
    C("onnxruntime-gpu==1.16.3", "custom_cuda_extension", R, True, "onnxruntime-cann",
      "the CUDA build of ONNX Runtime has no Ascend provider; onnxruntime-cann carries CANNExecutionProvider "
      "(onnxruntime.ai CANN EP page; not in the knowledge files, so unconfirmed beyond that page)"),
    C("tensorrt==8.6.1.post1", "custom_cuda_extension", X, True, None,
      "TensorRT needs an NVIDIA GPU; on Ascend engines are built with ATC from the CANN toolkit (product-anchors.md)"),
    C("torch-tensorrt==1.4.0", "custom_cuda_extension", X, True, None,
      "Torch-TensorRT is CUDA-only; graph mode on Ascend is torch.compile with torchair / npugraphs (TNM §6)"),
    C("pycuda==2022.2.2", "custom_cuda_extension", X, True, None,
      "pycuda builds against the CUDA toolkit and needs libcuda; no Ascend build"),
    C("polygraphy==0.49.0", "custom_cuda_extension", X, False, None,
      "pure Python and installs anywhere, but its TensorRT backends are unusable on Ascend; dropped with TensorRT"),
    C("triton==2.1.0", "triton_kernel_tuning", R, True, "triton-ascend",
      "upstream Triton has no Ascend backend; the NPU build is the triton-ascend package (TNM §6)"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", X, False, None,
      "installs anywhere but nvmlInit fails without an NVIDIA driver; the health check moves to torch.npu.mem_get_info "
      "and npu-smi (TNM §6)"),
])

E("ao_qat_ddp", "references/quantization/train_qat.py", "explicit_replacement",
  "torchvision references/quantization eager-mode QAT with DDP (prepare_qat, freeze_bn_stats, CPU convert)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, True, "torch.npu.set_device(args.gpu)", CUDA_CALL),
    C('dist.init_process_group(backend="nccl"', "dist_backend", R, True,
      'dist.init_process_group(backend="hccl", init_method=args.dist_url,', NCCL),
    C('tq.fuse_modules_qat(m, [["0", "1", "2"]], inplace=True)', "unsupported_op_workaround", R, True,
      'tq.fuse_modules_qat(m, [["0", "1"]], inplace=True)',
      "Conv+BN+ReLU fusion yields torch.ao.nn.intrinsic.qat.ConvBnReLU2d, marked unsupported on Atlas A2/A3 in "
      "Ascend's 2.7.1 API list (ops/torch_api_npu_support_2.7.1.tsv); fusing Conv+BN only keeps BN folding. "
      "That the Conv+BN form is fine is unconfirmed"),
    C('device = torch.device("cuda")', "device_type", R, True, 'device = torch.device("npu")', DEV),
])

E("ao_fx_ptq", "scripts/fx_ptq.py", "device_branch_or_abstraction",
  "torch.ao FX graph-mode PTQ (prepare_fx / convert_fx, x86 backend) with a GPU float baseline", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('fp_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'fp_device = torch.device("npu" if torch.npu.is_available() else "cpu")', AVAIL),
])

E("tp_prune_bench", "benchmarks/prune_and_measure.py", "explicit_replacement",
  "Torch-Pruning MetaPruner example with latency measured by CUDA events", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "starter = torch.npu.Event(enable_timing=True)", "torch.cuda.Event -> torch_npu.npu.Event (ops/torch_api_npu_support_2.7.1.tsv)"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "ender = torch.npu.Event(enable_timing=True)", "torch.cuda.Event -> torch_npu.npu.Event (ops/torch_api_npu_support_2.7.1.tsv)"),
    C("torch.cuda.synchronize()  # wait for ender", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # wait for ender", CUDA_CALL),
    C('(weights="DEFAULT").cuda().eval()', "tensor_to_device", R, True,
      'model = getattr(torchvision.models, args.arch)(weights="DEFAULT").npu().eval()', DEV),
    C("example = torch.randn(1, 3, 224, 224).cuda()", "tensor_to_device", R, True,
      "example = torch.randn(1, 3, 224, 224).npu()", DEV),
    C('bench_in = torch.randn(args.batch_size, 3, 224, 224, device="cuda")', "device_type", R, True,
      'bench_in = torch.randn(args.batch_size, 3, 224, 224, device="npu")', DEV),
    C('"device": torch.cuda.get_device_name(0)', "torch_cuda_api", R, True,
      '"device": torch.npu.get_device_name(0),', CUDA_CALL),
])

E("nni_prune_speedup", "examples/compression/l1norm_speedup.py", "explicit_replacement",
  "NNI 3.x L1NormPruner + ModelSpeedup + AMP fine-tune example", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('device = torch.device("cuda:0")', "device_type", R, True, 'device = torch.device("npu:0")', DEV),
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.npu.amp.autocast():", AMP),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", X, False, None,
      "unchanged, device_count() is 0 on an NPU host and the branch is skipped; the porter deletes it because "
      "nn.DataParallel is unsupported on Ascend (TNM §2.8)"),
    C("model = nn.DataParallel(model)", "distributed_framework", X, False, None,
      "torch.nn.DataParallel is unsupported on Ascend (TNM §2.8, ops/torch_api_npu_support_2.7.1.tsv); never "
      "reached unchanged, so not required"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", R, True, "scaler = torch.npu.amp.GradScaler()", AMP),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", R, True,
      'print(f"peak mem {torch.npu.max_memory_allocated(device) / 2**20:.0f} MiB")', CUDA_CALL),
])

E("nni_experiment_yaml", "examples/compression/auto/config.yml", "explicit_replacement",
  "NNI v3 experiment config (local training service with GPU scheduling)", [
    C("trialCommand: CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "trialCommand: ASCEND_RT_VISIBLE_DEVICES=${NNI_TRIAL_NPU:-0} python3 prune_trial.py --finetune-epochs 2 --device npu",
      VIS + "; and --device cuda fails in the trial script"),
    C("trialGpuNumber: 1", "device_type", R, False, "trialGpuNumber: 0",
      "NNI's local GPU scheduler counts NVIDIA GPUs; on an NPU host trials asking for a GPU would wait forever, so "
      "devices are assigned in trialCommand instead (NNI behaviour unconfirmed)"),
    C("gpuIndices: [0, 1, 2, 3]", "device_type", X, False, None,
      "GPU-scheduler key without meaning once trialGpuNumber is 0 (unconfirmed)"),
])

E("kd_trainer", "distill/trainer.py", "explicit_replacement",
  "knowledge-distillation trainer with the frozen teacher on a second GPU (cuda:1) and its own stream", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('student_device: str = "cuda:0"', "device_type", R, True, 'student_device: str = "npu:0"', DEV),
    C('teacher_device: str = "cuda:1"', "device_type", R, True, 'teacher_device: str = "npu:1"', DEV),
    C("if torch.cuda.device_count() < 2:", "torch_cuda_api", R, True, "if torch.npu.device_count() < 2:",
      "device_count() of CUDA is 0 on an NPU host, so the teacher is always folded onto the student's device and the "
      "second NPU is never used (TNM §2.1)"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)", "amp", R, True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=cfg.amp)", AMP),
    C("self.teacher_stream = torch.cuda.Stream(device=self.t_dev)", "torch_cuda_api", R, True,
      "self.teacher_stream = torch.npu.Stream(device=self.t_dev)", CUDA_CALL),
    C("with torch.cuda.stream(self.teacher_stream):", "torch_cuda_api", R, True,
      "with torch.npu.stream(self.teacher_stream):", CUDA_CALL),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "autocast for device_type cuda does not cover NPU tensors, the teacher would run in fp32 (TNM §3.4)"),
    C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=self.cfg.amp):', "amp", R, True,
      'with torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.cfg.amp):',
      "autocast for device_type cuda does not cover NPU tensors, so the student trains in fp32 while the scaler "
      "still scales (TNM §3.4)"),
    C("torch.cuda.current_stream(self.t_dev).wait_stream(self.teacher_stream)", "torch_cuda_api", R, True,
      "torch.npu.current_stream(self.t_dev).wait_stream(self.teacher_stream)", CUDA_CALL),
    C("torch.cuda.memory_allocated(self.s_dev)", "torch_cuda_api", R, True,
      "self.scaler.get_scale(), torch.npu.memory_allocated(self.s_dev) / 1e9)", CUDA_CALL),
])

E("kd_config", "configs/distill/deit_s_from_regnety160.yaml", "explicit_replacement",
  "DeiT-style distillation run config (teacher on GPU 1, env block, AMP and dist settings)", [
    C('CUDA_VISIBLE_DEVICES: "0,1"', "env_var", R, True, 'ASCEND_RT_VISIBLE_DEVICES: "0,1"', VIS),
    C('NCCL_P2P_DISABLE: "0"', "env_var", X, False, None, "NCCL variable, read by nothing on Ascend; deleted"),
    C('PYTORCH_CUDA_ALLOC_CONF: "expandable_segments:True"', "env_var", R, False,
      'PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True"',
      "the caching-allocator knob for NPU is PYTORCH_NPU_ALLOC_CONF (expandable_segments needs HDK >= 23.0.0, TNM §1.6); "
      "memory behaviour only"),
    C("device: cuda:0", "device_type", R, True, "device: npu:0", DEV),
    C("device: cuda:1", "device_type", R, True, "device: npu:1", DEV),
    C("channels_last: true", "unsupported_op_workaround", R, False, "channels_last: false",
      "channels_last is listed as not supported in the migration-tool limitations (TNM §2.8); whether it fails or "
      "only slows a plain torch_npu run is unconfirmed"),
    C("device_type: cuda", "amp", R, True, "device_type: npu", AMP),
    C("dist_backend: nccl", "dist_backend", R, True, "dist_backend: hccl", NCCL),
])

E("nncf_qat", "examples/torch/resnet18/qat_main.py", "device_branch_or_abstraction",
  "NNCF PyTorch QAT example (nncf.quantize + fine-tune + OpenVINO IR export)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", R, True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', AVAIL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; torch.npu.empty_cache() is the NPU form (TNM §2.1)"),
])

GUARDED = ("only reached when the CUDA check above is true, which it never is unchanged on an NPU host; "
           "changed together with that check")

E("brevitas_qat", "src/bnn_pynq/train_w4a4.py", "device_branch_or_abstraction",
  "Brevitas W4A4 CNV QAT on CIFAR-10 with QCDQ ONNX export (brevitas_examples bnn_pynq style)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('os.environ["CUDA_LAUNCH_BLOCKING"] = "1"', "env_var", R, False, 'os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"',
      "debug-only synchronous launch; the Ascend variable is ASCEND_LAUNCH_BLOCKING (ascend-host-formats.md §3.8)"),
    C("use_gpu = args.gpu >= 0 and torch.cuda.is_available()", "device_type", R, True,
      "use_gpu = args.gpu >= 0 and torch.npu.is_available()", AVAIL),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", R, False, "torch.npu.set_device(args.gpu)", GUARDED),
    C('device = torch.device(f"cuda:{args.gpu}" if use_gpu else "cpu")', "device_type", R, False,
      'device = torch.device(f"npu:{args.gpu}" if use_gpu else "cpu")', GUARDED),
    C("model = model.cuda(args.gpu)", "tensor_to_device", R, False, "model = model.npu(args.gpu)", GUARDED),
])

E("onnx_export", "export.py", "device_branch_or_abstraction",
  "YOLOv5-style export.py: select_device() + torch.onnx.export + onnxsim + onnxruntime check", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "-1"', "env_var", R, False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = ""  # CPU export',
      "the CPU branch returns torch.device('cpu') anyway, so hiding devices is cosmetic; rewritten with the rest of "
      "select_device"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = device', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = device', VIS),
    C("assert torch.cuda.is_available() and torch.cuda.device_count()", "torch_cuda_api", R, True,
      'assert torch.npu.is_available() and torch.npu.device_count() >= len(device.replace(",", "")), \\',
      "the assert fails on an NPU host for any --device other than cpu (TNM §2.1)"),
    C("if not cpu and torch.cuda.is_available():", "device_type", R, True,
      "if not cpu and torch.npu.is_available():", AVAIL),
    C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", R, False,
      "p = torch.npu.get_device_properties(i)",
      GUARDED + "; name and total_memory exist on NPU properties (ops/torch_api_npu_support_2.7.1.tsv)"),
    C('arg = "cuda:0"', "device_type", R, False, 'arg = "npu:0"', GUARDED),
    C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda', "device_type", R, False,
      'providers = ["CANNExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]',
      "verification only: on NPU the call passes cuda=False and the CPU provider path works; the porter points it at "
      "the CANN EP of onnxruntime-cann (onnxruntime.ai CANN EP page)"),
])

ORT_CANN = ("ONNX Runtime's Ascend provider is CANNExecutionProvider from onnxruntime-cann (options device_id, "
            "npu_mem_limit, arena_extend_strategy, ...; onnxruntime.ai CANN EP page, not in the knowledge files)")

E("ort_iobinding", "deploy/ort_runner.py", "explicit_replacement",
  "ONNX Runtime GPU runner with TensorRT/CUDA EPs and IO binding of torch tensors", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C('providers.append(("TensorrtExecutionProvider", {', "device_type", X, False, None,
      "TensorRT EP does not exist for Ascend; unchanged ORT only warns and skips it, the porter deletes the block"),
    C('providers.append(("CUDAExecutionProvider", {', "device_type", R, True,
      'providers.append(("CANNExecutionProvider", {',
      "an unavailable provider is skipped with a warning and the session silently runs on CPU; " + ORT_CANN),
    C('"gpu_mem_limit": 8 * 1024 ** 3,', "device_type", R, False, '"npu_mem_limit": 8 * 1024 ** 3,',
      "CUDA EP option; the CANN EP calls it npu_mem_limit. Whether CANN EP rejects unknown keys is unconfirmed"),
    C('"cudnn_conv_algo_search": "EXHAUSTIVE",', "device_type", X, False, None,
      "cuDNN-only option; unconfirmed whether CANN EP rejects it"),
    C('"do_copy_in_default_stream": True,', "device_type", X, False, None,
      "CUDA EP option; unconfirmed whether CANN EP rejects it"),
    C('self.device = torch.device(f"cuda:{device_id}")', "device_type", R, True,
      'self.device = torch.device(f"npu:{device_id}")', DEV),
    C('if "CUDAExecutionProvider" not in active:', "device_type", R, False,
      'if "CANNExecutionProvider" not in active:', "log-only check; it would warn on every NPU start"),
    C("if not t.is_cuda:", "device_type", R, False, "if not t.is_npu:",
      "is_cuda is False for NPU tensors, so the .to(self.device) below runs but is a no-op for tensors already there"),
    C('=name=meta.name, device_type="cuda", device_id=self.device_id,', "device_type", R, True,
      'name=meta.name, device_type="cann", device_id=self.device_id,',
      "IO binding to a CUDA device cannot work in a CANN build; the device name 'cann' for OrtDevice is unconfirmed"),
    C("device_id=self.device_id,  # outputs stay on the device", "device_type", R, True,
      'name=meta.name, device_type="cann", device_id=self.device_id,  # outputs stay on the device',
      "IO binding to a CUDA device cannot work in a CANN build; the device name 'cann' for OrtDevice is unconfirmed"),
    C("torch.cuda.current_stream().synchronize()", "torch_cuda_api", R, True,
      "torch.npu.current_stream().synchronize()", CUDA_CALL),
    C("torch.cuda.synchronize()  # finish warm-up", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # finish warm-up", CUDA_CALL),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
])

TRT = ("TensorRT and pycuda need an NVIDIA GPU and driver; on Ascend the engine is an .om model built by ATC "
       "(atc --model ... --framework=5 --soc_version ..., product-anchors.md) and INT8 calibration moves to "
       "Ascend's AMCT tool (AMCT API not in the knowledge files: unconfirmed)")

E("trt_int8_calib", "trt/calibrator.py", "explicit_replacement",
  "TensorRT IInt8EntropyCalibrator2 with pycuda buffers and an INT8 engine builder (TensorRT samples style)", [
    C("import pycuda.autoinit", "custom_cuda_extension", X, True, None, TRT),
    C("import pycuda.driver as cuda", "custom_cuda_extension", X, True, None, TRT),
    C("import tensorrt as trt", "custom_cuda_extension", R, True, "import subprocess  # ATC build; AMCT for INT8", TRT),
    C("TRT_LOGGER = trt.Logger(trt.Logger.WARNING)", "custom_cuda_extension", X, True, None, TRT),
    C("class EntropyCalibrator(trt.IInt8EntropyCalibrator2):", "custom_cuda_extension", R, True,
      "class EntropyCalibrator:", TRT + "; the calibrator becomes a plain batch feeder for AMCT"),
    C("trt.IInt8EntropyCalibrator2.__init__(self)", "custom_cuda_extension", X, True, None, TRT),
    C("self.device_input = cuda.mem_alloc(nbytes)", "custom_cuda_extension", X, True, None,
      TRT + "; calibration batches stay host numpy arrays"),
    C("self.host_input = cuda.pagelocked_empty(", "custom_cuda_extension", R, True,
      "self.host_input = np.empty(stream.batch_size * int(np.prod(input_shape)), np.float32)", TRT),
    C("self.cuda_stream = cuda.Stream()", "custom_cuda_extension", X, True, None, TRT),
    C("cuda.memcpy_htod_async(self.device_input, self.host_input, self.cuda_stream)", "custom_cuda_extension", X, True,
      None, TRT),
    C("self.cuda_stream.synchronize()", "custom_cuda_extension", X, True, None, TRT),
    C("return [int(self.device_input)]", "custom_cuda_extension", R, True,
      "return [self.host_input.reshape(batch.shape)]", TRT + "; a device pointer means nothing outside TensorRT"),
    C("builder = trt.Builder(TRT_LOGGER)", "custom_cuda_extension", R, True,
      'atc_args = ["atc", f"--model={onnx_path}", "--framework=5", f"--output={engine_path}", '
      '"--soc_version=Ascend910B3"]', TRT),
    C("network = builder.create_network(", "custom_cuda_extension", X, True, None, TRT),
    C("parser = trt.OnnxParser(network, TRT_LOGGER)", "custom_cuda_extension", X, True, None, TRT),
    C("config = builder.create_builder_config()", "custom_cuda_extension", X, True, None, TRT),
    C("config.set_memory_pool_limit(", "custom_cuda_extension", X, True, None, TRT),
    C("config.set_flag(trt.BuilderFlag.INT8)", "custom_cuda_extension", X, True, None, TRT),
    C("config.set_flag(trt.BuilderFlag.FP16)", "custom_cuda_extension", R, True,
      'atc_args.append("--precision_mode=allow_fp32_to_fp16")',
      TRT + "; the ATC precision flag spelling is unconfirmed"),
    C("config.int8_calibrator = calibrator", "custom_cuda_extension", X, True, None, TRT),
    C("serialized = builder.build_serialized_network(network, config)", "custom_cuda_extension", R, True,
      "serialized = subprocess.run(atc_args, check=True)", TRT),
])

ATC = ("trtexec/TensorRT do not exist on Ascend; the ONNX model is converted by ATC "
       "(atc --model ... --framework=5 --soc_version ..., product-anchors.md)")

E("trt_build_sh", "scripts/build_engines.sh", "explicit_replacement",
  "shell script building FP16/INT8 TensorRT engines with trtexec and collecting latency", [
    C("export CUDA_VISIBLE_DEVICES=${GPU_ID}", "env_var", R, True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU_ID}", VIS),
    C("export CUDA_MODULE_LOADING=LAZY", "env_var", X, False, None, "CUDA-only variable, no effect on Ascend"),
    C("export TRT_HOME=", "env_var", R, True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "atc and the CANN libraries come from the toolkit's set_env.sh (ascend-host-formats.md §3.8)"),
    C("export PATH=${TRT_HOME}/bin:${PATH}", "env_var", X, False, None, "TensorRT path, harmless but dead"),
    C("export LD_LIBRARY_PATH=/usr/local/cuda/lib64", "env_var", X, False, None,
      "CUDA/TensorRT library path; set_env.sh sets the CANN paths"),
    C("command -v trtexec", "custom_cuda_extension", R, True,
      'command -v atc >/dev/null || { echo "atc not found (source CANN set_env.sh)"; exit 1; }', ATC),
    C("nvidia-smi --query-gpu", "torch_cuda_api", R, True, "npu-smi info",
      "nvidia-smi is absent on an NPU host and set -e stops the script here; npu-smi info is the Ascend tool "
      "(ascend-host-formats.md §1)"),
    C('flags="--fp16"', "custom_cuda_extension", R, True, 'flags="--precision_mode=allow_fp32_to_fp16"',
      ATC + "; trtexec flags are rejected by atc (precision_mode spelling unconfirmed)"),
    C('flags="--int8 --fp16"', "custom_cuda_extension", R, True,
      'flags="--precision_mode=allow_fp32_to_fp16"  # Q/DQ model is quantized with AMCT first',
      ATC + "; INT8 needs an AMCT-quantized model (unconfirmed)"),
    C('flags="--int8 --fp16 --calib=${CALIB_CACHE}"', "custom_cuda_extension", R, True,
      'flags="--precision_mode=allow_fp32_to_fp16"  # calibrate with AMCT before atc',
      ATC + "; there is no TensorRT calibration cache for atc (AMCT details unconfirmed)"),
    C('trtexec --onnx="${onnx}"', "custom_cuda_extension", R, True,
      'atc --model="${onnx}" --framework=5 --soc_version=Ascend910B3 \\', ATC),
    C('--saveEngine="${engine}"', "custom_cuda_extension", R, True, '--output="${engine%.plan}" \\',
      ATC + "; atc writes <output>.om"),
    C("--minShapes=input:1x3x224x224", "custom_cuda_extension", R, True,
      '--input_shape="input:-1,3,224,224" --dynamic_batch_size="1,${BATCH},32" \\',
      ATC + "; ATC dynamic-batch option names unconfirmed"),
    C("--optShapes=input:${BATCH}x3x224x224", "custom_cuda_extension", X, True, None, ATC),
    C("--maxShapes=input:32x3x224x224", "custom_cuda_extension", X, True, None, ATC),
    C("--memPoolSize=workspace:${WORKSPACE_MB}", "custom_cuda_extension", X, True, None, ATC),
    C("--useCudaGraph --noDataTransfers", "custom_cuda_extension", X, True, None, ATC),
    C("--warmUp=500 --duration=10", "custom_cuda_extension", X, True, None,
      ATC + "; latency is measured by a separate benchmark run on the .om (tool unconfirmed)"),
    C("mean=$(grep -oP 'GPU Compute Time", "custom_cuda_extension", R, False,
      "mean=$(grep -oP 'mean = \\K[0-9.]+' \"${log}\" | tail -1 || true)",
      "parses trtexec output; the Ascend benchmark tool's format is unconfirmed"),
    C("qps=$(grep -oP 'Throughput", "custom_cuda_extension", R, False,
      "qps=$(grep -oP 'throughput[^0-9]*\\K[0-9.]+' \"${log}\" | tail -1 || true)",
      "parses trtexec output; the Ascend benchmark tool's format is unconfirmed"),
])

TORCHAIR = ("Torch-TensorRT has no Ascend build; NPU graph mode is torch.compile with the TorchAir backend "
            "(torchair.get_npu_backend(), hiascend TorchAir guide; TNM §6) or backend='npugraphs'")

E("torch_trt_compile", "deploy/compile_trt.py", "explicit_replacement",
  "Torch-TensorRT AOT compile and torch.compile(backend=\"tensorrt\") with eager accuracy/latency check", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("=import torch_tensorrt", "compile_mode", R, True, "import torchair", TORCHAIR + "; torchair must be imported after torch_npu"),
    C("return model.eval().cuda()", "tensor_to_device", R, True, "return model.eval().npu()", DEV),
    C("inputs = [torch_tensorrt.Input(", "compile_mode", X, True, None, TORCHAIR),
    C("trt_model = torch_tensorrt.compile(", "compile_mode", R, True,
      "trt_model = torch.compile(model, backend=torchair.get_npu_backend(), dynamic=True)", TORCHAIR),
    C('return torch.compile(model, backend="tensorrt"', "compile_mode", R, True,
      "return torch.compile(model, backend=torchair.get_npu_backend(compiler_config=torchair.CompilerConfig()), dynamic=False)",
      TORCHAIR + "; the 'tensorrt' backend is registered by torch_tensorrt only, and TorchAir ignores mode/options"),
    C("torch.cuda.synchronize()  # drain warm-up", "torch_cuda_api", R, True, "torch.npu.synchronize()  # drain warm-up", CUDA_CALL),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", CUDA_CALL),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", CUDA_CALL),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C('x = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=dtype)', "device_type", R, True,
      'x = torch.randn(args.batch, 3, 224, 224, device="npu", dtype=dtype)', DEV),
    C("torch_tensorrt.save(compiled, args.save, inputs=[x])", "compile_mode", R, True,
      "torch.save(model.state_dict(), args.save)  # TorchAir graphs are rebuilt when loaded",
      TORCHAIR + "; how a porter saves the compiled artefact is a judgement call (unconfirmed)"),
])

GRAPH = ("torch.cuda.CUDAGraph/graph -> torch.npu.NPUGraph/torch.npu.graph, inference only on Ascend "
         "(TNM §2.3, ops/torch_api_npu_support_2.7.1.tsv)")

E("bench_latency", "benchmark/harness.py", "explicit_replacement",
  "throughput/latency harness: warm-up, synchronize, cudnn.benchmark, CUDA graph capture/replay, peak memory", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("torch.backends.cudnn.benchmark = not deterministic", "compile_mode", R, False,
      "torch_npu.npu.set_compile_mode(jit_compile=False)",
      "cudnn autotuning has no NPU meaning; for static-shape benchmarking the porter sets the compile mode "
      "(msFmkTransplt performance advice, TNM §3.5)"),
    C('"cuda": torch.version.cuda,', "torch_cuda_api", R, False, '"torch_npu": torch_npu.__version__,',
      "torch.version.cuda is None on an NPU build; report only"),
    C('"cudnn": torch.backends.cudnn.version(),', "torch_cuda_api", X, False, None,
      "cuDNN version is None on an NPU host; report only"),
    C('"device": torch.cuda.get_device_name(),', "torch_cuda_api", R, True, '"device": torch.npu.get_device_name(),',
      CUDA_CALL),
    C('"capability": ".".join(map(str, torch.cuda.get_device_capability())),', "device_capability_check", X, True, None,
      "needs CUDA unchanged, and the NPU form returns None so the join would fail too (TNM §2.8)"),
    C("side = torch.cuda.Stream()", "torch_cuda_api", R, True, "side = torch.npu.Stream()", CUDA_CALL),
    C("side.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "side.wait_stream(torch.npu.current_stream())", CUDA_CALL),
    C("with torch.cuda.stream(side):", "torch_cuda_api", R, True, "with torch.npu.stream(side):", CUDA_CALL),
    C("torch.cuda.current_stream().wait_stream(side)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(side)", CUDA_CALL),
    C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "self.graph = torch.npu.NPUGraph()", GRAPH),
    C("with torch.cuda.graph(self.graph):", "torch_cuda_api", R, True, "with torch.npu.graph(self.graph):", GRAPH),
    C('x = torch.randn(batch, *args.input_shape, device="cuda", dtype=args.dtype)', "device_type", R, True,
      'x = torch.randn(batch, *args.input_shape, device="npu", dtype=args.dtype)', DEV),
    C('amp = torch.autocast("cuda", dtype=torch.float16) if args.amp else nullcontext()', "amp", R, True,
      'amp = torch.autocast("npu", dtype=torch.float16) if args.amp else nullcontext()', AMP),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()", CUDA_CALL),
    C("torch.cuda.synchronize()  # per-iteration wall clock", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # per-iteration wall clock", CUDA_CALL),
    C('"peak_mem_mb": torch.cuda.max_memory_allocated() / 2**20,', "torch_cuda_api", R, True,
      '"peak_mem_mb": torch.npu.max_memory_allocated() / 2**20,', CUDA_CALL),
    C('model = load_model(args.model).to(device="cuda", dtype=args.dtype).eval()', "device_type", R, True,
      'model = load_model(args.model).to(device="npu", dtype=args.dtype).eval()', DEV),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError):",
      "the class exists without CUDA, so the line does not fail; whether an NPU OOM raises it or a plain RuntimeError "
      "is unconfirmed"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; cached NPU blocks stay reserved between batch sizes (TNM §2.1)"),
])

E("amp_infer", "tools/eval_amp.py", "explicit_replacement",
  "FP32 vs autocast (fp16/bf16) evaluation script with timing barriers", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", R, True, "x = x.npu(non_blocking=True)", DEV),
    C("y = y.cuda(non_blocking=True)", "tensor_to_device", R, True, "y = y.npu(non_blocking=True)", DEV),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", CUDA_CALL),
    C("with torch.cuda.amp.autocast(enabled=use_amp, dtype=dtype):", "amp", R, True,
      "with torch.npu.amp.autocast(enabled=use_amp, dtype=dtype):", AMP),
    C("torch.cuda.synchronize()  # timing barrier", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # timing barrier", CUDA_CALL),
    C("not torch.cuda.is_bf16_supported()", "device_capability_check", R, True,
      'if args.dtype == "bf16" and not torch.npu.is_bf16_supported():',
      "the CUDA query reports False (or fails) on an NPU host, so bf16 runs are refused; torch.npu.is_bf16_supported "
      "exists (TNM §2.1)"),
    C("model = model.to(memory_format=torch.channels_last).cuda()", "tensor_to_device", R, True,
      "model = model.npu()",
      DEV + "; channels_last is also dropped, it is listed as unsupported in TNM §2.8"),
    C("torch.cuda.memory_reserved()", "torch_cuda_api", R, True,
      'print(f"memory reserved {torch.npu.memory_reserved() / 2**30:.2f} GiB")', CUDA_CALL),
])

TRITON_TUNE = ("triton-ascend runs Triton kernels on the NPU but the CUDA tile/warp/stage choices are not tuned for it; "
               "re-tuning is performance only and its details are not in the knowledge files (unconfirmed)")

E("triton_w8a16", "kernels/w8a16_matmul.py", "kernel_rewrite",
  "Triton weight-only INT8 matmul (W8A16) with autotune configs, GPTQ/AWQ-kernel style", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("(128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),", "triton_kernel_tuning", R, False,
      "(64, 128, 64, 4, 1), (32, 128, 64, 4, 1), (64, 64, 64, 4, 1),", TRITON_TUNE),
    C('eviction_policy="evict_last")', "triton_kernel_tuning", R, False, "other=0)",
      "cache eviction hints are a CUDA L2 detail; dropped for triton-ascend (unconfirmed)"),
    C('assert x.is_cuda and qweight.is_cuda, "inputs must be CUDA tensors"', "device_type", R, True,
      'assert x.is_npu and qweight.is_npu, "inputs must be NPU tensors"',
      "is_cuda is False for NPU tensors, the assert fails (TNM §3.4)"),
    C("with torch.cuda.device(x.device):", "torch_cuda_api", R, True, "with torch.npu.device(x.device):", CUDA_CALL),
    C("y = w8a16_matmul(x.half(), self.qweight, self.scale)", "npu_fused_op", R, False,
      "y = torch_npu.npu_weight_quant_batchmatmul(x.half(), self.qweight.t(), self.scale)",
      "torch_npu has a fused weight-only-quant matmul (npu_weight_quant_batchmatmul, TNM §5, "
      "ops/npu_custom_ops_torch2.7.1_v7.3.0.txt); argument layout unconfirmed; performance only"),
    C("if torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", X, True, None,
      "needs CUDA; the NPU form returns None and cannot be indexed (TNM §2.8)"),
    C("lin = torch.nn.Linear(4096, 11008, bias=False).half().cuda()", "tensor_to_device", R, True,
      "lin = torch.nn.Linear(4096, 11008, bias=False).half().npu()", DEV),
    C('x = torch.randn(16, 4096, device="cuda", dtype=torch.float16)', "device_type", R, True,
      'x = torch.randn(16, 4096, device="npu", dtype=torch.float16)', DEV),
])

E("gptq_quant_linear", "qtoolkit/nn/quant_linear.py", "device_branch_or_abstraction",
  "GPTQ-format 4-bit QuantLinear with an optional nvcc-built GEMV kernel and a torch dequant fallback", [
    C("=import torch", "import_torch_npu", A, False, "import torch_npu",
      "only needed for the fused NPU branch below, which is a performance change"),
    C("if HAS_CUDA_KERNEL and x.is_cuda and x2d.shape[0] <= 8:", "npu_fused_op", B, False,
      "elif x.is_npu: y = torch_npu.npu_weight_quant_batchmatmul(x2d.half(), unpacked_int8_weight, self.scales, "
      "antiquant_offset=zeros)",
      "unchanged, the ImportError guard and x.is_cuda send NPU tensors to the torch dequant fallback, which works "
      "(shift/and ops have NPU kernels, ops/npu_native_ops_torch2.7.1_v7.3.0.base.txt) but re-materialises fp16 "
      "weights; an NPU branch with npu_weight_quant_batchmatmul (TNM §5) is faster. Weight repacking for it unconfirmed"),
])

E("quant_setup_py", "setup.py", "device_branch_or_abstraction",
  "setup.py building a CUDAExtension (GPTQ-style quant_cuda kernels) with CUDA/TensorRT extras", [
    C("=if not NO_CUDA:", "custom_cuda_extension", R, True,
      'if not NO_CUDA and shutil.which("nvcc"):',
      "CUDAExtension needs nvcc and a CUDA toolkit, so pip install fails on an NPU host unless the build is skipped; "
      "the Python code already falls back without quant_cuda (TNM §6, custom CUDA extensions)"),
    C('"trt": ["tensorrt>=8.6", "pycuda", "polygraphy"],', "custom_cuda_extension", X, False, None,
      "optional extra; TensorRT/pycuda cannot work on Ascend (ATC replaces them). Only fails when requested"),
    C('"ort": ["onnxruntime-gpu>=1.16"],', "custom_cuda_extension", R, False, '"ort": ["onnxruntime-cann"],',
      "optional extra; the Ascend build of ONNX Runtime is onnxruntime-cann (onnxruntime.ai CANN EP page)"),
    C('"triton": ["triton>=2.1"],', "triton_kernel_tuning", R, False, '"triton": ["triton-ascend"],',
      "optional extra; Triton on Ascend is triton-ascend (TNM §6)"),
    C('"serve": ["fastapi", "uvicorn", "nvidia-ml-py"],', "torch_cuda_api", R, False, '"serve": ["fastapi", "uvicorn"],',
      "optional extra; NVML has no Ascend equivalent in Python, the health check uses torch.npu / npu-smi (TNM §6)"),
])

NVML = ("NVML has no Ascend equivalent; nvmlInit fails on an NPU host and the except clause turns these lines off, so "
        "unchanged they are dead code. The porter drops them and reads torch.npu.utilization / mem_get_info (TNM §6)")

E("serve_health", "server/health.py", "device_branch_or_abstraction",
  "FastAPI health/readiness/metrics endpoints reading GPU memory via torch.cuda and NVML", [
    C("=import pynvml", "torch_cuda_api", X, False, None, NVML),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMP),
    C("pynvml.nvmlInit()", "torch_cuda_api", X, False, None, NVML),
    C("if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      AVAIL + "; the snapshot would silently carry no memory figures"),
    C("free, total = torch.cuda.mem_get_info(index)", "torch_cuda_api", R, False,
      "free, total = torch.npu.mem_get_info(index)", GUARDED),
    C("torch_allocated_mb=torch.cuda.memory_allocated(index)", "torch_cuda_api", R, False,
      "torch_allocated_mb=torch.npu.memory_allocated(index) / 2**20,", GUARDED),
    C("torch_reserved_mb=torch.cuda.memory_reserved(index)", "torch_cuda_api", R, False,
      "torch_reserved_mb=torch.npu.memory_reserved(index) / 2**20,", GUARDED),
    C("name=torch.cuda.get_device_name(index))", "torch_cuda_api", R, False,
      "name=torch.npu.get_device_name(index))", GUARDED),
    C("h = pynvml.nvmlDeviceGetHandleByIndex(index)", "torch_cuda_api", X, False, None, NVML),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(h)", "torch_cuda_api", R, False,
      "snap.update(util_percent=torch.npu.utilization(index))", NVML),
    C("temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)", "torch_cuda_api", X, False, None, NVML),
    C('if shutil.which("nvidia-smi") is None:', "torch_cuda_api", R, False, 'if shutil.which("npu-smi") is None:',
      "unchanged it returns [] on an NPU host, which works; npu-smi info is the Ascend tool with a different table "
      "format (ascend-host-formats.md §1)"),
    C('["nvidia-smi", "--query-compute-apps=pid,used_memory"', "torch_cuda_api", R, False,
      '["npu-smi", "info"],  # parse the process table',
      "only reached when nvidia-smi exists; the npu-smi process table needs its own parser (ascend-host-formats.md §1)"),
    C("if not torch.cuda.is_available():", "device_type", R, True, "if not torch.npu.is_available():",
      "readiness always fails with 503 on an NPU host (TNM §2.1)"),
    C('x = torch.ones(8, device=f"cuda:{GPU_INDEX}")', "device_type", R, False,
      'x = torch.ones(8, device=f"npu:{GPU_INDEX}")', GUARDED),
    C("torch.cuda.synchronize(GPU_INDEX)", "torch_cuda_api", R, False, "torch.npu.synchronize(GPU_INDEX)", GUARDED),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", R, True,
      "for i in range(torch.npu.device_count()):",
      "device_count() of CUDA is 0 on an NPU host, so /metrics silently exports nothing (TNM §2.1)"),
])

CANN_IMG = ("an NVIDIA base image has no CANN toolkit or NPU driver user-space; Ascend publishes CANN base images "
            "(Ascend/cann-container-image, e.g. cann 8.3.rc1-910b-ubuntu22.04-py3.11, ascend-host-formats.md §3.8); "
            "the exact registry path is unconfirmed")

E("serve_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "multi-stage Dockerfile for a TensorRT/ONNX Runtime GPU inference server", [
    C("ARG CUDA_VERSION=12.1.1", "env_var", R, False, "ARG CANN_VERSION=8.3.rc1", "follows the base-image change"),
    C("FROM nvcr.io/nvidia/tensorrt:23.10-py3 AS build", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11 AS build", CANN_IMG),
    C('ENV TORCH_CUDA_ARCH_LIST=', "env_var", X, False, None,
      "only read by a CUDAExtension build, which setup.py skips without nvcc"),
    C("RUN pip install --no-cache-dir torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
      R, True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post17 --index-url https://download.pytorch.org/whl/cpu "
      "--extra-index-url https://pypi.org/simple && \\",
      "CUDA torch wheel; torch_npu pairs with the CPU wheel and torch 2.1.0 (TNM §1.1, §1.2)"),
    C("FROM nvidia/cuda:${CUDA_VERSION}-cudnn8-runtime-ubuntu${UBUNTU_VERSION}", "custom_cuda_extension", R, True,
      "FROM ascendai/cann:${CANN_VERSION}-910b-ubuntu${UBUNTU_VERSION}-py3.11", CANN_IMG),
    C("NVIDIA_VISIBLE_DEVICES=all", "env_var", R, False, "ASCEND_VISIBLE_DEVICES=0 \\",
      "read by the NVIDIA container runtime only; on Ascend devices are mounted with --device /dev/davinciN or "
      "selected by ASCEND_VISIBLE_DEVICES under Ascend Docker Runtime (ascend-distributed.md §1, "
      "ascend-host-formats.md §3.9)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", X, False, None, "NVIDIA container runtime only"),
    C("CUDA_MODULE_LOADING=LAZY", "env_var", X, False, None, "CUDA-only variable"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu121", "import_torch_npu",
      R, True,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && "
      "pip install torch-npu==2.1.0.post17 && \\",
      "CUDA wheels; torch_npu needs the matching CPU torch (TNM §1.1, §1.2)"),
    C("pip install onnxruntime-gpu==1.16.3 tensorrt==8.6.1.post1 nvidia-ml-py==12.535.133", "custom_cuda_extension", R, True,
      "pip install onnxruntime-cann \\",
      "onnxruntime-gpu, TensorRT and NVML are NVIDIA-only; the Ascend ONNX Runtime is onnxruntime-cann (onnxruntime.ai "
      "CANN EP page)"),
])

E("openvino_export", "tools/export_openvino.py", "device_branch_or_abstraction",
  "OpenVINO IR export and async benchmark (CPU-only edge path; 'GPU' means an Intel GPU)", [])

E("qat_launch_sh", "scripts/run_qat_8gpu.sh", "explicit_replacement",
  "single-node 8-GPU torchrun launcher with NCCL/CUDA environment", [
    C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}", VIS),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", X, False, None, "CUDA-only variable, no effect on Ascend"),
    C("export NCCL_DEBUG=", "env_var", X, False, None, "NCCL variable; HCCL logging is configured differently"),
    C("export NCCL_IB_DISABLE=", "env_var", X, False, None, "NCCL variable, no effect on HCCL"),
    C("export NCCL_SOCKET_IFNAME=", "env_var", R, False, "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "HCCL's NIC selection variable (ascend-distributed.md §1); rarely needed single-node"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "torch_npu watchdog variable (ascend-distributed.md §1)"),
    C("export TORCH_NCCL_BLOCKING_WAIT=0", "env_var", X, False, None, "ProcessGroupNCCL-only variable"),
    C("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:512",
      "NPU caching-allocator variable is PYTORCH_NPU_ALLOC_CONF (TNM §1.6); memory behaviour only"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total", "torch_cuda_api", R, True,
      'npu-smi info | tee "${LOG_DIR}/npus.txt"',
      "nvidia-smi is absent on an NPU host and set -e/pipefail stop the launcher (ascend-host-formats.md §1)"),
    C("print('torch', torch.__version__, 'cuda', torch.version.cuda)", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\"",
      "report only: prints cuda None"),
    C("print('devices', torch.cuda.device_count())", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('devices', torch.npu.device_count())\"",
      "report only: prints 0 on an NPU host"),
    C("--dist-backend nccl", "dist_backend", R, True, "--dist-backend hccl \\", NCCL),
])

OPT_GPU = "optional 'gpu' extra, only installed on request"

E("deploy_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml of a compression/deployment recipes package with gpu/cpu/serve extras", [
    C('"onnxruntime-gpu>=1.16",', "custom_cuda_extension", R, False, '"onnxruntime-cann",',
      OPT_GPU + "; the Ascend ONNX Runtime build is onnxruntime-cann (onnxruntime.ai CANN EP page)"),
    C('"tensorrt>=8.6,<10",', "custom_cuda_extension", X, False, None, OPT_GPU + "; TensorRT is NVIDIA-only"),
    C('"torch-tensorrt>=1.4",', "custom_cuda_extension", R, False, '"torchair",',
      OPT_GPU + "; NPU graph mode goes through TorchAir (TNM §6); TorchAir's pip name is unconfirmed"),
    C('"pycuda>=2022.2",', "custom_cuda_extension", X, False, None, OPT_GPU + "; pycuda needs CUDA"),
    C('"cupy-cuda12x>=12.2",', "custom_cuda_extension", X, False, None,
      OPT_GPU + "; CuPy has no Ascend support (TNM §6)"),
    C('"nvidia-modelopt>=0.11",', "custom_cuda_extension", X, False, None,
      OPT_GPU + "; NVIDIA ModelOpt targets TensorRT (its Ascend status is not in the knowledge files: unconfirmed)"),
    C('"nvidia-ml-py>=12.535",', "torch_cuda_api", X, False, None,
      "NVML has no Ascend equivalent; the serve extra drops it (TNM §6)"),
])
