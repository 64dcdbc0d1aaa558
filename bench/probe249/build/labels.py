# Labels for probe249: automatic music transcription / symbolic-music generation, CUDA -> Ascend NPU.
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
AUTOLOAD = "mandatory before torch_npu 2.5.1 (device-backend autoload afterwards, still recommended)"
AMP_OFF = ("torch.cuda.amp/autocast('cuda') is disabled with a warning when CUDA is unavailable and does not apply "
           "to NPU tensors: the configured mixed precision silently becomes fp32")

# ----------------------------------------------------------------------------------------------- Onsets and Frames
E("of_train", "train.py", "explicit_replacement",
  "jongwook/onsets-and-frames train.py (sacred experiment, device in config)", [
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "sacred config default; torch.cuda.is_available() is False on an NPU host, so training would silently run on CPU"),
    C("if torch.cuda.is_available() and torch.cuda.get_device_properties(", "torch_cuda_api", "replace", False,
      "if torch.npu.is_available() and torch.npu.get_device_properties(torch.npu.current_device()).total_memory < 10e9:",
      "small-card batch reduction; on NPU the guard is just False (no failure); NPU get_device_properties has total_memory"),
    C("if device.startswith('cuda'):", "device_type", "replace", False,
      "if device.startswith('npu'):",
      "memory logging branch is silently skipped with device='npu'; logging only"),
    C("torch.cuda.max_memory_allocated() / 1e9", "torch_cuda_api", "replace", False,
      "writer.add_scalar('system/max_mem_allocated_gb', torch.npu.max_memory_allocated() / 1e9, global_step=step)",
      "reached only through the branch above; torch.cuda memory stats read 0 without CUDA"),
    C("model = torch.load(model_path)", "tensor_to_device", "replace", True,
      "model = torch.load(model_path, map_location=device)",
      "resume loads a whole pickled module saved from CUDA; without map_location CUDA storages cannot be deserialized on a host without CUDA"),
])

E("of_constants", "onsets_and_frames/constants.py", "explicit_replacement",
  "jongwook/onsets-and-frames onsets_and_frames/constants.py (DEFAULT_DEVICE)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "package-wide import point (train/evaluate/transcribe all star-import the package); DEFAULT_DEVICE is evaluated at import time; " + AUTOLOAD),
    C("DEFAULT_DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "DEFAULT_DEVICE = 'npu' if torch.npu.is_available() else 'cpu'",
      "datasets and the global mel module are placed on DEFAULT_DEVICE; would silently stay on CPU while the model is on NPU -> device mismatch"),
])

E("of_mel", "onsets_and_frames/mel.py", "explicit_replacement",
  "jongwook/onsets-and-frames onsets_and_frames/mel.py (conv1d STFT + mel filterbank)", [])

E("of_transcriber", "onsets_and_frames/transcriber.py", "explicit_replacement",
  "jongwook/onsets-and-frames transcriber.py + lstm.py (ConvStack, chunked BiLSTM)", [])

E("of_evaluate", "evaluate.py", "explicit_replacement",
  "jongwook/onsets-and-frames evaluate.py (mir_eval metrics, --device flag)", [
    C("parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu' if torch.npu.is_available() else 'cpu')",
      "CLI default; evaluation would silently run on CPU"),
])

E("of_transcribe", "transcribe.py", "explicit_replacement",
  "jongwook/onsets-and-frames transcribe.py (flac -> MIDI)", [
    C("parser.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')", "device_type", "replace", True,
      "parser.add_argument('--device', default='npu' if torch.npu.is_available() else 'cpu')",
      "CLI default; transcription would silently run on CPU"),
])

# ----------------------------------------------------------------------------------------------- hFT-Transformer
E("hft_training", "training/m_training.py", "explicit_replacement",
  "sony/hFT-Transformer training script (-device flag, torch.cuda.amp)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch.device('npu') from -device needs the backend registered; " + AUTOLOAD),
    C("torch.cuda.manual_seed(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(args.seed)",
      "queued no-op without CUDA; torch.manual_seed on the line above already seeds the NPU generator"),
    C("if device.type == 'cuda':", "device_type", "replace", False, "if device.type == 'npu':",
      "log-only branch, silently skipped on NPU"),
    C("torch.cuda.get_device_name(device)", "torch_cuda_api", "replace", False,
      "print('  device name    : '+torch.npu.get_device_name(device))",
      "reached only inside the branch above"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.amp)", AMP_OFF),
    C("with torch.cuda.amp.autocast(enabled=args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.amp):", AMP_OFF),
    C("with torch.cuda.amp.autocast(args.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(args.amp):", "validation forward; " + AMP_OFF),
    C("num_workers=2, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=2, pin_memory=True, pin_memory_device='npu')",
      "performance only; unconfirmed whether default pinning targets the NPU on every torch/torch_npu version"),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(args.seed)",
      "-v_seed reseeding; torch.manual_seed on the previous line covers the NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; only affects cached-memory fragmentation"),
])

E("hft_run", "training/run_train.sh", "explicit_replacement",
  "sony/hFT-Transformer shell launcher (CUDA_VISIBLE_DEVICES, -device cuda)", [
    C("=#! /bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV,
      "CANN libraries/ASCEND_OPP_PATH must be on the environment before torch_npu loads"),
    C("export CUDA_VISIBLE_DEVICES=0", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0",
      "ignored by the Ascend runtime; device selection silently lost"),
    C("=DEVICE=cuda", "device_type", "replace", True, "DEVICE=npu",
      "passed to -device and to map_location in the sanity check; 'cuda' fails on an NPU host"),
    C("python3 -c \"import torch; m = torch.load(", "import_torch_npu", "replace", True,
      "python3 -c \"import torch; import torch_npu; m = torch.load('${CKPT}/best_model.pkl', map_location='${DEVICE}'); print(type(m))\"",
      "map_location='npu' in a bare python -c needs torch_npu loaded; " + AUTOLOAD),
])

E("hft_transcription", "evaluation/m_transcription.py", "explicit_replacement",
  "sony/hFT-Transformer evaluation/m_transcription.py (AMT class)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script and library used by the evaluation scripts; " + AUTOLOAD),
    C("print('torch cuda   : '+str(torch.cuda.is_available()))", "torch_cuda_api", "replace", False,
      "print('torch npu    : '+str(torch.npu.is_available()))", "verbose log line only"),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "device choice; would silently fall back to CPU"),
    C("=self.device = 'cuda'", "device_type", "replace", True, "self.device = 'npu'",
      "model and input chunks are moved to self.device"),
])

E("hft_model", "model/model_spec2midi.py", "explicit_replacement",
  "sony/hFT-Transformer model/model_spec2midi.py (device passed into every layer)", [])

# ----------------------------------------------------------------------------------------------- YourMT3 / MT3 port
E("ymt3_train", "train.py", "explicit_replacement",
  "mimbres/YourMT3 train.py (Lightning Trainer, -g/-pr flags, DDP/DeepSpeed strategies)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; " + AUTOLOAD),
    C("n = torch.cuda.device_count()", "torch_cuda_api", "replace", True, "n = torch.npu.device_count()",
      "-g -1 resolves to 0 devices on an NPU host and pl.Trainer(devices=0) errors"),
    C("if precision == \"bf16-mixed\" and torch.cuda.get_device_capability()[0] < 8:", "device_capability_check", "replace", True,
      "if precision == \"bf16-mixed\" and not torch.npu.is_bf16_supported():",
      "torch.cuda.get_device_capability initialises CUDA and raises on an NPU host; SM numbers mean nothing on Ascend "
      "(NPU get_device_capability returns None unless TORCH_NPU_DEVICE_CAPABILITY is set)"),
    C("torch.backends.cuda.enable_flash_sdp(True)", "attention_kernel", "removal", False, None,
      "CUDA SDPA backend switch, ✘ in Ascend's 2.7.1 API list; NPU SDPA picks its fused kernel itself; no failure confirmed"),
    C("return DDPStrategy(find_unused_parameters=False, static_graph=True)", "dist_backend", "replace", False,
      "return DDPStrategy(find_unused_parameters=False, static_graph=True, process_group_backend=\"hccl\")",
      "unconfirmed: Lightning derives the backend from the root device ('nccl' only for cuda, else 'gloo'); pin HCCL explicitly"),
    C("model.encoder = torch.compile(model.encoder, mode=\"max-autotune\")", "compile_mode", "replace", False,
      "model.encoder = torch.compile(model.encoder)",
      "opt-in flag; max-autotune relies on Triton autotuning/CUDA graphs (transfer_to_npu sets has_triton=False); NPU Inductor behaviour unconfirmed"),
    C("test_trainer = pl.Trainer(accelerator='gpu', devices=1, precision=precision, logger=wandb_logger)", "device_type", "replace", True,
      "test_trainer = pl.Trainer(accelerator='npu', devices=1, precision=precision, logger=wandb_logger)",
      "GPUAccelerator requires CUDA; 'npu' assumes an NPU accelerator registered with Lightning (plugin; unconfirmed)"),
])

E("ymt3_config", "config/config.py", "explicit_replacement",
  "mimbres/YourMT3 config/config.py (audio/model/shared cfg dicts)", [
    C("\"accelerator\": \"gpu\",", "device_type", "replace", True, "\"accelerator\": \"npu\",",
      "unpacked into pl.Trainer(**TRAINER); GPUAccelerator raises without CUDA; assumes a registered NPU accelerator (unconfirmed)"),
    C("\"pin_memory\": True,", "pin_memory", "replace", False, "\"pin_memory\": True, \"pin_memory_device\": \"npu\",",
      "performance only; unconfirmed whether default pinning targets the NPU"),
    C("\"attn_implementation\": \"flash\",", "attention_kernel", "replace", False, "\"attn_implementation\": \"sdpa\",",
      "flash-attn cannot be installed on NPU; t5mod already falls back to sdpa with a warning, so this is cosmetic"),
])

E("ymt3_module", "model/ymt3.py", "explicit_replacement",
  "mimbres/YourMT3 model/ymt3.py (LightningModule, bf16 greedy inference)", [
    C("with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16, enabled=self.bf16_inference):", "amp", "replace", True,
      "with torch.autocast(device_type=\"npu\", dtype=torch.bfloat16, enabled=self.bf16_inference):", AMP_OFF),
    C("with torch.autocast(device_type='cuda', dtype=torch.bfloat16):", "amp", "replace", True,
      "with torch.autocast(device_type='npu', dtype=torch.bfloat16):", "teacher-forced validation loss; " + AMP_OFF),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op without CUDA; memory housekeeping only"),
    C("if self.trainer.is_global_zero and torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "if self.trainer.is_global_zero and torch.npu.is_available():", "peak-memory logging silently skipped"),
    C("peak = torch.cuda.max_memory_allocated(self.device) / 2**30", "torch_cuda_api", "replace", False,
      "peak = torch.npu.max_memory_allocated(self.device) / 2**30", "reached only through the guard above"),
    C("task_manager, device: str = \"cuda\") -> YourMT3:", "device_type", "replace", True,
      "task_manager, device: str = \"npu\") -> YourMT3:", "default target of the stand-alone loader; .to('cuda') fails on an NPU host"),
])

E("ymt3_attn", "model/t5mod.py", "device_branch_or_abstraction",
  "mimbres/YourMT3 model/t5mod.py (T5 attention with eager/sdpa/flash-attn backends)", [
    C("out = flash_attn_func(q, k, v, dropout_p=dropout_p, softmax_scale=1.0, causal=causal)", "attention_kernel", "add_branch", False,
      "out = torch_npu.npu_fusion_attention(q, k, v, self.n_heads, \"BSND\", keep_prob=1.0 - dropout_p, scale=1.0, "
      "atten_mask=self.causal_mask if causal else None, sparse_mode=3 if causal else 0)[0]",
      "flash-attn import fails on NPU and the guarded code already uses SDPA; a fused NPU branch is performance only"),
])

E("ymt3_spec", "model/spectrogram.py", "explicit_replacement",
  "mimbres/YourMT3 model/spectrogram.py (torchaudio log-mel front-end kept in fp32)", [
    C("with torch.autocast(device_type='cuda', enabled=False):", "amp", "replace", False,
      "with torch.autocast(device_type='npu', enabled=False):",
      "fp32 guard; a no-op on NPU until NPU autocast is enabled elsewhere, then the mel matmul would run in bf16"),
    C("with torch.cuda.amp.autocast(enabled=False):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=False):", "same fp32 guard for the linear spectrogram"),
])

E("ymt3_req", "requirements.txt", "explicit_replacement",
  "mimbres/YourMT3 requirements.txt (cu121 wheels, flash-attn pin)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", "replace", True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; torch_npu runs on the CPU build of torch (x86 from whl/cpu, aarch64 from PyPI)"),
    C("torch==2.4.0+cu121", "import_torch_npu", "replace", True, "torch==2.4.0",
      "+cu121 local version does not exist for aarch64 and is the wrong build for torch_npu"),
    C("torchaudio==2.4.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.4.0.post2",
      "torch-npu wheel matching torch 2.4.0 (branch v2.4.0-6.0.0, CANN 8.0.0)"),
    C("flash-attn==2.6.3", "attention_kernel", "removal", True, None,
      "flash-attn builds only with nvcc/CUDA: pip install -r fails on an NPU host"),
    C("nvidia-ml-py==12.535.133", "torch_cuda_api", "removal", False, None,
      "installs, but NVML is absent on Ascend hosts; no caller in these files"),
])

# ----------------------------------------------------------------------------------------------- piano transcription (ByteDance)
E("pti_inference", "piano_transcription_inference/inference.py", "explicit_replacement",
  "qiuqiangkong/piano_transcription_inference inference.py (PianoTranscription class)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the default argument torch.device('npu') is evaluated at import time; " + AUTOLOAD),
    C("segment_samples=16000*10, device=torch.device('cuda'),", "device_type", "replace", True,
      "segment_samples=16000*10, device=torch.device('npu'),", "default device of the public API"),
    C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
      "with an npu device the model silently stays on CPU (forward() follows the model's device)"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log line; prints 0 on NPU"),
    C("self.model = torch.nn.DataParallel(self.model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU (✘ in Ascend's list, msFmkTransplt: use DDP); single-device inference needs no wrapper"),
])

E("pti_example", "example.py", "explicit_replacement",
  "qiuqiangkong/piano_transcription_inference example.py (--cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False, "import torch_npu",
      "the package import on the next line already loads torch_npu (see its inference.py); explicit import is customary"),
    C("device = 'cuda' if args.cuda and torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if args.cuda and torch.npu.is_available() else 'cpu'", "--cuda would silently select CPU"),
    C("device = torch.device('cuda') if args.cuda else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda else torch.device('cpu')", "folder mode; 'cuda' fails at model.to()"),
])

E("bpt_main", "pytorch/main.py", "explicit_replacement",
  "bytedance/piano_transcription pytorch/main.py (training, DataParallel)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("device = torch.device('cuda') if args.cuda and torch.cuda.is_available() else torch.device('cpu')", "device_type", "replace", True,
      "device = torch.device('npu') if args.cuda and torch.npu.is_available() else torch.device('cpu')",
      "--cuda would silently select CPU"),
    C("if 'cuda' in str(device):", "device_type", "replace", True, "if 'npu' in str(device):",
      "string test decides the device used for batches"),
    C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'", "device string used by move_data_to_device"),
    C("num_workers=num_workers, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=num_workers, pin_memory=True, pin_memory_device='npu')", "performance only; unconfirmed default pin target"),
    C("num_workers=num_workers // 2, pin_memory=True)", "pin_memory", "replace", False,
      "num_workers=num_workers // 2, pin_memory=True, pin_memory_device='npu')", "performance only; unconfirmed default pin target"),
    C("checkpoint = torch.load(resume_checkpoint_path)", "tensor_to_device", "replace", True,
      "checkpoint = torch.load(resume_checkpoint_path, map_location='cpu')",
      "checkpoints saved from model.module on CUDA; deserializing CUDA storages fails without CUDA"),
    C("print('GPU number: {}'.format(torch.cuda.device_count()))", "torch_cuda_api", "replace", False,
      "print('NPU number: {}'.format(torch.npu.device_count()))", "log line"),
    C("model = torch.nn.DataParallel(model)", "distributed_framework", "removal", True, None,
      "torch.nn.DataParallel is unsupported on NPU; train on one NPU (or port to DDP)"),
    C("=if 'cuda' in device:", "device_type", "replace", True, "if 'npu' in device:",
      "model would silently stay on CPU while batches go to the NPU"),
    C("'model': model.module.state_dict(),", "distributed_framework", "replace", True, "'model': model.state_dict(),",
      "follows the DataParallel removal (no .module any more)"),
])

E("bpt_runme", "runme.sh", "explicit_replacement",
  "bytedance/piano_transcription runme.sh (CUDA_VISIBLE_DEVICES per command)", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu"),
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/main.py train --workspace=$WORKSPACE --model_type='Regress_onset", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/main.py train --workspace=$WORKSPACE --model_type='Regress_onset_offset_frame_velocity_CRNN' ... --cuda",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend"),
    C("CUDA_VISIBLE_DEVICES=1 python3 pytorch/main.py train", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=1 python3 pytorch/main.py train --workspace=$WORKSPACE --model_type='Regress_pedal_CRNN' ... --cuda",
      "ignored on Ascend: the pedal run would land on NPU 0 next to the note run"),
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/calculate_score_for_paper.py infer_prob", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/calculate_score_for_paper.py infer_prob ... --cuda",
      "CUDA_VISIBLE_DEVICES is ignored on Ascend"),
    C("CUDA_VISIBLE_DEVICES=0 python3 pytorch/inference.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=0 python3 pytorch/inference.py ... --cuda", "CUDA_VISIBLE_DEVICES is ignored on Ascend"),
])

# ----------------------------------------------------------------------------------------------- basic-pitch (PyTorch port)
E("bp_torch", "basic_pitch_torch/inference.py", "explicit_replacement",
  "gudgud96/basic-pitch-torch inference.py (PyTorch port of spotify/basic-pitch)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "torch.npu.* used below after the port; " + AUTOLOAD),
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "input windows would silently stay on CPU"),
    C("audio_windowed = audio_windowed.cuda()", "tensor_to_device", "replace", True, "audio_windowed = audio_windowed.npu()",
      "CUDA tensor move"),
    C("if torch.cuda.is_available() and not force_cpu:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and not force_cpu:", "model would silently stay on CPU"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "CUDA module move"),
    C("sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)", "torch_cuda_api", "replace", True,
      "sync = torch.npu.synchronize if x.is_npu else (lambda: None)",
      "without a device sync the NPU timings measure only asynchronous launches: benchmark silently wrong"),
])

# ----------------------------------------------------------------------------------------------- Music Transformer
E("mt_device", "utilities/device.py", "device_branch_or_abstraction",
  "gwinndr/MusicTransformer-Pytorch utilities/device.py (get_device/use_cuda helpers)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the device is created at import time of this helper module; " + AUTOLOAD),
    C("if(torch.cuda.device_count() > 0):", "torch_cuda_api", "replace", True, "if(torch.npu.device_count() > 0):",
      "count is 0 on NPU -> get_device() silently returns CPU for every script"),
    C("TORCH_CUDA_DEVICE = torch.device(\"cuda\")", "device_type", "replace", True, "TORCH_CUDA_DEVICE = torch.device(\"npu\")",
      "the variable keeps its CUDA name; only the device changes"),
])

E("mt_train", "train.py", "explicit_replacement",
  "gwinndr/MusicTransformer-Pytorch train.py", [
    C("model.load_state_dict(torch.load(args.continue_weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.continue_weights, map_location=get_device()))",
      "weights saved from CUDA training; torch.load without map_location fails on a host without CUDA"),
])

E("mt_generate", "generate.py", "explicit_replacement",
  "gwinndr/MusicTransformer-Pytorch generate.py", [
    C("model.load_state_dict(torch.load(args.model_weights))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(args.model_weights, map_location=get_device()))",
      "released/trained weights are CUDA tensors; fails without map_location"),
])

E("mt_model", "model/music_transformer.py", "explicit_replacement",
  "gwinndr/MusicTransformer-Pytorch model/music_transformer.py (nn.Transformer + DummyDecoder)", [])

# ----------------------------------------------------------------------------------------------- Compound Word Transformer
E("cp_main", "workspace/uncond/cp-linear/main-cp.py", "explicit_replacement",
  "YatingMusic/compound-word-transformer workspace/uncond/cp-linear/main-cp.py (fast_transformers causal-linear)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("from fast_transformers.masking import TriangularCausalMask", "attention_kernel", "npu_only_addition", True,
      "from npu_causal_product import patch_fast_transformers; patch_fast_transformers()  # pure-PyTorch causal_dot_product for 'npu'",
      "training uses attention_type='causal-linear', whose causal dot product is a C++/CUDA extension dispatched by device type "
      "(no NPU kernel: custom CUDA extensions have no NPU path); the RecurrentEncoderBuilder inference path is pure PyTorch. "
      "Dispatch detail recalled from pytorch-fast-transformers, not in the knowledge base"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = str(gid)", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = str(gid)", "GPU id selection is ignored on Ascend"),
    C("np.array([cur_word_type])).long().cuda().unsqueeze(0)", "tensor_to_device", "replace", True,
      "np.array([cur_word_type])).long().npu().unsqueeze(0)", "CUDA tensor move in sampling"),
    C("init_t = torch.from_numpy(init).long().cuda()", "tensor_to_device", "replace", True,
      "init_t = torch.from_numpy(init).long().npu()", "CUDA tensor move"),
    C("input_ = torch.from_numpy(next_arr).long().cuda()", "tensor_to_device", "replace", True,
      "input_ = torch.from_numpy(next_arr).long().npu()", "CUDA tensor move"),
    C("=net.cuda()", "tensor_to_device", "replace", True, "net.npu()", "CUDA module move (training)"),
    C("net.load_state_dict(torch.load(path_saved_ckpt))", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(path_saved_ckpt, map_location='npu'))",
      "fine-tuning from a checkpoint saved on CUDA"),
    C("batch_x = torch.from_numpy(batch_x).long().cuda()", "tensor_to_device", "replace", True,
      "batch_x = torch.from_numpy(batch_x).long().npu()", "CUDA tensor move"),
    C("batch_y = torch.from_numpy(batch_y).long().cuda()", "tensor_to_device", "replace", True,
      "batch_y = torch.from_numpy(batch_y).long().npu()", "CUDA tensor move"),
    C("batch_mask = torch.from_numpy(batch_mask).float().cuda()", "tensor_to_device", "replace", True,
      "batch_mask = torch.from_numpy(batch_mask).float().npu()", "CUDA tensor move"),
    C("=net = net.cuda()", "tensor_to_device", "replace", True, "net = net.npu()", "CUDA module move (inference)"),
    C("net.load_state_dict(torch.load(path_saved_ckpt), strict=False)", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(path_saved_ckpt, map_location='npu'), strict=False)",
      "checkpoint saved on CUDA"),
])

# ----------------------------------------------------------------------------------------------- attribute-to-music generator (DDP + apex)
E("mgen_train", "train_ddp.py", "explicit_replacement",
  "MuseCoco / Music-Transformer-style generator trainer (torch.distributed.launch, apex.amp, FusedAdam)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script; " + AUTOLOAD),
    C("from apex.optimizers import FusedAdam", "fused_optimizer", "replace", True,
      "from apex.optimizers import NpuFusedAdamW",
      "Ascend apex has no CUDA FusedAdam: the ImportError makes APEX_AVAILABLE False and --fp16 (used by the launcher) raises"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "queued no-op without CUDA; torch.manual_seed above already seeds the NPU"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.local_rank)",
      "CUDA call fails on an NPU host"),
    C("dist.init_process_group(backend=\"nccl\", init_method=\"env://\")", "dist_backend", "replace", True,
      "dist.init_process_group(backend=\"hccl\", init_method=\"env://\")", "NCCL is not available; HCCL is the NPU backend"),
    C("args.device = torch.device(\"cuda\", args.local_rank)", "device_type", "replace", True,
      "args.device = torch.device(\"npu\", args.local_rank)", "all batches go to args.device"),
    C("if dist.get_backend() == \"nccl\":", "dist_backend", "replace", True, "if dist.get_backend() == \"hccl\":",
      "backend-string comparison is not rewritten by any tool; with hccl the tensor would stay on CPU and HCCL all_reduce fails"),
    C("=t = t.cuda()", "tensor_to_device", "replace", True, "t = t.npu()", "HCCL collectives need NPU tensors"),
    C("return FusedAdam(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6, adam_w_mode=True)", "fused_optimizer", "replace", True,
      "return NpuFusedAdamW(groups, lr=args.lr, betas=(0.9, 0.98), eps=1e-6)",
      "apex FusedAdam (CUDA kernels) -> Ascend apex/torch_npu NpuFusedAdamW; adam_w_mode=True means AdamW semantics"),
    C("collate_fn=collate_remi, pin_memory=True, drop_last=True)", "pin_memory", "replace", False,
      "collate_fn=collate_remi, pin_memory=True, pin_memory_device='npu', drop_last=True)",
      "performance only; unconfirmed default pin target"),
    C("model.cuda(args.local_rank)", "tensor_to_device", "replace", True, "model.npu(args.local_rank)", "CUDA module move"),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=\"dynamic\")", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=\"dynamic\", combine_grad=True)",
      "works unchanged with Ascend apex; combine_grad is its NPU performance option"),
    C("ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.local_rank))", "tensor_to_device", "replace", True,
      "ckpt = torch.load(args.resume, map_location=f\"npu:{args.local_rank}\")",
      "map_location lambda calls storage.cuda(), which fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "CUDA lazy init raises on an NPU host"),
    C("mem = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 2**30", "logs 0 without CUDA; logging only"),
])

E("mgen_launch", "scripts/launch_ddp.sh", "explicit_replacement",
  "torch.distributed.launch multi-node launcher with NCCL_* exports (MuseCoco / fairseq-style)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True, SET_ENV, "CANN environment for torch_npu/HCCL"),
    C("NGPU=${NGPU:-$(nvidia-smi --list-gpus | wc -l)}", "device_type", "replace", True,
      "NGPU=${NGPU:-$(npu-smi info -l | grep -c \"NPU ID\")}",
      "nvidia-smi is missing -> NGPU=0 -> --nproc_per_node=0"),
    C("export NCCL_DEBUG=WARN", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL log level has no effect on HCCL; logging only"),
    C("export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}", "env_var", "replace", True,
      "export HCCL_SOCKET_IFNAME=${HCCL_SOCKET_IFNAME:-eth0}",
      "multi-node: HCCL ignores NCCL_SOCKET_IFNAME and picks the root-info NIC by its own priority"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None, "NCCL-only switch; no effect under HCCL"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "device_type", "replace", False,
      "npu-smi info >> ${SAVE_DIR}/train_node${NODE_RANK}.log",
      "end-of-run log dump; fails with 'command not found' but the script has no set -e"),
])

E("mgen_docker", "docker/Dockerfile", "explicit_replacement",
  "NGC-based training Dockerfile building NVIDIA apex with --cuda_ext", [
    C("FROM nvcr.io/nvidia/pytorch:23.10-py3", "device_type", "replace", True,
      "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
      "NGC image carries a CUDA torch build; an Ascend CANN base image is needed"),
    C("=WORKDIR /workspace", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torch-npu==2.1.0.post17",
      "the CANN base image has no torch; torch/torch_npu must exist before the apex build below"),
    C("RUN git clone --branch 23.08 https://github.com/NVIDIA/apex /opt/apex && \\", "custom_cuda_extension", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex /opt/apex && \\",
      "NVIDIA apex CUDA extensions cannot build on NPU; Ascend apex is the patched port"),
    C("--config-settings \"--build-option=--cpp_ext\" --config-settings \"--build-option=--cuda_ext\" ./", "custom_cuda_extension", "replace", True,
      "bash scripts/build.sh --python=3.11 && pip install --no-cache-dir apex/dist/apex-*.whl",
      "--cuda_ext needs nvcc; Ascend apex builds with its own script"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
      "NVIDIA container runtime hint; Ascend devices are mounted by Ascend Docker Runtime (ASCEND_VISIBLE_DEVICES at run time) or --device"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "NVIDIA container runtime hint"),
    C("ENV NCCL_DEBUG=WARN", "env_var", "replace", False, "ENV ASCEND_GLOBAL_LOG_LEVEL=3", "logging only"),
])

# ----------------------------------------------------------------------------------------------- semi-CRF transcription package
E("scrf_setup", "setup.py", "explicit_replacement",
  "semi-CRF event-based piano transcription package (Transkun-style) setup.py with an nvcc extension", [
    C("CUDAExtension(", "custom_cuda_extension", "replace", False, "NpuExtension(",
      "optional Ascend C rewrite of the semi-CRF kernels bound via torch_npu.utils.cpp_extension.NpuExtension; performance only"),
    C("ext_modules=get_extensions(),", "custom_cuda_extension", "replace", True,
      "ext_modules=get_extensions() if torch.cuda.is_available() else [],",
      "CUDAExtension needs CUDA_HOME/nvcc, so pip install fails on an NPU host; decode.py falls back to pure PyTorch without _C"),
])

E("scrf_decode", "semicrf_amt/decode.py", "explicit_replacement",
  "semi-CRF log-partition / Viterbi decoder with optional CUDA kernels", [
    C("sil_prefix = torch.logcumsumexp(alpha[..., :j] - noise_cum[..., :j], dim=-1)", "unsupported_op_workaround", "replace", False,
      "sil_prefix = torch.logsumexp(alpha[..., :j] - noise_cum[..., :j], dim=-1, keepdim=True)",
      "logcumsumexp has no NPU kernel in the op-plugin lists (2.1/2.7/2.9): per-frame CPU fallback; only the last prefix is used"),
    C("def benchmark_decode(T: int = 1000, K: int = 88, device: str = \"cuda\", n_iter: int = 5) -> float:", "device_type", "replace", True,
      "def benchmark_decode(T: int = 1000, K: int = 88, device: str = \"npu\", n_iter: int = 5) -> float:",
      "default device of the timing helper"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events raise on an NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events raise on an NPU host"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()", "CUDA sync raises on an NPU host"),
])

E("scrf_env", "environment.yml", "explicit_replacement",
  "conda environment.yml with pytorch-cuda and cuda-nvcc for the extension build", [
    C("=- nvidia", "device_type", "removal", False, None, "NVIDIA channel is unused once pytorch-cuda/cuda-nvcc go"),
    C("=- pytorch=1.13.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "no torch_npu release pairs with torch 1.13 (matrix jumps 1.11.0 -> 2.0.1/2.1.0)"),
    C("=- torchaudio=0.13.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0", "must match the torch bump"),
    C("=- pytorch-cuda=11.7", "device_type", "replace", True, "- cpuonly",
      "selects the CUDA build of pytorch; torch_npu runs on the CPU build"),
    C("=- cuda-nvcc=11.7", "custom_cuda_extension", "removal", False, None,
      "only needed for the nvcc extension, which is skipped on NPU"),
    C("=- tqdm", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
      "torch_npu wheel for torch 2.1.0 (pip section)"),
])
