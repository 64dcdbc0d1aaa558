"""Labels for probe376: LLM text watermarking and machine-generated-text detection (CUDA -> Ascend NPU).

One C(...) per upstream line a careful porter would edit, written as an explicit torch_npu port.
`required` = with every other labelled line already ported, would leaving this line unchanged fail,
compute something wrong, or silently do the wrong thing on an NPU host?
"""

ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry point that uses torch.npu.* / 'npu' device strings; torch_npu must be imported (autoload only "
               "from torch_npu 2.5.1, and the 2.1.0 line is still in the support matrix)")

# ---------------------------------------------------------------------------------------------
# jwkirchenbauer/lm-watermarking (Kirchenbauer et al., "A Watermark for Large Language Models")
# ---------------------------------------------------------------------------------------------
E("lmw_extended_processor", "extended_watermark_processor.py", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking extended_watermark_processor.py (WatermarkLogitsProcessor / WatermarkDetector)", [
      # device-agnostic: rng and randperm follow input_ids.device / the device passed in by the caller
  ])

E("lmw_alt_prf", "alternative_prf_schemes.py", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking alternative_prf_schemes.py (PRF / seeding-scheme lookup, CPU permutation table)", [])

E("lmw_normalizers", "normalizers.py", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking normalizers.py (unicode / homoglyph / truecase normalizers)", [])

E("lmw_demo", "demo_watermark.py", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking demo_watermark.py (CLI + gradio demo, --use_gpu / --load_fp16)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "torch.cuda.is_available() is False on an NPU host, so the demo would silently run a 6.7B model on CPU"),
      C("=model.eval()", "compile_mode", "npu_only_addition", False,
        "torch.npu.set_compile_mode(jit_compile=False)",
        "generate() grows the sequence every step (dynamic shapes); msFmkTransplt's standard performance advice, perf only"),
  ])

E("lmw_generation_pipeline", "experiments/generation_pipeline.py", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking watermark_reliability_release generation_pipeline.py + utils/generation.py (load_model, batched generate)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("if args.use_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
        "if args.use_gpu and torch.npu.device_count() > 1:",
        "device_count() is 0 on NPU: the sharded (device_map='auto') branch for 65B checkpoints would never be taken"),
      C('device = torch.device("cuda")', "device_type", "replace", True, 'device = torch.device("npu")',
        "inputs are moved to this device before generate; 'cuda' fails on a CPU-only torch build"),
      C('device = torch.device("cuda" if torch.cuda.is_available() and args.use_gpu else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if torch.npu.is_available() and args.use_gpu else "cpu")',
        "otherwise silently generates on CPU"),
      C("=model.eval()", "compile_mode", "npu_only_addition", False,
        "torch.npu.set_compile_mode(jit_compile=False)",
        "dynamic shapes in generate(); perf only"),
      C("args.gpu_name = torch.cuda.get_device_name(0)", "torch_cuda_api", "replace", False,
        'args.gpu_name = torch.npu.get_device_name(0) if torch.npu.is_available() else "cpu"',
        "run metadata only (would log 'cpu')"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True, "torch.npu.reset_peak_memory_stats()",
        "resolves the current CUDA device and calls torch._C._cuda_* which a CPU-only torch build does not have -> raises"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a no-op when CUDA was never initialised; NPU cache just is not trimmed (memory hygiene only)"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "unguarded; torch.cuda.synchronize lazily initialises CUDA and raises 'Torch not compiled with CUDA enabled'"),
      C("peak_mem_gb = torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        "peak_mem_gb = torch.npu.max_memory_allocated() / 2**30",
        "returns 0 when CUDA is uninitialised; only a logged metric is wrong"),
  ])

E("lmw_launch", "experiments/launch_generation.sh", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking experiment launch scripts (one generation job per GPU, round-robin)", [
      C("export TOKENIZERS_PARALLELISM=false", "env_var", "npu_only_addition", False,
        "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
        "CANN environment; often already set by the login profile or image, so not strictly required"),
      C("nvidia-smi --query-gpu", "device_capability_check", "replace", True, "npu-smi info",
        "script runs under set -euo pipefail: a missing nvidia-smi binary aborts the whole sweep"),
      C("CUDA_VISIBLE_DEVICES=${gpu} nohup python", "env_var", "replace", True,
        "ASCEND_RT_VISIBLE_DEVICES=${gpu} nohup python experiments/generation_pipeline.py \\",
        "per-job device pinning; unported, all 8 concurrent jobs land on npu:0 (contention / OOM)"),
  ])

E("lmw_dockerfile", "Dockerfile", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking demo container (hf-space style image for demo_watermark.py)", [
      C("FROM nvidia/cuda", "env_var", "replace", True, "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
        "runtime environment: the CUDA image has no CANN toolkit/driver libs for torch_npu; image tag unconfirmed "
        "(no kind for base images, env_var used)"),
      C("RUN pip install --no-cache-dir torch==2.0.1", "import_torch_npu", "replace", True,
        "RUN pip install --no-cache-dir torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir torch-npu==2.1.0.post10",
        "cu118 wheel -> CPU torch + matching torch-npu (wheel x.y.z must equal torch x.y.z; 2.1.0.post10 pairs with CANN 8.0.0)"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "inert without the NVIDIA container runtime; devices are mounted by the Ascend docker runtime instead"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "demo uses the default device 'npu' (npu:0) anyway"),
  ])

E("lmw_requirements", "requirements.txt", "explicit_replacement",
  "jwkirchenbauer/lm-watermarking requirements.txt", [
      C("=torch>=2.0.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "torch_npu is not pulled in by anything else; torch must then be pinned to the same 2.1.0"),
  ])

# ---------------------------------------------------------------------------------------------
# THU-BPM/MarkLLM (watermark toolkit)
# ---------------------------------------------------------------------------------------------
E("markllm_transformers_config", "utils/transformers_config.py", "explicit_replacement",
  "THU-BPM/MarkLLM utils/transformers_config.py (TransformersConfig carries model, tokenizer, device)", [
      C("vocab_size=None, device='cuda'", "device_type", "replace", False,
        "def __init__(self, model, tokenizer, vocab_size=None, device='npu', *args, **kwargs):",
        "library default only; every in-repo caller passes device= explicitly"),
  ])

E("markllm_kgw", "watermark/kgw/kgw.py", "explicit_replacement",
  "THU-BPM/MarkLLM watermark/kgw/kgw.py (KGW config/utils/logits processor)", [])

E("markllm_sir", "watermark/sir/sir.py", "explicit_replacement",
  "THU-BPM/MarkLLM watermark/sir/sir.py (semantic-invariant watermark with a trained transform model)", [
      C("transform_model.load_state_dict(torch.load(path))", "tensor_to_device", "replace", True,
        "transform_model.load_state_dict(torch.load(path, map_location='cpu'))",
        "transform_model_cbert.pth was saved from a GPU training run (train_watermark_model.py saves CUDA tensors); "
        "deserialising CUDA storages without map_location raises on a host without CUDA"),
      C(".unsqueeze(0).to('cuda')", "tensor_to_device", "replace", True,
        "input_ids = torch.tensor(input_ids).unsqueeze(0).to(self.config.device)",
        "hard-coded leftover; the embedding model lives on config.device"),
  ])

E("markllm_sir_train", "watermark/sir/train_watermark_model.py", "explicit_replacement",
  "THU-BPM/MarkLLM (from THU-BPM/Robust_Watermark) watermark/sir/train_watermark_model.py", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("output_dim=args.output_dim).cuda()", "tensor_to_device", "replace", True,
        "model = TransformModel(input_dim=args.input_dim, output_dim=args.output_dim).npu()", ".cuda() fails without CUDA"),
      C("batch = batch.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "batch = batch.npu(non_blocking=True)", ".cuda() fails without CUDA"),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "torch.manual_seed(seed) on the line above already seeds the registered NPU backend; cuda call is a lazy no-op"),
  ])

E("markllm_upv", "watermark/upv/upv.py", "explicit_replacement",
  "THU-BPM/MarkLLM watermark/upv/upv.py (unforgeable watermark, generator/detector networks)", [
      # torch.load(..., map_location=self.config.device) is already device-agnostic
  ])

E("markllm_test_method", "test/test_method.py", "device_branch_or_abstraction",
  "THU-BPM/MarkLLM test/test_method.py (smoke test over all algorithms)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "needed for torch.npu in the new branch (guard with try/except ImportError to keep CUDA hosts working)"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
        'device = "cuda" if torch.cuda.is_available() else ("npu" if torch.npu.is_available() else "cpu")',
        "without the NPU branch the smoke test silently runs every algorithm on CPU"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "add_branch", False,
        'torch.npu.empty_cache() if device == "npu" else torch.cuda.empty_cache()',
        "memory hygiene between algorithms; no-op on NPU when unported"),
  ])

E("markllm_text_quality", "evaluation/tools/text_quality_analyzer.py", "explicit_replacement",
  "THU-BPM/MarkLLM evaluation/tools/text_quality_analyzer.py (PPL, log-diversity, BLEU, pass@1, GPT judge)", [
      C("def __init__(self, model, tokenizer, device='cuda') -> None:", "device_type", "replace", False,
        "def __init__(self, model, tokenizer, device='npu') -> None:",
        "default only; evaluation pipelines pass device explicitly"),
      C("def __init__(self, model, tokenizer, device: str = 'cuda') -> None:", "device_type", "replace", False,
        "def __init__(self, model, tokenizer, device: str = 'npu') -> None:",
        "default only; evaluation pipelines pass device explicitly"),
  ])

E("markllm_config_json", "config/SIR.json", "explicit_replacement",
  "THU-BPM/MarkLLM config/SIR.json (algorithm config, no device fields)", [])

# ---------------------------------------------------------------------------------------------
# eric-mitchell/detect-gpt
# ---------------------------------------------------------------------------------------------
E("detectgpt_run", "run.py", "explicit_replacement",
  "eric-mitchell/detect-gpt run.py (perturbation-based zero-shot detection, global DEVICE, model swapping)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "after deleting the supervised detector; no-op without CUDA, memory hygiene only"),
      C('=DEVICE = "cuda"', "device_type", "replace", True, 'DEVICE = "npu"',
        "module-level device used by every .to(DEVICE) / device=DEVICE in the file"),
      C("int8_kwargs = dict(load_in_8bit=True", "unsupported_op_workaround", "replace", True,
        "int8_kwargs = dict(torch_dtype=torch.bfloat16)  # bitsandbytes LLM.int8 is not available on NPU",
        "only on the --int8 path (used for gpt-neox-20b in paper_scripts/main.sh); LLM.int8 not listed for NPU in bitsandbytes"),
      C("torch.cuda.empty_cache()  # drop the sampling model", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()  # drop the sampling model before loading the scorer",
        "no-op without CUDA; memory hygiene when swapping in the scoring model"),
  ])

E("detectgpt_custom_datasets", "custom_datasets.py", "explicit_replacement",
  "eric-mitchell/detect-gpt custom_datasets.py (writingPrompts / pubmed / wmt16 loaders)", [])

E("detectgpt_main_sh", "paper_scripts/main.sh", "explicit_replacement",
  "eric-mitchell/detect-gpt paper_scripts/main.sh (Table 1 sweep)", [])

# ---------------------------------------------------------------------------------------------
# baoguangsheng/fast-detect-gpt
# ---------------------------------------------------------------------------------------------
E("fdg_model", "scripts/model.py", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt scripts/model.py (load_model(model_name, device, cache_dir))", [])

E("fdg_fast_detect_gpt", "scripts/fast_detect_gpt.py", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt scripts/fast_detect_gpt.py (sampling discrepancy, --device flag)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default=\"cuda\")", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default=\"npu\")",
        "main.sh never passes --device, so the default is what runs"),
  ])

E("fdg_local_infer", "scripts/local_infer.py", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt scripts/local_infer.py (interactive local demo)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default=\"cuda\")", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default=\"npu\")", "README usage does not pass --device"),
  ])

E("fdg_detect_gpt", "scripts/detect_gpt.py", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt scripts/detect_gpt.py (DetectGPT baseline re-implementation)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("parser.add_argument('--device', type=str, default=\"cuda\")", "device_type", "replace", True,
        "parser.add_argument('--device', type=str, default=\"npu\")", "main.sh never passes --device"),
  ])

E("fdg_main_sh", "main.sh", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt main.sh (white-box / black-box experiment sweep)", [])

E("fdg_setup_sh", "setup.sh", "explicit_replacement",
  "baoguangsheng/fast-detect-gpt setup.sh (conda env + pip installs)", [
      C("pip install torch==1.13.1+cu117", "import_torch_npu", "replace", True,
        "pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
        "no torch_npu for torch 1.13; x86 uses the CPU wheel index, aarch64 plain PyPI"),
      C("=pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
        "pip install torch-npu==2.1.0.post10", "install the adapter matching torch 2.1.0"),
      C("cuda available:', torch.cuda.is_available()", "torch_cuda_api", "replace", False,
        "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npu available:', torch.npu.is_available())\"",
        "sanity print only; does not fail"),
  ])

# ---------------------------------------------------------------------------------------------
# ahans30/Binoculars
# ---------------------------------------------------------------------------------------------
E("bino_detector", "binoculars/detector.py", "explicit_replacement",
  "ahans30/Binoculars binoculars/detector.py (observer/performer on DEVICE_1/DEVICE_2)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        "DEVICE_1/DEVICE_2 are computed with torch.npu at import time of the package"),
      C('DEVICE_1 = "cuda:0"', "device_type", "replace", True,
        'DEVICE_1 = "npu:0" if torch.npu.is_available() else "cpu"', "otherwise both 7B models load on CPU"),
      C('DEVICE_2 = "cuda:1"', "device_type", "replace", True,
        'DEVICE_2 = "npu:1" if torch.npu.device_count() > 1 else DEVICE_1',
        "device_count() is 0 on NPU: performer silently co-located with observer instead of the second card"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "guard DEVICE_1 != 'cpu' is true after the port, and torch.cuda.synchronize raises on a CPU-only torch build"),
  ])

E("bino_metrics", "binoculars/metrics.py", "explicit_replacement",
  "ahans30/Binoculars binoculars/metrics.py (perplexity / cross-perplexity)", [
      C("shifted_logits = logits[..., :-1, :].contiguous() / temperature", "unsupported_op_workaround", "replace", False,
        "shifted_logits = logits[..., :-1, :].contiguous().float() / temperature",
        "logits are bf16 (use_bfloat16=True); Ascend's 2.7.1 list gives cross_entropy input fp16/fp32 only; "
        "whether bf16 errors, falls back or is cast internally is unconfirmed"),
      C("p_scores, q_scores = p_logits / temperature, q_logits / temperature", "unsupported_op_workaround", "replace", False,
        "p_scores, q_scores = p_logits.float() / temperature, q_logits.float() / temperature",
        "same bf16 cross_entropy limitation (soft-target CE); unconfirmed"),
  ])

E("bino_run", "experiments/run.py", "explicit_replacement",
  "ahans30/Binoculars experiments/run.py (dataset scoring + metrics)", [
      C("using {torch.cuda.device_count()} GPUs", "torch_cuda_api", "replace", False,
        'print(f"Scoring human text using {torch.npu.device_count()} NPUs")', "log line only"),
      C('print("Using device:", "cuda" if torch.cuda.is_available() else "cpu")', "torch_cuda_api", "replace", False,
        'print("Using device:", "npu" if torch.npu.is_available() else "cpu")', "log line only; placement is in detector.py"),
  ])

E("bino_app", "demo/demo.py", "explicit_replacement",
  "ahans30/Binoculars demo/demo.py (gradio app)", [])

E("bino_jobs_sh", "experiments/jobs.sh", "explicit_replacement",
  "ahans30/Binoculars experiments/jobs.sh", [
      C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", False, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
        "exposes the first two cards, which npu:0/npu:1 are anyway"),
  ])

# ---------------------------------------------------------------------------------------------
# openai/gpt-2-output-dataset (RoBERTa GPT-2 output detector)
# ---------------------------------------------------------------------------------------------
E("gpt2det_train", "detector/train.py", "explicit_replacement",
  "openai/gpt-2-output-dataset detector/train.py (RoBERTa detector, self-launching multi-process DDP)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("not torch.cuda.is_available() or torch.cuda.device_count() <= 1", "torch_cuda_api", "replace", True,
        "if not dist.is_available() or not torch.npu.is_available() or torch.npu.device_count() <= 1:",
        "else every spawned process returns rank 0 / world 1: all train on npu:0 and overwrite one checkpoint"),
      C('dist.init_process_group(backend="nccl", world_size=mpi_size', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", world_size=mpi_size, rank=mpi_rank)', "NCCL does not exist on NPU"),
      C('dist.init_process_group(backend="nccl", init_method="env://")', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://")', "NCCL does not exist on NPU"),
      C("num_workers=0, pin_memory=True)", "pin_memory", "replace", False,
        "train_loader = DataLoader(train_dataset, batch_size, sampler=Sampler(train_dataset), num_workers=0, pin_memory=True, pin_memory_device='npu')",
        "perf only; default pinning targets CUDA, behaviour with torch_npu unconfirmed"),
      C("device = f'cuda:{rank}'", "device_type", "replace", True,
        "device = f'npu:{rank}' if torch.npu.is_available() else 'cpu'", "per-rank device"),
      C("print('rank:', rank, 'world_size:', world_size, 'device:', device)", "torch_cuda_api", "npu_only_addition", False,
        "if device.startswith('npu'): torch.npu.set_device(device)",
        "Ascend guides set the current device before collectives; whether HCCL needs it here is unconfirmed"),
      C("'-c', \"import torch;\"", "import_torch_npu", "replace", True,
        "nproc = int(subprocess.check_output([sys.executable, '-c', \"import torch; import torch_npu;\"",
        "the probe subprocess needs torch.npu on the next line"),
      C('"print(torch.cuda.device_count() if torch.cuda.is_available() else 1)"', "torch_cuda_api", "replace", True,
        '"print(torch.npu.device_count() if torch.npu.is_available() else 1)"]))',
        "unported it launches one process: trains fine but with 1/N of the intended global batch (24 vs 24*N), i.e. a different recipe"),
  ])

E("gpt2det_server", "detector/server.py", "explicit_replacement",
  "openai/gpt-2-output-dataset detector/server.py (HTTP detector demo, one worker process per GPU)", [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("device='cuda' if torch.cuda.is_available() else 'cpu'):", "device_type", "replace", True,
        "def main(checkpoint, port=8080, device='npu' if torch.npu.is_available() else 'cpu'):",
        "otherwise the server silently runs RoBERTa on CPU"),
      C("'import torch; print(torch.cuda.device_count())'", "torch_cuda_api", "replace", False,
        "num_workers = int(subprocess.check_output([sys.executable, '-c', 'import torch, torch_npu; print(torch.npu.device_count())']))",
        "0 -> falls into the single-worker path, which still serves correctly; throughput only"),
      C("os.environ['CUDA_VISIBLE_DEVICES'] = f'{i}'", "env_var", "replace", True,
        "os.environ['ASCEND_RT_VISIBLE_DEVICES'] = f'{i}'",
        "with several workers, each must see only its own card; unported all workers use npu:0"),
      C('del os.environ["CUDA_VISIBLE_DEVICES"]', "env_var", "replace", True,
        'del os.environ["ASCEND_RT_VISIBLE_DEVICES"]',
        "must follow the line above, else KeyError because CUDA_VISIBLE_DEVICES was never set"),
  ])

E("gpt2det_dataset", "detector/dataset.py", "explicit_replacement",
  "openai/gpt-2-output-dataset detector/dataset.py (Corpus, EncodedDataset)", [])

E("gpt2det_utils", "detector/utils.py", "explicit_replacement",
  "openai/gpt-2-output-dataset detector/utils.py (summary, distributed)", [])

E("gpt2det_requirements", "requirements.txt", "explicit_replacement",
  "openai/gpt-2-output-dataset requirements.txt", [
      C("=torch>=1.2.0", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
        "adapter package; torch must be pinned to the matching 2.1.0"),
  ])
