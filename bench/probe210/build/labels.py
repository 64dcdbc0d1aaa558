# Labels for probe210 (model explainability / attribution libraries, CUDA -> Ascend NPU).
# One C(...) per upstream line a careful porter would edit; see README.md for the policy.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: registers the npu device/backend before first use (mandatory before torch_npu 2.5.1, "
               "recommended after)")
SETENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"
TRANSFER = "import torch_npu; from torch_npu.contrib import transfer_to_npu"

# --------------------------------------------------------------------------------------------
# pytorch-grad-cam (older use_cuda API, newer device API, launcher)
# --------------------------------------------------------------------------------------------
E("gradcam_base_cam", "pytorch_grad_cam/base_cam.py", "explicit_replacement",
  "pytorch-grad-cam BaseCAM, pre-1.5 `use_cuda` constructor API",
  [
      C("self.model = model.cuda()", "tensor_to_device", "replace", True,
        "self.model = model.npu()",
        "use_cuda=True moves the model with .cuda(); fails on a host without CUDA (Torch not compiled with CUDA)"),
      C("input_tensor = input_tensor.cuda()", "tensor_to_device", "replace", True,
        "input_tensor = input_tensor.npu()",
        "input follows the model; .cuda() raises on the NPU host"),
  ])

E("gradcam_guided_backprop", "pytorch_grad_cam/guided_backprop.py", "explicit_replacement",
  "pytorch-grad-cam GuidedBackpropReLUModel (use_cuda API)",
  [
      C("self.model = self.model.cuda()", "tensor_to_device", "replace", True,
        "self.model = self.model.npu()", ".cuda() on the model fails without CUDA"),
      C("input_img = input_img.cuda()", "tensor_to_device", "replace", True,
        "input_img = input_img.npu()", "input must follow the model to the NPU"),
  ])

E("gradcam_score_cam", "pytorch_grad_cam/score_cam.py", "explicit_replacement",
  "pytorch-grad-cam ScoreCAM (use_cuda API) with a local empty_cache tweak",
  [
      C("activation_tensor = activation_tensor.cuda()", "tensor_to_device", "replace", True,
        "activation_tensor = activation_tensor.npu()",
        "activations come back as numpy and are re-uploaded; .cuda() raises on NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False,
        "torch.npu.empty_cache()",
        "torch.cuda.empty_cache is a silent no-op when CUDA is uninitialised; NPU cache would not be released (memory only)"),
  ])

E("gradcam_cam_cli", "cam.py", "explicit_replacement",
  "pytorch-grad-cam cam.py CLI with --use-cuda (1.3/1.4 era)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("args.use_cuda = args.use_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "args.use_cuda = args.use_cuda and torch.npu.is_available()",
        "torch.cuda.is_available() is False on the NPU host, so --use-cuda silently runs everything on CPU; the flag "
        "keeps its name (library maps use_cuda to .npu())"),
  ])

E("gradcam_cam_image", "cam_image.py", "explicit_replacement",
  "pytorch-grad-cam cam_image.py CLI (device-from-model API, --device flag)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; needed so that `--device npu` resolves (rest of the file is device-agnostic)"),
  ])

E("gradcam_bench_sh", "scripts/run_cam_benchmark.sh", "explicit_replacement",
  "shell launcher looping cam_image.py over methods with --device cuda",
  [
      C("set -euo pipefail", "import_torch_npu", "npu_only_addition", True, SETENV,
        "CANN environment (LD_LIBRARY_PATH, ASCEND_* paths) must be loaded before torch_npu can be imported"),
      C("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0}",
        "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime; a user-chosen card would silently be device 0"),
      C("DEVICE=cuda", "device_type", "replace", True, "DEVICE=npu",
        "passed as --device to cam_image.py; torch.device('cuda') use fails on the NPU host"),
  ])

# --------------------------------------------------------------------------------------------
# Captum
# --------------------------------------------------------------------------------------------
E("captum_resnet_tutorial", "tutorials/resnet_attribution_tutorial.py", "explicit_replacement",
  "Captum 'Model interpretation for pretrained ResNet' tutorial exported as a script, GPU variant",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda:0")', "device_type", "replace", True, 'device = torch.device("npu:0")',
        "hard-coded CUDA device"),
      C("input = input.unsqueeze(0).cuda()", "tensor_to_device", "replace", True,
        "input = input.unsqueeze(0).to(device)", ".cuda() raises on the NPU host"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; only frees cached NPU memory before the noise-tunnel cell"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "torch.cuda.synchronize() initialises CUDA and raises on a non-CUDA build"),
  ])

E("captum_bert_squad", "tutorials/bert_squad_layer_ig.py", "device_branch_or_abstraction",
  "Captum 'Interpreting BERT models (part 1)' SQuAD tutorial with LayerIntegratedGradients / LayerConductance",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
        "silent no-op on NPU host; torch.manual_seed on the line above already seeds the custom device"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cuda:0" if torch.cuda.is_available() else "cpu")',
        "without an NPU branch the selector silently falls back to CPU"),
      C('with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):', "amp", "replace", False,
        'with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=args.fp16):',
        "CUDA autocast disables itself (warning) when CUDA is unavailable, so --fp16 silently runs fp32: memory/speed only"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA; NPU cache not released between layers (memory only)"),
  ])

E("captum_llm_attr", "tutorials/llm_attribution.py", "explicit_replacement",
  "Captum v0.7 'Understanding Llama2 with LLM attribution' tutorial (4-bit bitsandbytes model)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("import bitsandbytes as bnb", "unsupported_op_workaround", "removal", False, None,
        "only used for the 4-bit layer count; bitsandbytes 4-bit is not in a released NPU backend (unconfirmed whether "
        "the import itself fails)"),
      C("n_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", False, "n_gpus = torch.npu.device_count()",
        "returns 0 on the NPU host; only feeds max_memory, which a fixed device_map does not use (unconfirmed)"),
      C("quantization_config=bnb_config,", "unsupported_op_workaround", "replace", True, "torch_dtype=torch.bfloat16,",
        "with no 4-bit quantisation the 13B model must at least load in bf16 (fp32 ~52 GB)"),
      C('device_map="cuda:0",', "device_type", "replace", True, 'device_map="npu:0",',
        "accelerate dispatch to a CUDA device fails on the NPU host"),
      C("bnb_config = BitsAndBytesConfig(", "unsupported_op_workaround", "replace", True,
        "bnb_config = None  # bitsandbytes NF4 not available on Ascend; load bf16 weights instead",
        "bitsandbytes 4-bit (NF4) on NPU exists only in the multi-backend branch (PR #1422, main-branch port open); "
        "the released 0.41 wheel is CUDA-only"),
      C('print("4-bit linear layers:"', "unsupported_op_workaround", "removal", False, None,
        "reports the bnb layer count; meaningless once quantisation is dropped"),
      C('model_input = tokenizer(eval_prompt, return_tensors="pt").to("cuda")', "tensor_to_device", "replace", True,
        'model_input = tokenizer(eval_prompt, return_tensors="pt").to("npu")', "CUDA device string"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA (memory only)"),
      C("torch.cuda.max_memory_allocated() / 2**30", "torch_cuda_api", "replace", False,
        'print("peak memory after perturbation methods: %.2f GB" % (torch.npu.max_memory_allocated() / 2**30))',
        "returns 0 when CUDA is uninitialised; log line only"),
  ])

E("captum_test_dp", "tests/attr/test_data_parallel.py", "explicit_replacement",
  "Captum tests/attr/test_data_parallel.py (CPU vs GPU, DataParallel, single-process DDP with NCCL)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("return torch.cuda.is_available() and torch.cuda.device_count() >= min_devices", "torch_cuda_api", "replace",
        True, "return torch.npu.is_available() and torch.npu.device_count() >= min_devices",
        "False on NPU host: every test would be skipped silently"),
      C("return [0] + list(range(torch.cuda.device_count() - 1, 0, -1))", "torch_cuda_api", "replace", False,
        "return [0] + list(range(torch.npu.device_count() - 1, 0, -1))",
        "only used by the DataParallel mode, which is skipped on NPU; kept consistent"),
      C("arg.cuda() if isinstance(arg, torch.Tensor) else arg for arg in args", "tensor_to_device", "replace", True,
        "arg.npu() if isinstance(arg, torch.Tensor) else arg for arg in args", ".cuda() raises on the NPU host"),
      C('@unittest.skipIf(not torch.cuda.is_available(), "Skipping GPU tests, CUDA not available")', "torch_cuda_api",
        "replace", True, '@unittest.skipIf(not torch.npu.is_available(), "Skipping NPU tests, NPU not available")',
        "the whole class would be skipped silently on the NPU host"),
      C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",', "NCCL is not available on Ascend"),
      C("attribute_args[key] = value.cuda()", "tensor_to_device", "replace", True,
        "attribute_args[key] = value.npu()", ".cuda() raises on the NPU host"),
      C("model_gpu = copy.deepcopy(model).cuda()", "tensor_to_device", "replace", True,
        "model_gpu = copy.deepcopy(model).npu()", ".cuda() raises on the NPU host"),
      C("model_gpu = torch.nn.DataParallel(copy.deepcopy(model).cuda())", "unsupported_op_workaround", "replace", True,
        'self.skipTest("torch.nn.DataParallel is not supported on Ascend NPU")',
        "torch.nn.DataParallel is unsupported on NPU (Ascend API list, msFmkTransplt)"),
      C("=model_gpu = torch.nn.DataParallel(", "unsupported_op_workaround", "replace", True,
        'self.skipTest("torch.nn.DataParallel is not supported on Ascend NPU")',
        "DataParallel with alternate device ids: unsupported on NPU"),
      C("copy.deepcopy(model).cuda(), device_ids=_alt_device_ids()", "unsupported_op_workaround", "removal", True, None,
        "continuation of the DataParallel call above, removed with it"),
      C("copy.deepcopy(model).cuda(), device_ids=[0]", "tensor_to_device", "replace", True,
        "copy.deepcopy(model).npu(), device_ids=[0]", "DDP module must live on the NPU; int device id is fine"),
  ])

# --------------------------------------------------------------------------------------------
# SHAP
# --------------------------------------------------------------------------------------------
E("shap_mnist_deep", "notebooks/pytorch_mnist_deep_explainer.py", "explicit_replacement",
  "SHAP 'PyTorch Deep Explainer MNIST example' notebook as a script, trained on GPU",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
        "use_cuda = torch.npu.is_available()",
        "False on the NPU host: training and DeepExplainer silently run on CPU (variable name kept)"),
      C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu" if use_cuda else "cpu")', "CUDA device string"),
  ])

E("shap_vgg_gradient", "notebooks/vgg16_gradient_explainer.py", "explicit_replacement",
  "SHAP 'Explain an intermediate layer of VGG16 on ImageNet (PyTorch)' GradientExplainer notebook, GPU variant",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = "cuda"', "device_type", "replace", True, 'device = "npu"', "hard-coded CUDA device string"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA (memory only)"),
      C("torch.cuda.memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        'print(f"image {i}: {torch.npu.memory_allocated() / 2**20:.0f} MiB still allocated")',
        "returns 0 when CUDA is uninitialised; log only"),
  ])

# --------------------------------------------------------------------------------------------
# Benchmark
# --------------------------------------------------------------------------------------------
E("bench_latency", "benchmarks/attribution_latency.py", "explicit_replacement",
  "latency/memory benchmark of Captum, pytorch-grad-cam and SHAP methods using CUDA events",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('p.add_argument("--device", default="cuda")', "device_type", "replace", True,
        'p.add_argument("--device", default="npu")', "default device string is CUDA"),
      C('"gpu": torch.cuda.get_device_name(0),', "torch_cuda_api", "replace", True,
        '"gpu": torch.npu.get_device_name(0),', "initialises CUDA and raises on the NPU host"),
      C("=torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "raises without CUDA"),
      C("start_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "start_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work / fail without CUDA"),
      C("end_evt = torch.cuda.Event(enable_timing=True)", "torch_cuda_api", "replace", True,
        "end_evt = torch.npu.Event(enable_timing=True)", "CUDA events cannot time NPU work / fail without CUDA"),
      C("torch.cuda.synchronize()  # wait for end_evt", "torch_cuda_api", "replace", True,
        "torch.npu.synchronize()  # wait for end_evt before reading it", "raises without CUDA"),
      C("with torch.cuda.amp.autocast(enabled=self.enabled):", "amp", "replace", False,
        "with torch.npu.amp.autocast(enabled=self.enabled):",
        "CUDA autocast disables itself when CUDA is unavailable; --amp would silently measure fp32"),
      C("model = model.to(memory_format=torch.channels_last)", "unsupported_op_workaround", "replace", False,
        "pass  # channels_last is not supported on Ascend NPU; keep NCHW contiguous",
        "msFmkTransplt README lists channels_last as unsupported; whether it fails or only slows down is unconfirmed"),
      C('wrapped = torch.compile(wrapped, mode="max-autotune")', "compile_mode", "replace", False,
        "pass  # stay eager on NPU: inductor max-autotune relies on Triton templates (torch_npu 2.1 has no NPU inductor)",
        "only with --compile; Inductor/Triton on NPU needs torch_npu >= 2.6 or triton-ascend, failure mode with the "
        "pinned 2.1 stack unconfirmed"),
      C("torch.cuda.reset_peak_memory_stats()", "torch_cuda_api", "replace", True,
        "torch.npu.reset_peak_memory_stats()", "resolves the current CUDA device and raises without CUDA"),
      C("except torch.cuda.OutOfMemoryError:", "torch_cuda_api", "replace", False,
        "except (torch.cuda.OutOfMemoryError, RuntimeError):",
        "NPU out-of-memory may surface as a different exception type (unconfirmed); OOM would abort the sweep"),
      C("=torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
      C("peak_mb = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", True,
        "peak_mb = torch.npu.max_memory_allocated() / 2**20",
        "silently returns 0 without CUDA, and peak memory is one of the benchmark's reported results"),
  ])

# --------------------------------------------------------------------------------------------
# LIME
# --------------------------------------------------------------------------------------------
E("lime_image", "examples/lime_image_pytorch.py", "device_branch_or_abstraction",
  "LIME 'Using Lime with Pytorch' tutorial (batch_predict moving batches to the GPU)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C('device = torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'device = torch.device("npu" if torch.npu.is_available() else "cuda" if torch.cuda.is_available() else "cpu")',
        "without an NPU branch the 1000 LIME perturbations silently run on CPU"),
  ])

E("lime_text_bert", "examples/lime_text_bert.py", "transfer_to_npu",
  "LIME text explainer over a HuggingFace DistilBERT classifier with fp16 autocast and NVTX ranges",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, TRANSFER,
        "transfer_to_npu remaps the 'cuda' strings, torch.cuda.is_available and torch.cuda.amp in this script"),
      C('torch.cuda.nvtx.range_push(f"lime_chunk_{i}")', "torch_cuda_api", "replace", True,
        'rng = torch_npu.npu.mstx.range_start(f"lime_chunk_{i}")',
        "torch.cuda.nvtx is not covered by transfer_to_npu and raises on a non-CUDA build when --profile is set; "
        "mstx is the NPU counterpart (exact call names unconfirmed)"),
      C("torch.cuda.nvtx.range_pop()", "torch_cuda_api", "replace", True, "torch_npu.npu.mstx.range_end(rng)",
        "same as range_push"),
  ])

# --------------------------------------------------------------------------------------------
# TorchRay
# --------------------------------------------------------------------------------------------
E("torchray_pointing", "examples/pointing_game_suite.py", "explicit_replacement",
  "TorchRay pointing-game benchmark driver with a one-process-per-GPU spawn pool",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
        IMPORT_NOTE + "; also re-executed in every spawned worker"),
      C("torch.cuda.set_device(gpu)", "torch_cuda_api", "replace", True, "torch.npu.set_device(gpu)",
        "pins each worker to its card; raises without CUDA"),
      C("gpu = torch.cuda.current_device()", "torch_cuda_api", "replace", True, "gpu = torch.npu.current_device()",
        "raises without CUDA"),
      C("executor.device = torch.device(f'cuda:{gpu}')", "device_type", "replace", True,
        "executor.device = torch.device(f'npu:{gpu}')", "CUDA device string"),
  ])

E("torchray_utils", "torchray/utils.py", "device_branch_or_abstraction",
  "TorchRay torchray/utils.py (get_device, imsmooth, imsc, resample)",
  [
      C("f'cuda:{gpu}'", "device_type", "add_branch", True,
        "f'npu:{gpu}' if hasattr(torch, 'npu') and torch.npu.is_available() and gpu is not None else f'cuda:{gpu}'",
        "get_device() silently returns cpu on an NPU host; NPU branch chained in front of the CUDA one "
        "(the torch.cuda.is_available line below stays)"),
  ])

# --------------------------------------------------------------------------------------------
# Quantus
# --------------------------------------------------------------------------------------------
E("quantus_eval", "examples/quantus_mnist_eval.py", "explicit_replacement",
  "Quantus getting-started notebook (MNIST LeNet, Captum explanations, quantus.evaluate) as a script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.manual_seed(SEED)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(SEED)",
        "silent no-op; torch.manual_seed above already seeds the NPU generator"),
      C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
        'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
        "silently selects CPU on the NPU host; the device is passed on to every Quantus metric"),
      C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
        "silent no-op without CUDA"),
  ])

E("quantus_pytorch_model", "quantus/helpers/model/pytorch_model.py", "device_branch_or_abstraction",
  "Quantus PyTorchModel wrapper (predict, random layer generator, hidden representations)",
  [
      C('return torch.device("cuda" if torch.cuda.is_available() else "cpu")', "device_type", "add_branch", True,
        'return torch.device("npu" if hasattr(torch, "npu") and torch.npu.is_available() else "cuda" if torch.cuda.is_available() else "cpu")',
        "default device resolution silently falls back to CPU on an NPU host"),
  ])

# --------------------------------------------------------------------------------------------
# ViT attention rollout / transformer explainability
# --------------------------------------------------------------------------------------------
E("vit_explain", "vit_explain.py", "transfer_to_npu",
  "jacobgil/vit-explain vit_explain.py (attention rollout / gradient rollout on DeiT, --use_cuda)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, TRANSFER,
        "small script: transfer_to_npu makes --use_cuda, .cuda() and torch.cuda.is_available() target the NPU"),
  ])

E("chefer_generator", "baselines/ViT/ViT_explanation_generator.py", "explicit_replacement",
  "hila-chefer Transformer-Explainability ViT_explanation_generator.py (LRP, attention CAM, rollout)",
  [
      C("one_hot = torch.sum(one_hot.cuda() * output)", "tensor_to_device", "replace", True,
        "one_hot = torch.sum(one_hot.to(output.device) * output)", ".cuda() raises on the NPU host"),
      C("output = self.model(input.cuda(), register_hook=True)", "tensor_to_device", "replace", True,
        "output = self.model(input.npu(), register_hook=True)", ".cuda() raises on the NPU host"),
      C("loss = torch.sum(one_hot.cuda() * output)", "tensor_to_device", "replace", True,
        "loss = torch.sum(one_hot.to(output.device) * output)", ".cuda() raises on the NPU host"),
      C('one_hot = torch.from_numpy(one_hot).to("cuda").requires_grad_(True)', "tensor_to_device", "replace", True,
        "one_hot = torch.from_numpy(one_hot).to(output.device).requires_grad_(True)", "CUDA device string"),
  ])

E("chefer_demo", "Transformer_explainability.py", "explicit_replacement",
  "hila-chefer Transformer-Explainability Colab demo exported to a script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("model = vit_LRP(pretrained=True).cuda()", "tensor_to_device", "replace", True,
        "model = vit_LRP(pretrained=True).npu()", ".cuda() raises on the NPU host"),
      C("attribution_generator.generate_LRP(original_image.unsqueeze(0).cuda(),", "tensor_to_device", "replace", True,
        "transformer_attribution = attribution_generator.generate_LRP(original_image.unsqueeze(0).npu(),",
        ".cuda() raises on the NPU host"),
      C("transformer_attribution.reshape(224, 224).cuda().data.cpu().numpy()", "tensor_to_device", "replace", True,
        "transformer_attribution = transformer_attribution.reshape(224, 224).data.cpu().numpy()",
        "pointless round trip through the GPU; .cuda() raises on the NPU host"),
      C("output = model(dog_cat_image.unsqueeze(0).cuda())", "tensor_to_device", "replace", True,
        "output = model(dog_cat_image.unsqueeze(0).npu())", ".cuda() raises on the NPU host"),
      C("output = model(tusker_zebra_image.unsqueeze(0).cuda())", "tensor_to_device", "replace", True,
        "output = model(tusker_zebra_image.unsqueeze(0).npu())", ".cuda() raises on the NPU host"),
  ])

E("dino_vis_attn", "visualize_attention.py", "transfer_to_npu",
  "facebookresearch/dino visualize_attention.py (last-layer self-attention maps)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, TRANSFER,
        "device chosen by torch.cuda.is_available(); transfer_to_npu makes it pick the NPU and rewrites .to(device)"),
  ])

E("dinov2_attention", "dinov2/layers/attention.py", "kernel_rewrite",
  "facebookresearch/dinov2 dinov2/layers/attention.py (xFormers MemEffAttention), patched to return attention maps",
  [
      C("from xformers.ops import memory_efficient_attention, unbind", "attention_kernel", "replace", False,
        "import torch_npu",
        "xformers has no NPU build; the guarded import falls back to the plain attention path (slower, still correct)"),
      C("q, k, v = unbind(qkv, 2)", "attention_kernel", "replace", False, "q, k, v = qkv.unbind(2)",
        "xformers.ops.unbind -> torch unbind on the NPU fused path"),
      C("x = memory_efficient_attention(q, k, v, attn_bias=attn_bias)", "attention_kernel", "replace", False,
        'x = torch_npu.npu_fusion_attention(q, k, v, self.num_heads, "BSND", scale=self.scale)[0]',
        "fused NPU flash attention on (B, N, H, D) = BSND; only a speed-up, and nested-tensor attn_bias has no "
        "equivalent"),
  ])

E("clip_explain", "CLIP_explainability.py", "explicit_replacement",
  "hila-chefer Transformer-MM-Explainability CLIP notebook exported to a script",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("one_hot = torch.sum(one_hot.cuda() * logits_per_image)", "tensor_to_device", "replace", True,
        "one_hot = torch.sum(one_hot.to(device) * logits_per_image)", ".cuda() raises on the NPU host"),
      C("image_relevance = image_relevance.reshape(224, 224).cuda().data.cpu().numpy()", "tensor_to_device", "replace",
        True, "image_relevance = image_relevance.reshape(224, 224).data.cpu().numpy()",
        "GPU round trip; .cuda() raises on the NPU host"),
      C('device = "cuda" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
        'device = "npu" if torch.npu.is_available() else "cpu"',
        "silently selects CPU on the NPU host; also steers clip.load (fp16 weights kept only off-CPU)"),
  ])

# --------------------------------------------------------------------------------------------
# Distributed attribution dump
# --------------------------------------------------------------------------------------------
E("dist_saliency", "scripts/distributed_saliency.py", "explicit_replacement",
  "torchrun script dumping Captum attribution maps for ImageNet-val to per-rank HDF5 files",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "raises without CUDA"),
      C('dist.init_process_group(backend="nccl", init_method="env://",', "dist_backend", "replace", True,
        'dist.init_process_group(backend="hccl", init_method="env://",', "NCCL is not available on Ascend; use HCCL"),
      C("dist.barrier(device_ids=[local_rank])", "dist_backend", "replace", False, "dist.barrier()",
        "older torch rejected device_ids for non-NCCL backends; behaviour with HCCL unconfirmed"),
      C("model = model.cuda(local_rank).eval()", "tensor_to_device", "replace", True,
        "model = model.npu(local_rank).eval()", ".cuda() raises on the NPU host"),
      C('device if dist.get_backend() == "nccl" else "cpu"', "dist_backend", "replace", True,
        't = torch.tensor(values, dtype=torch.float32, device=device if dist.get_backend() in ("nccl", "hccl") else "cpu")',
        "backend string comparison is not rewritten by any tool; with 'hccl' the tensor would stay on CPU and the "
        "HCCL all_reduce fails"),
      C('device = torch.device("cuda", local_rank)', "device_type", "replace", True,
        'device = torch.device("npu", local_rank)', "CUDA device type"),
      C("images = images.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "images = images.npu(non_blocking=True)", ".cuda() raises on the NPU host"),
      C("labels = labels.cuda(non_blocking=True)", "tensor_to_device", "replace", True,
        "labels = labels.npu(non_blocking=True)", ".cuda() raises on the NPU host"),
      C('with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):', "amp", "replace", False,
        'with torch.autocast("npu", dtype=torch.float16, enabled=args.amp):',
        "CUDA autocast is disabled with a warning on the NPU host; --amp silently runs fp32 (speed/memory only)"),
      C("mem = torch.cuda.max_memory_allocated() / 2**20", "torch_cuda_api", "replace", False,
        "mem = torch.npu.max_memory_allocated() / 2**20", "returns 0 without CUDA; progress log only"),
  ])

E("dist_launch_sh", "scripts/launch_saliency.sh", "explicit_replacement",
  "single-node torchrun launcher with NCCL tuning variables",
  [
      C("=set -e", "import_torch_npu", "npu_only_addition", True, SETENV,
        "CANN environment must be loaded before torch_npu / HCCL can start"),
      C("export CUDA_VISIBLE_DEVICES=", "env_var", "replace", True,
        "export ASCEND_RT_VISIBLE_DEVICES=${ASCEND_RT_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}",
        "ignored by the Ascend runtime: a subset chosen by the user would silently not apply"),
      C("export NCCL_DEBUG=WARN", "env_var", "removal", False, None, "NCCL-only; ignored under HCCL"),
      C("export NCCL_IB_DISABLE=1", "env_var", "removal", False, None,
        "NCCL InfiniBand switch; no HCCL equivalent on a single node"),
      C("export NCCL_P2P_LEVEL=NVL", "env_var", "removal", False, None, "NVLink-specific NCCL tuning; meaningless on NPU"),
      C("export TORCH_NCCL_ASYNC_ERROR_HANDLING=1", "env_var", "replace", False, "export HCCL_ASYNC_ERROR_HANDLING=1",
        "torch_npu watchdog counterpart (HCCL_ASYNC_ERROR_HANDLING, default 1 per MindCluster docs)"),
  ])

# --------------------------------------------------------------------------------------------
# Packaging / environment files
# --------------------------------------------------------------------------------------------
E("reqs", "requirements.txt", "explicit_replacement",
  "requirements.txt of an explainability benchmark pinned to CUDA 11.8 wheels",
  [
      C("--extra-index-url https://download.pytorch.org/whl/cu118", "torch_cuda_api", "replace", True,
        "--extra-index-url https://download.pytorch.org/whl/cpu",
        "torch_npu runs on the CPU build of torch; cu118 wheels do not exist for aarch64 Ascend hosts"),
      C("torch==2.1.2+cu118", "torch_cuda_api", "replace", True, "torch==2.1.0",
        "CUDA build; torch_npu wheels pair with exact torch versions (2.1.0, no 2.1.2)"),
      C("torchvision==0.16.2+cu118", "torch_cuda_api", "replace", True, "torchvision==0.16.0",
        "CUDA build; must match torch 2.1.0"),
      C("numpy==1.26.2", "import_torch_npu", "npu_only_addition", True, "torch-npu==2.1.0.post17",
        "torch_npu wheel for torch 2.1.0 (branch v2.1.0-7.2.0, CANN 8.3.RC1)"),
      C("bitsandbytes==0.41.3", "unsupported_op_workaround", "removal", False, None,
        "CUDA-only build of bitsandbytes; only needed by the 4-bit LLM tutorial (install behaviour on NPU unconfirmed)"),
      C("xformers==0.0.23.post1", "attention_kernel", "removal", True, None,
        "no NPU build; the wheel pins torch==2.1.2 and pulls CUDA torch, conflicting with torch 2.1.0 + torch-npu"),
      C("pynvml==11.5.0", "torch_cuda_api", "removal", False, None,
        "NVML bindings; no NVIDIA driver on the NPU host (its use is guarded)"),
  ])

E("conda_env", "environment.yml", "explicit_replacement",
  "conda environment.yml with the pytorch + nvidia channels and pytorch-cuda",
  [
      C("=- nvidia", "torch_cuda_api", "removal", False, None, "NVIDIA channel no longer needed (harmless)"),
      C("- pytorch=2.1.2", "torch_cuda_api", "replace", True, "- pytorch=2.1.0",
        "torch version must equal the torch_npu wheel's (2.1.0)"),
      C("- torchvision=0.16.2", "torch_cuda_api", "replace", True, "- torchvision=0.16.0",
        "must match torch 2.1.0"),
      C("- pytorch-cuda=11.8", "torch_cuda_api", "removal", True, None,
        "selects the CUDA build of pytorch and the CUDA runtime; not resolvable/usable on an Ascend host"),
      C("=- pip:", "import_torch_npu", "npu_only_addition", True, "- torch-npu==2.1.0.post17",
        "torch_npu is pip-only"),
  ])

E("dockerfile", "docker/Dockerfile", "explicit_replacement",
  "Dockerfile based on pytorch/pytorch CUDA runtime image, entrypoint cam_image.py --device cuda",
  [
      C("FROM pytorch/pytorch:2.1.2-cuda11.8-cudnn8-runtime", "torch_cuda_api", "replace", True,
        "FROM ascendai/cann:8.3.rc1-910b-ubuntu22.04-py3.11",
        "CUDA base image; a CANN base image (tag layout of Ascend/cann-container-image; registry name illustrative) "
        "also sets the set_env.sh variables as ENV"),
      C("ENV NVIDIA_VISIBLE_DEVICES=all", "env_var", "removal", False, None,
        "read only by the NVIDIA container runtime; ignored on Ascend"),
      C("ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility", "env_var", "removal", False, None,
        "NVIDIA container runtime only"),
      C("RUN grep -v -E '^(torch|torchvision)=='", "import_torch_npu", "replace", True,
        "RUN cp /tmp/requirements.txt /tmp/req-notorch.txt \\",
        "the CANN base image has no torch: torch, torchvision and torch-npu must be installed from requirements.txt"),
      C("ENV CUDA_VISIBLE_DEVICES=0", "env_var", "replace", False, "ENV ASCEND_RT_VISIBLE_DEVICES=0",
        "ignored on NPU, but the value is device 0 anyway"),
      C('"--device", "cuda"', "device_type", "replace", True,
        'CMD ["--image-path", "examples/both.png", "--method", "gradcam", "--device", "npu", "--output-dir", "outputs"]',
        "default CLI device string"),
  ])

E("pyproject", "pyproject.toml", "explicit_replacement",
  "Poetry pyproject.toml with torch from an explicit cu118 source",
  [
      C('torch = { version = "2.1.2+cu118", source = "pytorch-cu118" }', "torch_cuda_api", "replace", True,
        'torch = { version = "2.1.0", source = "pytorch-cpu" }', "CUDA build; torch_npu needs CPU torch 2.1.0"),
      C('torchvision = { version = "0.16.2+cu118", source = "pytorch-cu118" }', "torch_cuda_api", "replace", True,
        'torchvision = { version = "0.16.0", source = "pytorch-cpu" }', "CUDA build; must match torch 2.1.0"),
      C('numpy = "^1.26"', "import_torch_npu", "npu_only_addition", True, 'torch-npu = "2.1.0.post17"',
        "torch_npu dependency"),
      C('bitsandbytes = "^0.41.3"', "unsupported_op_workaround", "removal", False, None,
        "CUDA-only 4-bit kernels; optional llm group (unconfirmed whether install fails)"),
      C('name = "pytorch-cu118"', "torch_cuda_api", "replace", True, 'name = "pytorch-cpu"',
        "source renamed with its URL; referenced by the torch lines"),
      C('url = "https://download.pytorch.org/whl/cu118"', "torch_cuda_api", "replace", True,
        'url = "https://download.pytorch.org/whl/cpu"', "CUDA wheel index"),
  ])

E("bench_config", "configs/quantus_benchmark.yaml", "explicit_replacement",
  "YAML experiment config of a Quantus benchmark runner",
  [
      C("device: cuda", "device_type", "replace", True, "device: npu", "device string consumed by the runner"),
      C("dist_backend: nccl", "dist_backend", "replace", True, "dist_backend: hccl", "NCCL is unavailable on Ascend"),
  ])
