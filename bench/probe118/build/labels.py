# Labels for probe118: mmcv ops package (CUDA side) -> Ascend NPU (torch_npu).
# One entry per upstream file; one C(...) per line a careful porter would edit.
ENTRIES = []


def C(sub, kind, change_type, required, ported, note):
    return {"sub": sub, "kind": kind, "change_type": change_type, "required": required, "ported": ported, "note": note}


def E(id, path, style, imitates, changes):
    ENTRIES.append({"id": id, "path": path, "style": style, "imitates": imitates, "changes": changes})


IMPORT_NPU = "try:  import torch_npu  # noqa: F401  (except ImportError: pass on non-Ascend hosts)"
EXT_NOTE = ("mmcv._ext built by CUDAExtension (or the CppExtension fallback an NPU host gets) has no NPU kernel for "
            "this op, so the call raises for NPU tensors")

# ---------------------------------------------------------------------------------------------------------------
E("mmcv_roi_align", "mmcv/ops/roi_align.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/roi_align.py (1.x, RoIAlignFunction + RoIAlign)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "the NPU branches below call torch_npu.npu_roi_align / npu_roi_alignbk"),
      C("ext_module.roi_align_forward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': output = torch_npu.npu_roi_align(input, rois, ctx.spatial_scale, ctx.output_size[0], ctx.output_size[1], ctx.sampling_ratio, 1 if ctx.aligned else 0)",
        EXT_NOTE + "; torch_npu.npu_roi_align is the NPU counterpart (avg mode; roi_end_mode mapping of aligned and "
        "pool_mode='max' support unconfirmed)"),
      C("ext_module.roi_align_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type == 'npu': grad_input = torch_npu.npu_roi_alignbk(grad_output, rois, list(ctx.input_shape), ctx.output_size[1], ctx.output_size[0], ctx.spatial_scale, ctx.sampling_ratio, 1 if ctx.aligned else 0)",
        "backward of the custom Function also hits the CUDA-only kernel; npu_roi_alignbk is the matching NPU grad op"),
      C("from torchvision.ops import roi_align as tv_roi_align", "unsupported_op_workaround", "npu_only_addition", False,
        "import torchvision_npu  # noqa: F401  registers NPU kernels for torchvision.ops.roi_align",
        "use_torchvision=True path only: stock torchvision has no NPU kernel for roi_align, torchvision_npu does; "
        "whether torch_npu's CPU fallback would catch the torchvision op instead of raising is unconfirmed"),
  ])

E("mmcv_nms", "mmcv/ops/nms.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/nms.py (1.x: NMSop, soft_nms, batched_nms, nms_match, nms_rotated)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "needed by the torch_npu.npu_nms_with_mask / npu_nms_rotated branches"),
      C("=inds = ext_module.nms(", "custom_cuda_extension", "add_branch", True,
        "if bboxes.device.type == 'npu': inds = _nms_npu(bboxes, scores, float(iou_threshold))  # sort by score, torch_npu.npu_nms_with_mask(torch.cat([bboxes, scores[:, None]], 1), iou_threshold)",
        EXT_NOTE + "; npu_nms_with_mask takes score-sorted (N,5) boxes and has no `offset` argument (offset=1 "
        "handling unconfirmed)"),
      C("keep_inds = ext_module.nms_rotated(dets_wl, scores, order, dets_sorted,", "custom_cuda_extension", "add_branch", True,
        "if dets.device.type == 'npu': keep_inds, _ = torch_npu.npu_nms_rotated(dets_cw, scores, iou_threshold)",
        EXT_NOTE + "; npu_nms_rotated exists, but the multi-label variant (labels column) and angle convention "
        "must be handled by the caller (unconfirmed)"),
  ])

E("mmcv_deform_conv", "mmcv/ops/deform_conv.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/deform_conv.py (1.x DeformConv2dFunction / DeformConv2dPack)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "needed by the torch_npu.npu_deformable_conv2d branches"),
      C("ext_module.deform_conv_forward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': return DeformConv2dFunction._npu_forward(ctx, input, offset, weight)  # torch_npu.npu_deformable_conv2d(..., modulated=False)",
        EXT_NOTE + "; npu_deformable_conv2d is the NPU op (mmcv's (y,x)-interleaved offset layout may need "
        "reordering for it - unconfirmed)"),
      C("ext_module.deform_conv_backward_input(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type == 'npu': grad_input, grad_weight, grad_offset, _ = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, offset, [weight.size(3), weight.size(2)], [1, 1, *ctx.stride], [*ctx.padding, *ctx.padding], [1, 1, *ctx.dilation], ctx.groups, ctx.deform_groups, False)",
        "CUDA-only grad kernel; npu_deformable_conv2dbk returns input/weight/offset grads in one call"),
      C("ext_module.deform_conv_backward_parameters(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type != 'npu': ext_module.deform_conv_backward_parameters(  # on NPU grad_weight already comes from npu_deformable_conv2dbk",
        "second CUDA-only grad kernel; must be skipped (or replaced) for NPU tensors"),
  ])

E("mmcv_modulated_deform_conv", "mmcv/ops/modulated_deform_conv.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/modulated_deform_conv.py (1.x DCNv2)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "needed by the torch_npu.npu_deformable_conv2d(modulated=True) branches"),
      C("ext_module.modulated_deform_conv_forward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': output, ctx.offset_out = torch_npu.npu_deformable_conv2d(input, weight, torch.cat([offset, mask], 1), bias if ctx.with_bias else None, [weight.size(3), weight.size(2)], [1, 1, *ctx.stride], [*ctx.padding, *ctx.padding], [1, 1, *ctx.dilation], ctx.groups, ctx.deform_groups, True)",
        EXT_NOTE + "; npu_deformable_conv2d(modulated=True) is the DCNv2 counterpart (torch_npu.contrib also "
        "ships ModulatedDeformConv/DCNv2); offset/mask channel order unconfirmed"),
      C("ext_module.modulated_deform_conv_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type == 'npu': grad_input, grad_weight, grad_offset_all, grad_bias = torch_npu.npu_deformable_conv2dbk(input, grad_output, ctx.offset_out, weight, torch.cat([offset, mask], 1), [weight.size(3), weight.size(2)], [1, 1, *ctx.stride], [*ctx.padding, *ctx.padding], [1, 1, *ctx.dilation], ctx.groups, ctx.deform_groups, True)",
        "CUDA-only grad kernel; split grad_offset_all back into offset and mask grads"),
  ])

E("mmcv_focal_loss", "mmcv/ops/focal_loss.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/focal_loss.py (1.x sigmoid/softmax focal loss Functions)",
  [
      C("ext_module.sigmoid_focal_loss_forward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': output = _sigmoid_focal_loss_torch(input, target, weight, ctx.gamma, ctx.alpha)  # BCE-with-logits on one-hot targets, (1-p_t)**gamma * alpha_t",
        EXT_NOTE + "; no torch_npu focal-loss op in the custom-op lists, so a pure-PyTorch formula (or an Ascend C "
        "kernel registered in _ext) is needed"),
      C("ext_module.sigmoid_focal_loss_backward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': grad_input = _sigmoid_focal_loss_grad_torch(input, target, weight, ctx.gamma, ctx.alpha)",
        "backward kernel is CUDA-only as well"),
      C("assert isinstance(target, (torch.LongTensor, torch.cuda.LongTensor))", "torch_cuda_api", "replace", True,
        "assert isinstance(target, torch.Tensor) and target.dtype == torch.long",
        "an NPU int64 tensor is neither torch.LongTensor nor torch.cuda.LongTensor, so the assert fires (the sigmoid "
        "variant lists torch.Tensor in its tuple and passes)"),
      C("ext_module.softmax_focal_loss_forward(", "custom_cuda_extension", "add_branch", True,
        "if input.device.type == 'npu': output = _softmax_focal_loss_torch(input_softmax, target, weight, ctx.gamma, ctx.alpha)",
        EXT_NOTE),
      C("ext_module.softmax_focal_loss_backward(", "custom_cuda_extension", "add_branch", True,
        "if input_softmax.device.type == 'npu': grad_input = _softmax_focal_loss_grad_torch(input_softmax, target, weight, ctx.gamma, ctx.alpha)",
        "backward kernel is CUDA-only as well"),
  ])

E("mmcv_carafe", "mmcv/ops/carafe.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/carafe.py (1.x CARAFENaive / CARAFE / CARAFEPack)",
  [
      C("ext_module.carafe_naive_forward(", "custom_cuda_extension", "add_branch", True,
        "if features.device.type == 'npu': output = _carafe_torch(features, masks, kernel_size, group_size, scale_factor)  # F.unfold + reshape + weighted sum",
        EXT_NOTE + "; no CARAFE op in torch_npu, so an unfold-based PyTorch version or an Ascend C kernel"),
      C("=assert grad_output.is_cuda", "device_type", "replace", True,
        "assert grad_output.device.type in ('cuda', 'npu')",
        "NPU grads have is_cuda == False, so CARAFENaive backward asserts"),
      C("ext_module.carafe_naive_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type == 'npu': grad_input, grad_masks = _carafe_torch_backward(grad_output, features, masks, kernel_size, group_size, scale_factor)",
        "CUDA-only backward kernel"),
      C("ext_module.carafe_forward(", "custom_cuda_extension", "add_branch", True,
        "if features.device.type == 'npu': output = _carafe_torch(features, masks, kernel_size, group_size, scale_factor)",
        EXT_NOTE),
      C("'carafe backward requires CUDA tensors'", "device_type", "replace", True,
        "assert grad_output.device.type in ('cuda', 'npu'), 'carafe backward requires CUDA or NPU tensors'",
        "same is_cuda assert in CARAFE backward"),
      C("ext_module.carafe_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_output.device.type == 'npu': grad_input, grad_masks = _carafe_torch_backward(grad_output, rfeatures, masks, kernel_size, group_size, scale_factor)",
        "CUDA-only backward kernel"),
  ])

E("mmcv_points_in_boxes", "mmcv/ops/points_in_boxes.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/points_in_boxes.py (1.x, from mmdet3d roiaware_pool3d)",
  [
      C("if torch.cuda.current_device() != points_device:", "torch_cuda_api", "replace", True,
        "if torch.npu.current_device() != points_device:",
        "torch.cuda.current_device() raises on a host without CUDA"),
      C("=torch.cuda.set_device(points_device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(points_device)", "CUDA device API; NPU equivalent is torch.npu.set_device"),
      C("ext_module.points_in_boxes_part_forward(", "custom_cuda_extension", "add_branch", True,
        "if points.device.type == 'npu': box_idxs_of_pts = _points_in_boxes_part_torch(points, boxes)  # rotate points into each box frame and test |dx|,|dy|,dz bounds",
        EXT_NOTE + "; no torch_npu op in the lists (Ascend DrivingSDK may carry one - not checked)"),
      C("if torch.cuda.current_device() != pts_device:", "torch_cuda_api", "replace", True,
        "if torch.npu.current_device() != pts_device:", "same device guard in points_in_boxes_all"),
      C("=torch.cuda.set_device(pts_device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(pts_device)", "CUDA device API"),
      C("ext_module.points_in_boxes_all_forward(", "custom_cuda_extension", "add_branch", True,
        "if points.device.type == 'npu': box_idxs_of_pts = _points_in_boxes_all_torch(points, boxes)",
        EXT_NOTE),
  ])

E("mmcv_knn", "mmcv/ops/knn.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/knn.py (1.x, PAConv heap KNN)",
  [
      C("if torch.cuda.current_device() != center_xyz_device:", "torch_cuda_api", "replace", True,
        "if torch.npu.current_device() != center_xyz_device:",
        "torch.cuda.current_device() raises on a host without CUDA"),
      C("torch.cuda.set_device(center_xyz_device)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(center_xyz_device)", "CUDA device API"),
      C("ext_module.knn_forward(", "custom_cuda_extension", "add_branch", True,
        "if xyz.device.type == 'npu': dist2, idx = torch.cdist(center_xyz, xyz).pow(2).topk(k, dim=-1, largest=False); idx = idx.int()",
        EXT_NOTE + "; torch.cdist and topk have NPU kernels (cdist ✔ bf16/fp16/fp32 in Ascend's 2.7.1 list)"),
  ])

E("mmcv_three_interpolate", "mmcv/ops/three_interpolate.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/three_interpolate.py (1.x, PointNet++ op)",
  [
      C("ext_module.three_interpolate_forward(", "custom_cuda_extension", "add_branch", True,
        "if features.device.type == 'npu': output = (torch.gather(features.unsqueeze(2).expand(-1, -1, n, -1), 3, indices.long().unsqueeze(1).expand(-1, c, -1, -1)) * weight.unsqueeze(1)).sum(-1)",
        EXT_NOTE + "; gather + weighted sum is a direct PyTorch equivalent"),
      C("grad_features = torch.cuda.FloatTensor(B, c, m).zero_()", "torch_cuda_api", "replace", True,
        "grad_features = grad_out.new_zeros((B, c, m))",
        "legacy torch.cuda.FloatTensor constructor allocates on CUDA and fails on an NPU host"),
      C("ext_module.three_interpolate_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_out.device.type == 'npu': grad_features.scatter_add_(2, idx.long().view(B, 1, -1).expand(-1, c, -1), (grad_out_data.unsqueeze(-1) * weight.unsqueeze(1)).view(B, c, -1))",
        "CUDA-only backward kernel; scatter_add has an NPU kernel"),
  ])

E("mmcv_furthest_point_sample", "mmcv/ops/furthest_point_sample.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/furthest_point_sample.py (1.x, PointNet++ FPS)",
  [
      C("output = torch.cuda.IntTensor(B, num_points)", "torch_cuda_api", "replace", True,
        "output = points_xyz.new_zeros((B, num_points), dtype=torch.int32)",
        "legacy torch.cuda.IntTensor constructor fails on an NPU host"),
      C("temp = torch.cuda.FloatTensor(B, N).fill_(1e10)", "torch_cuda_api", "replace", True,
        "temp = points_xyz.new_full((B, N), 1e10)", "legacy torch.cuda.FloatTensor constructor"),
      C("ext_module.furthest_point_sampling_forward(", "custom_cuda_extension", "add_branch", True,
        "if points_xyz.device.type == 'npu': output = _fps_torch(points_xyz, num_points)  # iterative argmax of min squared distance",
        EXT_NOTE + "; a python-loop FPS is correct but slow (num_points host round trips)"),
      C("ext_module.furthest_point_sampling_with_dist_forward(", "custom_cuda_extension", "add_branch", True,
        "if points_dist.device.type == 'npu': output = _fps_with_dist_torch(points_dist, num_points)",
        EXT_NOTE + " (this variant already allocates with new_zeros, only the kernel call needs a branch)"),
  ])

E("mmcv_voxelize", "mmcv/ops/voxelize.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/voxelize.py (1.x hard/dynamic voxelization)",
  [
      C("ext_module.dynamic_voxelize_forward(", "custom_cuda_extension", "add_branch", True,
        "if points.device.type == 'npu': coors = _dynamic_voxelize_torch(points, voxel_size, coors_range)  # floor((p - min) / size) in zyx order, -1 when out of range",
        EXT_NOTE),
      C("ext_module.hard_voxelize_forward(", "custom_cuda_extension", "add_branch", True,
        "if points.device.type == 'npu': ext_module.hard_voxelize_forward(points.cpu(), torch.tensor(voxel_size, dtype=torch.float), torch.tensor(coors_range, dtype=torch.float), voxels_cpu, coors_cpu, num_cpu, voxel_num, max_points=max_points, max_voxels=max_voxels, NDim=3, deterministic=deterministic)  # CPU kernel, copy results back",
        EXT_NOTE + "; mmcv ships a CPU hard-voxelize kernel, so a host round trip is the cheapest correct port"),
  ])

E("mmcv_ms_deform_attn", "mmcv/ops/multi_scale_deform_attn.py", "device_branch_or_abstraction",
  "open-mmlab/mmcv mmcv/ops/multi_scale_deform_attn.py (1.x, Deformable-DETR attention)",
  [
      C("output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': output = multi_scale_deformable_attn_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)  # or an Ascend kernel registered as ms_deform_attn_forward",
        EXT_NOTE + "; the Function is public API and is called directly by downstream code (e.g. BEVFormer) and "
        "tests, not only through the gate below"),
      C("ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': grad_value, grad_sampling_loc, grad_attn_weight = _ms_deform_attn_torch_grads(value, value_spatial_shapes, sampling_locations, attention_weights, grad_output)  # autograd.grad through the PyTorch version",
        "CUDA-only backward kernel"),
      C("if torch.cuda.is_available() and value.is_cuda:", "device_type", "add_branch", False,
        "if (torch.cuda.is_available() and value.is_cuda) or value.device.type == 'npu':",
        "unchanged, NPU tensors fall through to multi_scale_deformable_attn_pytorch, which is correct on NPU "
        "(F.grid_sample has an NPU kernel) but slower; routing NPU to a fused kernel is a performance change"),
  ])

E("mmcv_bbox", "mmcv/ops/bbox.py", "device_branch_or_abstraction",
  "open-mmlab/mmcv mmcv/ops/bbox.py (1.x bbox_overlaps)",
  [
      C("if bboxes1.device.type == 'cpu':", "device_type", "replace", True,
        "if bboxes1.device.type in ('cpu', 'npu'):",
        "otherwise NPU tensors go to the CUDA-only ext_module.bbox_overlaps; the existing pure-PyTorch path is exact "
        "on NPU (npu_iou/npu_ptiou exist but their offset/aligned semantics are unconfirmed)"),
  ])

E("mmcv_box_iou_rotated", "mmcv/ops/box_iou_rotated.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/box_iou_rotated.py (1.x)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, IMPORT_NPU,
        "needed by the torch_npu.npu_rotated_iou branch"),
      C("ext_module.box_iou_rotated(", "custom_cuda_extension", "add_branch", True,
        "if bboxes1.device.type == 'npu': ious = torch_npu.npu_rotated_iou(bboxes1.unsqueeze(0), bboxes2.unsqueeze(0), trans=False, mode=mode_flag, is_cross=not aligned).flatten()",
        EXT_NOTE + "; npu_rotated_iou is the NPU op (expected box layout / angle unit unconfirmed)"),
  ])

E("mmcv_masked_conv", "mmcv/ops/masked_conv.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/masked_conv.py (1.x, from mmdet GA-RPN)",
  [
      C("ext_module.masked_im2col_forward(", "custom_cuda_extension", "add_branch", True,
        "if features.device.type == 'npu': data_col = torch.nn.functional.unfold(features, (kernel_h, kernel_w), padding=(pad_h, pad_w))[0][:, mask_h_idx * out_w + mask_w_idx]",
        EXT_NOTE + "; F.unfold (im2col has an NPU kernel) + index_select reproduces the masked im2col"),
      C("ext_module.masked_col2im_forward(", "custom_cuda_extension", "add_branch", True,
        "if features.device.type == 'npu': output.view(batch_size, out_channel, -1)[0][:, mask_h_idx * out_w + mask_w_idx] = masked_output",
        "CUDA-only col2im kernel; an index_put on the flattened output does the same"),
  ])

E("mmcv_sync_bn", "mmcv/ops/sync_bn.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/sync_bn.py (1.x MMSyncBN)",
  [
      C("torch.cuda.HalfTensor, torch.cuda.FloatTensor)), \\", "torch_cuda_api", "replace", True,
        "torch.cuda.HalfTensor, torch.cuda.FloatTensor)) or input.dtype in (torch.half, torch.float), \\",
        "an NPU float tensor is none of the listed legacy CPU/CUDA tensor types, so the assert fires"),
      C("ext_module.sync_bn_forward_mean(input3d, mean)", "custom_cuda_extension", "add_branch", True,
        "if input3d.device.type == 'npu': mean = input3d.float().mean(dim=(0, 2))",
        EXT_NOTE + "; each SyncBN kernel is a short PyTorch reduction"),
      C("ext_module.sync_bn_forward_var(input3d, mean, var)", "custom_cuda_extension", "add_branch", True,
        "if input3d.device.type == 'npu': var = (input3d.float() - mean.view(1, -1, 1)).pow(2).mean(dim=(0, 2))",
        EXT_NOTE),
      C("ext_module.sync_bn_forward_output(", "custom_cuda_extension", "add_branch", True,
        "if input3d.device.type == 'npu': _sync_bn_output_torch(input3d, mean, var, weight, bias, running_mean, running_var, norm, std, output3d, self.eps, momentum, self.group_size)",
        EXT_NOTE),
      C("ext_module.sync_bn_backward_param(grad_output3d, norm, grad_weight,", "custom_cuda_extension", "add_branch", True,
        "if grad_output3d.device.type == 'npu': grad_weight = (grad_output3d * norm).sum(dim=(0, 2)); grad_bias = grad_output3d.sum(dim=(0, 2))",
        "CUDA-only backward kernel"),
      C("ext_module.sync_bn_backward_data(grad_output3d, weight,", "custom_cuda_extension", "add_branch", True,
        "if grad_output3d.device.type == 'npu': grad_input3d.copy_(weight.view(1, -1, 1) * (grad_output3d - (grad_weight.view(1, -1, 1) * norm + grad_bias.view(1, -1, 1)) / (grad_output3d.size(0) * grad_output3d.size(2) * self.group_size)) / std.view(1, -1, 1))",
        "CUDA-only backward kernel"),
  ])

E("mmcv_assign_score_withk", "mmcv/ops/assign_score_withk.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/assign_score_withk.py (1.x, PAConv)",
  [
      C("ext_module.assign_score_withk_forward(", "custom_cuda_extension", "add_branch", True,
        "if scores.device.type == 'npu': output = _assign_score_withk_torch(scores, point_features, center_features, knn_idx, aggregate)  # gather neighbours, einsum('bnkm,bnkmo->bonk')",
        EXT_NOTE),
      C("ext_module.assign_score_withk_backward(", "custom_cuda_extension", "add_branch", True,
        "if grad_out.device.type == 'npu': grad_scores, grad_point_features, grad_center_features = _assign_score_withk_torch_grads(grad_out, point_features, center_features, scores, knn_idx, agg)",
        "CUDA-only backward kernel"),
  ])

E("mmcv_scatter_points", "mmcv/ops/scatter_points.py", "kernel_rewrite",
  "open-mmlab/mmcv mmcv/ops/scatter_points.py (1.x DynamicScatter)",
  [
      C("results = ext_module.dynamic_point_to_voxel_forward(", "custom_cuda_extension", "add_branch", True,
        "if feats.device.type == 'npu': results = _dynamic_scatter_torch(feats, coors, reduce_type)  # torch.unique(coors, dim=0, return_inverse=True) + index_add_ for sum/mean",
        EXT_NOTE + "; torch.scatter_reduce is ✘ in Ascend's 2.7.1 support list, so the 'max' reduce needs another "
        "route (sort + segment max, or the CPU kernel)"),
      C("ext_module.dynamic_point_to_voxel_backward(", "custom_cuda_extension", "add_branch", True,
        "if feats.device.type == 'npu': grad_feats = _dynamic_scatter_torch_backward(grad_voxel_feats, feats, voxel_feats, point2voxel_map, voxel_points_count, ctx.reduce_type)",
        "CUDA-only backward kernel"),
  ])

E("mmcv_upfirdn2d", "mmcv/ops/upfirdn2d.py", "device_branch_or_abstraction",
  "open-mmlab/mmcv mmcv/ops/upfirdn2d.py (1.x, rosinality StyleGAN2 port)",
  [
      C("if input.device.type == 'cpu':", "device_type", "replace", True,
        "if input.device.type != 'cuda':",
        "NPU tensors otherwise go to UpFirDn2d whose upfirdn2d kernel is CUDA-only; upfirdn2d_native (F.pad + "
        "F.conv2d) runs natively on NPU"),
  ])

E("mmcv_fused_bias_leakyrelu", "mmcv/ops/fused_bias_leakyrelu.py", "device_branch_or_abstraction",
  "open-mmlab/mmcv mmcv/ops/fused_bias_leakyrelu.py (1.x, StyleGAN2 fused act)",
  [])

E("mmcv_parallel_functions", "mmcv/parallel/_functions.py", "explicit_replacement",
  "open-mmlab/mmcv mmcv/parallel/_functions.py (1.x Scatter used by MMDataParallel/MMDDP)",
  [
      C("with torch.cuda.device(devices[0]), torch.cuda.stream(stream):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(devices[0]), torch.npu.stream(stream):",
        "CUDA device/stream context managers fail on an NPU host"),
      C("output = output.cuda(devices[0], non_blocking=True)", "tensor_to_device", "replace", True,
        "output = output.npu(devices[0], non_blocking=True)", ".cuda() copy target"),
      C("=with torch.cuda.device(devices[0]):", "torch_cuda_api", "replace", True,
        "with torch.npu.device(devices[0]):", "CUDA device context"),
      C("main_stream = torch.cuda.current_stream()", "torch_cuda_api", "replace", True,
        "main_stream = torch.npu.current_stream()", "CUDA stream API; torch_npu.npu.current_stream is the NPU form"),
      C("return input.get_device() if input.is_cuda else -1", "device_type", "replace", True,
        "return input.get_device() if input.is_npu else -1",
        "is_cuda is False for NPU tensors, so device-resident inputs would be treated as host tensors"),
      C("_get_stream(torch.device('cuda', device))", "device_type", "replace", True,
        "_get_stream(torch.device('npu', device))",
        "background copy streams must be created on the NPU device"),
  ])

E("mmcv_dist_utils", "mmcv/runner/dist_utils.py", "explicit_replacement",
  "open-mmlab/mmcv mmcv/runner/dist_utils.py (1.x init_dist / allreduce helpers)",
  [
      C("def init_dist(launcher: str, backend: str = 'nccl', **kwargs) -> None:", "dist_backend", "replace", True,
        "def init_dist(launcher: str, backend: str = 'hccl', **kwargs) -> None:",
        "NCCL is not available on Ascend; HCCL is the collective backend"),
      C("=num_gpus = torch.cuda.device_count()", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()",
        "returns 0 on an NPU host, so rank % num_gpus raises ZeroDivisionError"),
      C("torch.cuda.set_device(rank % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(rank % num_gpus)", "CUDA device API"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(local_rank)", "CUDA device API (MPI launcher)"),
      C("num_gpus = torch.cuda.device_count()  # gpus per node", "torch_cuda_api", "replace", True,
        "num_gpus = torch.npu.device_count()  # npus per node", "0 on an NPU host (slurm launcher)"),
      C("torch.cuda.set_device(proc_id % num_gpus)", "torch_cuda_api", "replace", True,
        "torch.npu.set_device(proc_id % num_gpus)", "CUDA device API (slurm launcher)"),
  ])

E("mmcv_fp16_utils", "mmcv/runner/fp16_utils.py", "explicit_replacement",
  "open-mmlab/mmcv mmcv/runner/fp16_utils.py (1.x auto_fp16 / force_fp32 / wrap_fp16_model)",
  [
      C("from torch.cuda.amp import autocast", "amp", "replace", True,
        "from torch_npu.npu.amp import autocast",
        "CUDA autocast is disabled (with a warning - torch behaviour, not in the knowledge base) on a host without CUDA, so auto_fp16 feeds fp16 inputs to fp32 "
        "weights (wrap_fp16_model no longer calls model.half() on torch>=1.6) and force_fp32 cannot turn NPU autocast "
        "off; torch.cuda.amp.autocast -> torch_npu.npu.amp.autocast per Ascend's 2.7.1 list"),
  ])

E("mmcv_utils_env", "mmcv/utils/env.py", "device_branch_or_abstraction",
  "open-mmlab/mmcv mmcv/utils/env.py (1.x collect_env)",
  [
      C("cuda_available = torch.cuda.is_available()", "torch_cuda_api", "add_branch", False,
        "env_info['NPU available'] = hasattr(torch, 'npu') and torch.npu.is_available()  # plus device names via torch.npu.get_device_name",
        "reporting only: on an NPU host it truthfully reports CUDA available: False and simply omits NPU details"),
  ])

E("mmcv_setup", "setup.py", "kernel_rewrite",
  "open-mmlab/mmcv setup.py (1.x get_extensions with MMCV_WITH_OPS / CUDAExtension / MLU branch)",
  [
      C("if is_rocm_pytorch or torch.cuda.is_available() or os.getenv(", "custom_cuda_extension", "add_branch", True,
        "elif os.getenv('FORCE_NPU', '0') == '1': from torch_npu.utils.cpp_extension import NpuExtension; define_macros += [('MMCV_WITH_NPU', None)]; op_files = glob.glob('./mmcv/ops/csrc/pytorch/*.cpp') + glob.glob('./mmcv/ops/csrc/pytorch/npu/*.cpp'); extension = NpuExtension",
        "with no CUDA on an NPU host the build silently falls to the CPU-only CppExtension, so mmcv._ext carries no "
        "device kernels; NpuExtension (torch_npu.utils.cpp_extension) is the Ascend build path - there is no nvcc"),
  ])

E("mmcv_docker_dev", "docker/dev/Dockerfile", "explicit_replacement",
  "open-mmlab/mmcv docker/dev/Dockerfile (build mmcv-full from source)",
  [
      C("FROM pytorch/pytorch:${PYTORCH}-cuda${CUDA}-cudnn${CUDNN}-devel", "torch_cuda_api", "replace", True,
        "FROM ${ASCEND_BASE_IMAGE}  # image with CANN toolkit + driver libs, CPU/aarch64 torch and a matching torch-npu",
        "CUDA build of torch + nvcc toolchain; the NPU image must carry CANN and torch_npu instead"),
      C("ENV TORCH_CUDA_ARCH_LIST=", "env_var", "removal", False, None,
        "CUDA arch list is ignored by an NpuExtension build"),
      C("ENV TORCH_NVCC_FLAGS=", "env_var", "removal", False, None, "nvcc flags are unused without nvcc"),
      C("ENV FORCE_CUDA=\"1\"", "env_var", "replace", True, "ENV FORCE_NPU=\"1\"",
        "FORCE_CUDA=1 sends setup.py into the CUDAExtension branch, which fails without CUDA_HOME/nvcc"),
      C("RUN pip install --no-cache-dir -e .[all] -v", "import_torch_npu", "replace", True,
        "RUN . /usr/local/Ascend/ascend-toolkit/set_env.sh && pip install --no-cache-dir -e .[all] -v && pip install pre-commit && pre-commit install",
        "the NPU build (NpuExtension) needs the CANN environment (include/lib paths) from set_env.sh"),
  ])

E("mmcv_ci_build", ".github/workflows/build.yml", "explicit_replacement",
  "open-mmlab/mmcv .github/workflows/build.yml (CPU and CUDA-container build jobs)",
  [
      C("image: pytorch/pytorch:1.8.1-cuda10.2-cudnn7-devel", "torch_cuda_api", "replace", True,
        "image: ${{ vars.ASCEND_CANN_IMAGE }}  # CANN toolkit image for the NPU build job",
        "CUDA devel container; an NPU build job needs a CANN image"),
      C("FORCE_CUDA: 1", "env_var", "replace", True, "FORCE_NPU: 1",
        "FORCE_CUDA selects the CUDAExtension branch of setup.py"),
      C("MMCV_CUDA_ARGS: -gencode=arch=compute_61,code=sm_61", "env_var", "removal", False, None,
        "nvcc -gencode flags, unused by an NpuExtension build"),
      C("run: pip install torch==1.8.1+cu102 torchvision==0.9.1+cu102", "torch_cuda_api", "replace", True,
        "run: pip install torch==2.1.0 torchvision==0.16.0 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.1.0.post17",
        "CUDA wheels from the CUDA wheel index; NPU needs CPU torch + the matching torch-npu pin (2.1.0.post17 pairs "
        "with torch 2.1.0 / CANN 8.3.RC1)"),
      C("run: rm -rf .eggs && python setup.py check -m -s && pip install -e .", "import_torch_npu", "replace", True,
        "run: source /usr/local/Ascend/ascend-toolkit/set_env.sh && rm -rf .eggs && python setup.py check -m -s && pip install -e .",
        "CANN environment must be sourced before building the NPU extension"),
  ])

E("mmcv_test_roi_align", "tests/test_ops/test_roi_align.py", "explicit_replacement",
  "open-mmlab/mmcv tests/test_ops/test_roi_align.py (1.x)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
        "test entry point; torch_npu < 2.5.1 (the torch 1.x/2.0 era this code targets) has no backend autoload"),
      C("not torch.cuda.is_available(), reason='requires CUDA support')),", "torch_cuda_api", "add_branch", True,
        "pytest.param('npu', marks=pytest.mark.skipif(not (hasattr(torch, 'npu') and torch.npu.is_available()), reason='requires NPU support')),",
        "without an 'npu' case the device path is silently skipped on an NPU host"),
      C("=not torch.cuda.is_available(), reason='requires CUDA support')", "torch_cuda_api", "replace", True,
        "not torch.npu.is_available(), reason='requires NPU support')",
        "guard silently skips the device test on an NPU host"),
      C("x = torch.arange(16, dtype=torch.float).view(1, 1, 4, 4).cuda()", "tensor_to_device", "replace", True,
        "x = torch.arange(16, dtype=torch.float).view(1, 1, 4, 4).npu()", ".cuda()"),
      C("rois = torch.tensor([[0., 0., 0., 3., 3.]]).cuda()", "tensor_to_device", "replace", True,
        "rois = torch.tensor([[0., 0., 0., 3., 3.]]).npu()", ".cuda()"),
      C("device = 'cuda' if torch.cuda.is_available() else 'cpu'", "device_type", "replace", True,
        "device = 'npu' if torch.npu.is_available() else 'cpu'",
        "on an NPU host the comparison silently runs on CPU only"),
  ])

E("mmcv_test_nms", "tests/test_ops/test_nms.py", "explicit_replacement",
  "open-mmlab/mmcv tests/test_ops/test_nms.py (1.x Testnms)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
        "test entry point; no backend autoload before torch_npu 2.5.1"),
      C("=not torch.cuda.is_available(),", "torch_cuda_api", "add_branch", True,
        "pytest.param('npu', marks=pytest.mark.skipif(not (hasattr(torch, 'npu') and torch.npu.is_available()), reason='requires NPU support')),",
        "without an 'npu' device case nms on NPU is never exercised"),
      C("=if not torch.cuda.is_available():", "torch_cuda_api", "replace", True,
        "if not torch.npu.is_available():",
        "soft-nms test returns early on an NPU host, skipping the device round trip"),
      C("boxes = boxes.cuda()", "tensor_to_device", "replace", True, "boxes = boxes.npu()", ".cuda()"),
      C("scores = scores.cuda()", "tensor_to_device", "replace", True, "scores = scores.npu()", ".cuda()"),
      C("=not torch.cuda.is_available(), reason='requires CUDA support')", "torch_cuda_api", "replace", True,
        "not torch.npu.is_available(), reason='requires NPU support')", "guard of the rotated-nms device test"),
      C("boxes = torch.from_numpy(np_boxes).to('cuda')", "tensor_to_device", "replace", True,
        "boxes = torch.from_numpy(np_boxes).to('npu')", "'cuda' device string"),
      C("labels = torch.from_numpy(np_labels).to('cuda')", "tensor_to_device", "replace", True,
        "labels = torch.from_numpy(np_labels).to('npu')", "'cuda' device string"),
  ])

E("mmcv_test_syncbn", "tests/test_ops/test_syncbn.py", "explicit_replacement",
  "open-mmlab/mmcv tests/test_ops/test_syncbn.py (1.x, 4-process slurm test)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
        "test entry point; no backend autoload before torch_npu 2.5.1"),
      C("dist.init_process_group('nccl')", "dist_backend", "replace", True, "dist.init_process_group('hccl')",
        "NCCL is unavailable on Ascend"),
      C("torch.cuda.set_device(local_rank)", "torch_cuda_api", "replace", True, "torch.npu.set_device(local_rank)",
        "CUDA device API"),
      C("torch.cuda.manual_seed(9)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed(9)",
        "CUDA seeding is queued lazily and does not raise without CUDA (unconfirmed in the knowledge base); the "
        "data is drawn on CPU anyway, so this only matters for reproducibility of NPU-side RNG"),
      C("self.x = torch.rand(16, 3, 2, 3).cuda()", "tensor_to_device", "replace", True,
        "self.x = torch.rand(16, 3, 2, 3).npu()", ".cuda()"),
      C("self.y_bp = torch.rand(16, 3, 2, 3).cuda()", "tensor_to_device", "replace", True,
        "self.y_bp = torch.rand(16, 3, 2, 3).npu()", ".cuda()"),
      C("torch.cuda.synchronize()", "torch_cuda_api", "replace", True, "torch.npu.synchronize()",
        "initialises CUDA and raises on an NPU host"),
      C("syncbn = SyncBatchNorm(3, group=group).cuda()", "tensor_to_device", "replace", True,
        "syncbn = SyncBatchNorm(3, group=group).npu()", "module .cuda()"),
      C("bn = nn.BatchNorm2d(3).cuda()", "tensor_to_device", "replace", True, "bn = nn.BatchNorm2d(3).npu()",
        "module .cuda()"),
      C("torch.cuda.manual_seed_all(9)", "torch_cuda_api", "replace", False, "torch.npu.manual_seed_all(9)",
        "lazy CUDA seeding, silent no-op on an NPU host (unconfirmed)"),
      C("self.x = torch.empty(0, 3, 2, 3, device='cuda')", "tensor_to_device", "replace", True,
        "self.x = torch.empty(0, 3, 2, 3, device='npu')", "'cuda' device string"),
      C("self.y_bp = torch.empty(0, 3, 2, 3, device='cuda')", "tensor_to_device", "replace", True,
        "self.y_bp = torch.empty(0, 3, 2, 3, device='npu')", "'cuda' device string"),
  ])

E("mmcv_test_ms_deform_attn", "tests/test_ops/test_ms_deformable_attn.py", "explicit_replacement",
  "open-mmlab/mmcv tests/test_ops/test_ms_deformable_attn.py (1.x)",
  [
      C("=import torch", "import_torch_npu", "npu_only_addition", True, "import torch_npu  # noqa: F401",
        "test entry point; no backend autoload before torch_npu 2.5.1"),
      C("=not torch.cuda.is_available(), reason='requires CUDA support')", "torch_cuda_api", "replace", True,
        "not torch.npu.is_available(), reason='requires NPU support')",
        "module-level skip mark used by the three device tests; silently skips them on an NPU host"),
      C("not torch.cuda.is_available(), reason='requires CUDA support'))", "torch_cuda_api", "add_branch", True,
        "pytest.param('npu:0', marks=pytest.mark.skipif(not torch.npu.is_available(), reason='requires NPU support')),",
        "no NPU case in the module test"),
      C("shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "shapes = torch.as_tensor([(6, 4), (3, 2)], dtype=torch.long).npu()", ".cuda()"),
      C("value = torch.rand(N, S, M, D, dtype=torch.float64).cuda() * 0.01", "tensor_to_device", "replace", True,
        "value = torch.rand(N, S, M, D, dtype=torch.float64).npu() * 0.01",
        ".cuda() (the fp64 comparison itself may need fp32 on NPU - see README)"),
      C("N, Lq, M, L, P, 2, dtype=torch.float64).cuda()", "tensor_to_device", "replace", True,
        "N, Lq, M, L, P, 2, dtype=torch.float64).npu()", ".cuda()"),
      C("N, Lq, M, L, P, dtype=torch.float64).cuda() + 1e-5", "tensor_to_device", "replace", True,
        "N, Lq, M, L, P, dtype=torch.float64).npu() + 1e-5", ".cuda()"),
      C("=device = 'cuda'", "device_type", "replace", True, "device = 'npu'",
        "device variable used by every allocation in the float test"),
      C("shapes = torch.as_tensor([(3, 2), (2, 1)], dtype=torch.long).cuda()", "tensor_to_device", "replace", True,
        "shapes = torch.as_tensor([(3, 2), (2, 1)], dtype=torch.long).npu()", ".cuda()"),
      C("value = torch.rand(N, S, M, channels).cuda() * 0.01", "tensor_to_device", "replace", True,
        "value = torch.rand(N, S, M, channels).npu() * 0.01", ".cuda()"),
      C("sampling_locations = torch.rand(N, Lq, M, L, P, 2).cuda()", "tensor_to_device", "replace", True,
        "sampling_locations = torch.rand(N, Lq, M, L, P, 2).npu()", ".cuda()"),
      C("attention_weights = torch.rand(N, Lq, M, L, P).cuda() + 1e-5", "tensor_to_device", "replace", True,
        "attention_weights = torch.rand(N, Lq, M, L, P).npu() + 1e-5", ".cuda()"),
  ])

E("bevformer_msda_function", "projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  "kernel_rewrite",
  "fundamentalvision/BEVFormer projects/mmdet3d_plugin/bevformer/modules/multi_scale_deformable_attn_function.py",
  [
      C("from torch.cuda.amp import custom_bwd, custom_fwd", "amp", "replace", True,
        "from torch_npu.npu.amp import custom_bwd, custom_fwd",
        "torch.cuda.amp.custom_fwd(cast_inputs=...) keys on the CUDA autocast state, so under NPU autocast the "
        "fp32 variant receives fp16 inputs; Ascend's list maps it to torch_npu.npu.amp.custom_fwd/custom_bwd"),
      C("=output = ext_module.ms_deform_attn_forward(", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': output = multi_scale_deformable_attn_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)  # or an Ascend ms_deform_attn kernel",
        "mmcv._ext ms_deform_attn kernel is CUDA-only (fp16 Function)"),
      C("=ext_module.ms_deform_attn_backward(", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': grad_value, grad_sampling_loc, grad_attn_weight = _ms_deform_attn_torch_grads(value, value_spatial_shapes, sampling_locations, attention_weights, grad_output)",
        "CUDA-only backward kernel (fp16 Function)"),
      C("output = ext_module.ms_deform_attn_forward(value, value_spatial_shapes,", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': output = multi_scale_deformable_attn_pytorch(value, value_spatial_shapes, sampling_locations, attention_weights)",
        "same CUDA-only kernel in the fp32 Function"),
      C("ext_module.ms_deform_attn_backward(value, value_spatial_shapes,", "custom_cuda_extension", "add_branch", True,
        "if value.device.type == 'npu': grad_value, grad_sampling_loc, grad_attn_weight = _ms_deform_attn_torch_grads(value, value_spatial_shapes, sampling_locations, attention_weights, grad_output)",
        "same CUDA-only backward kernel in the fp32 Function"),
  ])
