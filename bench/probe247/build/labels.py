# Labels for probe247 (gaze estimation / head-pose estimation, CUDA -> Ascend NPU).
# One entry per upstream file; one change per line a careful porter edits.
# Policy notes are in ../README.md ("How the labels were chosen").

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: register the NPU backend explicitly (no device-backend autoload before "
               "torch_npu 2.5.1; the ported requirements pin the 2.1.0 line)")
LOAD_NOTE = ("checkpoint was written from CUDA tensors; without map_location torch.load tries to restore "
             "them on a CUDA device and raises on a host without CUDA")
NOOP_LOSS_NOTE = ("loss/activation module has no parameters or buffers, so Module.cuda() never touches a "
                  "tensor and is a silent no-op on the NPU host; edited for consistency only")
AMP_NOTE = ("torch.cuda.amp / device_type='cuda' autocast is disabled with a warning when CUDA is absent, "
            "so training silently runs in fp32: correct but slower")

# ----------------------------------------------------------------------------------------------
# L2CS-Net
# ----------------------------------------------------------------------------------------------
E("l2cs_utils", "l2cs/utils.py", "device_branch_or_abstraction",
  "L2CS-Net l2cs/utils.py (YOLOv5-style select_device helper)", [
      C("os.environ['CUDA_VISIBLE_DEVICES'] = '-1'", "env_var", "removal", False, None,
        "cpu branch: hiding CUDA devices is moot, the helper returns torch.device('cpu') explicitly anyway"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = device", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = device  # set environment variable",
        "the Ascend runtime ignores CUDA_VISIBLE_DEVICES: '--device 2' would silently run on NPU 0"),
      C("assert torch.cuda.is_available(), f'CUDA unavailable", "torch_cuda_api", "replace", True,
        "assert torch.npu.is_available(), f'NPU unavailable, invalid device {device} requested'",
        "torch.cuda.is_available() is False on an NPU host: AssertionError for every non-cpu device"),
      C("cuda = not cpu and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "npu = not cpu and torch.npu.is_available()",
        "unchanged the helper silently falls back to CPU"),
      C("devices = device.split(',') if device else range(torch.cuda.device_count())", "torch_cuda_api", "replace", True,
        "devices = device.split(',') if device else range(torch.npu.device_count())",
        "device_count() is 0 on the NPU host: batch-size divisibility check and device listing silently skipped"),
      C("p = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", True,
        "p = torch.npu.get_device_properties(i)",
        "raises without CUDA; NPU properties carry name and total_memory, which is all the log line uses"),
      C("return torch.device('cuda:0' if cuda else 'cpu')", "device_type", "replace", True,
        "return torch.device('npu:0' if npu else 'cpu')",
        "device every caller (train/test/demo) moves the model to"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if torch.npu.is_available():",
        "time_synchronized(): unchanged it just skips the sync, so timings are taken on an async queue (timing only)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()",
        "reachable once the guard above is ported; raises without CUDA"),
  ])

E("l2cs_model", "l2cs/model.py", "explicit_replacement",
  "L2CS-Net l2cs/model.py (ResNet + two binned heads); device-agnostic, no change", [])

E("l2cs_pipeline", "l2cs/pipeline.py", "device_branch_or_abstraction",
  "L2CS-Net l2cs/pipeline.py (Pipeline with RetinaFace from face_detection)", [
      C("self.detector = RetinaFace(gpu_id=device.index)", "device_type", "replace", True,
        "self.detector = RetinaFace(gpu_id=-1)  # face_detection only knows cpu/cuda; keep the detector on CPU",
        "face_detection.RetinaFace builds torch.device('cuda', gpu_id) for any gpu_id != -1 "
        "(elliottzheng/face-detection detector.py), so an npu device index would crash it"),
  ])

E("l2cs_demo", "demo.py", "device_branch_or_abstraction",
  "L2CS-Net demo.py (webcam demo, --device, select_device)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if args.half and device.type == 'cuda':", "device_type", "replace", False,
        "if args.half and device.type == 'npu':",
        "unchanged --half is silently ignored on NPU (fp32, correct but slower)"),
      C("torch.cuda.get_device_name(0) if device.type == 'cuda' else 'cpu'))", "torch_cuda_api", "replace", False,
        "torch.npu.get_device_name(0) if device.type == 'npu' else 'cpu'))",
        "log line only: unchanged it prints 'cpu' for an NPU run"),
  ])

E("l2cs_train", "train.py", "explicit_replacement",
  "L2CS-Net train.py (Gaze360 / MPIIFaceGaze leave-one-out training)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("saved_state_dict = torch.load(args.snapshot)", "tensor_to_device", "replace", True,
        "saved_state_dict = torch.load(args.snapshot, map_location='cpu')", LOAD_NOTE),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.to(gpu)",
        "gpu is the torch.device returned by select_device (npu:0 after the port)"),
      C("criterion = nn.CrossEntropyLoss().cuda(gpu)", "tensor_to_device", "replace", False,
        "criterion = nn.CrossEntropyLoss().to(gpu)", NOOP_LOSS_NOTE),
      C("reg_criterion = nn.MSELoss().cuda(gpu)", "tensor_to_device", "replace", False,
        "reg_criterion = nn.MSELoss().to(gpu)", NOOP_LOSS_NOTE),
      C("softmax = nn.Softmax(dim=1).cuda(gpu)", "tensor_to_device", "replace", False,
        "softmax = nn.Softmax(dim=1).to(gpu)", NOOP_LOSS_NOTE),
      C("idx_tensor = Variable(torch.FloatTensor(idx_tensor)).cuda(gpu)", "tensor_to_device", "replace", True,
        "idx_tensor = Variable(torch.FloatTensor(idx_tensor)).to(gpu)", "Tensor.cuda raises without CUDA"),
      C("images_gaze = Variable(images_gaze).cuda(gpu)", "tensor_to_device", "replace", True,
        "images_gaze = Variable(images_gaze).to(gpu)", "input batch to device"),
      C("label_pitch_gaze = Variable(labels_gaze[:, 0]).cuda(gpu)", "tensor_to_device", "replace", True,
        "label_pitch_gaze = Variable(labels_gaze[:, 0]).to(gpu)", "label to device"),
      C("label_yaw_gaze = Variable(labels_gaze[:, 1]).cuda(gpu)", "tensor_to_device", "replace", True,
        "label_yaw_gaze = Variable(labels_gaze[:, 1]).to(gpu)", "label to device"),
      C("label_pitch_cont_gaze = Variable(cont_labels_gaze[:, 0]).cuda(gpu)", "tensor_to_device", "replace", True,
        "label_pitch_cont_gaze = Variable(cont_labels_gaze[:, 0]).to(gpu)", "label to device"),
      C("label_yaw_cont_gaze = Variable(cont_labels_gaze[:, 1]).cuda(gpu)", "tensor_to_device", "replace", True,
        "label_yaw_cont_gaze = Variable(cont_labels_gaze[:, 1]).to(gpu)", "label to device"),
      C("grad_seq = [torch.tensor(1.0).cuda(gpu) for _ in range(len(loss_seq))]", "tensor_to_device", "replace", True,
        "grad_seq = [torch.tensor(1.0).to(gpu) for _ in range(len(loss_seq))]", "grad seeds must sit on the loss device"),
      C("model = nn.DataParallel(model)", "unsupported_op_workaround", "removal", True, None,
        "torch.nn.DataParallel is marked unsupported in Ascend's 2.7.1 API list; single-device run (or DDP)"),
      C("optimizer_gaze = build_optimizer(model.module, args.lr)", "unsupported_op_workaround", "replace", True,
        "optimizer_gaze = build_optimizer(model, args.lr)",
        "follows from dropping nn.DataParallel: the bare model has no .module"),
  ])

E("l2cs_test", "test.py", "explicit_replacement",
  "L2CS-Net test.py (evaluate every snapshot of a run)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("images = Variable(images).cuda(gpu)", "tensor_to_device", "replace", True,
        "images = Variable(images).to(gpu)", "input batch to device"),
      C("saved_state_dict = torch.load(os.path.join(snapshot_path, epochs))", "tensor_to_device", "replace", True,
        "saved_state_dict = torch.load(os.path.join(snapshot_path, epochs), map_location='cpu')", LOAD_NOTE),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.to(gpu)", "model to device"),
      C("idx_tensor = torch.FloatTensor(idx_tensor).cuda(gpu)", "tensor_to_device", "replace", True,
        "idx_tensor = torch.FloatTensor(idx_tensor).to(gpu)", "bin index tensor to device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unconditional call; raises without CUDA"),
  ])

E("l2cs_requirements", "requirements.txt", "explicit_replacement",
  "L2CS-Net requirements (CUDA wheel index)", [
      C("--extra-index-url https://download.pytorch.org/whl/cu113", "import_torch_npu", "replace", False,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu is installed on top of the CPU torch wheel (x86) / plain PyPI torch (aarch64); the cu113 "
        "index only serves CUDA builds. Whether a CUDA build underneath torch_npu breaks: unconfirmed"),
      C("torch>=1.10.1", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "the NPU backend itself; torch must be pinned to the matching 2.1.0 in the same edit"),
  ])

E("l2cs_run_sh", "scripts/run_mpiigaze.sh", "explicit_replacement",
  "L2CS-Net style leave-one-out launcher script", [
      C("set -eo pipefail", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "import torch_npu fails ('Please run source set_env.sh') unless CANN's environment is set; note set_env.sh "
        "breaks under set -u, which this script does not use"),
      C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
        "ignored by the Ascend runtime: the job lands on NPU 0 instead of the requested card"),
      C("nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv", "torch_cuda_api", "replace", True,
        "npu-smi info | tee -a \"${LOG_DIR}/env.txt\"",
        "nvidia-smi does not exist on the NPU host and pipefail aborts the script"),
      C("python -c \"import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)\"", "import_torch_npu",
        "replace", False,
        "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'torch_npu', torch_npu.__version__)\" | tee -a \"${LOG_DIR}/env.txt\"",
        "log only: torch.version.cuda prints None"),
  ])

# ----------------------------------------------------------------------------------------------
# ETH-XGaze baseline
# ----------------------------------------------------------------------------------------------
E("xgaze_config", "config.py", "device_branch_or_abstraction",
  "ETH-XGaze config.py (--use_gpu and friends); flags only, no change", [])

E("xgaze_main", "main.py", "device_branch_or_abstraction",
  "ETH-XGaze main.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
        "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed() on the line above already seeds the NPU generator in torch 2.x (unconfirmed in "
        "knowledge); the CUDA call is a lazy no-op"),
      C("if config.use_gpu and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if config.use_gpu and not torch.npu.is_available():",
        "unchanged it flips use_gpu off and trains on the CPU"),
  ])

E("xgaze_trainer", "trainer.py", "explicit_replacement",
  "ETH-XGaze trainer.py (+ apex-style CUDA-stream prefetcher)", [
      C("self.stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True, "self.stream = torch.npu.Stream()",
        "--prefetch path; CUDA stream cannot be created"),
      C("with torch.cuda.stream(self.stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.stream(self.stream):", "side-stream copy"),
      C("self.next_input = self.next_input.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "self.next_input = self.next_input.npu(non_blocking=True).float()", "prefetch copy"),
      C("self.next_target = self.next_target.cuda(non_blocking=True).float()", "tensor_to_device", "replace", True,
        "self.next_target = self.next_target.npu(non_blocking=True).float()", "prefetch copy"),
      C("torch.cuda.current_stream().wait_stream(self.stream)", "torch_cuda_api", "replace", True,
        "torch.npu.current_stream().wait_stream(self.stream)", "stream sync"),
      C("input_img.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "input_img.record_stream(torch.npu.current_stream())", "allocator stream bookkeeping"),
      C("target.record_stream(torch.cuda.current_stream())", "torch_cuda_api", "replace", True,
        "target.record_stream(torch.npu.current_stream())", "allocator stream bookkeeping"),
      C("=self.model.cuda()", "tensor_to_device", "replace", True, "self.model.npu()", "model to device"),
      C("if config.multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", False,
        "if config.multi_gpu and torch.npu.device_count() > 1:",
        "unchanged the multi-GPU branch is silently skipped (device_count() is 0), i.e. single-device training"),
      C("print('[*] using %d GPUs with nn.DataParallel' % torch.cuda.device_count())", "torch_cuda_api", "replace", False,
        "print('[*] %d NPUs visible; nn.DataParallel is unsupported, use torchrun + DDP' % torch.npu.device_count())",
        "log line"),
      C("self.model = nn.DataParallel(self.model)", "unsupported_op_workaround", "removal", True, None,
        "nn.DataParallel is unsupported in Ascend's list; reachable once the guard is ported"),
      C("tensor = tensor.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "tensor = tensor.npu(non_blocking=True)", "_to_device() used by test() and validate()"),
      C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
        "returns 0 while CUDA was never initialised (log only)"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device and raises without CUDA"),
      C("input_var = torch.autograd.Variable(input_img.float().cuda())", "tensor_to_device", "replace", True,
        "input_var = torch.autograd.Variable(input_img.float().npu())", "train loop moves batches unconditionally"),
      C("target_var = torch.autograd.Variable(target.float().cuda())", "tensor_to_device", "replace", True,
        "target_var = torch.autograd.Variable(target.float().npu())", "train loop moves labels unconditionally"),
      C("ckpt = torch.load(input_file_path)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(input_file_path, map_location='cpu')", LOAD_NOTE),
  ])

E("xgaze_demo", "demo.py", "explicit_replacement",
  "ETH-XGaze demo.py (dlib landmarks, data normalisation, gaze network)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("model.cuda()  # comment this line out if you are not using GPU", "tensor_to_device", "replace", True,
        "model.npu()", "model to device"),
      C("ckpt = torch.load(pre_trained_model_path)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(pre_trained_model_path, map_location='cpu')", LOAD_NOTE),
      C("input_var = torch.autograd.Variable(input_var.float().cuda())", "tensor_to_device", "replace", True,
        "input_var = torch.autograd.Variable(input_var.float().npu())", "input to device"),
  ])

E("xgaze_env", "environment.yml", "explicit_replacement",
  "ETH-XGaze style conda environment (pytorch + cudatoolkit)", [
      C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel is not needed"),
      C("- pytorch=1.10.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
        "torch must match the torch-npu wheel (2.1.0); the pytorch channel has no aarch64 1.10 build"),
      C("- torchvision=0.11.2", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
        "torchvision must follow torch 2.1.0"),
      C("- cudatoolkit=11.3", "import_torch_npu", "replace", False, "- cpuonly",
        "CUDA runtime is dead weight on the NPU host (resolver impact on aarch64 unconfirmed)"),
      C("- cudnn=8.2", "import_torch_npu", "removal", False, None, "cuDNN is unused on NPU"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==2.1.0.post17",
        "the NPU backend is only published as a pip wheel"),
  ])

# ----------------------------------------------------------------------------------------------
# GazeTR
# ----------------------------------------------------------------------------------------------
E("gazetr_train", "trainer/total.py", "explicit_replacement",
  "GazeTR trainer/total.py (yaml config, device index, map_location dict)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("map_location={f\"cuda:{pretrain.device}\": f\"cuda:{device_id}\"}", "tensor_to_device", "replace", True,
        "map_location={f\"cuda:{pretrain.device}\": f\"npu:{device_id}\"}",
        "remapping onto another CUDA device still needs CUDA"),
      C("state = torch.load(pretrain.path)", "tensor_to_device", "replace", True,
        "state = torch.load(pretrain.path, map_location='cpu')", LOAD_NOTE),
      C("torch.cuda.set_device(config.device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(config.device)", "raises without CUDA"),
      C("net.train(); net.cuda()", "tensor_to_device", "replace", True, "net.train(); net.npu()", "model to device"),
      C("if key != 'name': data[key] = data[key].cuda()", "tensor_to_device", "replace", True,
        "if key != 'name': data[key] = data[key].npu()", "input dict to device"),
      C("anno = anno.cuda()", "tensor_to_device", "replace", True, "anno = anno.npu()", "labels to device"),
  ])

E("gazetr_model", "model.py", "explicit_replacement",
  "GazeTR model.py (ResNet-18 + transformer encoder)", [
      C("position = torch.from_numpy(np.arange(0, 50)).cuda()", "tensor_to_device", "replace", True,
        "position = torch.from_numpy(np.arange(0, 50)).to(feature.device)",
        "hard-coded .cuda() inside forward(); raises on NPU"),
  ])

E("gazetr_test", "tester/total.py", "device_branch_or_abstraction",
  "GazeTR tester/total.py with a cuda-if-available device variable", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", "device_type", "replace", True,
        "device = torch.device(\"npu\" if torch.npu.is_available() else \"cpu\")",
        "unchanged: silently CPU (and model.py's .cuda() then crashes)"),
      C("if device.type == \"cuda\":", "device_type", "replace", True, "if device.type == \"npu\":",
        "unchanged the set_device below is skipped and test.device from the config is silently ignored"),
      C("torch.cuda.set_device(test.device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(test.device)", "reachable once the guard is ported"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "guard is device.type != 'cpu', so it is reached on NPU and raises"),
  ])

# ----------------------------------------------------------------------------------------------
# Gaze-LLE
# ----------------------------------------------------------------------------------------------
E("gazelle_infer", "scripts/inference.py", "device_branch_or_abstraction",
  "Gaze-LLE inference script (torch.hub.load(...).to(device), retinaface)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device = \"cuda\" if torch.cuda.is_available() else \"cpu\"", "device_type", "replace", True,
        "device = \"npu\" if torch.npu.is_available() else \"cpu\"", "unchanged: silently CPU"),
      C("if fp16 and device == \"cuda\":", "device_type", "replace", False, "if fp16 and device == \"npu\":",
        "--fp16 silently ignored otherwise (perf only)"),
      C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "removal", False, None,
        "torch.backends.cuda.sdp_kernel is unsupported in Ascend's list; with all kernels enabled it is a no-op "
        "(no error expected, unconfirmed); NPU SDPA picks its own kernel"),
      C("if device == \"cuda\":", "device_type", "replace", False, "if device == \"npu\":",
        "timing only: unchanged the per-frame sync is skipped"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "reachable once the guard is ported"),
  ])

E("gazelle_train", "scripts/train_gazefollow.py", "device_branch_or_abstraction",
  "Gaze-LLE train_gazefollow.py extended with torchrun/DDP, bf16 autocast", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed() above already seeds the NPU (unconfirmed in knowledge)"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C("dist.init_process_group(backend=cfg.get(\"dist_backend\", \"nccl\")", "dist_backend", "replace", True,
        "dist.init_process_group(backend=cfg.get(\"dist_backend\", \"hccl\"), init_method=\"env://\")",
        "NCCL is not available on the NPU host; the shipped YAML has no dist_backend key, so the default is used"),
      C("device = torch.device(\"cuda\", local_rank)", "device_type", "replace", True,
        "device = torch.device(\"npu\", local_rank)", "per-rank device"),
      C("device = torch.device(cfg.get(\"device\", \"cuda\"))", "device_type", "replace", False,
        "device = torch.device(cfg.get(\"device\", \"npu\"))",
        "fallback only: the shipped YAML sets device (labelled in configs/gazefollow_vitb.yaml)"),
      C("major, _ = torch.cuda.get_device_capability()", "device_capability_check", "replace", True,
        "major = 8 if torch.npu.is_bf16_supported() else 0  # NPU reports no CUDA capability",
        "raises without CUDA; torch.npu.get_device_capability() returns None, so the tuple unpack fails too"),
      C("on_device = dist.get_backend() == \"nccl\"", "dist_backend", "replace", True,
        "on_device = dist.get_backend() in (\"nccl\", \"hccl\")",
        "backend-string comparison is not rewritten by anything: with hccl the metrics tensor goes to CPU and "
        "the HCCL all_reduce on a CPU tensor fails"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=(amp_dtype == torch.float16))", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=(amp_dtype == torch.float16))", AMP_NOTE),
      C("return torch.autocast(device_type=\"cuda\", dtype=amp_dtype)", "amp", "replace", False,
        "return torch.autocast(device_type=\"npu\", dtype=amp_dtype)", AMP_NOTE),
      C("ckpt = torch.load(args.resume, map_location=f\"cuda:{local_rank}\")", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location=f\"npu:{local_rank}\")", "map_location names a CUDA device"),
      C("preds = model({\"images\": imgs.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "preds = model({\"images\": imgs.to(device, non_blocking=True), \"bboxes\": [[bbox] for bbox in bboxes]})",
        "input batch to device"),
      C("loss = loss_fn(heatmap_preds.float(), heatmaps.cuda(non_blocking=True))", "tensor_to_device", "replace", True,
        "loss = loss_fn(heatmap_preds.float(), heatmaps.to(device, non_blocking=True))", "targets to device"),
      C("mem = torch.cuda.max_memory_allocated(device) / 2 ** 30", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated(device) / 2 ** 30", "log only: reports 0 while CUDA is uninitialised"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op when CUDA was never initialised; NPU cache simply is not released between epochs"),
  ])

E("gazelle_attn", "gazelle/backbone/dinov2_layers/attention.py", "kernel_rewrite",
  "DINOv2 attention layers vendored into Gaze-LLE (xFormers guarded import)", [
      C("attn = q @ k.transpose(-2, -1)", "npu_fused_op", "replace", False,
        "x = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])  # unscaled q, default 1/sqrt(d); NPU FA kernel",
        "performance only: the explicit softmax(QK^T)V runs fine on NPU; the fused kernel saves memory/time. "
        "The xFormers path is guarded and simply falls back, so it needs no edit"),
  ])

E("gazelle_config", "configs/gazefollow_vitb.yaml", "device_branch_or_abstraction",
  "Gaze-LLE style YAML training config", [
      C("device: cuda", "device_type", "replace", True, "device: npu            # used for single-process runs",
        "read by setup_distributed() for non-torchrun runs"),
  ])

E("gazelle_launch", "scripts/train_dist.sh", "explicit_replacement",
  "torchrun launcher with NCCL environment knobs", [
      C("MASTER_PORT=${MASTER_PORT:-29513}", "env_var", "npu_only_addition", True,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment must be set before torch_npu is imported by the workers"),
      C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
        "GPUS selects a subset; ignored on NPU so ranks land on NPUs 0..n-1"),
      C("export NCCL_DEBUG=${NCCL_DEBUG:-WARN}", "env_var", "replace", False,
        "export ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}", "NCCL_* variables are inert under HCCL"),
      C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
        "PCIe P2P workaround for the NVIDIA boxes; inert under HCCL"),
      C("export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}", "env_var", "removal", False, None, "inert under HCCL"),
      C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eno1}", "env_var", "replace", False,
        "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eno1}",
        "multi-node only: HCCL picks the host NIC by its own priority rules otherwise; whether that fails here is "
        "unconfirmed"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
        "export HCCL_ASYNC_ERROR_HANDLING=1", "torch_npu watchdog equivalent; its default is already 1"),
  ])

# ----------------------------------------------------------------------------------------------
# 6DRepNet
# ----------------------------------------------------------------------------------------------
E("sixd_train", "sixdrepnet/train.py", "explicit_replacement",
  "6DRepNet sixdrepnet/train.py (RepVGG backbone, geodesic loss)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("saved_state_dict = torch.load(args.snapshot)", "tensor_to_device", "replace", True,
        "saved_state_dict = torch.load(args.snapshot, map_location='cpu')", LOAD_NOTE),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", "model to device"),
      C("model = torch.nn.DataParallel(model, device_ids=device_ids)", "unsupported_op_workaround", "replace", True,
        "raise SystemExit('--multi_gpu: nn.DataParallel is unsupported on Ascend, launch with torchrun + DDP')",
        "nn.DataParallel is unsupported in Ascend's API list"),
      C("crit = GeodesicLoss().cuda(gpu)", "tensor_to_device", "replace", False,
        "crit = GeodesicLoss().npu(gpu)  # torch.nn.MSELoss().npu(gpu)", NOOP_LOSS_NOTE),
      C("images = torch.Tensor(images).cuda(gpu)", "tensor_to_device", "replace", True,
        "images = torch.Tensor(images).npu(gpu)", "input batch to device"),
      C("loss = crit(gt_mat.cuda(gpu), pred_mat)", "tensor_to_device", "replace", True,
        "loss = crit(gt_mat.npu(gpu), pred_mat)", "target rotation matrices to device"),
  ])

E("sixd_utils", "sixdrepnet/utils.py", "explicit_replacement",
  "6DRepNet sixdrepnet/utils.py (ortho6d <-> rotation matrix helpers with use_gpu flags)", [
      C("v_mag = torch.max(v_mag, torch.autograd.Variable(torch.FloatTensor([1e-8]).cuda()))", "tensor_to_device",
        "replace", True,
        "v_mag = torch.max(v_mag, torch.autograd.Variable(torch.FloatTensor([1e-8]).to(v.device)))",
        "called from the model's forward with use_gpu=True by default"),
      C("out_euler = torch.autograd.Variable(torch.zeros(batch, 3).cuda())", "tensor_to_device", "replace", True,
        "out_euler = torch.autograd.Variable(torch.zeros(batch, 3, device=R.device))",
        "use_gpu defaults to True for every caller"),
      C("device = 'cuda' if euler.is_cuda else 'cpu'", "device_type", "replace", True,
        "device = euler.device",
        "is_cuda is False for NPU tensors, so eye() lands on the CPU and the bmm with NPU tensors fails"),
  ])

E("sixd_test", "sixdrepnet/test.py", "explicit_replacement",
  "6DRepNet sixdrepnet/test.py (AFLW2000 / BIWI evaluation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", "model to device"),
      C("images = torch.Tensor(images).cuda(gpu)", "tensor_to_device", "replace", True,
        "images = torch.Tensor(images).npu(gpu)", "input batch to device"),
      C("torch.cuda.synchronize(gpu)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(gpu)",
        "raises without CUDA"),
      C("torch.cuda.get_device_name(gpu) if use_gpu else 'cpu'))", "torch_cuda_api", "replace", True,
        "torch.npu.get_device_name(gpu) if use_gpu else 'cpu'))", "raises without CUDA whenever use_gpu"),
  ])

E("sixd_regressor", "sixdrepnet/regressor.py", "device_branch_or_abstraction",
  "6DRepNet pip package regressor.py (SixDRepNet_Detector(gpu_id=...))", [
      C("self.device = torch.device('cuda:%d' % gpu_id)", "device_type", "replace", True,
        "self.device = torch.device('npu:%d' % gpu_id)", "the single place the detector picks its device"),
      C("return self.device.type == 'cuda'", "device_type", "replace", False,
        "return self.device.type == 'npu'",
        "unchanged use_gpu=False sends the euler conversion through a CPU buffer: still correct, extra copies"),
  ])

E("sixd_demo", "sixdrepnet/demo.py", "explicit_replacement",
  "6DRepNet sixdrepnet/demo.py (webcam, face_detection.RetinaFace)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("detector = RetinaFace(gpu_id=gpu)", "device_type", "replace", True,
        "detector = RetinaFace(gpu_id=-1)  # face_detection only supports cpu/cuda",
        "face_detection.RetinaFace builds torch.device('cuda', gpu_id) for gpu_id != -1"),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", "model to device"),
      C("img = torch.Tensor(img[None, :]).cuda(gpu)", "tensor_to_device", "replace", True,
        "img = torch.Tensor(img[None, :]).npu(gpu)", "face crop to device"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unconditional; raises without CUDA"),
  ])

# ----------------------------------------------------------------------------------------------
# WHENet (PyTorch re-implementation), Gaze360
# ----------------------------------------------------------------------------------------------
E("whenet_train", "whenet_torch/train.py", "explicit_replacement",
  "WHENet PyTorch re-implementation trainer (DataParallel, torch.cuda.amp, apex FusedAdam)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("ce = nn.CrossEntropyLoss().cuda(gpu)", "tensor_to_device", "replace", False,
        "ce = nn.CrossEntropyLoss().npu(gpu)", NOOP_LOSS_NOTE),
      C("mse = nn.MSELoss().cuda(gpu)", "tensor_to_device", "replace", False, "mse = nn.MSELoss().npu(gpu)",
        NOOP_LOSS_NOTE),
      C("images = images.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(gpu, non_blocking=True)", "input batch to device"),
      C("bins = bins.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "bins = bins.npu(gpu, non_blocking=True)", "binned labels to device"),
      C("cont = cont.cuda(gpu, non_blocking=True)", "tensor_to_device", "replace", True,
        "cont = cont.npu(gpu, non_blocking=True)", "continuous labels to device"),
      C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=args.amp):", AMP_NOTE),
      C("images = images.cuda(gpu)", "tensor_to_device", "replace", True, "images = images.npu(gpu)",
        "validation batch to device"),
      C("with torch.cuda.amp.autocast(enabled=amp):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=amp):", AMP_NOTE),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "raises without CUDA"),
      C("=model.cuda(gpu)", "tensor_to_device", "replace", True, "model.npu(gpu)", "model to device"),
      C("model = torch.nn.DataParallel(model, device_ids=gpu_ids)", "unsupported_op_workaround", "replace", True,
        "raise SystemExit('multiple --gpu_id: nn.DataParallel is unsupported on Ascend, use torchrun + DDP')",
        "nn.DataParallel is unsupported in Ascend's API list"),
      C("model = torch.nn.DataParallel(model, device_ids=[gpu])", "unsupported_op_workaround", "replace", True,
        "pass  # run the bare model; raw_model below already handles the unwrapped case",
        "even the single-device wrap goes through DataParallel (unsupported on Ascend)"),
      C("optimizer = FusedAdam(model.parameters(), lr=args.lr, adam_w_mode=False)", "fused_optimizer", "replace",
        False, "optimizer = torch_npu.optim.NpuFusedAdam(model.parameters(), lr=args.lr)",
        "NVIDIA apex is normally absent on the NPU host so HAS_APEX is False and plain Adam is used; Ascend's "
        "apex has no FusedAdam CUDA kernel. Performance choice"),
      C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", False,
        "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_NOTE),
      C("ckpt = torch.load(args.resume, map_location='cuda:%d' % gpu)", "tensor_to_device", "replace", True,
        "ckpt = torch.load(args.resume, map_location='npu:%d' % gpu)", "map_location names a CUDA device"),
      C("epoch, tl, yaw_e, pitch_e, roll_e, mae, torch.cuda.max_memory_allocated(gpu) / 2 ** 20))",
        "torch_cuda_api", "replace", False,
        "epoch, tl, yaw_e, pitch_e, roll_e, mae, torch.npu.max_memory_allocated(gpu) / 2 ** 20))",
        "log only: 0 while CUDA is uninitialised"),
  ])

E("gaze360_run", "code/run.py", "explicit_replacement",
  "Gaze360 code/run.py (GazeLSTM + pinball loss, DataParallel().cuda())", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = torch.nn.DataParallel(model_v).cuda()", "unsupported_op_workaround", "replace", True,
        "model = model_v.npu()  # nn.DataParallel is unsupported on Ascend",
        "DataParallel is unsupported in Ascend's list and .cuda() raises"),
      C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "redundant second move, still raises"),
      C("criterion = PinBallLoss().cuda()", "tensor_to_device", "replace", False, "criterion = PinBallLoss().npu()",
        NOOP_LOSS_NOTE),
      C("checkpoint = torch.load(args.checkpoint_test)", "tensor_to_device", "replace", True,
        "checkpoint = torch.load(args.checkpoint_test, map_location='cpu')", LOAD_NOTE),
      C("model.load_state_dict(checkpoint['state_dict'])", "unsupported_op_workaround", "replace", True,
        "model.load_state_dict({k.replace('module.', '', 1): v for k, v in checkpoint['state_dict'].items()})",
        "the released checkpoint was saved from nn.DataParallel; without the wrapper its 'module.' keys no longer match"),
      C("checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda())", "tensor_to_device",
        "replace", True, "checkpoint = torch.load(args.resume, map_location='npu')",
        "map_location lambda moves every storage to CUDA"),
      C("source_frame = source_frame.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "source_frame = source_frame.npu(non_blocking=True)", "train batch to device"),
      C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "target = target.npu(non_blocking=True)", "train labels to device"),
      C("source_frame = source_frame.cuda()", "tensor_to_device", "replace", True,
        "source_frame = source_frame.npu()", "validation batch to device"),
      C("target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()",
        "validation labels to device"),
  ])

# ----------------------------------------------------------------------------------------------
# Face detection / landmark helpers, tools, container
# ----------------------------------------------------------------------------------------------
E("retinaface_detect", "retinaface/detect.py", "device_branch_or_abstraction",
  "biubug6/Pytorch_Retinaface detect.py turned into a face-crop tool", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=import torchvision", "unsupported_op_workaround", "npu_only_addition", False, "import torchvision_npu",
        "only for --gpu_nms: torchvision_npu supplies nms on NPU; without it the op would use torch_npu's CPU "
        "fallback (performance only)"),
      C("device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
        "device = torch.npu.current_device()", "default path (no --cpu); raises without CUDA"),
      C("pretrained_dict = torch.load(pretrained_path, map_location=lambda storage, loc: storage.cuda(device))",
        "tensor_to_device", "replace", True,
        "pretrained_dict = torch.load(pretrained_path, map_location=f'npu:{device}')",
        "map_location lambda moves every storage to CUDA"),
      C("if args.gpu_nms and boxes.is_cuda:", "device_type", "replace", False,
        "if args.gpu_nms and boxes.device.type != 'cpu':",
        "is_cuda is False for NPU tensors, so --gpu_nms silently falls back to the CPU NMS (correct, slower)"),
      C("device = torch.device(\"cpu\" if args.cpu else \"cuda\")", "device_type", "replace", True,
        "device = torch.device(\"cpu\" if args.cpu else \"npu\")", "detector device"),
      C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
        "timing only: unchanged the sync before toc() is skipped"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "reachable once the guard is ported"),
  ])

E("face_landmarks", "tools/face_landmarks.py", "device_branch_or_abstraction",
  "68-point landmark tool wrapping face_alignment (FAN) and dlib", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("def __init__(self, device='cuda', detector='sfd', flip_input=False):", "device_type", "replace", False,
        "def __init__(self, device='npu', detector='sfd', flip_input=False):",
        "default only; build_landmarker() always passes a device"),
      C("if device == 'cuda' and not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
        "if device == 'npu' and not torch.npu.is_available():", "CPU fallback branch only"),
      C("device = 'cuda:%d' % gpu if gpu >= 0 else 'cpu'", "device_type", "replace", True,
        "device = 'npu:%d' % gpu if gpu >= 0 else 'cpu'",
        "face_alignment moves S3FD and FAN to this device string; 'cuda:0' raises (whether its TorchScript FAN "
        "runs well on NPU is unconfirmed)"),
      C("return face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False)", "device_type",
        "replace", True,
        "return face_alignment.FaceAlignment(face_alignment.LandmarksType._2D, flip_input=False, device='npu')",
        "no 'cuda' on the line, but FaceAlignment's device argument defaults to 'cuda' (1adrianb/face-alignment api.py)"),
  ])

E("bench_fps", "tools/benchmark_fps.py", "explicit_replacement",
  "latency/throughput benchmark with CUDA events, pynvml and nvidia-smi", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=import pynvml", "torch_cuda_api", "removal", False, None,
        "NVML has no NPU counterpart (power via npu-smi); the guarded import just leaves power as NaN"),
      C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
        "unchanged the device block of the report is silently empty"),
      C("props = torch.cuda.get_device_properties(device_index)", "torch_cuda_api", "replace", True,
        "props = torch.npu.get_device_properties(device_index)", "reachable once the guard is ported"),
      C("info['sm'] = '%d.%d' % torch.cuda.get_device_capability(device_index)", "device_capability_check",
        "removal", True, None,
        "NPU has no SM version: torch.npu.get_device_capability() returns None and the format would raise"),
      C("['nvidia-smi', '--query-gpu=driver_version,clocks.max.sm'", "torch_cuda_api", "replace", False,
        "['npu-smi', 'info', '-t', 'board', '-i', str(device_index)])",
        "OSError is caught, so the driver fields are just missing"),
      C("x = x.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
        "--channels_last: Ascend migration notes list channels_last as unsupported (effect unconfirmed)"),
      C("autocast = torch.cuda.amp.autocast(enabled=args.fp16)", "amp", "replace", False,
        "autocast = torch.npu.amp.autocast(enabled=args.fp16)", AMP_NOTE),
      C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
        "raises without CUDA"),
      C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created"),
      C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created"),
      C("torch.cuda.reset_peak_memory_stats(device)", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats(device)", "raises without CUDA"),
      C("        torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "per-iteration sync; raises without CUDA"),
      C("'peak_mem_mb': torch.cuda.max_memory_allocated(device) / 2 ** 20,", "torch_cuda_api", "replace", True,
        "'peak_mem_mb': torch.npu.max_memory_allocated(device) / 2 ** 20,",
        "this tool's output: silently reports 0 MB"),
      C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
        "exits immediately on the NPU host"),
      C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
        "raises without CUDA"),
      C("device = torch.device('cuda', args.gpu)", "device_type", "replace", True,
        "device = torch.device('npu', args.gpu)", "benchmark device"),
      C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "removal", False, None,
        "--channels_last: see above"),
      C("model = torch.compile(model, mode='reduce-overhead')", "compile_mode", "replace", False,
        "model = torch.compile(model, backend='npugraphs')",
        "reduce-overhead means Inductor + CUDA graphs; on NPU the graph backend is npugraphs (behaviour of the "
        "original mode on NPU unconfirmed)"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "no-op while CUDA is uninitialised"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CUDA runtime base image for the gaze / head-pose demos", [
      C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "import_torch_npu", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "the image must carry CANN (and its set_env exports) for torch_npu to import"),
      C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "removal", False, None,
        "read by the NVIDIA container runtime only; Ascend devices are mounted by Ascend Docker Runtime / --device"),
      C("NVIDIA_DRIVER_CAPABILITIES=compute,utility,video \\", "env_var", "removal", False, None, "NVIDIA runtime only"),
      C("TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None, "only used when compiling CUDA extensions"),
      C("RUN pip3 install torch==2.1.2 torchvision==0.16.2 --index-url https://download.pytorch.org/whl/cu118",
        "import_torch_npu", "replace", True,
        "RUN pip3 install torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post17",
        "CUDA wheels (no aarch64 cu118 build) and no torch_npu; torch must match the torch-npu wheel"),
      C("RUN pip3 install onnxruntime-gpu==1.16.3", "unsupported_op_workaround", "replace", False,
        "RUN pip3 install onnxruntime==1.16.3",
        "CUDA execution provider is useless on NPU; whether the wheel even installs on aarch64 is unconfirmed"),
      C("RUN python -c \"import torch, torchvision; print(torch.__version__, torch.version.cuda", "import_torch_npu",
        "replace", False,
        "RUN python -c \"import torch, torch_npu, torchvision; print(torch.__version__, torch_npu.__version__, torchvision.__version__)\"",
        "sanity check only; unchanged it prints None for the CUDA version"),
  ])
