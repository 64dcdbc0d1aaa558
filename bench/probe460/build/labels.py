"""Labels for probe460 (explainable-AI / attribution toolkits, CUDA -> Ascend NPU).

One entry per file under files/<id>/upstream/<path>; one C(...) per line a careful porter
would edit, written as an explicit torch_npu port (no transfer_to_npu).
"""
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NOTE = ("entry script: the NPU backend must be registered before .npu()/'npu' devices/torch.npu are used; "
               "device-backend autoload exists only from torch_npu 2.5.1, so older pairs (e.g. 2.1.0) need the import")

# ---------------------------------------------------------------- pytorch-grad-cam (jacobgil)
E("gradcam_cam", "cam.py", "explicit_replacement",
  "jacobgil/pytorch-grad-cam cam.py (v1.4-era CLI with --use-cuda flag)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.use_cuda = args.use_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.use_cuda = args.use_cuda and torch.npu.is_available()",
      "on an NPU host torch.cuda.is_available() is False, so --use-cuda is silently dropped and every CAM runs on CPU"),
])

E("gradcam_base", "pytorch_grad_cam/base_cam.py", "explicit_replacement",
  "jacobgil/pytorch-grad-cam pytorch_grad_cam/base_cam.py (BaseCAM with use_cuda)", [
    C("self.model = model.cuda()", "tensor_to_device", "replace", True, "self.model = model.npu()",
      "use_cuda=True moves the wrapped model; .cuda() fails on a host without CUDA"),
    C("input_tensor = input_tensor.cuda()", "tensor_to_device", "replace", True,
      "input_tensor = input_tensor.npu()", "input batch must follow the model to the NPU"),
])

E("gradcam_guided", "pytorch_grad_cam/guided_backprop.py", "explicit_replacement",
  "jacobgil/pytorch-grad-cam pytorch_grad_cam/guided_backprop.py (GuidedBackpropReLUModel)", [
    C("self.model = self.model.cuda()", "tensor_to_device", "replace", True, "self.model = self.model.npu()",
      "guided backprop model placement under use_cuda"),
    C("input_img = input_img.cuda()", "tensor_to_device", "replace", True, "input_img = input_img.npu()",
      "input follows the model"),
])

E("gradcam_ablation", "pytorch_grad_cam/ablation_cam.py", "device_branch_or_abstraction",
  "jacobgil/pytorch-grad-cam pytorch_grad_cam/ablation_cam.py (batched AblationCAM; device-agnostic)", [])

E("gradcam_targets", "pytorch_grad_cam/utils/model_targets.py", "explicit_replacement",
  "jacobgil/pytorch-grad-cam pytorch_grad_cam/utils/model_targets.py (FasterRCNNBoxScoreTarget)", [
    C("use_cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = torch.npu.is_available()",
      "False on an NPU host: the score accumulator and reference boxes stay on CPU while the detector "
      "outputs are on the NPU, and box_iou raises a device mismatch"),
    C("output = output.cuda()", "tensor_to_device", "replace", True, "output = output.npu()",
      "accumulator must live next to model_outputs"),
    C("box = box.cuda()", "tensor_to_device", "replace", True, "box = box.npu()",
      "reference box must be on the same device as model_outputs['boxes']"),
])

E("gradcam_vit", "usage_examples/vit_example.py", "explicit_replacement",
  "jacobgil/pytorch-grad-cam usage_examples/vit_example.py (DeiT + reshape_transform)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("args.use_cuda = args.use_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "args.use_cuda = args.use_cuda and torch.npu.is_available()",
      "otherwise the flag is silently cleared and the ViT runs on CPU"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()",
      "explicit placement before the CAM object is built; .cuda() fails without CUDA"),
])

E("gradcam_requirements", "requirements.txt", "explicit_replacement",
  "jacobgil/pytorch-grad-cam requirements.txt", [
    C("torch>=1.7.1", "import_torch_npu", "npu_only_addition", False,
      "torch_npu  # pin the wheel matching torch and CANN, e.g. torch==2.1.0 with torch_npu==2.1.0.post17",
      "install-time only; Ascend images usually ship a torch/torch_npu pair matched to CANN, and an unpinned "
      "torch>=1.7.1 would have to be pinned to that pair (version matrix §1)"),
])

# ---------------------------------------------------------------- TorchCAM (frgfm/torch-cam)
E("torchcam_example", "scripts/cam_example.py", "explicit_replacement",
  "frgfm/torch-cam scripts/cam_example.py", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('args.device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = "npu:0" if torch.npu.is_available() else "cpu"',
      "default device silently falls back to CPU on an NPU host"),
])

E("torchcam_latency", "scripts/eval_latency.py", "explicit_replacement",
  "frgfm/torch-cam scripts/eval_latency.py (CAM latency benchmark)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('if device.type == "cuda":', "device_type", "replace", True, 'if device.type == "npu":',
      "without the sync the NPU timings measure only asynchronous launches: silently wrong latency numbers"),
    C("torch.cuda.synchronize(device)", "torch_cuda_api", "replace", True, "torch.npu.synchronize(device)",
      "reached once the device check is ported; torch.cuda.synchronize fails on an NPU host"),
    C('args.device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = "npu:0" if torch.npu.is_available() else "cpu"', "default device"),
])

E("torchcam_perf", "scripts/eval_perf.py", "explicit_replacement",
  "frgfm/torch-cam scripts/eval_perf.py (Average Drop / Increase in Confidence on Imagenette)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('args.device = "cuda:0" if torch.cuda.is_available() else "cpu"', "device_type", "replace", True,
      'args.device = "npu:0" if torch.npu.is_available() else "cpu"', "default device"),
    C("pin_memory=True,", "pin_memory", "replace", False, 'pin_memory=True, pin_memory_device="npu",',
      "performance only: with an empty pin_memory_device older DataLoaders pin only when CUDA is available "
      "(unconfirmed in the knowledge base for the torch versions paired with torch_npu)"),
])

E("torchcam_core", "torchcam/methods/core.py", "device_branch_or_abstraction",
  "frgfm/torch-cam torchcam/methods/core.py (_CAM base; device follows the hooked tensors)", [])

E("torchcam_gradient", "torchcam/methods/gradient.py", "device_branch_or_abstraction",
  "frgfm/torch-cam torchcam/methods/gradient.py (GradCAM, GradCAM++, SmoothGradCAM++, XGradCAM, LayerCAM)", [])

E("torchcam_demo", "demo/app.py", "device_branch_or_abstraction",
  "frgfm/torch-cam demo/app.py (Streamlit demo, CPU only)", [])

# ---------------------------------------------------------------- Captum (pytorch/captum) and a Captum pipeline
E("captum_gradient", "captum/_utils/gradient.py", "device_branch_or_abstraction",
  "pytorch/captum captum/_utils/gradient.py (layer hooks keyed by tensor device; DataParallel-aware)", [])

E("captum_helpers", "tests/helpers/basic.py", "explicit_replacement",
  "pytorch/captum tests/helpers/basic.py (BaseTest / BaseGPUTest)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "shared test helper imported by every device test; registers the NPU backend for the test session"),
    C("torch.cuda.manual_seed_all(seed)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(seed)",
      "torch.manual_seed on the line above already seeds registered accelerator backends; the torch.cuda call is "
      "queued and ignored without CUDA (unconfirmed in the knowledge base)"),
    C("if not torch.cuda.is_available() or torch.cuda.device_count() == 0:", "torch_cuda_api", "replace", True,
      "if not torch.npu.is_available() or torch.npu.device_count() == 0:",
      "otherwise every device test is silently skipped on an NPU host"),
    C('backend="nccl",', "dist_backend", "replace", True, 'backend="hccl",',
      "NCCL process group cannot be created on Ascend; DDP comparison needs HCCL"),
])

E("captum_dp_test", "tests/attr/test_data_parallel.py", "explicit_replacement",
  "pytorch/captum tests/attr/test_data_parallel.py (generated CPU-vs-GPU / DataParallel / DDP attribution tests)", [
    C("for mode in DataParallelCompareMode:", "unsupported_op_workaround", "replace", True,
      'for mode in [m for m in DataParallelCompareMode if not m.name.startswith("data_parallel")]:',
      "torch.nn.DataParallel is unsupported on Atlas A2/A3 (torch_api_npu_support_2.7.1.tsv); keep the "
      "cpu-vs-device and DistributedDataParallel comparisons, drop the two DataParallel modes"),
    C("cuda_args[key] = args[key].cuda()", "tensor_to_device", "replace", True,
      "cuda_args[key] = args[key].npu()", "attribution inputs moved to the accelerator"),
    C("elem.cuda() if isinstance(elem, Tensor) else elem", "tensor_to_device", "replace", True,
      "elem.npu() if isinstance(elem, Tensor) else elem", "tuple inputs / baselines"),
    C("cuda_model = copy.deepcopy(model).cuda()", "tensor_to_device", "replace", True,
      "cuda_model = copy.deepcopy(model).npu()", "model copy compared against the CPU model and DDP"),
    C("x for x in range(torch.cuda.device_count() - 1, 0, -1)", "torch_cuda_api", "replace", False,
      "x for x in range(torch.npu.device_count() - 1, 0, -1)",
      "only used by the data_parallel_alt_dev_ids mode, which is no longer generated on NPU; changed for consistency"),
    C("if torch.cuda.is_available() and torch.cuda.device_count() != 0:", "torch_cuda_api", "replace", True,
      "if torch.npu.is_available() and torch.npu.device_count() != 0:",
      "otherwise the test class is never defined on an NPU host"),
])

E("captum_bert", "tutorials/scripts/bert_squad_interpret.py", "explicit_replacement",
  "pytorch/captum tutorials/Bert_SQUAD_Interpret.ipynb exported as a script (LIG + LayerConductance)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C('device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu:0" if torch.npu.is_available() else "cpu")',
      "module-level device global used by every input/reference constructor"),
    C("with torch.cuda.amp.autocast(enabled=args.fp16):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=args.fp16):",
      "only with --fp16; left alone, CUDA autocast disables itself with a warning and the run stays fp32 "
      "(correct, slower)"),
    C("torch.cuda.empty_cache()", "torch_cuda_api", "replace", False, "torch.npu.empty_cache()",
      "memory hygiene between layers; torch.cuda.empty_cache is a no-op without CUDA, so NPU cache is not released"),
])

E("captum_insights", "captum/insights/attr_vis/example.py", "device_branch_or_abstraction",
  "pytorch/captum captum/insights/attr_vis/example.py (Captum Insights CIFAR demo, CPU)", [])

# ---------------------------------------------------------------- SHAP (shap/shap)
E("shap_deep", "shap/explainers/_deep/deep_pytorch.py", "device_branch_or_abstraction",
  "shap/shap shap/explainers/_deep/deep_pytorch.py (PyTorchDeep / DeepLIFT hooks)", [])

E("shap_mnist", "docs/example_notebooks/image_examples/image_classification/pytorch_deep_explainer_mnist.py",
  "explicit_replacement",
  "shap/shap 'PyTorch Deep Explainer MNIST example' notebook as a script (with AMP training)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("use_cuda = not args.no_cuda and torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      "use_cuda = not args.no_cuda and torch.npu.is_available()",
      "gates device, loader kwargs, autocast and the scaler; False on an NPU host"),
    C('device = torch.device("cuda" if use_cuda else "cpu")', "device_type", "replace", True,
      'device = torch.device("npu" if use_cuda else "cpu")', "training and explanation device"),
    C('kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}', "pin_memory", "replace", False,
      'kwargs = {"num_workers": 1, "pin_memory": True, "pin_memory_device": "npu"} if use_cuda else {}',
      "performance only (pinning target); unconfirmed whether plain pin_memory pins for NPU"),
    C("with torch.cuda.amp.autocast(enabled=use_cuda):", "amp", "replace", False,
      "with torch.npu.amp.autocast(enabled=use_cuda):",
      "left alone, autocast disables itself without CUDA and training runs fp32 with a (harmless) scaler: slower only"),
    C("scaler = torch.cuda.amp.GradScaler(enabled=use_cuda)", "amp", "replace", True,
      "scaler = torch.npu.amp.GradScaler(enabled=use_cuda)",
      "the CUDA GradScaler disables itself without CUDA; with NPU autocast active fp16 gradients would then run "
      "unscaled (underflow) - silently wrong training"),
])

E("shap_test", "tests/explainers/test_deep_pytorch.py", "explicit_replacement",
  "shap/shap tests/explainers/test_deep.py (PyTorch cases, parametrised over devices)", [
    C('torch = pytest.importorskip("torch")', "import_torch_npu", "npu_only_addition", True,
      "import torch_npu  # noqa: F401  (inside try/except ImportError so CPU-only CI still runs)",
      "the 'npu' parametrisation needs the backend registered in the test module"),
    C("    if torch.cuda.is_available():", "torch_cuda_api", "replace", True, "if torch.npu.is_available():",
      "otherwise the accelerator parametrisation silently disappears"),
    C('devices.append("cuda")', "device_type", "replace", True, 'devices.append("npu")',
      "device string used by every parametrised test"),
    C("torch.backends.cudnn.allow_tf32 = False", "torch_cuda_api", "npu_only_addition", False,
      "torch.npu.conv.allow_hf32 = False",
      "DeepLIFT additivity is checked to 1e-4; the cudnn flag is inert on NPU and the NPU conv HF32 default "
      "is not confirmed in the knowledge base"),
    C("@pytest.mark.skipif(not torch.cuda.is_available()", "torch_cuda_api", "replace", True,
      '@pytest.mark.skipif(not torch.npu.is_available(), reason="needs an NPU")',
      "otherwise the cross-device test is silently skipped"),
    C("model = _SeqNet().cuda().eval()", "tensor_to_device", "replace", True, "model = _SeqNet().npu().eval()",
      "model on the accelerator"),
    C("background = torch.rand(10, 1, 28, 28).cuda()", "tensor_to_device", "replace", True,
      "background = torch.rand(10, 1, 28, 28).npu()", "background must sit with the model"),
])

# ---------------------------------------------------------------- Transformer-Explainability (LRP for ViT, hila-chefer)
E("texpl_generator", "baselines/ViT/ViT_explanation_generator.py", "explicit_replacement",
  "hila-chefer/Transformer-Explainability baselines/ViT/ViT_explanation_generator.py (LRP + baselines)", [
    C("one_hot = torch.sum(one_hot.cuda() * output)", "tensor_to_device", "replace", True,
      "one_hot = torch.sum(one_hot.npu() * output)", "one-hot target built on the host, multiplied with NPU logits"),
    C("output = self.model(input.cuda(), register_hook=True)", "tensor_to_device", "replace", True,
      "output = self.model(input.npu(), register_hook=True)", "attention Grad-CAM baseline input"),
    C("target_score = torch.sum(one_hot.cuda() * output)", "tensor_to_device", "replace", True,
      "target_score = torch.sum(one_hot.npu() * output)", "same pattern in Baselines.generate_cam_attn"),
])

E("texpl_layers", "baselines/ViT/layers_ours.py", "device_branch_or_abstraction",
  "hila-chefer/Transformer-Explainability baselines/ViT/layers_ours.py (relprop layers)", [])

E("texpl_segeval", "baselines/ViT/imagenet_seg_eval.py", "explicit_replacement",
  "hila-chefer/Transformer-Explainability baselines/ViT/imagenet_seg_eval.py (ImageNet-segmentation eval)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("cuda = torch.cuda.is_available()", "torch_cuda_api", "replace", False, "cuda = torch.npu.is_available()",
      "only feeds `device`, which the script never uses"),
    C('device = torch.device("cuda" if cuda else "cpu")', "device_type", "replace", False,
      'device = torch.device("npu" if cuda else "cpu")', "unused variable; changed for consistency"),
    C("model = vit_base_patch16_224(pretrained=True).cuda()", "tensor_to_device", "replace", True,
      "model = vit_base_patch16_224(pretrained=True).npu()", "baseline ViT"),
    C("model_LRP = vit_LRP(pretrained=True).cuda()", "tensor_to_device", "replace", True,
      "model_LRP = vit_LRP(pretrained=True).npu()", "LRP ViT"),
    C("model_orig_LRP = vit_orig_LRP(pretrained=True).cuda()", "tensor_to_device", "replace", True,
      "model_orig_LRP = vit_orig_LRP(pretrained=True).npu()", "original-LRP ViT"),
    C("Tt = T.cuda()", "tensor_to_device", "replace", False, "Tt = T.npu()",
      "compute_pred is never called"),
    C("Res = baselines.generate_rollout(image.cuda()", "tensor_to_device", "replace", True,
      "Res = baselines.generate_rollout(image.npu(), start_layer=1).reshape(batch_size, 1, 14, 14)",
      "image is already on the NPU; .cuda() on it fails without CUDA"),
    C('Res = orig_lrp.generate_LRP(image.cuda(), method="full")', "tensor_to_device", "replace", True,
      'Res = orig_lrp.generate_LRP(image.npu(), method="full").reshape(batch_size, 1, 224, 224)', "full LRP"),
    C("Res = lrp.generate_LRP(image.cuda(), start_layer=1", "tensor_to_device", "replace", True,
      'Res = lrp.generate_LRP(image.npu(), start_layer=1, method="transformer_attribution").reshape(batch_size, 1, 14, 14)',
      "the paper's method"),
    C('orig_lrp.generate_LRP(image.cuda(), method="last_layer",', "tensor_to_device", "replace", True,
      'Res = orig_lrp.generate_LRP(image.npu(), method="last_layer", is_ablation=args.is_ablation) \\',
      "partial LRP baseline"),
    C('orig_lrp.generate_LRP(image.cuda(), method="last_layer_attn"', "tensor_to_device", "replace", True,
      'Res = orig_lrp.generate_LRP(image.npu(), method="last_layer_attn", is_ablation=args.is_ablation) \\',
      "raw attention baseline"),
    C("Res = baselines.generate_cam_attn(image.cuda())", "tensor_to_device", "replace", True,
      "Res = baselines.generate_cam_attn(image.npu()).reshape(batch_size, 1, 14, 14)", "attention Grad-CAM baseline"),
    C("mode='bilinear').cuda()", "tensor_to_device", "replace", True,
      "Res = torch.nn.functional.interpolate(Res, scale_factor=16, mode='bilinear').npu()",
      "upsampled relevance is already on the NPU; the trailing .cuda() would fail"),
    C("images = (image[0].cuda(), image[1].cuda())", "tensor_to_device", "replace", False,
      "images = (image[0].npu(), image[1].npu())", "'blur' is not an allowed --method choice: dead branch"),
    C("images = image.cuda()", "tensor_to_device", "replace", True, "images = image.npu()", "batch placement"),
    C("labels = labels.cuda()", "tensor_to_device", "replace", True, "labels = labels.npu()",
      "segmentation labels (AP scores read them on the device)"),
])

# ---------------------------------------------------------------- Concept Bottleneck Models (yewsiang/ConceptBottleneck)
E("cbm_experiments", "experiments.py", "explicit_replacement",
  "yewsiang/ConceptBottleneck experiments.py (entry point dispatching CUB/OAI experiments)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu",
      "entry point for CUB/train.py, which calls .npu() and torch.npu once ported; " + IMPORT_NOTE),
])

E("cbm_train", "CUB/train.py", "explicit_replacement",
  "yewsiang/ConceptBottleneck CUB/train.py (X->C, C->Y, joint, multitask training)", [
    C("inputs_var = torch.autograd.Variable(inputs).cuda()", "tensor_to_device", "replace", True,
      "inputs_var = torch.autograd.Variable(inputs).npu()", "A->Y MLP inputs"),
    C("labels_var = torch.autograd.Variable(labels).cuda()", "tensor_to_device", "replace", True,
      "labels_var = torch.autograd.Variable(labels).npu()", "A->Y labels"),
    C("attr_labels_var = attr_labels_var.cuda() if torch.cuda.is_available() else attr_labels_var",
      "tensor_to_device", "replace", True,
      "attr_labels_var = attr_labels_var.npu() if torch.npu.is_available() else attr_labels_var",
      "guarded move: the CUDA guard is False on NPU, so concept labels stay on CPU while the model is on the NPU"),
    C("inputs_var = inputs_var.cuda() if torch.cuda.is_available() else inputs_var", "tensor_to_device",
      "replace", True, "inputs_var = inputs_var.npu() if torch.npu.is_available() else inputs_var",
      "same guarded idiom for images"),
    C("labels_var = labels_var.cuda() if torch.cuda.is_available() else labels_var", "tensor_to_device",
      "replace", True, "labels_var = labels_var.npu() if torch.npu.is_available() else labels_var",
      "same guarded idiom for class labels"),
    C("(1.0 * attr_criterion[i](outputs[i+out_start].squeeze().type(torch.cuda.FloatTensor)", "tensor_to_device",
      "replace", True,
      "losses.append(args.attr_loss_weight * (1.0 * attr_criterion[i](outputs[i+out_start].squeeze().type(torch.npu.FloatTensor), attr_labels_var[:, i]) \\",
      ".type(torch.cuda.FloatTensor) casts AND moves to CUDA"),
    C("0.4 * attr_criterion[i](aux_outputs[i+out_start].squeeze().type(torch.cuda.FloatTensor)", "tensor_to_device",
      "replace", True,
      "+ 0.4 * attr_criterion[i](aux_outputs[i+out_start].squeeze().type(torch.npu.FloatTensor), attr_labels_var[:, i])))",
      "aux-logit concept loss"),
    C("losses.append(args.attr_loss_weight * attr_criterion[i](outputs[i+out_start].squeeze().type(torch.cuda.FloatTensor)",
      "tensor_to_device", "replace", True,
      "losses.append(args.attr_loss_weight * attr_criterion[i](outputs[i+out_start].squeeze().type(torch.npu.FloatTensor), attr_labels_var[:, i]))",
      "concept loss at eval / without aux logits"),
    C("model = model.cuda()", "tensor_to_device", "replace", True, "model = model.npu()", "model placement"),
    C("weight=torch.FloatTensor([ratio]).cuda()", "tensor_to_device", "replace", True,
      "attr_criterion.append(torch.nn.BCEWithLogitsLoss(weight=torch.FloatTensor([ratio]).npu()))",
      "per-concept imbalance weight must sit with the logits"),
])

E("cbm_inference", "CUB/inference.py", "explicit_replacement",
  "yewsiang/ConceptBottleneck CUB/inference.py (evaluation of saved bottleneck models)", [
    C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu", IMPORT_NOTE),
    C("model = torch.load(args.model_dir)", "tensor_to_device", "replace", True,
      "model = torch.load(args.model_dir, map_location='npu')",
      "whole modules pickled by train.py after model.cuda(); the released checkpoints carry CUDA storages and "
      "cannot be deserialised on a host without CUDA unless remapped"),
    C("model2 = torch.load(args.model_dir2)", "tensor_to_device", "replace", True,
      "model2 = torch.load(args.model_dir2, map_location='npu')", "stage-2 (C->Y) model, same pickle issue"),
    C("attr_model = torch.load(line.strip())", "tensor_to_device", "replace", True,
      "attr_model = torch.load(line.strip(), map_location='npu')", "per-attribute-group models"),
    C("inputs_var = torch.autograd.Variable(inputs).cuda()", "tensor_to_device", "replace", True,
      "inputs_var = torch.autograd.Variable(inputs).npu()", "inputs"),
    C("labels_var = torch.autograd.Variable(labels).cuda()", "tensor_to_device", "replace", True,
      "labels_var = torch.autograd.Variable(labels).npu()", "unused afterwards but executed every batch"),
    C("dtype=torch.float64).cuda()  # ignore this", "tensor_to_device", "replace", True,
      "dtype=torch.float32).npu()  # ignore this",
      "debug path without stage 2; also drops fp64 (limited on NPU; transfer_to_npu maps DoubleTensor to Float) - "
      "an all-zeros tensor so the dtype change is harmless"),
])

E("cbm_dataset", "CUB/dataset.py", "device_branch_or_abstraction",
  "yewsiang/ConceptBottleneck CUB/dataset.py (CUBDataset, ImbalancedDatasetSampler, load_data)", [])

E("cbm_config", "CUB/config.py", "device_branch_or_abstraction",
  "yewsiang/ConceptBottleneck CUB/config.py", [])

E("cbm_models", "CUB/models.py", "device_branch_or_abstraction",
  "yewsiang/ConceptBottleneck CUB/models.py (model factory functions)", [])

E("cbm_launcher", "scripts/run_cub_local.sh", "explicit_replacement",
  "yewsiang/ConceptBottleneck scripts/experiments.sh rewritten as a local multi-GPU launcher", [
    C("set -euo pipefail", "env_var", "npu_only_addition", False,
      "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
      "CANN environment for torch_npu; many Ascend images already source it in the entrypoint (unconfirmed)"),
    C("nvidia-smi --query-gpu", "device_capability_check", "replace", True,
      'npu-smi info > "${LOG_ROOT}/npus.txt"',
      "nvidia-smi is absent on an Ascend host and set -e aborts the launcher before any run starts"),
    C("export CUDA_VISIBLE_DEVICES=${GPU}", "env_var", "replace", True, "export ASCEND_RT_VISIBLE_DEVICES=${GPU}",
      "CUDA_VISIBLE_DEVICES is ignored by the Ascend runtime: all three seeds would land on NPU 0"),
])
