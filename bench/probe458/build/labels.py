"""Labels for probe458 (symbolic regression and neural theorem proving, CUDA -> Ascend NPU).

One label per upstream line a careful porter would edit for an explicit torch_npu port.
`required` uses the complete-port counterfactual described in README.md.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"

# ---------------------------------------------------------------------------
# Deep symbolic regression (PyTorch re-implementation, dandip/DSRPytorch)
# ---------------------------------------------------------------------------
E("dsr_main", "main.py", "explicit_replacement",
  "dandip/DSRPytorch main.py (entry script, hyperparameters, seeding)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script of the process; train.py calls torch.npu.* after the port, so the NPU backend must be loaded here."),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "On an NPU host the CUDA call is a lazy no-op; torch.manual_seed on the line above already seeds the "
      "PrivateUse1 generator in torch>=2.1 (from memory, unconfirmed in knowledge) -> reproducibility only."),
])

E("dsr_train", "train.py", "explicit_replacement",
  "dandip/DSRPytorch train.py (risk-seeking policy-gradient loop, device selection)", [
    C("if (use_gpu and torch.cuda.is_available()):", "torch_cuda_api", "replace", True,
      "if (use_gpu and torch.npu.is_available()):",
      "Unchanged, the check is False on an NPU host and the whole search silently runs on CPU although use_gpu=True."),
    C('device = torch.device("cuda:0")', "device_type", "replace", True,
      'device = torch.device("npu:0")',
      "Device handed to Operators, DSRRNN and every Expression."),
])

E("dsr_rnn", "rnn.py", "explicit_replacement",
  "dandip/DSRPytorch rnn.py (LSTM/GRU sequence sampler, device passed in)", [])

E("dsr_operators", "operators.py", "explicit_replacement",
  "dandip/DSRPytorch operators.py (operator library, masks built on the given device)", [])

E("dsr_expr", "expression_utils.py", "explicit_replacement",
  "dandip/DSRPytorch expression_utils.py (Expression module, inner constant optimisation)", [])

E("dsr_reqs", "requirements.txt", "explicit_replacement",
  "dandip/DSRPytorch requirements (pinned CUDA wheel)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu113", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "Knowledge: x86 hosts take the CPU torch wheel from the /whl/cpu index (aarch64 uses plain PyPI); a stale cu113 "
      "index only pulls an unneeded CUDA build, it does not break the install."),
    C("torch==1.11.0+cu113", "device_type", "replace", True,
      "torch==2.1.0",
      "A +cu113 local version cannot pair with any current torch_npu wheel (wheel version must equal the torch version)."),
    C("numpy>=1.21", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "The NPU backend itself must be a dependency (2.1.0.post12 pairs with torch 2.1.0, CANN 8.1.RC1)."),
])

# ---------------------------------------------------------------------------
# NeSymReS (SymposiumOrganization/NeuralSymbolicRegressionThatScales)
# ---------------------------------------------------------------------------
E("nesy_model", "src/nesymres/architectures/model.py", "explicit_replacement",
  "SymposiumOrganization/NeuralSymbolicRegressionThatScales src/nesymres/architectures/model.py (set-transformer + decoder, beam search fitfunc)", [])

E("nesy_bfgs", "src/nesymres/architectures/bfgs.py", "explicit_replacement",
  "NeuralSymbolicRegressionThatScales src/nesymres/architectures/bfgs.py (sympy/scipy constant fitting on host)", [])

E("nesy_data", "src/nesymres/architectures/data.py", "explicit_replacement",
  "NeuralSymbolicRegressionThatScales src/nesymres/architectures/data.py (on-the-fly equation sampling DataModule)", [])

E("nesy_train", "scripts/train.py", "explicit_replacement",
  "NeuralSymbolicRegressionThatScales scripts/train.py (hydra + PyTorch Lightning 1.x Trainer)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Training entry point; the Lightning NPU accelerator and HCCL process group need the backend loaded."),
    C('distributed_backend="ddp",', "dist_backend", "replace", True,
      'strategy=DDPStrategy(process_group_backend="hccl"),',
      "Lightning only picks NCCL for CUDA devices; with a non-CUDA accelerator it would fall back to gloo, which cannot "
      "all-reduce NPU tensors. PL1.x 'distributed_backend' is also gone in the Lightning versions that have an accelerator registry."),
    C("gpus=cfg.gpu,", "device_type", "replace", True,
      'accelerator="npu", devices=cfg.gpu,',
      "gpus=N requests CUDA devices and fails on an NPU host. Lightning has no built-in NPU accelerator: a custom "
      "Accelerator registered as 'npu' (or a third-party plugin) is assumed (unconfirmed in knowledge)."),
])

E("nesy_config", "scripts/config.yaml", "explicit_replacement",
  "NeuralSymbolicRegressionThatScales scripts/config.yaml (hydra config: gpu count, precision 16)", [])

E("nesy_fitfunc", "jupyter/fit_func.py", "explicit_replacement",
  "NeuralSymbolicRegressionThatScales jupyter/fit_func.ipynb exported (load 100M checkpoint, fit an equation)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Notebook is its own process; torch.npu.* below needs the backend."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Unchanged, the pretrained model silently stays on CPU on an NPU host."),
    C("=model.cuda()", "tensor_to_device", "replace", True,
      "model.npu()",
      "Module move; fitfunc then builds its tensors on self.device."),
])

# ---------------------------------------------------------------------------
# End-to-end symbolic regression with transformers (facebookresearch/symbolicregression)
# ---------------------------------------------------------------------------
E("e2e_train", "train.py", "explicit_replacement",
  "facebookresearch/symbolicregression train.py (XLM-style entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry point of every rank."),
    C('np.seterr(all="raise")', "compile_mode", "npu_only_addition", False,
      "torch.npu.set_compile_mode(jit_compile=False)",
      "Input point counts and equation lengths change every batch (dynamic shapes); msFmkTransplt recommends "
      "jit_compile=False for dynamic shapes. Performance only."),
    C("assert torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "assert torch.npu.is_available()",
      "Assertion fails on an NPU host unless --cpu is given."),
])

E("e2e_slurm", "symbolicregression/slurm.py", "explicit_replacement",
  "facebookresearch/symbolicregression symbolicregression/slurm.py (init_distributed_mode)", [
    C("torch.cuda.set_device(params.local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(params.local_rank)",
      "Raises without CUDA; binds each rank to its NPU."),
    C('backend="nccl",', "dist_backend", "replace", True,
      'backend="hccl",',
      "NCCL is not available on Ascend."),
])

E("e2e_utils", "symbolicregression/utils.py", "explicit_replacement",
  "facebookresearch/symbolicregression symbolicregression/utils.py (to_cuda helper, CUDA module flag)", [
    C("return [None if x is None else x.cuda() for x in args]", "tensor_to_device", "replace", True,
      "return [None if x is None else x.npu() for x in args]",
      "Every batch goes through to_cuda; the helper name and the module-level CUDA flag can stay."),
])

E("e2e_trainer", "symbolicregression/trainer.py", "explicit_replacement",
  "facebookresearch/symbolicregression symbolicregression/trainer.py (DDP/apex/AMP trainer)", [
    C("self.modules[k] = apex.parallel.DistributedDataParallel(", "distributed_framework", "replace", True,
      "self.modules[k] = nn.parallel.DistributedDataParallel(",
      "Reached with --amp>=0 on several ranks (the shipped launcher uses --amp 1). apex.parallel DDP drives CUDA "
      "streams/events and NVIDIA apex cannot be built for Ascend; torch DDP over HCCL is the port."),
    C("self.modules[k], delay_allreduce=True", "distributed_framework", "replace", True,
      "self.modules[k], device_ids=[params.local_rank], output_device=params.local_rank",
      "delay_allreduce is an apex-only argument; torch DDP would reject it."),
    C("self.scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "self.scaler = torch.npu.amp.GradScaler()",
      "The CUDA scaler disables itself without CUDA, so fp16 training would run without loss scaling."),
    C("max_mem = torch.cuda.max_memory_allocated() / 1024 ** 2", "torch_cuda_api", "replace", False,
      "max_mem = torch.npu.max_memory_allocated() / 1024 ** 2",
      "Log line only; the CUDA call returns 0 on an NPU host."),
    C("with torch.cuda.amp.autocast():", "amp", "replace", True,
      "with torch.npu.amp.autocast():",
      "CUDA autocast does not touch NPU tensors: mixed precision requested with --amp would silently not happen."),
])

E("e2e_model_init", "symbolicregression/model/__init__.py", "explicit_replacement",
  "facebookresearch/symbolicregression symbolicregression/model/__init__.py (build_modules, reload, .cuda())", [
    C("reloaded = torch.load(params.reload_model)", "tensor_to_device", "replace", True,
      'reloaded = torch.load(params.reload_model, map_location="cpu")',
      "Released checkpoints hold CUDA-tagged tensors; deserialising them on a host without CUDA raises. Modules are moved to the NPU below."),
    C("=v.cuda()", "tensor_to_device", "replace", True,
      "v.npu()",
      "Module placement for embedder/encoder/decoder."),
])

E("e2e_utils_wrapper", "symbolicregression/model/utils_wrapper.py", "explicit_replacement",
  "facebookresearch/symbolicregression symbolicregression/model/utils_wrapper.py (BFGS constant refinement in float64)", [
    C('REFINEMENT_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', "unsupported_op_workaround", "replace", False,
      'REFINEMENT_DEVICE = "cpu"',
      "Refinement runs in float64; Ascend has no fp64 (knowledge: 'Device do not support double dtype now, dtype cast "
      "replace with float'), so it must stay on the host. Unchanged, the line already yields 'cpu' on an NPU host (not "
      "required), but a mechanical cuda->npu rewrite here would silently degrade the fitted constants; pinning it documents that."),
])

E("e2e_example", "example.py", "explicit_replacement",
  "facebookresearch/symbolicregression README example (download model1.pt, sklearn-style fit)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Stand-alone script."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "Unchanged, an NPU host always takes the CPU branch."),
    C("=model = torch.load(model_path)", "tensor_to_device", "replace", True,
      'model = torch.load(model_path, map_location=torch.device("cpu"))',
      "model1.pt is a whole pickled module saved on GPU; loading it without map_location raises on a CUDA-less host."),
    C("model = model.cuda()", "tensor_to_device", "replace", True,
      "model = model.npu()",
      "Module move."),
])

E("e2e_env", "environment.yml", "explicit_replacement",
  "facebookresearch/symbolicregression environment.yml (conda env with cudatoolkit)", [
    C("- pytorch=1.12.1", "device_type", "replace", True,
      "- pytorch=2.1.0",
      "torch 1.12 has no active torch_npu release; must match the torch_npu wheel version."),
    C("- cudatoolkit=11.3", "device_type", "removal", False, None,
      "Dead weight on an Ascend host (CANN provides the runtime)."),
    C("- tqdm", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post12",
      "Add the NPU backend to the pip section."),
])

E("e2e_launch", "scripts/train_ddp.sh", "explicit_replacement",
  "facebookresearch/symbolicregression style single-node launcher (torch.distributed.launch, NGPU)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", False,
      "export ASCEND_RT_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU-1)))",
      "Only restricts visibility to devices 0..NGPU-1, which set_device(local_rank) uses anyway; ignored on NPU but harmless."),
    C("export OMP_NUM_THREADS=4", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN environment (library paths) must be set before python starts."),
    C("nvidia-smi --query-gpu", "env_var", "replace", True,
      "npu-smi info",
      "Script runs under set -e: a missing nvidia-smi aborts the launcher before training starts."),
])

# ---------------------------------------------------------------------------
# SymbolicGPT (mojivalipour/symbolicgpt)
# ---------------------------------------------------------------------------
E("sgpt_main", "symbolicGPT.py", "explicit_replacement",
  "mojivalipour/symbolicgpt symbolicGPT.py (config-in-script training + test loop)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Entry script; trainer.py uses torch.npu after the port."),
])

E("sgpt_trainer", "trainer.py", "explicit_replacement",
  "mojivalipour/symbolicgpt trainer.py (minGPT Trainer with DataParallel)", [
    C("if device == 'gpu' and torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if device == 'gpu' and torch.npu.is_available():",
      "Unchanged, the trainer silently runs on CPU."),
    C("self.device = torch.cuda.current_device()", "torch_cuda_api", "replace", True,
      'self.device = torch.device("npu", torch.npu.current_device())',
      "current_device() returns a bare int and x.to(int) means a CUDA ordinal, so the port must build an npu device, "
      "not just swap the namespace."),
    C("self.model = torch.nn.DataParallel(self.model).to(self.device)", "distributed_framework", "replace", True,
      "self.model = self.model.to(self.device)",
      "torch.nn.DataParallel is unsupported on Ascend (API list and msFmkTransplt); single-device placement "
      "(the .module unwrapping below stays valid via hasattr)."),
])

# ---------------------------------------------------------------------------
# GPT-f style next-step provers (wellecks/ntptutorial, wellecks/llmstep)
# ---------------------------------------------------------------------------
E("ntp_search", "partI_nextstep/ntp_python/proofsearch_dojo.py", "explicit_replacement",
  "wellecks/ntptutorial partI_nextstep/ntp_python/proofsearch_dojo.py (best-first search, vLLM sampling, LeanDojo)", [])

E("ntp_tune", "partI_nextstep/ntp_python/tune.py", "explicit_replacement",
  "wellecks/ntptutorial partI_nextstep/ntp_python/tune.py (HF Trainer SFT on [GOAL]/[PROOFSTEP] pairs)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "transformers/accelerate import torch_npu themselves when it is installed (is_torch_npu_available), and torch_npu>=2.5.1 "
      "autoloads; explicit import is recommended but not needed here."),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",',
      "flash-attn cannot be installed on NPU; transformers' advice for NPU is sdpa (PR #36383), which dispatches to the NPU fused attention."),
])

E("ntp_tune_sh", "partI_nextstep/scripts/tune_proofstep.sh", "explicit_replacement",
  "wellecks/ntptutorial partI_nextstep/scripts (deepspeed launcher for SFT)", [
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False,
      "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL variable is ignored on Ascend; the HCCL watchdog equivalent defaults to 1 already."),
    C("export WANDB_PROJECT=ntptutorial", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN environment for the deepspeed launcher and its workers."),
])

E("ntp_eval_sh", "partI_nextstep/scripts/eval_minif2f.sh", "explicit_replacement",
  "wellecks/ntptutorial / llemma_formal2formal sharded miniF2F evaluation (one shard per GPU)", [
    C("mkdir -p logs", "env_var", "npu_only_addition", True,
      SET_ENV,
      "CANN environment for the vLLM (vllm-ascend) workers."),
    C("CUDA_VISIBLE_DEVICES=${SHARD} python", "env_var", "replace", True,
      "  ASCEND_RT_VISIBLE_DEVICES=${SHARD} python ntp_python/proofsearch_dojo.py \\",
      "Each background shard must see only its own NPU; unchanged, all 8 vLLM engines land on NPU 0 and run out of memory."),
])

E("llmstep_server", "python/server.py", "explicit_replacement",
  "wellecks/llmstep python/server.py (HTTP tactic-suggestion server, HF or vLLM backend)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Server entry point."),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available():",
      "Unchanged, the HF backend silently serves from CPU."),
    C("torch_dtype=torch.bfloat16).cuda()", "tensor_to_device", "replace", True,
      "model = transformers.GPTNeoXForCausalLM.from_pretrained(hf_model, torch_dtype=torch.bfloat16).npu()",
      "Module move; inputs follow model.device."),
])

# ---------------------------------------------------------------------------
# LeanDojo ReProver (lean-dojo/ReProver)
# ---------------------------------------------------------------------------
E("rp_common", "common.py", "explicit_replacement",
  "lean-dojo/ReProver common.py (corpus, optimizers with DeepSpeed FusedAdam, checkpoint loading)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "The ported optimizer line references torch_npu.optim in this module."),
    C("optimizer = FusedAdam(parameters, lr=lr, adam_w_mode=True)", "fused_optimizer", "replace", True,
      "optimizer = torch_npu.optim.NpuFusedAdamW(parameters, lr=lr)",
      "DeepSpeed's CUDA FusedAdam op builder is not available on NPU (knowledge §6); torch_npu's tensor-fused AdamW "
      "is the replacement. (A DeepSpeed NPU op builder may cover it in newer releases - unconfirmed.)"),
])

E("rp_gen_model", "generator/model.py", "explicit_replacement",
  "lean-dojo/ReProver generator/model.py (RetrievalAugmentedGenerator LightningModule)", [
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "Frees cached memory before evaluation provers start; no-op on an NPU host, so only memory headroom is lost."),
])

E("rp_gen_conf", "generator/confs/cli_lean4_random.yaml", "explicit_replacement",
  "lean-dojo/ReProver generator/confs/cli_lean4_random.yaml (LightningCLI config)", [
    C("accelerator: gpu", "device_type", "replace", True,
      "accelerator: npu",
      "accelerator: gpu fails on a host without CUDA. Assumes an NPU Lightning accelerator registered as 'npu' (not built into Lightning; unconfirmed)."),
])

E("rp_ret_model", "retrieval/model.py", "explicit_replacement",
  "lean-dojo/ReProver retrieval/model.py (PremiseRetriever, dense corpus index)", [
    C("and torch.cuda.is_available()", "torch_cuda_api", "replace", False,
      "and torch.npu.is_available()",
      "Gate for casting the HF retriever to bf16; unchanged it is False on NPU and the model stays fp32 (slower, still correct)."),
    C("and torch.cuda.get_device_properties(0).major >= 8", "device_capability_check", "replace", True,
      "and torch.npu.is_bf16_supported()",
      "With the gate above ported, this CUDA call would run on an NPU host and raise; NPU device properties have no "
      "major/minor anyway (knowledge §2.8)."),
])

E("rp_ret_index", "retrieval/index.py", "explicit_replacement",
  "lean-dojo/ReProver retrieval/index.py (pre-compute premise embeddings)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Script entry point."),
    C("if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available():",
      "Unchanged, indexing silently runs on CPU."),
    C('device = torch.device("cuda")', "device_type", "replace", True,
      'device = torch.device("npu")',
      "Retriever placement."),
])

E("rp_proof_search", "prover/proof_search.py", "explicit_replacement",
  "lean-dojo/ReProver prover/proof_search.py (best-first search, Ray CPU/GPU prover actors)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu",
      "Ray actor processes import this module, not the CLI script; the backend must be loaded here."),
    C("@ray.remote(num_gpus=1)", "device_type", "replace", True,
      '@ray.remote(resources={"NPU": 1})',
      "No GPU resource exists on an NPU node, so the actor would stay pending forever. Ray exposes Ascend devices as the "
      "'NPU' resource (Ray >= 2.x; not in knowledge - unconfirmed)."),
    C('ckpt_path, device=torch.device("cuda"), freeze=True', "device_type", "replace", True,
      'ckpt_path, device=torch.device("npu"), freeze=True',
      "Generator placement inside the NPU actor."),
    C('device = torch.device("cuda") if num_gpus > 0 else torch.device("cpu")', "device_type", "replace", True,
      'device = torch.device("npu") if num_gpus > 0 else torch.device("cpu")',
      "Single-worker path."),
    C("GpuProver.options(num_gpus=num_gpus_per_worker).remote(", "device_type", "replace", True,
      'GpuProver.options(resources={"NPU": num_gpus_per_worker}).remote(',
      "Per-call override of the actor's accelerator request; num_gpus would again never be satisfiable."),
])
