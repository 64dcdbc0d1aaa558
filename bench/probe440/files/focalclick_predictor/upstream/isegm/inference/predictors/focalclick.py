import torch
import torch.nn.functional as F
import numpy as np
from torchvision import transforms

from isegm.inference.transforms import AddHorizontalFlip, SigmoidForPred, LimitLongestSide, ResizeTrans
from isegm.utils.crop_local import map_point_in_bbox, get_focus_cropv1, get_focus_cropv2, get_object_crop, get_click_crop


class FocalPredictor(object):
    def __init__(self, model, device,
                 net_clicks_limit=None,
                 with_flip=False,
                 zoom_in=None,
                 max_size=None,
                 infer_size=256,
                 focus_crop_r=1.4,
                 **kwargs):
        self.with_flip = with_flip
        self.net_clicks_limit = net_clicks_limit
        self.original_image = None
        self.device = device
        self.zoom_in = zoom_in
        self.prev_prediction = None
        self.model_indx = 0
        self.click_models = None
        self.net_state_dict = None

        if isinstance(model, tuple):
            self.net, self.click_models = model
        else:
            self.net = model

        self.to_tensor = transforms.ToTensor()

        self.transforms = [zoom_in] if zoom_in is not None else []
        if max_size is not None:
            self.transforms.append(LimitLongestSide(max_size=max_size))
        self.crop_l = infer_size
        self.focus_crop_r = focus_crop_r
        self.transforms.append(ResizeTrans(self.crop_l))
        self.transforms.append(SigmoidForPred())
        if with_flip:
            self.transforms.append(AddHorizontalFlip())

    def set_input_image(self, image):
        image_nd = self.to_tensor(image)
        for transform in self.transforms:
            transform.reset()
        self.original_image = image_nd.to(self.device)
        if len(self.original_image.shape) == 3:
            self.original_image = self.original_image.unsqueeze(0)
        self.prev_prediction = torch.zeros_like(self.original_image[:, :1, :, :])

    def get_prediction(self, clicker, prev_mask=None):
        clicks_list = clicker.get_clicks()
        click = clicks_list[-1]
        last_y, last_x = click.coords[0], click.coords[1]
        self.last_y = last_y
        self.last_x = last_x

        if self.click_models is not None:
            model_indx = min(clicker.click_indx_offset + len(clicks_list), len(self.click_models)) - 1
            if model_indx != self.model_indx:
                self.model_indx = model_indx
                self.net = self.click_models[model_indx]

        input_image = self.original_image
        if prev_mask is None:
            prev_mask = self.prev_prediction
        if hasattr(self.net, 'with_prev_mask') and self.net.with_prev_mask:
            input_image = torch.cat((input_image, prev_mask), dim=1)

        image_nd, clicks_lists, is_image_changed = self.apply_transforms(
            input_image, [clicks_list]
        )
        try:
            roi = self.transforms[0]._object_roi
            y1, y2, x1, x2 = roi
            global_roi = (y1, y2 + 1, x1, x2 + 1)
        except Exception:
            h, w = prev_mask.shape[-2], prev_mask.shape[-1]
            global_roi = (0, h, 0, w)

        pred_logits, feature = self._get_prediction(image_nd, clicks_lists, is_image_changed)
        prediction = F.interpolate(pred_logits, mode='bilinear', align_corners=True,
                                   size=image_nd.size()[2:])

        for t in reversed(self.transforms):
            prediction = t.inv_transform(prediction)

        # ---- focus refinement on a crop around the last click ----
        prev_mask_np = prev_mask.cpu().numpy()[0, 0]
        pred_np = prediction.cpu().numpy()[0, 0]
        y1, y2, x1, x2 = get_focus_cropv1(pred_np, prev_mask_np, global_roi, last_y, last_x, self.focus_crop_r)
        focus_roi = torch.tensor([0, x1, y1, x2, y2]).float().unsqueeze(0).to(self.device)

        focus_image = self.original_image[:, :, y1:y2, x1:x2]
        focus_image = F.interpolate(focus_image, (self.crop_l, self.crop_l), mode='bilinear', align_corners=True)
        focus_clicks = self.mapp_roi(focus_roi, clicks_lists)
        points_nd = self.get_points_nd(focus_clicks)

        full_feature = F.interpolate(feature, size=self.original_image.shape[-2:], mode='bilinear', align_corners=True)
        output = self.net.refine(focus_image, points_nd, full_feature, prediction, focus_roi)
        focus_pred = torch.sigmoid(output['instances_refined'])
        focus_pred = F.interpolate(focus_pred, (y2 - y1, x2 - x1), mode='bilinear', align_corners=True)

        if len(clicks_list) > 10:
            coarse = torch.sigmoid(output['instances_coarse'])
            coarse = F.interpolate(coarse, (y2 - y1, x2 - x1), mode='bilinear', align_corners=True)
            focus_pred = 0.5 * focus_pred + 0.5 * coarse

        prediction[:, :, y1:y2, x1:x2] = focus_pred

        self.prev_prediction = prediction
        return prediction.cpu().numpy()[0, 0]

    def mapp_roi(self, focus_roi, clicks_lists):
        _, x1, y1, x2, y2 = focus_roi[0].tolist()
        out = []
        for clicks in clicks_lists:
            mapped = []
            for c in clicks:
                y, x = c.coords
                ny = (y - y1) / max(y2 - y1, 1) * self.crop_l
                nx = (x - x1) / max(x2 - x1, 1) * self.crop_l
                mapped.append(c.copy(coords=(ny, nx)))
            out.append(mapped)
        return out

    def _get_prediction(self, image_nd, clicks_lists, is_image_changed):
        points_nd = self.get_points_nd(clicks_lists)
        output = self.net(image_nd, points_nd)
        return output['instances'], output['feature']

    def _get_transform_states(self):
        return [x.get_state() for x in self.transforms]

    def _set_transform_states(self, states):
        assert len(states) == len(self.transforms)
        for state, transform in zip(states, self.transforms):
            transform.set_state(state)

    def apply_transforms(self, image_nd, clicks_lists):
        is_image_changed = False
        for t in self.transforms:
            image_nd, clicks_lists = t.transform(image_nd, clicks_lists)
            is_image_changed |= t.image_changed

        return image_nd, clicks_lists, is_image_changed

    def get_points_nd(self, clicks_lists):
        total_clicks = []
        num_pos_clicks = [sum(x.is_positive for x in clicks_list) for clicks_list in clicks_lists]
        num_neg_clicks = [len(clicks_list) - num_pos for clicks_list, num_pos in zip(clicks_lists, num_pos_clicks)]
        num_max_points = max(num_pos_clicks + num_neg_clicks)
        if self.net_clicks_limit is not None:
            num_max_points = min(self.net_clicks_limit, num_max_points)
        num_max_points = max(1, num_max_points)

        for clicks_list in clicks_lists:
            clicks_list = clicks_list[:self.net_clicks_limit]
            pos_clicks = [click.coords_and_indx for click in clicks_list if click.is_positive]
            pos_clicks = pos_clicks + (num_max_points - len(pos_clicks)) * [(-1, -1, -1)]

            neg_clicks = [click.coords_and_indx for click in clicks_list if not click.is_positive]
            neg_clicks = neg_clicks + (num_max_points - len(neg_clicks)) * [(-1, -1, -1)]
            total_clicks.append(pos_clicks + neg_clicks)

        return torch.tensor(total_clicks, device=self.device)

    def get_states(self):
        return {
            'transform_states': self._get_transform_states(),
            'prev_prediction': self.prev_prediction.clone()
        }

    def set_states(self, states):
        self._set_transform_states(states['transform_states'])
        self.prev_prediction = states['prev_prediction']
