# Labels for probe201: LLM interpretability / sparse-autoencoder research code, CUDA -> Ascend NPU.
# One C(...) per upstream line a careful porter would edit. See ../README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


# ---------------------------------------------------------------- TransformerLens
E("tl_utils", "transformer_lens/utils.py", "device_branch_or_abstraction",
  "TransformerLens utils.py (get_device, print_gpu_mem, tokenize_and_concatenate)", [
    C("torch.cuda.memory_allocated()/2e30", "torch_cuda_api", "replace", False,
      'print(f"{step_name} ~ {np.round(torch.npu.memory_allocated()/2e30, 2)} GiB allocated on NPU.")',
      "debug print only; on a CUDA-less torch build memory_allocated() returns 0 instead of failing, so the run is unaffected"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): return torch.device("npu")',
      "library-wide device helper: without an NPU branch every HookedTransformer defaults to CPU on an Ascend host (silent)"),
])

E("tl_hooked_transformer", "transformer_lens/HookedTransformer.py", "device_branch_or_abstraction",
  "TransformerLens HookedTransformer (n_devices check, cuda()/cpu()/mps() wrappers, from_pretrained)", [
    C("assert torch.cuda.device_count() >= self.cfg.n_devices, (", "torch_cuda_api", "replace", True,
      "assert torch.npu.device_count() >= self.cfg.n_devices, (",
      "torch.cuda.device_count() is 0 on an NPU host, so any n_devices>1 model fails this assert"),
    C('f"but only {torch.cuda.device_count()} CUDA devices are visible"', "torch_cuda_api", "replace", False,
      'f"but only {torch.npu.device_count()} NPU devices are visible"',
      "assert message only; reports 0 devices on NPU"),
    C('return self.to("cuda")', "device_type", "add_branch", False,
      'def npu(self): return self.to("npu")  # added next to cuda()/cpu()/mps()',
      "convenience method: keep cuda(), add an npu() sibling so users have the same shortcut; not called internally"),
])

E("tl_devices", "transformer_lens/utilities/devices.py", "device_branch_or_abstraction",
  "TransformerLens utilities/devices.py (best-available-device by free memory, block-to-device mapping)", [
    C("total = torch.cuda.get_device_properties(i).total_memory", "torch_cuda_api", "replace", True,
      "total = torch.npu.get_device_properties(i).total_memory",
      "raises on a CUDA-less build; total_memory is one of the properties torch_npu does provide"),
    C("allocated = torch.cuda.memory_allocated(i)", "torch_cuda_api", "replace", True,
      "allocated = torch.npu.memory_allocated(i)",
      "feeds device choice; the CUDA version returns 0 (uninitialised) so the ranking would be wrong"),
    C("max_devices = max_devices if max_devices is not None else torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "max_devices = max_devices if max_devices is not None else torch.npu.device_count()",
      "0 on NPU host -> EnvironmentError 'no available devices'"),
    C('return torch.device("cuda", sorted_devices[0][0])', "device_type", "replace", True,
      'return torch.device("npu", sorted_devices[0][0])',
      "hard-coded cuda device returned to callers that .to() onto it"),
    C('if device.type == "cuda":', "device_type", "replace", False,
      'if device.type in ("cuda", "npu"):',
      "npu falls through to 'return device' and still works; adding it only enables free-memory device selection"),
])

E("tl_evals", "transformer_lens/evals.py", "explicit_replacement",
  "TransformerLens evals.py (wiki/owt/pile/code loss, induction loss, IOI eval)", [
    C('def evaluate_on_dataset(model, data_loader, truncate=100, device="cuda"):', "device_type", "replace", True,
      'def evaluate_on_dataset(model, data_loader, truncate=100, device="npu"):',
      "evaluate() calls this without a device, so batches go to .to('cuda') and fail on NPU"),
    C('model, tokenizer=None, batch_size=4, subseq_len=384, prepend_bos=None, device="cuda"', "device_type", "replace", True,
      'model, tokenizer=None, batch_size=4, subseq_len=384, prepend_bos=None, device="npu"',
      "default device for the random induction tokens; .to('cuda') fails on NPU"),
])

E("tl_demo_exploratory", "demos/Exploratory_Analysis_Demo.py", "transfer_to_npu",
  "TransformerLens Exploratory_Analysis_Demo notebook exported as a jupytext script (IOI, DLA, activation patching)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True,
      "import torch_npu; from torch_npu.contrib import transfer_to_npu",
      "notebook ported by automatic migration: with transfer_to_npu the installed TransformerLens get_device() sees "
      "torch.cuda.is_available()==True and torch.cuda.empty_cache() is redirected; without it everything runs on CPU"),
])

# ---------------------------------------------------------------- SAELens
E("saelens_config", "sae_lens/config.py", "device_branch_or_abstraction",
  "SAELens config.py (LanguageModelSAERunnerConfig, CacheActivationsRunnerConfig)", [
    C('device: str = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'device: str = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cpu"',
      "class-level default picks CPU on an NPU host without any warning"),
])

E("saelens_activations_store", "sae_lens/training/activations_store.py", "device_branch_or_abstraction",
  "SAELens ActivationsStore (streaming tokens, LM activation buffer, shuffling dataloader)", [
    C('device_type="cuda",', "amp", "replace", True,
      "device_type=_get_model_device(self.model).type,",
      "with autocast_lm=True, a cuda autocast on a CUDA-less build is disabled with a warning: the LM silently runs in fp32"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU; only returns cached NPU blocks earlier"),
])

E("saelens_trainer", "sae_lens/training/sae_trainer.py", "device_branch_or_abstraction",
  "SAELens SAETrainer (autocast + GradScaler, torch.compile of the SAE, wandb logging)", [
    C("self.scaler = torch.cuda.amp.GradScaler(enabled=self.cfg.autocast)", "amp", "replace", False,
      "self.scaler = torch.npu.amp.GradScaler(enabled=self.cfg.autocast)",
      "autocast here is bf16, which needs no loss scaling; the CUDA scaler disables itself with a warning and the loop still works"),
    C('device_type="cuda",', "amp", "replace", True,
      "device_type=torch.device(self.cfg.device).type,",
      "cfg.autocast=True would silently train the SAE in fp32 on NPU (cuda autocast disabled)"),
    C('backend = "aot_eager" if self.cfg.device == "mps" else "inductor"', "compile_mode", "replace", False,
      'backend = "aot_eager" if self.cfg.device in ("mps", "npu") else "inductor"',
      "unconfirmed: Inductor on NPU needs torch_npu>=2.6 graph mode / triton-ascend; aot_eager is the safe choice"),
])

E("saelens_tutorial", "tutorials/training_a_sparse_autoencoder.py", "device_branch_or_abstraction",
  "SAELens 'Training a Sparse Autoencoder' tutorial notebook exported as a script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "torch_npu autoloads since 2.5.1; still recommended at the top of entry scripts"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "add_branch", True,
      'if hasattr(torch, "npu") and torch.npu.is_available(): device = "npu"  # then elif torch.cuda.is_available(): ...',
      "device chain falls through to CPU on an NPU host"),
    C('big_model = HookedTransformer.from_pretrained("gpt2-small", device="cuda")', "device_type", "replace", True,
      'big_model = HookedTransformer.from_pretrained("gpt2-small", device=device)',
      "hard-coded cuda in the analysis section"),
    C('device="cuda",', "device_type", "replace", True,
      "device=device,",
      "SAE.from_pretrained(..., device='cuda') moves weights to cuda and fails"),
])

E("saelens_pyproject", "pyproject.toml", "explicit_replacement",
  "SAELens pyproject.toml (poetry, torch pinned from the cu121 wheel index)", [
    C('simple-parsing = "^0.1.6"', "import_torch_npu", "npu_only_addition", True,
      'torch-npu = "2.4.0.post4"',
      "the NPU backend package itself; wheel version must equal the torch version"),
    C('torch = { version = "2.4.1", source = "pytorch-cu121" }', "device_type", "replace", True,
      'torch = { version = "2.4.0", source = "pytorch-cpu" }',
      "no torch_npu release pairs with torch 2.4.1 (2.4.0 does); torch_npu docs install the CPU wheel"),
    C('name = "pytorch-cu121"', "device_type", "replace", True,
      'name = "pytorch-cpu"',
      "source name referenced by the torch dependency above"),
    C('url = "https://download.pytorch.org/whl/cu121"', "device_type", "replace", False,
      'url = "https://download.pytorch.org/whl/cpu"',
      "unconfirmed that the cu121 wheel breaks torch_npu; knowledge only says Ascend installs the CPU wheel on x86"),
])

E("saedash_feature_data", "sae_dashboard/feature_data_generator.py", "explicit_replacement",
  "SAEDashboard / sae_vis FeatureDataGenerator (minibatched feature activations, correlations, DFA)", [
    C("all_feat_acts.append(feature_acts.to_sparse())", "unsupported_op_workaround", "replace", True,
      "all_feat_acts.append(feature_acts.cpu().to_sparse())",
      "Tensor.to_sparse is on msFmkTransplt's unsupported list; sparse ops without NPU kernels raise instead of falling back"),
    C("all_feat_acts = torch.cat([a.to_dense() for a in all_feat_acts], dim=0)", "unsupported_op_workaround", "replace", True,
      "all_feat_acts = torch.cat([a.to_dense() for a in all_feat_acts], dim=0).to(self.cfg.device)",
      "densify on the host (to_dense is also unsupported on NPU) and move back to the device"),
    C("{torch.cuda.memory_allocated() / 2**30:.2f} GiB allocated", "torch_cuda_api", "replace", False,
      'f"[dim]minibatch {i}: {torch.npu.memory_allocated() / 2**30:.2f} GiB allocated, "',
      "verbose log only; reads 0 on NPU"),
    C("{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB[/dim]", "torch_cuda_api", "replace", False,
      'f"peak {torch.npu.max_memory_allocated() / 2**30:.2f} GiB[/dim]"',
      "verbose log only; reads 0 on NPU"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
])

# ---------------------------------------------------------------- dictionary_learning (saprmarks)
E("dictlearn_training", "dictionary_learning/training.py", "device_branch_or_abstraction",
  "saprmarks/dictionary_learning training.py (trainSAE loop, autocast context, wandb subprocesses)", [
    C('device: str = "cuda",', "device_type", "replace", True,
      'device: str = "npu",',
      "default feeds device_type below: cuda autocast is disabled on an NPU host, so bf16 activations hit fp32 SAE weights"),
    C('device_type = "cuda" if "cuda" in device else "cpu"', "device_type", "replace", True,
      'device_type = torch.device(device).type',
      "'npu:0' maps to 'cpu' -> nullcontext; with autocast_dtype=bfloat16 the matmul then fails on dtype mismatch"),
])

E("dictlearn_topk", "dictionary_learning/trainers/top_k.py", "device_branch_or_abstraction",
  "saprmarks/dictionary_learning TopK trainer (AutoEncoderTopK, auxk loss, threshold EMA)", [
    C("t.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "t.npu.manual_seed_all(seed)",
      "no-op on NPU; t.manual_seed on the line above already seeds the NPU generator (custom-device seeding; unconfirmed in knowledge)"),
    C('self.device = "cuda" if t.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'self.device = "npu" if hasattr(t, "npu") and t.npu.is_available() else "cpu"',
      "trainer silently trains on CPU when no device is passed"),
    C('device_type = "cuda" if top_acts_BK.is_cuda else "cpu"', "device_type", "replace", False,
      "device_type = top_acts_BK.device.type",
      "on NPU this disables CPU autocast instead of NPU autocast, but the ops inside (clone/compare/min) are not autocast ops"),
])

# ---------------------------------------------------------------- openai/sparse_autoencoder
E("oai_sae_kernels", "sparse_autoencoder/kernels.py", "kernel_rewrite",
  "openai/sparse_autoencoder kernels.py (Triton sparse x dense matmuls, TritonDecoderAutograd)", [
    C("with torch.cuda.device(dense.device):", "torch_cuda_api", "replace", True,
      "with torch.npu.device(dense.device):",
      "torch.cuda.device() rejects an npu device index / fails on a CUDA-less build"),
    C("num_warps=4,", "triton_kernel_tuning", "removal", False, None,
      "warp count is a CUDA SIMT knob; triton-ascend maps programs onto AI cores (unconfirmed)"),
    C("triton_sparse_dense_matmul_kernel[(A,)](", "triton_kernel_tuning", "replace", False,
      "triton_sparse_dense_matmul_kernel[(min(A, NUM_VECTOR_CORES),)](",
      "one program per row (A ~ 1e5) suits CUDA SMs; triton-ascend guidance is a core-count grid with an in-kernel loop (unconfirmed)"),
    C("num_warps=8,", "triton_kernel_tuning", "removal", False, None,
      "same as above (unconfirmed)"),
    C("@torch.cuda.amp.custom_fwd", "amp", "replace", False,
      "@torch.npu.amp.custom_fwd",
      "no cast_inputs, so the CUDA decorator only records autocast state; harmless on NPU"),
    C("@torch.cuda.amp.custom_bwd", "amp", "replace", False,
      "@torch.npu.amp.custom_bwd",
      "pairs with custom_fwd; harmless as written"),
])

E("oai_sae_train", "sparse_autoencoder/train.py", "explicit_replacement",
  "openai/sparse_autoencoder train.py (TopK FastAutoencoder, sharding comms over NCCL, fp16 autocast + GradScaler)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu",
      "autoload since torch_npu 2.5.1; needed on older releases and for the torch_npu.optim swap below"),
    C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(local_rank)",
      "fails on a CUDA-less build"),
    C('backend="nccl", rank=self.rank, world_size=self.world_size', "dist_backend", "replace", True,
      'backend="hccl", rank=self.rank, world_size=self.world_size',
      "NCCL is not available on Ascend"),
    C('g = dist.new_group(ranks, backend="nccl")', "dist_backend", "replace", True,
      'g = dist.new_group(ranks, backend="hccl")',
      "sub-group for op sharding"),
    C('g = dist.new_group(ranks=ranks, backend="nccl")', "dist_backend", "replace", True,
      'g = dist.new_group(ranks=ranks, backend="hccl")',
      "sub-group for data parallel"),
    C("with torch.cuda.stream(stream):", "torch_cuda_api", "replace", True,
      "with torch.npu.stream(stream):",
      "CUDA stream context fails on NPU host"),
    C('yield t[:batch_size].to("cuda", non_blocking=True)', "tensor_to_device", "replace", True,
      'yield t[:batch_size].to("npu", non_blocking=True)',
      "hard-coded cuda copy"),
    C("geometric_median(stats_acts_sample[:32768].float().cpu()).cuda().float()", "tensor_to_device", "replace", True,
      "geometric_median(stats_acts_sample[:32768].float().cpu()).npu().float()",
      ".cuda() fails on NPU"),
    C("x = torch.randn(256, d_model).cuda().to(ae.pre_bias.dtype)", "tensor_to_device", "replace", True,
      "x = torch.randn(256, d_model).npu().to(ae.pre_bias.dtype)",
      ".cuda() fails on NPU"),
    C("scaler = torch.cuda.amp.GradScaler()", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler()",
      "fp16 autocast: once autocast runs on NPU, a (self-disabled) CUDA scaler means fp16 training without loss scaling"),
    C("autocast_ctx_manager = torch.cuda.amp.autocast()", "amp", "replace", True,
      "autocast_ctx_manager = torch.npu.amp.autocast()",
      "cuda autocast is silently disabled on a CUDA-less build"),
    C("opt = torch.optim.Adam(ae.parameters(), lr=lr, eps=eps, fused=True)", "fused_optimizer", "replace", False,
      "opt = torch_npu.optim.NpuFusedAdam(ae.parameters(), lr=lr, eps=eps)",
      "_fused_adam_ has no NPU kernel in the op lists (only _fused_adamw_): per the knowledge notes it falls back to CPU (slow); whether it errors instead is unconfirmed"),
    C("flat_acts_train_batch = flat_acts_train_batch.cuda()", "tensor_to_device", "replace", True,
      "flat_acts_train_batch = flat_acts_train_batch.npu()",
      ".cuda() fails on NPU"),
    C("=ae.cuda()", "tensor_to_device", "replace", True,
      "ae.npu()",
      "module .cuda() fails on NPU"),
    C("copy_stream = torch.cuda.Stream()", "torch_cuda_api", "replace", True,
      "copy_stream = torch.npu.Stream()",
      "CUDA stream constructor fails on NPU host"),
])

# ---------------------------------------------------------------- EleutherAI/sparsify
E("sparsify_main", "sparsify/__main__.py", "explicit_replacement",
  "EleutherAI sparsify __main__.py (RunConfig, HF model load with device_map, DDP init)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("elif torch.cuda.is_bf16_supported():", "device_capability_check", "replace", True,
      "elif torch.npu.is_bf16_supported():",
      "CUDA check errors or returns False on NPU host; model would load in 'auto' dtype instead of bf16"),
    C('device_map={"": f"cuda:{rank}"},', "device_type", "replace", True,
      'device_map={"": f"npu:{rank}"},',
      "explicit cuda placement for every rank"),
    C("BitsAndBytesConfig(load_in_8bit=args.load_in_8bit)", "unsupported_op_workaround", "replace", False,
      'BitsAndBytesConfig(load_in_8bit=args.load_in_8bit) if not hasattr(torch, "npu") else None',
      "only reached with --load_in_8bit; bitsandbytes LLM.int8 is not listed for NPU (knowledge section 6)"),
    C("torch.cuda.set_device(int(local_rank))", "torch_cuda_api", "replace", True,
      "torch.npu.set_device(int(local_rank))",
      "fails on a CUDA-less build"),
    C('"nccl",', "dist_backend", "replace", True,
      '"hccl",',
      "NCCL backend not available on Ascend"),
    C('device_id=torch.device(f"cuda:{local_rank}"),', "device_type", "replace", True,
      'device_id=torch.device(f"npu:{local_rank}"),',
      "eager process-group init bound to a cuda device"),
])

E("sparsify_trainer", "sparsify/trainer.py", "explicit_replacement",
  "EleutherAI sparsify trainer.py (SaeTrainer: hooks, DDP / distribute_modules all_to_all, 8-bit Adam)", [
    C("from bitsandbytes.optim import Adam8bit as Adam", "fused_optimizer", "replace", False,
      "from torch.optim import Adam",
      "ImportError fallback already covers hosts without bitsandbytes; if a bnb build is installed its 8-bit optimizer has no NPU path (unconfirmed)"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "without a CUDA device the DataLoader silently skips pinning; performance only"),
    C('info["memory/max_allocated_gb"] = torch.cuda.max_memory_allocated() / 2**30', "torch_cuda_api", "replace", False,
      'info["memory/max_allocated_gb"] = torch.npu.max_memory_allocated() / 2**30',
      "wandb metric only; logs 0 on NPU"),
])

E("sparsify_utils", "sparsify/utils.py", "explicit_replacement",
  "EleutherAI sparsify utils.py (layer discovery, width probing, embedding_bag / Triton decoder choice)", [
    C("return nn.functional.embedding_bag(", "unsupported_op_workaround", "replace", False,
      "return (top_acts.unsqueeze(-1) * W_dec.mT[top_indices]).sum(-2)",
      "unconfirmed: Ascend's 2.7.1 API list marks F.embedding_bag unsupported, but aten _embedding_bag has an NPU kernel"),
    C("decoder_impl = triton_decode", "triton_kernel_tuning", "replace", False,
      'decoder_impl = eager_decode if hasattr(torch, "npu") and torch.npu.is_available() else triton_decode',
      "if triton-ascend is installed the vendored CUDA-tuned Triton embedding_bag would be used untested (unconfirmed)"),
])

# ---------------------------------------------------------------- baukit
E("baukit_nethook", "baukit/nethook.py", "device_branch_or_abstraction",
  "davidbau/baukit nethook.py (Trace, TraceDict, StopForward, get_module)", [])

# ---------------------------------------------------------------- ROME causal tracing
E("rome_causal_trace", "experiments/causal_trace.py", "explicit_replacement",
  "kmeng01/rome experiments/causal_trace.py (ModelAndTokenizer, noise-and-restore causal tracing)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("model.eval().cuda()", "tensor_to_device", "replace", True,
      "model.eval().npu()",
      "model placement"),
    C('def make_inputs(tokenizer, prompts, device="cuda"):', "device_type", "replace", True,
      'def make_inputs(tokenizer, prompts, device="npu"):',
      "every call site relies on the default"),
    C("pin_memory=True,", "pin_memory", "replace", False,
      'pin_memory=True, pin_memory_device="npu",',
      "tally() DataLoader; pinning silently skipped without CUDA, performance only"),
    C('batch = dict_to_(batch, "cuda")', "device_type", "replace", True,
      'batch = dict_to_(batch, "npu")',
      "hard-coded cuda move of each batch"),
])

# ---------------------------------------------------------------- nnsight attribution patching
E("nnsight_attrib_patching", "experiments/attribution_patching.py", "explicit_replacement",
  "nnsight-based attribution patching experiment script (LanguageModel.trace, .save(), grad capture)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32", "device_capability_check", "replace", True,
      "dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float32",
      "CUDA check errors or silently picks fp32 on NPU host"),
    C('device = "cuda:0"', "device_type", "replace", True,
      'device = "npu:0"',
      "accumulator device"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "start = torch.npu.Event(enable_timing=True)",
      "CUDA event fails on NPU host"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
      "end = torch.npu.Event(enable_timing=True)",
      "CUDA event fails on NPU host"),
    C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True,
      "torch.npu.synchronize()",
      "fails on a CUDA-less build"),
    C('"gpu": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
      '"npu": torch.npu.get_device_name(0),',
      "get_device_name initialises CUDA and raises"),
])

# ---------------------------------------------------------------- CAA steering
E("caa_steering", "steering/generate_and_steer.py", "device_branch_or_abstraction",
  "nrimsky/CAA-style contrastive activation addition on Llama-2-chat (BlockOutputWrapper, A/B scoring)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False,
      "torch.npu.manual_seed_all(seed)",
      "no-op on NPU; torch.manual_seed above already seeds the NPU generator (unconfirmed in knowledge)"),
    C('self.device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'self.device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cpu"',
      "silently runs a 7B model on CPU"),
    C("if torch.cuda.get_device_capability()[0] >= 8:", "device_capability_check", "replace", True,
      "if torch.npu.is_bf16_supported():",
      "get_device_capability() returns None under torch_npu, so [0] raises TypeError"),
])

# ---------------------------------------------------------------- probing
E("probing_train", "probing/train_probes.py", "explicit_replacement",
  "linear-probe training script over cached residual activations (AMP, fused AdamW, pinned loaders)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("train_dl = DataLoader(", "pin_memory", "replace", False,
      'train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True, pin_memory_device="npu")',
      "pinning silently skipped without CUDA; performance only"),
    C("val_dl = DataLoader(", "pin_memory", "replace", False,
      'val_dl = DataLoader(val_ds, batch_size=args.batch_size, num_workers=4, pin_memory=True, pin_memory_device="npu")',
      "performance only"),
    C("probe.parameters(), lr=args.lr, weight_decay=args.wd, fused=torch.cuda.is_available()", "fused_optimizer", "replace", False,
      "probe.parameters(), lr=args.lr, weight_decay=args.wd, fused=torch.npu.is_available()",
      "evaluates to False on NPU -> unfused AdamW, still correct; _fused_adamw_ has an NPU kernel in the 2.7.1 op list"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=args.fp16)",
      "fp16 path: the CUDA scaler disables itself on NPU, so ported fp16 autocast would run without loss scaling"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", True,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "--fp16 is silently ignored on NPU (cuda autocast disabled)"),
    C('device = torch.device(f"cuda:{args.gpu}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{args.gpu}")',
      "probe and batches go to cuda"),
    C('map_location=f"cuda:{args.gpu}").cpu()', "device_type", "replace", True,
      'acts = torch.load(os.path.join(args.cache_dir, f), map_location="cpu")',
      "map_location onto a cuda device fails without CUDA; the tensor is moved to CPU right after anyway"),
])

E("cache_activations", "scripts/cache_activations.py", "explicit_replacement",
  "HF activation-caching script for probing (bf16 Llama, flash_attention_2, output_hidden_states)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", False,
      "import torch_npu  # noqa: F401",
      "autoload since torch_npu 2.5.1; needed on older releases"),
    C("import flash_attn  # noqa: F401", "attention_kernel", "removal", True, None,
      "flash-attn cannot be installed on NPU; the import raises"),
    C('device_map="cuda",', "device_type", "replace", True,
      'device_map="npu",',
      "accelerate device map onto cuda"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", "replace", True,
      'attn_implementation="sdpa",',
      "flash_attention_2 needs the flash-attn package; SDPA dispatches to the NPU fused attention"),
    C(').to("cuda")', "tensor_to_device", "replace", True,
      ').to("npu")',
      "tokenized batch moved to cuda"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()",
      "silent no-op on NPU"),
    C('print(f"peak memory: {torch.cuda.max_memory_allocated() / 1e9:.1f} GB")', "torch_cuda_api", "replace", False,
      'print(f"peak memory: {torch.npu.max_memory_allocated() / 1e9:.1f} GB")',
      "log only; prints 0 on NPU"),
])

# ---------------------------------------------------------------- launchers
E("sweep_layers_sh", "scripts/sweep_layers.sh", "explicit_replacement",
  "per-layer SAE sweep launcher (one process per GPU via CUDA_VISIBLE_DEVICES, optional torchrun)", [
    C("source .venv/bin/activate", "import_torch_npu", "npu_only_addition", True,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced before torch_npu can load"),
    C('NUM_GPUS=$(python -c "import torch; print(torch.cuda.device_count())")', "torch_cuda_api", "replace", True,
      'NUM_GPUS=$(python -c "import torch, torch_npu; print(torch.npu.device_count())")',
      "0 on NPU host -> '% NUM_GPUS' division by zero in the loop"),
    C("nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv", "torch_cuda_api", "replace", False,
      "npu-smi info",
      "diagnostic only; no set -e, so a missing nvidia-smi just prints an error"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "ignored by HCCL; no direct HCCL_* equivalent in the knowledge notes"),
    C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None,
      "NVLink-specific, ignored on Ascend"),
    C("export CUDA_DEVICE_MAX_CONNECTIONS=1", "env_var", "removal", False, None,
      "CUDA work-queue setting, no effect on NPU"),
    C("CUDA_VISIBLE_DEVICES=$gpu python scripts/train_sae.py \\", "env_var", "replace", True,
      "ASCEND_RT_VISIBLE_DEVICES=$gpu python scripts/train_sae.py \\",
      "otherwise every background job sees all NPUs and they all land on device 0"),
    C("--device cuda \\", "device_type", "replace", True,
      "--device npu \\",
      "device passed straight into the training config"),
])

E("launch_sweep_py", "scripts/launch_sweep.py", "explicit_replacement",
  "wandb-agent launcher picking idle GPUs through NVML", [
    C("=import pynvml", "torch_cuda_api", "replace", True,
      "import torch",
      "NVML has no Ascend equivalent; device queries move to torch.npu"),
    C("pynvml.nvmlInit()", "torch_cuda_api", "removal", True, None,
      "raises NVMLError_LibraryNotFound on an Ascend host"),
    C("for i in range(pynvml.nvmlDeviceGetCount()):", "torch_cuda_api", "replace", True,
      "for i in range(torch.npu.device_count()):",
      "NVML call"),
    C("handle = pynvml.nvmlDeviceGetHandleByIndex(i)", "torch_cuda_api", "removal", True, None,
      "NVML call"),
    C("mem = pynvml.nvmlDeviceGetMemoryInfo(handle)", "torch_cuda_api", "replace", True,
      "free_b, total_b = torch.npu.mem_get_info(i)",
      "NVML call"),
    C("util = pynvml.nvmlDeviceGetUtilizationRates(handle).gpu", "torch_cuda_api", "replace", True,
      "util = torch.npu.utilization(i)",
      "NVML call"),
    C("used_mb = mem.used // 2**20", "torch_cuda_api", "replace", True,
      "used_mb = (total_b - free_b) // 2**20",
      "follows the mem_get_info rewrite"),
    C("pynvml.nvmlShutdown()", "torch_cuda_api", "removal", True, None,
      "NVML call"),
    C('env["CUDA_VISIBLE_DEVICES"] = str(gpu)', "env_var", "replace", True,
      'env["ASCEND_RT_VISIBLE_DEVICES"] = str(gpu)',
      "per-agent device isolation; CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime"),
    C('env["STEERING_DEVICE"] = "cuda:0"', "device_type", "replace", True,
      'env["STEERING_DEVICE"] = "npu:0"',
      "device string consumed by the training script"),
])

# ---------------------------------------------------------------- packaging / environment
E("interp_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of an interp research repo (TL, SAELens, nnsight, baukit, flash-attn)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "unconfirmed that the CUDA wheel breaks torch_npu; Ascend installs the CPU wheel on x86"),
    C("torch==2.1.2+cu121", "device_type", "replace", True,
      "torch==2.1.0",
      "torch_npu pairs with torch 2.1.0 (no 2.1.2 release) and is built against CPU torch"),
    C("transformers==4.44.2", "import_torch_npu", "npu_only_addition", True,
      "torch-npu==2.1.0.post12",
      "the NPU backend; .postN must match the installed CANN (2.1.0.post12 <-> CANN 8.1.RC1)"),
    C("flash-attn==2.6.3", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built or installed on NPU; pip install -r fails"),
    C("triton==2.1.0", "triton_kernel_tuning", "removal", False, None,
      "only inductor's optional dependency here; unconfirmed whether a wheel exists for aarch64 Ascend hosts (triton-ascend is the NPU counterpart)"),
    C("bitsandbytes==0.43.3", "custom_cuda_extension", "removal", False, None,
      "prebuilt CUDA kernels; NPU support only in the multi-backend line; only the optional 8-bit paths use it"),
    C("nvidia-ml-py==12.555.43", "torch_cuda_api", "removal", False, None,
      "installs fine (pure Python) but is useless on Ascend once the launcher uses torch.npu"),
])

E("interp_dockerfile", "docker/Dockerfile", "explicit_replacement",
  "CUDA 12.1 research Dockerfile (nvidia/cuda base, cu121 torch, flash-attn build)", [
    C("FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04", "device_type", "replace", True,
      "FROM ascendai/cann:8.1.rc1-910b-ubuntu22.04-py3.10",
      "the image must carry CANN; the exact Ascend base image tag is not in the knowledge notes"),
    C("NVIDIA_VISIBLE_DEVICES=all \\", "env_var", "replace", False,
      "ASCEND_VISIBLE_DEVICES=0-7 \\",
      "NVIDIA container runtime variable; Ascend Docker Runtime reads ASCEND_VISIBLE_DEVICES (usually passed at docker run)"),
    C("NVIDIA_DRIVER_CAPABILITIES=compute,utility \\", "env_var", "removal", False, None,
      "NVIDIA container runtime only"),
    C('TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"', "env_var", "removal", False, None,
      "only affects CUDA extension builds"),
    C("&& pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121", "device_type", "replace", True,
      "&& pip install torch==2.1.0 --index-url https://download.pytorch.org/whl/cpu",
      "no torch_npu for 2.1.2; CPU wheel per Ascend install docs"),
    C("RUN MAX_JOBS=8 pip install flash-attn==2.6.3 --no-build-isolation", "attention_kernel", "removal", True, None,
      "needs nvcc/CUDA; fails to build on the CANN image"),
    C("RUN pip install -r requirements.txt", "import_torch_npu", "npu_only_addition", True,
      "RUN pip install torch-npu==2.1.0.post12",
      "the NPU backend package"),
    C('RUN python -c "import torch; assert torch.version.cuda is not None, torch.__version__"', "device_capability_check", "replace", True,
      'RUN python -c "import torch, torch_npu; print(torch.__version__, torch_npu.__version__)"',
      "asserts a CUDA build of torch, which fails the image build"),
])

E("interp_environment_yml", "environment.yml", "explicit_replacement",
  "conda environment.yml for a circuits/interp repo (pytorch + pytorch-cuda channels)", [
    C("=- nvidia", "device_type", "removal", False, None,
      "channel only needed for pytorch-cuda"),
    C("- pytorch-cuda=12.1", "device_type", "replace", False,
      "- cpuonly",
      "unconfirmed that a CUDA build conflicts with torch_npu; Ascend pairs torch_npu with CPU torch"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True,
      "      - torch-npu==2.1.0.post12",
      "the NPU backend package (pairs with pytorch=2.1.0)"),
])

E("steering_sweep_yaml", "configs/steering_sweep.yaml", "explicit_replacement",
  "W&B sweep config for CAA steering (device, dtype, attention implementation, compile)", [
    C("value: cuda", "device_type", "replace", True,
      "value: npu",
      "passed to the script as --device"),
    C("value: flash_attention_2", "attention_kernel", "replace", True,
      "value: sdpa",
      "flash_attention_2 requires the flash-attn package"),
    C("value: max-autotune", "compile_mode", "replace", False,
      "value: default",
      "max-autotune relies on Triton GEMM autotuning; unconfirmed what Inductor on NPU does with it"),
])
