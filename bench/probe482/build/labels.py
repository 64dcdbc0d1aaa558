"""Labels for probe482 (speech quality assessment / MOS prediction, CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit; see README.md for the policy.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
IMPORT_NOTE = ("entry module that uses torch.npu after the port; torch_npu must be imported before any torch.npu/'npu' use "
               "(autoload only from torch_npu 2.5.1, and the 2.1.0 line is still common on Ascend hosts)")

# --------------------------------------------------------------------------------------------
# NISQA (gabrielmittag/NISQA)
# --------------------------------------------------------------------------------------------
E("nisqa_lib", "nisqa/NISQA_lib.py", X, "gabrielmittag/NISQA nisqa/NISQA_lib.py (models, pooling, bias loss, dataset)", [
    C("x = pack_padded_sequence(", "unsupported_op_workaround", "replace", False,
      "x = x  # padded LSTM on NPU: pack_padded_sequence is marked unsupported in Ascend's API list; padded steps are masked in Pooling",
      "unconfirmed: Ascend's 2.7.1 API list and msFmkTransplt mark torch.nn.utils.rnn.pack_padded_sequence unsupported, "
      "but op-plugin 7.3.0 registers _pack_padded_sequence and lstm.data kernels; a porter verifies and only then rewrites. "
      "Rewriting changes the backward direction of the BiLSTM (sees padding), so not a free change"),
])
E("nisqa_model", "nisqa/NISQA_model.py", X, "gabrielmittag/NISQA nisqa/NISQA_model.py (nisqaModel train/predict loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("self.model = nn.DataParallel(self.model)", "distributed_framework", "replace", True,
      "pass  # nn.DataParallel is not supported on Ascend NPU; stay on one NPU (use DDP + hccl for multi-card)",
      "torch.nn.DataParallel is marked unsupported (✘) in Ascend's API list; run_predict.py forces tr_parallel=True so this path is always hit"),
    C('self.dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'self.dev = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "with tr_device: null the auto-selection silently falls back to CPU on an NPU host"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "performance only: without a pin device older DataLoaders only pin when CUDA is available; unconfirmed whether torch_npu patches this"),
])
E("nisqa_run_train", "run_train.py", X, "gabrielmittag/NISQA run_train.py", [])
E("nisqa_run_predict", "run_predict.py", X, "gabrielmittag/NISQA run_predict.py", [])
E("nisqa_config", "config/train_nisqa.yaml", X, "gabrielmittag/NISQA config/train_nisqa.yaml", [])
E("nisqa_env", "env.yml", X, "gabrielmittag/NISQA env.yml (conda environment)", [
    C("- pytorch=1.12.1", "import_torch_npu", "replace", True, "- pytorch=2.1.0",
      "torch_npu has no build for torch 1.12; the torch pin must equal a torch_npu wheel's torch version (e.g. 2.1.0 ↔ 2.1.0.post17)"),
    C("- torchvision=0.13.1", "import_torch_npu", "replace", True, "- torchvision=0.16.0",
      "torchvision pin must move with torch 2.1.0 or the environment does not solve"),
    C("- torchaudio=0.12.1", "import_torch_npu", "replace", True, "- torchaudio=2.1.0",
      "torchaudio pin must move with torch 2.1.0 or the environment does not solve"),
    C("- cudatoolkit=11.3", "torch_cuda_api", "removal", False, None,
      "CUDA runtime package is dead weight on an Ascend host (CANN provides the runtime); harmless if left"),
    C("- pysoundfile==0.9.0.post1", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post17",
      "torch_npu wheel (pip) is what provides the NPU backend; pairs with torch 2.1.0 per the compatibility matrix"),
])

# --------------------------------------------------------------------------------------------
# UTMOS22 strong learner (sarulab-speech/UTMOS22)
# --------------------------------------------------------------------------------------------
E("utmos_model", "strong/model.py", X, "sarulab-speech/UTMOS22 strong/model.py (SSL wrapper, phoneme encoder, LD conditioner)", [
    C("checkpoint = torch.load(cp_path)", "tensor_to_device", "replace", False,
      "checkpoint = torch.load(cp_path, map_location=\"cpu\")",
      "unconfirmed: only fails if the WavLM checkpoint was saved with CUDA storages; map_location='cpu' is the safe port"),
    C("emb = torch.nn.utils.rnn.pack_padded_sequence(", "unsupported_op_workaround", "replace", False,
      "emb = torch.nn.utils.rnn.pack_padded_sequence(  # verify on NPU (✘ in Ascend API list); else run the LSTM on padded emb",
      "unconfirmed: conflicting evidence (API list ✘ vs op-plugin _pack_padded_sequence/lstm.data kernels); see README"),
    C("reference_emb = pack_padded_sequence(", "unsupported_op_workaround", "replace", False,
      "reference_emb = pack_padded_sequence(  # verify on NPU (✘ in Ascend API list); else run the LSTM on padded reference_emb",
      "unconfirmed, same as the phoneme branch above"),
])
E("utmos_lightning", "strong/lightning_module.py", X, "sarulab-speech/UTMOS22 strong/lightning_module.py", [])
E("utmos_train", "strong/train.py", X, "sarulab-speech/UTMOS22 strong/train.py (hydra + PyTorch Lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if n_devices != 1 and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if n_devices != 1 and torch.npu.device_count() > 1:",
      "torch.cuda.device_count() is 0 on an NPU host, so the explicit DDPStrategy would be skipped and Lightning would fall back "
      "to its default strategy (gloo backend for non-CUDA devices)"),
    C('strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="nccl")', "dist_backend", "replace", True,
      'strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="hccl")',
      "NCCL does not exist on Ascend; HCCL is the collective backend"),
])
E("utmos_config", "strong/configs/default.yaml", X, "sarulab-speech/UTMOS22 strong/configs/default.yaml", [
    C("accelerator: gpu", "device_type", "replace", True, "accelerator: npu",
      "'gpu' makes Lightning demand CUDA and abort on an NPU host. Unconfirmed: stock Lightning has no 'npu' accelerator, so the "
      "port also needs an NPU accelerator plugin registered under that name"),
])
E("utmos_predict", "strong/predict.py", X, "sarulab-speech/UTMOS22 strong/predict.py (directory inference)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if args.gpu >= 0 and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.gpu >= 0 and torch.npu.is_available():", "otherwise inference silently runs on CPU"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")', "CUDA device string"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "only gates a cache flush between files; performance/memory only"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "uninitialised CUDA makes this a no-op; memory hygiene only"),
])
E("utmos_dataset", "strong/dataset.py", X, "sarulab-speech/UTMOS22 strong/dataset.py (DataModule)", [])
E("utmos_app", "strong/app.py", X, "sarulab-speech UTMOS-demo app.py (gradio, CPU)", [])

# --------------------------------------------------------------------------------------------
# UTMOSv2 (sarulab-speech/UTMOSv2)
# --------------------------------------------------------------------------------------------
E("utmosv2_train", "utmosv2/runner/_train.py", X, "sarulab-speech/UTMOSv2 utmosv2/runner/_train.py (AMP training loop)", [
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler disable themselves when CUDA is absent, so training silently runs in fp32 with the AMP-sized batch "
      "(the recipe asked for fp16 mixed precision)"),
])
E("utmosv2_inference", "utmosv2/runner/_inference.py", X, "sarulab-speech/UTMOSv2 utmosv2/runner/_inference.py (TTA inference)", [
    C('with torch.autocast(device_type="cuda", dtype=torch.float16):', "amp", "replace", False,
      'with torch.autocast(device_type="npu", dtype=torch.float16):',
      "inference only: with device_type='cuda' autocast is disabled on NPU tensors and inference runs in fp32 (slower, same or better accuracy)"),
])
E("utmosv2_script", "train.py", X, "sarulab-speech/UTMOSv2 train.py (fold loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "otherwise trains on CPU silently"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "between-fold cache release; no-op on NPU host if left, memory only"),
])
E("utmosv2_create", "utmosv2/_core/create.py", X, "sarulab-speech/UTMOSv2 utmosv2/_core/create.py (create_model)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "public entry point (utmosv2.create_model) whose default argument calls torch.npu after the port"),
    C('device: str | torch.device = "cuda:0" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      'device: str | torch.device = "npu:0" if torch.npu.is_available() else "cpu",',
      "default device silently resolves to CPU on an NPU host"),
])
E("utmosv2_common", "utmosv2/_core/model/_common.py", X, "sarulab-speech/UTMOSv2 utmosv2/_core/model/_common.py (predict mixin)", [
    C("from torch.cuda.amp import autocast", "amp", "replace", False, "from torch_npu.npu.amp import autocast",
      "inference-only autocast: left as CUDA it is disabled and prediction runs fp32; performance only"),
    C('device: str | torch.device = "cuda:0" if torch.cuda.is_available() else "cpu",', "device_type", "replace", True,
      'device: str | torch.device = "npu:0" if torch.npu.is_available() else "cpu",',
      "model.predict() default device silently becomes CPU on an NPU host"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "performance only; unconfirmed whether pinning happens automatically for NPU"),
])
E("utmosv2_seed", "utmosv2/utils/_seed.py", X, "sarulab-speech/UTMOSv2 utmosv2/utils (fix_seed)", [
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "redundant: torch.manual_seed on the line above also seeds registered accelerator backends, and torch.cuda.manual_seed is a "
      "lazy no-op without CUDA; a porter renames it for clarity"),
])

# --------------------------------------------------------------------------------------------
# SSL-MOS (nii-yamagishilab/mos-finetune-ssl)
# --------------------------------------------------------------------------------------------
E("sslmos_train", "mos_fairseq.py", X, "nii-yamagishilab/mos-finetune-ssl mos_fairseq.py (fine-tuning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "otherwise fine-tuning silently runs on CPU"),
    C("net.load_state_dict(torch.load(my_checkpoint))", "tensor_to_device", "replace", True,
      "net.load_state_dict(torch.load(my_checkpoint, map_location=device))",
      "released/finetuned checkpoints were saved from CUDA; without map_location torch.load tries to restore CUDA storages and fails"),
    C("with torch.cuda.device(device):", "torch_cuda_api", "replace", True, "with torch.npu.device(device):",
      "torch.cuda.device() rejects a non-CUDA torch.device (raises) once device is 'npu'"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "OOM-avoidance cache flush; a no-op if left as CUDA, memory only"),
])
E("sslmos_predict", "predict.py", X, "nii-yamagishilab/mos-finetune-ssl predict.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")', "otherwise silently CPU"),
    C("model.load_state_dict(torch.load(my_checkpoint))", "tensor_to_device", "replace", True,
      "model.load_state_dict(torch.load(my_checkpoint, map_location=device))",
      "the distributed finetuned checkpoints hold CUDA storages; torch.load without map_location fails on a host without CUDA"),
])
E("sslmos_challenge", "run_inference_for_challenge.py", X, "nii-yamagishilab/mos-finetune-ssl run_inference_for_challenge.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_cuda = torch.npu.is_available()",
      "flag gates every device move below; left alone inference silently stays on CPU"),
    C("map_location='cuda' if use_cuda else 'cpu'", "tensor_to_device", "replace", True,
      "state = torch.load(args.finetuned_checkpoint, map_location='npu' if use_cuda else 'cpu')",
      "map_location='cuda' fails on an NPU host"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", ".cuda() fails without CUDA"),
    C("wav = wav.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "wav = wav.npu(non_blocking=True)",
      ".cuda() fails without CUDA"),
])
E("sslmos_script", "scripts/finetune_all.sh", X, "nii-yamagishilab/mos-finetune-ssl style launcher (one model per GPU)", [
    C("conda activate mos-ssl", "env_var", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment (library paths, ASCEND_* variables) must be sourced before torch_npu can load"),
    C("CUDA_VISIBLE_DEVICES=$i python mos_fairseq.py", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$i python mos_fairseq.py \\",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime, so all three jobs would land on npu:0 and contend for its memory"),
])

# --------------------------------------------------------------------------------------------
# DNSMOS (microsoft/DNS-Challenge) and the torchmetrics wrapper (Lightning-AI/torchmetrics)
# --------------------------------------------------------------------------------------------
E("dns_dnsmos_local", "DNSMOS/dnsmos_local.py", X, "microsoft/DNS-Challenge DNSMOS/dnsmos_local.py (onnxruntime, CPU)", [])
E("tm_dnsmos", "src/torchmetrics/functional/audio/dnsmos.py", X,
  "Lightning-AI/torchmetrics src/torchmetrics/functional/audio/dnsmos.py", [
    C('elif "CUDAExecutionProvider" in ort.get_available_providers():', "device_type", "replace", False,
      'elif "CANNExecutionProvider" in ort.get_available_providers():',
      "unconfirmed (not in the knowledge base): onnxruntime's CANN execution provider; without it an NPU device falls through "
      "to the CPU provider branch, which still computes the right scores"),
    C('providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
      'providers = ["CANNExecutionProvider", "CPUExecutionProvider"]',
      "unconfirmed, pairs with the provider check above; performance only"),
])
E("tm_dnsmos_test", "tests/unittests/audio/test_dnsmos.py", X, "Lightning-AI/torchmetrics tests/unittests/audio/test_dnsmos.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported skipif evaluates torch.npu.is_available() at collection time"),
    C('@pytest.mark.skipif(not torch.cuda.is_available(), reason="test requires cuda")', "torch_cuda_api", "replace", False,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="test requires npu")',
      "left alone the accelerator test is silently skipped on NPU hosts; coverage only, product code unaffected"),
    C('device = "cuda:0"', "device_type", "replace", True, 'device = "npu:0"',
      "once the test runs on an NPU host, moving inputs to cuda:0 fails"),
])

# --------------------------------------------------------------------------------------------
# SpeechMOS (tarepan/SpeechMOS) - torch.hub packaging of UTMOS22, device agnostic
# --------------------------------------------------------------------------------------------
E("speechmos_hubconf", "hubconf.py", X, "tarepan/SpeechMOS hubconf.py", [])
E("speechmos_model", "speechmos/utmos22/strong/model.py", X, "tarepan/SpeechMOS speechmos/utmos22/strong/model.py", [])

# --------------------------------------------------------------------------------------------
# SHEET (unilight/sheet) - VoiceMOS challenge baselines (LDNet, SSL-MOS), ParallelWaveGAN-style recipe
# --------------------------------------------------------------------------------------------
E("sheet_train", "sheet/bin/train.py", X, "unilight/sheet sheet/bin/train.py (ParallelWaveGAN-style trainer entry)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if not torch.npu.is_available():",
      "otherwise the whole script takes the CPU branch on an NPU host"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "CUDA device"),
    C("torch.cuda.set_device(args.rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.rank)",
      "per-rank device binding"),
    C('torch.distributed.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", init_method="env://")', "NCCL -> HCCL"),
    C("from apex.parallel import DistributedDataParallel", "distributed_framework", "replace", True,
      "from torch.nn.parallel import DistributedDataParallel",
      "NVIDIA apex cannot be built for NPU (Ascend's apex patch covers amp/fused optimizers, not this CUDA DDP); torch DDP over hccl replaces it"),
])
E("sheet_inference", "sheet/bin/inference.py", X, "unilight/sheet sheet/bin/inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise inference silently runs on CPU"),
    C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")', "CUDA device"),
    C('if device.type == "cuda":', "device_type", "replace", True, 'if device.type == "npu":',
      "gates the sync before reading the timer; left as 'cuda' the NPU is never synchronised and the reported RTF is wrong "
      "(kernels are asynchronous)"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "inside the ported guard this would initialise CUDA and raise on an NPU host"),
])
E("sheet_trainer", "sheet/trainers/base.py", X, "unilight/sheet sheet/trainers/base.py (ParallelWaveGAN Trainer)", [
    C("torch.cuda.max_memory_allocated()", "torch_cuda_api", "replace", True,
      'self.total_train_loss["train/max_memory_gb"] = torch.npu.max_memory_allocated() / 2**30',
      "with CUDA uninitialised it returns 0, so the logged peak memory is silently wrong"),
])
E("sheet_ldnet", "sheet/models/ldnet.py", X, "unilight/sheet sheet/models/ldnet.py (LDNet, MobileNetV3 + listener embedding)", [])
E("sheet_conf", "egs/bvcc/conf/ldnet-ml.yaml", X, "unilight/sheet egs/bvcc/conf/ldnet-ml.yaml", [])
E("sheet_run", "egs/bvcc/run.sh", X, "unilight/sheet egs/bvcc/run.sh (ESPnet-style recipe)", [
    C('CUDA_VISIBLE_DEVICES=0 ${cuda_cmd}', "env_var", "replace", False,
      'ASCEND_RT_VISIBLE_DEVICES=0 ${cuda_cmd} --gpu "${n_gpus}" "${outdir}/${name}/inference.log" \\',
      "ignored on Ascend, but inference uses the default device 0 anyway, so the effect is the same; renamed for clarity"),
])
E("sheet_path", "egs/bvcc/path.sh", X, "unilight/sheet egs/bvcc/path.sh", [
    C("export CUDA_HOME=/usr/local/cuda-11.8", "env_var", "replace", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "every recipe stage sources path.sh; the CANN environment must be set up for torch_npu"),
    C('export LD_LIBRARY_PATH="${CUDA_HOME}/lib64:${LD_LIBRARY_PATH}"', "env_var", "removal", False, None,
      "points at a CUDA install that does not exist on the NPU host; harmless"),
])
