"""Labels for probe477 (audio watermarking / proactive deepfake defence, CUDA -> Ascend NPU).

Each E(...) is one upstream file under files/<id>/upstream/<path>; each C(...) is one line a careful
porter would edit, written as an explicit torch_npu port (no transfer_to_npu shortcut).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("explicit port: import torch_npu in the entry point so the 'npu' device and torch.npu exist; "
               "only optional with the device-backend autoload of torch_npu >= 2.5.1, and the target matrix still "
               "includes torch 2.1.0 + torch_npu 2.1.0.postN")
SETENV_NOTE = ("CANN's set_env.sh must be sourced before python starts, otherwise import torch_npu cannot find "
               "the CANN runtime libraries (unless the host/container already sources it)")
EMPTY_CACHE_NOTE = ("torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised; porting it only "
                    "restores the cache release on the NPU (memory headroom, not correctness)")
SEED_NOTE = ("torch.manual_seed() on the line(s) before already seeds every registered device generator in "
             "current torch; the per-device call is redundant (unconfirmed in the knowledge base for privateuse1)")
MEMLOG_NOTE = ("memory statistic only used in a log line; torch.cuda.*memory* returns 0 without an initialised CUDA "
               "context instead of raising, so the run is correct but the number is wrong")

# ----------------------------------------------------------------------------------------------------------------
# AudioSeal (facebookresearch/audioseal) and its training recipe in audiocraft
# ----------------------------------------------------------------------------------------------------------------
E("as_models", "src/audioseal/models.py", "explicit_replacement",
  "facebookresearch/audioseal src/audioseal/models.py (generator/detector, device-agnostic)", [])

E("as_loader", "src/audioseal/loader.py", "explicit_replacement",
  "facebookresearch/audioseal src/audioseal/loader.py (model cards, hub download, map_location='cpu')", [])

E("as_tests", "tests/test_models.py", "explicit_replacement",
  "facebookresearch/audioseal tests/test_models.py (pytest, GPU fixture and fp16 GPU-only test)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('return "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'return "npu" if torch.npu.is_available() else "cpu"',
      "fixture would silently run every device test on the CPU of an NPU host"),
    C("@pytest.mark.skipif(not torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="fp16 inference needs an NPU")',
      "the fp16 test would be silently skipped on an NPU host"),
    C("detector = detector.half().cuda().eval()", "tensor_to_device", "replace", True,
      "detector = detector.half().npu().eval()", ".cuda() raises without CUDA"),
    C("result, _ = detector(audio.half().cuda(), sample_rate=sr)", "tensor_to_device", "replace", True,
      "result, _ = detector(audio.half().npu(), sample_rate=sr)", ".cuda() raises without CUDA"),
])

E("as_attacks", "examples/attacks.py", "explicit_replacement",
  "facebookresearch/audioseal examples/attacks.py (julius-based audio effects, tensor.device everywhere)", [])

E("ac_base_solver", "audiocraft/solvers/base.py", "explicit_replacement",
  "facebookresearch/audiocraft audiocraft/solvers/base.py (StandardSolver, cfg.device, TorchAutocast)", [
    C("not torch.cuda.is_bf16_supported()", "device_capability_check", "replace", True,
      "if dtype == torch.bfloat16 and self.cfg.autocast and not torch.npu.is_bf16_supported():",
      "with bf16 autocast configured (config.yaml default dtype) the CUDA query raises or reports False on an "
      "NPU host, silently downgrading to fp16; torch.npu.is_bf16_supported is in torch_npu.npu.__all__"),
    C("peak = torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1e9", MEMLOG_NOTE),
    C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
      "torch.npu.reset_peak_memory_stats()",
      "unlike the read above, the reset resolves the current CUDA device and raises on a CPU-only torch build; "
      "runs at the end of every train/valid stage because cfg.device is no longer 'cpu'"),
])

E("ac_wm_solver", "audiocraft/solvers/watermark.py", "explicit_replacement",
  "facebookresearch/audiocraft audiocraft/solvers/watermark.py (AudioSeal training solver)", [
    C("self.scaler: tp.Optional[torch.cuda.amp.GradScaler] = None", "amp", "replace", False,
      "self.scaler: tp.Optional[torch.npu.amp.GradScaler] = None",
      "annotation only (not evaluated inside a function); edited for consistency with the line below"),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "torch.cuda.amp.GradScaler disables itself when CUDA is unavailable, so fp16 autocast would train "
      "without loss scaling (silent underflow); torch_npu.npu.amp.GradScaler is the listed NPU form"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available():", "guard of the empty_cache below; " + EMPTY_CACHE_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("ac_train", "audiocraft/train.py", "explicit_replacement",
  "facebookresearch/audiocraft audiocraft/train.py (dora/hydra entry point, flashy.distrib.init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("flashy.distrib.init()", "dist_backend", "replace", False, "flashy.distrib.init(backend='hccl')",
      "flashy picks the process-group backend and sets the CUDA device itself; on NPU the group must be hccl and "
      "torch.npu.set_device(local_rank) must happen first. How flashy chooses nccl/gloo and whether init() takes "
      "a backend argument is from memory, unconfirmed"),
])

E("ac_config", "config/config.yaml", "explicit_replacement",
  "facebookresearch/audiocraft config/config.yaml (base hydra config: device, autocast, fsdp, slurm)", [
    C("=device: cuda", "device_type", "replace", True, "device: npu",
      "cfg.device feeds batch.to(self.device), TorchAutocast(device_type=...) and the model placement"),
])

# ----------------------------------------------------------------------------------------------------------------
# WavMark (wavmark/wavmark)
# ----------------------------------------------------------------------------------------------------------------
E("wm_init", "src/wavmark/__init__.py", "explicit_replacement",
  "wavmark/wavmark src/wavmark/__init__.py (load_model with map_location cpu, encode/decode helpers)", [])

E("wm_model", "src/wavmark/models/my_model.py", "explicit_replacement",
  "wavmark/wavmark src/wavmark/models/my_model.py (STFT/iSTFT + invertible network)", [])

E("wm_hinet", "src/wavmark/models/hinet.py", "explicit_replacement",
  "wavmark/wavmark src/wavmark/models/hinet.py (INV blocks, dense residual blocks)", [])

E("wm_add_util", "src/wavmark/utils/wm_add_util.py", "explicit_replacement",
  "wavmark/wavmark src/wavmark/utils/wm_add_util.py (chunked encoding, device passed in)", [])

E("wm_example", "example.py", "explicit_replacement",
  "wavmark/wavmark README quick-start as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "otherwise the whole demo silently runs on the CPU of an NPU host"),
])

E("wm_eval", "tools/eval_robustness.py", "explicit_replacement",
  "WavMark robustness/latency evaluation script in the style of downstream benchmark harnesses", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpu',
      "--gpu selects the device through visibility; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so "
      "--gpu 3 would silently run on NPU 0"),
    C("import torch  # noqa: E402", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: E402", IMPORT_NOTE),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)", SEED_NOTE),
    C("(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')})", "env_var", "replace", False,
      "print(f\"Running on {device} (ASCEND_RT_VISIBLE_DEVICES={os.environ.get('ASCEND_RT_VISIBLE_DEVICES')})\")",
      "log line reads the renamed variable; would print None"),
    C("starter = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "starter = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("ender = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "ender = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA; the NPU events also need an NPU synchronize before elapsed_time"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "raises without CUDA"),
    C('device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu:0" if torch.npu.is_available() else "cpu"',
      "otherwise the evaluation silently runs on the CPU"),
    C("gpu mem {torch.cuda.memory_allocated()", "torch_cuda_api", "replace", False,
      'f"npu mem {torch.npu.memory_allocated() / 2 ** 20:.0f} MiB")', MEMLOG_NOTE),
    C('"device": torch.cuda.get_device_name(0)}', "torch_cuda_api", "replace", True,
      '"device": torch.npu.get_device_name(0)}', "get_device_name initialises CUDA and raises"),
])

# ----------------------------------------------------------------------------------------------------------------
# Timbre watermarking (TimbreWatermarking/TimbreWatermarking)
# ----------------------------------------------------------------------------------------------------------------
E("tw_train", "watermarking_model/train.py", "explicit_replacement",
  "TimbreWatermarking watermarking_model/train.py (module-level device, DataParallel guard, resume)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "module-level device used by every .to(device) in the script; would silently train on CPU"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)", SEED_NOTE),
    C("if torch.cuda.device_count() > 1:", "distributed_framework", "replace", False,
      "if False:  # nn.DataParallel is not supported on NPU; multi-NPU training needs DDP over hccl",
      "left as is, torch.cuda.device_count() is 0 on an NPU host so the DataParallel block stays dead and training "
      "runs on one NPU; a mechanical flip to torch.npu.device_count() would activate nn.DataParallel, which "
      "Ascend lists as unsupported (A2/A3)"),
    C("ckpt = torch.load(args.resume)", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.resume, map_location=device)",
      "checkpoints written by GPU training hold CUDA tensors; without map_location torch.load tries to restore "
      "them on CUDA and fails"),
    C('logging.info("gpu memory: {:.1f} MB".format(torch.cuda.memory_allocated(device)', "torch_cuda_api",
      "replace", False,
      'logging.info("npu memory: {:.1f} MB".format(torch.npu.memory_allocated(device) / 1024 ** 2))',
      MEMLOG_NOTE),
])

E("tw_blocks", "watermarking_model/model/blocks.py", "explicit_replacement",
  "TimbreWatermarking watermarking_model/model/blocks.py (fixed_STFT with a module-level device)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "the Hann window is created on this device at construction and is not a buffer, so model.to(npu) does not "
      "move it; torch.stft/istft then get an NPU input with a CPU window and fail"),
])

E("tw_dl", "watermarking_model/distortions/dl.py", "explicit_replacement",
  "TimbreWatermarking watermarking_model/distortions/dl.py (attack layer: julius, kornia, pydub mp3)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "noise, requantised and mp3 tensors are sent to this device and added to NPU activations; a CPU device "
      "here makes the attacks fail with a device mismatch"),
])

E("tw_embed", "watermarking_model/embed_and_save.py", "explicit_replacement",
  "TimbreWatermarking embedding script (argparse --gpu, f-string cuda device)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "unconditional CUDA device, fails on an NPU host"),
])

E("tw_yaml", "watermarking_model/config/train.yaml", "explicit_replacement",
  "TimbreWatermarking watermarking_model/config/train.yaml (no device keys)", [])

E("tw_requirements", "requirements.txt", "explicit_replacement",
  "TimbreWatermarking requirements (pinned +cu117 wheels)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu117", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the knowledge base says x86 users install CPU torch from the cpu index (aarch64 uses PyPI); whether a CUDA "
      "torch wheel would actually break torch_npu is unconfirmed"),
    C("torch==1.13.1+cu117", "import_torch_npu", "replace", True, "torch==2.1.0",
      "there is no torch_npu for torch 1.13 in the version matrix and +cu117 wheels do not exist for aarch64; "
      "2.1.0 pairs with torch_npu 2.1.0.postN"),
    C("torchaudio==0.13.1+cu117", "import_torch_npu", "replace", True, "torchaudio==2.1.0",
      "torchaudio is ABI-tied to the torch version chosen above"),
    C("numpy==1.23.5", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "the adapter itself (added next to the torch pins); 2.1.0.post17 is the v2.1.0-7.2.0 wheel for CANN 8.3.RC1"),
])

E("tw_run", "watermarking_model/run_train.sh", "explicit_replacement",
  "TimbreWatermarking training launcher (CUDA_VISIBLE_DEVICES, nvidia-smi)", [
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "after the port train.py uses a single device (npu:0) whether or not visibility is restricted, so the "
      "effect is the same; renamed for the operator"),
    C("export PYTHONPATH=$(pwd):$PYTHONPATH", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C('GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "[$(date)] start training, attack_type=${ATTACK}, NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"',
      "log line reads the renamed variable; would print an empty list"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_capability_check",
      "replace", True, "npu-smi info",
      "no nvidia-smi on an Ascend host and the script runs under set -e, so the launcher aborts before training"),
])

# ----------------------------------------------------------------------------------------------------------------
# SilentCipher (sony/silentcipher)
# ----------------------------------------------------------------------------------------------------------------
E("sc_init", "src/silentcipher/__init__.py", "explicit_replacement",
  "sony/silentcipher src/silentcipher/__init__.py (get_model(..., device='cuda'))", [
    C("def get_model(model_type='44.1k', ckpt_path=None, config_path=None, device='cuda'):", "device_type",
      "replace", True, "def get_model(model_type='44.1k', ckpt_path=None, config_path=None, device='npu'):",
      "public default used by the README one-liner; torch.load(map_location='cuda') fails on an NPU host"),
])

E("sc_server", "src/silentcipher/server.py", "explicit_replacement",
  "sony/silentcipher src/silentcipher/server.py (Model: checkpoints loaded with map_location=self.device)", [
    C("config_path='../Models/44_1_khz/73999_iteration/hparams.yaml', device='cuda'):", "device_type", "replace",
      True, "config_path='../Models/44_1_khz/73999_iteration/hparams.yaml', device='npu'):",
      "Model is exported at package level; its own default would still map checkpoints to CUDA"),
    C("device='cuda' if args.use_gpu else 'cpu')", "device_type", "replace", True,
      "device='npu' if args.use_gpu else 'cpu')", "CLI entry; --use_gpu would fail on an NPU host"),
])

E("sc_example", "examples/encode_folder.py", "explicit_replacement",
  "SilentCipher folder-encoding example with one mp.spawn worker per GPU", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("p.add_argument('--num_gpus', type=int, default=torch.cuda.device_count())", "torch_cuda_api", "replace",
      False, "p.add_argument('--num_gpus', type=int, default=torch.npu.device_count())",
      "returns 0 on an NPU host, which the script turns into a single worker: output is identical, only the "
      "multi-device parallelism is lost"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C("device=f'cuda:{rank}')", "device_type", "replace", True,
      "model = silentcipher.get_model(model_type=args.model_type, device=f'npu:{rank}')",
      "per-worker device string"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("sc_docker", "Dockerfile", "explicit_replacement",
  "SilentCipher-style serving Dockerfile on a pytorch CUDA base image", [
    C("FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.10",
      "the CUDA image has neither CANN nor torch_npu; the exact Ascend base-image tag is unconfirmed"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0",
      "Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES; devices are usually passed at docker run time "
      "(--device /dev/davinciN or -e), so the image default is not essential"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-toolkit setting, inert on Ascend"),
    C("COPY requirements.txt .", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchaudio==2.1.0 torch-npu==2.1.0.post17",
      "the CANN base image ships no torch; torch_npu must match torch exactly"),
])

# ----------------------------------------------------------------------------------------------------------------
# Hide and Speak (Kreuk et al., speech steganography)
# ----------------------------------------------------------------------------------------------------------------
E("hs_main", "main.py", "explicit_replacement",
  "Hide and Speak (Kreuk et al.) main.py: --no-cuda/--gpus flags, args.cuda", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.cuda = not args.no_cuda and torch.npu.is_available()",
      "args.cuda is the project's 'use the accelerator' switch; unported it is False and everything runs on CPU"),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      SEED_NOTE),
    C("torch.cuda.set_device(gpu_ids[0])", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu_ids[0])",
      "raises without CUDA"),
    C("torch.cuda.get_device_name(gpu_ids[0])", "torch_cuda_api", "replace", True,
      "logger.info(f'using NPUs {gpu_ids}: {torch.npu.get_device_name(gpu_ids[0])}')",
      "inside a log call, but get_device_name initialises CUDA and raises"),
])

E("hs_solver", "solver.py", "explicit_replacement",
  "Hide and Speak (Kreuk et al.) solver.py: .cuda() chains, DataParallel, map_location lambda", [
    C("self.enc_c = self.enc_c.cuda()", "tensor_to_device", "replace", True, "self.enc_c = self.enc_c.npu()",
      ".cuda() raises without CUDA"),
    C("self.dec_c = self.dec_c.cuda()", "tensor_to_device", "replace", True, "self.dec_c = self.dec_c.npu()",
      ".cuda() raises without CUDA"),
    C("self.dec_m = self.dec_m.cuda()", "tensor_to_device", "replace", True, "self.dec_m = self.dec_m.npu()",
      ".cuda() raises without CUDA"),
    C("self.enc_m = self.enc_m.cuda()", "tensor_to_device", "replace", True, "self.enc_m = self.enc_m.npu()",
      ".cuda() raises without CUDA"),
    C("self.stft = self.stft.cuda()", "tensor_to_device", "replace", True, "self.stft = self.stft.npu()",
      "moves the Fourier-basis buffers; .cuda() raises without CUDA"),
    C("self.discriminator = self.discriminator.cuda()", "tensor_to_device", "replace", True,
      "self.discriminator = self.discriminator.npu()", ".cuda() raises without CUDA (with --adv)"),
    C("if len(self.gpu_ids) > 1:", "distributed_framework", "removal", True, None,
      "nn.DataParallel is unsupported on NPU; the run.sh noise experiment passes --gpus 0,1, so the block runs. "
      "Removed with the two wraps below (single device; DDP would be a larger rewrite)"),
    C("self.enc_c = nn.DataParallel(self.enc_c, device_ids=self.gpu_ids)", "distributed_framework", "removal",
      True, None, "nn.DataParallel is unsupported on NPU (Ascend API list)"),
    C("self.dec_c = nn.DataParallel(self.dec_c, device_ids=self.gpu_ids)", "distributed_framework", "removal",
      True, None, "nn.DataParallel is unsupported on NPU (Ascend API list)"),
    C("return x.cuda(non_blocking=True) if self.cuda else x", "tensor_to_device", "replace", True,
      "return x.npu(non_blocking=True) if self.cuda else x", "every batch goes through this helper"),
    C("noise = noise.cuda()", "tensor_to_device", "replace", True, "noise = noise.npu()",
      "with --noise > 0 the channel noise must live on the model's device"),
    C("max mem {torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", False,
      "f'max mem {torch.npu.max_memory_allocated() / 2 ** 30:.2f}GB')", MEMLOG_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("hs_stft", "stft.py", "explicit_replacement",
  "pseeth/torch-stft style conv1d STFT as vendored in Hide and Speak (is_cuda-gated window_sum)", [
    C("window_sum = window_sum.cuda() if magnitude.is_cuda else window_sum", "tensor_to_device", "replace", True,
      "window_sum = window_sum.to(magnitude.device)",
      "on NPU magnitude.is_cuda is False, window_sum stays on the CPU and the in-place division of the NPU "
      "inverse_transform by it fails with a device mismatch"),
])

E("hs_loader", "loader.py", "explicit_replacement",
  "Hide and Speak (Kreuk et al.) loader.py: TIMIT/YOHO spectrogram datasets", [
    C("kwargs = {'num_workers': args.num_workers, 'pin_memory': True} if args.cuda else {}", "pin_memory",
      "replace", False,
      "kwargs = {'num_workers': args.num_workers, 'pin_memory': True, 'pin_memory_device': 'npu'} "
      "if args.cuda else {}",
      "without a pin_memory_device DataLoader only pins when CUDA is available, so batches stay pageable and "
      "the non_blocking copies become synchronous: performance only (DataLoader internals unconfirmed in the "
      "knowledge base)"),
])

E("hs_run", "run.sh", "explicit_replacement",
  "Hide and Speak experiment launcher (per-command CUDA_VISIBLE_DEVICES)", [
    C("DATA=${DATA:-data/timit}", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", SETENV_NOTE),
    C("CUDA_VISIBLE_DEVICES=0 python main.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0 python main.py --dataset timit --data $DATA \\",
      "device 0 is the default anyway; same placement with or without the rename"),
    C("CUDA_VISIBLE_DEVICES=1 python main.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python main.py --dataset timit --data $DATA \\",
      "selects the second device; unported the job silently lands on NPU 0 next to the first job"),
    C("CUDA_VISIBLE_DEVICES=0,1 python main.py", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1 python main.py --dataset timit --data $DATA \\",
      "after DataParallel is removed the job uses gpu_ids[0] = device 0 either way"),
])

# ----------------------------------------------------------------------------------------------------------------
# AntiFake (proactive defence against voice cloning)
# ----------------------------------------------------------------------------------------------------------------
E("af_run", "run.py", "explicit_replacement",
  "AntiFake run.py (multi-encoder adversarial perturbation, nvidia-smi GPU pick, coqui gpu=True)", [
    C('out = subprocess.check_output(["nvidia-smi"', "device_capability_check", "replace", False,
      'out = subprocess.check_output(["npu-smi", "info"])  # needs an npu-smi parser below',
      "no nvidia-smi on an Ascend host, but the try/except falls back to device 0, so nothing breaks; the "
      "npu-smi output format differs and the parsing would have to be rewritten"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = get_free_gpu()', "env_var", "replace", False,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = get_free_gpu()',
      "with the fallback above the pick is always 0, the default device, so the rename does not change placement"),
    C("import torch  # noqa: E402", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: E402", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "otherwise the 1000-step optimisation silently runs on the CPU"),
    C('avc_model.load_state_dict(torch.load(CONFIG["avc_ckpt"]))', "tensor_to_device", "replace", True,
      'avc_model.load_state_dict(torch.load(CONFIG["avc_ckpt"], map_location=device))',
      "AdaIN-VC checkpoint saved from GPU training; torch.load without map_location restores CUDA tensors"),
    C('coqui_tts = TTS(CONFIG["coqui_model"], progress_bar=False, gpu=True)', "device_type", "replace", False,
      'coqui_tts = TTS(CONFIG["coqui_model"], progress_bar=False).to(device)',
      "gpu=True makes coqui place the model on CUDA; whether that asserts or silently stays on CPU depends on "
      "the coqui version (unconfirmed)"),
    C("{torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GB)", "torch_cuda_api", "replace", False,
      'f"({time.time() - t_start:.0f}s, {torch.npu.max_memory_allocated() / 2 ** 30:.1f} GB)")', MEMLOG_NOTE),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE_NOTE),
])

E("af_attack_utils", "attack_utils.py", "explicit_replacement",
  "AntiFake attack_utils.py (differentiable mel front-ends, cached mel basis)", [
    C("return torch.from_numpy(basis).float().cuda()", "tensor_to_device", "replace", True,
      "return torch.from_numpy(basis).float().npu()",
      ".cuda() raises without CUDA; the cached basis is matmul'ed with an NPU spectrogram"),
])

E("af_encoder_inf", "rtvc/encoder/inference.py", "explicit_replacement",
  "CorentinJ/Real-Time-Voice-Cloning encoder/inference.py as vendored by AntiFake", [
    C('_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      '_device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "default device of the vendored SV2TTS encoder when callers do not pass one; would silently use the CPU"),
])

E("af_env", "environment.yml", "explicit_replacement",
  "AntiFake conda environment (pytorch 1.13 + pytorch-cuda from the nvidia channel)", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "NVIDIA conda channel no longer needed"),
    C("- pytorch=1.13.1", "import_torch_npu", "removal", True, None,
      "no torch_npu exists for torch 1.13; torch moves to the pip section at a version torch_npu supports"),
    C("- torchaudio=0.13.1", "import_torch_npu", "removal", True, None, "ABI-tied to torch 1.13"),
    C("- pytorch-cuda=11.7", "import_torch_npu", "removal", False, None,
      "CUDA runtime metapackage; useless on Ascend, whether it resolves on aarch64 is unconfirmed"),
    C("- cudatoolkit=11.7", "import_torch_npu", "removal", False, None, "CUDA toolkit, inert on Ascend"),
    C("- librosa==0.9.2", "import_torch_npu", "npu_only_addition", True, "- torch==2.1.0",
      "pip torch matching the torch_npu wheel (python 3.9 is within 2.1.0's 3.8-3.11 range)"),
    C("- soundfile==0.12.1", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "the adapter itself"),
    C("- webrtcvad==2.0.10", "import_torch_npu", "npu_only_addition", True, "- torchaudio==2.1.0",
      "torchaudio matching torch 2.1.0"),
    C("- nvidia-ml-py3==7.352.0", "import_torch_npu", "removal", False, None,
      "NVML bindings are not imported by the code paths here; no NPU equivalent in torch_npu"),
])
