# Labels for probe308 (machine unlearning / concept erasure, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit. See ../README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


E("esd_train", "train-scripts/train-esd.py", "explicit_replacement",
  "ESD (rohitgandikota/erasing) CompVis training script, teacher/student on two devices", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; the port targets torch 2.1 + torch_npu (no device-backend autoload before 2.5.1)"),
    C("devices = [f'cuda:{int(d.strip())}'", "device_type", "replace", True,
      "devices = [f'npu:{int(d.strip())}' for d in args.devices.split(',')]",
      "every tensor/model placement in the script flows from this list; 'cuda:N' fails without CUDA"),
])

E("esd_ddim", "stable-diffusion/ldm/models/diffusion/ddim.py", "device_branch_or_abstraction",
  "CompVis ldm DDIMSampler as vendored (with till_T early stop) by ESD / SalUn-SD / Selective Amnesia", [
    C('if attr.device != torch.device("cuda"):', "device_type", "replace", False,
      "if attr.device != self.model.device:",
      "comparison against a CUDA device is always true on an NPU host; harmless once the move below targets the model's device, edited for consistency"),
    C('attr = attr.to(torch.device("cuda"))', "tensor_to_device", "replace", True,
      "attr = attr.to(self.model.device)",
      "hard-coded CUDA move of every schedule buffer; fails on NPU (and ignores the teacher's second device)"),
])

E("esd_encoders", "stable-diffusion/ldm/modules/encoders/modules.py", "device_branch_or_abstraction",
  "CompVis ldm conditioning encoders (FrozenCLIPEmbedder etc.) as vendored by the erasure repos", [
    C('def __init__(self, n_embed, n_layer, vocab_size, max_seq_len=77, device="cuda"):', "device_type", "replace", False,
      'def __init__(self, n_embed, n_layer, vocab_size, max_seq_len=77, device="npu"):',
      "CUDA default; only reached by LDM-BERT configs, not by the SD-v1 configs these repos load"),
    C('def __init__(self, device="cuda", vq_interface=True, max_length=77):', "device_type", "replace", False,
      'def __init__(self, device="npu", vq_interface=True, max_length=77):',
      "BERTTokenizer is built without a device argument, so this default decides where tokens go; unused by SD-v1"),
    C('device="cuda", use_tokenizer=True, embedding_dropout=0.0):', "device_type", "replace", False,
      'device="npu", use_tokenizer=True, embedding_dropout=0.0):',
      "CUDA default of BERTEmbedder; unused by SD-v1 configs"),
    C('def __init__(self, version="openai/clip-vit-large-patch14", device="cuda", max_length=77):', "device_type", "replace", True,
      'def __init__(self, version="openai/clip-vit-large-patch14", device="npu", max_length=77):',
      "SD-v1 text encoder; scripts that do not overwrite cond_stage_model.device send the tokens to 'cuda' and fail"),
    C("def __init__(self, version='ViT-L/14', device=\"cuda\", max_length=77, n_repeat=1, normalize=True):", "device_type", "replace", False,
      "def __init__(self, version='ViT-L/14', device=\"npu\", max_length=77, n_repeat=1, normalize=True):",
      "CUDA default of the OpenAI-CLIP text embedder; unused by SD-v1 configs"),
    C("device='cuda' if torch.cuda.is_available() else 'cpu',", "device_type", "replace", False,
      "device='npu' if torch.npu.is_available() else 'cpu',",
      "would silently pick CPU on an NPU host; image embedder not used by SD-v1 text-to-image configs"),
])

E("esd_diffusers", "esd_diffusers.py", "explicit_replacement",
  "ESD diffusers port (StableDiffuser / FineTunedModel wrappers, erasing repo)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch 2.1-era project, torch_npu must be imported to register the npu device"),
    C("checkpoint = torch.load(checkpoint)", "device_type", "replace", True,
      "checkpoint = torch.load(checkpoint, map_location='cpu')",
      "published ESD .pt files were saved from CUDA tensors; without map_location torch.load tries to restore them on CUDA"),
    C("diffuser = StableDiffuser(scheduler='DDIM').to('cuda')", "tensor_to_device", "replace", True,
      "diffuser = StableDiffuser(scheduler='DDIM').to('npu')",
      "hard-coded CUDA placement of the whole SD pipeline"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host (CUDA never initialised); only releases cached memory"),
    C("torch.cuda.empty_cache()  # free the fine-tuned copies", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # free the fine-tuned copies before the next run",
      "silent no-op on an NPU host; memory hygiene only"),
    C("default='cuda:0')", "device_type", "replace", True,
      "parser.add_argument('--device', help='npu device to train on', type=str, required=False, default='npu:0')",
      "default device string is handed to set_device below"),
    C("torch.cuda.set_device(args.device)", "torch_cuda_api", "replace", True, "torch.npu.set_device(args.device)",
      "torch.cuda.set_device raises without a CUDA driver"),
])

E("esd_generate", "eval-scripts/generate-images.py", "explicit_replacement",
  "ESD/UCE eval-scripts/generate-images.py (hand-rolled SD sampling loop over a prompt csv)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; torch_npu must be imported before 'npu' devices can be used"),
    C("def generate_images(model_name, prompts_path, save_path, device='cuda:0', guidance_scale=7.5,", "device_type", "replace", True,
      "def generate_images(model_name, prompts_path, save_path, device='npu:0', guidance_scale=7.5,",
      "function is imported by notebooks/other scripts without a device argument"),
    C("unet.load_state_dict(torch.load(model_path))", "device_type", "replace", True,
      "unet.load_state_dict(torch.load(model_path, map_location='cpu'))",
      "ESD checkpoints were saved from CUDA tensors; loading them without map_location fails without CUDA (and the except only prints, so the ORIGINAL model would silently be evaluated)"),
    C("parser.add_argument('--device', help='cuda device to run on'", "device_type", "replace", True,
      "parser.add_argument('--device', help='npu device to run on', type=str, required=False, default='npu:0')",
      "CLI default device"),
])

E("uce_erase", "train-scripts/train_erase.py", "explicit_replacement",
  "UCE (rohitgandikota/unified-concept-editing) closed-form cross-attention edit script", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; registers the npu device with torch 2.x before the pipeline is moved"),
    C("device = f'cuda:{args.device}'", "device_type", "replace", True, "device = f'npu:{args.device}'",
      "single place the device is chosen; the pipeline and every tensor follow ldm_stable.device"),
])

E("uce_nudenet", "eval-scripts/nudenet-classes.py", "device_branch_or_abstraction",
  "NudeNet nudity-class counting + optional CLIP score used in ESD/UCE/MACE I2P evaluation", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script; needed before torch.npu.is_available() can be queried"),
    C('providers=["CUDAExecutionProvider", "CPUExecutionProvider"]', "device_type", "replace", False,
      'self.session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])',
      "onnxruntime has no CUDA provider on an Ascend host and falls back to CPU with a warning; an Ascend (CANN) provider build exists but was not confirmed in the knowledge notes - unconfirmed"),
    C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "add_branch", True,
      'device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else ("cuda" if torch.cuda.is_available() else "cpu")',
      "silently falls back to CPU for the CLIP score on an NPU host"),
])

E("mace_train", "src/cfr_lora_training.py", "device_branch_or_abstraction",
  "MACE (Shilin-LU/MACE) closed-form refinement + LoRA training on accelerate, Grounded-SAM masks", [
    C('device = "cuda"', "device_type", "add_branch", True, 'device = "npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cuda"',
      "Grounding-DINO, SAM and their box tensors are all placed on this hard-coded CUDA device (GroundingDINO then takes its pure-PyTorch deformable-attention path on NPU)"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; frees the detector memory before training"),
    C("unet.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
      "unet.set_attn_processor(AttnProcessor2_0())  # SDPA dispatches to the NPU fused attention",
      "xformers has no NPU backend; the branch is only reached when the config enables xformers (the YAML line is the required fix)"),
    C("torch.cuda.empty_cache()  # CFR keeps large k/v caches", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # CFR keeps large k/v caches on the device",
      "silent no-op on an NPU host; memory hygiene only"),
    C("optimizer_class = bnb.optim.AdamW8bit", "fused_optimizer", "replace", False,
      "optimizer_class = torch.optim.AdamW  # bitsandbytes 8-bit Adam is CUDA-only",
      "bitsandbytes 8-bit optimizers are CUDA-only (not listed for NPU); reached only with use_8bit_adam, which the shipped configs leave off"),
    C("torch.cuda.empty_cache()  # release LoRA optimizer state", "torch_cuda_api", "replace", False,
      "torch.npu.empty_cache()  # release LoRA optimizer state before the next concept",
      "silent no-op on an NPU host; memory hygiene only"),
])

E("mace_inference", "inference.py", "explicit_replacement",
  "MACE-style multi-GPU SD generation script (mp.spawn, one pipeline per GPU)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script (and spawned workers re-import it); registers the npu device"),
    C("pipe.enable_xformers_memory_efficient_attention()", "attention_kernel", "replace", False,
      "pipe.set_attn_processor(AttnProcessor2_0())",
      "xformers has no NPU build; the call is opt-in (--xformers) and wrapped in try/except, so it only prints a warning"),
    C('device = f"cuda:{rank}"', "device_type", "replace", True, 'device = f"npu:{rank}"',
      "per-process device string"),
    C("torch.cuda.set_device(rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(rank)",
      "raises without CUDA"),
    C('generator = torch.Generator(device="cuda").manual_seed(seed)', "device_type", "replace", True,
      'generator = torch.Generator(device="npu").manual_seed(seed)',
      "CUDA generator cannot be created on an NPU host (and a CPU generator would change the evaluated images)"),
    C('with torch.autocast("cuda", enabled=not args.fp32):', "amp", "replace", False,
      'with torch.autocast("npu", enabled=not args.fp32):',
      "autocast('cuda') is only disabled with a warning when CUDA is absent; the pipeline is already loaded in fp16, so output stays correct - consistency edit"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises on an NPU host"),
    C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
      'print(f"[npu{rank}] done, peak memory {torch.npu.max_memory_allocated() / 2**30:.1f} GiB")',
      "returns 0 without CUDA (log line only)"),
    C('os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus', "env_var", "replace", True,
      'os.environ["ASCEND_RT_VISIBLE_DEVICES"] = args.gpus',
      "ignored by the Ascend runtime, so --gpus would silently not restrict the devices used"),
    C("world_size = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "world_size = torch.npu.device_count()",
      "returns 0 on an NPU host and trips the assert"),
])

E("mace_config", "configs/object/erase_ship.yaml", "explicit_replacement",
  "MACE per-experiment OmegaConf YAML", [
    C("enable_xformers_memory_efficient_attention: true", "attention_kernel", "replace", True,
      "enable_xformers_memory_efficient_attention: false   # no xformers on Ascend; diffusers uses SDPA",
      "with xformers unavailable the training script raises 'xformers is not available' when this is true"),
])

E("mace_env", "environment.yaml", "explicit_replacement",
  "MACE conda environment (pytorch + nvidia channels, xformers, bitsandbytes, onnxruntime-gpu)", [
    C("=- nvidia", "torch_cuda_api", "removal", False, None,
      "NVIDIA conda channel only serves the CUDA runtime; harmless but dead on an Ascend host"),
    C("=- pytorch=2.0.1", "import_torch_npu", "replace", False, "- pytorch=2.1.0  # oldest torch with a maintained torch_npu line",
      "torch_npu for 2.0.1 exists only in the EOL 5.0.x line (knowledge: compatibility tables); bump recommended, torchvision follows"),
    C("=- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
      "pulls the CUDA 11.8 runtime; not resolvable for Ascend (aarch64) hosts and pointless on x86 ones"),
    C("=- pip:", "import_torch_npu", "npu_only_addition", True, "    - torch-npu==2.1.0.post10",
      "torch_npu wheel (version = torch version + .postN) must be added to the pip section"),
    C("=- xformers==0.0.22", "attention_kernel", "removal", True, None,
      "xformers has no NPU backend and its wheels are CUDA builds pinned to torch 2.0.1"),
    C("=- bitsandbytes==0.41.1", "fused_optimizer", "removal", False, None,
      "only used for the optional 8-bit Adam, which has no NPU implementation"),
    C("=- onnxruntime-gpu==1.16.0", "device_type", "replace", False, "    - onnxruntime==1.16.0",
      "CUDA build of onnxruntime for NudeNet; without CUDA it runs on CPU anyway - unconfirmed whether the wheel installs on aarch64 Ascend hosts"),
    C("CUDA_HOME: /usr/local/cuda-11.8", "custom_cuda_extension", "removal", False, None,
      "only needed to nvcc-build GroundingDINO's deformable attention op; without it GroundingDINO uses its pure-PyTorch path"),
])

E("ca_pipeline", "diffusers/model_pipeline.py", "device_branch_or_abstraction",
  "Concept Ablation (nupurkmr9/concept-ablation) diffusers pipeline with custom / xformers attention processors", [
    C("elif not torch.cuda.is_available():", "torch_cuda_api", "replace", False,
      "elif not torch.npu.is_available():",
      "guard of the memory-efficient-attention path; once that path is re-pointed at an NPU kernel the CUDA check would always reject it"),
    C('_ = xformers.ops.memory_efficient_attention(torch.randn((1, 2, 40), device="cuda")', "device_type", "replace", False,
      '_ = torch.nn.functional.scaled_dot_product_attention(torch.randn((1, 2, 40), device="npu"), torch.randn((1, 2, 40), device="npu"), torch.randn((1, 2, 40), device="npu"))',
      "smoke test of the xformers kernel on CUDA tensors; unreachable on NPU (xformers not installable) unless the path is ported"),
    C("attention_probs = attn.get_attention_scores(query, key, attention_mask)", "attention_kernel", "replace", False,
      "hidden_states = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)",
      "default processor for every UNet attention layer materialises the full score matrix; SDPA dispatches to the NPU fused attention (performance only; the bmm below folds into it)"),
    C("hidden_states = xformers.ops.memory_efficient_attention(query, key, value, attn_bias=attention_mask, op=self.attention_op)", "attention_kernel", "replace", False,
      "hidden_states = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask)",
      "xformers kernel has no NPU backend; only reached with --enable_xformers_memory_efficient_attention"),
])

E("salun_main_random", "Classification/main_random.py", "explicit_replacement",
  "SalUn (OPTML-Group/Unlearn-Saliency) Classification/main_random.py unlearning driver", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script of a torch 1.13/2.0-era repo; the port needs torch_npu imported explicitly"),
    C("if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: device becomes CPU while model.cuda() below still crashes"),
    C("torch.cuda.set_device(int(args.gpu))", "torch_cuda_api", "replace", True, "torch.npu.set_device(int(args.gpu))",
      "select the card given by --gpu"),
    C('device = torch.device(f"cuda:{int(args.gpu)}")', "device_type", "replace", True,
      'device = torch.device(f"npu:{int(args.gpu)}")', "device used for map_location and resume"),
    C("=model.cuda()", "tensor_to_device", "replace", True, "model.npu()", "hard CUDA placement of the model"),
    C("mask = torch.load(args.mask_path)", "device_type", "replace", True,
      "mask = torch.load(args.mask_path, map_location=device)",
      "saliency masks are saved by generate_mask.py as CUDA tensors; loading them without map_location fails without CUDA"),
])

E("salun_utils", "Classification/utils.py", "explicit_replacement",
  "SalUn / Unlearn-Sparse Classification/utils.py (model+dataset setup, seeding, multi-GPU command runner)", [
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "silent no-op without CUDA; torch.manual_seed on the line above probably seeds the NPU generator too - unconfirmed"),
    C('prefix = "CUDA_VISIBLE_DEVICES={} ".format(gpu)', "env_var", "replace", True,
      'prefix = "ASCEND_RT_VISIBLE_DEVICES={} ".format(gpu)',
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so every generated job would run on device 0"),
])

E("salun_impl", "Classification/unlearn/impl.py", "explicit_replacement",
  "SalUn / Unlearn-Sparse unlearn/impl.py (iterative_unlearn decorator, RL and l1-sparse FT loops)", [
    C("x_rand = torch.rand(1, 3, args.input_size, args.input_size).cuda()", "tensor_to_device", "replace", True,
      "x_rand = torch.rand(1, 3, args.input_size, args.input_size).npu()", "dummy forward to materialise pruning masks"),
    C('args.rewind_pth, map_location=torch.device("cuda:" + str(args.gpu))', "device_type", "replace", True,
      'args.rewind_pth, map_location=torch.device("npu:" + str(args.gpu))', "CUDA map_location fails without CUDA"),
    C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
      "lazy CUDA init raises on an NPU host"),
    C("=image = image.cuda()", "tensor_to_device", "replace", True, "image = image.npu()", "forget batch"),
    C("target = torch.randint(0, args.num_classes, target.shape).cuda()", "tensor_to_device", "replace", True,
      "target = torch.randint(0, args.num_classes, target.shape).npu()", "random labels for RL"),
    C("image = image.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "image = image.npu(non_blocking=True)", "retain batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "target = target.npu(non_blocking=True)", "retain labels"),
    C("image, target = image.cuda(), target.cuda()", "tensor_to_device", "replace", True,
      "image, target = image.npu(), target.npu()", "retain batch for l1-sparse FT"),
])

E("salun_mia", "Classification/evaluation/SVC_MIA.py", "device_branch_or_abstraction",
  "SalUn / Unlearn-Sparse evaluation/SVC_MIA.py (SVC membership-inference on softmax features) + loss-threshold MIA", [
    C('torch.device("cuda:0")', "device_type", "replace", True, 'torch.device("npu:0")',
      "fallback branch for loaders that yield more than (x, y); with CUDA absent it picks CPU while the model sits on the NPU"),
    C("if torch.cuda.is_available()", "torch_cuda_api", "replace", True, "if torch.npu.is_available()",
      "same fallback; False on an NPU host"),
    C("x, y = x.cuda(), y.cuda()", "tensor_to_device", "replace", True, "x, y = x.npu(), y.npu()",
      "loss-based MIA batches"),
])

E("salun_fisher", "Classification/unlearn/fisher.py", "explicit_replacement",
  "Fisher forgetting + WoodFisher influence unlearning baselines (SalUn / Unlearn-Sparse unlearn/ folder), torch.func per-sample grads", [
    C("data, orig_target = data.cuda(), orig_target.cuda()", "tensor_to_device", "replace", True,
      "data, orig_target = data.npu(), orig_target.npu()", "diagonal Fisher batches"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host"),
    C("ps_grad = vmap(grad(loss_fn), in_dims=(None, None, 0, 0))", "unsupported_op_workaround", "replace", True,
      "ps_grad = lambda p, b, xs, ys: {k: torch.stack(v) for k, v in zip(p, zip(*[grad(loss_fn)(p, b, xi, yi).values() for xi, yi in zip(xs, ys)]))}",
      "torch.func.vmap is marked unsupported (✘) on Atlas A2/A3 in Ascend's PyTorch 2.7.1 API list and by msFmkTransplt; loop over samples with torch.func.grad (✔) instead"),
    C("data, label = data.cuda(), label.cuda()", "tensor_to_device", "replace", True,
      "data, label = data.npu(), label.npu()", "WoodFisher batches"),
    C("forget_grad = torch.zeros(n_params).cuda()", "tensor_to_device", "replace", True,
      "forget_grad = torch.zeros(n_params).npu()", "gradient accumulator; retain_grad follows via zeros_like"),
    C("=data = data.cuda()", "tensor_to_device", "replace", True, "data = data.npu()", "forget batch"),
    C("=label = label.cuda()", "tensor_to_device", "replace", True, "label = label.npu()", "forget labels"),
    C("data, label = data.cuda(non_blocking=True), label.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
      "data, label = data.npu(non_blocking=True), label.npu(non_blocking=True)", "retain batch"),
])

E("salun_sd_mask", "SD/train-scripts/generate_mask.py", "explicit_replacement",
  "SalUn SD/train-scripts/generate_mask.py (CompVis SD saliency masks for Imagenette classes / NSFW)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; frees the SD model before the CPU-side mask sort"),
    C('device = f"cuda:{int(args.device)}"', "device_type", "replace", True, 'device = f"npu:{int(args.device)}"',
      "single device choice that setup_model and the batches follow"),
])

E("scrub_loops", "thirdparty/repdistiller/helper/loops.py", "explicit_replacement",
  "SCRUB (meghdadk/SCRUB) vendored RepDistiller training loops (train_vanilla / train_distill max-min / validate)", [
    C("=if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "False on an NPU host: the batch stays on the CPU while the model is on the NPU"),
    C("=input = input.cuda()", "tensor_to_device", "replace", True, "input = input.npu()", "vanilla training batch"),
    C("=target = target.cuda()", "tensor_to_device", "replace", True, "target = target.npu()", "vanilla training labels"),
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True, "use_cuda = torch.npu.is_available()",
      "guard of the distillation batch move; False on an NPU host"),
    C("input = input.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "input = input.npu(non_blocking=True)",
      "distillation batch"),
    C("target = target.cuda(non_blocking=True)", "tensor_to_device", "replace", True, "target = target.npu(non_blocking=True)",
      "distillation labels"),
    C("contrast_idx = contrast_idx.cuda()", "tensor_to_device", "replace", True, "contrast_idx = contrast_idx.npu()",
      "CRD negatives (only with --distill crd)"),
    C("index = index.cuda()", "tensor_to_device", "replace", True, "index = index.npu()", "CRD sample indices"),
    C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
      "device = 'npu' if torch.npu.is_available() else 'cpu'",
      "validation would silently move batches to CPU while the model is on the NPU (device mismatch)"),
])

E("scrub_main", "scrub_unlearn.py", "explicit_replacement",
  "SCRUB driver script (teacher/student max-min distillation, optional DataParallel, SWA)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("torch.cuda.manual_seed(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(seed)",
      "silent no-op without CUDA; torch.manual_seed above probably covers the NPU generator - unconfirmed"),
    C('args.device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'args.device = torch.device(f"npu:{args.gpu}" if torch.npu.is_available() else "cpu")',
      "silently selects CPU on an NPU host"),
    C("model.load_state_dict(torch.load(args.checkpoint))", "device_type", "replace", True,
      "model.load_state_dict(torch.load(args.checkpoint, map_location='cpu'))",
      "teacher checkpoints were saved from CUDA tensors; torch.load without map_location fails without CUDA"),
    C("if args.multi_gpu and torch.cuda.device_count() > 1:", "torch_cuda_api", "replace", True,
      "if args.multi_gpu and torch.npu.device_count() > 1:",
      "device_count is 0 without CUDA, so the multi-device branch silently never runs"),
    C("module_list[0] = nn.DataParallel(module_list[0])", "unsupported_op_workaround", "replace", True,
      "pass  # nn.DataParallel is unsupported on NPU; launch with torchrun + DistributedDataParallel instead",
      "torch.nn.DataParallel is ✘ on Ascend (support list, msFmkTransplt limitation)"),
    C("=module_list.cuda()", "tensor_to_device", "replace", True, "module_list.npu()", "teacher/student placement"),
    C("=criterion_list.cuda()", "tensor_to_device", "replace", False, "criterion_list.npu()",
      "CE/KL criteria hold no tensors, so Module.cuda() touches nothing and is a silent no-op; edited for consistency"),
    C("torch.cuda.max_memory_allocated(args.device)", "torch_cuda_api", "replace", False,
      'print(f"SCRUB took {t2 - t1:.1f}s, peak {torch.npu.max_memory_allocated(args.device) / 1e9:.2f} GB")',
      "CUDA never initialised, so the stats call returns 0 before looking at the device argument; log line only"),
])

E("tofu_forget", "forget.py", "explicit_replacement",
  "TOFU (locuslab/tofu) forget.py: hydra + HF Trainer + DeepSpeed ZeRO, bf16, flash_attention_2 via config", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script launched by torchrun; torch 2.1-era repo, torch_npu must be imported for HF/DeepSpeed to see the NPU"),
    C("=device_map = {'': local_rank}", "device_type", "replace", False,
      "device_map = {'': f'npu:{local_rank}'}",
      "only used on the LoRA-merge path; a bare int means a CUDA ordinal to torch, accelerate is believed to remap it to npu:N - unconfirmed"),
    C('optim="paged_adamw_32bit",', "fused_optimizer", "replace", True, 'optim="adamw_torch",',
      "paged AdamW comes from bitsandbytes' CUDA paged optimizers; not available on NPU"),
    C('=model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, use_flash_attention_2=model_cfg["flash_attention2"] == "true", torch_dtype=torch.bfloat16, trust_remote_code=True)',
      "attention_kernel", "replace", False,
      'model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, attn_implementation="sdpa", torch_dtype=torch.bfloat16, trust_remote_code=True)',
      "flash-attn cannot be installed on NPU; the switch comes from config/model_config.yaml (labelled there as the required fix), SDPA dispatches to NPU FA"),
    C('oracle_model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, use_flash_attention_2=', "attention_kernel", "replace", False,
      'oracle_model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, attn_implementation="sdpa", torch_dtype=torch.bfloat16, trust_remote_code=True)',
      "same flash_attention2 switch for the KL/DPO/NPO reference model"),
    C('model = AutoModelForCausalLM.from_pretrained(model_id, use_flash_attention_2=', "attention_kernel", "replace", False,
      'model = AutoModelForCausalLM.from_pretrained(model_id, attn_implementation="sdpa", torch_dtype=torch.bfloat16, device_map=device_map)',
      "same switch on the LoRA merge path"),
])

E("tofu_dataloader", "dataloader.py", "device_branch_or_abstraction",
  "TOFU dataloader.py: CustomTrainerForgetting (grad ascent / grad diff / KL / IdK / DPO / NPO losses, DeepSpeed reference model)", [
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "silent no-op on an NPU host; cached generation buffers stay reserved after evaluation"),
])

E("tofu_eval", "evaluate_util.py", "device_branch_or_abstraction",
  "TOFU evaluate_util.py (truth ratio / ROUGE / generation eval; hydra entry point)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "also a hydra entry point (python evaluate_util.py ...); needs torch_npu for the NPU device"),
    C("=device_map = {'': local_rank}", "device_type", "replace", False,
      "device_map = {'': f'npu:{local_rank}'}",
      "a bare int in device_map means a CUDA ordinal to torch; accelerate is believed to remap ints to npu:N on Ascend - unconfirmed, so made explicit"),
    C('model = AutoModelForCausalLM.from_pretrained(model_id, config=config, use_flash_attention_2=', "attention_kernel", "replace", False,
      'model = AutoModelForCausalLM.from_pretrained(model_id, config=config, attn_implementation="sdpa", torch_dtype=torch.bfloat16, trust_remote_code=True, device_map=device_map)',
      "flash_attention2 switch read from config/model_config.yaml (required fix is there); SDPA -> NPU FA"),
    C('model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, use_flash_attention_2=', "attention_kernel", "replace", False,
      'model = AutoModelForCausalLM.from_pretrained(cfg.model_path, config=config, attn_implementation="sdpa", torch_dtype=torch.bfloat16, trust_remote_code=True, device_map=device_map)',
      "same switch for fine-tuned checkpoints"),
])

E("tofu_sh", "scripts/forget_and_eval.sh", "explicit_replacement",
  "TOFU-style launcher: torchrun forget.py / evaluate_util.py over splits and losses", [
    C("=set -e", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment must be sourced or import torch_npu fails (libhccl.so / ASCEND_OPP_PATH)"),
    C("export CUDA_VISIBLE_DEVICES=${GPUS:-0,1}", "env_var", "replace", True,
      "export ASCEND_RT_VISIBLE_DEVICES=${GPUS:-0,1}",
      "the Ascend runtime ignores CUDA_VISIBLE_DEVICES, so the device selection would silently not apply"),
    C("NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)", "torch_cuda_api", "replace", True,
      "NUM_GPUS=$(npu-smi info -l | grep -c 'NPU ID')",
      "nvidia-smi does not exist on an Ascend host; NUM_GPUS becomes 0 and torchrun gets --nproc_per_node=0"),
    C('echo "using ${NUM_GPUS} GPUs: ${CUDA_VISIBLE_DEVICES}"', "env_var", "replace", False,
      'echo "using ${NUM_GPUS} NPUs: ${ASCEND_RT_VISIBLE_DEVICES}"', "log line reads the renamed variable"),
    C("export NCCL_P2P_DISABLE=1", "env_var", "removal", False, None,
      "NCCL-only workaround for a PCIe-only GPU box; HCCL ignores it and has no direct equivalent"),
    C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None,
      "NCCL logging switch; ignored by HCCL (Ascend logging is ASCEND_GLOBAL_LOG_LEVEL)"),
])

E("tofu_model_cfg", "config/model_config.yaml", "explicit_replacement",
  "TOFU config/model_config.yaml (per-model hf_key, prompt tags, flash_attention2 switch)", [
    C('=flash_attention2: "true"', "attention_kernel", "replace", True, 'flash_attention2: "false"',
      "forget.py / evaluate_util.py turn this into use_flash_attention_2=True; flash-attn cannot be installed on NPU, so model loading raises"),
    C('flash_attention2: "true"   # sliding-window', "attention_kernel", "replace", True,
      'flash_attention2: "false"   # no flash-attn on Ascend; SDPA path',
      "same switch for Mistral"),
])

E("wmdp_unlearn", "rmu/unlearn.py", "device_branch_or_abstraction",
  "WMDP RMU (centerforaisafety/wmdp) rmu/unlearn.py: representation misdirection on zephyr-7b, frozen + updated copies", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry module (python -m rmu.unlearn); torch 2.1-era, torch_npu needed for device_map='auto' to see NPUs"),
    C('print(f"GPU memory allocated: {torch.cuda.memory_allocated() / 1e9:.1f} GB")', "torch_cuda_api", "replace", False,
      'print(f"NPU memory allocated: {torch.npu.memory_allocated() / 1e9:.1f} GB")',
      "returns 0 without CUDA; verbose logging only"),
    C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
      "queued lazily and never run without CUDA; torch.manual_seed two lines below probably seeds the NPU too - unconfirmed"),
    C("torch.cuda.manual_seed_all(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(SEED)",
      "same as above"),
])

E("wmdp_utils", "rmu/utils.py", "device_branch_or_abstraction",
  "WMDP RMU rmu/utils.py (activation hook, model loading with device_map='auto', corpus batching)", [
    C('torch_dtype = "auto" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else torch.float32', "device_capability_check", "add_branch", True,
      'torch_dtype = "auto" if (torch.cuda.is_available() and torch.cuda.is_bf16_supported()) or (hasattr(torch, "npu") and torch.npu.is_available() and torch.npu.is_bf16_supported()) else torch.float32',
      "False on an NPU host: both 7B copies silently load in fp32 (double memory, different numerics than the published bf16 runs)"),
])

E("llm_requirements", "requirements.txt", "explicit_replacement",
  "requirements.txt of the LLM-unlearning repos (TOFU / NPO / RMU): CUDA torch wheel index, flash-attn, bitsandbytes, DeepSpeed", [
    C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", False,
      "--extra-index-url https://download.pytorch.org/whl/cpu",
      "torch_npu's documented x86 install uses the CPU torch wheel (aarch64 uses plain PyPI); whether a CUDA wheel actually breaks torch_npu is unconfirmed"),
    C("=torch==2.1.0+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
      "+cu118 local build does not exist for aarch64 Ascend hosts and is not the torch build torch_npu pairs with"),
    C("=transformers==4.36.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post10",
      "torch_npu wheel pinned to the torch version (2.1.0 + .postN); placed after the torch block"),
    C("=deepspeed==0.12.4", "distributed_framework", "replace", False, "deepspeed>=0.14.0",
      "upstream DeepSpeed ships an NPU accelerator (hccl backend); the first release that has it, and whether 0.12.4 suffices, is unconfirmed"),
    C("=bitsandbytes==0.41.3", "fused_optimizer", "removal", False, None,
      "only pulled in for paged AdamW, which is replaced in forget.py; its CUDA kernels have no NPU build"),
    C("=flash-attn==2.3.3", "attention_kernel", "removal", True, None,
      "flash-attn builds CUDA kernels with nvcc and cannot be installed on an Ascend host; the whole pip install -r fails"),
])

E("docker", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile for the unlearning experiments on an nvidia/cuda devel base (torch cu118, flash-attn, xformers, GroundingDINO)", [
    C("FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04", "torch_cuda_api", "replace", True,
      "FROM ascendai/cann:8.0.0-910b-ubuntu22.04-py3.10",
      "CUDA base image has no CANN toolkit/driver libraries; torch_npu needs a CANN image (driver mounted from the host)"),
    C("ENV CUDA_HOME=/usr/local/cuda", "custom_cuda_extension", "removal", False, None,
      "points nvcc-based builds at CUDA; without it GroundingDINO builds its CPU op only, which is what an Ascend image needs"),
    C('ENV TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;8.9;9.0"', "custom_cuda_extension", "removal", False, None,
      "only read by nvcc extension builds"),
    C("RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
      "RUN pip install --no-cache-dir torch==2.1.0 torchvision==0.16.0 torch-npu==2.1.0.post10",
      "CUDA wheel index; the Ascend image needs the plain/CPU torch wheel plus the matching torch-npu"),
    C("RUN pip install --no-cache-dir flash-attn==2.3.3 --no-build-isolation", "attention_kernel", "removal", True, None,
      "flash-attn cannot be built without CUDA; the build step fails"),
    C("RUN pip install --no-cache-dir xformers==0.0.22.post7 --index-url https://download.pytorch.org/whl/cu118", "attention_kernel", "removal", True, None,
      "CUDA-only xformers wheel; no NPU backend (diffusers falls back to SDPA)"),
    C("ENV NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "ENV HCCL_ASYNC_ERROR_HANDLING=1",
      "NCCL watchdog switch is ignored by HCCL; torch_npu's equivalent is HCCL_ASYNC_ERROR_HANDLING"),
])

E("mink_mia", "src/run.py", "explicit_replacement",
  "Min-K% / Min-K%++ membership-inference scoring for (unlearned) LLMs (detect-pretrain-code / mink-plus-plus style)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", "entry script"),
    C("kwargs = dict(load_in_8bit=True, torch_dtype=torch.bfloat16)", "unsupported_op_workaround", "replace", False,
      "kwargs = dict(torch_dtype=torch.bfloat16)  # LLM.int8 (bitsandbytes) has no NPU kernels",
      "opt-in --int8 path; bitsandbytes LLM.int8 is not listed for NPU (only NF4 work in progress)"),
    C("input_ids = torch.tensor(tokenizer.encode(text)).unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
      "input_ids = torch.tensor(tokenizer.encode(text)).unsqueeze(0).to(model.device)",
      "hard CUDA placement of every scored sample"),
    C("with torch.cuda.amp.autocast(dtype=torch.float16):", "amp", "replace", False,
      "with torch.autocast('npu', dtype=torch.float16):",
      "reference model is already bf16; CUDA autocast is disabled with a warning on an NPU host, so only the fp16 recast is lost - scores shift slightly"),
    C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()", "silent no-op on an NPU host"),
])

E("wmdp_sh", "run_rmu_zephyr.sh", "explicit_replacement",
  "WMDP RMU launcher + lm-evaluation-harness WMDP/MMLU evaluation", [
    C("=#!/bin/bash", "env_var", "npu_only_addition", True, "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment is needed for import torch_npu; sourced before 'set -u' because set_env.sh trips over unbound variables"),
    C("export CUDA_VISIBLE_DEVICES=0,1", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=0,1",
      "ignored by the Ascend runtime; device_map='auto' would spread the two 7B copies over every visible NPU"),
    C("--device cuda:0 \\", "device_type", "replace", True, "--device npu:0 \\",
      "lm-eval's HF backend hands this string to torch; cuda:0 fails on an NPU host"),
])

E("salun_imagenet", "Classification/imagenet.py", "explicit_replacement",
  "SalUn / Unlearn-Sparse ImageNet path: FFCV loaders (ToDevice pipelines) + DDP/AMP retraining loop from the FFCV ImageNet example", [
    C("=import torch as ch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry script (mp.spawn workers re-import it)"),
    C("from torch.cuda.amp import GradScaler, autocast", "amp", "replace", True,
      "from torch_npu.npu.amp import GradScaler, autocast",
      "CUDA autocast/GradScaler are disabled without CUDA; the fp16 FFCV images then hit fp32 weights and the forward fails. Re-binding the import fixes every autocast()/GradScaler() call site"),
    C("return dist.get_rank() % ch.cuda.device_count()", "torch_cuda_api", "replace", True,
      "return dist.get_rank() % ch.npu.device_count()",
      "device_count is 0 without CUDA -> ZeroDivisionError"),
    C('this_device = f"cuda:{get_device()}"', "device_type", "replace", True, 'this_device = f"npu:{get_device()}"',
      "train pipelines move batches to this device inside FFCV"),
    C("=this_device = get_device()", "device_type", "replace", True, 'this_device = f"npu:{get_device()}"',
      "a bare int passed to torch.device() means a CUDA ordinal; the val pipelines would target cuda:N"),
    C('dist.init_process_group("nccl", rank=gpu, world_size=world_size)', "dist_backend", "replace", True,
      'dist.init_process_group("hccl", rank=gpu, world_size=world_size)', "NCCL is not available on Ascend; HCCL is"),
    C("ch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "ch.npu.set_device(gpu)", "raises without CUDA"),
    C("stats = ch.tensor([correct, total], dtype=ch.float64).cuda()", "tensor_to_device", "replace", True,
      "stats = ch.tensor([correct, total], dtype=ch.float32).npu()",
      "CUDA placement; also dropped to fp32 because fp64 support on NPU/HCCL is limited (knowledge: fp64 caveat) and counts fit in fp32"),
    C("model = model.to(memory_format=ch.channels_last)", "unsupported_op_workaround", "replace", False,
      "model = model.to(memory_format=ch.contiguous_format)",
      "msFmkTransplt lists channels_last as unsupported on NPU (use contiguous); whether it errors or is just slow is unconfirmed"),
    C("model = model.cuda(gpu)", "tensor_to_device", "replace", True, "model = model.npu(gpu)", "model placement"),
    C("world_size = ch.cuda.device_count()", "torch_cuda_api", "replace", True, "world_size = ch.npu.device_count()",
      "0 on an NPU host: the launcher silently falls back to a single process"),
])
