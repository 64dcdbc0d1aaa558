"""Labels for probe11 (hand-written synthetic upstream files; see ../README.md).

C(sub, kind, change_type, required, ported, note) -> one labelled change; `sub` must match exactly one line
("=text": the stripped line equals text).
E(id, path, style, imitates, changes) -> one file entry.
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required,
            "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


R, A, B, X = "replace", "npu_only_addition", "add_branch", "removal"

IMPORT_NOTE = ("torch.npu.* and 'npu' device strings need torch_npu loaded; nothing in this file constructs an "
               "Accelerator/TrainingArguments (which would import it) before the first NPU use")
FA2_NOTE = ("flash-attn cannot be installed on Ascend; transformers raises ImportError for flash_attention_2. "
            "transformers PR #36383: use 'sdpa' (dispatches to NPU FA)")
EMPTY_NOTE = "silent no-op without CUDA (CUDA never initialised); frees nothing on NPU"
XF_FLAG_NOTE = ("xformers has no NPU backend; with the flag, is_xformers_available() is False and the script "
                "raises ValueError. Only reached with --enable_xformers_memory_efficient_attention; diffusers' "
                "default processor (SDPA) already runs on NPU")
BNB8_FLAG_NOTE = ("bitsandbytes 8-bit optimizers are not listed for NPU (only NF4 quant/dequant); only reached "
                  "with --use_8bit_adam")
NF4_NOTE = ("bitsandbytes NF4 on NPU exists only in the multi-backend build (PR #1422) and transformers PR #31512; "
            "works or not depending on the installed bitsandbytes: unconfirmed, not required")
MEMLOG_NOTE = "memory stats of an uninitialised CUDA context read 0; logging only"
BF16Q_NOTE = ("torch.cuda.is_bf16_supported() needs a CUDA build (raises or returns False on NPU), silently "
              "disabling bf16 on Atlas A2/A3 which support it")

# ---------------------------------------------------------------------------------------------------------------
E("clm_no_trainer", "examples/pytorch/language-modeling/run_clm_no_trainer.py", "device_branch_or_abstraction",
  "transformers examples run_clm_no_trainer.py (Accelerate loop, attn_implementation flag)", [
    C('default="flash_attention_2",', "attention_kernel", R, True, 'default="sdpa",',
      FA2_NOTE + "; the default path loads the model with it"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
      'logger.info(f"  peak device memory: {torch.npu.max_memory_allocated() / 2**30:.2f} GiB")', MEMLOG_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("translation_no_trainer", "examples/pytorch/translation/run_translation_no_trainer.py",
  "device_branch_or_abstraction",
  "transformers examples run_translation_no_trainer.py (fp16 beam-search eval under autocast)", [
    C("torch.cuda.get_device_name(accelerator.local_process_index)", "torch_cuda_api", R, True,
      'f"{torch.npu.get_device_name(accelerator.local_process_index)}", main_process_only=False)',
      "torch.cuda.get_device_name initialises CUDA and raises on an NPU host (runs at start-up)"),
    C('torch.autocast(device_type="cuda"', "amp", R, True,
      "with torch.no_grad(), torch.autocast(device_type=accelerator.device.type, dtype=torch.float16,",
      "CUDA autocast is disabled (warning) without CUDA: eval generation runs in fp32 on NPU, not fp16 as intended"),
])

E("seq2seq_summarization", "scripts/finetune_summarization.py", "explicit_replacement",
  "Seq2SeqTrainer summarisation fine-tune (CNN-DM / XSum, ROUGE, 8-bit AdamW, tf32)", [
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", R, True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES; CUDA_VISIBLE_DEVICES does not restrict NPUs"),
    C("=import torch  # noqa: E402", "import_torch_npu", A, True, "import torch_npu  # noqa: E402",
      IMPORT_NOTE + " (torch.npu.is_bf16_supported() is evaluated before TrainingArguments exists)"),
    C("torch.cuda.device_count())", "torch_cuda_api", R, False,
      'logger.info("visible devices: %s (%d)", args.gpus, torch.npu.device_count())', "logs 0 on NPU; logging only"),
    C("fp16=not torch.cuda.is_bf16_supported(),", "torch_cuda_api", R, True,
      "fp16=not torch.npu.is_bf16_supported(),", BF16Q_NOTE),
    C("=bf16=torch.cuda.is_bf16_supported(),", "torch_cuda_api", R, True, "bf16=torch.npu.is_bf16_supported(),",
      BF16Q_NOTE),
    C("=tf32=True,", "device_capability_check", R, True, "tf32=False,",
      "TrainingArguments raises ValueError for tf32=True when is_torch_tf32_available() is False (no CUDA); "
      "NPU has HF32 instead (torch.npu.matmul.allow_hf32, unconfirmed in knowledge)"),
    C('optim="adamw_bnb_8bit",', "fused_optimizer", R, True, 'optim="adamw_torch",', BNB8_FLAG_NOTE.split(";")[0]),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("diffusers_lora_t2i", "examples/text_to_image/train_text_to_image_lora.py", "device_branch_or_abstraction",
  "diffusers examples train_text_to_image_lora.py (peft LoRA, xformers / 8-bit Adam flags)", [
    C("with torch.cuda.amp.autocast():", "amp", R, True, "with torch.autocast(accelerator.device.type):",
      "torch.cuda.amp.autocast is inactive for NPU tensors: validation images are generated without autocast"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", X, False, None, XF_FLAG_NOTE),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW", BNB8_FLAG_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("diffusers_textual_inversion", "examples/textual_inversion/textual_inversion.py", "device_branch_or_abstraction",
  "diffusers examples textual_inversion.py (learned token embedding, validation under autocast)", [
    C('with torch.autocast("cuda"):', "amp", R, True, "with torch.autocast(accelerator.device.type):",
      "autocast('cuda') is disabled without CUDA (warning); validation on NPU runs outside autocast"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", X, False, None, XF_FLAG_NOTE),
])

E("diffusers_ip2p", "examples/instruct_pix2pix/train_instruct_pix2pix.py", "device_branch_or_abstraction",
  "diffusers examples train_instruct_pix2pix.py (8-channel conv_in, conditioning dropout, EMA)", [
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", X, False, None, XF_FLAG_NOTE),
    C("optimizer_cls = bnb.optim.AdamW8bit", "fused_optimizer", R, False,
      "optimizer_cls = torch_npu.optim.NpuFusedAdamW", BNB8_FLAG_NOTE),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("peft_qlora", "examples/qlora/finetune_qlora.py", "explicit_replacement",
  "peft / artidoro qlora-style 4-bit NF4 LoRA fine-tune (paged optimizer, flash-attn)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch.cuda.get_device_capability()[0] >= 8", "device_capability_check", R, True,
      "compute_dtype = torch.bfloat16  # Atlas A2/A3 support bf16",
      "get_device_capability needs CUDA (returns None on NPU per MSTT docs): crashes before the model loads"),
    C("=load_in_4bit=True,", "unsupported_op_workaround", R, False,
      "load_in_4bit=True,  # needs bitsandbytes multi-backend build with the NPU backend", NF4_NOTE),
    C('device_map={"": torch.cuda.current_device()},', "torch_cuda_api", R, True,
      'device_map={"": torch.npu.current_device()},', "torch.cuda.current_device() raises without CUDA"),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="sdpa",',
      FA2_NOTE),
    C('optim="paged_adamw_32bit",', "fused_optimizer", R, True, 'optim="adamw_torch",',
      "paged optimizers are bitsandbytes CUDA (unified-memory) kernels, not listed for NPU"),
])

E("trl_kto", "examples/scripts/kto.py", "device_branch_or_abstraction",
  "huggingface/trl examples/scripts/kto.py (ModelConfig, flash-attn default, kbit device map)", [
    C("=return BitsAndBytesConfig(load_in_8bit=True)", "unsupported_op_workaround", R, False,
      "raise ValueError('LLM.int8 has no NPU backend; use --load_in_4bit')",
      "LLM.int8 is not listed for NPU in bitsandbytes; only reached with --load_in_8bit"),
    C("=load_in_4bit=True,", "unsupported_op_workaround", R, False,
      "load_in_4bit=True,  # bitsandbytes multi-backend build with NPU backend", NF4_NOTE),
    C("if torch.cuda.is_available():", "device_type", R, False, "if torch.npu.is_available():",
      "on NPU returns None, so a quantised model gets no device map; only reached with --load_in_4bit/8bit, "
      "whose NPU support is itself partial"),
    C('model_args.attn_implementation = "flash_attention_2"', "attention_kernel", R, True,
      'model_args.attn_implementation = "sdpa"', FA2_NOTE + "; this is the default path"),
    C("training_args.tf32 = torch.cuda.is_available()", "device_capability_check", R, False,
      "torch.npu.matmul.allow_hf32 = True  # NPU analogue of TF32 (unconfirmed)",
      "short-circuits to False on NPU (no crash; set after __post_init__); porter would enable HF32 instead"),
    C("peak = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, False,
      "peak = torch.npu.max_memory_allocated() / 1024 ** 3", MEMLOG_NOTE),
])

E("sbert_finetune", "training/train_embedding_mnrl.py", "explicit_replacement",
  "sentence-transformers MNRL fine-tune with FAISS-GPU recall@k evaluation", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", R, True,
      'device = "npu" if torch.npu.is_available() else "cpu"',
      "is_available() is False on an NPU host: the whole fine-tune silently runs on CPU"),
    C('convert_to_tensor=True, device="cuda",', "device_type", R, True,
      "q_emb = model.encode(queries, batch_size=256, convert_to_tensor=True, device=device,",
      "hard-coded 'cuda' device string for encode() fails on an NPU host"),
    C("res = faiss.StandardGpuResources()", "unsupported_op_workaround", X, True, None,
      "faiss-gpu is CUDA-only; with faiss-cpu StandardGpuResources does not exist. Keep the flat IP index on CPU"),
    C("index = faiss.index_cpu_to_gpu(res, 0, index)", "unsupported_op_workaround", X, True, None,
      "faiss GPU index is CUDA-only; search the CPU index (or use torch matmul + topk on NPU)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("gradio_chat", "app.py", "explicit_replacement",
  "Hugging Face Spaces gradio chat app (Llama-3 instruct, TextIteratorStreamer, @spaces.GPU)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("=if not torch.cuda.is_available():", "device_type", R, False, "if not torch.npu.is_available():",
      "only changes the banner text (shows the 'does not work on CPU' warning on NPU)"),
    C("=if torch.cuda.is_available():", "device_type", R, True, "if torch.npu.is_available():",
      "the model is only loaded when CUDA is available: on NPU nothing is loaded and generate() hits NameError"),
    C("=load_in_4bit=True,", "unsupported_op_workaround", R, False,
      "load_in_4bit=True,  # bitsandbytes multi-backend build with NPU backend", NF4_NOTE + "; USE_4BIT=1 only"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info()",
      "mem_get_info needs CUDA; the status callback (demo.load every 10 s) raises on NPU"),
])

E("streamlit_sdxl", "streamlit_app.py", "explicit_replacement",
  "Streamlit SDXL base+refiner playground (fp16 variant, CPU offload option, LoRA, torch.compile)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("pipe.enable_model_cpu_offload()", "device_type", R, True, 'pipe.enable_model_cpu_offload(device="npu")',
      "diffusers' offload hooks target CUDA by default (device='cuda' / gpu_id in the releases this imitates); "
      "the Low-VRAM checkbox is offered in the UI"),
    C('=pipe.to("cuda")', "tensor_to_device", R, True, 'pipe.to("npu")', "'cuda' device string fails without CUDA"),
    C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", X, True, None,
      "called unconditionally; xformers has no NPU backend. Drop it (default SDPA processor runs NPU FA)"),
    C('pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead"', "compile_mode", R, False,
      'pipe.unet = torch.compile(pipe.unet, backend="npugraphs")',
      "reduce-overhead = CUDA graphs; npugraphs is the NPU analogue (only with --compile; unconfirmed)"),
    C('return refiner.to("cuda")', "tensor_to_device", R, True, 'return refiner.to("npu")',
      "'cuda' device string; reached whenever the refiner box is ticked"),
    C("free, total = torch.cuda.mem_get_info()", "torch_cuda_api", R, True,
      "free, total = torch.npu.mem_get_info()", "runs on every rerun of the sidebar; raises without CUDA"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C('generator = torch.Generator("cuda").manual_seed(int(seed))', "device_type", R, True,
      'generator = torch.Generator("npu").manual_seed(int(seed))',
      "a CUDA generator cannot be created without CUDA (and must match the pipeline's device)"),
])

E("torchserve_handler", "serve/handlers/transformers_classifier_handler.py", "explicit_replacement",
  "pytorch/serve Huggingface_Transformers example handler (BaseHandler, gpu_id from system properties)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('self.map_location = "cuda" if torch.cuda.is_available()', "device_type", R, True,
      'self.map_location = "npu" if torch.npu.is_available() and properties.get("gpu_id") is not None else "cpu"',
      "on an NPU host the handler falls back to CPU"),
    C('=if torch.cuda.is_available() and properties.get("gpu_id") is not None', "device_type", R, True,
      'if torch.npu.is_available() and properties.get("gpu_id") is not None',
      "same CUDA-only test for the device index"),
    C('and self.device.type == "cuda"', "device_type", R, False,
      'self.use_fp16 = bool(self.setup_config.get("fp16", True)) and self.device.type == "npu"',
      "fp16 silently off on NPU: slower fp32 inference, still correct"),
    C("torch.cuda.amp.autocast(enabled=self.use_fp16)", "amp", R, False,
      "with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.float16, enabled=self.use_fp16):",
      "a no-op while use_fp16 is False on NPU; needed once fp16 is enabled for the npu device"),
    C("torch.cuda.memory_allocated(self.device) // 2**20", "torch_cuda_api", R, False,
      '"memory_allocated_mb": torch.npu.memory_allocated(self.device) // 2**20',
      "guarded by device.type == 'cuda': reports 0 on NPU; describe_handle only"),
    C('if self.device.type == "cuda" else 0,', "device_type", R, False, 'if self.device.type == "npu" else 0,',
      "goes with the memory_allocated change"),
])

E("fastapi_batch_server", "server/app.py", "explicit_replacement",
  "FastAPI dynamic-batching generation server (asyncio queue, synchronize()-timed device work)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = os.getenv("DEVICE", "cuda")', "device_type", R, True, 'DEVICE = os.getenv("DEVICE", "npu")',
      "default device string 'cuda' fails on an NPU host"),
    C("torch.cuda.set_device(GPU_ID)", "torch_cuda_api", R, True, "torch.npu.set_device(GPU_ID)",
      "raises at import time without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()",
      "raises without CUDA (and would not wait for NPU work)"),
    C("torch.cuda.synchronize()  # generate() is async", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # generate() is async on the device", "raises without CUDA; device_ms would be wrong"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False, "except torch.OutOfMemoryError:",
      "whether NPU OOM surfaces as torch.cuda.OutOfMemoryError or a RuntimeError is unconfirmed; the retry path "
      "would be skipped in the latter case"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C('"device": torch.cuda.get_device_name(GPU_ID),', "torch_cuda_api", R, True,
      '"device": torch.npu.get_device_name(GPU_ID),', "/health raises without CUDA"),
    C("torch.cuda.memory_allocated(GPU_ID)", "torch_cuda_api", R, False,
      '"mem_allocated_gb": round(torch.npu.memory_allocated(GPU_ID) / 2**30, 2),', MEMLOG_NOTE),
    C("torch.cuda.memory_reserved(GPU_ID)", "torch_cuda_api", R, False,
      '"mem_reserved_gb": round(torch.npu.memory_reserved(GPU_ID) / 2**30, 2),', MEMLOG_NOTE),
])

E("llm_throughput_bench", "benchmarks/bench_llm_throughput.py", "explicit_replacement",
  "LLM prefill/decode throughput benchmark (CUDA events, peak-memory stats, nvidia-smi query)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('ap.add_argument("--attn", default="flash_attention_2"', "attention_kernel", R, True,
      'ap.add_argument("--attn", default="sdpa", choices=["eager", "sdpa"])', FA2_NOTE),
    C('["nvidia-smi", "--query-gpu=', "torch_cuda_api", R, False, '["npu-smi", "info"],',
      "FileNotFoundError is caught (reports 'n/a'); npu-smi has no --query-gpu CSV mode"),
    C('"device_name": torch.cuda.get_device_name(0),', "torch_cuda_api", R, True,
      '"device_name": torch.npu.get_device_name(0),', "raises without CUDA"),
    C("torch.cuda.get_device_capability(0)", "device_capability_check", R, True,
      '"capability": None,  # no SM capability on NPU',
      "get_device_capability is CUDA-only (None on NPU under transfer_to_npu): map() over it fails"),
    C("torch.cuda.synchronize()  # drain warm-up work", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # drain warm-up work", "raises without CUDA"),
    C("start = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "start = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("end = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", R, True,
      "end = torch.npu.Event(enable_timing=True)", "CUDA events cannot be created without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", R, True, "torch.npu.synchronize()", "raises without CUDA"),
    C('(bs, args.prompt_len), device="cuda")', "device_type", R, True,
      'input_ids = torch.randint(100, vocab - 100, (bs, args.prompt_len), device="npu")',
      "'cuda' device string fails without CUDA"),
    C("torch.cuda.empty_cache()  # start every", "torch_cuda_api", R, False,
      "torch.npu.empty_cache()  # start every batch size from a clean pool", EMPTY_NOTE),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device: raises without CUDA"),
    C("peak_gb = torch.cuda.max_memory_allocated()", "torch_cuda_api", R, True,
      "peak_gb = torch.npu.max_memory_allocated() / 1024 ** 3",
      "reads 0 on NPU: the benchmark's peak-memory column would be wrong"),
    C('"reserved_gb": round(torch.cuda.max_memory_reserved()', "torch_cuda_api", R, True,
      '"reserved_gb": round(torch.npu.max_memory_reserved() / 1024 ** 3, 2),', "reads 0 on NPU: wrong result"),
    C("torch.cuda.manual_seed(0)", "torch_cuda_api", R, False, "torch.npu.manual_seed(0)",
      "lazily queued and harmless without CUDA; inputs would not be seeded on NPU"),
    C(").cuda().eval()", "tensor_to_device", R, True, ").npu().eval()", ".cuda() fails without CUDA"),
    C("weights_gb = torch.cuda.memory_allocated()", "torch_cuda_api", R, True,
      "weights_gb = torch.npu.memory_allocated() / 1024 ** 3", "reads 0 on NPU: wrong reported weight size"),
    C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", R, False, "except torch.OutOfMemoryError:",
      "NPU OOM exception type unconfirmed; the sweep would crash instead of stopping"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("onnx_ort_export", "deploy/export_and_run_onnx.py", "explicit_replacement",
  "ONNX export + onnxruntime-gpu IO-binding inference and optimum ORTModel (CUDAExecutionProvider)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('("CUDAExecutionProvider", {"device_id": 0,', "device_type", R, True,
      '("CANNExecutionProvider", {"device_id": 0, "arena_extend_strategy": "kNextPowerOfTwo",',
      "no CUDA EP on an Ascend host: ORT falls back to CPU (and the assert below fails). onnxruntime's CANN EP "
      "is the counterpart (not in the knowledge base: unconfirmed)"),
    C('"cudnn_conv_algo_search": "EXHAUSTIVE"', "device_type", R, False,
      '"npu_mem_limit": 16 * 1024 ** 3, "precision_mode": "force_fp16"}),',
      "cuDNN-specific provider options; CANN EP option names unconfirmed"),
    C('assert "CUDAExecutionProvider" in sess.get_providers()', "device_type", R, True,
      'assert "CANNExecutionProvider" in sess.get_providers(), "onnxruntime-cann not active"',
      "fails on an NPU host"),
    C('.eval().to("cuda")', "tensor_to_device", R, True,
      'model = AutoModelForSequenceClassification.from_pretrained(args.model).eval().to("npu")',
      "'cuda' device string fails without CUDA"),
    C('v.to("cuda") for k, v in enc.items()', "tensor_to_device", R, True,
      'ref = model(**{k: v.to("npu") for k, v in enc.items()}).logits.cpu().numpy()', "'cuda' device string"),
    C('input_ids = enc["input_ids"].to("cuda").contiguous()', "tensor_to_device", R, True,
      'input_ids = enc["input_ids"].to("npu").contiguous()', "'cuda' device string"),
    C('attention_mask = enc["attention_mask"].to("cuda").contiguous()', "tensor_to_device", R, True,
      'attention_mask = enc["attention_mask"].to("npu").contiguous()', "'cuda' device string"),
    C('dtype=torch.float32, device="cuda")', "device_type", R, True,
      'logits = torch.empty((args.batch, 2), dtype=torch.float32, device="npu")', "'cuda' device string"),
    C('binding.bind_input("input_ids", device_type="cuda"', "device_type", R, True,
      'binding.bind_input("input_ids", device_type="cann", device_id=0, element_type=np.int64,',
      "ORT CUDA device binding is unavailable; CANN EP device name unconfirmed"),
    C('binding.bind_input("attention_mask", device_type="cuda"', "device_type", R, True,
      'binding.bind_input("attention_mask", device_type="cann", device_id=0, element_type=np.int64,',
      "as above"),
    C('binding.bind_output("logits", device_type="cuda"', "device_type", R, True,
      'binding.bind_output("logits", device_type="cann", device_id=0, element_type=np.float32,', "as above"),
    C('provider="CUDAExecutionProvider",', "device_type", R, True, 'provider="CANNExecutionProvider",',
      "optimum raises when the requested provider is not available"),
])

TRT_NOTE = "TensorRT / pycuda are CUDA-only; on Ascend build an .om with ATC and run it with ACL / ais_bench"
E("trt_engine_build", "deploy/trt/build_engine.py", "explicit_replacement",
  "TensorRT ONNX->engine builder + pycuda runner for a ViT/CLIP image tower", [
    C("import pycuda.autoinit", "custom_cuda_extension", X, True, None, TRT_NOTE + " (creates a CUDA context)"),
    C("import pycuda.driver as cuda", "custom_cuda_extension", R, True, "import subprocess", TRT_NOTE),
    C("import tensorrt as trt", "custom_cuda_extension", R, True,
      "from ais_bench.infer.interface import InferSession", TRT_NOTE + " (ais_bench: unconfirmed in knowledge)"),
    C("TRT_LOGGER = trt.Logger(trt.Logger.WARNING)", "custom_cuda_extension", X, True, None, TRT_NOTE),
    C("builder = trt.Builder(TRT_LOGGER)", "custom_cuda_extension", R, True,
      'cmd = ["atc", f"--model={onnx_path}", "--framework=5", f"--output={engine_path[:-3]}", '
      '"--soc_version=Ascend910B", f"--input_shape=input:-1,3,{image_size},{image_size}"]',
      TRT_NOTE + " (atc flags unconfirmed)"),
    C("serialized = builder.build_serialized_network(network, config)", "custom_cuda_extension", R, True,
      "subprocess.run(cmd, check=True)", TRT_NOTE),
    C("self.engine = runtime.deserialize_cuda_engine(f.read())", "custom_cuda_extension", R, True,
      "self.session = InferSession(device_id=0, model_path=engine_path)", TRT_NOTE),
    C("self.stream = cuda.Stream()", "custom_cuda_extension", X, True, None, "pycuda stream; CUDA-only"),
    C("h_in = cuda.pagelocked_empty(", "custom_cuda_extension", X, True, None, "pycuda host buffer; CUDA-only"),
    C("h_out = cuda.pagelocked_empty(", "custom_cuda_extension", X, True, None, "pycuda host buffer; CUDA-only"),
    C("d_in = cuda.mem_alloc(h_in.nbytes)", "custom_cuda_extension", X, True, None, "cudaMalloc via pycuda"),
    C("d_out = cuda.mem_alloc(h_out.nbytes)", "custom_cuda_extension", X, True, None, "cudaMalloc via pycuda"),
    C("cuda.memcpy_htod_async(d_in, h_in, self.stream)", "custom_cuda_extension", X, True, None,
      "pycuda H2D copy"),
    C("self.context.execute_async_v3(stream_handle=self.stream.handle)", "custom_cuda_extension", R, True,
      'return self.session.infer([batch_np], mode="dymshape")[0]', TRT_NOTE),
    C("cuda.memcpy_dtoh_async(h_out, d_out, self.stream)", "custom_cuda_extension", X, True, None,
      "pycuda D2H copy"),
    C("self.stream.synchronize()", "custom_cuda_extension", X, True, None, "pycuda stream sync"),
])

E("compile_cudagraph_generate", "scripts/fast_generate.py", "explicit_replacement",
  "gpt-fast-style static-cache decoding with torch.compile prefill and a hand-captured CUDA graph decode step", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("torch._inductor.config.coordinate_descent_tuning = True", "triton_kernel_tuning", X, False, None,
      "Triton-GEMM autotuning knob; Inductor's NPU backend does not use CUDA Triton tuning (unconfirmed)"),
    C('DEVICE = torch.device("cuda", 0)', "device_type", R, True, 'DEVICE = torch.device("npu", 0)',
      "'cuda' device fails without CUDA"),
    C('default="max-autotune-no-cudagraphs"', "compile_mode", R, False,
      'ap.add_argument("--compile-mode", default="default")',
      "max-autotune relies on Triton GEMM autotuning; torch.compile on NPU needs torch_npu >= 2.6 (unconfirmed)"),
    C("s = torch.cuda.Stream()", "torch_cuda_api", R, True, "s = torch.npu.Stream()", "CUDA stream needs CUDA"),
    C("s.wait_stream(torch.cuda.current_stream())", "torch_cuda_api", R, True,
      "s.wait_stream(torch.npu.current_stream())", "CUDA-only"),
    C("with torch.cuda.stream(s):", "torch_cuda_api", R, True, "with torch.npu.stream(s):", "CUDA-only"),
    C("torch.cuda.current_stream().wait_stream(s)", "torch_cuda_api", R, True,
      "torch.npu.current_stream().wait_stream(s)", "CUDA-only"),
    C("self.graph = torch.cuda.CUDAGraph()", "torch_cuda_api", R, True, "self.graph = torch.npu.NPUGraph()",
      "torch.cuda.CUDAGraph -> torch.npu.NPUGraph (inference only, per the 2.7.1 API list)"),
    C("with torch.cuda.graph(self.graph):", "torch_cuda_api", R, True, "with torch.npu.graph(self.graph):",
      "CUDA graph capture context; NPU counterpart torch.npu.graph"),
    C("torch.cuda.synchronize()  # start the clock", "torch_cuda_api", R, True,
      "torch.npu.synchronize()  # start the clock on an idle device", "raises without CUDA"),
    C("torch.cuda.synchronize()  # prefill done", "torch_cuda_api", R, True, "torch.npu.synchronize()  # prefill done",
      "raises without CUDA"),
    C("torch.cuda.synchronize()  # decode done", "torch_cuda_api", R, True, "torch.npu.synchronize()  # decode done",
      "raises without CUDA"),
    C("torch.cuda.max_memory_allocated(DEVICE)", "torch_cuda_api", R, False,
      'print(f"peak memory {torch.npu.max_memory_allocated(DEVICE) / 2**30:.2f} GiB")', MEMLOG_NOTE),
])

E("whisper_cli", "whisper_cli/transcribe.py", "explicit_replacement",
  "insanely-fast-whisper-style batched Whisper CLI (pipeline chunking, --device-id, mps branch)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('return f"cuda:{device_id}"', "device_type", R, True, 'return f"npu:{device_id}"',
      "every non-mps device id becomes a 'cuda:N' string"),
    C("torch.cuda.set_device(int(args.device_id))", "torch_cuda_api", R, True,
      "torch.npu.set_device(int(args.device_id))", "raises without CUDA"),
    C('model.forward = torch.compile(model.forward, mode="reduce-overhead"', "compile_mode", R, False,
      'model.forward = torch.compile(model.forward, backend="npugraphs")',
      "CUDA-graph compile mode; only with --compile (unconfirmed on NPU)"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", R, False,
      '"peak_mem_gb": round(torch.npu.max_memory_allocated() / 2**30, 2) if device != "mps" else None,',
      MEMLOG_NOTE + " (metadata field)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("depth_sam_demo", "demo/app_depth_sam.py", "explicit_replacement",
  "SAM 2 image-predictor + Depth-Anything-V2 gradio demo (global bf16 autocast, Ampere TF32 check)", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C('DEVICE = "cuda" if torch.cuda.is_available() else "mps"', "device_type", R, True,
      'DEVICE = "npu" if torch.npu.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"',
      "Depth-Anything runs on CPU on an NPU host"),
    C('torch.autocast("cuda", dtype=torch.bfloat16).__enter__()', "amp", R, True,
      'torch.autocast("npu", dtype=torch.bfloat16).__enter__()',
      "CUDA autocast is disabled without CUDA: SAM 2 would run fp32 instead of the bf16 it is set up for"),
    C("if torch.cuda.get_device_properties(0).major >= 8:", "device_capability_check", R, True,
      "if torch.npu.is_available():",
      "get_device_properties needs CUDA; NPU properties have no major/minor (MSTT README)"),
    C('sam2_model = build_sam2(ARGS.sam_cfg, ARGS.sam_ckpt, device="cuda")', "device_type", R, True,
      'sam2_model = build_sam2(ARGS.sam_cfg, ARGS.sam_ckpt, device="npu")', "'cuda' device string"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
])

E("colab_notebook_script", "notebooks/finetune_mistral_sft.py", "explicit_replacement",
  "Colab SFT+LoRA notebook exported with nbconvert (!nvidia-smi / !pip cells as os.system, GPU stats cells)", [
    C('=os.system("nvidia-smi")', "torch_cuda_api", R, False, 'os.system("npu-smi info")',
      "os.system only prints 'command not found'; the cell does not fail"),
    C('os.system("pip install -q flash-attn --no-build-isolation")', "attention_kernel", X, False, None,
      "flash-attn cannot build on Ascend; os.system does not raise, the failure shows later"),
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("assert torch.cuda.is_available()", "device_type", R, True,
      'assert torch.npu.is_available(), "Switch to an NPU runtime first!"', "fails on an NPU host"),
    C("gpu_stats = torch.cuda.get_device_properties(0)", "torch_cuda_api", R, True,
      "gpu_stats = torch.npu.get_device_properties(0)", "raises without CUDA (name/total_memory exist on NPU)"),
    C("start_gpu_memory = round(torch.cuda.max_memory_reserved()", "torch_cuda_api", R, False,
      "start_gpu_memory = round(torch.npu.max_memory_reserved() / 1024 / 1024 / 1024, 3)", MEMLOG_NOTE),
    C("=load_in_4bit=True,", "unsupported_op_workaround", R, False,
      "load_in_4bit=True,  # bitsandbytes multi-backend build with NPU backend",
      NF4_NOTE + "; only used when the card has < 30 GB"),
    C("torch_dtype=torch.bfloat16 if torch.cuda.is_bf16_supported()", "torch_cuda_api", R, True,
      "torch_dtype=torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16,", BF16Q_NOTE),
    C('attn_implementation="flash_attention_2",', "attention_kernel", R, True, 'attn_implementation="sdpa",',
      FA2_NOTE),
    C('optim="adamw_8bit",', "fused_optimizer", R, True, 'optim="adamw_torch",',
      "bitsandbytes 8-bit AdamW is not listed for NPU"),
    C("fp16=not torch.cuda.is_bf16_supported(),", "torch_cuda_api", R, True,
      "fp16=not torch.npu.is_bf16_supported(),", BF16Q_NOTE),
    C("=bf16=torch.cuda.is_bf16_supported(),", "torch_cuda_api", R, True, "bf16=torch.npu.is_bf16_supported(),",
      BF16Q_NOTE),
    C("used_memory = round(torch.cuda.max_memory_reserved()", "torch_cuda_api", R, False,
      "used_memory = round(torch.npu.max_memory_reserved() / 1024 / 1024 / 1024, 3)", MEMLOG_NOTE),
    C('return_tensors="pt").to("cuda")', "tensor_to_device", R, True,
      'inputs = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt").to(model.device)',
      "'cuda' device string"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C('os.system("nvidia-smi --query-gpu=memory.used', "torch_cuda_api", R, False, 'os.system("npu-smi info")',
      "prints an error only"),
])

E("quantize_gptq_bnb", "tools/quantize_model.py", "explicit_replacement",
  "AutoGPTQ / optimum GPTQConfig (exllama v2) / bitsandbytes LLM.int8 quantise-and-compare script", [
    C("=import torch", "import_torch_npu", A, True, "import torch_npu", IMPORT_NOTE),
    C("from auto_gptq import AutoGPTQForCausalLM, BaseQuantizeConfig", "custom_cuda_extension", R, True,
      "from msmodelslim.pytorch.llm_ptq.llm_ptq_tools import Calibrator, QuantConfig  # Ascend msModelSlim",
      "auto-gptq wheels are built against CUDA (cu121 index) and ship CUDA/exllama kernels; no NPU build. "
      "msModelSlim as replacement is not in the knowledge base (unconfirmed)"),
    C('.to("cuda:0")', "tensor_to_device", R, True,
      "batch = enc[:, i * seqlen: (i + 1) * seqlen].to(model.device)", "'cuda:0' device string"),
    C('AutoGPTQForCausalLM.from_quantized(args.out, device="cuda:0"', "custom_cuda_extension", R, True,
      "return AutoModelForCausalLM.from_pretrained(args.out, device_map={'': 'npu:0'}, torch_dtype=torch.float16,",
      "CUDA device + CUDA QuantLinear kernels"),
    C("use_exllama=True, exllama_config=", "custom_cuda_extension", R, True,
      "desc_act=args.desc_act, use_exllama=False)",
      "exllama v2 kernels are CUDA-only; a non-CUDA GPTQ backend on NPU is itself unconfirmed"),
    C("bnb_config = BitsAndBytesConfig(load_in_8bit=True", "unsupported_op_workaround", R, True,
      'bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")',
      "LLM.int8 is not listed for NPU in bitsandbytes (only NF4 quant/dequant)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", R, False, "torch.npu.empty_cache()", EMPTY_NOTE),
    C("=torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", R, True, "torch.npu.reset_peak_memory_stats()",
      "resolves the current CUDA device: raises without CUDA"),
    C('"peak_gib": round(torch.cuda.max_memory_allocated()', "torch_cuda_api", R, True,
      '"peak_gib": round(torch.npu.max_memory_allocated() / 2**30, 2),',
      "reads 0 on NPU: the memory comparison the script exists for would be wrong"),
])

E("launch_sh", "scripts/train_multi_gpu.sh", "explicit_replacement",
  "8-GPU accelerate launcher shell script for the HF example scripts (set -euo pipefail, NCCL env)", [
    C("export CUDA_VISIBLE_DEVICES=", "env_var", R, True,
      "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
      "the NPU runtime reads ASCEND_RT_VISIBLE_DEVICES"),
    C("export NCCL_P2P_DISABLE=", "env_var", X, False, None, "NCCL-only; HCCL ignores it"),
    C("export NCCL_IB_DISABLE=1", "env_var", X, False, None, "NCCL-only; HCCL ignores it"),
    C("export NCCL_DEBUG=WARN", "env_var", R, False, "export ASCEND_GLOBAL_LOG_LEVEL=3",
      "NCCL-only log level; ASCEND_GLOBAL_LOG_LEVEL controls CANN logging (3 = error)"),
    C("export NCCL_ASYNC_ERROR_HANDLING=1", "env_var", R, False, "export HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL-only; HCCL counterpart name unconfirmed in knowledge"),
    C("export PYTORCH_CUDA_ALLOC_CONF=", "env_var", R, False,
      "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
      "CUDA caching-allocator setting, ignored by the NPU allocator (NPU variable name unconfirmed in knowledge)"),
    C("nvidia-smi --query-gpu=index,name", "torch_cuda_api", R, True, "npu-smi info",
      "command not found under set -e: the script exits before launching"),
    C("torch.version.cuda, 'gpus', torch.cuda.device_count()", "torch_cuda_api", R, False,
      "python -c \"import torch, torch_npu; print('torch', torch.__version__, 'npus', torch.npu.device_count())\"",
      "prints cuda None / gpus 0; informational"),
    C("--attn_implementation flash_attention_2", "attention_kernel", R, True, "--attn_implementation sdpa \\",
      FA2_NOTE),
    C("--enable_xformers_memory_efficient_attention --use_8bit_adam", "attention_kernel", R, True,
      "--mixed_precision fp16 \\",
      "these flags take the xformers (ValueError: not available) and bitsandbytes 8-bit paths, neither exists on NPU"),
    C("=nvidia-smi", "torch_cuda_api", R, True, "npu-smi info",
      "command not found under set -e: the script exits non-zero after training"),
])

E("requirements_txt", "requirements.txt", "explicit_replacement",
  "examples + deployment requirements.txt pinned to cu121 wheels (flash-attn, xformers, TensorRT, faiss-gpu)", [
    C("--extra-index-url https://download.pytorch.org/whl/cu121", "import_torch_npu", R, True,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "CUDA wheel index; on Ascend torch comes from PyPI/cpu index plus torch-npu"),
    C("torch==2.3.1+cu121", "import_torch_npu", R, True, "torch==2.3.1  # + torch-npu==2.3.1",
      "+cu121 build cannot drive Ascend; torch_npu version must equal torch's"),
    C("torchvision==0.18.1+cu121", "custom_cuda_extension", R, True, "torchvision==0.18.1",
      "CUDA local-version wheel"),
    C("torchaudio==2.3.1+cu121", "custom_cuda_extension", R, True, "torchaudio==2.3.1", "CUDA local-version wheel"),
    C("optimum[onnxruntime-gpu]", "custom_cuda_extension", R, True, "optimum[onnxruntime]>=1.21.0",
      "pulls onnxruntime-gpu (CUDA EP)"),
    C("bitsandbytes>=0.43.1", "unsupported_op_workaround", R, False,
      "bitsandbytes  # multi-backend build with the Ascend NPU backend (NF4 only)", NF4_NOTE),
    C("flash-attn==2.6.3", "attention_kernel", X, True, None, "cannot be installed on Ascend (needs nvcc)"),
    C("xformers==0.0.27", "attention_kernel", X, True, None, "no NPU backend; CUDA build pinned to torch 2.3.1+cu"),
    C("auto-gptq==0.7.1", "custom_cuda_extension", X, True, None, "CUDA-built wheel from the cu121 index"),
    C("=liger-kernel", "custom_cuda_extension", X, False, None,
      "Triton (CUDA) kernels; not imported by these scripts"),
    C("onnxruntime-gpu>=1.18.1", "custom_cuda_extension", R, True, "onnxruntime-cann",
      "CUDA execution provider only; CANN EP build is the counterpart (unconfirmed in knowledge)"),
    C("tensorrt==10.1.0", "custom_cuda_extension", X, True, None, "NVIDIA-only; use CANN ATC / ACL"),
    C("=pycuda", "custom_cuda_extension", X, True, None, "builds against the CUDA toolkit"),
    C("=nvidia-ml-py", "custom_cuda_extension", X, False, None, "NVML has no NPU counterpart; not imported here"),
    C("=faiss-gpu", "unsupported_op_workaround", R, True, "faiss-cpu", "CUDA-only FAISS build"),
])

E("accelerate_yaml", "configs/accelerate_zero3.yaml", "explicit_replacement",
  "accelerate config (DeepSpeed ZeRO-3, dynamo INDUCTOR max-autotune) used by TRL examples", [
    C("dynamo_backend: INDUCTOR", "compile_mode", R, True, "dynamo_backend: 'NO'",
      "Inductor on NPU needs torch_npu >= 2.6; this repo pins torch 2.3.1 (requirements.txt)"),
    C("dynamo_mode: max-autotune", "compile_mode", R, False, "dynamo_mode: default",
      "max-autotune = Triton GEMM autotuning + CUDA graphs (unconfirmed on NPU)"),
])
