# Labels for probe178 (TTS toolkits on CUDA -> Ascend NPU). See ../README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


LIB_IMPORT = "library module; the entry point imports torch_npu (device-backend autoload since torch_npu 2.5.1), added here only because the port calls torch.npu.* directly"
ENTRY_IMPORT = "entry point: load the NPU backend before any device call (mandatory before torch_npu 2.5.1, recommended after)"
EMPTY_CACHE = "torch.cuda.empty_cache() is a silent no-op when CUDA was never initialised, so the NPU caching allocator is not trimmed; memory/perf only"

# --------------------------------------------------------------------------------------------- Coqui TTS
E("coqui_synthesizer", "TTS/utils/synthesizer.py", "device_branch_or_abstraction",
  "Coqui TTS `Synthesizer` (use_cuda flag, per-model `.cuda()`)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C('assert torch.cuda.is_available(), "CUDA is not availabe', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "NPU is not available on this machine."',
      "TTS(gpu=True)/Synthesizer(use_cuda=True) trips this assert: torch.cuda.is_available() is False on an Ascend host"),
    C("self.vc_model.cuda()", "tensor_to_device", "replace", True, "self.vc_model.npu()",
      "Module.cuda() raises on a host without CUDA"),
    C("self.tts_model.cuda()  # fairseq", "tensor_to_device", "replace", True, "self.tts_model.npu()  # fairseq VITS (MMS) checkpoints",
      "Module.cuda() raises on a host without CUDA"),
    C("self.tts_model.cuda()  # xtts", "tensor_to_device", "replace", True, "self.tts_model.npu()  # xtts / bark / tortoise model dirs",
      "Module.cuda() raises on a host without CUDA"),
    C("=self.tts_model.cuda()", "tensor_to_device", "replace", True, "self.tts_model.npu()",
      "Module.cuda() raises on a host without CUDA"),
    C("self.vocoder_model.cuda()", "tensor_to_device", "replace", True, "self.vocoder_model.npu()",
      "Module.cuda() raises on a host without CUDA"),
    C('vocoder_device = "cuda"', "device_type", "replace", True, 'vocoder_device = "npu"',
      "vocoder input is moved to a CUDA device that does not exist; must match where the vocoder was moved"),
])

E("coqui_synthesis", "TTS/tts/utils/synthesis.py", "device_branch_or_abstraction",
  "Coqui TTS `synthesis()` / `transfer_voice()` helpers (use_cuda -> device)", [
    C("return tensor.cuda()", "tensor_to_device", "replace", False, "return tensor.npu()",
      "legacy cuda=True flag; synthesis() in this file passes device= instead, so only an external caller using cuda=True reaches it"),
    C("style_mel = style_mel.cuda()", "tensor_to_device", "replace", False, "style_mel = style_mel.npu()",
      "legacy cuda=True flag, not used by synthesis() (passes device=)"),
    C("return aux_id.cuda()", "tensor_to_device", "replace", False, "return aux_id.npu()",
      "legacy cuda=True flag, not used by synthesis() (passes device=)"),
    C("d_vector = d_vector.cuda()", "tensor_to_device", "replace", False, "d_vector = d_vector.npu()",
      "legacy cuda=True flag, not used by synthesis() (passes device=)"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"',
      "Synthesizer passes use_cuda=True when running on the accelerator; every input tensor is then created on CUDA and fails"),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"',
      "voice-conversion path: same use_cuda override, hard-coded CUDA device"),
])

E("trainer_distribute", "trainer/distribute.py", "explicit_replacement",
  "Coqui 👟Trainer `distribute.py` rank launcher (CUDA_VISIBLE_DEVICES per rank)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("if len(gpus) > torch.cuda.device_count():", "torch_cuda_api", "replace", False,
      "if len(gpus) > torch.npu.device_count():",
      "torch.cuda.device_count() is 0 on Ascend, so this only prints a spurious warning"),
    C("torch.cuda.device_count(),", "torch_cuda_api", "replace", False, "torch.npu.device_count(),",
      "argument of the same warning; log only"),
    C('my_env["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'my_env["ASCEND_RT_VISIBLE_DEVICES"] = f"{\',\'.join(gpus)}"',
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES: every rank sees all NPUs and `--gpus 2,3` silently trains on NPU 0,1"),
    C('if "CUDA_VISIBLE_DEVICES" in os.environ:', "env_var", "replace", True,
      'if "ASCEND_RT_VISIBLE_DEVICES" in os.environ:',
      "NPU device selection lives in ASCEND_RT_VISIBLE_DEVICES; without --gpus the fallback does None.split() and crashes"),
    C('gpus = os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
      'gpus = os.environ["ASCEND_RT_VISIBLE_DEVICES"]', "same variable, read side"),
])

E("trainer_distributed_utils", "trainer/utils/distributed.py", "explicit_replacement",
  "Coqui 👟Trainer `init_distributed` (set_device + init_process_group)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C('if dist.get_backend() == "nccl":', "dist_backend", "replace", False,
      'if dist.get_backend() in ("nccl", "hccl"):',
      "on HCCL the compare is False and the plain dist.barrier() branch runs, which works; backend-string compares are not rewritten by transfer_to_npu"),
    C("dist.barrier(device_ids=[torch.cuda.current_device()])", "torch_cuda_api", "replace", False,
      "dist.barrier(device_ids=[torch.npu.current_device()])", "only reached once the compare above also accepts hccl"),
    C('assert torch.cuda.is_available(), "Distributed mode requires CUDA."', "torch_cuda_api", "replace", True,
      'assert torch.npu.is_available(), "Distributed mode requires an NPU."', "DDP start-up asserts CUDA: fails on Ascend"),
    C("torch.cuda.set_device(rank % torch.cuda.device_count())", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(rank % torch.npu.device_count())", "binds each rank to its device; raises without CUDA (and device_count() is 0)"),
])

E("trainer_utils", "trainer/trainer_utils.py", "explicit_replacement",
  "Coqui 👟Trainer `setup_torch_training_env` / `get_optimizer`", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "environment printout only: reports 'Current device: cpu' on NPU"),
    C("Current device: {torch.cuda.current_device()}", "torch_cuda_api", "replace", False,
      'rank_zero_logger_info(f" | > Current device: {torch.npu.current_device()}", logger)', "log only, inside the guard above"),
    C("Num. of GPUs: {torch.cuda.device_count()}", "torch_cuda_api", "replace", False,
      'rank_zero_logger_info(f" | > Num. of NPUs: {torch.npu.device_count()}", logger)', "log only, inside the guard above"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "--gpu N is silently ignored on Ascend; the run lands on NPU 0"),
    C("num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "num_gpus = torch.npu.device_count()",
      "0 on Ascend: becomes the DDP world size and disables the multi-device guard"),
    C("torch.cuda.manual_seed(training_seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(training_seed)",
      "deferred no-op without CUDA; torch.manual_seed() on the line above already seeds the NPU generator"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_cuda = torch.npu.is_available()",
      "the Trainer keys model placement and AMP on this flag: False makes training silently run on the CPU"),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", False,
      "from torch_npu.optim import NpuFusedAdam as FusedAdam",
      "only when optimizer='FusedAdam'; NVIDIA apex FusedAdam (CUDA kernels) is not in Ascend apex"),
])

E("trainer_generic_utils", "trainer/generic_utils.py", "device_branch_or_abstraction",
  "Coqui 👟Trainer `to_cuda` / `get_cuda` helpers", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on Ascend: to_cuda() silently leaves every batch on the CPU"),
    C("x = x.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "x = x.npu(non_blocking=True)",
      "batch transfer to the accelerator"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_cuda = torch.npu.is_available()",
      "get_cuda() decides the training device; False → CPU"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "device string for the accelerator"),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if not torch.npu.is_available():",
      "logging helper: returns 'n/a' on NPU"),
    C("allocated = torch.cuda.memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "allocated = torch.npu.memory_allocated() / 1024**3", "log only, behind the guard above"),
    C("reserved = torch.cuda.memory_reserved() / 1024**3", "torch_cuda_api", "replace", False,
      "reserved = torch.npu.memory_reserved() / 1024**3", "log only, behind the guard above"),
    C("peak = torch.cuda.max_memory_allocated() / 1024**3", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated() / 1024**3", "log only, behind the guard above"),
])

E("coqui_vits_config", "recipes/ljspeech/vits_tts/config.json", "explicit_replacement",
  "Coqui TTS VITS training config.json (Trainer fields)", [
    C('"distributed_backend": "nccl",', "dist_backend", "replace", True, '"distributed_backend": "hccl",',
      "handed to dist.init_process_group by the Trainer; NCCL is not available with torch_npu"),
])

E("coqui_run_sh", "recipes/ljspeech/vits_tts/run_multi_gpu.sh", "explicit_replacement",
  "Coqui recipe shell launcher for `python -m trainer.distribute`", [
    C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN libraries (libascendcl, libhccl) must be on the paths before python starts"),
    C("nvidia-smi --query-gpu", "torch_cuda_api", "replace", True, 'npu-smi info > "${OUT_PATH}/npus.txt"',
      "nvidia-smi does not exist on an Ascend host; with set -e the script aborts here"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPUS}",
      "device subset silently ignored on Ascend"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "ignored by HCCL; logging only"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None, "NCCL-only knob, ignored"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only knob, ignored"),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "single node: HCCL's default NIC choice works; needed once the job spans nodes"),
])

E("coqui_dockerfile", "Dockerfile", "explicit_replacement",
  "Coqui TTS Dockerfile on an nvidia/cuda base", [
    C("ARG BASE=nvidia/cuda:11.8.0-base-ubuntu22.04", "import_torch_npu", "replace", True,
      "ARG BASE=ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image carries no CANN toolkit; torch_npu cannot load without it (image tag illustrative)"),
    C("RUN pip3 install torch torchaudio --extra-index-url https://download.pytorch.org/whl/cu118", "import_torch_npu", "replace", True,
      "RUN pip3 install torch==2.1.0 torchaudio==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip3 install torch-npu==2.1.0.post10",
      "CUDA wheels; torch_npu needs the CPU torch build of exactly its version plus the torch-npu wheel"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "NVIDIA container-runtime hint, ignored; NPUs are mounted by Ascend Docker Runtime / --device flags (unconfirmed that an image ENV is honoured)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
      "NVIDIA container-runtime hint, ignored on Ascend"),
])

E("coqui_requirements", "requirements.txt", "explicit_replacement",
  "Coqui TTS requirements.txt", [
    C("=torch>=2.1", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post10  # and pin torch==2.1.0: the wheel must match torch exactly",
      "no NPU backend is installed otherwise"),
    C("=deepspeed==0.10.3", "distributed_framework", "removal", False, None,
      "optional XTTS/Tortoise speed-up whose kernel-injected inference needs CUDA op builders (not on Ascend); unconfirmed whether this version's NPU accelerator installs cleanly"),
])

# ------------------------------------------------------------------------------------------------- XTTS
E("xtts_gpt", "TTS/tts/layers/xtts/gpt.py", "device_branch_or_abstraction",
  "Coqui XTTS `GPT.init_gpt_for_inference` with DeepSpeed kernel injection", [
    C("replace_with_kernel_inject=True,  # replace the model", "distributed_framework", "add_branch", True,
      'replace_with_kernel_inject=get_accelerator().device_name() == "cuda",  # no DS inference kernels on Ascend',
      "DeepSpeed inference kernel injection builds CUDA ops; unavailable on NPU (use_deepspeed=True then fails)"),
])

E("xtts_perceiver", "TTS/tts/layers/xtts/perceiver_encoder.py", "device_branch_or_abstraction",
  "Coqui XTTS perceiver `Attend` (lucidrains) with sdp_kernel configs", [
    C("with torch.backends.cuda.sdp_kernel(**config._asdict()):", "attention_kernel", "replace", False,
      "with contextlib.nullcontext():  # NPU SDPA chooses its own kernel",
      "✘ in Ascend's 2.7.1 list; only toggles CUDA SDPA backends. XTTS v2 builds the perceiver with use_flash_attn=False so this path is not reached; unconfirmed whether it raises"),
])

E("xtts_stream_server", "server/main.py", "explicit_replacement",
  "coqui-ai xtts-streaming-server FastAPI `server/main.py`", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C('device = torch.device("cuda" if', "device_type", "replace", True,
      'device = torch.device("npu" if os.environ.get("USE_CPU", "0") == "0" else "cpu")',
      "default device is CUDA"),
    C('if not torch.cuda.is_available() and device == "cuda":', "torch_cuda_api", "replace", True,
      'if not torch.npu.is_available() and device.type == "npu":',
      "on an NPU host this raises 'CUDA device unavailable' at import"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "warm-up silently skipped on NPU; first request pays the graph/op compile cost"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()",
      "inside the warm-up block; only reached once its guard is ported"),
    C("torch.cuda.memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
      'print("Warmup done, NPU memory allocated: %.1f MiB" % (torch.npu.memory_allocated() / 2**20), flush=True)',
      "log only, inside the warm-up block"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", True, "free, total = torch.npu.mem_get_info()",
      "guard is device.type != 'cpu', so on NPU /health reaches this and raises"),
    C('info["gpu"] = torch.cuda.get_device_name(0)', "torch_cuda_api", "replace", True,
      'info["gpu"] = torch.npu.get_device_name(0)', "same /health path"),
])

E("coqui_xtts_example", "examples/xtts_voice_clone.py", "explicit_replacement",
  "XTTS-v2 voice cloning example (TTS api `.to(device)` and low-level `Xtts` streaming)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("tts = TTS(model_name=MODEL_NAME, progress_bar=False, gpu=True)", "device_type", "replace", False,
      'tts = TTS(model_name=MODEL_NAME, progress_bar=False).to("npu")',
      "deprecated gpu flag → Synthesizer(use_cuda=True); fails only while Synthesizer's use_cuda path is unported (it is labelled in coqui_synthesizer)"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C('device = "cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() and not args.no_cuda else "cpu"',
      "is_available() is False on Ascend → silently runs XTTS on the CPU"),
])

# ---------------------------------------------------------------------------------------------- Tortoise
E("tortoise_api", "tortoise/api.py", "device_branch_or_abstraction",
  "Tortoise-TTS `TextToSpeech` (kv_cache / half / use_deepspeed, autocast, do_spectrogram_diffusion)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C("def format_conditioning(clip, cond_length=132300, device=", "device_type", "replace", False,
      'def format_conditioning(clip, cond_length=132300, device="npu"):',
      "default only; TextToSpeech always passes device=self.device"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "falls through to batch size 1 on NPU: correct, but autoregressive sampling gets up to 16x slower"),
    C("_, available = torch.cuda.mem_get_info()", "torch_cuda_api", "replace", False,
      "_, available = torch.npu.mem_get_info()", "behind the guard above"),
    C("self.device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "self.device = torch.device('npu' if torch.npu.is_available() else 'cpu')",
      "is_available() is False on Ascend → every model silently runs on the CPU"),
    C('autocast(device_type="cuda", dtype', "amp", "replace", False,
      'with self.temporary_cuda(self.autoregressive) as autoregressive, torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.half):',
      "autocast('cuda') is disabled (warning) for NPU tensors, so half=True silently runs fp32: correct, slower"),
    C("device_type=\"cuda\" if not torch.backends.mps.is_available() else 'mps'", "amp", "replace", False,
      'device_type="npu", dtype=torch.float16, enabled=self.half', "same, CLVP scoring"),
    C('else "mps", dtype=torch.float16', "amp", "replace", False,
      ') as autoregressive, torch.autocast(device_type="npu", dtype=torch.float16, enabled=self.half):',
      "same, latent re-computation"),
])

E("tortoise_autoregressive", "tortoise/models/autoregressive.py", "explicit_replacement",
  "Tortoise-TTS `UnifiedVoice.post_init_gpt2_config` / `GPT2InferenceModel`", [
    C("range(max(1, torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "get_device_map(len(self.transformer.h), range(max(1, torch.npu.device_count())))",
      "legacy HF model-parallel parallelize(); TextToSpeech never calls it"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "deparallelize() only; " + EMPTY_CACHE),
    C("torch.cuda.set_device(self.transformer.first_device)", "torch_cuda_api", "replace", False,
      "torch.npu.set_device(self.transformer.first_device)", "only when model_parallel is set by parallelize()"),
])

E("tortoise_do_tts", "tortoise/do_tts.py", "explicit_replacement",
  "Tortoise-TTS `do_tts.py` CLI", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
])

E("tortoise_audio", "tortoise/utils/audio.py", "explicit_replacement",
  "Tortoise-TTS `utils/audio.py` (load_voice, TacotronSTFT, wav_to_univnet_mel)", [
    C("return None, torch.load(paths[0])", "tensor_to_device", "replace", True,
      "return None, torch.load(paths[0], map_location='cpu')",
      "voice latents saved from CUDA tensors carry a cuda storage location; torch.load raises on a host without CUDA"),
    C("def wav_to_univnet_mel(wav, do_normalization=False, device='cuda'", "device_type", "replace", False,
      "def wav_to_univnet_mel(wav, do_normalization=False, device='npu'):",
      "default only; api.py passes device=self.device"),
])

E("tortoise_env", "environment.yml", "explicit_replacement",
  "Tortoise-TTS conda environment.yml", [
    C("=- nvidia", "import_torch_npu", "removal", False, None, "CUDA package channel, unused once pytorch-cuda is gone"),
    C("=- pytorch-cuda=11.8", "import_torch_npu", "replace", True, "- cpuonly",
      "pulls the CUDA build of pytorch; torch_npu sits on the CPU build"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "    - torch-npu==2.0.1.post1  # matches pytorch=2.0.1 (EOL: bump both to 2.1.0 for a current CANN)",
      "no NPU backend is installed otherwise"),
    C("=- deepspeed==0.8.3", "distributed_framework", "removal", False, None,
      "kernel-injected inference is CUDA-only; Tortoise only calls it when torch.cuda.is_available()"),
])

# --------------------------------------------------------------------------------------------- StyleTTS2
E("styletts2_train_second", "train_second.py", "explicit_replacement",
  "StyleTTS2 `train_second.py` (MyDataParallel, device='cuda')", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("class MyDataParallel(torch.nn.DataParallel):", "distributed_framework", "replace", True,
      "class MyDataParallel(torch.nn.Module):  # thin wrapper keeping .module; DataParallel is unsupported on Ascend",
      "torch.nn.DataParallel is ✘ on Ascend (msFmkTransplt: use DDP); the code relies on `.module`, so keep a wrapper"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "all tensors and modules follow this variable"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "writer.add_scalar('train/npu_mem_gb', torch.npu.max_memory_allocated() / 1e9, iters)",
      "returns 0 without CUDA: logs a wrong number, nothing else"),
])

E("styletts2_infer", "inference_libritts.py", "explicit_replacement",
  "StyleTTS2 LibriTTS inference notebook exported to a script (long-form loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'", "silently CPU on Ascend"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "unguarded: lazy CUDA init raises on an Ascend host"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "unguarded; also needed for a correct RTF on the async NPU stream"),
])

# ----------------------------------------------------------------------------------------- MAS kernels
E("mas_numba_cuda", "monotonic_align/__init__.py", "kernel_rewrite",
  "VITS/StyleTTS-style monotonic_align with Cython, numba-CPU and numba `@cuda.jit` paths", [
    C("if neg_cent.is_cuda and cuda.is_available():", "custom_cuda_extension", "add_branch", False,
      'if neg_cent.device.type == "npu": return maximum_path_npu(neg_cent, mask)  # vectorised torch / triton-ascend MAS',
      "NPU tensors fall through to the Cython path: correct, but a device→host copy + sync every training step"),
    C("=@cuda.jit", "custom_cuda_extension", "replace", False,
      "# numba has no Ascend target: port maximum_path_cuda_kernel to triton-ascend or Ascend C",
      "never runs on NPU; only matters if on-device MAS is wanted"),
])

E("super_mas_triton", "super_monotonic_align/core.py", "kernel_rewrite",
  "supertone super-monotonic-align Triton MAS kernel", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C("num_warps = 1  # Need to be 1", "triton_kernel_tuning", "replace", False,
      "num_warps = 1  # triton-ascend: re-check grid/num_warps mapping onto AI cores",
      "needs triton-ascend and a kernel port per its migration guide; launch tuning unconfirmed"),
    C("with torch.cuda.device(value.device.index):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(value.device.index):", "torch.cuda.device() initialises CUDA and raises on Ascend"),
])

# ---------------------------------------------------------------------------------------- Matcha / Grad
E("matcha_cli", "matcha/cli.py", "device_branch_or_abstraction",
  "Matcha-TTS `matcha-tts` CLI (get_device, HiFi-GAN vocoder)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("if torch.cuda.is_available() and not args.cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not args.cpu:", "False on Ascend → silently CPU"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
      "accelerator device"),
])

E("matcha_trainer_ddp", "configs/trainer/ddp.yaml", "explicit_replacement",
  "Matcha-TTS (lightning-hydra-template) trainer/ddp.yaml", [
    C("=accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "Lightning's 'gpu' accelerator means CUDA/MPS and errors out on an Ascend host; 'npu' needs an NPU accelerator plugin registered with Lightning (which one is unconfirmed)"),
    C("=strategy: ddp", "dist_backend", "replace", False,
      "strategy: {_target_: lightning.pytorch.strategies.DDPStrategy, process_group_backend: hccl}",
      "unconfirmed: DDPStrategy picks nccl only for CUDA devices, otherwise gloo, which cannot reduce NPU tensors"),
])

E("gradtts_train", "Grad-TTS/train_multi_speaker.py", "explicit_replacement",
  "Grad-TTS `train_multi_speaker.py`", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("n_feats, dec_dim, beta_min, beta_max, pe_scale).cuda()", "tensor_to_device", "replace", True,
      "n_feats, dec_dim, beta_min, beta_max, pe_scale).npu()", "Module.cuda() raises without CUDA"),
    C("optimizer = torch.optim.Adam(params=model.parameters(), lr=learning_rate)", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdam(params=model.parameters(), lr=learning_rate)",
      "optional performance swap (msFmkTransplt advice); torch.optim.Adam works"),
    C("x = item['x'].to(torch.long).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "x = item['x'].to(torch.long).unsqueeze(0).npu()", "Tensor.cuda() raises without CUDA"),
    C("x_lengths = torch.LongTensor([x.shape[-1]]).cuda()", "tensor_to_device", "replace", True,
      "x_lengths = torch.LongTensor([x.shape[-1]]).npu()", "Tensor.cuda() raises without CUDA"),
    C("spk = item['spk'].to(torch.long).cuda()", "tensor_to_device", "replace", True,
      "spk = item['spk'].to(torch.long).npu()", "Tensor.cuda() raises without CUDA"),
    C("x, x_lengths = batch['x'].cuda(), batch['x_lengths'].cuda()", "tensor_to_device", "replace", True,
      "x, x_lengths = batch['x'].npu(), batch['x_lengths'].npu()", "Tensor.cuda() raises without CUDA"),
    C("y, y_lengths = batch['y'].cuda(), batch['y_lengths'].cuda()", "tensor_to_device", "replace", True,
      "y, y_lengths = batch['y'].npu(), batch['y_lengths'].npu()", "Tensor.cuda() raises without CUDA"),
    C("spk = batch['spk'].cuda()", "tensor_to_device", "replace", True, "spk = batch['spk'].npu()",
      "Tensor.cuda() raises without CUDA"),
])

# -------------------------------------------------------------------------------------------------- Bark
E("bark_generation", "bark/generation.py", "device_branch_or_abstraction",
  "Suno Bark `generation.py` (preload_models, _grab_best_device, bf16 autocast, _clear_cuda_cache)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu", LIB_IMPORT),
    C("=torch.cuda.is_available() and", "torch_cuda_api", "replace", False, "torch.npu.is_available() and",
      "False on Ascend → autocast becomes a null context and Bark runs fp32: correct, slower, more memory"),
    C("=torch.cuda.is_bf16_supported()", "device_capability_check", "replace", False, "torch.npu.is_bf16_supported()",
      "short-circuited by the line above on NPU; perf only"),
    C("autocast = funcy.partial(torch.cuda.amp.autocast, dtype=torch.bfloat16)", "amp", "replace", False,
      'autocast = funcy.partial(torch.autocast, device_type="npu", dtype=torch.bfloat16)',
      "torch.cuda.amp.autocast does not cast NPU tensors"),
    C("if torch.cuda.device_count() > 0 and use_gpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.device_count() > 0 and use_gpu:", "0 on Ascend → preload_models(use_gpu=True) silently loads everything on the CPU"),
    C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "accelerator device string"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", False, "if torch.npu.is_available():",
      "_clear_cuda_cache() does nothing on NPU; cache not trimmed between the four models (memory only)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "behind the guard above"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", "behind the guard above"),
])

E("bark_server", "bark_server.py", "explicit_replacement",
  "FastAPI service around Bark with NVML metrics (one worker per GPU)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("BARK_GPU", "0")', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = os.environ.get("BARK_GPU", "0")',
      "ignored on Ascend: every worker lands on NPU 0"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("=pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "NVML (libnvidia-ml) is absent on Ascend hosts: NVMLError_LibraryNotFound at startup"),
    C("torch.cuda.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)", "torch_cuda_api", "replace", True,
      "torch.npu.set_per_process_memory_fraction(GPU_MEMORY_FRACTION)", "initialises CUDA → raises"),
    C("on {torch.cuda.get_device_name(0)}", "torch_cuda_api", "replace", True,
      'print(f"bark models loaded in {time.time() - t0:.1f}s on {torch.npu.get_device_name(0)}", flush=True)',
      "get_device_name initialises CUDA → raises"),
    C("=pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None, "raises once nvmlInit is gone / NVML missing"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
      "except (torch.cuda.OutOfMemoryError, RuntimeError) as e:  # NPU OOM surfaces as RuntimeError",
      "unconfirmed which exception an NPU OOM raises; if not this class the 503 path is skipped (500 instead)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", EMPTY_CACHE),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(0)", "torch_cuda_api", "removal", True, None, "NVML call: raises on Ascend"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu", "torch_cuda_api", "replace", True,
      "util = torch.npu.utilization()", "NVML call: raises on Ascend"),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True,
      "free, total = torch.npu.mem_get_info(); mem = SimpleNamespace(used=total - free, total=total)",
      "NVML call: raises on Ascend"),
    C("torch.cuda.memory_allocated() // 2**20", "torch_cuda_api", "replace", False,
      '"torch_allocated_mib": torch.npu.memory_allocated() // 2**20,', "returns 0 without CUDA: wrong metric only"),
])

E("xtts_gradio_app", "app.py", "explicit_replacement",
  "coqui/xtts Hugging Face Space Gradio `app.py`", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("=use_deepspeed=True,", "distributed_framework", "replace", True, "use_deepspeed=False,",
      "forces DeepSpeed kernel-injected GPT inference, which needs CUDA kernels"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "Module.cuda() raises without CUDA"),
])

# ------------------------------------------------------------------------------------------------ BigVGAN
E("bigvgan_cuda_load", "alias_free_activation/cuda/load.py", "kernel_rewrite",
  "NVIDIA BigVGAN fused anti-alias activation JIT build (`cpp_extension.load`)", [
    C('os.environ["TORCH_CUDA_ARCH_LIST"] = ""', "env_var", "removal", False, None, "nvcc-only build knob, irrelevant on Ascend"),
    C("_, bare_metal_major, _ = _get_cuda_bare_metal_version(cpp_extension.CUDA_HOME)", "custom_cuda_extension", "removal", True, None,
      "CUDA_HOME is None on an Ascend host: the nvcc probe raises before anything is built"),
    C("return cpp_extension.load(", "custom_cuda_extension", "replace", True,
      "return NpuExtension-built module (torch_npu.utils.cpp_extension) wrapping an Ascend C port of the kernel",
      "JIT nvcc build; cpp_extension.load is ✘ on A2/A3 and there is no nvcc"),
    C('srcpath / "anti_alias_activation_cuda.cu",', "custom_cuda_extension", "replace", True,
      'srcpath / "anti_alias_activation_ascendc.cpp",', ".cu kernel has to be rewritten (Ascend C) for NPU"),
    C('[cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True', "custom_cuda_extension", "removal", True, None,
      "nvcc version probe; no nvcc on Ascend"),
])

E("bigvgan_activation1d", "alias_free_activation/cuda/activation1d.py", "kernel_rewrite",
  "NVIDIA BigVGAN fused `Activation1d` autograd wrapper", [
    C("anti_alias_activation_cuda = load.load()", "custom_cuda_extension", "replace", True,
      "anti_alias_activation_npu = load.load()  # Ascend C build; or skip and force fused=False",
      "module import triggers the nvcc JIT build, which fails on Ascend"),
    C("activation_results = anti_alias_activation_cuda.forward(", "custom_cuda_extension", "replace", True,
      "activation_results = anti_alias_activation_npu.forward(", "call site of the nvcc-built op"),
    C("self.fused = fused  # Whether to use fused CUDA kernel or not", "custom_cuda_extension", "add_branch", False,
      "self.fused = fused and not torch.npu.is_available()  # no fused kernel on Ascend: torch up/act/down path",
      "lets the NPU fall back to the unfused PyTorch path if the kernel is not ported"),
])

E("bigvgan_vocoder", "vocoder_bigvgan.py", "explicit_replacement",
  "BigVGAN-v2 vocoder stage script (`from_pretrained(..., use_cuda_kernel=True)`)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", ENTRY_IMPORT),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "hard-coded CUDA device"),
    C("def load_vocoder(model_id=MODEL_ID, use_cuda_kernel=True):", "custom_cuda_extension", "replace", True,
      "def load_vocoder(model_id=MODEL_ID, use_cuda_kernel=False):",
      "use_cuda_kernel=True imports the nvcc-built anti-alias kernel, which cannot build on Ascend"),
    C("model = load_vocoder(use_cuda_kernel=not args.no_cuda_kernel)", "custom_cuda_extension", "replace", True,
      "model = load_vocoder(use_cuda_kernel=False)", "default CLI path requests the CUDA kernel"),
])
