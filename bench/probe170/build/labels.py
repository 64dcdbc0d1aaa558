"""Labels for probe170: older Hugging Face example / research-project scripts (CUDA -> Ascend NPU).

Each C(...) names one upstream line by a substring that must occur on exactly one line of the file
("=text" matches a line whose stripped text equals text).
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# Shared notes (kept short on purpose; the README explains the policy).
N_IMPORT = "torch_npu must be imported before any NPU use (torch_npu of this era has no device-backend autoload)"
N_SEED = ("no-op on an NPU host (lazily queued CUDA seeding); torch.manual_seed already seeds the npu generator "
          "in recent torch (unconfirmed in knowledge), so this is for explicitness only")
N_ISAVAIL_DEV = "torch.cuda.is_available() is False on an NPU host, so the script silently trains on CPU"
N_COUNT = "torch.cuda.device_count() returns 0 on an NPU host: n_gpu is wrong (logging, batch size, seed/averaging guards)"
N_SETDEV = "torch.cuda.set_device raises on an NPU host (no CUDA runtime); each rank must bind its NPU"
N_DEVOBJ = "a cuda device object; every later .to(args.device) fails on an NPU host"
N_NCCL = "NCCL is not available in the torch_npu build; Ascend collectives use HCCL"
N_DP = ("torch.nn.DataParallel is unsupported on Ascend (✘ in the 2.7.1 API list); use one process per NPU "
        "via torch.distributed.launch/DDP instead")
N_APEX_AMP = ("works unchanged once Ascend's apex patch is installed instead of NVIDIA apex; combine_grad=True "
              "is the Ascend apex fast path for unscaling (performance only)")

E("hf_run_glue", "examples/text-classification/run_glue.py", "explicit_replacement",
  "huggingface/transformers examples/text-classification/run_glue.py (v2.x manual training loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      N_APEX_AMP),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; use torch.distributed.launch for multi-NPU\")", N_DP),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()", N_COUNT),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", N_SETDEV),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', N_DEVOBJ),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', N_NCCL),
])

E("hf_run_squad", "examples/question-answering/run_squad.py", "explicit_replacement",
  "huggingface/transformers examples/question-answering/run_squad.py (v2.x/3.0 manual loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      N_APEX_AMP),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; use torch.distributed.launch for multi-NPU\")", N_DP),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()", N_COUNT),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", N_SETDEV),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', N_DEVOBJ),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', N_NCCL),
])

E("hf_run_lm", "examples/language-modeling/run_language_modeling.py", "explicit_replacement",
  "huggingface/transformers examples/language-modeling/run_language_modeling.py (v2.x, pre-Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      N_APEX_AMP),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; use torch.distributed.launch for multi-NPU\")", N_DP),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()", N_COUNT),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", N_SETDEV),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', N_DEVOBJ),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', N_NCCL),
])

N_TIMING_DEAD = ("only reached when args.device.type == 'cuda', i.e. dead on NPU until the branch condition is ported; "
                 "port together with it (timing only)")
E("hf_run_generation", "examples/text-generation/run_generation.py", "explicit_replacement",
  "huggingface/transformers examples/text-generation/run_generation.py (v2.x/3.x) with a local latency helper", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C('if args.device.type != "cuda":', "device_type", "replace", False, 'if args.device.type != "npu":',
      "on NPU the host-clock path is taken without a device sync; generate() syncs every step so the number is "
      "roughly right (timing only)"),
    C("start_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
      "start_event = torch.npu.Event(enable_timing=True)", N_TIMING_DEAD),
    C("end_event = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", False,
      "end_event = torch.npu.Event(enable_timing=True)", N_TIMING_DEAD),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", False, "torch.npu.synchronize()", N_TIMING_DEAD),
    C("torch.cuda.synchronize(args.device)", "torch_cuda_api", "replace", False,
      "torch.npu.synchronize(args.device)", N_TIMING_DEAD),
    C('args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'args.device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")', N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", False,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()",
      "here n_gpu only feeds the log line and the (no-op) seed guard; wrong count but no effect on generation"),
])

E("distil_utils", "examples/research_projects/distillation/utils.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/distillation/utils.py (init_gpu_params, set_seed)", [
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True, "assert torch.npu.is_available()",
      "AssertionError on an NPU host whenever --n_gpu > 0"),
    C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(params.local_rank)", N_SETDEV),
    C('init_method="env://", backend="nccl",', "dist_backend", "replace", True, 'init_method="env://", backend="hccl",',
      N_NCCL),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
])

E("distil_distiller", "examples/research_projects/distillation/distiller.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/distillation/distiller.py (Distiller class)", [
    C('self.pred_probs = self.pred_probs.to(f"cuda:{params.local_rank}")', "tensor_to_device", "replace", True,
      'self.pred_probs = self.pred_probs.to(f"npu:{params.local_rank}") if params.n_gpu > 0 else self.pred_probs',
      "hard-coded cuda:<rank> device string; fails on an NPU host"),
    C('self.token_probs = token_probs.to(f"cuda:{params.local_rank}")', "tensor_to_device", "replace", True,
      'self.token_probs = token_probs.to(f"npu:{params.local_rank}") if params.n_gpu > 0 else token_probs',
      "hard-coded cuda:<rank> device string; fails on an NPU host"),
    C("self.student, self.optimizer, opt_level=self.params.fp16_opt_level", "amp", "replace", False,
      "self.student, self.optimizer, opt_level=self.params.fp16_opt_level, combine_grad=True", N_APEX_AMP),
    C("from apex.parallel import DistributedDataParallel", "distributed_framework", "replace", False,
      "from torch.nn.parallel import DistributedDataParallel",
      "apex.parallel.DDP buckets grads by 'torch.cuda.*Tensor' type strings; whether Ascend's apex patch covers it is "
      "unconfirmed, native DDP over HCCL is the safe choice"),
    C('batch = tuple(t.to(f"cuda:{self.params.local_rank}") for t in batch)', "tensor_to_device", "replace", True,
      'batch = tuple(t.to(f"npu:{self.params.local_rank}") for t in batch)',
      "every training batch is moved to a cuda:<rank> device; fails on an NPU host"),
    C("scalar_value=torch.cuda.max_memory_allocated() / 1_000_000,", "torch_cuda_api", "replace", False,
      "scalar_value=torch.npu.max_memory_allocated() / 1_000_000,",
      "returns 0 on an NPU host (CUDA never initialised); only a tensorboard scalar is wrong"),
])

E("distil_train", "examples/research_projects/distillation/train.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/distillation/train.py (DistilBERT/DistilGPT2 entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      N_IMPORT + "; this is the entry point that then imports distiller/utils"),
    C('student.to(f"cuda:{args.local_rank}")', "tensor_to_device", "replace", True,
      'student.to(f"npu:{args.local_rank}")', "student moved to a cuda:<rank> device; fails on an NPU host"),
    C('teacher.to(f"cuda:{args.local_rank}")', "tensor_to_device", "replace", True,
      'teacher.to(f"npu:{args.local_rank}")', "teacher moved to a cuda:<rank> device; fails on an NPU host"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); the NPU caching allocator is not touched"),
])

N_SETENV = ("CANN's environment (LD_LIBRARY_PATH to libascendcl/libhccl, ASCEND_* paths) must be sourced before "
            "python imports torch_npu; on a bare host the import fails otherwise")
N_CVD = ("CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: every process still sees all NPUs, so the job "
         "silently lands on other cards than intended")
E("distil_launch", "examples/research_projects/distillation/scripts/train_distilbert_multi_gpu.sh",
  "explicit_replacement",
  "huggingface/transformers distillation README multi-GPU launch command, as a shell launcher", [
    C("=set -e", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", N_SETENV),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
      N_CVD),
    C("export NCCL_DEBUG=INFO", "env_var", "replace", False, "export ASCEND_GLOBAL_LOG_LEVEL=1",
      "NCCL_* is ignored by HCCL; debug verbosity only (exact HCCL/CANN log switch unconfirmed)"),
    C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
      "no HCCL meaning; HCCL takes its NICs from hccn.conf / HCCL_SOCKET_IFNAME; harmless leftover"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", True,
      "npu-smi info",
      "nvidia-smi does not exist on an Ascend host; under `set -e` the launcher aborts before training starts"),
])

E("distil_extract", "examples/research_projects/distillation/scripts/extract_distilbert.py", "explicit_replacement",
  "huggingface/transformers distillation/scripts/extract_distilbert.py (teacher layer extraction; CPU only)", [
    # deliberately empty: pure CPU state_dict surgery; torch.load already uses map_location="cpu"
])

E("mp_masked_run_squad", "examples/research_projects/movement-pruning/masked_run_squad.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/movement-pruning/masked_run_squad.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C("model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)", "amp", "replace", False,
      "model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level, combine_grad=True)",
      N_APEX_AMP),
    C("model = nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; use torch.distributed.launch for multi-NPU\")", N_DP),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "pass  # nn.DataParallel is not supported on NPU; evaluate on one NPU", N_DP),
    C('device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")', "device_type",
      "replace", True, 'device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")',
      N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()", N_COUNT),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", N_SETDEV),
    C('device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu", args.local_rank)', N_DEVOBJ),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")', N_NCCL),
])

E("mp_bertarize", "examples/research_projects/movement-pruning/bertarize.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/movement-pruning/bertarize.py (offline mask folding)", [
    C('model = torch.load(os.path.join(model_name_or_path, "pytorch_model.bin"))', "tensor_to_device", "replace",
      True, 'model = torch.load(os.path.join(model_name_or_path, "pytorch_model.bin"), map_location="cpu")',
      "the fine-pruned state_dict was saved from a device-resident model, so its storages carry a cuda (or, after "
      "the port, npu) location; without map_location the load fails on an NPU host. The folding itself is CPU work"),
])

E("bertology", "examples/research_projects/bertology/run_bertology.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/bertology/run_bertology.py (head importance / masking)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C('args.device = torch.device("cuda" if torch.cuda.is_available() and not args.no_cuda else "cpu")',
      "device_type", "replace", True,
      'args.device = torch.device("npu" if torch.npu.is_available() and not args.no_cuda else "cpu")', N_ISAVAIL_DEV),
    C("args.n_gpu = 0 if args.no_cuda else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "args.n_gpu = 0 if args.no_cuda else torch.npu.device_count()", N_COUNT),
    C("torch.cuda.set_device(args.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(args.local_rank)", N_SETDEV),
    C('args.device = torch.device("cuda", args.local_rank)', "device_type", "replace", True,
      'args.device = torch.device("npu", args.local_rank)', N_DEVOBJ),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl")  # Initializes the distributed backend', N_NCCL),
    C("model = torch.nn.DataParallel(model)", "unsupported_op_workaround", "replace", True,
      "logger.warning(\"nn.DataParallel is not supported on NPU; run with torch.distributed.launch instead\")", N_DP),
])

N_PL = ("Lightning of this era only knows CUDA GPUs/TPUs; asking for gpus>0 on a host without CUDA raises "
        "MisconfigurationException. Needs a Lightning build/plugin with an Ascend NPU accelerator (unconfirmed in "
        "knowledge)")
E("s2s_lightning_base", "examples/seq2seq/lightning_base.py", "explicit_replacement",
  "huggingface/transformers examples/lightning_base.py (v2.x/3.0, pl 0.7-0.8 generic_train with gpus=args.n_gpu)", [
    C("torch.cuda.manual_seed_all(args.seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(args.seed)", N_SEED),
    C("gpus=args.n_gpu,", "device_type", "replace", True, 'accelerator="npu", devices=args.n_gpu,', N_PL),
    C('train_params["use_amp"] = args.fp16', "amp", "replace", False, 'train_params["precision"] = 16',
      "Lightning's use_amp drives apex/torch.cuda.amp on CUDA; on NPU mixed precision must come from the NPU "
      "accelerator's precision plugin (unconfirmed)"),
    C('train_params["distributed_backend"] = "ddp"', "dist_backend", "replace", False,
      'train_params["strategy"] = DDPStrategy(process_group_backend="hccl")',
      "Lightning picks NCCL for GPU DDP; with an NPU accelerator the process group must be HCCL (how a given "
      "Lightning NPU plugin selects it is unconfirmed)"),
])

E("s2s_finetune", "examples/seq2seq/finetune.py", "explicit_replacement",
  "huggingface/transformers examples/seq2seq/finetune.py (SummarizationModule / TranslationModule on Lightning)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      N_IMPORT + "; finetune.py is the entry point for lightning_base"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "without CUDA the DataLoader silently drops pinning unless told the npu pin device (performance only; "
      "exact torch version behaviour unconfirmed in knowledge)"),
    C("if args.fp16 and not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if args.fp16 and not torch.npu.is_available():",
      "is_available() is False on an NPU host, so every --fp16 run aborts with this ValueError"),
])

E("s2s_run_eval", "examples/seq2seq/run_eval.py", "device_branch_or_abstraction",
  "huggingface/transformers examples/seq2seq/run_eval.py (batch generation + ROUGE/BLEU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C('DEFAULT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'DEFAULT_DEVICE = "npu" if torch.npu.is_available() else "cpu"',
      "module-level default device; is_available() is False on an NPU host so generation silently runs on CPU"),
])

E("s2s_dist_eval", "examples/seq2seq/run_distributed_eval.py", "explicit_replacement",
  "huggingface/transformers examples/seq2seq/run_distributed_eval.py (one process per GPU, json gather)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C('torch.distributed.init_process_group(backend="nccl", rank=local_rank)', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl", rank=local_rank)', N_NCCL),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
      N_SETDEV),
    C("model = AutoModelForSeq2SeqLM.from_pretrained(model_name).cuda()", "tensor_to_device", "replace", True,
      "model = AutoModelForSeq2SeqLM.from_pretrained(model_name).npu()",
      ".cuda() raises on an NPU host; the batches follow model.device so only this line moves"),
])

E("s2s_finetune_sh", "examples/seq2seq/finetune.sh", "explicit_replacement",
  "huggingface/transformers examples/seq2seq/finetune.sh (+ a distributed-eval follow-up)", [
    C("=#!/usr/bin/env bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh", N_SETENV),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1", N_CVD),
])

E("examples_requirements", "examples/requirements.txt", "explicit_replacement",
  "huggingface/transformers examples/requirements.txt (v3.x era) with a CUDA wheel pin", [
    C("--find-links https://download.pytorch.org/whl/torch_stable.html", "import_torch_npu", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "the CUDA wheel index is useless on Ascend; x86 hosts take CPU torch from the whl/cpu index, aarch64 from PyPI"),
    C("torch==1.6.0+cu101", "import_torch_npu", "replace", True, "torch==2.1.0",
      "a +cu101 build of torch 1.6 has no torch_npu counterpart; torch must be a CPU build of a version torch_npu "
      "ships for (pairing per the compatibility table)"),
    C("=torchvision", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "the torch_npu wheel has to be installed next to the matching torch (2.1.0 <-> 2.1.0.postN)"),
    C("=faiss-gpu", "custom_cuda_extension", "replace", True, "faiss-cpu",
      "faiss-gpu is a CUDA build (StandardGpuResources etc.) with no Ascend backend; longform-qa must use CPU indexes"),
    C("=py3nvml", "torch_cuda_api", "removal", False, None,
      "NVML bindings only query NVIDIA drivers; used by the benchmark memory probe, which needs an NPU path instead"),
])

E("pplm", "examples/research_projects/pplm/run_pplm.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/pplm/run_pplm.py (Uber PPLM, trimmed)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", N_IMPORT),
    C('device = "cuda" if torch.cuda.is_available() and not no_cuda else "cpu"', "device_type", "replace", True,
      'device = "npu" if torch.npu.is_available() and not no_cuda else "cpu"',
      "the single device string every helper receives; is_available() is False on an NPU host, so PPLM's "
      "gradient-on-past loop silently runs on CPU"),
])

N_ELI5_DEF = ("hard-coded cuda:0 default; the notebook/app call these helpers without a device argument, so "
              "the default is what runs and it fails on an NPU host")
E("eli5_utils", "examples/research_projects/longform-qa/eli5_utils.py", "explicit_replacement",
  "huggingface/transformers examples/research_projects/longform-qa/eli5_utils.py (ELI5 retriever + BART, trimmed)", [
    C('def make_qa_retriever_model(model_name="google/bert_uncased_L-8_H-512_A-8", from_file=None, device="cuda:0"):',
      "device_type", "replace", True,
      'def make_qa_retriever_model(model_name="google/bert_uncased_L-8_H-512_A-8", from_file=None, device="npu:0"):',
      N_ELI5_DEF),
    C("param_dict = torch.load(from_file)  # has model weights, optimizer, and scheduler states", "tensor_to_device",
      "replace", True,
      'param_dict = torch.load(from_file, map_location="cpu")  # has model weights, optimizer, and scheduler states',
      "the retriever checkpoint was saved from a cuda:0 model (weights + optimizer state); loading it without "
      "map_location fails on an NPU host"),
    C('def make_qa_retriever_batch(qa_list, tokenizer, max_len=64, device="cuda:0"):', "device_type", "replace", False,
      'def make_qa_retriever_batch(qa_list, tokenizer, max_len=64, device="npu:0"):',
      "default never used: the only caller passes device explicitly (see the partial below); cleanup only"),
    C('make_qa_retriever_batch, tokenizer=tokenizer, max_len=args.max_length, device="cuda:0"', "device_type",
      "replace", True, 'make_qa_retriever_batch, tokenizer=tokenizer, max_len=args.max_length, device="npu:0"',
      "the training collate function is bound to cuda:0; every retriever batch fails on an NPU host"),
    C('def make_qa_s2s_model(model_name="facebook/bart-large", from_file=None, device="cuda:0"):', "device_type",
      "replace", True, 'def make_qa_s2s_model(model_name="facebook/bart-large", from_file=None, device="npu:0"):',
      N_ELI5_DEF),
    C("=param_dict = torch.load(from_file)", "tensor_to_device", "replace", True,
      'param_dict = torch.load(from_file, map_location="cpu")',
      "BART checkpoint saved from a cuda:0 model; fails to deserialize on an NPU host without map_location"),
    C('def embed_passages_for_retrieval(passages, tokenizer, qa_embedder, max_length=128, device="cuda:0"):',
      "device_type", "replace", True,
      'def embed_passages_for_retrieval(passages, tokenizer, qa_embedder, max_length=128, device="npu:0"):',
      N_ELI5_DEF),
    C("faiss_res = faiss.StandardGpuResources()", "custom_cuda_extension", "replace", True,
      "faiss_res = None  # faiss-gpu has no Ascend backend; keep the index on CPU",
      "faiss GPU resources need the CUDA build of faiss; not available on an Ascend host"),
    C("gpu_index_flat = faiss.index_cpu_to_gpu(faiss_res, 1, index_flat)", "custom_cuda_extension", "replace", True,
      "gpu_index_flat = index_flat",
      "moves the index to CUDA GPU 1; must stay a CPU index (or use_gpu_index defaults to False)"),
    C("question, qa_embedder, tokenizer, wiki_passages, wiki_index, n_results=10, min_length=20, device=\"cuda:0\"",
      "device_type", "replace", True,
      "question, qa_embedder, tokenizer, wiki_passages, wiki_index, n_results=10, min_length=20, device=\"npu:0\"",
      N_ELI5_DEF),
    C('def embed_questions_for_retrieval(q_ls, tokenizer, qa_embedder, device="cuda:0"):', "device_type", "replace",
      False, 'def embed_questions_for_retrieval(q_ls, tokenizer, qa_embedder, device="npu:0"):',
      "default shadowed: query_qa_dense_index always passes its own device; cleanup only"),
])

E("hf_benchmark_args", "src/transformers/benchmark/benchmark_args.py", "device_branch_or_abstraction",
  "huggingface/transformers src/transformers/benchmark/benchmark_args.py (v3.x PyTorchBenchmarkArguments)", [
    C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'elif is_torch_npu_available(): device, n_gpu = torch.device("npu:0"), torch.npu.device_count()',
      "without an NPU branch the benchmark silently measures the CPU (is_available() False, n_gpu 0) and refuses "
      "--fp16"),
    C("return torch.cuda.current_device()", "torch_cuda_api", "add_branch", False,
      'return torch.npu.current_device() if self.device.type == "npu" else torch.cuda.current_device()',
      "device_idx only feeds the NVML handle lookup in benchmark.py; unreachable on NPU once that path has its own "
      "branch"),
])

E("hf_benchmark", "src/transformers/benchmark/benchmark.py", "device_branch_or_abstraction",
  "huggingface/transformers src/transformers/benchmark/benchmark.py (v3.x PyTorchBenchmark, py3nvml memory probe)", [
    C("nvml.nvmlInit()", "torch_cuda_api", "add_branch", True,
      'if self.args.device.type == "npu": torch.npu.reset_peak_memory_stats(); func(); '
      "memory = Memory(torch.npu.max_memory_reserved())",
      "NVML needs the NVIDIA driver library; with py3nvml installed (it is in the requirements) nvmlInit raises on "
      "an Ascend host, without it the GPU memory column is silently N/A. NPU memory comes from torch.npu stats"),
])

E("hf_training_args", "src/transformers/training_args.py", "device_branch_or_abstraction",
  "huggingface/transformers src/transformers/training_args.py (v3.x TrainingArguments._setup_devices)", [
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
      'elif is_torch_npu_available(): device, n_gpu = torch.device("npu:0"), 1  # no nn.DataParallel on NPU',
      "without an NPU branch Trainer silently trains on CPU; n_gpu is pinned to 1 because Trainer would otherwise "
      "wrap the model in nn.DataParallel, which Ascend does not support"),
    C('torch.distributed.init_process_group(backend="nccl")', "dist_backend", "replace", True,
      'torch.distributed.init_process_group(backend="hccl" if is_torch_npu_available() else "nccl")', N_NCCL),
    C('device = torch.device("cuda", self.local_rank)', "device_type", "replace", True,
      'device = torch.device("npu" if is_torch_npu_available() else "cuda", self.local_rank)', N_DEVOBJ),
    C('if device.type == "cuda":', "torch_cuda_api", "add_branch", True,
      'elif device.type == "npu": torch.npu.set_device(device)',
      "the rank's NPU is never made current: all ranks' default device stays npu:0 and HCCL/allocations land on the "
      "wrong card"),
])

E("hf_testing_utils", "src/transformers/testing_utils.py", "device_branch_or_abstraction",
  "huggingface/transformers src/transformers/testing_utils.py (v3.x decorators and torch_device)", [
    C("if torch.cuda.device_count() < 2:", "torch_cuda_api", "add_branch", True,
      "if (torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()) < 2:",
      "counts 0 devices on an NPU host, so every multi-device test is silently skipped"),
    C("if torch.cuda.device_count() > 1:", "torch_cuda_api", "add_branch", True,
      "if (torch.npu.device_count() if is_torch_npu_available() else torch.cuda.device_count()) > 1:",
      "device count is wrong (0) on an NPU host; the gate never sees the real NPU count"),
    C('torch_device = "cuda" if parse_flag_from_env("USE_CUDA") else "cpu"', "device_type", "add_branch", True,
      'torch_device = "npu" if parse_flag_from_env("USE_NPU") else ("cuda" if parse_flag_from_env("USE_CUDA") else "cpu")',
      "the whole test suite's device: USE_CUDA=1 breaks every test on an NPU host, otherwise the suite silently "
      "never touches the NPU"),
    C('if torch_device != "cuda":', "device_type", "add_branch", False,
      'if torch_device not in ("cuda", "npu"):',
      "correctly reports 'not CUDA'; letting accelerator-only tests run on npu is a porting choice"),
])

E("hf_modeling_bert", "src/transformers/modeling_bert.py", "explicit_replacement",
  "huggingface/transformers src/transformers/modeling_bert.py, v2.0-era head of the file (apex FusedLayerNorm)", [
    C("from apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm", "custom_cuda_extension",
      "replace", True, "BertLayerNorm = torch.nn.LayerNorm",
      "with an apex installed for --fp16 (Ascend's apex patch) this import succeeds, but FusedLayerNorm loads the "
      "fused_layer_norm_cuda extension when the layer is built, which Ascend's apex does not ship: model construction "
      "fails outside this try/except. Use torch.nn.LayerNorm (NPU kernel)"),
    C("attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))", "attention_kernel", "replace",
      False,
      'context_layer = torch_npu.npu_fusion_attention(query_layer, key_layer, value_layer, self.num_attention_heads, '
      '"BNSD", atten_mask=attention_mask, scale=1.0 / math.sqrt(self.attention_head_size), '
      'keep_prob=1.0 - self.dropout.p)[0]',
      "eager matmul/softmax/matmul attention runs fine on NPU; the fused kernel is a performance option only, and "
      "only when output_attentions/head_mask are not needed (bertology needs both)"),
])

E("docker_gpu", "docker/transformers-pytorch-gpu/Dockerfile", "explicit_replacement",
  "huggingface/transformers docker/transformers-pytorch-gpu/Dockerfile (v3.x, builds NVIDIA apex)", [
    C("FROM nvidia/cuda:10.2-cudnn7-devel-ubuntu18.04", "import_torch_npu", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "the CUDA base image carries no CANN toolkit/driver user-space; torch_npu cannot load without CANN "
      "(image name is a plausible choice, not verified)"),
    C("=torch", "import_torch_npu", "replace", True, "torch==2.1.0 torch-npu==2.1.0.post10",
      "unpinned torch pulls the newest CUDA build on x86; it must be a CPU torch matching an available torch_npu wheel"),
    C("RUN git clone https://github.com/NVIDIA/apex", "amp", "replace", True,
      "RUN git clone https://gitee.com/ascend/apex.git",
      "the examples' --fp16 path needs apex.amp; on Ascend that is the Apex patch repo, not NVIDIA apex"),
    C('pip install -v --no-cache-dir --global-option="--cpp_ext" --global-option="--cuda_ext" ./', "custom_cuda_extension",
      "replace", True, "bash scripts/build.sh --python=3.10 && pip install --no-cache-dir apex/dist/apex-*.whl",
      "--cuda_ext compiles apex's CUDA kernels with nvcc; there is no nvcc on an Ascend image and the NPU build of "
      "apex is produced by its own build script"),
])

E("ci_self_push", ".github/workflows/self-push.yml", "explicit_replacement",
  "huggingface/transformers .github/workflows/self-push.yml (v3.x self-hosted GPU runner job)", [
    C("runs-on: [self-hosted, gpu, single-gpu]", "device_type", "replace", True,
      "runs-on: [self-hosted, npu, single-npu]",
      "the job is routed to a GPU runner; it never runs on an Ascend machine until the runner labels change"),
    C("- run: nvidia-smi", "torch_cuda_api", "replace", True, "- run: npu-smi info",
      "nvidia-smi is absent on an Ascend runner; the step fails and stops the job"),
    C("pip install torch!=1.6.0", "import_torch_npu", "replace", True,
      "pip install torch==2.1.0 torch-npu==2.1.0.post10",
      "needs a CPU torch paired with its torch_npu wheel instead of whatever CUDA build pip resolves"),
    C("python -c \"import torch; print('Cuda available:', torch.cuda.is_available())\"", "torch_cuda_api", "replace",
      False, "python -c \"import torch, torch_npu; print('NPU available:', torch.npu.is_available())\"",
      "diagnostic print only (prints False on an NPU runner, does not fail)"),
    C("python -c \"import torch; print('Number of GPUs available:', torch.cuda.device_count())\"", "torch_cuda_api",
      "replace", False,
      "python -c \"import torch, torch_npu; print('Number of NPUs available:', torch.npu.device_count())\"",
      "diagnostic print only (prints 0 on an NPU runner)"),
    C("CUDA_VISIBLE_DEVICES: 0", "env_var", "replace", True, "ASCEND_RT_VISIBLE_DEVICES: 0", N_CVD),
    C("USE_CUDA: yes", "env_var", "replace", True, "USE_NPU: yes",
      "testing_utils maps USE_CUDA to torch_device='cuda', which makes every torch test fail on an NPU runner"),
])

E("squad_dist_sh", "examples/question-answering/run_squad_wwm_8gpu.sh", "explicit_replacement",
  "huggingface/transformers question-answering README: 8-GPU whole-word-masking SQuAD command, as a script", [
    C("=#!/bin/bash", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      N_SETENV + "; it must come before `set -u` (set_env.sh trips over unbound variables under nounset)"),
    C("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", N_CVD),
    C("export NCCL_SOCKET_IFNAME=eth0", "env_var", "replace", False, "export HCCL_SOCKET_IFNAME=eth0",
      "ignored by HCCL; its own NIC selector is HCCL_SOCKET_IFNAME (matters for the rendezvous NIC, mostly multi-node)"),
    C("export NCCL_P2P_DISABLE=0", "env_var", "removal", False, None,
      "NCCL-only knob, set to its default anyway; no HCCL meaning"),
])
