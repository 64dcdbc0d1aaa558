# Labels for probe423 (handwritten text / math expression recognition).
# One C(...) per upstream line a careful porter would edit for Ascend NPU (explicit torch_npu port).
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


X = "explicit_replacement"
TROCR_NB = "NielsRogge/Transformers-Tutorials TrOCR fine-tuning notebooks, as a script repo"
UNILM = "microsoft/unilm trocr/ (fairseq-based TrOCR)"
COMER = "Green-Wood/CoMER (built on Green-Wood/BTTR, PyTorch Lightning 1.4)"
WAP = "PyTorch ports of JianshuZhang/WAP (Watch, Attend and Parse, DenseNet encoder)"
FLOR = "PyTorch port of arthurflor23/handwritten-text-recognition (HTR-Flor, CTC line recognizer)"

# ---------------------------------------------------------------- TrOCR fine-tuning (HF)
E("trocr_ft_train", "train.py", X, TROCR_NB + " train.py (plain loop, AMP, optional DDP)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "target torch 2.1.0 + torch_npu 2.1.0.postN: the NPU backend is only registered after import "
      "(autoload starts at torch_npu 2.5.1)"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "on an NPU host the CUDA call is a lazily queued no-op; torch.manual_seed above already seeds the "
      "accelerator generators (unconfirmed for every torch_npu version) - ported for fidelity"),
    C('dist.init_process_group(backend="nccl"', "dist_backend", "replace", True,
      'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on Ascend; HCCL is the collective backend"),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", "raises without CUDA"),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', "per-rank device"),
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if torch.npu.is_available() else "cpu")',
      "unchanged it silently trains on the CPU"),
    C("        pin_memory=True,", "pin_memory", "replace", False, '        pin_memory=True, pin_memory_device="npu",',
      "performance only: with an empty pin_memory_device the torch 2.1 DataLoader pins only when CUDA is "
      "available, so pinning silently turns off on an NPU host"),
    C("n_gpu visible: %d", "torch_cuda_api", "replace", False,
      'logger.info("device: %s, n_npu visible: %d", device, torch.npu.device_count())',
      "log line only; torch.cuda.device_count() returns 0 on an NPU host"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "the CUDA scaler disables itself with a warning when CUDA is absent: --fp16 would run without loss "
      "scaling on the NPU autocast path"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "CUDA autocast does not touch NPU tensors: --fp16 would silently run in fp32 (memory/throughput the "
      "batch size was tuned for)"),
    C("        torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "        torch.npu.synchronize()",
      "initialises CUDA and raises on an NPU host"),
    C("mem = torch.cuda.max_memory_allocated() / 1024 ** 3", "torch_cuda_api", "replace", False,
      "mem = torch.npu.max_memory_allocated() / 1024 ** 3",
      "logging only; the CUDA call returns 0 when CUDA was never initialised"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "no-op without CUDA; the NPU caching allocator is simply not trimmed before eval"),
])

E("trocr_ft_dataset", "src/dataset.py", X, TROCR_NB + " IAM dataset helpers", [])
E("trocr_ft_metrics", "src/metrics.py", X, TROCR_NB + " CER/WER metric", [])

E("trocr_ft_seq2seq", "train_seq2seq.py", X, TROCR_NB + " Seq2SeqTrainer variant", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = "1"', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "1"',
      "selects the second card; ignored on Ascend, so the Trainer would take npu:0 (the busy card)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "the ported bf16 check below calls torch.npu before transformers imports torch_npu itself"),
    C("use_bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()", "device_capability_check",
      "replace", False, "use_bf16 = torch.npu.is_available() and torch.npu.is_bf16_supported()",
      "short-circuits to False on an NPU host, so training falls back to fp16 - which works on NPU; the "
      "port restores the intended bf16 on Atlas A2/A3"),
])

E("trocr_ft_infer", "inference.py", X, TROCR_NB + " batch inference script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEVICE = "npu:0" if torch.npu.is_available() else "cpu"', "module-level device global; silently CPU otherwise"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)", "--benchmark path; CUDA events fail without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)", "--benchmark path"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "--benchmark path; raises without CUDA"),
])

E("trocr_ft_requirements", "requirements.txt", X, TROCR_NB + " requirements", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "x86 hosts take CPU torch from the cpu index, aarch64 uses plain PyPI; with the pins below fixed the "
      "CUDA index is only wasteful (unconfirmed whether a CUDA torch build coexists with torch_npu)"),
    C("torch==2.1.2+cu118", "device_type", "replace", True, "torch==2.1.0",
      "torch_npu wheels pair with an exact torch x.y.z (2.1.0 for the 2.1 line); +cu118 has no aarch64 wheel"),
    C("torchvision==0.16.2+cu118", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build tag; torchvision 0.16.0 pairs with torch 2.1.0"),
    C("transformers==4.36.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "adds the Ascend adapter (2.1.0.post17 pairs with CANN 8.3.RC1); transformers >= 4.32 has native NPU support"),
])

E("trocr_ft_ddp_sh", "scripts/train_ddp.sh", X, TROCR_NB + " torchrun launcher", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-4,5,6,7}",
      "picks cards 4-7; ignored on Ascend, so ranks would land on cards 0-3"),
    C("export OMP_NUM_THREADS=8", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment; harmless if the login shell already sources it (environment-dependent)"),
    C('NGPU=$(echo "$CUDA_VISIBLE_DEVICES"', "env_var", "replace", True,
      "NGPU=$(echo \"$ASCEND_RT_VISIBLE_DEVICES\" | tr ',' '\\n' | wc -l)",
      "after the export above is ported CUDA_VISIBLE_DEVICES is unset and `set -u` aborts the script"),
    C("nvidia-smi --query-gpu=", "device_capability_check", "replace", True, "npu-smi info",
      "no nvidia-smi on an Ascend host; `set -e` aborts on the missing command"),
])

# ---------------------------------------------------------------- microsoft/unilm TrOCR (fairseq)
E("unilm_trocr_pic", "trocr/pic_inference.py", X, UNILM + " pic_inference.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() else "cpu"', "silently CPU otherwise (and --fp16 on CPU)"),
])
E("unilm_trocr_task", "trocr/task.py", X, UNILM + " task.py (text_recognition task)", [])
E("unilm_trocr_models", "trocr/trocr_models.py", X, UNILM + " trocr_models.py (TrOCR architectures)", [])
E("unilm_trocr_aug", "trocr/data_aug.py", X, UNILM + " data_aug.py", [])

E("unilm_trocr_ft_sh", "trocr/scripts/finetune_iam.sh", X, UNILM + " README fine-tuning command as a script", [
    C("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch", "env_var", "replace", False,
      "ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=8 \\",
      "lists every card of an 8-card host, i.e. the default; inert but ported for fidelity"),
    C("--num-workers 8 --preprocess DA2 --update-freq 1", "dist_backend", "replace", True,
      "    --num-workers 8 --preprocess DA2 --update-freq 1 --distributed-backend hccl \\",
      "fairseq's --distributed-backend defaults to nccl; fairseq itself also needs NPU device support "
      "(some forks add --npu; unconfirmed upstream)"),
])
E("unilm_trocr_eval_sh", "trocr/scripts/eval_iam.sh", X, UNILM + " README evaluation command as a script", [])

E("unilm_trocr_setup_sh", "trocr/setup_env.sh", X, UNILM + " install steps (torch cu111, fairseq, apex)", [
    C("pip install torch==1.9.0+cu111", "device_type", "replace", True,
      "pip install torch==1.11.0 torchvision==0.12.0 torch-npu==1.11.0.post14",
      "no torch_npu exists for torch 1.9; 1.11.0 is the closest line that still supports the Python 3.7 "
      "env (EOL, CANN 8.0.RC2); cu111 wheels are x86-only"),
    C('--global-option="--cuda_ext"', "custom_cuda_extension", "removal", True, None,
      "apex's CUDA extensions cannot build without nvcc and `set -e` aborts; fairseq only uses apex "
      "FusedLayerNorm when CUDA is available, so dropping it loses nothing on NPU"),
    C("python -c \"import torch; print(torch.__version__, torch.cuda.is_available())\"", "torch_cuda_api",
      "replace", False, "python -c \"import torch, torch_npu; print(torch.__version__, torch.npu.is_available())\"",
      "sanity print only"),
])

# ---------------------------------------------------------------- CoMER / BTTR (Lightning)
E("comer_config", "config.yaml", X, COMER + " config.yaml", [
    C("gpus: 0, 1, 2, 3", "device_type", "replace", True, "devices: 4",
      "`gpus` selects the CUDA accelerator; NPU devices are requested with devices + accelerator"),
    C("accelerator: ddp", "device_type", "replace", True, "accelerator: npu",
      "Lightning has no built-in NPU accelerator (upstream PR #19308 closed); the port registers a small custom "
      "Accelerator under the name 'npu' (see train.py) and moves to a Lightning release with strategies "
      "(1.8.x assumed, unconfirmed)"),
    C("=plugins:", "distributed_framework", "replace", False, "strategy:",
      "DDPPlugin became DDPStrategy in the Lightning upgrade the port needs - forced by the upgrade, not by "
      "the NPU (unconfirmed exact version)"),
    C("class_path: pytorch_lightning.plugins.DDPPlugin", "distributed_framework", "replace", False,
      "  class_path: pytorch_lightning.strategies.DDPStrategy", "same upgrade knock-on (unconfirmed)"),
    C("find_unused_parameters: false", "dist_backend", "npu_only_addition", True,
      "        process_group_backend: hccl",
      "a non-CUDA root device makes Lightning default the process group to gloo, which cannot reduce NPU tensors"),
])
E("comer_train", "train.py", X, COMER + " train.py (LightningCLI)", [
    C("from pytorch_lightning.utilities.cli import LightningCLI", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry point; torch_npu 1.11 line does not autoload"),
    C("from comer.datamodule import CROHMEDatamodule", "device_type", "npu_only_addition", True,
      "from comer.npu_accelerator import NPUAccelerator  # registers accelerator='npu'",
      "the config's accelerator: npu only resolves once the custom accelerator is registered"),
    C("from comer.lit_comer import LitCoMER", "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "performance: CROHME batches have a different H x W every step (dynamic shapes); msFmkTransplt advises "
      "jit_compile=False for dynamic shapes (unconfirmed on the 1.11 line)"),
])
E("comer_lit", "comer/lit_comer.py", X, COMER + " lit_comer.py (LightningModule)", [
    C("optimizer = optim.Adadelta(", "fused_optimizer", "replace", False,
      "optimizer = torch_npu.optim.NpuFusedAdadelta(",
      "performance only (msFmkTransplt advice); needs `import torch_npu` here; on the 1.11 line the class "
      "lives in Ascend apex as apex.optimizers.NpuFusedAdadelta"),
])
E("comer_arm", "comer/model/transformer/arm.py", X, COMER + " attention refinement module", [])
E("comer_gen", "comer/utils/generation_utils.py", X, COMER + " bidirectional beam search", [])
E("comer_utils", "comer/utils/utils.py", X, COMER + " ExpRate metric and target helpers", [])
E("comer_datamodule", "comer/datamodule/datamodule.py", X, COMER + " CROHME datamodule", [])
E("comer_test", "scripts/test/test.py", X, COMER + " scripts/test/test.py", [
    C("from pytorch_lightning import Trainer, seed_everything", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu", "entry point"),
    C("from comer.lit_comer import LitCoMER", "device_type", "npu_only_addition", True,
      "from comer.npu_accelerator import NPUAccelerator  # registers accelerator='npu'",
      "registration for the accelerator name used below"),
    C("trainer = Trainer(logger=False, gpus=1)", "device_type", "replace", True,
      'trainer = Trainer(logger=False, accelerator="npu", devices=1)',
      "gpus=1 asks for CUDA and fails on an NPU host"),
])
E("comer_env", "environment.yaml", X, COMER + " README install steps as a conda env file", [
    C("--extra-index-url https://download.pytorch.org/whl/cu111", "device_type", "replace", False,
      "      - --extra-index-url https://download.pytorch.org/whl/cpu",
      "only wasteful once the pins below lose their +cu111 tag"),
    C("- torch==1.8.1+cu111", "device_type", "replace", True, "      - torch==1.11.0",
      "CUDA build; torch_npu 1.11.0 is the newest line that keeps Python 3.7 (EOL)"),
    C("- torchvision==0.9.1+cu111", "device_type", "replace", True, "      - torchvision==0.12.0",
      "CUDA build tag; 0.12.0 pairs with torch 1.11.0"),
    C("- pytorch-lightning==1.4.9", "distributed_framework", "replace", True, "      - pytorch-lightning==1.8.6",
      "1.4 cannot take a custom accelerator or a process-group backend; 1.8.x assumed (unconfirmed)"),
    C("- einops==0.3.2", "import_torch_npu", "npu_only_addition", True, "      - torch-npu==1.11.0.post14",
      "adds the Ascend adapter matching torch 1.11.0"),
])

# ---------------------------------------------------------------- WAP (PyTorch port)
E("wap_train", "train_wap.py", X, WAP + " train_wap.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "lazy no-op on an NPU host; torch.manual_seed already seeds the NPU generator"),
    C("WAP_model = nn.DataParallel(WAP_model, device_ids=[0, 1, 2, 3])", "distributed_framework", "replace", True,
      "WAP_model = nn.parallel.DistributedDataParallel(WAP_model.npu(), device_ids=[int(os.environ['LOCAL_RANK'])])",
      "multi_gpu_flag path: nn.DataParallel is unsupported on Ascend; DDP also needs "
      "init_process_group('hccl') and a torchrun launch"),
    C("=WAP_model.cuda()", "tensor_to_device", "replace", True, "WAP_model.npu()", "model placement"),
    C("x = torch.from_numpy(x).cuda()", "tensor_to_device", "replace", True,
      "x = torch.from_numpy(x).npu()  # (batch,1,H,W)", "input batch"),
    C("x_mask = torch.from_numpy(x_mask).cuda()", "tensor_to_device", "replace", True,
      "x_mask = torch.from_numpy(x_mask).npu()  # (batch,H,W)", "input batch"),
    C("y = torch.from_numpy(y).cuda()", "tensor_to_device", "replace", True,
      "y = torch.from_numpy(y).npu()  # (seqs_y,batch)", "targets"),
    C("y_mask = torch.from_numpy(y_mask).cuda()", "tensor_to_device", "replace", True,
      "y_mask = torch.from_numpy(y_mask).npu()  # (seqs_y,batch)", "targets"),
    C("xx_pad = torch.from_numpy(xx_pad[None, :, :, :]).cuda()", "tensor_to_device", "replace", True,
      "xx_pad = torch.from_numpy(xx_pad[None, :, :, :]).npu()  # (1,1,H,W)", "validation decode input"),
])
E("wap_model", "encoder_decoder.py", X, WAP + " encoder_decoder.py (coverage attention GRU decoder)", [
    C("emb = torch.zeros(1, params['m']).cuda()", "tensor_to_device", "replace", True,
      "emb = torch.zeros(1, params['m'], device=y.device)", "hard-coded CUDA allocation inside the model"),
    C("emb_shifted = torch.zeros(", "tensor_to_device", "replace", True,
      "emb_shifted = torch.zeros([emb.shape[0], emb.shape[1], params['m']], dtype=torch.float32, device=emb.device)",
      "hard-coded CUDA allocation"),
    C("mask = torch.ones(embedding.shape[0]).cuda()", "tensor_to_device", "replace", True,
      "mask = torch.ones(embedding.shape[0], device=embedding.device)", "decode-step mask"),
    C("alpha_past = torch.zeros(n_samples, context.shape[2], context.shape[3]).cuda()", "tensor_to_device",
      "replace", True, "alpha_past = torch.zeros(n_samples, context.shape[2], context.shape[3], device=context.device)",
      "coverage accumulator"),
    C("h2ts = torch.zeros(n_steps, n_samples, params['n']).cuda()", "tensor_to_device", "replace", True,
      "h2ts = torch.zeros(n_steps, n_samples, params['n'], device=context.device)", "state buffer"),
    C("cts = torch.zeros(n_steps, n_samples, params['D']).cuda()", "tensor_to_device", "replace", True,
      "cts = torch.zeros(n_steps, n_samples, params['D'], device=context.device)", "context buffer"),
    C("alphas = (torch.zeros(n_steps, n_samples", "tensor_to_device", "replace", True,
      "alphas = torch.zeros(n_steps, n_samples, context.shape[2], context.shape[3], device=context.device)",
      "attention buffer"),
    C("alpha_pasts = torch.zeros(n_steps, n_samples", "tensor_to_device", "replace", True,
      "alpha_pasts = torch.zeros(n_steps, n_samples, context.shape[2], context.shape[3], device=context.device)",
      "coverage buffer"),
    C("x_mask = torch.ones(shape).cuda()", "tensor_to_device", "replace", True,
      "x_mask = torch.ones(shape, device=x.device)", "f_init default mask (decoding)"),
])
E("wap_densenet", "densenet.py", X, WAP + " densenet.py (DenseNet-B encoder)", [])
E("wap_utils", "utils.py", X, WAP + " utils.py (data iterator, beam search)", [
    C("# <bos> is -1", "tensor_to_device", "replace", True,
      "next_w = torch.from_numpy(next_w).npu()  # <bos> is -1", "beam-search state"),
    C("next_alpha_past = torch.zeros(1, ctx0.shape[2], ctx0.shape[3]).cuda()", "tensor_to_device", "replace", True,
      "next_alpha_past = torch.zeros(1, ctx0.shape[2], ctx0.shape[3], device=x.device)", "beam-search state"),
    C("ctx = torch.from_numpy(ctx).cuda()", "tensor_to_device", "replace", True,
      "ctx = torch.from_numpy(ctx).npu()", "tiled encoder context per step"),
    C("=next_w = torch.from_numpy(next_w).cuda()", "tensor_to_device", "replace", True,
      "next_w = torch.from_numpy(next_w).npu()", "beam-search state"),
    C("next_state = torch.from_numpy(next_state).cuda()", "tensor_to_device", "replace", True,
      "next_state = torch.from_numpy(next_state).npu()", "beam-search state"),
    C("next_alpha_past = torch.from_numpy(next_alpha_past).cuda()", "tensor_to_device", "replace", True,
      "next_alpha_past = torch.from_numpy(next_alpha_past).npu()", "beam-search state"),
])
E("wap_translate", "translate.py", X, WAP + " translate.py (test-set decoding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C("state = torch.load(model_path)", "tensor_to_device", "replace", True,
      "state = torch.load(model_path, map_location='cpu')",
      "the checkpoint holds CUDA tensors (saved from the .cuda() model); without map_location torch.load "
      "tries to restore them on CUDA and fails"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "model placement"),
    C("xx_pad = torch.from_numpy(xx_pad[None, :, :, :]).cuda()", "tensor_to_device", "replace", True,
      "xx_pad = torch.from_numpy(xx_pad[None, :, :, :]).npu()  # (1,1,H,W)", "decode input"),
    C("os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu", "env_var", "replace", True,
      "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = args.gpu",
      "--gpu picks the card; ignored on Ascend so any --gpu other than 0 silently decodes on card 0 (set "
      "before first device use; same timing assumed for the Ascend runtime, unconfirmed)"),
])

# ---------------------------------------------------------------- HTR-Flor (PyTorch port)
E("htr_main", "src/main.py", X, FLOR + " src/main.py", [
    C("print(f\"GPU {index}:", "torch_cuda_api", "replace", False,
      'print(f"NPU {index}: free/total bytes {torch.npu.mem_get_info(index)}")',
      "pynvml/NVML has no Ascend counterpart; wrapped in try/except so it only degrades to a message "
      "(the pynvml lines above become dead once this prints from torch.npu)"),
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry point"),
    C('device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")', "device_type",
      "replace", True, 'device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")',
      "silently CPU otherwise"),
    C('if device.type == "cuda":', "device_type", "replace", False, 'if device.type == "npu":',
      "unchanged, the block (set_device + banner) is skipped; tensors still go to npu:N explicitly, so only "
      "the current-device setting and logs are lost (unconfirmed whether any op needs it)"),
    C("torch.cuda.set_device(args.gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.gpu)",
      "raises once the guard above is ported"),
    C("torch.cuda.get_device_name(args.gpu)", "torch_cuda_api", "replace", True,
      'print(f"Using {torch.npu.get_device_name(args.gpu)}")', "raises once the guard above is ported"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'f"Peak NPU memory:         {torch.npu.max_memory_allocated() / 2**30:.2f} GiB",',
      "report line only; the CUDA call returns 0"),
])
E("htr_model", "src/network/model.py", X, FLOR + " src/network/model.py (HTRModel, Flor/Puigcerver)", [
    C("bidirectional=True, batch_first=True, dropout=dropout)", "unsupported_op_workaround", "replace", False,
      "bidirectional=True, batch_first=True)  # inter-layer dropout moved to an explicit nn.Dropout",
      "Ascend's 2.7.1 API list says nn.GRU does not support the dropout argument; effect (error or ignored) "
      "unconfirmed, and the full fix splits the 2-layer GRU in forward() too"),
    C("from warpctc_pytorch import CTCLoss as WarpCTCLoss", "custom_cuda_extension", "replace", False,
      'raise ValueError("warp-ctc (warpctc_pytorch) is CUDA-only; use --ctc pytorch on Ascend NPU")',
      "opt-in --ctc warp cannot work on NPU either way; the port turns the ImportError into a clear message"),
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.amp)", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.amp)",
      "--amp: the CUDA scaler disables itself without CUDA"),
    C("self.optimizer = torch.optim.RMSprop(", "fused_optimizer", "replace", False,
      "self.optimizer = torch_npu.optim.NpuFusedRMSprop(self.model.parameters(), lr=learning_rate)",
      "performance only (msFmkTransplt advice)"),
    C("log_probs = F.log_softmax(logits, dim=2).permute(1, 0, 2)", "amp", "replace", False,
      "log_probs = F.log_softmax(logits.float(), dim=2).permute(1, 0, 2)",
      "runs inside autocast; CUDA autocast keeps log_softmax/ctc_loss in fp32, and Ascend's CTCLoss takes "
      "fp32/fp64 only - whether NPU autocast casts these is unconfirmed, so make it explicit"),
    C("=with torch.cuda.amp.autocast(enabled=self.amp):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=self.amp):", "--amp silently becomes fp32 otherwise"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "raises without CUDA"),
    C("# fp16 inference", "amp", "replace", True, "with torch.npu.amp.autocast(enabled=self.amp):  # fp16 inference",
      "inference autocast"),
])
E("htr_layers", "src/network/layers.py", X, FLOR + " gated convolution layers", [])
E("htr_generator", "src/data/generator.py", X, FLOR + " src/data/generator.py", [
    C("pin_memory=torch.cuda.is_available(),", "pin_memory", "replace", False,
      'pin_memory=torch.npu.is_available(), pin_memory_device="npu",',
      "performance only: evaluates to False on an NPU host, so batches are never pinned"),
])
E("htr_evaluation", "src/data/evaluation.py", X, FLOR + " src/data/evaluation.py", [])
E("htr_docker", "Dockerfile", X, FLOR + " Dockerfile", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the CUDA runtime image has no CANN; an Ascend CANN base image is needed (tag illustrative, unconfirmed)"),
    C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "replace", False, "ENV ASCEND_VISIBLE_DEVICES=0-7",
      "read by the NVIDIA container runtime only; Ascend Docker Runtime uses ASCEND_VISIBLE_DEVICES, usually "
      "passed at `docker run` time (unconfirmed that an image ENV is honoured)"),
    C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None, "inert on Ascend"),
    C('ENTRYPOINT ["python3", "main.py"]', "env_var", "replace", False,
      'ENTRYPOINT ["bash", "-c", "source /usr/local/Ascend/ascend-toolkit/set_env.sh && exec python3 main.py \\"$@\\"", "--"]',
      "sources the CANN environment; unnecessary if the base image already exports it (unconfirmed)"),
])
E("htr_requirements", "requirements.txt", X, FLOR + " requirements.txt", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu", "only wasteful once the pins lose +cu118"),
    C("torch==2.0.1+cu118", "device_type", "replace", True, "torch==2.1.0",
      "2.0.1 only has an EOL torch_npu; 2.1.0 pairs with maintained torch_npu 2.1.0.postN; +cu118 has no aarch64 wheel"),
    C("torchvision==0.15.2+cu118", "device_type", "replace", True, "torchvision==0.16.0",
      "CUDA build tag; 0.16.0 pairs with torch 2.1.0"),
    C("numpy>=1.22", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
      "adds the Ascend adapter"),
    C("nvidia-ml-py>=11.525", "device_capability_check", "removal", False, None,
      "NVML bindings; only used by the best-effort GPU stats helper"),
])
