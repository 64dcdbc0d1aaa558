# Labels for probe252: audio-visual active speaker detection / talking-face code (CUDA -> Ascend NPU).
# One label per upstream line a careful porter would edit. See ../README.md for the policy.
ENTRIES = []
def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}
def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})

T, F = True, False
ADD_IMPORT = "import torch_npu"
NOTE_IMPORT_ENTRY = ("entry script: torch_npu must be loaded before the ported torch.npu / 'npu' device calls run "
                     "(mandatory before torch_npu 2.5.1 autoload, still recommended after)")
NOTE_CUDA_CALL = "Tensor/Module.cuda() raises on an Ascend host (CPU-only torch build, no CUDA driver)"
NOTE_CKPT = ("checkpoint holds CUDA tensors; torch.load without a CPU/NPU map_location tries to restore them on CUDA "
             "and raises on a host without CUDA")

# ---------------------------------------------------------------------------------------------
# TalkNet-ASD
# ---------------------------------------------------------------------------------------------
E("talknet_train", "trainTalkNet.py", "explicit_replacement",
  "TalkNet-ASD trainTalkNet.py (argparse trainer, single GPU selected with --gpu)", [
    C("import time, os, torch, argparse, warnings, glob", "import_torch_npu", "npu_only_addition", T,
      ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", T,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: --gpu would silently select nothing and every run "
      "lands on NPU 0 (relies on device init being lazy, as on CUDA - unconfirmed for torch_npu)"),
    C("pin_memory = args.pinMemory)", "pin_memory", "replace", F,
      "trainLoader = torch.utils.data.DataLoader(loader, batch_size = 1, shuffle = True, num_workers = args.nDataLoaderThread, pin_memory = args.pinMemory, pin_memory_device = 'npu')",
      "perf only, unconfirmed: without pin_memory_device the torch 2.1 DataLoader pins only when torch.cuda.is_available(), "
      "so on NPU pinning is silently skipped"),
])

E("talknet_core", "talkNet.py", "explicit_replacement",
  "TalkNet-ASD talkNet.py (model wrapper: .cuda() everywhere, loadParameters with plain torch.load)", [
    C("self.model = talkNetModel().cuda()", "tensor_to_device", "replace", T,
      "self.model = talkNetModel().npu()", NOTE_CUDA_CALL),
    C("self.lossAV = lossAV().cuda()", "tensor_to_device", "replace", T, "self.lossAV = lossAV().npu()", NOTE_CUDA_CALL),
    C("self.lossA = lossA().cuda()", "tensor_to_device", "replace", T, "self.lossA = lossA().npu()", NOTE_CUDA_CALL),
    C("self.lossV = lossV().cuda()", "tensor_to_device", "replace", T, "self.lossV = lossV().npu()", NOTE_CUDA_CALL),
    C("audioFeature[0].cuda()) # feedForward", "tensor_to_device", "replace", T,
      "audioEmbed = self.model.forward_audio_frontend(audioFeature[0].npu()) # feedForward", NOTE_CUDA_CALL),
    C("visualFeature[0].cuda()) # (B*T, 128)", "tensor_to_device", "replace", T,
      "visualEmbed = self.model.forward_visual_frontend(visualFeature[0].npu()) # (B*T, 128)", NOTE_CUDA_CALL),
    C("labels = labels[0].reshape((-1)).cuda() # Loss", "tensor_to_device", "replace", T,
      "labels = labels[0].reshape((-1)).npu() # Loss", NOTE_CUDA_CALL),
    C("audioEmbed  = self.model.forward_audio_frontend(audioFeature[0].cuda())", "tensor_to_device", "replace", T,
      "audioEmbed  = self.model.forward_audio_frontend(audioFeature[0].npu())", NOTE_CUDA_CALL),
    C("=visualEmbed = self.model.forward_visual_frontend(visualFeature[0].cuda())", "tensor_to_device", "replace", T,
      "visualEmbed = self.model.forward_visual_frontend(visualFeature[0].npu())", NOTE_CUDA_CALL),
    C("=labels = labels[0].reshape((-1)).cuda()", "tensor_to_device", "replace", T,
      "labels = labels[0].reshape((-1)).npu()", NOTE_CUDA_CALL),
    C("loadedState = torch.load(path)", "tensor_to_device", "replace", T,
      "loadedState = torch.load(path, map_location='npu')",
      NOTE_CKPT + " (pretrain_AVA.model / pretrain_TalkSet.model were saved from the GPU model)"),
])

E("talknet_model", "model/talkNetModel.py", "explicit_replacement",
  "TalkNet-ASD model/talkNetModel.py (device-agnostic nn.Module; only comments mention CUDA)", [])

E("talknet_boxutils", "model/faceDetector/s3fd/box_utils.py", "explicit_replacement",
  "S3FD box_utils.py as vendored by TalkNet (numpy NMS, host-side Detect output)", [])

E("talknet_avaperf", "utils/get_ava_active_speaker_performance.py", "explicit_replacement",
  "AVA-ActiveSpeaker official mAP script (pandas/numpy, CPU only)", [])

E("talknet_demo", "demoTalkNet.py", "explicit_replacement",
  "TalkNet-ASD demoTalkNet.py (scene detect, S3FD on cuda, tracking, cropping, TalkNet scoring, Columbia eval)", [
    C("import sys, time, os, tqdm, torch, argparse, glob, subprocess, warnings, cv2, pickle, numpy, pdb, math, python_speech_features",
      "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C("DET = S3FD(device='cuda')", "device_type", "replace", T, "DET = S3FD(device='npu')",
      "S3FD moves its net to and maps its weights onto this device; 'cuda' raises on an Ascend host"),
    C("inputA = torch.FloatTensor(audioFeature", "tensor_to_device", "replace", T,
      "inputA = torch.FloatTensor(audioFeature[i * duration * 100:(i+1) * duration * 100,:]).unsqueeze(0).npu()",
      NOTE_CUDA_CALL),
    C("inputV = torch.FloatTensor(videoFeature", "tensor_to_device", "replace", T,
      "inputV = torch.FloatTensor(videoFeature[i * duration * 25: (i+1) * duration * 25,:,:]).unsqueeze(0).npu()",
      NOTE_CUDA_CALL),
])

E("talknet_s3fd", "model/faceDetector/s3fd/__init__.py", "explicit_replacement",
  "S3FD face detector wrapper vendored by TalkNet / Light-ASD (S3FD(device='cuda'))", [
    C("def __init__(self, device='cuda'):", "device_type", "replace", T, "def __init__(self, device='npu'):",
      "default device of the detector; every S3FD() call that relies on it fails on an Ascend host "
      "(the .to(self.device) / map_location=self.device lines below are already device-agnostic)"),
])

E("talknet_tools", "utils/tools.py", "explicit_replacement",
  "TalkNet-ASD utils/tools.py (AVA preprocessing with ffmpeg, plus an NVDEC transcode helper and an env log)", [
    C("subprocess.run(['nvidia-smi'", "device_capability_check", "replace", T,
      "f.write(subprocess.run(['npu-smi', 'info'], stdout=subprocess.PIPE).stdout.decode())",
      "init_args() calls this on every run; subprocess.run raises FileNotFoundError when nvidia-smi is not installed"),
    C("-hwaccel cuda -hwaccel_output_format cuda", "device_type", "replace", T,
      "cmd = (\"ffmpeg -y -i %s -vf scale=-2:720 -r 25 -c:v libx264 -preset fast -an %s -loglevel panic\" % (videoPath, outPath))",
      "NVDEC/NVENC and scale_cuda need an NVIDIA GPU and driver; ffmpeg exits non-zero and subprocess.call ignores it, "
      "so the 25 fps copies are silently missing"),
])

E("talknet_req", "requirement.txt", "explicit_replacement",
  "TalkNet-ASD requirement.txt with +cu111 pins and the torch_stable find-links index", [
    C("-f https://download.pytorch.org/whl/torch_stable.html", "device_type", "replace", F,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA find-links index; harmless once the +cu111 pins are gone, but x86 hosts should take the CPU torch build"),
    C("torch==1.9.1+cu111", "device_type", "replace", T, "torch==2.1.0",
      "CUDA 11.1 local-version wheel: no aarch64 build, and there is no torch_npu for torch 1.9.1 (wheels exist for 1.8.1, 1.11.0, 2.x; torch_npu version must equal torch)"),
    C("torchvision==0.10.1+cu111", "device_type", "replace", T, "torchvision==0.16.0",
      "CUDA build pinned to torch 1.9.1; must follow the torch pin (0.16.0 pairs with torch 2.1.0)"),
    C("=torchaudio", "import_torch_npu", "npu_only_addition", T, "torch-npu==2.1.0.post10",
      "torch-npu pin matching torch 2.1.0 (v2.1.0-6.0.0 branch, CANN 8.0.0)"),
])

# ---------------------------------------------------------------------------------------------
# Light-ASD
# ---------------------------------------------------------------------------------------------
E("lightasd_asd", "ASD.py", "explicit_replacement",
  "Light-ASD ASD.py (model wrapper, train/eval loops, speed benchmark with CUDA events, ONNX export)", [
    C("self.model = ASD_Model().cuda()", "tensor_to_device", "replace", T, "self.model = ASD_Model().npu()", NOTE_CUDA_CALL),
    C("self.lossAV = lossAV().cuda()", "tensor_to_device", "replace", T, "self.lossAV = lossAV().npu()", NOTE_CUDA_CALL),
    C("self.lossV = lossV().cuda()", "tensor_to_device", "replace", T, "self.lossV = lossV().npu()", NOTE_CUDA_CALL),
    C("audioFeature, visualFeature = audioFeature[0].cuda(), visualFeature[0].cuda()", "tensor_to_device", "replace", T,
      "audioFeature, visualFeature = audioFeature[0].npu(), visualFeature[0].npu()", NOTE_CUDA_CALL),
    C("labels = labels[0].reshape((-1)).cuda() # Loss", "tensor_to_device", "replace", T,
      "labels = labels[0].reshape((-1)).npu() # Loss", NOTE_CUDA_CALL),
    C("audioEmbed  = self.model.forward_audio_frontend(audioFeature[0].cuda())", "tensor_to_device", "replace", T,
      "audioEmbed  = self.model.forward_audio_frontend(audioFeature[0].npu())", NOTE_CUDA_CALL),
    C("visualEmbed = self.model.forward_visual_frontend(visualFeature[0].cuda())", "tensor_to_device", "replace", T,
      "visualEmbed = self.model.forward_visual_frontend(visualFeature[0].npu())", NOTE_CUDA_CALL),
    C("=labels = labels[0].reshape((-1)).cuda()", "tensor_to_device", "replace", T,
      "labels = labels[0].reshape((-1)).npu()", NOTE_CUDA_CALL),
    C("audio = torch.randn(1, numFrames * 4, 13, device = 'cuda')", "device_type", "replace", T,
      "audio = torch.randn(1, numFrames * 4, 13, device = 'npu')", "factory call with device='cuda' raises on an Ascend host"),
    C("video = torch.randn(1, numFrames, 112, 112, device = 'cuda')", "device_type", "replace", T,
      "video = torch.randn(1, numFrames, 112, 112, device = 'npu')", "factory call with device='cuda' raises on an Ascend host"),
    C("torch.cuda.synchronize() # wait for the warm-up kernels", "torch_cuda_api", "replace", T,
      "torch.npu.synchronize() # wait for the warm-up kernels",
      "torch.cuda.synchronize() lazily initialises CUDA and raises without it"),
    C("starter, ender = torch.cuda.Event(", "torch_cuda_api", "replace", T,
      "starter, ender = torch.npu.Event(enable_timing = True), torch.npu.Event(enable_timing = True)",
      "torch.cuda.Event cannot be created without CUDA; torch.npu.Event supports enable_timing/elapsed_time"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "torch.cuda.synchronize() lazily initialises CUDA and raises without it"),
    C("torch.cuda.max_memory_allocated() / 1024 / 1024", "torch_cuda_api", "replace", F,
      "print(\"%d frames: %.2f ms / track, %.1f fps, peak mem %.1f MB\" % (numFrames, meanMs, numFrames / meanMs * 1000, torch.npu.max_memory_allocated() / 1024 / 1024))",
      "does not raise (CUDA never initialised -> empty stats -> 0), but reports 0 MB peak memory"),
    C("dummyA = torch.randn(1, numFrames * 4, 13).cuda()", "tensor_to_device", "replace", T,
      "dummyA = torch.randn(1, numFrames * 4, 13).npu()", NOTE_CUDA_CALL),
    C("dummyV = torch.randn(1, numFrames, 112, 112).cuda()", "tensor_to_device", "replace", T,
      "dummyV = torch.randn(1, numFrames, 112, 112).npu()", NOTE_CUDA_CALL),
    C("loadedState = torch.load(path, map_location = torch.device('cuda'))", "device_type", "replace", T,
      "loadedState = torch.load(path, map_location = torch.device('npu'))", "map_location to a CUDA device raises on an Ascend host"),
])

E("lightasd_columbia", "Columbia_test.py", "explicit_replacement",
  "Light-ASD Columbia_test.py (Columbia ASD evaluation; --gpu via CUDA_VISIBLE_DEVICES, module-level device)", [
    C("import sys, time, os, tqdm, torch, argparse, glob, subprocess, warnings, cv2, pickle, numpy, pdb, math, python_speech_features",
      "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", T,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "ignored by the Ascend runtime; --gpu would silently have no effect"),
    C('device = torch.device("cuda:0")', "device_type", "replace", T, 'device = torch.device("npu:0")',
      "all evaluation inputs are moved to this device; a CUDA device raises on an Ascend host"),
    C("DET = S3FD(device='cuda')", "device_type", "replace", T, "DET = S3FD(device='npu')",
      "S3FD loads and runs on this device; 'cuda' raises on an Ascend host"),
    C("torch.cuda.empty_cache() # long movies", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache() # long movies fragment the caching allocator",
      "silent no-op on NPU (CUDA never initialised); only frees the NPU cache after the rename"),
])

# ---------------------------------------------------------------------------------------------
# LoCoNet
# ---------------------------------------------------------------------------------------------
E("loconet_train", "train.py", "explicit_replacement",
  "LoCoNet_ASD train.py (mp.spawn + DistributedSampler, backend from config, torch.cuda.set_device)", [
    C("import time, os, torch, argparse, warnings, glob, pandas, json", "import_torch_npu", "npu_only_addition", T,
      ADD_IMPORT, NOTE_IMPORT_ENTRY + "; also re-imported by every spawned worker"),
    C("batch_size=cfg.TRAIN.BATCH_SIZE, pin_memory=True", "pin_memory", "replace", F,
      "trainLoader = torch.utils.data.DataLoader(loader, batch_size=cfg.TRAIN.BATCH_SIZE, pin_memory=True, pin_memory_device='npu', num_workers=self.cfg.NUM_WORKERS, sampler=train_sampler)",
      "perf only, unconfirmed: pinning is skipped when torch.cuda.is_available() is False unless pin_memory_device is given"),
    C("shuffle = False, pin_memory = True, num_workers = 16", "pin_memory", "replace", F,
      "valLoader = torch.utils.data.DataLoader(loader, batch_size = cfg.VAL.BATCH_SIZE, shuffle = False, pin_memory = True, pin_memory_device = 'npu', num_workers = 16)",
      "perf only, unconfirmed (same as the train loader)"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", T, "torch.npu.set_device(gpu)",
      "torch.cuda.set_device raises on a CPU-only torch build"),
    C('device = torch.device("cuda", gpu)', "device_type", "replace", T, 'device = torch.device("npu", gpu)',
      "model and batches are placed on this device; CUDA device raises on an Ascend host"),
    C("if world_size > torch.cuda.device_count():", "torch_cuda_api", "replace", T,
      "if world_size > torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on an Ascend host, so the script always raises before spawning"),
    C('raise RuntimeError("cfg.NUM_GPUS=%d', "torch_cuda_api", "replace", F,
      'raise RuntimeError("cfg.NUM_GPUS=%d but only %d NPUs are visible (check ASCEND_RT_VISIBLE_DEVICES)" % (world_size, torch.npu.device_count()))',
      "error path only; would report 0 devices and point at the wrong variable"),
])

E("loconet_module", "loconet.py", "explicit_replacement",
  "LoCoNet_ASD loconet.py (DDP wrapper, torch.cuda.amp autocast/GradScaler, .cuda() in eval)", [
    C("from torch.cuda.amp import autocast, GradScaler", "amp", "replace", T,
      "from torch_npu.npu.amp import autocast, GradScaler",
      "torch.cuda.amp autocast/GradScaler disable themselves with a warning when CUDA is absent: TRAIN.AMP silently "
      "trains in fp32 (2x activation memory); torch_npu.npu.amp is the supported NPU form"),
    C("self.model = locoencoder(cfg).cuda()", "tensor_to_device", "replace", T, "self.model = locoencoder(cfg).npu()",
      NOTE_CUDA_CALL + " (single-process path, rank=None)"),
    C("self.lossAV = lossAV().cuda()", "tensor_to_device", "replace", T, "self.lossAV = lossAV().npu()", NOTE_CUDA_CALL),
    C("self.lossA = lossA().cuda()", "tensor_to_device", "replace", T, "self.lossA = lossA().npu()", NOTE_CUDA_CALL),
    C("self.lossV = lossV().cuda()", "tensor_to_device", "replace", T, "self.lossV = lossV().npu()", NOTE_CUDA_CALL),
    C("audioFeature = audioFeature.cuda()", "tensor_to_device", "replace", T, "audioFeature = audioFeature.npu()",
      NOTE_CUDA_CALL + " (evaluate_network; the train loop already uses .to(device))"),
    C("visualFeature = visualFeature.cuda()", "tensor_to_device", "replace", T, "visualFeature = visualFeature.npu()", NOTE_CUDA_CALL),
    C("labels = labels.cuda()", "tensor_to_device", "replace", T, "labels = labels.npu()", NOTE_CUDA_CALL),
    C("masks = masks.cuda()", "tensor_to_device", "replace", T, "masks = masks.npu()", NOTE_CUDA_CALL),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()",
      "silent no-op on NPU; frees nothing until renamed"),
    C("alloc = torch.cuda.memory_allocated(self.device)", "torch_cuda_api", "replace", F,
      "alloc = torch.npu.memory_allocated(self.device) / 2**30",
      "does not raise (uninitialised CUDA -> empty stats) but logs 0 GiB"),
    C("peak = torch.cuda.max_memory_allocated(self.device)", "torch_cuda_api", "replace", F,
      "peak = torch.npu.max_memory_allocated(self.device) / 2**30",
      "does not raise but logs 0 GiB"),
])

E("loconet_encoder", "model/loconet_encoder.py", "kernel_rewrite",
  "LoCoNet encoder with a speaker-attention block using fused SDPA under torch.backends.cuda.sdp_kernel", [
    C("if self.use_flash and x.is_cuda:", "device_type", "replace", F,
      "if self.use_flash and x.device.type in (\"cuda\", \"npu\"):",
      "perf only: on NPU x.is_cuda is False, so the explicit softmax(QK^T)V path runs (correct, slower); "
      "opening the gate lets SDPA dispatch to the NPU fused attention"),
    C("with torch.backends.cuda.sdp_kernel(", "attention_kernel", "replace", F,
      "with contextlib.nullcontext():  # sdp_kernel is unsupported on NPU; SDPA picks the NPU kernel itself",
      "torch.backends.cuda.sdp_kernel is UNSUPPORTED for NPU (mstt 2.7 list, ✘ in Ascend's 2.7.1 table); only reached "
      "after the optional is_cuda gate above is opened, hence not required"),
])

E("loconet_cfg", "configs/multi.yaml", "explicit_replacement",
  "LoCoNet_ASD configs/multi.yaml (yacs config: distributed backend, device, AMP, flash flag)", [
    C('DIST_BACKEND: "nccl"', "dist_backend", "replace", T, 'DIST_BACKEND: "hccl"',
      "train.py passes cfg.DIST_BACKEND to init_process_group; NCCL is not available on Ascend"),
    C('DEVICE: "cuda"', "device_type", "replace", T, 'DEVICE: "npu"',
      "dlhammer.get_device() builds torch.device(cfg.DEVICE, rank) for the single-process tools"),
])

E("loconet_bootstrap", "dlhammer/dlhammer/bootstrap.py", "device_branch_or_abstraction",
  "LoCoNet's dlhammer bootstrap (yacs defaults, seeding, env report, device helper)", [
    C('_C.DIST_BACKEND = "nccl"', "dist_backend", "replace", T, '_C.DIST_BACKEND = "hccl"',
      "default used by every config that does not set DIST_BACKEND"),
    C('_C.DEVICE = "cuda"', "device_type", "replace", T, '_C.DEVICE = "npu"',
      "default for get_device(); torch.device('cuda', i) tensors fail on Ascend"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "silent no-op on NPU; torch.manual_seed above is expected to seed the NPU generator too (unconfirmed for older torch)"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", F, "num_gpus = torch.npu.device_count()",
      "env report only: logs 0 devices"),
    C("torch.cuda.get_device_name(k)", "torch_cuda_api", "replace", F,
      'lines.append("  NPU %d: %s" % (k, torch.npu.get_device_name(k)))',
      "would raise, but the loop is empty on NPU while num_gpus stays a CUDA count"),
])

E("loconet_sh", "scripts/train_multi.sh", "explicit_replacement",
  "LoCoNet-style 4-GPU launcher (conda, CUDA_VISIBLE_DEVICES, NCCL_* tuning, nvidia-smi, yacs overrides)", [
    C("conda activate loconet", "import_torch_npu", "npu_only_addition", T,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH not found)"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", T, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES; the card selection would be lost"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", F, None, "NCCL-only tuning, ignored by HCCL"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", F, "export ASCEND_GLOBAL_LOG_LEVEL=2",
      "NCCL-only; closest Ascend knob is the CANN log level (mapping unconfirmed)"),
    C("export NCCL_SOCKET_IFNAME=ib0", "env_var", "replace", F, "export HCCL_SOCKET_IFNAME=ib0",
      "HCCL's host-NIC selector; single-node run works with HCCL's default NIC choice"),
    C('echo "[$(date)] training on GPUs ${CUDA_VISIBLE_DEVICES}', "env_var", "replace", F,
      'echo "[$(date)] training on NPUs ${ASCEND_RT_VISIBLE_DEVICES} (${NUM_GPUS} procs), output ${OUTPUT}"',
      "log line only"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check", "replace", T,
      "npu-smi info", "command not found aborts the script under set -e"),
    C("DIST_BACKEND nccl \\", "dist_backend", "replace", T, "DIST_BACKEND hccl \\",
      "command-line override of the config backend; NCCL is not available on Ascend"),
    C("CUDA_VISIBLE_DEVICES=0 python -u test_multicard.py", "env_var", "replace", F,
      "ASCEND_RT_VISIBLE_DEVICES=0 python -u test_multicard.py --cfg ${CONFIG} \\",
      "evaluation would still run on the first visible NPU; only the intended card pinning is lost"),
])

E("loconet_env", "environment.yml", "explicit_replacement",
  "LoCoNet conda environment.yml (pytorch + nvidia channels, pytorch-cuda, cudatoolkit, pip extras)", [
    C("=- nvidia", "device_type", "removal", F, None, "NVIDIA channel only serves CUDA packages"),
    C("- pytorch=2.0.1", "device_type", "replace", T, "- pytorch=2.1.0=*cpu*",
      "with pytorch-cuda in the env the CUDA variant is selected; torch_npu needs a CPU torch of exactly its version"),
    C("- torchvision=0.15.2", "import_torch_npu", "replace", T, "- torchvision=0.16.0",
      "must follow the torch pin (0.15.2 requires torch 2.0.1)"),
    C("- torchaudio=2.0.2", "import_torch_npu", "replace", T, "- torchaudio=2.1.0",
      "must follow the torch pin (2.0.2 requires torch 2.0.1)"),
    C("- pytorch-cuda=11.8", "device_type", "removal", T, None,
      "CUDA metapackage: no linux-aarch64 build and it forces the CUDA torch variant"),
    C("- cudatoolkit=11.8", "device_type", "removal", F, None, "unused CUDA runtime, dead weight on Ascend"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", T, "- torch-npu==2.1.0.post10",
      "torch-npu pin matching torch 2.1.0"),
    C("- nvidia-ml-py==11.525.112", "device_capability_check", "removal", F, None,
      "NVML bindings install fine but have no device to query"),
])

E("loconet_test", "test_multicard.py", "explicit_replacement",
  "LoCoNet-style torchrun evaluation script (env:// init with nccl, all_gather_object of predictions)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C('os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")', "env_var", "replace", F,
      'os.environ.setdefault("HCCL_ASYNC_ERROR_HANDLING", "1")',
      "NCCL watchdog knob is ignored by HCCL; torch_npu's equivalent is HCCL_ASYNC_ERROR_HANDLING (default 1)"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", T, "torch.npu.set_device(local_rank)",
      "raises on a CPU-only torch build"),
    C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", T,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL backend does not exist on Ascend"),
    C('map_location="cuda:%d" % device.index', "device_type", "replace", T,
      'state = torch.load(cfg.RESUME_PATH, map_location="npu:%d" % device.index)',
      "map_location to a CUDA device raises on an Ascend host"),
    C('device = torch.device("cuda", local_rank)', "device_type", "replace", T,
      'device = torch.device("npu", local_rank)', "model and inputs are placed on this device"),
    C("num_workers=cfg.NUM_WORKERS, pin_memory=True)", "pin_memory", "replace", F,
      "num_workers=cfg.NUM_WORKERS, pin_memory=True, pin_memory_device='npu')",
      "perf only, unconfirmed (pinning skipped without CUDA unless pin_memory_device is set)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", T, "torch.npu.synchronize()",
      "raises without CUDA"),
])

# ---------------------------------------------------------------------------------------------
# SyncNet
# ---------------------------------------------------------------------------------------------
E("syncnet_instance", "SyncNetInstance.py", "explicit_replacement",
  "joonson/syncnet_python SyncNetInstance.py (__S__ = S(...).cuda(), per-batch .cuda(), offset search)", [
    C("self.__S__ = S(num_layers_in_fc_layers = num_layers_in_fc_layers).cuda();", "tensor_to_device", "replace", T,
      "self.__S__ = S(num_layers_in_fc_layers = num_layers_in_fc_layers).npu();", NOTE_CUDA_CALL),
    C("self.__S__.forward_lip(im_in.cuda());", "tensor_to_device", "replace", T,
      "im_out  = self.__S__.forward_lip(im_in.npu());", NOTE_CUDA_CALL),
    C("self.__S__.forward_aud(cc_in.cuda())", "tensor_to_device", "replace", T,
      "cc_out  = self.__S__.forward_aud(cc_in.npu())", NOTE_CUDA_CALL),
    C("im_feat = im_feat.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "im_feat = im_feat.npu(non_blocking=True)", NOTE_CUDA_CALL),
    C("cc_feat = cc_feat.cuda(non_blocking=True)", "tensor_to_device", "replace", T,
      "cc_feat = cc_feat.npu(non_blocking=True)", NOTE_CUDA_CALL),
    C("idx = torch.arange(im_feat.shape[0], device='cuda')", "device_type", "replace", T,
      "idx = torch.arange(im_feat.shape[0], device=im_feat.device)[:, None] + torch.arange(win_size, device=im_feat.device)[None, :]",
      "factory calls with device='cuda' raise on an Ascend host"),
    C("self.__S__.forward_lipfeat(im_in.cuda());", "tensor_to_device", "replace", T,
      "im_out  = self.__S__.forward_lipfeat(im_in.npu());", NOTE_CUDA_CALL),
])

E("syncnet_pipeline", "run_pipeline.py", "explicit_replacement",
  "joonson/syncnet_python run_pipeline.py (module-level script; S3FD(device='cuda'), scenedetect, ffmpeg)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C("DET = S3FD(device='cuda')", "device_type", "replace", T, "DET = S3FD(device='npu')",
      "face detector is built on this device; 'cuda' raises on an Ascend host"),
])

# ---------------------------------------------------------------------------------------------
# Wav2Lip (lip-sync expert + talking-face inference)
# ---------------------------------------------------------------------------------------------
E("wav2lip_syncnet", "color_syncnet_train.py", "explicit_replacement",
  "Wav2Lip color_syncnet_train.py (use_cuda flag, _load() branching on it, optional nn.DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", T, "use_cuda = torch.npu.is_available()",
      "False on an Ascend host, so training silently runs on the CPU"),
    C("checkpoint = torch.load(checkpoint_path)", "tensor_to_device", "replace", T,
      "checkpoint = torch.load(checkpoint_path, map_location='npu')",
      NOTE_CKPT + "; reached once use_cuda is ported (required edit above)"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", T,
      'device = torch.device("npu" if use_cuda else "cpu")', "selects CUDA once the flag is true; must name the NPU"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", F, "if torch.npu.device_count() > 1:",
      "returns 0 on NPU: silently trains on one card (perf only)"),
    C("""print("Let's use", torch.cuda.device_count(), "GPUs!")""", "torch_cuda_api", "replace", F,
      """print("Let's use", torch.npu.device_count(), "NPUs!")""", "log line only"),
    C("model = nn.DataParallel(model)", "distributed_framework", "replace", F,
      "model = model  # nn.DataParallel is unsupported on NPU; launch with torchrun + DDP for multi-card",
      "torch.nn.DataParallel is ✘ on Ascend; only reached once the device_count gate is ported (optional)"),
])

E("wav2lip_infer", "inference.py", "device_branch_or_abstraction",
  "Wav2Lip inference.py (device = 'cuda' if available else 'cpu', _load() on device string, fp16 autocast flag)", [
    C("import torch, face_detection", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "add_branch", T,
      "device = 'npu' if torch.npu.is_available() else ('cuda' if torch.cuda.is_available() else 'cpu')",
      "evaluates to 'cpu' on an Ascend host: face detection and Wav2Lip silently run on the CPU"),
    C("torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.fp16)", "amp", "replace", T,
      "with torch.no_grad(), torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.fp16):",
      "autocast for 'cuda' is disabled with a warning when CUDA is absent: --fp16 is silently ignored"),
])

E("wav2lip_fdapi", "face_detection/api.py", "explicit_replacement",
  "face_alignment-derived face_detection/api.py vendored by Wav2Lip (FaceAlignment(device='cuda'))", [
    C("device='cuda', flip_input=False, face_detector='sfd', verbose=False):", "device_type", "replace", T,
      "device='npu', flip_input=False, face_detector='sfd', verbose=False):",
      "default device of the detector wrapper; used by any caller that does not pass device"),
])

E("wav2lip_sfd", "face_detection/detection/sfd/sfd_detector.py", "explicit_replacement",
  "face_alignment SFD detector vendored by Wav2Lip (torch.load of s3fd.pth without map_location)", [
    C("model_weights = torch.load(path_to_detector)", "tensor_to_device", "replace", F,
      "model_weights = torch.load(path_to_detector, map_location='cpu')",
      "unconfirmed: only fails if the released s3fd.pth stores CUDA tensors; map_location makes it safe either way"),
])

# ---------------------------------------------------------------------------------------------
# avdiar: pyannote-based audio-visual diarization toolkit
# ---------------------------------------------------------------------------------------------
E("avdiar_diarize", "avdiar/pipeline/diarize.py", "device_branch_or_abstraction",
  "pyannote.audio 3.x diarization pipeline + ASD track assignment + Whisper transcript (pipeline.to(torch.device('cuda')))", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT, NOTE_IMPORT_ENTRY),
    C('pipeline.to(torch.device("cuda"))', "device_type", "replace", T, "pipeline.to(device)",
      "moving the pyannote pipeline to a CUDA device raises on an Ascend host (the device argument was ignored)"),
    C('device=device or torch.device("cuda"))', "device_type", "replace", T,
      'self.inference = Inference(model, window="whole", device=device or torch.device("npu"))',
      "default embedding device"),
    C('def transcribe(wav_path, turns, model_name="medium", device="cuda", language=None):', "device_type", "replace", T,
      'def transcribe(wav_path, turns, model_name="medium", device="npu", language=None):',
      "default Whisper device"),
    C("fp16=torch.cuda.is_available()", "torch_cuda_api", "replace", F,
      'result = model.transcribe(chunk, language=language, fp16=torch.npu.is_available(), condition_on_previous_text=False)',
      "perf only: Whisper decodes in fp32 on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", F, "if torch.npu.is_available():",
      "peak-memory log is silently skipped"),
    C("torch.cuda.max_memory_allocated(device)", "torch_cuda_api", "replace", F,
      'logger.info("peak NPU memory %.2f GiB", torch.npu.max_memory_allocated(device) / 2**30)',
      "log only; unreachable until the gate above is ported"),
])

E("avdiar_gpu", "avdiar/utils/gpu.py", "device_branch_or_abstraction",
  "GPU helper module of a video-batch toolkit (pick freest card via NVML / nvidia-smi, capability checks, cache release)", [
    C('env = os.environ.get("CUDA_VISIBLE_DEVICES")', "env_var", "replace", F,
      'env = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")',
      "only feeds the NVML / nvidia-smi paths, which are dead on an Ascend host"),
    C("return list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", F,
      "return list(range(torch.npu.device_count()))", "only feeds the NVML / nvidia-smi paths"),
    C("torch.cuda.mem_get_info(i)", "torch_cuda_api", "replace", T,
      "return [torch.npu.mem_get_info(i)[0] // (1024 * 1024) for i in range(torch.npu.device_count())]",
      "the only free-memory source on an Ascend host (NVML init fails, no nvidia-smi); with the CUDA calls the list is "
      "empty and select_device() crashes in max()"),
    C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", T, "if not torch.npu.is_available():",
      "False on an Ascend host: every tool silently falls back to the CPU"),
    C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", T, "torch.npu.set_device(gpu)",
      "raises on a CPU-only torch build once the gate is ported"),
    C('return torch.device(f"cuda:{gpu}")', "device_type", "replace", T, 'return torch.device(f"npu:{gpu}")',
      "returned device is used for all models and tensors"),
    C("torch.cuda.set_device(best)", "torch_cuda_api", "replace", T, "torch.npu.set_device(best)",
      "raises on a CPU-only torch build"),
    C('return torch.device("cuda", best)', "device_type", "replace", T, 'return torch.device("npu", best)',
      "returned device is used for all models and tensors"),
    C("if not torch.cuda.is_available() or torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", F,
      "if not torch.npu.is_available() or torch.npu.device_count() == 0:", "summary string only: reports 'no GPU'"),
    C("for i in range(torch.cuda.device_count()):", "torch_cuda_api", "replace", F,
      "for i in range(torch.npu.device_count()):", "summary string only"),
    C("props = torch.cuda.get_device_properties(i)", "torch_cuda_api", "replace", F,
      "props = torch.npu.get_device_properties(i)", "summary string only (unreachable until the gate is ported)"),
    C("props.major, props.minor))", "device_capability_check", "replace", F,
      'parts.append("%d:%s(%.0fGB)" % (i, props.name, props.total_memory / 2**30))',
      "NPU device properties have no major/minor (only name, total_memory, L2_cache_size, cube/vector core counts)"),
    C('if device is not None and device.type == "cpu" or not torch.cuda.is_available():', "torch_cuda_api", "replace", F,
      'if device is not None and device.type == "cpu" or not torch.npu.is_available():',
      "returns False on NPU, so autocast_dtype() picks fp16 instead of bf16 (no failure)"),
    C("major, _ = torch.cuda.get_device_capability(device)", "device_capability_check", "replace", F,
      "return torch.npu.is_bf16_supported()",
      "get_device_capability returns None on NPU (unpacking would fail); sm_80 has no NPU meaning. Unreachable until the gate is ported"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", F, "torch.npu.manual_seed_all(seed)",
      "silent no-op on NPU; torch.manual_seed above is expected to cover the NPU generator (unconfirmed)"),
    C('os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"', "env_var", "replace", F,
      'os.environ["HCCL_DETERMINISTIC"] = "true"',
      "cuBLAS-only knob, no effect on NPU; determinism on Ascend comes from use_deterministic_algorithms (+ HCCL_DETERMINISTIC for reductions)"),
    C('if device is not None and device.type == "cuda":', "device_type", "replace", F,
      'if device is not None and device.type == "npu":', "release() silently does nothing for NPU devices (perf only)"),
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", F, "with torch.npu.device(device):",
      "unreachable until the gate above is ported"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "cache release only"),
    C("torch.cuda.ipc_collect()", "torch_cuda_api", "replace", F, "torch.npu.ipc_collect()", "cache release only"),
])

E("avdiar_face", "avdiar/face/detector.py", "kernel_rewrite",
  "RetinaFace / SCRFD face front-end with an nvcc-built NMS extension and onnxruntime-gpu providers", [
    C("from torchvision.ops import nms as tv_nms", "unsupported_op_workaround", "npu_only_addition", F,
      "import torchvision_npu  # registers NPU kernels for torchvision.ops.nms",
      "without torchvision_npu, nms on NPU tensors goes through the CPU fallback (works, host round-trip per frame)"),
    C("return _C.nms_cuda(dets, iou_thr)", "custom_cuda_extension", "replace", F,
      "return tv_nms(boxes, scores, iou_thr)",
      "call site of the nvcc-built kernel; never reached on NPU (boxes.is_cuda is False and the extension is built CPU-only)"),
    C('def __init__(self, device="cuda", weights=RETINA_WEIGHTS', "device_type", "replace", T,
      'def __init__(self, device="npu", weights=RETINA_WEIGHTS, conf_th=0.8, nms_th=0.4, max_size=640, half=True):',
      "default detector device"),
    C('self.half = half and self.device.type == "cuda"', "device_type", "replace", F,
      'self.half = half and self.device.type in ("cuda", "npu")', "perf only: fp16 detector silently disabled on NPU"),
    C("storage.cuda(self.device.index or 0)", "tensor_to_device", "replace", T,
      "state = torch.load(weights, map_location=self.device)",
      "map_location lambda calls storage.cuda(), which raises on an Ascend host"),
    C(".pin_memory().to(self.device, non_blocking=True)", "pin_memory", "replace", F,
      "x = torch.from_numpy(batch).permute(0, 3, 1, 2).pin_memory(\"npu\").to(self.device, non_blocking=True)",
      "unconfirmed: pin_memory() without a device targets CUDA on a CPU-only build and may raise; naming the NPU makes it explicit"),
    C('providers = [("CUDAExecutionProvider"', "device_type", "replace", F,
      'providers = [("CANNExecutionProvider", {"device_id": gpu_id}), "CPUExecutionProvider"]',
      "onnxruntime silently drops an unavailable provider and runs SCRFD on the CPU; CANN EP needs an onnxruntime-cann build (unconfirmed)"),
    C('def build_detector(name="retinaface", device="cuda", **kw):', "device_type", "replace", T,
      'def build_detector(name="retinaface", device="npu", **kw):', "default detector device"),
])

E("avdiar_setup", "setup.py", "kernel_rewrite",
  "setup.py building an optional CUDAExtension (nvcc flags, FORCE_CUDA) with a CPU fallback", [
    C('if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":',
      "custom_cuda_extension", "replace", F,
      'if os.getenv("FORCE_CUDA", "0") == "1" and CUDA_HOME is not None:  # no nvcc on Ascend hosts; NPU NMS via torchvision_npu',
      "on an Ascend host the gate is False and the CPU-only extension builds; only FORCE_CUDA=1 (see Dockerfile) breaks the build"),
])

E("avdiar_pyproject", "pyproject.toml", "explicit_replacement",
  "pyproject.toml with pinned torch 2.1.2, onnxruntime-gpu, nvidia-ml-py, xformers extra and a uv cu121 index", [
    C('requires = ["setuptools>=64", "wheel", "torch==2.1.2"]', "import_torch_npu", "replace", F,
      'requires = ["setuptools>=64", "wheel", "torch==2.1.0"]',
      "extension would be built against a different torch than the runtime one (unconfirmed ABI issue; fallback exists)"),
    C("=dependencies = [", "import_torch_npu", "npu_only_addition", T, '"torch-npu==2.1.0.post10",',
      "torch-npu pin matching torch 2.1.0"),
    C('"torch==2.1.2",', "import_torch_npu", "replace", T, '"torch==2.1.0",',
      "no torch_npu wheel exists for torch 2.1.2; wheel version must equal torch"),
    C('"torchvision==0.16.2",', "import_torch_npu", "replace", T, '"torchvision==0.16.0",',
      "0.16.2 requires torch 2.1.2: must follow the torch pin"),
    C('"torchaudio==2.1.2",', "import_torch_npu", "replace", T, '"torchaudio==2.1.0",',
      "2.1.2 requires torch 2.1.2: must follow the torch pin"),
    C('"onnxruntime-gpu==1.16.3",', "device_type", "replace", F, '"onnxruntime==1.16.3",',
      "CUDA build of onnxruntime; unconfirmed whether it installs on aarch64 Ascend hosts, useless either way"),
    C('"nvidia-ml-py>=12.535",', "device_capability_check", "removal", F, None,
      "NVML bindings, nothing to query on Ascend (gpu.py already tolerates their absence)"),
    C('fast = ["xformers==0.0.23.post1", "ninja"]', "attention_kernel", "replace", F, 'fast = ["ninja"]',
      "xformers has no NPU backend and pins a CUDA torch; optional extra"),
    C('url = "https://download.pytorch.org/whl/cu121"', "device_type", "replace", T,
      'url = "https://download.pytorch.org/whl/cpu"',
      "uv resolves torch/torchvision/torchaudio only from this CUDA index; torch_npu needs the CPU build"),
])

E("avdiar_docker", "docker/Dockerfile", "explicit_replacement",
  "runtime Dockerfile on nvidia/cuda base with cu121 torch wheels and a FORCE_CUDA extension build", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "device_type", "replace", T,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "needs a CANN base image (driver libs mounted by Ascend Docker Runtime); image tag not verified"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", F, "ENV ASCEND_VISIBLE_DEVICES=0 \\",
      "NVIDIA container-runtime variable, ignored on Ascend"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility,video \\", "env_var", "removal", F, None,
      "NVIDIA container-runtime variable, ignored on Ascend"),
    C("RUN python -m pip install --upgrade pip setuptools wheel", "import_torch_npu", "npu_only_addition", T,
      "RUN pip install torch-npu==2.1.0.post10", "torch-npu pin matching torch 2.1.0"),
    C("RUN pip install torch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2 \\", "import_torch_npu", "replace", T,
      "RUN pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 \\",
      "no torch_npu wheel for torch 2.1.2"),
    C("--index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", T,
      "--index-url https://download.pytorch.org/whl/cpu", "CUDA wheel index; torch_npu needs the CPU torch build"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6" \\', "env_var", "removal", F, None, "nvcc arch list, meaningless on Ascend"),
    C("=FORCE_CUDA=1", "custom_cuda_extension", "removal", T, None,
      "forces the CUDAExtension branch of setup.py; without nvcc/CUDA_HOME `pip install -e .` fails and the image does not build"),
    C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", F, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored on Ascend; the container still uses its first mounted NPU"),
])

E("avdiar_batch", "tools/batch_infer_multigpu.py", "explicit_replacement",
  "multi-GPU batch runner (spawned worker per GPU, torch.cuda.set_device, OOM retry, torch.cuda.amp.autocast)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", T, ADD_IMPORT,
      NOTE_IMPORT_ENTRY + "; spawned workers re-import this module"),
    C("torch.cuda.amp.autocast(enabled=args.fp16)", "amp", "replace", T,
      "with torch.no_grad(), torch.autocast(device_type='npu', dtype=torch.float16, enabled=args.fp16):",
      "CUDA autocast is disabled without CUDA while the model was .half()-ed: --fp16 feeds fp32 inputs to fp16 weights and fails"),
    C("torch.cuda.set_device(gpu_id)", "torch_cuda_api", "replace", T, "torch.npu.set_device(gpu_id)",
      "raises on a CPU-only torch build"),
    C('device = torch.device("cuda", gpu_id)', "device_type", "replace", T, 'device = torch.device("npu", gpu_id)',
      "all per-worker models and tensors use this device"),
    C("torch.cuda.get_device_name(gpu_id)", "torch_cuda_api", "replace", T,
      'logger.info("worker %d ready on %s (%s)", rank, device, torch.npu.get_device_name(gpu_id))',
      "raises without CUDA"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", F, "except RuntimeError as e:  # NPU OOM",
      "NPU out-of-memory is not a torch.cuda.OutOfMemoryError: the retry path silently never triggers (unconfirmed exception type)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", F, "torch.npu.empty_cache()", "silent no-op on NPU"),
    C("torch.cuda.empty_cache()  # long episodes", "torch_cuda_api", "replace", F,
      "torch.npu.empty_cache()  # long episodes fragment the allocator", "silent no-op on NPU"),
    C("gpu_ids = list(range(torch.cuda.device_count()))", "torch_cuda_api", "replace", T,
      "gpu_ids = list(range(torch.npu.device_count()))",
      "empty on an Ascend host: the tool exits with 'no CUDA device found' unless --gpus is given"),
])
